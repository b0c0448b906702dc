/* SPDX-License-Identifier: MIT */
/*
 * test_config.c - every mcc_config_v1 field reaches the module and changes
 * its behaviour; init's output and argument checks.
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cu_driver.h"
#include "harness.h"

/* n route timeouts (or successful probes) at generation gen, then a tick. */
static void timeouts(struct th *h, mcc_route *r, unsigned n, uint32_t gen)
{
	th_slices(h, r, n, gen, IBV_WC_RETRY_EXC_ERR);
	th_tick(h);
}

static void probes(struct th *h, mcc_route *r, unsigned n, uint32_t gen)
{
	th_slices(h, r, n, gen, IBV_WC_SUCCESS);
	th_tick(h);
}

static void test_config_hard_error_threshold_1_vs_3(void)
{
	struct mcc_config_v1 c = th_cfg();
	c.hard_error_threshold = 1;
	struct th_fix a = th_fix(&c), b = th_fix(NULL);
	timeouts(a.h, a.r, 1, 1);
	timeouts(b.h, b.r, 1, 1);
	CU_ASSERT_EQUAL(th_rstate(a.h, a.r), MCC_PATH_QUARANTINED);
	CU_ASSERT_EQUAL(th_rstate(b.h, b.r), MCC_PATH_SUSPECT);
	timeouts(b.h, b.r, 2, 1);
	CU_ASSERT_EQUAL(th_rstate(b.h, b.r), MCC_PATH_QUARANTINED);
	th_free(a.h);
	th_free(b.h);
}

static void test_config_cooldown_ms(void)
{
	struct mcc_config_v1 c = th_cfg();
	c.cooldown_ms = 250;
	struct th_fix f = th_fix(&c);
	timeouts(f.h, f.r, 3, 1);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).cooldown_ms, 250);
	th_advance_ms(f.h, 248);
	th_tick(f.h);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_QUARANTINED);
	th_tick(f.h);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_PROBING);
	th_free(f.h);
}

static void test_config_probe_window_bytes(void)
{
	struct mcc_config_v1 c = th_cfg();
	c.probe_window_bytes = 96 * KiB;
	struct th_fix a = th_fix(&c), b = th_fix(NULL);
	struct th_fix *fs[2] = { &a, &b };
	unsigned admitted[2];
	for (int k = 0; k < 2; k++) {
		timeouts(fs[k]->h, fs[k]->r, 3, 1);
		th_advance_ms(fs[k]->h, 1000);
		th_tick(fs[k]->h);
		admitted[k] = th_push(fs[k]->h, fs[k]->r, 10, 32 * KiB, 2);
	}
	CU_ASSERT_EQUAL(admitted[0], 3); /* 96 KiB probe budget */
	CU_ASSERT_EQUAL(admitted[1], 1); /* unset: one slice */
	th_free(a.h);
	th_free(b.h);
}

static void test_config_min_window_bytes(void)
{
	struct mcc_config_v1 c = th_cfg();
	c.min_window_bytes = 2 * MiB;
	struct th_fix f = th_fix(&c);
	for (int i = 0; i < 20; i++) {
		th_press(f.h, f.r, 1);
		th_drain(f.h);
	}
	CU_ASSERT_EQUAL(th_rwin(f.h, f.r), 2 * MiB); /* the floor */
	timeouts(f.h, f.r, 3, 1);
	th_advance_ms(f.h, 1000);
	th_tick(f.h);
	CU_ASSERT_EQUAL(th_rwin(f.h, f.r), 2 * MiB); /* probing restarts from min */
	th_free(f.h);
}

static void test_config_max_window_bytes(void)
{
	struct mcc_config_v1 c = th_cfg();
	c.max_window_bytes = 2 * MiB;
	struct th_fix f = th_fix(&c);
	CU_ASSERT_EQUAL(th_rwin(f.h, f.r), 2 * MiB); /* the start */
	CU_ASSERT_EQUAL(th_push(f.h, f.r, 1000, 64 * KiB, 1), 32);
	th_drain(f.h);
	th_calm(f.h, f.r, 50);
	CU_ASSERT_EQUAL(th_rwin(f.h, f.r), 2 * MiB); /* the ceiling */
	th_free(f.h);
}

