/* SPDX-License-Identifier: MIT */
/*
 * test_sizes.c - every struct that crosses a boundary with a struct_size
 * (loader and engine options, route/device/lane descriptions, permits,
 * completions, async events, signals, task details, statistics, the host
 * table, the configuration and the init output) is taken whole or refused:
 * each entry point is called with every struct_size from 0 to sizeof + 16,
 * the struct in a heap buffer of exactly that size (at least its leading
 * size word), so a read or write past the caller's size is a heap overflow
 * under the ASan and valgrind arms. Below the struct's frozen v1.0 size the
 * call must refuse it (an error, or for a void callback no effect); from it
 * up the call must take it, and an output struct's bytes past what this
 * library knows must stay the caller's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_driver.h"
#include "lt_util.h"
#include "mcc_engine.h"

#define SLACK 16u   /* sizes swept past sizeof */
#define TAIL 0xA5u  /* the caller's bytes past sizeof */

static uint64_t fake_clock(void *arg)
{
	(void)arg;
	return 5000000000ull;
}

static struct lt_log logbuf;
static char tmpdir[LT_PATH], ini_enforce[LT_PATH];

static int suite_init(void)
{
	return lt_suite_open(tmpdir, sizeof(tmpdir), &logbuf, ini_enforce) != 0 ? -1 : 0;
}

static int suite_clean(void)
{
	return lt_suite_close(tmpdir, &logbuf);
}

/* A heap copy of `full` (sizeof `full_size`) as a caller with struct_size
 * `size` would pass it: exactly `size` bytes (at least up to the size word
 * at `off`), the bytes past full_size TAIL, the size word set. */
static void *sized(const void *full, size_t full_size, size_t off, uint32_t size)
{
	size_t n = size > off + 4 ? size : off + 4;
	unsigned char *b = malloc(n);
	if (!b)
		abort();
	memset(b, TAIL, n);
	memset(b, 0, n < full_size ? n : full_size);
	memcpy(b, full, size < full_size ? size : full_size);
	memcpy(b + off, &size, sizeof(size));
	return b;
}

/* True when the `n` bytes at p are all TAIL. */
static int tail_intact(const void *p, size_t n)
{
	const unsigned char *c = p;
	for (size_t i = 0; i < n; i++)
		if (c[i] != TAIL)
			return 0;
	return 1;
}

/* What the sweeps share: an engine, its policy, a device, a route, a lane. */
struct fx {
	mcc_engine *e;
	const struct mcc_policy_v1 *ops;
	void *ctx;
	mcc_device *dev;
	mcc_route *route;
	mcc_lane_ref lref;
	mcc_lane *lane;
	int enforce;
	uint64_t next_id;
};

static struct fx fx;

/* One entry point: call it with the struct of `size` bytes in `buf`;
 * return 1 when it took the struct, 0 when it refused it (a CUnit
 * assertion inside reports anything else). */
struct sweep {
	const char *name;
	size_t full;   /* sizeof */
	size_t off;    /* offset of struct_size */
	uint32_t frozen;
	int (*call)(uint32_t size);
};

static void run(const struct sweep *s)
{
	for (uint32_t size = 0; size <= s->full + SLACK; size++) {
		int took = s->call(size);
		int want = size >= s->frozen;
		if (took != want) {
			fprintf(stderr, "%s: struct_size %u %s (frozen size %u)\n", s->name, size,
			        took ? "taken" : "refused", s->frozen);
			CU_FAIL("a struct taken below its frozen size, or refused from it up");
		}
	}
}

static void fx_open(int enforce, uint32_t max_lanes)
{
	memset(&fx, 0, sizeof(fx));
	struct mcc_loader_opts lo;
	lt_opts(&lo, &logbuf, enforce ? ini_enforce : NULL);
	lo.engine = "sizes";
	lo.module_dir = lt_module_dir();
	lo.max_lanes = max_lanes;
	struct mcc_engine_opts o = {sizeof(o), MCC_ENGINE_TICK_POLL, &lo, fake_clock, NULL};
	CU_ASSERT_EQUAL_FATAL(mcc_engine_open(&o, &fx.e), 0);
	fx.enforce = enforce;
	fx.ops = mcc_engine_ops(fx.e);
	fx.ctx = mcc_engine_ctx(fx.e);
	struct mcc_device_desc_v1 dd = {sizeof(dd), 0, "mlx5_0", 1, 0, 0, 0};
	CU_ASSERT_EQUAL_FATAL(fx.ops->device_open(fx.ctx, &dd, &fx.dev), 0);
	struct mcc_route_desc_v1 rd = {sizeof(rd), 1, 0, 1, 1, "a:1@mlx5_0", 0, 0};
	CU_ASSERT_EQUAL_FATAL(fx.ops->route_open(fx.ctx, fx.dev, &rd, &fx.route), 0);
	CU_ASSERT_EQUAL_FATAL(mcc_engine_lane_open(fx.e, MCC_LANE_POST_POLL, &fx.lref, &fx.lane), 0);
	fx.next_id = 100;
}

