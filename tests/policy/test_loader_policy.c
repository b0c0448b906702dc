/* SPDX-License-Identifier: MIT */
/*
 * test_loader_policy.c - the aimd, delay and observe modules through the real host
 * library: mcc_instance_acquire() with a generated ini selecting the mode,
 * the built .so files from $MCC_TEST_MODULE_DIR, and [controller] /
 * [module.<name>] keys reaching the module.
 */
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cu_driver.h"
#include "mcc_loader.h"

static uint64_t clk = 1000000000ull;
static char ini[4096];

static uint64_t test_clock(void *arg)
{
	(void)arg;
	return clk;
}

static void quiet(void *arg, int level, const char *fmt, ...)
{
	(void)arg;
	(void)level;
	(void)fmt;
}

static int suite_init(void)
{
	const char *dir = getenv("MCC_TEST_MODULE_DIR");
	char probe[4096];
	snprintf(probe, sizeof(probe), "%s/mcc-policy-aimd.so", dir ? dir : "");
	if (!dir || access(probe, R_OK) != 0)
		mcc_cu_skip("MCC_TEST_MODULE_DIR does not hold mcc-policy-aimd.so");
	const char *b = getenv("MCC_TEST_BUILDDIR");
	snprintf(ini, sizeof(ini), "%s/tests/policy/test_loader_policy.%ld.ini", b ? b : ".",
	         (long)getpid());
	return 0;
}

static int suite_clean(void)
{
	unlink(ini);
	return 0;
}

static mcc_instance *load(const char *body)
{
	FILE *f = fopen(ini, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(body, f);
	fclose(f);
	struct mcc_loader_opts o = {
		.struct_size = sizeof(o),
		.max_lanes = 4,
		.engine = "te",
		.ini_path = ini,
		.module_dir = getenv("MCC_TEST_MODULE_DIR"),
		.ignore_env = 1,
		.now_ns = test_clock,
		.log = quiet,
		.host_caps = MCC_HOST_CAP_ASYNC_EVENTS | MCC_HOST_CAP_POLLER_PROGRESS,
	};
	mcc_instance *inst = NULL;
	int rc = mcc_instance_acquire(&o, &inst);
	if (rc)
		fprintf(stderr, "acquire: %d %s\n", rc, mcc_instance_error(inst));
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(inst);
	return inst;
}

struct env {
	mcc_instance *inst;
	const struct mcc_policy_v1 *ops;
	void *ctx;
	mcc_lane *lane;
	mcc_device *dev;
	mcc_route *route;
};

static struct env open_env(const char *body)
{
	struct env e;
	e.inst = load(body);
	e.ops = mcc_instance_ops(e.inst);
	e.ctx = mcc_instance_ctx(e.inst);
	struct mcc_lane_desc_v1 ld = { sizeof(ld), 0, MCC_LANE_POST_POLL, 0 };
	struct mcc_device_desc_v1 dd = { sizeof(dd), 0, "mlx5_0", 1, 0, 0, 0 };
	struct mcc_route_desc_v1 rd = { sizeof(rd), 1, 0, 1, 1, "peer:1@mlx5_0", 1, 0 };
	CU_ASSERT_EQUAL(e.ops->lane_open(e.ctx, &ld, &e.lane), 0);
	CU_ASSERT_EQUAL(e.ops->device_open(e.ctx, &dd, &e.dev), 0);
	CU_ASSERT_EQUAL(e.ops->route_open(e.ctx, e.dev, &rd, &e.route), 0);
	return e;
}

/* open_env, the instance in `mode` running module `name`. */
static struct env open_module(const char *body, enum mcc_mode mode, const char *name)
{
	struct env e = open_env(body);
	CU_ASSERT_EQUAL(mcc_instance_mode(e.inst), mode);
	CU_ASSERT_STRING_EQUAL(mcc_instance_name(e.inst), name);
	return e;
}

static void close_env(struct env *e)
{
	e->ops->route_close(e->ctx, e->route);
	e->ops->device_close(e->ctx, e->dev);
	e->ops->lane_close(e->ctx, e->lane);
	mcc_instance_release(e->inst);
}

static void timeout(struct env *e, uint64_t task)
{
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	struct mcc_task_ref_v1 t = { 1, task, 0, 0 };
	CU_ASSERT_EQUAL(e->ops->try_acquire(e->lane, e->route, 65536, 1, &t, &p), MCC_ADMIT);
	struct mcc_completion_v1 wc = { sizeof(wc), IBV_WC_RETRY_EXC_ERR, 0, 1, 65536, 0, 0, 0, 0 };
	e->ops->on_completion(e->lane, &p, &wc);
}

static void tick(struct env *e)
{
	clk += 1000000;
	e->ops->tick(e->ctx, clk);
}

/* Route timeouts of tasks 1, 2 and 3 (the hard-error threshold), then a tick. */
static void timeouts(struct env *e)
{
	for (uint64_t t = 1; t <= 3; t++)
		timeout(e, t);
	tick(e);
}

static struct mcc_domain_stats_v1 rstats(struct env *e)
{
	struct mcc_domain_stats_v1 s = { .struct_size = sizeof(s) };
	CU_ASSERT_EQUAL(e->ops->domain_stats(e->ctx, MCC_DOMAIN_ROUTE, e->route, &s), 0);
	return s;
}

/* Windows start at min_window_bytes and slow start (issue 11): 16 clean
 * epochs that fill the window bring it to max_window_bytes; then an epoch
 * without admissions and one with a single one, so no lane credit is left
 * cached (as tests/policy/harness.c th_warm). */
static void grow(struct env *e)
{
	static struct mcc_permit_v1 p[256];
	struct mcc_completion_v1 wc = { sizeof(wc), IBV_WC_SUCCESS, 0, 1, 0, 0, 0, 0, 0 };
	for (int ep = 0; ep < 16; ep++) {
		int n = 0;
		for (; n < 256; n++) {
			p[n] = (struct mcc_permit_v1)MCC_PERMIT_INIT;
			if (e->ops->try_acquire(e->lane, e->route, 65536, 1, NULL, &p[n]) != MCC_ADMIT)
				break;
		}
		for (int i = 0; i < n; i++)
			e->ops->on_completion(e->lane, &p[i], &wc);
		tick(e);
	}
	tick(e);
	CU_ASSERT_EQUAL(e->ops->try_acquire(e->lane, e->route, 65536, 1, NULL, &p[0]), MCC_ADMIT);
	e->ops->on_completion(e->lane, &p[0], &wc);
	tick(e);
}

static void test_loader_enforce_mode_loads_aimd_and_quarantines(void)
{
	struct env e = open_module("[policy]\nmode = enforce\n", MCC_MODE_ENFORCE, "aimd");
	CU_ASSERT_STRING_EQUAL(mcc_instance_error(e.inst), "");
	timeouts(&e);
	CU_ASSERT_EQUAL(rstats(&e).state, MCC_PATH_QUARANTINED);
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	struct mcc_task_ref_v1 t = { 1, 9, 1, 0 };
	CU_ASSERT_EQUAL(e.ops->try_acquire(e.lane, e.route, 4096, 1, &t, &p), MCC_AVOID);
	struct mcc_task_detail_v1 d = { .struct_size = sizeof(d) };
	CU_ASSERT_EQUAL(e.ops->task_query(e.ctx, &t, 0, &d), MCC_TASK_LONG_UNAVAILABLE);
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_PATH_QUARANTINED);
	CU_ASSERT_STRING_EQUAL(d.path, "peer:1@mlx5_0");
	CU_ASSERT_EQUAL(rstats(&e).inflight_bytes, 0);
	close_env(&e);
}