static void test_config_target_drain_us(void)
{
	struct mcc_config_v1 c = th_cfg();
	c.target_drain_us = 1000000; /* 1 s: a 15 ms queue is fine */
	struct th_fix a = th_fix(&c), b = th_fix(NULL);
	th_press(a.h, a.r, 3);
	th_press(b.h, b.r, 3);
	CU_ASSERT_EQUAL(th_rstate(a.h, a.r), MCC_PATH_HEALTHY);
	CU_ASSERT_EQUAL(th_rstate(b.h, b.r), MCC_PATH_CONGESTED);
	th_free(a.h);
	th_free(b.h);
}

static void test_config_high_pressure_epochs(void)
{
	struct mcc_config_v1 c1 = th_cfg(), c3 = th_cfg();
	c1.high_pressure_epochs = 1;
	c3.high_pressure_epochs = 3;
	struct th_fix a = th_fix(&c1), b = th_fix(&c3);
	th_press(a.h, a.r, 1);
	CU_ASSERT_EQUAL(th_rstate(a.h, a.r), MCC_PATH_CONGESTED);
	th_press(b.h, b.r, 2);
	CU_ASSERT_EQUAL(th_rstate(b.h, b.r), MCC_PATH_HEALTHY);
	th_press(b.h, b.r, 1);
	CU_ASSERT_EQUAL(th_rstate(b.h, b.r), MCC_PATH_CONGESTED);
	th_free(a.h);
	th_free(b.h);
}

static void test_config_low_pressure_epochs(void)
{
	struct mcc_config_v1 c1 = th_cfg(), c6 = th_cfg();
	c1.low_pressure_epochs = 1;
	c6.low_pressure_epochs = 6;
	struct th_fix a = th_fix(&c1), b = th_fix(&c6);
	th_press(a.h, a.r, 2);
	th_press(b.h, b.r, 2);
	th_calm(a.h, a.r, 1);
	CU_ASSERT_EQUAL(th_rstate(a.h, a.r), MCC_PATH_HEALTHY);
	th_calm(b.h, b.r, 5);
	CU_ASSERT_EQUAL(th_rstate(b.h, b.r), MCC_PATH_CONGESTED);
	th_calm(b.h, b.r, 1);
	CU_ASSERT_EQUAL(th_rstate(b.h, b.r), MCC_PATH_HEALTHY);
	th_free(a.h);
	th_free(b.h);
}

static void test_config_md_percent(void)
{
	struct mcc_config_v1 c = th_cfg();
	c.md_percent = 75;
	struct th_fix f = th_fix(&c);
	th_press(f.h, f.r, 2);
	CU_ASSERT_EQUAL(th_rwin(f.h, f.r), 12 * MiB);
	th_free(f.h);
}

static void test_config_ai_bytes_and_fast_recovery_epochs(void)
{
	struct mcc_config_v1 c = th_cfg();
	c.ai_bytes = 1 * MiB;
	c.fast_recovery_epochs = 1;
	struct th_fix f = th_fix(&c);
	th_press(f.h, f.r, 2); /* 16 -> 8 MiB */
	th_calm(f.h, f.r, 4);
	CU_ASSERT_EQUAL(th_rwin(f.h, f.r), 12 * MiB); /* one fast-recovery epoch */
	th_calm(f.h, f.r, 1);
	CU_ASSERT_EQUAL(th_rwin(f.h, f.r), 13 * MiB); /* then + ai_bytes */
	th_calm(f.h, f.r, 1);
	CU_ASSERT_EQUAL(th_rwin(f.h, f.r), 14 * MiB);
	th_free(f.h);
}

