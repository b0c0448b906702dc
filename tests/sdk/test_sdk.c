/* SPDX-License-Identifier: MIT */
/*
 * test_sdk.c - the engine SDK (plugin_api/include/mcc_engine.h): lanes, the tick
 * driver, the route registry with generations, async snapshots, DEFER
 * parking, the clock, batches and set-up failures, each misuse with its
 * clear error. The clock is injected; threads meet at barriers or wait for
 * a counter, never for a sleep.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cu_driver.h"
#include "lt_util.h"
#include "mcc_engine.h"

#define MS 1000000ull
#define EPOCH_NS (1000u * 1000u) /* the default epoch_us = 1000 */

static _Atomic uint64_t fake_ns;
static uint64_t fake_clock(void *arg)
{
	(void)arg;
	return atomic_load(&fake_ns);
}

static struct lt_log logbuf;
static char tmpdir[LT_PATH], ini_enforce[LT_PATH], ini_qos[LT_PATH];

static int suite_init(void)
{
	if (lt_suite_open(tmpdir, sizeof(tmpdir), &logbuf, ini_enforce) != 0 ||
	    lt_write(tmpdir, "qos.ini", "[policy]\nmode = enforce\n[engine]\nqos = on\n", 0600,
	             ini_qos, sizeof(ini_qos)) != 0)
		return -1;
	return 0;
}

static int suite_clean(void)
{
	return lt_suite_close(tmpdir, &logbuf);
}

/* An engine on the injected clock configured by `ini` (NULL: none). */
static mcc_engine *engine_with(const char *ini, uint32_t tick)
{
	struct mcc_loader_opts lo;
	lt_opts(&lo, &logbuf, ini);
	lo.engine = "sdk-test";
	lo.module_dir = lt_module_dir();
	struct mcc_engine_opts o;
	memset(&o, 0, sizeof(o));
	o.struct_size = sizeof(o);
	o.tick = tick;
	o.loader = &lo;
	o.now_ns = fake_clock;
	mcc_engine *e = NULL;
	int rc = mcc_engine_open(&o, &e);
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	return e;
}

/* An engine on the injected clock; enforce: the core module, else off. */
static mcc_engine *open_engine(int enforce, uint32_t tick)
{
	mcc_engine *e = engine_with(enforce ? ini_enforce : NULL, tick);
	CU_ASSERT_EQUAL(mcc_instance_mode(mcc_engine_instance(e)),
	                enforce ? MCC_MODE_ENFORCE : MCC_MODE_OFF);
	return e;
}

static struct mcc_engine_stats stats_of(mcc_engine *e)
{
	struct mcc_engine_stats s;
	memset(&s, 0, sizeof(s));
	s.struct_size = sizeof(s);
	CU_ASSERT_EQUAL(mcc_engine_get_stats(e, &s), 0);
	return s;
}

static mcc_device *open_device(mcc_engine *e)
{
	struct mcc_device_desc_v1 d = {sizeof(d), 0, "mlx5_0", 1, 0, 0, 0};
	mcc_device *dev = NULL;
	CU_ASSERT_EQUAL_FATAL(mcc_engine_ops(e)->device_open(mcc_engine_ctx(e), &d, &dev), 0);
	return dev;
}


static uint32_t lane_id(mcc_lane_ref r)
{
	return (uint32_t)(r & 0xffffffffu) - 1u;
}

/* ------------------------------------------------------------------- lanes */

/* Two engines on one instance: the second opens lanes after the first
 * acquired it, and nothing was frozen by the first acquire; ids are the
 * lowest free ones and come back on close. */
static void test_lanes_growth(void)
{
	atomic_store(&fake_ns, 1000 * MS);
	mcc_engine *a = open_engine(1, MCC_ENGINE_TICK_POLL);
	mcc_engine *b = open_engine(1, MCC_ENGINE_TICK_POLL);
	CU_ASSERT_PTR_EQUAL(mcc_engine_instance(a), mcc_engine_instance(b));
	enum { N = 200 };
	static mcc_lane_ref ref[N];
	mcc_lane *lane;
	for (int i = 0; i < N; i++) {
		CU_ASSERT_EQUAL_FATAL(mcc_engine_lane_open(i % 2 ? b : a, MCC_LANE_POST, &ref[i], &lane), 0);
		CU_ASSERT_EQUAL(lane_id(ref[i]), (uint32_t)i);
		CU_ASSERT_PTR_NOT_NULL(lane);
	}
	CU_ASSERT_EQUAL(stats_of(a).lanes_open, N / 2);
	CU_ASSERT_EQUAL(mcc_engine_lane_close(b, ref[7]), 0);
	mcc_lane_ref again;
	CU_ASSERT_EQUAL(mcc_engine_lane_open(a, MCC_LANE_POLL, &again, &lane), 0);
	CU_ASSERT_EQUAL(lane_id(again), 7u); /* lowest free */
	CU_ASSERT_NOT_EQUAL(again, ref[7]);  /* a new reference */
	CU_ASSERT_EQUAL(mcc_engine_lane_close(a, again), 0);
	for (int i = 0; i < N; i++)
		if (i != 7)
			CU_ASSERT_EQUAL(mcc_engine_lane_close(i % 2 ? b : a, ref[i]), 0);
	CU_ASSERT_EQUAL(stats_of(a).lanes_open, 0);
	CU_ASSERT_EQUAL(stats_of(b).lanes_open, 0);
	mcc_engine_close(b);
	mcc_engine_close(a);
}

static void test_lanes_exhausted(void)
{
	mcc_engine *e = open_engine(0, MCC_ENGINE_TICK_POLL);
	static mcc_lane_ref ref[MCC_ENGINE_LANES_MAX];
	mcc_lane *lane;
	for (uint32_t i = 0; i < MCC_ENGINE_LANES_MAX; i++)
		CU_ASSERT_EQUAL_FATAL(mcc_engine_lane_open(e, MCC_LANE_POST, &ref[i], &lane), 0);
	mcc_lane_ref extra = 1;
	lane = (mcc_lane *)1;
	CU_ASSERT_EQUAL(mcc_engine_lane_open(e, MCC_LANE_POST, &extra, &lane), -ENOSPC);
	CU_ASSERT_EQUAL(extra, 0);
	CU_ASSERT_PTR_NULL(lane);
	CU_ASSERT_TRUE(lt_log_has(&logbuf, "lane registry exhausted"));
	/* nothing lost: every lane is still usable, one closed makes room */
	CU_ASSERT_EQUAL(stats_of(e).lanes_open, MCC_ENGINE_LANES_MAX);
	CU_ASSERT_PTR_NOT_NULL(mcc_engine_lane_get(e, ref[500]));
	CU_ASSERT_EQUAL(mcc_engine_lane_close(e, ref[500]), 0);
	CU_ASSERT_EQUAL(mcc_engine_lane_open(e, MCC_LANE_POST, &ref[500], &lane), 0);
	CU_ASSERT_EQUAL(lane_id(ref[500]), 500u);
	for (uint32_t i = 0; i < MCC_ENGINE_LANES_MAX; i++)
		CU_ASSERT_EQUAL(mcc_engine_lane_close(e, ref[i]), 0);
	mcc_engine_close(e);
}

