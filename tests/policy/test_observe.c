/* SPDX-License-Identifier: MIT */
/*
 * test_observe.c - the two descriptors, observe mode (never defers or
 * avoids, computes the same decisions, counts would_defer/would_avoid) and
 * its lock-free recorder dumped as JSON lines.
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_driver.h"
#include "harness.h"

static void check_descriptor(const struct mcc_policy_v1 *d, const char *name, uint32_t mode,
                             uint64_t caps)
{
	CU_ASSERT_EQUAL(d->abi_version, MCC_POLICY_ABI_V1);
	CU_ASSERT_EQUAL(d->struct_size, sizeof(struct mcc_policy_v1));
	CU_ASSERT_STRING_EQUAL(d->name, name);
	CU_ASSERT_PTR_NOT_NULL(d->description);
	CU_ASSERT_EQUAL(d->mode, mode);
	CU_ASSERT_EQUAL(d->caps, caps);
	void (*const *fn)(void) = (void (*const *)(void))(const void *)&d->init;
	size_t n = (sizeof(*d) - offsetof(struct mcc_policy_v1, init)) / sizeof(void (*)(void));
	for (size_t i = 0; i < n; i++)
		CU_ASSERT_PTR_NOT_NULL(fn[i]); /* every callback implemented */
}

static void test_descriptors_declare_mode_name_and_caps(void)
{
	check_descriptor(&mcc_test_aimd_v1, "aimd", MCC_MODE_ENFORCE,
	                 MCC_CAP_ENFORCES | MCC_CAP_TASK_EVIDENCE | MCC_CAP_THREAD_SAFE);
	check_descriptor(&mcc_test_observe_v1, "observe", MCC_MODE_OBSERVE,
	                 MCC_CAP_RECORDS | MCC_CAP_TASK_EVIDENCE | MCC_CAP_THREAD_SAFE);
}

static struct mcc_config_v1 small(void)
{
	struct mcc_config_v1 c;
	th_cfg_defaults(&c);
	c.min_window_bytes = c.max_window_bytes = 256 * KiB;
	return c;
}

static void test_observe_never_defers_or_avoids_and_counts_would(void)
{
	struct mcc_config_v1 c = small();
	struct th *h = th_new(&mcc_test_observe_v1, &c);
	mcc_device *d = th_dev(h, 0);
	mcc_route *r = th_route(h, d, 1, 1, 0, 1);
	CU_ASSERT_EQUAL(th_push(h, r, 10, 64 * KiB, 1), 10); /* 640 KiB > 256 KiB window */
	unsigned observed = 0;
	for (unsigned i = 0; i < 10; i++)
		if (h->fifo[i].flags & MCC_PERMIT_F_OBSERVED)
			observed++;
	CU_ASSERT_EQUAL(observed, 6); /* enforce would have deferred these */
	struct mcc_domain_stats_v1 s = th_ds(h, d);
	CU_ASSERT_EQUAL(s.would_defer, 6); /* the device refuses first */
	CU_ASSERT_EQUAL(s.defers, 0);
	CU_ASSERT_EQUAL(s.inflight_bytes, 640 * KiB); /* still accounted */
	CU_ASSERT_EQUAL(th_rs(h, r).inflight_bytes, 640 * KiB);
	th_drain(h);
	CU_ASSERT_EQUAL(th_rs(h, r).inflight_bytes, 0);
	CU_ASSERT_EQUAL(th_ds(h, d).inflight_bytes, 0);
	/* quarantined: still admitted, counted as would_avoid */
	th_quarantine_route(h, r, 1);
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq(h, r, 4096, 1, 5, 5, 0, &p), MCC_ADMIT);
	CU_ASSERT(p.flags & MCC_PERMIT_F_OBSERVED);
	s = th_rs(h, r);
	CU_ASSERT_EQUAL(s.would_avoid, 1);
	CU_ASSERT_EQUAL(s.avoids, 0);
	/* decisions it did not apply are not task evidence */
	CU_ASSERT_EQUAL(th_query(h, 5, 5, 0, NULL), MCC_TASK_UNKNOWN);
	th_wc(h, &p, IBV_WC_SUCCESS, 0);
	CU_ASSERT_EQUAL(th_rs(h, r).inflight_bytes, 0);
	th_free(h);
}