static void test_config_probe_successes(void)
{
	struct mcc_config_v1 c = th_cfg();
	c.probe_successes = 1;
	struct th_fix a = th_fix(&c), b = th_fix(NULL);
	struct th_fix *fs[2] = { &a, &b };
	for (int k = 0; k < 2; k++) {
		timeouts(fs[k]->h, fs[k]->r, 3, 1);
		th_advance_ms(fs[k]->h, 1000);
		th_tick(fs[k]->h);
		probes(fs[k]->h, fs[k]->r, 1, 2);
	}
	/* recovered: HEALTHY at the min window (issue 11) */
	CU_ASSERT_EQUAL(th_rstate(a.h, a.r), MCC_PATH_HEALTHY);
	CU_ASSERT_EQUAL(th_rstate(b.h, b.r), MCC_PATH_PROBING);
	probes(b.h, b.r, 2, 2);
	CU_ASSERT_EQUAL(th_rstate(b.h, b.r), MCC_PATH_HEALTHY);
	th_free(a.h);
	th_free(b.h);
}

/* Quarantine, then fail the probe `n` times; returns the last cooldown. */
static uint64_t requarantine(struct th_fix *f, int n, uint64_t wait_ms)
{
	uint64_t cd = 0;
	uint32_t gen = 1;
	timeouts(f->h, f->r, 3, gen);
	for (int i = 0; i < n; i++) {
		cd = th_rs(f->h, f->r).cooldown_ms;
		th_advance_ms(f->h, cd + wait_ms);
		th_tick(f->h);
		struct mcc_permit_v1 p = MCC_PERMIT_INIT;
		CU_ASSERT_EQUAL(th_acq(f->h, f->r, 4096, ++gen, 0, 0, 0, &p), MCC_ADMIT);
		th_wc(f->h, &p, IBV_WC_RETRY_EXC_ERR, 0);
		th_tick(f->h);
	}
	return th_rs(f->h, f->r).cooldown_ms;
}

static void test_config_cooldown_max_ms(void)
{
	struct mcc_config_v1 c = th_cfg();
	c.cooldown_max_ms = 1500;
	struct th_fix a = th_fix(&c), b = th_fix(NULL);
	CU_ASSERT_EQUAL(requarantine(&a, 3, 0), 1500);
	CU_ASSERT_EQUAL(requarantine(&b, 3, 0), 8000);
	th_free(a.h);
	th_free(b.h);
}

static void test_config_flap_window_ms(void)
{
	struct mcc_config_v1 c = th_cfg();
	c.flap_window_ms = 1500; /* re-quarantine 1 s + 1 s later: outside */
	struct th_fix a = th_fix(&c), b = th_fix(NULL);
	CU_ASSERT_EQUAL(requarantine(&a, 2, 1000), 1000);
	CU_ASSERT_EQUAL(requarantine(&b, 2, 1000), 4000);
	th_free(a.h);
	th_free(b.h);
}

static void test_config_epoch_us(void)
{
	struct mcc_config_v1 c = th_cfg();
	c.epoch_us = 2000;
	struct th_fix a = th_fix_cold(&c), b = th_fix_cold(NULL);
	struct th_fix *fs[2] = { &a, &b };
	for (int k = 0; k < 2; k++) { /* the first tick measures over one epoch_us */
		CU_ASSERT_EQUAL(th_push(fs[k]->h, fs[k]->r, 16, 64 * KiB, 1), 2); /* min window */
		th_drain(fs[k]->h);
		th_tick(fs[k]->h);
	}
	CU_ASSERT_EQUAL(th_rs(a.h, a.r).rate_bps, 128 * KiB * 1000000 / 2000);
	CU_ASSERT_EQUAL(th_rs(b.h, b.r).rate_bps, 128 * KiB * 1000000 / 1000);
	th_free(a.h);
	th_free(b.h);
}