static void test_lane_after_close(void)
{
	mcc_engine *e = open_engine(1, MCC_ENGINE_TICK_POLL);
	mcc_engine *other = open_engine(1, MCC_ENGINE_TICK_POLL);
	mcc_lane_ref r, r2, r3;
	mcc_lane *lane;
	CU_ASSERT_EQUAL_FATAL(mcc_engine_lane_open(e, MCC_LANE_POST, &r, &lane), 0);
	CU_ASSERT_PTR_EQUAL(mcc_engine_lane_get(e, r), lane);
	CU_ASSERT_PTR_NULL(mcc_engine_lane_get(other, r)); /* not its lane */
	CU_ASSERT_EQUAL(mcc_engine_lane_close(other, r), -EPERM);
	CU_ASSERT_PTR_EQUAL(mcc_engine_lane_get(e, r), lane); /* still open */
	CU_ASSERT_EQUAL(mcc_engine_lane_close(e, r), 0);
	CU_ASSERT_PTR_NULL(mcc_engine_lane_get(e, r));
	CU_ASSERT_EQUAL(mcc_engine_lane_close(e, r), -ESTALE);
	CU_ASSERT_TRUE(lt_log_has(&logbuf, "is closed or was never opened"));
	/* the id is reused; the old reference stays dead */
	CU_ASSERT_EQUAL_FATAL(mcc_engine_lane_open(other, MCC_LANE_POST, &r2, &lane), 0);
	CU_ASSERT_EQUAL(lane_id(r2), lane_id(r));
	CU_ASSERT_PTR_NULL(mcc_engine_lane_get(e, r));
	CU_ASSERT_PTR_NULL(mcc_engine_lane_get(other, r));
	CU_ASSERT_EQUAL(mcc_engine_lane_close(other, r), -ESTALE);
	CU_ASSERT_PTR_EQUAL(mcc_engine_lane_get(other, r2), lane);
	CU_ASSERT_EQUAL(mcc_engine_lane_close(e, 0), -ESTALE);
	CU_ASSERT_EQUAL(mcc_engine_lane_close(e, 0xffffffffffffull), -ESTALE);
	/* a lane left open is closed by engine close, with a warning */
	CU_ASSERT_EQUAL_FATAL(mcc_engine_lane_open(e, MCC_LANE_POST, &r3, &lane), 0);
	mcc_engine_close(e);
	CU_ASSERT_TRUE(lt_log_has(&logbuf, "was still open; closed"));
	CU_ASSERT_EQUAL(mcc_engine_lane_close(other, r2), 0);
	mcc_engine_close(other);
}

static struct mcc_engine_async qp_event_dev(void);

/* The policy's lane handle after its close: the core keeps the lane's
 * memory and answers -EBADF (a host that kept the mcc_lane * of a closed
 * lane used to write freed memory); the permit stays live and settles on
 * an open lane. A second policy-level close is a no-op. */
static void test_policy_lane_after_close(void)
{
	mcc_engine *e = open_engine(1, MCC_ENGINE_TICK_POLL);
	const struct mcc_policy_v1 *ops = mcc_engine_ops(e);
	mcc_device *dev = open_device(e);
	struct mcc_route_desc_v1 rd = {sizeof(rd), 1, 0, 1, 1, "p:1@mlx5_0", 0, 0};
	mcc_route *route = NULL;
	CU_ASSERT_EQUAL_FATAL(ops->route_open(mcc_engine_ctx(e), dev, &rd, &route), 0);
	mcc_lane_ref ra, rb;
	mcc_lane *a, *b;
	CU_ASSERT_EQUAL_FATAL(mcc_engine_lane_open(e, MCC_LANE_POST_POLL, &ra, &a), 0);
	CU_ASSERT_EQUAL_FATAL(mcc_engine_lane_open(e, MCC_LANE_POST_POLL, &rb, &b), 0);
	struct mcc_permit_v1 p = MCC_PERMIT_INIT, q = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(ops->try_acquire(a, route, 4096, 1, NULL, &p), MCC_ADMIT);
	CU_ASSERT_EQUAL(mcc_engine_lane_close(e, ra), 0);
	CU_ASSERT_EQUAL(ops->try_acquire(a, route, 4096, 1, NULL, &q), -EBADF);
	CU_ASSERT_FALSE(q.flags & MCC_PERMIT_F_LIVE);
	CU_ASSERT_EQUAL(ops->release(a, &p, 4096, MCC_REL_NOT_POSTED), -EBADF);
	struct mcc_completion_v1 wc = {sizeof(wc), 0, 0, 1, 0, 0, 0, 0, 0};
	ops->on_completion(a, &p, &wc);
	ops->poller_progress(a, dev, 1);
	CU_ASSERT_TRUE(p.flags & MCC_PERMIT_F_LIVE); /* nothing settled on the dead lane */
	ops->lane_close(mcc_engine_ctx(e), a);        /* closed twice: nothing */
	ops->on_completion(b, &p, &wc);               /* an open lane settles it */
	CU_ASSERT_FALSE(p.flags & MCC_PERMIT_F_LIVE);
	struct mcc_domain_stats_v1 st;
	memset(&st, 0, sizeof(st));
	st.struct_size = sizeof(st);
	CU_ASSERT_EQUAL(ops->domain_stats(mcc_engine_ctx(e), MCC_DOMAIN_ROUTE, route, &st), 0);
	CU_ASSERT_EQUAL(st.inflight_bytes, 0u);
	/* the id opened again: the old handle is that lane's memory again */
	mcc_lane *a2;
	CU_ASSERT_EQUAL_FATAL(mcc_engine_lane_open(e, MCC_LANE_POST_POLL, &ra, &a2), 0);
	CU_ASSERT_PTR_EQUAL(a2, a);
	CU_ASSERT_EQUAL(ops->try_acquire(a2, route, 4096, 1, NULL, &q), MCC_ADMIT);
	CU_ASSERT_EQUAL(ops->release(a2, &q, 4096, MCC_REL_NOT_POSTED), 0);
	CU_ASSERT_EQUAL(mcc_engine_lane_close(e, ra), 0);
	CU_ASSERT_EQUAL(mcc_engine_lane_close(e, rb), 0);
	ops->route_close(mcc_engine_ctx(e), route);
	ops->device_close(mcc_engine_ctx(e), dev);
	mcc_engine_close(e);
}

/* An engine used after its close: every call that can fail answers -EBADF
 * (the open engines are looked up by address, the freed one is never
 * read); a second close is logged and ignored. */
static void test_engine_after_close(void)
{
	mcc_engine *e = open_engine(1, MCC_ENGINE_TICK_POLL);
	mcc_device *dev = open_device(e);
	mcc_engine_ops(e)->device_close(mcc_engine_ctx(e), dev);
	mcc_engine_close(e);
	mcc_engine_close(e); /* "not an open engine (closed twice ...)": ignored */
	mcc_lane_ref lr = 1;
	mcc_lane *lane = (mcc_lane *)1;
	mcc_engine_route *r = (mcc_engine_route *)1;
	struct mcc_engine_async ev = qp_event_dev();
	struct mcc_engine_stats st;
	memset(&st, 0, sizeof(st));
	st.struct_size = sizeof(st);
	CU_ASSERT_EQUAL(mcc_engine_lane_open(e, MCC_LANE_POST, &lr, &lane), -EBADF);
	CU_ASSERT_EQUAL(lr, 0u);
	CU_ASSERT_PTR_NULL(lane);
	CU_ASSERT_EQUAL(mcc_engine_lane_close(e, 1), -EBADF);
	CU_ASSERT_PTR_NULL(mcc_engine_lane_get(e, 1));
	CU_ASSERT_EQUAL(mcc_engine_route_open(e, dev, "k", 1, 1, NULL, &r), -EBADF);
	CU_ASSERT_PTR_NULL(r);
	CU_ASSERT_EQUAL(mcc_engine_route_lookup(e, "k", 1, &r), -EBADF);
	CU_ASSERT_EQUAL(mcc_engine_route_close(e, "k", 1), -EBADF);
	CU_ASSERT_EQUAL(mcc_engine_qp_remove(e, dev, 1), -EBADF);
	CU_ASSERT_EQUAL(mcc_engine_cq_id(e, dev, 1), 0u);
	CU_ASSERT_EQUAL(mcc_engine_cq_remove(e, dev, 1), -EBADF);
	CU_ASSERT_EQUAL(mcc_engine_async_event(e, dev, &ev), -EBADF);
	CU_ASSERT_EQUAL(mcc_engine_setup_failed(e, dev, NULL, MCC_ENGINE_SETUP_CONNECT, -5, NULL),
	                -EBADF);
	CU_ASSERT_EQUAL(mcc_engine_batch_begin(e, 1), -EBADF);
	CU_ASSERT_EQUAL(mcc_engine_batch_free(e, 1), -EBADF);
	CU_ASSERT_EQUAL(mcc_engine_get_stats(e, &st), -EBADF);
}

