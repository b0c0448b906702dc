/* SPDX-License-Identifier: MIT */
/*
 * test_concurrency.c - seeded randomized sequences of every operation
 * (acquire, partial release, completion with any status and current or
 * stale generation, async events, signals, ticks, queries, stats) across
 * 4 threads, each with its own lane, no sleeps; and the same generator on
 * one thread, fully deterministic.
 *
 * Invariants checked:
 *   - at every admission, per domain: sum of live permit bytes (a shadow
 *     counter incremented after ADMIT, decremented before settling) <=
 *     max(window read before the call, bytes) + slack. Windows are
 *     configured never to grow in the threaded run (low_pressure_epochs
 *     huge), so the window at the reservation is <= the one read before.
 *     slack = (threads - 1) * max slice: tick's stale-credit snapshot can
 *     count a slice a lane spends from credit while the epoch moves (see
 *     modules/core/README.md); 0 in the single-threaded run;
 *   - in-flight never negative; all zero at the end (after lane_close);
 *   - double_release counts exactly the injected double settlements.
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_driver.h"
#include "harness.h"

#define NDEV 2
#define NROUTE 4
#define NPERMIT 48
#define MAX_SLICE (64 * KiB)

struct ct {
	const struct mcc_policy_v1 *ops;
	void *ctx;
	struct mcc_host_v1 host;
	_Atomic uint64_t clock;
	pthread_mutex_t tick_lock; /* tick is never concurrent with itself */
	mcc_device *dev[NDEV];
	mcc_route *route[NROUTE];
	int dev_of[NROUTE];
	_Atomic uint32_t gen[NROUTE];
	_Atomic int64_t shadow_r[NROUTE];
	_Atomic int64_t shadow_d[NDEV];
	_Atomic uint64_t injected;
	_Atomic uint64_t bound_violations;
	uint64_t slack;
	bool allow_growth;
};

static uint64_t ct_clock(void *arg)
{
	return atomic_load(&((struct ct *)arg)->clock);
}

/* [module.aimd] credit_min_admits = 1: credit mode as soon as a domain is
 * HEALTHY with a large enough window, so the threads exercise it */
static const char *ct_module_get(const struct mcc_config_v1 *cfg, const char *key)
{
	(void)cfg;
	return strcmp(key, "credit_min_admits") == 0 ? "1" : NULL;
}