static void test_config_evidence_tasks(void)
{
	struct mcc_config_v1 c = th_cfg();
	c.evidence_tasks = 2;
	struct th_fix f = th_fix(&c);
	timeouts(f.h, f.r, 3, 1);
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	for (uint64_t t = 1; t <= 3; t++)
		CU_ASSERT_EQUAL(th_acq(f.h, f.r, 4096, 1, 1, t, 0, &p), MCC_AVOID);
	CU_ASSERT_EQUAL(th_query(f.h, 1, 1, 0, NULL), MCC_TASK_UNKNOWN); /* evicted */
	CU_ASSERT_EQUAL(th_query(f.h, 1, 2, 0, NULL), MCC_TASK_LONG_UNAVAILABLE);
	CU_ASSERT_EQUAL(th_query(f.h, 1, 3, 0, NULL), MCC_TASK_LONG_UNAVAILABLE);
	th_free(f.h);
}

static void test_config_recorder_entries(void)
{
	struct th *h = th_new_recorder(32);
	mcc_device *d = th_dev(h, 0);
	mcc_route *r = th_route(h, d, 1, 1, 0, 1);
	for (int i = 0; i < 100; i++)
		th_sig(h, MCC_SIG_CONTROL_RPC_FAILED, d, r, 0, 0, 1, 0, 0, 0);
	FILE *f = tmpfile();
	CU_ASSERT_EQUAL(h->ops->dump(h->ctx, fileno(f)), 32);
	fclose(f);
	th_free(h);
}

static uint64_t th_clock_fixed(void *arg)
{
	(void)arg;
	return 1000000000ull;
}

/* A configuration shorter than its v1.0 size is refused whole: init fails
 * (the loader then runs the controller off), and nothing of it is used in
 * part, defaulted or not. */
static void test_config_truncated_struct_is_refused(void)
{
	struct mcc_config_v1 c = th_cfg();
	c.struct_size = (uint32_t)offsetof(struct mcc_config_v1, target_drain_us);
	struct mcc_host_v1 host;
	memset(&host, 0, sizeof(host));
	host.abi_version = MCC_POLICY_ABI_V1;
	host.struct_size = sizeof(host);
	host.now_ns = th_clock_fixed;
	struct mcc_init_out_v1 out = { sizeof(out), 0, 0, 0 };
	void *ctx = NULL;
	CU_ASSERT_EQUAL(mcc_test_aimd_v1.init(&host, &c, &out, &ctx), -EINVAL);
	CU_ASSERT_PTR_NULL(ctx);
	c.struct_size = MCC_CONFIG_V1_0_SIZE;
	CU_ASSERT_EQUAL(mcc_test_aimd_v1.init(&host, &c, &out, &ctx), 0);
	mcc_test_aimd_v1.fini(ctx);
}

static const char *mod_get(const struct mcc_config_v1 *cfg, const char *key)
{
	(void)cfg;
	return strcmp(key, "credit_min_admits") == 0 ? "1" : NULL;
}

/* The module-private key [module.aimd] credit_min_admits: how busy an epoch
 * must be before a HEALTHY domain with a large window caches lane credit. */
static void test_config_module_key_credit_min_admits(void)
{
	struct mcc_config_v1 c = th_cfg();
	c.module_get = mod_get;
	struct th_fix a = th_fix(&c), b = th_fix(NULL);
	struct th_fix *fs[2] = { &a, &b };
	uint64_t inflight[2];
	for (int k = 0; k < 2; k++) {
		struct mcc_permit_v1 p = MCC_PERMIT_INIT;
		CU_ASSERT_EQUAL(th_acq_simple(fs[k]->h, fs[k]->r, 64 * KiB, &p), MCC_ADMIT);
		th_wc(fs[k]->h, &p, IBV_WC_SUCCESS, 0);
		th_tick(fs[k]->h); /* one admission in the epoch */
		CU_ASSERT_EQUAL(th_acq_simple(fs[k]->h, fs[k]->r, 64 * KiB, &p), MCC_ADMIT);
		inflight[k] = th_rs(fs[k]->h, fs[k]->r).inflight_bytes;
		th_wc(fs[k]->h, &p, IBV_WC_SUCCESS, 0);
	}
	CU_ASSERT_EQUAL(inflight[0], 1 * MiB); /* a credit chunk: 16 MiB / (4 x 1 lane), capped */
	CU_ASSERT_EQUAL(inflight[1], 64 * KiB); /* exact: default needs 64 admissions */
	th_free(a.h);
	th_free(b.h);
}