static void fx_close(void)
{
	CU_ASSERT_EQUAL(mcc_engine_lane_close(fx.e, fx.lref), 0);
	fx.ops->route_close(fx.ctx, fx.route);
	fx.ops->device_close(fx.ctx, fx.dev);
	mcc_engine_close(fx.e);
}

/* A fresh route of the fixture's device (its own domain state). */
static mcc_route *fresh_route(void)
{
	struct mcc_route_desc_v1 rd = {sizeof(rd), 1, 0, 1, fx.next_id++, NULL, 0, 0};
	mcc_route *r = NULL;
	CU_ASSERT_EQUAL_FATAL(fx.ops->route_open(fx.ctx, fx.dev, &rd, &r), 0);
	return r;
}

static struct mcc_domain_stats_v1 rstats(mcc_route *r)
{
	struct mcc_domain_stats_v1 st;
	memset(&st, 0, sizeof(st));
	st.struct_size = sizeof(st);
	CU_ASSERT_EQUAL(fx.ops->domain_stats(fx.ctx, MCC_DOMAIN_ROUTE, r, &st), 0);
	return st;
}

/* ------------------------------------------------------------- libmcc host */

static int call_loader_opts(uint32_t size)
{
	struct mcc_loader_opts full;
	lt_opts(&full, &logbuf, NULL);
	full.engine = "sizes";
	void *b = sized(&full, sizeof(full), 0, size);
	mcc_instance *inst = NULL;
	int rc = mcc_instance_acquire(b, &inst);
	free(b);
	CU_ASSERT_PTR_NOT_NULL(inst); /* always usable */
	CU_ASSERT_EQUAL(mcc_instance_mode(inst), MCC_MODE_OFF);
	if (rc == 0) {
		mcc_instance_release(inst);
		return 1;
	}
	CU_ASSERT_EQUAL(rc, -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(mcc_instance_error(inst), "struct_size"));
	return 0;
}

static int call_engine_opts(uint32_t size)
{
	struct mcc_loader_opts lo;
	lt_opts(&lo, &logbuf, NULL);
	struct mcc_engine_opts full = {sizeof(full), MCC_ENGINE_TICK_POLL, &lo, fake_clock, NULL};
	void *b = sized(&full, sizeof(full), 0, size);
	mcc_engine *e = (mcc_engine *)&full;
	int rc = mcc_engine_open(b, &e);
	free(b);
	if (rc == 0) {
		CU_ASSERT_PTR_NOT_NULL(e);
		mcc_engine_close(e);
		return 1;
	}
	CU_ASSERT_EQUAL(rc, -EINVAL);
	CU_ASSERT_PTR_NULL(e);
	return 0;
}

/* The loader options nested in whole engine options: a short one is the
 * loader's refusal (controller off, a usable engine). */
static int call_engine_loader_opts(uint32_t size)
{
	struct mcc_loader_opts full;
	lt_opts(&full, &logbuf, ini_enforce);
	full.module_dir = lt_module_dir();
	void *b = sized(&full, sizeof(full), 0, size);
	struct mcc_engine_opts o = {sizeof(o), MCC_ENGINE_TICK_POLL, b, fake_clock, NULL};
	mcc_engine *e = NULL;
	int rc = mcc_engine_open(&o, &e);
	free(b);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	int mode = mcc_instance_mode(mcc_engine_instance(e));
	mcc_engine_close(e);
	if (rc == 0) {
		CU_ASSERT_EQUAL(mode, MCC_MODE_ENFORCE);
		return 1;
	}
	CU_ASSERT_EQUAL(rc, -EINVAL);
	CU_ASSERT_EQUAL(mode, MCC_MODE_OFF);
	return 0;
}