/* ------------------------------------------------------------- tick driver */

#define TICKERS 4
#define ROUNDS 50
static pthread_barrier_t tick_bar;
static _Atomic int tick_total[ROUNDS];

static void *ticker(void *arg)
{
	mcc_engine *e = arg;
	for (int round = 0; round < ROUNDS; round++) {
		pthread_barrier_wait(&tick_bar); /* the clock was set for this round */
		uint64_t now = mcc_engine_now(e);
		for (int i = 0; i < 100; i++)
			atomic_fetch_add(&tick_total[round], mcc_engine_tick_if_due(e, now));
		pthread_barrier_wait(&tick_bar);
	}
	return NULL;
}

static void test_tick_once_per_epoch(void)
{
	atomic_store(&fake_ns, 5000 * MS);
	mcc_engine *e[2] = {open_engine(1, MCC_ENGINE_TICK_POLL), open_engine(1, MCC_ENGINE_TICK_POLL)};
	CU_ASSERT_EQUAL(mcc_engine_retry_after_ns(e[0]), EPOCH_NS);
	uint64_t ticks0 = stats_of(e[0]).ticks;
	pthread_barrier_init(&tick_bar, NULL, TICKERS + 1);
	pthread_t t[TICKERS];
	for (int i = 0; i < TICKERS; i++)
		pthread_create(&t[i], NULL, ticker, e[i % 2]);
	for (int round = 0; round < ROUNDS; round++) {
		/* even rounds: a new epoch; odd rounds: half an epoch later */
		atomic_fetch_add(&fake_ns, round % 2 ? EPOCH_NS / 2 : EPOCH_NS);
		pthread_barrier_wait(&tick_bar);
		pthread_barrier_wait(&tick_bar);
	}
	for (int i = 0; i < TICKERS; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&tick_bar);
	int total = 0;
	for (int round = 0; round < ROUNDS; round++) {
		/* round 0 ticks (the first call of an instance is due); then
		 * exactly one claim per whole epoch over both engines' threads */
		int want = round == 0 ? 1 : (round % 2 ? 0 : 1);
		CU_ASSERT_EQUAL(atomic_load(&tick_total[round]), want);
		total += atomic_load(&tick_total[round]);
	}
	CU_ASSERT_EQUAL(stats_of(e[1]).ticks - ticks0, (uint64_t)total);
	/* a time from before the last tick is never due */
	CU_ASSERT_EQUAL(mcc_engine_tick_if_due(e[0], 0), 0);
	mcc_engine_close(e[0]);
	mcc_engine_close(e[1]);
}

/* Wait (bounded, 20 s of real time) until the engine has ticked `n` times,
 * moving the injected clock one epoch per look. */
static int wait_ticks(mcc_engine *e, uint64_t n)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (stats_of(e).ticks < n) {
		atomic_fetch_add(&fake_ns, EPOCH_NS);
		sched_yield();
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 20)
			return 0;
	}
	return 1;
}

static void test_tick_thread(void)
{
	atomic_store(&fake_ns, 9000 * MS);
	mcc_engine *e = open_engine(1, MCC_ENGINE_TICK_THREAD);
	CU_ASSERT_TRUE(wait_ticks(e, 3));
	/* a parked worker is woken by the tick thread (no notify of its own) */
	uint32_t seq = mcc_engine_room_seq(e);
	atomic_fetch_add(&fake_ns, 2 * EPOCH_NS);
	int rc = mcc_engine_room_wait(e, seq, 20000 * MS);
	CU_ASSERT_EQUAL(rc, 0);
	if (rc)
		fprintf(stderr, "room_wait: %d\n", rc);
	mcc_engine_close(e); /* joins the thread */
	e = open_engine(1, MCC_ENGINE_TICK_THREAD);
	mcc_engine_close(e); /* stopped right after start */
}

/* Mode off: nothing to tick, so no tick thread is started. Its first pass
 * would claim the epoch due at open; here this caller claims it, and the
 * next one after the clock moves, and nothing else ever ticks. */
static void test_no_tick_thread_when_off(void)
{
	atomic_store(&fake_ns, 9000 * MS);
	mcc_engine *e = open_engine(0, MCC_ENGINE_TICK_THREAD);
	for (int i = 0; i < 100; i++)
		sched_yield(); /* a thread, were there one, has run by now */
	CU_ASSERT_EQUAL(stats_of(e).ticks, 0);
	CU_ASSERT_EQUAL(mcc_engine_tick_if_due(e, fake_clock(NULL)), 1);
	atomic_fetch_add(&fake_ns, 2 * EPOCH_NS);
	CU_ASSERT_EQUAL(mcc_engine_tick_if_due(e, fake_clock(NULL)), 1);
	CU_ASSERT_EQUAL(stats_of(e).ticks, 2);
	mcc_engine_close(e);
}

/* ------------------------------------------------------------------ routes */

static const char KEY_A[] = "10.0.0.2:12001@mlx5_1";
static const char KEY_B[] = "10.0.0.3:12001@mlx5_0";

/* An enforce engine on the polled tick with one device, KEY_A's route on
 * it (new) and a POST_POLL lane. */
struct one {
	mcc_engine *e;
	const struct mcc_policy_v1 *ops;
	mcc_device *dev;
	mcc_engine_route *r;
	mcc_lane_ref lr;
	mcc_lane *lane;
};

static struct one one_open(void)
{
	struct one f;
	f.e = open_engine(1, MCC_ENGINE_TICK_POLL);
	f.ops = mcc_engine_ops(f.e);
	f.dev = open_device(f.e);
	CU_ASSERT_EQUAL_FATAL(
	        mcc_engine_route_open(f.e, f.dev, KEY_A, strlen(KEY_A), 1, NULL, &f.r),
	        MCC_ENGINE_ROUTE_NEW);
	CU_ASSERT_EQUAL_FATAL(mcc_engine_lane_open(f.e, MCC_LANE_POST_POLL, &f.lr, &f.lane), 0);
	return f;
}

static uint32_t cc_generation(mcc_engine *e, mcc_engine_route *r)
{
	struct mcc_domain_stats_v1 st;
	memset(&st, 0, sizeof(st));
	st.struct_size = sizeof(st);
	CU_ASSERT_EQUAL(mcc_engine_ops(e)->domain_stats(mcc_engine_ctx(e), MCC_DOMAIN_ROUTE,
	                                                mcc_engine_route_cc(r), &st), 0);
	return st.generation;
}