static uint64_t zero_clock(void *arg)
{
	(void)arg;
	return 0;
}

static void test_init_output_and_argument_checks(void)
{
	struct th *h = th_new(&mcc_test_aimd_v1, NULL);
	CU_ASSERT_EQUAL(h->out.signal_mask, ((1ull << MCC_SIG_KIND_COUNT_) - 1) & ~1ull);
	CU_ASSERT_EQUAL(h->out.want_async_events, 1);
	th_free(h);
	const struct mcc_policy_v1 *ops = &mcc_test_aimd_v1;
	struct mcc_host_v1 host;
	memset(&host, 0, sizeof(host));
	host.abi_version = MCC_POLICY_ABI_V1;
	host.struct_size = sizeof(host);
	host.now_ns = zero_clock;
	void *ctx = NULL;
	CU_ASSERT_EQUAL(ops->init(NULL, NULL, NULL, &ctx), -EINVAL);
	host.abi_version = MCC_ABI(2, 0);
	CU_ASSERT_EQUAL(ops->init(&host, NULL, NULL, &ctx), -EPROTO);
	host.abi_version = MCC_POLICY_ABI_V1;
	host.now_ns = NULL;
	CU_ASSERT_EQUAL(ops->init(&host, NULL, NULL, &ctx), -EINVAL);
	/* no config, no output, no log, no lanes: defaults work */
	host.now_ns = zero_clock;
	CU_ASSERT_EQUAL(ops->init(&host, NULL, NULL, &ctx), 0);
	struct mcc_device_desc_v1 dd = { sizeof(dd), 0, NULL, 1, 0, 0, 0 };
	mcc_device *d;
	CU_ASSERT_EQUAL(ops->device_open(ctx, &dd, &d), 0);
	struct mcc_domain_stats_v1 s = { .struct_size = sizeof(s) };
	CU_ASSERT_EQUAL(ops->domain_stats(ctx, MCC_DOMAIN_DEVICE, d, &s), 0);
	CU_ASSERT_EQUAL(s.window_bytes, 128 * KiB); /* min_window_bytes: slow start */
	CU_ASSERT_EQUAL(ops->domain_stats(ctx, MCC_DOMAIN_ROUTE, d, &s), -EINVAL); /* wrong kind */
	CU_ASSERT_EQUAL(ops->domain_stats(ctx, 7, d, &s), -EINVAL);
	ops->device_close(ctx, d);
	ops->fini(ctx);
}

MCC_CU_SUITE(t_init_config_tests, "policy_config", NULL, NULL,
             test_config_hard_error_threshold_1_vs_3,
             test_config_cooldown_ms,
             test_config_probe_window_bytes,
             test_config_min_window_bytes,
             test_config_max_window_bytes,
             test_config_target_drain_us,
             test_config_high_pressure_epochs,
             test_config_low_pressure_epochs,
             test_config_md_percent,
             test_config_ai_bytes_and_fast_recovery_epochs,
             test_config_probe_successes,
             test_config_cooldown_max_ms,
             test_config_flap_window_ms,
             test_config_epoch_us,
             test_config_evidence_tasks,
             test_config_recorder_entries,
             test_config_truncated_struct_is_refused,
             test_config_module_key_credit_min_admits,
             test_init_output_and_argument_checks)

MCC_CU_MAIN(t_init_config_tests)