/* The second control law is a module of its own, chosen by the ini alone:
 * same mechanism (quarantine, evidence), its own windows. */
static void test_loader_module_delay_is_selectable_by_ini(void)
{
	struct env e = open_module("[policy]\nmode = enforce\nmodule = delay\n", MCC_MODE_ENFORCE, "delay");
	/* slices that complete at once: no queueing, the window grows by at
	 * least ai_bytes x (T - 0) / T = ai_bytes per used epoch (no slow start) */
	uint64_t w0 = rstats(&e).window_bytes;
	grow(&e);
	uint64_t w1 = rstats(&e).window_bytes;
	CU_ASSERT(w1 > w0);
	CU_ASSERT_EQUAL(rstats(&e).window_cuts, 0);
	timeouts(&e);
	CU_ASSERT_EQUAL(rstats(&e).state, MCC_PATH_QUARANTINED);
	CU_ASSERT_EQUAL(rstats(&e).inflight_bytes, 0);
	close_env(&e);
}

static void test_loader_observe_mode_loads_observe_and_records(void)
{
	struct env e = open_module("[policy]\nmode = observe\n[controller]\nrecorder_entries = 64\n", MCC_MODE_OBSERVE, "observe");
	timeouts(&e);
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(e.ops->try_acquire(e.lane, e.route, 4096, 1, NULL, &p), MCC_ADMIT);
	CU_ASSERT(p.flags & MCC_PERMIT_F_OBSERVED); /* enforce would avoid */
	e.ops->release(e.lane, &p, 4096, MCC_REL_NOT_POSTED);
	FILE *f = tmpfile();
	int n = e.ops->dump(e.ctx, fileno(f));
	fclose(f);
	CU_ASSERT(n >= 5); /* 3 WCs, the transition, the decision */
	CU_ASSERT_EQUAL(rstats(&e).would_avoid, 1);
	close_env(&e);
}