static void test_route_generations(void)
{
	mcc_engine *e = open_engine(1, MCC_ENGINE_TICK_POLL);
	const struct mcc_policy_v1 *ops = mcc_engine_ops(e);
	mcc_device *dev = open_device(e);
	struct mcc_route_desc_v1 d = {sizeof(d), 1, 0, 0, 0, NULL, 42, 0};
	mcc_engine_route *r, *same, *renewed, *other, *look;
	CU_ASSERT_EQUAL(mcc_engine_route_open(e, dev, KEY_A, strlen(KEY_A), 0x1000, &d, &r),
	                MCC_ENGINE_ROUTE_NEW);
	CU_ASSERT_EQUAL(mcc_engine_route_id(r), 1u);
	CU_ASSERT_EQUAL(mcc_engine_route_generation(r), 1u);
	CU_ASSERT_EQUAL(cc_generation(e, r), 1u);
	CU_ASSERT_EQUAL(mcc_engine_route_open(e, dev, KEY_A, strlen(KEY_A), 0x1000, &d, &same),
	                MCC_ENGINE_ROUTE_SAME);
	CU_ASSERT_PTR_EQUAL(same, r);
	CU_ASSERT_EQUAL(mcc_engine_route_generation(r), 1u);
	/* the engine rebuilt the endpoint (new QPs): the generation moves, and
	 * the policy learned it (MCC_SIG_ENDPOINT_REBUILT) */
	CU_ASSERT_EQUAL(mcc_engine_route_open(e, dev, KEY_A, strlen(KEY_A), 0x2000, &d, &renewed),
	                MCC_ENGINE_ROUTE_RENEWED);
	CU_ASSERT_PTR_EQUAL(renewed, r);
	CU_ASSERT_EQUAL(mcc_engine_route_generation(r), 2u);
	CU_ASSERT_EQUAL(cc_generation(e, r), 2u);
	CU_ASSERT_EQUAL(mcc_engine_route_renew(e, r, 0x3000), 3);
	CU_ASSERT_EQUAL(cc_generation(e, r), 3u);
	/* a permit admitted on generation 3; a stale-generation one is fenced
	 * by the policy (accounting only) */
	mcc_lane_ref lr;
	mcc_lane *lane;
	CU_ASSERT_EQUAL_FATAL(mcc_engine_lane_open(e, MCC_LANE_POST_POLL, &lr, &lane), 0);
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(ops->try_acquire(lane, mcc_engine_route_cc(r), 4096,
	                                 mcc_engine_route_generation(r), NULL, &p), MCC_ADMIT);
	CU_ASSERT_EQUAL(p.generation, 3u);
	CU_ASSERT_EQUAL(ops->release(lane, &p, 4096, MCC_REL_NOT_POSTED), 0);
	CU_ASSERT_EQUAL(mcc_engine_lane_close(e, lr), 0);

	CU_ASSERT_EQUAL(mcc_engine_route_open(e, dev, KEY_B, strlen(KEY_B), 1, NULL, &other),
	                MCC_ENGINE_ROUTE_NEW);
	CU_ASSERT_EQUAL(mcc_engine_route_id(other), 2u);
	CU_ASSERT_EQUAL(stats_of(e).routes_open, 2u);
	/* unknown key, closed key */
	CU_ASSERT_EQUAL(mcc_engine_route_lookup(e, "nope", 4, &look), -ENOENT);
	CU_ASSERT_PTR_NULL(look);
	CU_ASSERT_EQUAL(mcc_engine_route_close(e, "nope", 4), -ENOENT);
	CU_ASSERT_EQUAL(mcc_engine_route_lookup(e, KEY_A, strlen(KEY_A), &look), 0);
	CU_ASSERT_PTR_EQUAL(look, r);
	CU_ASSERT_EQUAL(mcc_engine_route_close(e, KEY_A, strlen(KEY_A)), 0);
	CU_ASSERT_EQUAL(mcc_engine_route_close(e, KEY_A, strlen(KEY_A)), -ENOENT);
	mcc_engine_route *gone = r;
	CU_ASSERT_EQUAL(mcc_engine_route_lookup(e, KEY_A, strlen(KEY_A), &gone), -ENOENT);
	CU_ASSERT_PTR_NULL(gone);
	/* still referenced (same, renewed, the lookup, r): usable, not renewable */
	CU_ASSERT_EQUAL(mcc_engine_route_generation(r), 3u);
	CU_ASSERT_EQUAL(cc_generation(e, r), 3u);
	CU_ASSERT_EQUAL(mcc_engine_route_renew(e, r, 0x4000), -ESTALE);
	CU_ASSERT_EQUAL(mcc_engine_qp_add(e, r, 5), -ESTALE);
	CU_ASSERT_EQUAL(stats_of(e).routes_open, 1u);
	mcc_engine_route_put(look);
	mcc_engine_route_put(renewed);
	mcc_engine_route_put(same);
	mcc_engine_route_put(r); /* the last: the policy's route_close */
	/* bad arguments */
	CU_ASSERT_EQUAL(mcc_engine_route_open(e, dev, KEY_B, 0, 1, NULL, &gone), -EINVAL);
	CU_ASSERT_EQUAL(mcc_engine_route_open(e, NULL, KEY_B, 3, 1, NULL, &gone), -EINVAL);
	/* a route left open is closed by engine close; its device closed
	 * first (a contract breach) lives until then and takes no new route */
	mcc_engine_route_put(other);
	ops->device_close(mcc_engine_ctx(e), dev);
	CU_ASSERT_EQUAL(mcc_engine_route_open(e, dev, "c", 1, 1, NULL, &gone), -EINVAL);
	CU_ASSERT_PTR_NULL(gone);
	mcc_engine_close(e);
}

/* The reference rule of mcc_engine.h: each open and lookup owes one put,
 * close gives back none; a put too many is -EBADF and changes nothing,
 * also once the route is freed (the engine keeps its memory DEAD); a
 * route closed without its put, or left open, is reclaimed and reported
 * by mcc_engine_close (LeakSanitizer checks nothing is left). */
static void test_route_reference_rule(void)
{
	lt_log_fini(&logbuf);
	lt_log_init(&logbuf);
	mcc_engine *e = open_engine(1, MCC_ENGINE_TICK_POLL);
	mcc_device *dev = open_device(e);
	mcc_engine_route *r, *look, *rb, *rc;
	CU_ASSERT_EQUAL_FATAL(mcc_engine_route_open(e, dev, KEY_A, strlen(KEY_A), 1, NULL, &r),
	                      MCC_ENGINE_ROUTE_NEW);
	CU_ASSERT_EQUAL(mcc_engine_route_put(r), 0); /* the open's reference */
	CU_ASSERT_EQUAL(mcc_engine_route_put(r), -EBADF);
	CU_ASSERT_TRUE(lt_log_has(&logbuf, "holds no reference (one put too many); ignored"));
	CU_ASSERT_EQUAL(mcc_engine_route_generation(r), 1u); /* published: alive */
	CU_ASSERT_EQUAL(mcc_engine_route_lookup(e, KEY_A, strlen(KEY_A), &look), 0);
	CU_ASSERT_PTR_EQUAL(look, r);
	CU_ASSERT_EQUAL(mcc_engine_route_close(e, KEY_A, strlen(KEY_A)), 0);
	CU_ASSERT_PTR_NOT_NULL(mcc_engine_route_cc(look)); /* referenced: alive */
	CU_ASSERT_EQUAL(mcc_engine_route_renew(e, look, 2), -ESTALE);
	CU_ASSERT_EQUAL(mcc_engine_route_put(look), 0); /* the last: freed */
	CU_ASSERT_EQUAL(mcc_engine_route_put(look), -EBADF);
	CU_ASSERT_PTR_NULL(mcc_engine_route_cc(look));
	CU_ASSERT_EQUAL(mcc_engine_route_generation(look), 0u);
	CU_ASSERT_EQUAL(mcc_engine_route_id(look), 0u);
	CU_ASSERT_EQUAL(mcc_engine_route_renew(e, look, 3), -EBADF);
	CU_ASSERT_EQUAL(mcc_engine_qp_add(e, look, 9), -EBADF);
	CU_ASSERT_EQUAL(mcc_engine_setup_failed(e, dev, look, MCC_ENGINE_SETUP_CONNECT, -5, NULL),
	                -EBADF);
	/* closed without its put; and one never closed nor put */
	CU_ASSERT_EQUAL(mcc_engine_route_open(e, dev, KEY_B, strlen(KEY_B), 1, NULL, &rb),
	                MCC_ENGINE_ROUTE_NEW);
	CU_ASSERT_EQUAL(mcc_engine_route_close(e, KEY_B, strlen(KEY_B)), 0);
	CU_ASSERT_EQUAL(mcc_engine_route_open(e, dev, "c", 1, 1, NULL, &rc), MCC_ENGINE_ROUTE_NEW);
	CU_ASSERT_EQUAL(stats_of(e).routes_open, 1u);
	mcc_engine_close(e); /* the device goes with the policy's fini */
	CU_ASSERT_TRUE(lt_log_has(&logbuf, "route 2 (10.0.0.3:12001@mlx5_0) was closed but 1 "
	                                   "references were never put; reclaimed"));
	CU_ASSERT_TRUE(lt_log_has(&logbuf, "route 3 (c) was still open, with 1 references not "
	                                   "put; reclaimed"));
}

/* A worker's admission loop over one route, advancing the injected clock
 * 10 ms per refused round and ticking, for `rounds` rounds. `follow`: after
 * an AVOID it does what mcc_engine.h says (mcc_engine_route_avoided, then
 * waits the hint), else it only waits (the header before this rule). */