/* The same input drives enforce and observe into the same states. */
static void test_observe_computes_the_same_state_machine(void)
{
	struct th *hs[2] = { th_new(&mcc_test_aimd_v1, NULL), th_new(&mcc_test_observe_v1, NULL) };
	mcc_route *rs[2];
	mcc_device *ds[2];
	for (int k = 0; k < 2; k++) {
		ds[k] = th_dev(hs[k], 0);
		rs[k] = th_route(hs[k], ds[k], 1, 1, 0, 1);
		th_warm(hs[k], ds[k], rs[k]); /* at the max window (they start at the min) */
	}
	uint32_t states[2][8] = { { 0 } };
	uint64_t windows[2][8] = { { 0 } };
	for (int k = 0; k < 2; k++) {
		struct th *h = hs[k];
		mcc_route *r = rs[k];
		int i = 0;
		th_press(h, r, 2);
		th_drain(h);
		states[k][i] = th_rstate(h, r), windows[k][i++] = th_rwin(h, r);
		th_calm(h, r, 4);
		states[k][i] = th_rstate(h, r), windows[k][i++] = th_rwin(h, r);
		th_quarantine_route(h, r, 1);
		states[k][i] = th_rstate(h, r), windows[k][i++] = th_rwin(h, r);
		th_advance_ms(h, 1000);
		th_tick(h);
		states[k][i] = th_rstate(h, r), windows[k][i++] = th_rwin(h, r);
		for (int j = 0; j < 3; j++) {
			struct mcc_permit_v1 p = MCC_PERMIT_INIT;
			CU_ASSERT_EQUAL(th_acq(h, r, 4096, 2, 0, 0, 0, &p), MCC_ADMIT);
			CU_ASSERT_EQUAL(!!(p.flags & MCC_PERMIT_F_PROBE), 1);
			th_wc(h, &p, IBV_WC_SUCCESS, 0);
		}
		th_tick(h);
		states[k][i] = th_rstate(h, r), windows[k][i++] = th_rwin(h, r);
		th_async(h, IBV_EVENT_DEVICE_FATAL, ds[k], NULL, 0, 0, 0);
		states[k][i] = th_dstate(h, ds[k]), windows[k][i++] = th_rwin(h, r);
	}
	CU_ASSERT_EQUAL(memcmp(states[0], states[1], sizeof(states[0])), 0);
	CU_ASSERT_EQUAL(memcmp(windows[0], windows[1], sizeof(windows[0])), 0);
	CU_ASSERT_EQUAL(states[0][0], MCC_PATH_CONGESTED);
	CU_ASSERT_EQUAL(states[0][2], MCC_PATH_QUARANTINED);
	CU_ASSERT_EQUAL(states[0][3], MCC_PATH_PROBING);
	CU_ASSERT_EQUAL(states[0][5], MCC_PATH_QUARANTINED);
	th_free(hs[0]);
	th_free(hs[1]);
}

/* Read what dump(fd) wrote; returns the number of lines. */
static int dump_lines(struct th *h, char *buf, size_t cap, int *rc)
{
	FILE *f = tmpfile();
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	*rc = h->ops->dump(h->ctx, fileno(f));
	rewind(f);
	size_t n = fread(buf, 1, cap - 1, f);
	buf[n] = '\0';
	fclose(f);
	int lines = 0;
	for (size_t i = 0; i < n; i++)
		lines += buf[i] == '\n';
	return lines;
}

static const char *const keys[] = { "\"ts\":",         "\"kind\":",     "\"class\":",
	                             "\"scope\":",      "\"route_id\":", "\"device\":",
	                             "\"from\":",       "\"to\":",       "\"wc_status\":",
	                             "\"vendor_err\":", "\"generation\":", "\"bytes\":" };

/* Every string of want[0..n) is in line (a missing one is named). */
static void has_all(const char *line, const char *const *want, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		if (!strstr(line, want[k]))
			fprintf(stderr, "no %s in %s\n", want[k], line);
		CU_ASSERT_PTR_NOT_NULL(strstr(line, want[k]));
	}
}

static void test_observe_dump_writes_one_json_object_per_line(void)
{
	struct mcc_config_v1 c = small();
	struct th *h = th_new(&mcc_test_observe_v1, &c);
	mcc_device *d = th_dev(h, 3);
	mcc_route *r = th_route(h, d, 77, 1, 0, 4);
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	h->gen = 4;
	th_calm(h, r, 1); /* it delivered: one hard error makes it SUSPECT */
	CU_ASSERT_EQUAL(th_acq(h, r, 8192, 4, 1, 1, 0, &p), MCC_ADMIT);
	th_wc(h, &p, IBV_WC_RETRY_EXC_ERR, 0x81); /* wc record */
	th_tick(h);                               /* transition healthy -> suspect */
	th_async(h, IBV_EVENT_PORT_ACTIVE, d, NULL, 1, 0, 0);
	th_sig(h, MCC_SIG_SEGMENT_RPC_FAILED, d, r, 1, 1, 4, 0, 0, 0);
	th_push(h, r, 8, 64 * KiB, 4); /* would_defer decisions */
	th_drain(h);
	static char buf[1 << 20];
	int rc;
	int lines = dump_lines(h, buf, sizeof(buf), &rc);
	CU_ASSERT(rc > 0);
	CU_ASSERT_EQUAL(lines, rc);
	int wc = 0, trans = 0, async = 0, sig = 0, dec = 0;
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		size_t len = strlen(line);
		CU_ASSERT(len > 2 && line[0] == '{' && line[len - 1] == '}');
		has_all(line, keys, sizeof(keys) / sizeof(keys[0]));
		if (strstr(line, "\"kind\":\"wc\"")) {
			static const char *const want[] = {
				"\"class\":\"route_timeout\"", "\"wc_status\":12", "\"vendor_err\":129",
				"\"route_id\":77",             "\"device\":3",     "\"generation\":4",
				"\"bytes\":8192"
			};
			wc++;
			has_all(line, want, sizeof(want) / sizeof(want[0]));
		}
		if (strstr(line, "\"kind\":\"transition\"") &&
		    strstr(line, "\"from\":\"healthy\",\"to\":\"suspect\""))
			trans++;
		if (strstr(line, "\"kind\":\"async\"") && strstr(line, "\"class\":\"recovery_hint\""))
			async++;
		if (strstr(line, "\"kind\":\"signal\"") && strstr(line, "\"reason\":\"control_plane\""))
			sig++;
		if (strstr(line, "\"kind\":\"decision\"") && strstr(line, "\"reason\":\"byte_window\""))
			dec++;
	}
	CU_ASSERT_EQUAL(wc, 1);
	CU_ASSERT_EQUAL(trans, 1);
	CU_ASSERT_EQUAL(async, 1);
	CU_ASSERT_EQUAL(sig, 1);
	CU_ASSERT(dec >= 1);
	CU_ASSERT_EQUAL(h->ops->dump(h->ctx, -1), -EBADF);
	th_free(h);
}