static void test_loader_controller_keys_reach_the_module(void)
{
	struct env e = open_env("[policy]\nmode = enforce\n[controller]\n"
	                        "hard_error_threshold = 1\nmax_window_bytes = 1048576\n"
	                        "cooldown_ms = 250\n");
	CU_ASSERT_EQUAL(rstats(&e).window_bytes, 131072); /* min_window_bytes: slow start */
	grow(&e);
	CU_ASSERT_EQUAL(rstats(&e).window_bytes, 1048576); /* stops at the configured max */
	timeout(&e, 1);
	tick(&e);
	struct mcc_domain_stats_v1 s = rstats(&e);
	CU_ASSERT_EQUAL(s.state, MCC_PATH_QUARANTINED);
	CU_ASSERT_EQUAL(s.cooldown_ms, 250);
	close_env(&e);
}

static void test_loader_module_section_reaches_the_module(void)
{
	struct env e = open_env("[policy]\nmode = enforce\n[module.aimd]\ncredit_min_admits = 1\n");
	grow(&e); /* a window large enough for credit */
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(e.ops->try_acquire(e.lane, e.route, 65536, 1, NULL, &p), MCC_ADMIT);
	e.ops->release(e.lane, &p, 65536, MCC_REL_NOT_POSTED);
	tick(&e); /* one admission made the epoch busy: credit mode */
	CU_ASSERT_EQUAL(e.ops->try_acquire(e.lane, e.route, 65536, 1, NULL, &p), MCC_ADMIT);
	/* a credit chunk: 16 MiB / (4 x 1 lane open), capped at 1 MiB */
	CU_ASSERT_EQUAL(rstats(&e).inflight_bytes, 1048576);
	e.ops->release(e.lane, &p, 65536, MCC_REL_NOT_POSTED);
	close_env(&e);
}

/* What the module subscribed to in init() is readable by the host, so it
 * sends only those signals (mcc_instance_signal_mask / _wants_async_events):
 * the policy core handles every kind; mode off and the fallback none. */
static void test_loader_exposes_the_module_subscriptions(void)
{
	mcc_instance *inst = load("[policy]\nmode = enforce\n");
	CU_ASSERT_EQUAL(mcc_instance_signal_mask(inst), ((1ull << MCC_SIG_KIND_COUNT_) - 1) & ~1ull);
	CU_ASSERT(mcc_instance_signal_mask(inst) & (1ull << MCC_SIG_DEVICE_TELEMETRY));
	CU_ASSERT_EQUAL(mcc_instance_wants_async_events(inst), 1);
	mcc_instance_release(inst);
	inst = load("[policy]\nmode = observe\n");
	CU_ASSERT(mcc_instance_signal_mask(inst) & (1ull << MCC_SIG_SOFT_DEADLINE));
	CU_ASSERT_EQUAL(mcc_instance_wants_async_events(inst), 1);
	mcc_instance_release(inst);
	inst = load("[policy]\nmode = off\n"); /* the built-in null module */
	CU_ASSERT_EQUAL(mcc_instance_mode(inst), MCC_MODE_OFF);
	CU_ASSERT_EQUAL(mcc_instance_signal_mask(inst), 0);
	CU_ASSERT_EQUAL(mcc_instance_wants_async_events(inst), 0);
	mcc_instance_release(inst);
	CU_ASSERT_EQUAL(mcc_instance_signal_mask(NULL), 0); /* the fallback */
	CU_ASSERT_EQUAL(mcc_instance_wants_async_events(NULL), 0);
}

MCC_CU_SUITE(t_init_loader_policy_suite, "policy_loader", suite_init, suite_clean,
             test_loader_enforce_mode_loads_aimd_and_quarantines,
             test_loader_module_delay_is_selectable_by_ini,
             test_loader_observe_mode_loads_observe_and_records,
             test_loader_controller_keys_reach_the_module,
             test_loader_module_section_reaches_the_module,
             test_loader_exposes_the_module_subscriptions)

static CU_pSuite t_init_loader_policy_tests(void)
{
	CU_pSuite s = t_init_loader_policy_suite();

	/* CUnit runs suite_init lazily; decide the skip at registration */
	if (s)
		suite_init();
	return s;
}

MCC_CU_MAIN(t_init_loader_policy_tests)