static void test_sizes_options(void)
{
	static const struct sweep s[] = {
		{"mcc_loader_opts", sizeof(struct mcc_loader_opts), 0, MCC_LOADER_OPTS_V1_0_SIZE,
		 call_loader_opts},
		{"mcc_engine_opts", sizeof(struct mcc_engine_opts), 0, MCC_ENGINE_OPTS_V1_0_SIZE,
		 call_engine_opts},
		{"mcc_engine_opts.loader", sizeof(struct mcc_loader_opts), 0,
		 MCC_LOADER_OPTS_V1_0_SIZE, call_engine_loader_opts},
	};
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		run(&s[i]);
}

/* ---------------------------------------------------------------- the SDK */

static const char KEY[] = "10.0.0.2:12001@mlx5_1";

static int call_sdk_route_desc(uint32_t size)
{
	struct mcc_route_desc_v1 full = {sizeof(full), 1, 0, 0, 0, "peer:1@mlx5_1", 7, 0};
	void *b = sized(&full, sizeof(full), 0, size);
	mcc_engine_route *r = NULL;
	int rc = mcc_engine_route_open(fx.e, fx.dev, KEY, strlen(KEY), 1, b, &r);
	free(b);
	if (rc == MCC_ENGINE_ROUTE_NEW) {
		CU_ASSERT_EQUAL(mcc_engine_route_close(fx.e, KEY, strlen(KEY)), 0);
		mcc_engine_route_put(r);
		return 1;
	}
	CU_ASSERT_EQUAL(rc, -EINVAL);
	CU_ASSERT_PTR_NULL(r);
	return 0;
}

static int call_sdk_async(uint32_t size)
{
	/* an event type the classifier does not know: nothing changes */
	struct mcc_engine_async full = {sizeof(full), 17, MCC_ENGINE_EL_DEVICE, 1, 0, 0, 0};
	void *b = sized(&full, sizeof(full), 0, size);
	int rc = mcc_engine_async_event(fx.e, fx.dev, b);
	free(b);
	if (rc >= 0) {
		CU_ASSERT_EQUAL(rc, fx.enforce ? 1 : 0);
		return 1;
	}
	CU_ASSERT_EQUAL(rc, -EINVAL);
	return 0;
}

static int call_sdk_stats(uint32_t size)
{
	struct mcc_engine_stats full;
	memset(&full, 0, sizeof(full));
	void *b = sized(&full, sizeof(full), 0, size);
	size_t n = size > sizeof(uint32_t) ? size : sizeof(uint32_t);
	memset((char *)b + sizeof(uint32_t), TAIL, n - sizeof(uint32_t));
	int rc = mcc_engine_get_stats(fx.e, b);
	int took = rc == 0;
	if (took) {
		CU_ASSERT_EQUAL(((struct mcc_engine_stats *)b)->lanes_open, 1u);
		if (size > sizeof(full))
			CU_ASSERT_TRUE(tail_intact((char *)b + sizeof(full), size - sizeof(full)));
	} else {
		CU_ASSERT_EQUAL(rc, -EINVAL);
		CU_ASSERT_TRUE(tail_intact((char *)b + sizeof(uint32_t), n - sizeof(uint32_t)));
	}
	free(b);
	return took;
}

static void test_sizes_sdk(void)
{
	static const struct sweep s[] = {
		{"route_open desc", sizeof(struct mcc_route_desc_v1), 0, MCC_ROUTE_DESC_V1_0_SIZE,
		 call_sdk_route_desc},
		{"mcc_engine_async", sizeof(struct mcc_engine_async), 0, MCC_ENGINE_ASYNC_V1_0_SIZE,
		 call_sdk_async},
		{"mcc_engine_stats", sizeof(struct mcc_engine_stats), 0, MCC_ENGINE_STATS_V1_0_SIZE,
		 call_sdk_stats},
	};
	for (int enforce = 0; enforce < 2; enforce++) {
		fx_open(enforce, 0);
		for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
			run(&s[i]);
		fx_close();
	}
}

/* ------------------------------------------------------------- the policy */