static void test_observe_recorder_is_bounded_and_keeps_the_newest(void)
{
	struct th *h = th_new_recorder(16);
	mcc_device *d = th_dev(h, 0);
	mcc_route *r = th_route(h, d, 1, 1, 0, 1);
	for (int i = 0; i < 100; i++) {
		struct mcc_permit_v1 p = MCC_PERMIT_INIT;
		CU_ASSERT_EQUAL(th_acq_simple(h, r, 4096u + (unsigned)i, &p), MCC_ADMIT);
		th_wc(h, &p, IBV_WC_LOC_LEN_ERR, 0);
	}
	static char buf[1 << 16];
	int rc;
	int lines = dump_lines(h, buf, sizeof(buf), &rc);
	CU_ASSERT_EQUAL(rc, 16);
	CU_ASSERT_EQUAL(lines, 16);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"bytes\":4195")); /* the last (4096 + 99) */
	CU_ASSERT_PTR_NULL(strstr(buf, "\"bytes\":4096,"));   /* the first is gone */
	th_free(h);
}

static void test_aimd_has_no_recorder(void)
{
	struct th *h = th_new(&mcc_test_aimd_v1, NULL);
	CU_ASSERT_EQUAL(h->ops->dump(h->ctx, 1), -EOPNOTSUPP);
	th_free(h);
}

struct producer {
	struct th *h;
	mcc_route *r;
	uint32_t lane_id;
};

static void *produce(void *arg)
{
	struct producer *pr = arg;
	struct mcc_lane_desc_v1 ld = { sizeof(ld), pr->lane_id, MCC_LANE_POST_POLL, 0 };
	mcc_lane *lane;
	if (pr->h->ops->lane_open(pr->h->ctx, &ld, &lane) != 0)
		return NULL;
	for (int i = 0; i < 20000; i++) {
		struct mcc_permit_v1 p = MCC_PERMIT_INIT;
		struct mcc_task_ref_v1 t = { 1, (uint64_t)i, 0, 0 };
		if (pr->h->ops->try_acquire(lane, pr->r, 4096, 1, &t, &p) != MCC_ADMIT)
			continue;
		struct mcc_completion_v1 wc = { sizeof(wc), i % 3 ? IBV_WC_LOC_PROT_ERR : IBV_WC_SUCCESS,
			                        0, 1, 4096, 0, 0, 0, 0 };
		pr->h->ops->on_completion(lane, &p, &wc);
	}
	pr->h->ops->lane_close(pr->h->ctx, lane);
	return NULL;
}

static void test_observe_recorder_multi_producer(void)
{
	struct th *h = th_new_recorder(256);
	mcc_device *d = th_dev(h, 0);
	mcc_route *r = th_route(h, d, 1, 1, 0, 1);
	pthread_t t[3];
	struct producer pr[3];
	for (int i = 0; i < 3; i++) {
		pr[i] = (struct producer){ h, r, (uint32_t)(i + 1) };
		CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, produce, &pr[i]), 0);
	}
	static char buf[1 << 17];
	for (int i = 0; i < 20; i++) { /* dump concurrently */
		int rc;
		int lines = dump_lines(h, buf, sizeof(buf), &rc);
		CU_ASSERT(rc >= 0 && rc <= 256);
		CU_ASSERT_EQUAL(lines, rc);
	}
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	int rc;
	dump_lines(h, buf, sizeof(buf), &rc);
	CU_ASSERT_EQUAL(rc, 256); /* full ring, every slot complete */
	CU_ASSERT_EQUAL(th_rs(h, r).inflight_bytes, 0);
	th_free(h);
}

MCC_CU_SUITE(t_init_observe_tests, "policy_observe", NULL, NULL,
             test_descriptors_declare_mode_name_and_caps,
             test_observe_never_defers_or_avoids_and_counts_would,
             test_observe_computes_the_same_state_machine,
             test_observe_dump_writes_one_json_object_per_line,
             test_observe_recorder_is_bounded_and_keeps_the_newest,
             test_aimd_has_no_recorder,
             test_observe_recorder_multi_producer)

MCC_CU_MAIN(t_init_observe_tests)