static uint64_t rng(uint64_t *s)
{
	/* splitmix64 */
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static void ct_open(struct ct *c, const struct mcc_policy_v1 *ops, bool growth, uint64_t slack)
{
	memset(c, 0, sizeof(*c));
	c->ops = ops;
	c->allow_growth = growth;
	c->slack = slack;
	atomic_init(&c->clock, 1000000000ull);
	pthread_mutex_init(&c->tick_lock, NULL);
	c->host = (struct mcc_host_v1){ MCC_POLICY_ABI_V1, sizeof(c->host), "test", 0, ct_clock, c,
		                        th_log_quiet, c, 4, 0 };
	struct mcc_config_v1 cfg;
	th_cfg_defaults(&cfg);
	cfg.max_window_bytes = 4 * MiB; /* credit mode down to 1 MiB (4 x 4 lanes x 64 KiB) */
	cfg.min_window_bytes = 128 * KiB;
	cfg.module_get = ct_module_get;
	cfg.evidence_tasks = 64;
	cfg.recorder_entries = 64;
	if (!growth)
		cfg.low_pressure_epochs = 1000000000u;
	CU_ASSERT_EQUAL_FATAL(ops->init(&c->host, &cfg, NULL, &c->ctx), 0);
	for (int i = 0; i < NDEV; i++) {
		struct mcc_device_desc_v1 d = { sizeof(d), (uint32_t)i, "mlx5_c", 2, 0, 0, 0 };
		CU_ASSERT_EQUAL_FATAL(ops->device_open(c->ctx, &d, &c->dev[i]), 0);
	}
	for (int i = 0; i < NROUTE; i++) {
		c->dev_of[i] = i % NDEV;
		struct mcc_route_desc_v1 r = { sizeof(r), 1 + (uint32_t)(i / NDEV), (uint32_t)i, 1,
			                       (uint64_t)i, "peer", 7, 0 };
		CU_ASSERT_EQUAL_FATAL(ops->route_open(c->ctx, c->dev[c->dev_of[i]], &r, &c->route[i]),
		                      0);
		atomic_init(&c->gen[i], 1);
	}
}

static struct mcc_domain_stats_v1 ct_stats(struct ct *c, int kind, const void *dom)
{
	struct mcc_domain_stats_v1 s;
	memset(&s, 0, sizeof(s));
	s.struct_size = sizeof(s);
	c->ops->domain_stats(c->ctx, kind, dom, &s);
	return s;
}

static void ct_tick(struct ct *c, uint64_t advance_ns)
{
	pthread_mutex_lock(&c->tick_lock);
	uint64_t now = atomic_fetch_add(&c->clock, advance_ns) + advance_ns;
	c->ops->tick(c->ctx, now);
	pthread_mutex_unlock(&c->tick_lock);
}

/* Before the run, on one thread: windows start at min_window_bytes and slow
 * start (issue 11); clean epochs that fill every route's window bring all
 * domains to max_window_bytes, so the run starts from windows that can be
 * cut and (low_pressure_epochs huge) never grow in the threaded run. The
 * lane's credit goes back at lane_close. */
static void ct_warm(struct ct *c)
{
	static struct mcc_permit_v1 p[NROUTE][64];
	mcc_lane *lane;
	struct mcc_lane_desc_v1 ld = { sizeof(ld), 0, MCC_LANE_POST_POLL, 0 };
	CU_ASSERT_EQUAL_FATAL(c->ops->lane_open(c->ctx, &ld, &lane), 0);
	for (int e = 0; e < 16; e++) {
		int n[NROUTE] = { 0 };
		bool full[NROUTE] = { false };
		for (int i = 0; i < 64; i++) /* round robin: routes share devices */
			for (int k = 0; k < NROUTE; k++) {
				if (full[k])
					continue;
				p[k][n[k]] = (struct mcc_permit_v1)MCC_PERMIT_INIT;
				if (c->ops->try_acquire(lane, c->route[k], MAX_SLICE, 1, NULL,
				                        &p[k][n[k]]) == MCC_ADMIT)
					n[k]++;
				else
					full[k] = true;
			}
		for (int k = 0; k < NROUTE; k++)
			for (int i = 0; i < n[k]; i++) {
				struct mcc_completion_v1 wc = { sizeof(wc), IBV_WC_SUCCESS, 0, 1, 0, 0, 0, 0, 0 };
				c->ops->on_completion(lane, &p[k][i], &wc);
			}
		ct_tick(c, 1000000);
	}
	c->ops->lane_close(c->ctx, lane);
	ct_tick(c, 1000000);
	for (int k = 0; k < NROUTE; k++) {
		struct mcc_domain_stats_v1 r = ct_stats(c, MCC_DOMAIN_ROUTE, c->route[k]);
		CU_ASSERT_EQUAL(r.window_bytes, 4 * MiB);
		CU_ASSERT_EQUAL(r.inflight_bytes, 0);
	}
}

struct slot {
	struct mcc_permit_v1 p;
	int route;
	bool used;  /* holds a permit that was admitted */
	bool dead;  /* settled: a later settle is an injected double */
};

struct worker {
	struct ct *c;
	uint32_t id;
	uint64_t seed;
	int nops;
	mcc_lane *lane;
	struct slot s[NPERMIT];
	uint64_t digest; /* deterministic run: what the sequence observed */
};

static void mix(struct worker *w, uint64_t v)
{
	w->digest = (w->digest ^ v) * 0x100000001B3ull;
}

static void unshadow(struct worker *w, struct slot *sl, uint64_t n)
{
	atomic_fetch_sub(&w->c->shadow_r[sl->route], (int64_t)n);
	atomic_fetch_sub(&w->c->shadow_d[w->c->dev_of[sl->route]], (int64_t)n);
}

static void op_acquire(struct worker *w, uint64_t *s)
{
	struct ct *c = w->c;
	struct slot *sl = NULL;
	for (int i = 0; i < NPERMIT && !sl; i++)
		if (!w->s[i].used || w->s[i].dead)
			sl = &w->s[i];
	if (!sl)
		return;
	int k = (int)(rng(s) % NROUTE), dv = c->dev_of[k];
	uint64_t bytes = (1 + rng(s) % 16) * 4 * KiB;
	uint32_t gen = atomic_load(&c->gen[k]);
	if (gen > 1 && rng(s) % 10 == 0)
		gen--; /* a stale endpoint */
	struct mcc_task_ref_v1 t = { w->id + 1, rng(s) % 16, (uint32_t)(rng(s) % 2), 0 };
	uint64_t wr = ct_stats(c, MCC_DOMAIN_ROUTE, c->route[k]).window_bytes;
	uint64_t wd = ct_stats(c, MCC_DOMAIN_DEVICE, c->dev[dv]).window_bytes;
	sl->p = (struct mcc_permit_v1)MCC_PERMIT_INIT;
	int rc = c->ops->try_acquire(w->lane, c->route[k], bytes, gen, &t, &sl->p);
	mix(w, (uint64_t)rc);
	CU_ASSERT(rc == MCC_ADMIT || rc == MCC_DEFER || rc == MCC_AVOID);
	if (rc != MCC_ADMIT) {
		sl->used = false; /* nothing reserved, nothing to settle */
		return;
	}
	sl->used = true;
	sl->dead = false;
	sl->route = k;
	int64_t sr = atomic_fetch_add(&c->shadow_r[k], (int64_t)bytes) + (int64_t)bytes;
	int64_t sd = atomic_fetch_add(&c->shadow_d[dv], (int64_t)bytes) + (int64_t)bytes;
	uint64_t br = (wr > bytes ? wr : bytes) + c->slack, bd = (wd > bytes ? wd : bytes) + c->slack;
	if ((uint64_t)sr > br || (uint64_t)sd > bd)
		atomic_fetch_add(&c->bound_violations, 1);
}

static struct slot *pick_live(struct worker *w, uint64_t *s)
{
	int start = (int)(rng(s) % NPERMIT);
	for (int i = 0; i < NPERMIT; i++) {
		struct slot *sl = &w->s[(start + i) % NPERMIT];
		if (sl->used && !sl->dead)
			return sl;
	}
	return NULL;
}

static void settle_done(struct slot *sl)
{
	if (!(sl->p.flags & MCC_PERMIT_F_LIVE))
		sl->dead = true;
}

static void op_complete(struct worker *w, uint64_t *s)
{
	static const int32_t st[] = { IBV_WC_SUCCESS,         IBV_WC_SUCCESS,     IBV_WC_SUCCESS,
		                      IBV_WC_SUCCESS,         IBV_WC_SUCCESS,     IBV_WC_SUCCESS,
		                      IBV_WC_RETRY_EXC_ERR,   IBV_WC_RNR_RETRY_EXC_ERR,
		                      IBV_WC_LOC_LEN_ERR,     IBV_WC_REM_ACCESS_ERR,
		                      IBV_WC_WR_FLUSH_ERR,    IBV_WC_GENERAL_ERR, 999 };
	struct slot *sl = pick_live(w, s);
	if (!sl)
		return;
	uint64_t n = rng(s) % 4 ? sl->p.bytes : (sl->p.bytes + 1) / 2;
	struct mcc_completion_v1 wc = { sizeof(wc), st[rng(s) % (sizeof(st) / sizeof(st[0]))],
		                        (uint32_t)(rng(s) % 3), sl->p.generation, n, 0, 0, 0, 0 };
	unshadow(w, sl, n);
	w->c->ops->on_completion(w->lane, &sl->p, &wc);
	settle_done(sl);
}

static void op_release(struct worker *w, uint64_t *s)
{
	struct slot *sl = pick_live(w, s);
	if (!sl)
		return;
	uint64_t n = 1 + rng(s) % sl->p.bytes;
	unshadow(w, sl, n);
	int rc = w->c->ops->release(w->lane, &sl->p, n, (uint32_t)(rng(s) % 5));
	CU_ASSERT_EQUAL(rc, 0);
	settle_done(sl);
}

static void op_double(struct worker *w, uint64_t *s)
{
	/* settle a dead permit again, or more than a live one holds */
	for (int i = 0; i < NPERMIT; i++) {
		struct slot *sl = &w->s[(int)(rng(s) % NPERMIT)];
		if (!sl->used)
			continue;
		if (sl->dead) {
			if (rng(s) % 2) {
				struct mcc_completion_v1 wc = { sizeof(wc), IBV_WC_SUCCESS, 0,
					                        sl->p.generation, 4096, 0, 0, 0, 0 };
				w->c->ops->on_completion(w->lane, &sl->p, &wc);
			} else {
				CU_ASSERT_EQUAL(w->c->ops->release(w->lane, &sl->p, 4096, 0), -EALREADY);
			}
		} else {
			unshadow(w, sl, sl->p.bytes);
			CU_ASSERT_EQUAL(w->c->ops->release(w->lane, &sl->p, sl->p.bytes + 1, 0),
			                -EALREADY);
			settle_done(sl);
		}
		atomic_fetch_add(&w->c->injected, 1);
		return;
	}
}

static void op_event(struct worker *w, uint64_t *s)
{
	static const int32_t ev[] = { IBV_EVENT_QP_FATAL,  IBV_EVENT_PATH_MIG_ERR, IBV_EVENT_PORT_ACTIVE,
		                      IBV_EVENT_SRQ_ERR,   IBV_EVENT_CQ_ERR,       IBV_EVENT_PORT_ERR,
		                      IBV_EVENT_GID_CHANGE, 4242 };
	struct ct *c = w->c;
	int k = (int)(rng(s) % NROUTE);
	uint32_t g = atomic_load(&c->gen[k]);
	switch (rng(s) % 7) {
	case 0: {
		int32_t type = ev[rng(s) % (sizeof(ev) / sizeof(ev[0]))];
		if ((type == IBV_EVENT_PORT_ERR || type == IBV_EVENT_CQ_ERR) && rng(s) % 4)
			type = IBV_EVENT_PORT_ACTIVE; /* keep fatal scopes rare */
		struct mcc_async_event_v1 e = { sizeof(e), type, c->dev[c->dev_of[k]], c->route[k],
			                        1 + (uint32_t)(k / NDEV), (uint32_t)k, 0, g, 0 };
		c->ops->on_async_event(c->ctx, &e);
		break;
	}
	case 1: { /* a new endpoint generation */
		uint32_t ng = atomic_fetch_add(&c->gen[k], 1) + 1;
		struct mcc_signal_v1 sg = { sizeof(sg), MCC_SIG_ENDPOINT_REBUILT, NULL, c->route[k],
			                    { 0, 0, 0, 0 }, ng, 0, 0, 0, 0, 0, 0 };
		c->ops->on_signal(c->ctx, &sg);
		break;
	}
	default: {
		static const uint32_t kinds[] = { MCC_SIG_BACKLOG, MCC_SIG_SOFT_DEADLINE,
			                          MCC_SIG_METADATA_STALE, MCC_SIG_NO_USABLE_PATH,
			                          MCC_SIG_CANCELLED, MCC_SIG_CM_EVENT,
			                          MCC_SIG_DEVICE_TELEMETRY, MCC_SIG_SEGMENT_RPC_FAILED };
		struct mcc_signal_v1 sg = { sizeof(sg), kinds[rng(s) % 8], c->dev[c->dev_of[k]],
			                    c->route[k], { w->id + 1, rng(s) % 16, 0, 0 }, g, 0,
			                    MCC_RDMA_CM_EVENT_DISCONNECTED, rng(s) % (8 * MiB),
			                    rng(s) % (8 * MiB), 0, 0 };
		c->ops->on_signal(c->ctx, &sg);
		break;
	}
	}
}

static void op_query(struct worker *w, uint64_t *s)
{
	struct ct *c = w->c;
	struct mcc_task_ref_v1 t = { 1 + rng(s) % 4, rng(s) % 16, 0, 0 };
	struct mcc_task_detail_v1 d;
	memset(&d, 0, sizeof(d));
	d.struct_size = sizeof(d);
	int st = c->ops->task_query(c->ctx, &t, (uint32_t)(rng(s) % 3), &d);
	CU_ASSERT(st >= MCC_TASK_NORMAL && st <= MCC_TASK_UNKNOWN);
	mix(w, (uint64_t)st);
	if (rng(s) % 50 == 0)
		c->ops->batch_free(c->ctx, 1 + rng(s) % 4);
}

static void op_stats(struct worker *w, uint64_t *s)
{
	struct ct *c = w->c;
	int k = (int)(rng(s) % NROUTE);
	struct mcc_domain_stats_v1 r = ct_stats(c, MCC_DOMAIN_ROUTE, c->route[k]);
	struct mcc_domain_stats_v1 d = ct_stats(c, MCC_DOMAIN_DEVICE, c->dev[c->dev_of[k]]);
	CU_ASSERT(r.inflight_bytes < (1ull << 40)); /* never negative (unsigned wrap) */
	CU_ASSERT(d.inflight_bytes < (1ull << 40));
	CU_ASSERT(r.state <= MCC_PATH_PROBING);
	mix(w, r.state);
	mix(w, r.window_bytes);
	c->ops->poller_progress(w->lane, c->dev[rng(s) % NDEV], (uint32_t)(rng(s) % 8));
}

static void *run(void *arg)
{
	struct worker *w = arg;
	struct ct *c = w->c;
	uint64_t s = w->seed;
	struct mcc_lane_desc_v1 ld = { sizeof(ld), w->id, MCC_LANE_POST_POLL, 0 };
	if (c->ops->lane_open(c->ctx, &ld, &w->lane) != 0)
		return NULL;
	for (int i = 0; i < w->nops; i++) {
		uint64_t op = rng(&s) % 100;
		if (op < 40)
			op_acquire(w, &s);
		else if (op < 58)
			op_complete(w, &s);
		else if (op < 68)
			op_release(w, &s);
		else if (op < 70)
			op_double(w, &s);
		else if (op < 76)
			op_event(w, &s);
		else if (op < 82)
			ct_tick(c, rng(&s) % 8 ? 1000000ull : 300000000ull);
		else if (op < 90)
			op_query(w, &s);
		else
			op_stats(w, &s);
	}
	/* settle everything still live, then hand every cached byte back */
	for (int i = 0; i < NPERMIT; i++) {
		struct slot *sl = &w->s[i];
		if (sl->used && !sl->dead) {
			unshadow(w, sl, sl->p.bytes);
			struct mcc_completion_v1 wc = { sizeof(wc), IBV_WC_SUCCESS, 0, sl->p.generation,
				                        sl->p.bytes, 0, 0, 0, 0 };
			c->ops->on_completion(w->lane, &sl->p, &wc);
			CU_ASSERT(!(sl->p.flags & MCC_PERMIT_F_LIVE));
		}
	}
	c->ops->lane_close(c->ctx, w->lane);
	return NULL;
}

static void ct_check_end(struct ct *c)
{
	uint64_t dr_r = 0, dr_d = 0, refused = 0, quarantines = 0, probes = 0, cuts = 0, stale = 0;
	ct_tick(c, 1000000);
	for (int i = 0; i < NROUTE; i++) {
		struct mcc_domain_stats_v1 r = ct_stats(c, MCC_DOMAIN_ROUTE, c->route[i]);
		CU_ASSERT_EQUAL(r.inflight_bytes, 0);
		CU_ASSERT_EQUAL(atomic_load(&c->shadow_r[i]), 0);
		dr_r += r.double_release;
		refused += r.defers + r.avoids + r.would_defer + r.would_avoid;
		quarantines += r.quarantines;
		probes += r.probes;
		cuts += r.window_cuts;
		stale += r.stale_feedback;
	}
	/* the sequence did reach the interesting paths */
	CU_ASSERT(refused > 0);
	CU_ASSERT(quarantines > 0);
	CU_ASSERT(probes > 0);
	CU_ASSERT(cuts > 0);
	CU_ASSERT(stale > 0);
	if (getenv("MCC_TEST_VERBOSE"))
		fprintf(stderr, "refused %llu quarantines %llu probes %llu cuts %llu stale %llu\n",
		        (unsigned long long)refused, (unsigned long long)quarantines,
		        (unsigned long long)probes, (unsigned long long)cuts,
		        (unsigned long long)stale);
	for (int i = 0; i < NDEV; i++) {
		struct mcc_domain_stats_v1 d = ct_stats(c, MCC_DOMAIN_DEVICE, c->dev[i]);
		CU_ASSERT_EQUAL(d.inflight_bytes, 0);
		CU_ASSERT_EQUAL(atomic_load(&c->shadow_d[i]), 0);
		dr_d += d.double_release;
	}
	CU_ASSERT_EQUAL(dr_r, atomic_load(&c->injected));
	CU_ASSERT_EQUAL(dr_d, atomic_load(&c->injected));
	CU_ASSERT_EQUAL(atomic_load(&c->bound_violations), 0);
}

static void ct_close(struct ct *c)
{
	for (int i = 0; i < NROUTE; i++)
		c->ops->route_close(c->ctx, c->route[i]);
	for (int i = 0; i < NDEV; i++)
		c->ops->device_close(c->ctx, c->dev[i]);
	c->ops->fini(c->ctx);
	pthread_mutex_destroy(&c->tick_lock);
}

static void concurrent(const struct mcc_policy_v1 *ops, uint64_t seed)
{
	enum { THREADS = 4 };
	static struct ct c;
	static struct worker w[THREADS];
	/* observe never refuses: its admissions are not bounded by the window */
	ct_open(&c, ops, false,
	        ops->mode == MCC_MODE_OBSERVE ? UINT64_MAX / 4 : (THREADS - 1) * MAX_SLICE);
	ct_warm(&c);
	pthread_t t[THREADS];
	for (uint32_t i = 0; i < THREADS; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i] = (struct worker){ .c = &c, .id = i, .seed = seed * 31 + i, .nops = 30000 };
		CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, run, &w[i]), 0);
	}
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	ct_check_end(&c);
	CU_ASSERT(atomic_load(&c.injected) > 0);
	ct_close(&c);
}