/* init() with one of its three structs of `which` sized, the others whole. */
static int call_init(int which, uint32_t size)
{
	struct mcc_host_v1 host;
	memset(&host, 0, sizeof(host));
	host.abi_version = MCC_POLICY_ABI_V1;
	host.struct_size = sizeof(host);
	host.engine = "sizes";
	host.now_ns = fake_clock;
	host.log = lt_log_fn;
	host.log_arg = &logbuf;
	host.max_lanes = 4;
	struct mcc_config full_cfg;
	mcc_config_defaults(&full_cfg);
	full_cfg.policy.mode = fx.enforce ? MCC_MODE_ENFORCE : MCC_MODE_OFF;
	struct mcc_init_out_v1 out;
	memset(&out, 0, sizeof(out));
	out.struct_size = sizeof(out);
	void *b;
	if (which == 0) {
		b = sized(&host, sizeof(host), offsetof(struct mcc_host_v1, struct_size), size);
		((struct mcc_host_v1 *)b)->abi_version = MCC_POLICY_ABI_V1; /* its first word */
	} else if (which == 1) {
		b = sized(&full_cfg.policy, sizeof(full_cfg.policy), 0, size);
	} else {
		b = sized(&out, sizeof(out), 0, size);
	}
	void *ctx = NULL;
	int rc = fx.ops->init(which == 0 ? b : &host, which == 1 ? b : &full_cfg.policy,
	                      which == 2 ? b : &out, &ctx);
	if (which == 2 && rc == 0 && size > sizeof(out))
		CU_ASSERT_TRUE(tail_intact((char *)b + sizeof(out), size - sizeof(out)));
	free(b);
	if (rc == 0) {
		fx.ops->fini(ctx);
		return 1;
	}
	CU_ASSERT_EQUAL(rc, -EINVAL);
	return 0;
}

static int call_init_host(uint32_t size)
{
	return call_init(0, size);
}

static int call_init_cfg(uint32_t size)
{
	return call_init(1, size);
}

static int call_init_out(uint32_t size)
{
	return call_init(2, size);
}

static int call_lane_desc(uint32_t size)
{
	/* lane id 3: free (the fixture holds 0), below max_lanes 4 */
	struct mcc_lane_desc_v1 full = {sizeof(full), 3, MCC_LANE_POST, 0};
	void *b = sized(&full, sizeof(full), 0, size);
	mcc_lane *l = NULL;
	int rc = fx.ops->lane_open(fx.ctx, b, &l);
	free(b);
	if (rc == 0) {
		CU_ASSERT_PTR_NOT_NULL(l);
		fx.ops->lane_close(fx.ctx, l);
		return 1;
	}
	CU_ASSERT_EQUAL(rc, -EINVAL);
	return 0;
}

static int call_device_desc(uint32_t size)
{
	struct mcc_device_desc_v1 full = {sizeof(full), 9, "mlx5_9", 1, 0, 100000000000ull, 0};
	void *b = sized(&full, sizeof(full), 0, size);
	mcc_device *d = NULL;
	int rc = fx.ops->device_open(fx.ctx, b, &d);
	free(b);
	if (rc == 0) {
		fx.ops->device_close(fx.ctx, d);
		return 1;
	}
	CU_ASSERT_EQUAL(rc, -EINVAL);
	return 0;
}

static int call_route_desc(uint32_t size)
{
	struct mcc_route_desc_v1 full = {sizeof(full), 1, 0, 1, fx.next_id++, "p:1@mlx5_0", 3, 0};
	void *b = sized(&full, sizeof(full), 0, size);
	mcc_route *r = NULL;
	int rc = fx.ops->route_open(fx.ctx, fx.dev, b, &r);
	free(b);
	if (rc == 0) {
		fx.ops->route_close(fx.ctx, r);
		return 1;
	}
	CU_ASSERT_EQUAL(rc, -EINVAL);
	return 0;
}

/* try_acquire into a permit of `size` bytes, then release from it. */
static int call_permit_acquire(uint32_t size)
{
	struct mcc_permit_v1 full = MCC_PERMIT_INIT;
	void *b = sized(&full, sizeof(full), 0, size);
	int rc = fx.ops->try_acquire(fx.lane, fx.route, 4096, 1, NULL, b);
	int took = rc == MCC_ADMIT;
	if (took) {
		CU_ASSERT_EQUAL(fx.ops->release(fx.lane, b, 4096, MCC_REL_NOT_POSTED), 0);
	} else {
		CU_ASSERT_EQUAL(rc, -EINVAL);
	}
	free(b);
	return took;
}

/* A live permit's image in a buffer of `size` bytes: settling it must
 * settle only a whole permit (a short one was never admitted). */