static void worker_rounds(mcc_engine *e, mcc_lane *lane, mcc_engine_route *r, int follow,
                          unsigned rounds, unsigned *admits, unsigned *avoids)
{
	const struct mcc_policy_v1 *ops = mcc_engine_ops(e);
	for (unsigned i = 0; i < rounds; i++) {
		struct mcc_permit_v1 p = MCC_PERMIT_INIT;
		int d = ops->try_acquire(lane, mcc_engine_route_cc(r), 4096,
		                         mcc_engine_route_generation(r), NULL, &p);
		uint64_t wait = 10 * MS;
		if (d == MCC_ADMIT) {
			(*admits)++;
			struct mcc_completion_v1 wc = {sizeof(wc), 0, 0, p.generation, 0, 0, 0, 1, 0};
			ops->on_completion(lane, &p, &wc);
		} else if (d == MCC_AVOID) {
			(*avoids)++;
			uint64_t retry = 0;
			if (follow && mcc_engine_route_avoided(e, r, &retry) == 1)
				wait = 0; /* retry now: the next try is the probe */
		}
		atomic_fetch_add(&fake_ns, wait);
		mcc_engine_tick_if_due(e, mcc_engine_now(e));
	}
}

/* A route quarantined by hard errors, on an engine that never rebuilds its
 * endpoint: the policy probes only a new generation, so a worker that just
 * waits out the cooldown stalls (every try an AVOID); one that follows the
 * header (AVOID -> mcc_engine_route_avoided) gets the probe from the SDK
 * once the cooldown is over and the route recovers by itself. */
static void test_probe_after_cooldown(void)
{
	atomic_store(&fake_ns, 20000 * MS);
	struct one f = one_open();
	for (int i = 0; i < 3; i++) { /* hard_error_threshold timeouts */
		struct mcc_permit_v1 p = MCC_PERMIT_INIT;
		CU_ASSERT_EQUAL(
		        f.ops->try_acquire(f.lane, mcc_engine_route_cc(f.r), 4096, 1, NULL, &p),
		        MCC_ADMIT);
		struct mcc_completion_v1 wc = {sizeof(wc), 12 /* RETRY_EXC_ERR */, 0, 1, 0, 0, 0, 1, 0};
		f.ops->on_completion(f.lane, &p, &wc);
	}
	atomic_fetch_add(&fake_ns, 2 * MS);
	mcc_engine_tick_if_due(f.e, mcc_engine_now(f.e));
	struct mcc_domain_stats_v1 st;
	memset(&st, 0, sizeof(st));
	st.struct_size = sizeof(st);
	CU_ASSERT_EQUAL(f.ops->domain_stats(mcc_engine_ctx(f.e), MCC_DOMAIN_ROUTE,
	                                    mcc_engine_route_cc(f.r), &st), 0);
	CU_ASSERT_EQUAL_FATAL(st.state, MCC_PATH_QUARANTINED);
	unsigned admits = 0, avoids = 0;
	/* 4 s, four cooldowns: waiting alone never recovers */
	worker_rounds(f.e, f.lane, f.r, 0, 400, &admits, &avoids);
	CU_ASSERT_EQUAL(admits, 0u);
	CU_ASSERT_EQUAL(avoids, 400u);
	uint64_t retry = 1;
	CU_ASSERT_EQUAL(mcc_engine_route_avoided(f.e, f.r, &retry), 1); /* PROBING: renewed */
	CU_ASSERT_EQUAL(retry, 0u);
	CU_ASSERT_EQUAL(mcc_engine_route_generation(f.r), 2u);
	CU_ASSERT_EQUAL(mcc_engine_route_avoided(f.e, f.r, &retry), 0); /* asked this epoch */
	CU_ASSERT_EQUAL(retry, EPOCH_NS);
	CU_ASSERT_TRUE(lt_log_has(&logbuf, "cooldown over, generation 2 for the policy's probe"));
	admits = avoids = 0;
	worker_rounds(f.e, f.lane, f.r, 1, 50, &admits, &avoids);
	CU_ASSERT_EQUAL(admits, 50u); /* the probes, then the recovered route */
	CU_ASSERT_EQUAL(avoids, 0u);
	CU_ASSERT_EQUAL(f.ops->domain_stats(mcc_engine_ctx(f.e), MCC_DOMAIN_ROUTE,
	                                    mcc_engine_route_cc(f.r), &st), 0);
	CU_ASSERT_EQUAL(st.state, MCC_PATH_HEALTHY);
	CU_ASSERT_EQUAL(mcc_engine_route_generation(f.r), 2u); /* once per quarantine */
	/* quarantined again: the worker that follows the header alone, from the
	 * first AVOID, recovers within the cooldown and a few epochs */
	for (int i = 0; i < 3; i++) {
		struct mcc_permit_v1 p = MCC_PERMIT_INIT;
		CU_ASSERT_EQUAL(
		        f.ops->try_acquire(f.lane, mcc_engine_route_cc(f.r), 4096, 2, NULL, &p),
		        MCC_ADMIT);
		struct mcc_completion_v1 wc = {sizeof(wc), 12, 0, 2, 0, 0, 0, 1, 0};
		f.ops->on_completion(f.lane, &p, &wc);
	}
	atomic_fetch_add(&fake_ns, 2 * MS);
	mcc_engine_tick_if_due(f.e, mcc_engine_now(f.e));
	admits = avoids = 0;
	worker_rounds(f.e, f.lane, f.r, 1, 400, &admits, &avoids);
	/* the cooldown (a flap within flap_window: 2 s, 200 rounds), then a
	 * round or two until the tick that starts PROBING */
	CU_ASSERT_TRUE(avoids >= 200u && avoids <= 203u);
	CU_ASSERT_TRUE(admits >= 400u - avoids - 2u);
	CU_ASSERT_EQUAL(mcc_engine_route_generation(f.r), 3u);
	CU_ASSERT_EQUAL(f.ops->domain_stats(mcc_engine_ctx(f.e), MCC_DOMAIN_ROUTE,
	                                    mcc_engine_route_cc(f.r), &st), 0);
	CU_ASSERT_EQUAL(st.state, MCC_PATH_HEALTHY);
	CU_ASSERT_EQUAL(st.quarantines, 2u);
	/* misuse */
	CU_ASSERT_EQUAL(mcc_engine_route_avoided(f.e, NULL, &retry), -EINVAL);
	CU_ASSERT_EQUAL(mcc_engine_lane_close(f.e, f.lr), 0);
	CU_ASSERT_EQUAL(mcc_engine_route_close(f.e, KEY_A, strlen(KEY_A)), 0);
	CU_ASSERT_EQUAL(mcc_engine_route_avoided(f.e, f.r, &retry), -ESTALE);
	CU_ASSERT_EQUAL(mcc_engine_route_put(f.r), 0);
	CU_ASSERT_EQUAL(mcc_engine_route_avoided(f.e, f.r, &retry), -EBADF);
	f.ops->device_close(mcc_engine_ctx(f.e), f.dev);
	mcc_engine_close(f.e);
}