static void test_concurrent_seeded_random_ops_enforce(void)
{
	concurrent(&mcc_test_aimd_v1, 20260916);
}

static void test_concurrent_seeded_random_ops_observe(void)
{
	concurrent(&mcc_test_observe_v1, 4162);
}

static uint64_t single(const struct mcc_policy_v1 *ops, uint64_t seed)
{
	static struct ct c;
	static struct worker w;
	/* exact bound on one thread: no slack (observe: unbounded by design) */
	ct_open(&c, ops, true, ops->mode == MCC_MODE_OBSERVE ? UINT64_MAX / 4 : 0);
	ct_warm(&c);
	memset(&w, 0, sizeof(w));
	w = (struct worker){ .c = &c, .id = 0, .seed = seed, .nops = 60000, .digest = 1469598103934665603ull };
	run(&w);
	ct_check_end(&c);
	uint64_t digest = w.digest;
	for (int i = 0; i < NROUTE; i++) { /* the final statistics, too */
		struct mcc_domain_stats_v1 r = ct_stats(&c, MCC_DOMAIN_ROUTE, c.route[i]);
		r.cooldown_ms = 0;
		const uint64_t *v = (const uint64_t *)(const void *)&r;
		for (size_t k = 0; k < sizeof(r) / 8; k++)
			digest = (digest ^ v[k]) * 0x100000001B3ull;
	}
	ct_close(&c);
	return digest;
}

static void test_single_thread_seeded_run_is_deterministic(void)
{
	uint64_t a = single(&mcc_test_aimd_v1, 7);
	uint64_t b = single(&mcc_test_aimd_v1, 7);
	uint64_t x = single(&mcc_test_aimd_v1, 8);
	CU_ASSERT_EQUAL(a, b);
	CU_ASSERT_NOT_EQUAL(a, x); /* the digest does see the sequence */
	uint64_t o1 = single(&mcc_test_observe_v1, 7), o2 = single(&mcc_test_observe_v1, 7);
	CU_ASSERT_EQUAL(o1, o2);
}

MCC_CU_SUITE(t_init_concurrency_tests, "policy_concurrency", NULL, NULL,
             test_concurrent_seeded_random_ops_enforce,
             test_concurrent_seeded_random_ops_observe,
             test_single_thread_seeded_run_is_deterministic)

MCC_CU_MAIN(t_init_concurrency_tests)