static int settle_sized(uint32_t size, int by_wc)
{
	struct mcc_permit_v1 live = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL_FATAL(fx.ops->try_acquire(fx.lane, fx.route, 4096, 1, NULL, &live),
	                      MCC_ADMIT);
	struct mcc_permit_v1 *b = sized(&live, sizeof(live), 0, size);
	struct mcc_completion_v1 wc = {sizeof(wc), 0, 0, 1, 0, 0, 0, 0, 0};
	int rc = 0;
	if (by_wc)
		fx.ops->on_completion(fx.lane, b, &wc);
	else
		rc = fx.ops->release(fx.lane, (void *)b, 4096, MCC_REL_NOT_POSTED);
	int took = size >= sizeof(live) ? !(b->flags & MCC_PERMIT_F_LIVE) : 0;
	if (size >= sizeof(live)) {
		/* the buffer was the permit: the original holds nothing more */
		CU_ASSERT_EQUAL(rc, 0);
		CU_ASSERT_TRUE(took);
		live.flags = 0;
		live.bytes = 0;
	} else {
		CU_ASSERT_EQUAL(rc, by_wc ? 0 : -EINVAL);
		CU_ASSERT_EQUAL(fx.ops->release(fx.lane, &live, 4096, MCC_REL_NOT_POSTED), 0);
	}
	free(b);
	return took;
}

static int call_permit_release(uint32_t size)
{
	return settle_sized(size, 0);
}

static int call_permit_wc(uint32_t size)
{
	return settle_sized(size, 1);
}

static int call_completion(uint32_t size)
{
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL_FATAL(fx.ops->try_acquire(fx.lane, fx.route, 4096, 1, NULL, &p), MCC_ADMIT);
	struct mcc_completion_v1 full = {sizeof(full), 0, 0, 1, 4096, 0, 0, 0, 0};
	void *b = sized(&full, sizeof(full), 0, size);
	fx.ops->on_completion(fx.lane, &p, b);
	free(b);
	int took = !(p.flags & MCC_PERMIT_F_LIVE);
	if (!took)
		CU_ASSERT_EQUAL(fx.ops->release(fx.lane, &p, 4096, MCC_REL_NOT_POSTED), 0);
	return took;
}

/* The void slow-path callbacks: a refused struct changes nothing. The null
 * policy changes nothing either way: there the sweep checks memory only. */
static int call_async_event(uint32_t size)
{
	mcc_route *r = fresh_route();
	struct mcc_domain_stats_v1 before = rstats(r);
	struct mcc_async_event_v1 full = {sizeof(full), 1 /* IBV_EVENT_QP_FATAL */, fx.dev, r,
	                                  1, 0, 5, 0, 0};
	void *b = sized(&full, sizeof(full), 0, size);
	fx.ops->on_async_event(fx.ctx, b);
	free(b);
	struct mcc_domain_stats_v1 after = rstats(r);
	fx.ops->route_close(fx.ctx, r);
	if (!fx.enforce)
		return size >= MCC_ASYNC_EVENT_V1_0_SIZE;
	return memcmp(&before, &after, sizeof(before)) != 0;
}

static int call_signal(uint32_t size)
{
	mcc_route *r = fresh_route();
	struct mcc_signal_v1 full;
	memset(&full, 0, sizeof(full));
	full.struct_size = sizeof(full);
	full.kind = MCC_SIG_ENDPOINT_REBUILT;
	full.device = fx.dev;
	full.route = r;
	full.generation = 7;
	void *b = sized(&full, sizeof(full), 0, size);
	fx.ops->on_signal(fx.ctx, b);
	free(b);
	uint32_t gen = rstats(r).generation;
	fx.ops->route_close(fx.ctx, r);
	if (!fx.enforce)
		return size >= MCC_SIGNAL_V1_0_SIZE;
	CU_ASSERT_TRUE(gen == 7 || gen == 1);
	return gen == 7;
}

static int call_task_detail(uint32_t size)
{
	struct mcc_task_detail_v1 full;
	memset(&full, 0, sizeof(full));
	void *b = sized(&full, sizeof(full), 0, size);
	size_t n = size > sizeof(uint32_t) ? size : sizeof(uint32_t);
	memset((char *)b + sizeof(uint32_t), TAIL, n - sizeof(uint32_t));
	struct mcc_task_ref_v1 t = {1, 2, 0, 0};
	int rc = fx.ops->task_query(fx.ctx, &t, MCC_TASKQ_SEEN_SUCCESS, b);
	int took = rc >= 0;
	if (took) {
		CU_ASSERT_EQUAL(((struct mcc_task_detail_v1 *)b)->state, (uint32_t)rc);
		if (size > sizeof(full))
			CU_ASSERT_TRUE(tail_intact((char *)b + sizeof(full), size - sizeof(full)));
	} else {
		CU_ASSERT_EQUAL(rc, -EINVAL);
		CU_ASSERT_TRUE(tail_intact((char *)b + sizeof(uint32_t), n - sizeof(uint32_t)));
	}
	free(b);
	return took;
}