/* Past the max_lanes the instance was loaded with: a clear message. */
static void test_lanes_past_max_lanes(void)
{
	lt_log_fini(&logbuf);
	lt_log_init(&logbuf);
	struct mcc_loader_opts lo;
	lt_opts(&lo, &logbuf, ini_enforce);
	lo.module_dir = lt_module_dir();
	lo.max_lanes = 2;
	struct mcc_engine_opts o = {sizeof(o), MCC_ENGINE_TICK_POLL, &lo, fake_clock, NULL};
	mcc_engine *e = NULL;
	CU_ASSERT_EQUAL_FATAL(mcc_engine_open(&o, &e), 0);
	mcc_lane_ref r[3];
	mcc_lane *l;
	CU_ASSERT_EQUAL(mcc_engine_lane_open(e, MCC_LANE_POST, &r[0], &l), 0);
	CU_ASSERT_EQUAL(mcc_engine_lane_open(e, MCC_LANE_POST, &r[1], &l), 0);
	CU_ASSERT_EQUAL(mcc_engine_lane_open(e, MCC_LANE_POST, &r[2], &l), -ENOSPC);
	CU_ASSERT_PTR_NULL(l);
	CU_ASSERT_TRUE(lt_log_has(&logbuf, "lane_open: lane id 2 would exceed max_lanes 2 of the "
	                                   "policy instance"));
	CU_ASSERT_EQUAL(mcc_engine_lane_close(e, r[0]), 0);
	CU_ASSERT_EQUAL(mcc_engine_lane_open(e, MCC_LANE_POST, &r[2], &l), 0); /* room again */
	CU_ASSERT_EQUAL(mcc_engine_lane_close(e, r[1]), 0);
	CU_ASSERT_EQUAL(mcc_engine_lane_close(e, r[2]), 0);
	/* the core says the same to a host without the SDK */
	struct mcc_lane_desc_v1 ld = {sizeof(ld), 5, MCC_LANE_POST, 0};
	CU_ASSERT_EQUAL(mcc_engine_ops(e)->lane_open(mcc_engine_ctx(e), &ld, &l), -EINVAL);
	CU_ASSERT_TRUE(lt_log_has(&logbuf, "lane id 5 refused: this instance holds lanes 0..1"));
	mcc_engine_close(e);
}

/* ------------------------------------------------------------------- async */

static struct mcc_engine_async qp_event_dev(void)
{
	struct mcc_engine_async ev = {sizeof(ev), 10 /* IBV_EVENT_PORT_ERR */, MCC_ENGINE_EL_DEVICE,
	                              1, 0, 0, 0};
	return ev;
}

static struct mcc_engine_async qp_event(uint32_t qpn)
{
	struct mcc_engine_async ev = {sizeof(ev), 1 /* IBV_EVENT_QP_FATAL */, MCC_ENGINE_EL_QP,
	                              0, qpn, 0, 0};
	return ev;
}

struct churn {
	mcc_engine *e;
	mcc_device *dev;
	_Atomic int stop;
	_Atomic uint64_t delivered, dropped;
};

static void *async_reader(void *arg)
{
	struct churn *c = arg;
	struct mcc_engine_async ev = qp_event(77);
	while (!atomic_load(&c->stop)) {
		int rc = mcc_engine_async_event(c->e, c->dev, &ev);
		CU_ASSERT_TRUE(rc == 1 || rc == -ENOENT);
		atomic_fetch_add(rc == 1 ? &c->delivered : &c->dropped, 1);
	}
	return NULL;
}

static void test_async_torn_down(void)
{
	mcc_engine *e = open_engine(1, MCC_ENGINE_TICK_POLL);
	mcc_device *dev = open_device(e);
	mcc_engine_route *r;
	CU_ASSERT_EQUAL_FATAL(mcc_engine_route_open(e, dev, KEY_A, strlen(KEY_A), 1, NULL, &r), 0);
	CU_ASSERT_EQUAL(mcc_engine_qp_add(e, r, 77), 0);
	CU_ASSERT_EQUAL(mcc_engine_qp_add(e, r, 77), -EEXIST);
	struct mcc_engine_async ev = qp_event(77);
	CU_ASSERT_EQUAL(mcc_engine_async_event(e, dev, &ev), 1);
	/* torn down (the engine acks afterwards): a no-op */
	CU_ASSERT_EQUAL(mcc_engine_qp_remove(e, dev, 77), 0);
	CU_ASSERT_EQUAL(mcc_engine_async_event(e, dev, &ev), -ENOENT);
	CU_ASSERT_EQUAL(mcc_engine_qp_remove(e, dev, 77), -ENOENT);
	ev = qp_event(78); /* never registered */
	CU_ASSERT_EQUAL(mcc_engine_async_event(e, dev, &ev), -ENOENT);
	struct mcc_engine_stats s = stats_of(e);
	CU_ASSERT_EQUAL(s.async_delivered, 1u);
	CU_ASSERT_EQUAL(s.async_dropped, 2u);
	/* CQ ids for engines that cannot name them; port events */
	uint32_t cq = mcc_engine_cq_id(e, dev, 0xabc0);
	CU_ASSERT_NOT_EQUAL(cq, 0u);
	CU_ASSERT_EQUAL(mcc_engine_cq_id(e, dev, 0xabc0), cq);
	CU_ASSERT_NOT_EQUAL(mcc_engine_cq_id(e, dev, 0xabc8), cq);
	struct mcc_engine_async cev = {sizeof(cev), 0 /* CQ_ERR */, MCC_ENGINE_EL_CQ, 0, 0, 0, 0xabc0};
	CU_ASSERT_EQUAL(mcc_engine_async_event(e, dev, &cev), 1);
	CU_ASSERT_EQUAL(mcc_engine_cq_remove(e, dev, 0xabc0), 0);
	CU_ASSERT_EQUAL(mcc_engine_async_event(e, dev, &cev), -ENOENT);
	struct mcc_engine_async pev = {sizeof(pev), 9 /* PORT_ACTIVE */, MCC_ENGINE_EL_PORT, 1, 0, 0, 0};
	CU_ASSERT_EQUAL(mcc_engine_async_event(e, dev, &pev), 1);
	pev.element = 9;
	CU_ASSERT_EQUAL(mcc_engine_async_event(e, dev, &pev), -EINVAL);

	/* concurrent teardown: events race QP removal, route close and reopen;
	 * ASan/TSan would catch a use-after-free or a race */
	struct churn c = {e, dev, 0, 0, 0};
	pthread_t t;
	pthread_create(&t, NULL, async_reader, &c);
	for (int i = 0; i < 2000; i++) {
		mcc_engine_route *q;
		CU_ASSERT_TRUE(mcc_engine_route_open(e, dev, KEY_B, strlen(KEY_B), (uint64_t)i, NULL,
		                                     &q) >= 0);
		CU_ASSERT_EQUAL(mcc_engine_qp_add(e, q, 77), 0);
		if (i % 2)
			CU_ASSERT_EQUAL(mcc_engine_qp_remove(e, dev, 77), 0);
		CU_ASSERT_EQUAL(mcc_engine_route_close(e, KEY_B, strlen(KEY_B)), 0); /* drops its QPs */
		mcc_engine_route_put(q);
	}
	atomic_store(&c.stop, 1);
	pthread_join(t, NULL);
	CU_ASSERT_EQUAL(stats_of(e).async_delivered + stats_of(e).async_dropped,
	                3u + 3u + atomic_load(&c.delivered) + atomic_load(&c.dropped));
	mcc_engine_route_put(r);
	CU_ASSERT_EQUAL(mcc_engine_route_close(e, KEY_A, strlen(KEY_A)), 0);
	mcc_engine_ops(e)->device_close(mcc_engine_ctx(e), dev);
	mcc_engine_close(e);
}

/* ----------------------------------------------------------- DEFER parking */

struct parker {
	mcc_engine *e;
	mcc_route *route;
	uint32_t gen;
	int decision, refused, wait_rc;
	atomic_int done; /* the worker returned (parked or not) */
};

static void *park_worker(void *arg)
{
	struct parker *w = arg;
	const struct mcc_policy_v1 *ops = mcc_engine_ops(w->e);
	mcc_lane_ref lr;
	mcc_lane *lane;
	if (mcc_engine_lane_open(w->e, MCC_LANE_POST, &lr, &lane) != 0) {
		atomic_store(&w->done, 1);
		return NULL;
	}
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	for (;;) {
		uint32_t seq = mcc_engine_room_seq(w->e);
		w->decision = ops->try_acquire(lane, w->route, 4096, w->gen, NULL, &p);
		if (w->decision == MCC_ADMIT)
			break;
		w->refused++; /* one call per refusal, then park */
		w->wait_rc = mcc_engine_room_wait(w->e, seq, 20000 * MS);
		if (w->wait_rc == -ETIMEDOUT)
			break;
	}
	if (w->decision == MCC_ADMIT)
		ops->release(lane, &p, p.bytes, MCC_REL_NOT_POSTED);
	mcc_engine_lane_close(w->e, lr);
	atomic_store(&w->done, 1);
	return NULL;
}