static int call_domain_stats(uint32_t size)
{
	struct mcc_domain_stats_v1 full;
	memset(&full, 0, sizeof(full));
	void *b = sized(&full, sizeof(full), 0, size);
	size_t n = size > sizeof(uint32_t) ? size : sizeof(uint32_t);
	memset((char *)b + sizeof(uint32_t), TAIL, n - sizeof(uint32_t));
	int rc = fx.ops->domain_stats(fx.ctx, MCC_DOMAIN_ROUTE, fx.route, b);
	int took = rc == 0;
	if (took) {
		CU_ASSERT_EQUAL(((struct mcc_domain_stats_v1 *)b)->state, MCC_PATH_HEALTHY);
		if (size > sizeof(full))
			CU_ASSERT_TRUE(tail_intact((char *)b + sizeof(full), size - sizeof(full)));
	} else {
		CU_ASSERT_EQUAL(rc, -EINVAL);
		CU_ASSERT_TRUE(tail_intact((char *)b + sizeof(uint32_t), n - sizeof(uint32_t)));
	}
	free(b);
	return took;
}

static const struct sweep policy_sweeps[] = {
	{"init host", sizeof(struct mcc_host_v1), offsetof(struct mcc_host_v1, struct_size),
	 MCC_HOST_V1_0_SIZE, call_init_host},
	{"init cfg", sizeof(struct mcc_config_v1), 0, MCC_CONFIG_V1_0_SIZE, call_init_cfg},
	{"init out", sizeof(struct mcc_init_out_v1), 0, MCC_INIT_OUT_V1_0_SIZE, call_init_out},
	{"lane_open desc", sizeof(struct mcc_lane_desc_v1), 0, MCC_LANE_DESC_V1_0_SIZE,
	 call_lane_desc},
	{"device_open desc", sizeof(struct mcc_device_desc_v1), 0, MCC_DEVICE_DESC_V1_0_SIZE,
	 call_device_desc},
	{"route_open desc", sizeof(struct mcc_route_desc_v1), 0, MCC_ROUTE_DESC_V1_0_SIZE,
	 call_route_desc},
	{"try_acquire permit", sizeof(struct mcc_permit_v1), 0, MCC_PERMIT_V1_SIZE,
	 call_permit_acquire},
	{"release permit", sizeof(struct mcc_permit_v1), 0, MCC_PERMIT_V1_SIZE,
	 call_permit_release},
	{"on_completion permit", sizeof(struct mcc_permit_v1), 0, MCC_PERMIT_V1_SIZE,
	 call_permit_wc},
	{"on_completion wc", sizeof(struct mcc_completion_v1), 0, MCC_COMPLETION_V1_0_SIZE,
	 call_completion},
	{"on_async_event", sizeof(struct mcc_async_event_v1), 0, MCC_ASYNC_EVENT_V1_0_SIZE,
	 call_async_event},
	{"on_signal", sizeof(struct mcc_signal_v1), 0, MCC_SIGNAL_V1_0_SIZE, call_signal},
	{"task_query detail", sizeof(struct mcc_task_detail_v1), 0, MCC_TASK_DETAIL_V1_0_SIZE,
	 call_task_detail},
	{"domain_stats", sizeof(struct mcc_domain_stats_v1), 0, MCC_DOMAIN_STATS_V1_0_SIZE,
	 call_domain_stats},
};

/* The core module (aimd, enforce). */
static void test_sizes_core(void)
{
	fx_open(1, 4);
	for (size_t i = 0; i < sizeof(policy_sweeps) / sizeof(policy_sweeps[0]); i++)
		run(&policy_sweeps[i]);
	/* nothing was left reserved by the sweeps */
	CU_ASSERT_EQUAL(rstats(fx.route).inflight_bytes, 0u);
	fx_close();
}

/* libmcc's built-in null policy (mode off; the filler of every NULL slot). */
static void test_sizes_null(void)
{
	fx_open(0, 4);
	for (size_t i = 0; i < sizeof(policy_sweeps) / sizeof(policy_sweeps[0]); i++)
		run(&policy_sweeps[i]);
	fx_close();
}

MCC_CU_SUITE(t_init_sizes_tests, "sizes", suite_init, suite_clean,
             test_sizes_options,
             test_sizes_sdk,
             test_sizes_core,
             test_sizes_null)

MCC_CU_MAIN(t_init_sizes_tests)