static void test_defer_parking(void)
{
	atomic_store(&fake_ns, 20000 * MS);
	struct one f = one_open();
	/* fill the window: one slice larger than any window */
	struct mcc_permit_v1 big = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL_FATAL(
	        f.ops->try_acquire(f.lane, mcc_engine_route_cc(f.r), 1ull << 40, 1, NULL, &big),
	        MCC_ADMIT);
	uint64_t waits0 = stats_of(f.e).room_waits;
	struct parker w = {f.e, mcc_engine_route_cc(f.r), 1, -1, 0, 1, 0};
	pthread_t t;
	pthread_create(&t, NULL, park_worker, &w);
	/* wait until the worker parks (or is about to: the sequence protocol
	 * makes the order irrelevant), or returned without parking (a failure
	 * the checks below report, not a hang) */
	while (stats_of(f.e).room_waits == waits0 && !atomic_load(&w.done))
		sched_yield();
	/* the completion path: settle, then notify */
	struct mcc_completion_v1 wc = {sizeof(wc), 0, 0, 1, 0, 0, 0, 0, 0};
	f.ops->on_completion(f.lane, &big, &wc);
	mcc_engine_room_notify(f.e);
	pthread_join(t, NULL);
	CU_ASSERT_EQUAL(w.decision, MCC_ADMIT);
	CU_ASSERT_EQUAL(w.wait_rc, 0);
	CU_ASSERT_EQUAL(w.refused, 1); /* one refused call, not a spin */
	CU_ASSERT_TRUE(stats_of(f.e).room_wakes >= 1);
	CU_ASSERT_EQUAL(mcc_engine_lane_close(f.e, f.lr), 0);
	mcc_engine_route_put(f.r);
	CU_ASSERT_EQUAL(mcc_engine_route_close(f.e, KEY_A, strlen(KEY_A)), 0);
	f.ops->device_close(mcc_engine_ctx(f.e), f.dev);
	mcc_engine_close(f.e);
}

/* mcc_engine_try_acquire_qos: with [engine] qos = on the class reaches the
 * policy (a LOW slice stops short of the reserve HIGH's call opened); with
 * qos = off it is try_acquire and the class is not looked at. Fresh domains
 * hold two 64 KiB slices (min_window_bytes). */
static void qos_case(const char *ini, int qos)
{
	mcc_engine *e = engine_with(ini, MCC_ENGINE_TICK_POLL);
	CU_ASSERT_EQUAL(mcc_engine_qos(e), qos);
	const struct mcc_policy_v1 *ops = mcc_engine_ops(e);
	mcc_device *dev = open_device(e);
	mcc_engine_route *r;
	CU_ASSERT_EQUAL_FATAL(mcc_engine_route_open(e, dev, KEY_A, strlen(KEY_A), 1, NULL, &r), 0);
	mcc_route *cc = mcc_engine_route_cc(r);
	mcc_lane_ref lr;
	mcc_lane *lane;
	CU_ASSERT_EQUAL_FATAL(mcc_engine_lane_open(e, MCC_LANE_POST_POLL, &lr, &lane), 0);
	struct mcc_permit_v1 hi = MCC_PERMIT_INIT, a = MCC_PERMIT_INIT, b = MCC_PERMIT_INIT,
	                     x = MCC_PERMIT_INIT;
	struct mcc_completion_v1 wc = {sizeof(wc), 0, 0, 1, 0, 0, 0, 0, 0};
	CU_ASSERT_EQUAL(mcc_engine_try_acquire_qos(e, lane, cc, 65536, 1, NULL, MCC_QOS_HIGH, &hi),
	                MCC_ADMIT);
	ops->on_completion(lane, &hi, &wc);
	CU_ASSERT_EQUAL(mcc_engine_try_acquire_qos(e, lane, cc, 65536, 1, NULL, MCC_QOS_LOW, &a),
	                MCC_ADMIT);
	CU_ASSERT_EQUAL(mcc_engine_try_acquire_qos(e, lane, cc, 65536, 1, NULL, MCC_QOS_LOW, &b),
	                qos ? MCC_DEFER : MCC_ADMIT);
	CU_ASSERT_EQUAL(mcc_engine_try_acquire_qos(e, lane, cc, 1, 1, NULL, MCC_QOS_CLASS_COUNT_, &x),
	                qos ? -EINVAL : MCC_DEFER); /* off: the window decides */
	ops->on_completion(lane, &a, &wc);
	if (b.flags & MCC_PERMIT_F_LIVE)
		ops->on_completion(lane, &b, &wc);
	CU_ASSERT_EQUAL(mcc_engine_lane_close(e, lr), 0);
	mcc_engine_route_put(r);
	CU_ASSERT_EQUAL(mcc_engine_route_close(e, KEY_A, strlen(KEY_A)), 0);
	ops->device_close(mcc_engine_ctx(e), dev);
	mcc_engine_close(e);
}

static void test_qos_acquire(void)
{
	atomic_store(&fake_ns, 30000 * MS);
	qos_case(ini_qos, 1);
	qos_case(ini_enforce, 0);
}

static void test_room_no_syscall(void)
{
	mcc_engine *e = open_engine(0, MCC_ENGINE_TICK_POLL);
	struct mcc_engine_stats s0 = stats_of(e);
	uint32_t seq0 = mcc_engine_room_seq(e);
	for (int i = 0; i < 10000; i++)
		mcc_engine_room_notify(e);
	CU_ASSERT_EQUAL(mcc_engine_room_seq(e) - seq0, 10000u);
	struct mcc_engine_stats s1 = stats_of(e);
	CU_ASSERT_EQUAL(s1.room_wakes, s0.room_wakes); /* nobody parked: no futex wake */
	CU_ASSERT_EQUAL(s1.room_waits, s0.room_waits);
	/* a stale sequence returns at once; a zero timeout never sleeps */
	CU_ASSERT_EQUAL(mcc_engine_room_wait(e, seq0, 20000 * MS), 0);
	CU_ASSERT_EQUAL(mcc_engine_room_wait(e, mcc_engine_room_seq(e), 0), -ETIMEDOUT);
	CU_ASSERT_EQUAL(stats_of(e).room_waits, s0.room_waits);
	/* AVOID without an alternate reads as DEFER */
	CU_ASSERT_EQUAL(MCC_ENGINE_DECISION_NO_ALTERNATE(MCC_AVOID), MCC_DEFER);
	CU_ASSERT_EQUAL(MCC_ENGINE_DECISION_NO_ALTERNATE(MCC_ADMIT), MCC_ADMIT);
	mcc_engine_close(e);
}

/* ------------------------------------------------------------------- clock */

static void test_clock_backwards(void)
{
	const uint64_t t0 = 1700000000ull * 1000000000ull; /* a CLOCK_REALTIME-like value */
	atomic_store(&fake_ns, t0);
	mcc_engine *e = open_engine(1, MCC_ENGINE_TICK_POLL);
	struct mcc_engine_stats s0 = stats_of(e);
	CU_ASSERT_EQUAL(mcc_engine_now(e), t0);
	atomic_store(&fake_ns, t0 - 1000 * MS); /* an NTP step back of 1 s */
	CU_ASSERT_EQUAL(mcc_engine_now(e), t0);
	CU_ASSERT_EQUAL(stats_of(e).clock_steps_back, s0.clock_steps_back + 1);
	atomic_store(&fake_ns, t0 - 999 * MS); /* time goes on from t0 */
	CU_ASSERT_EQUAL(mcc_engine_now(e), t0 + 1 * MS);
	atomic_store(&fake_ns, t0 - 999 * MS - 10000); /* 10 us back: held */
	CU_ASSERT_EQUAL(mcc_engine_now(e), t0 + 1 * MS);
	CU_ASSERT_EQUAL(stats_of(e).clock_steps_back, s0.clock_steps_back + 1);
	CU_ASSERT_TRUE(stats_of(e).clock_held > s0.clock_held);
	/* the policy's clock is the same: a tick at the SDK time is due once */
	CU_ASSERT_EQUAL(mcc_engine_tick_if_due(e, mcc_engine_now(e)), 1);
	atomic_store(&fake_ns, t0 - 5000 * MS);
	CU_ASSERT_EQUAL(mcc_engine_tick_if_due(e, mcc_engine_now(e)), 0);
	mcc_engine_close(e);
}

/* ---------------------------------------------------- batches, set-up, misc */

static void test_batch_freed_twice(void)
{
	mcc_engine *e = open_engine(1, MCC_ENGINE_TICK_POLL);
	CU_ASSERT_EQUAL(mcc_engine_batch_begin(e, 0x7f00), 0);
	CU_ASSERT_EQUAL(mcc_engine_batch_free(e, 0x7f00), 0);
	CU_ASSERT_EQUAL(mcc_engine_batch_free(e, 0x7f00), -ENOENT);
	CU_ASSERT_TRUE(lt_log_has(&logbuf, "freed twice or never begun"));
	CU_ASSERT_EQUAL(mcc_engine_batch_free(e, 0x1234), -ENOENT);
	/* a recycled id whose free was missed */
	CU_ASSERT_EQUAL(mcc_engine_batch_begin(e, 0x8000), 0);
	CU_ASSERT_EQUAL(mcc_engine_batch_begin(e, 0x8000), -EEXIST);
	CU_ASSERT_EQUAL(mcc_engine_batch_free(e, 0x8000), 0); /* live again */
	struct mcc_engine_stats s = stats_of(e);
	CU_ASSERT_EQUAL(s.batch_double_free, 2u);
	CU_ASSERT_EQUAL(s.batch_reused, 1u);
	CU_ASSERT_EQUAL(mcc_engine_batch_begin(e, 0x9000), 0); /* dropped by close */
	mcc_engine_close(e);
}

static void test_setup_failed(void)
{
	mcc_engine *e = open_engine(1, MCC_ENGINE_TICK_POLL);
	mcc_device *dev = open_device(e);
	mcc_engine_route *r;
	CU_ASSERT_EQUAL_FATAL(mcc_engine_route_open(e, dev, KEY_A, strlen(KEY_A), 1, NULL, &r), 0);
	struct mcc_task_ref_v1 task = {1, 2, 0, 0};
	CU_ASSERT_EQUAL(mcc_engine_setup_failed(e, NULL, r, MCC_ENGINE_SETUP_CONNECT, -ETIMEDOUT,
	                                        &task), MCC_SIG_CM_EVENT);
	CU_ASSERT_EQUAL(mcc_engine_setup_failed(e, dev, r, MCC_ENGINE_SETUP_HANDSHAKE, EPROTO, NULL),
	                MCC_SIG_CONTROL_RPC_FAILED);
	CU_ASSERT_EQUAL(mcc_engine_setup_failed(e, dev, NULL, MCC_ENGINE_SETUP_SEGMENT_DESC, -EIO,
	                                        &task), MCC_SIG_SEGMENT_RPC_FAILED);
	CU_ASSERT_EQUAL(mcc_engine_setup_failed(e, dev, r, 99, -EIO, NULL), -EINVAL);
	mcc_engine_route_put(r);
	CU_ASSERT_EQUAL(mcc_engine_route_close(e, KEY_A, strlen(KEY_A)), 0);
	mcc_engine_ops(e)->device_close(mcc_engine_ctx(e), dev);
	mcc_engine_close(e);
	/* controller off: nothing is subscribed, nothing delivered */
	e = open_engine(0, MCC_ENGINE_TICK_POLL);
	CU_ASSERT_EQUAL(mcc_engine_setup_failed(e, NULL, NULL, MCC_ENGINE_SETUP_CONNECT, -ETIMEDOUT,
	                                        NULL), 0);
	mcc_engine_close(e);
}

static void test_open_bad_opts(void)
{
	mcc_engine *e = (mcc_engine *)1;
	struct mcc_engine_opts o;
	memset(&o, 0, sizeof(o));
	CU_ASSERT_EQUAL(mcc_engine_open(&o, &e), -EINVAL); /* struct_size 0 */
	CU_ASSERT_PTR_NULL(e);
	o.struct_size = sizeof(o);
	o.tick = 7;
	CU_ASSERT_EQUAL(mcc_engine_open(&o, &e), -EINVAL);
	CU_ASSERT_EQUAL(mcc_engine_open(&o, NULL), -EINVAL);
	mcc_engine_close(NULL);
	/* a failed policy load still yields a usable engine (controller off) */
	struct mcc_loader_opts lo;
	lt_opts(&lo, &logbuf, "/nonexistent/mcc.ini");
	o.tick = MCC_ENGINE_TICK_POLL;
	o.loader = &lo;
	int rc = mcc_engine_open(&o, &e);
	CU_ASSERT_TRUE(rc < 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	CU_ASSERT_EQUAL(mcc_instance_mode(mcc_engine_instance(e)), MCC_MODE_OFF);
	mcc_lane_ref lr;
	mcc_lane *lane;
	CU_ASSERT_EQUAL(mcc_engine_lane_open(e, MCC_LANE_POST, &lr, &lane), 0);
	CU_ASSERT_EQUAL(mcc_engine_lane_close(e, lr), 0);
	mcc_engine_close(e);
}

/* mcc_engine_device_flags over a fake sysfs: rxe_t is a software transport
 * (class/infiniband/rxe_t, no "device" link), mlx5_h a PCI HCA (with one).
 * Names that are not plain file names never reach outside class/infiniband
 * and never make a device software; nor does a name the kernel does not
 * know, or one longer than any path. */
static void test_device_flags(void)
{
	static const char *const dirs[] = { "class", "class/infiniband", "class/infiniband/rxe_t",
		                            "class/infiniband/mlx5_h",
		                            "class/infiniband/mlx5_h/device" };
	const size_t ndirs = sizeof(dirs) / sizeof(dirs[0]);
	char root[64] = "/tmp/mcc-sysfs-XXXXXX", p[128];
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(root));
	for (size_t i = 0; i < ndirs; i++) {
		snprintf(p, sizeof(p), "%s/%s", root, dirs[i]);
		CU_ASSERT_EQUAL_FATAL(mkdir(p, 0700), 0);
	}
	char longname[700];
	memset(longname, 'r', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	const char *hw[] = { NULL, "", ".", "..", "../infiniband/rxe_t", "rxe_t/", "/rxe_t",
		             longname, "rxe_unknown", "mlx5_h" };
	for (size_t i = 0; i < sizeof(hw) / sizeof(hw[0]); i++)
		CU_ASSERT_EQUAL(mcc_engine_device_flags(root, hw[i]), 0);
	CU_ASSERT_EQUAL(mcc_engine_device_flags(root, "rxe_t"), MCC_DEVICE_F_SOFTWARE);
	for (size_t i = ndirs; i-- > 0;) {
		snprintf(p, sizeof(p), "%s/%s", root, dirs[i]);
		CU_ASSERT_EQUAL(rmdir(p), 0);
	}
	CU_ASSERT_EQUAL(rmdir(root), 0);
}

MCC_CU_SUITE(t_init_sdk_tests, "sdk", suite_init, suite_clean,
             test_lanes_growth,
             test_lanes_exhausted,
             test_lane_after_close,
             test_policy_lane_after_close,
             test_engine_after_close,
             test_tick_once_per_epoch,
             test_tick_thread,
             test_no_tick_thread_when_off,
             test_route_generations,
             test_route_reference_rule,
             test_probe_after_cooldown,
             test_lanes_past_max_lanes,
             test_async_torn_down,
             test_defer_parking,
             test_qos_acquire,
             test_room_no_syscall,
             test_clock_backwards,
             test_batch_freed_twice,
             test_setup_failed,
             test_open_bad_opts,
             test_device_flags)

MCC_CU_MAIN(t_init_sdk_tests)
