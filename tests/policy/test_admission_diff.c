/* SPDX-License-Identifier: MIT */
/*
 * test_admission_diff.c - differential test of the admission paths of
 * modules/core/domain.c: the fast paths (credit, exact, mixed) behind the
 * public entry points against the general path alone.
 *
 * The reference. mcc_core_try_acquire / release / on_completion dispatch to
 * the credit, exact and mixed fast paths, each falling back to
 * mcc_core_acquire_general / _release_general / _completion_general
 * (core.h), which handle every case on their own. No knob forces the
 * general path (the dispatch reads only the control words, the route's
 * generation and max_slice, the permit and the reason), so this program
 * calls those three functions directly. Two instances run on the same code
 * (libmcc_core), "dispatch" through the descriptor's entry points and
 * "general" through the three functions; every other callback goes through
 * the descriptor in both.
 *
 * Sequences. 200 seeded sequences of 2000 operations in enforce mode and 40
 * in observe mode, each on 2 devices, 5 routes and lanes 0..2 (closed and
 * reopened on the way; a permit admitted on one lane is settled on any),
 * with min_window_bytes 128 KiB / 1 MiB / 2 MiB and [module.aimd]
 * credit_min_admits 1 / 2 / 8 drawn from the seed: admissions of 1 B to
 * 64 KiB (rarely up to 256 KiB, a new largest slice) with current, new and
 * stale generations, with and without a task, into a permit as the last
 * operation left it (settled, refused or unused); partial and full releases
 * with every reason; completions (success and error statuses, partial, full
 * or bytes 0, sampled latencies up to 2 ms); double settles (also of
 * refused and unused permits); poller progress; ticks of 0.3 ms, 1 ms and
 * 1.1 s; signals and async events that
 * take routes and devices through CONGESTED, SUSPECT, QUARANTINED and
 * PROBING; task queries; batch frees. The test asserts that every admission
 * mode (both credit, both exact, mixed, neither) was offered >= 1000 times.
 *
 * What must be identical, and when. The general path spends and refills
 * the same lane credit (dom_take), so after every operation:
 *   - the return value and every field of the permit it touched, the
 *     route and device by index (a refused permit holds only its reason:
 *     mcc_policy_v1.h);
 *   - per domain: the control word (state, EXACT, credit epoch), window,
 *     chunk, generation, largest slice, probe bound, cooldown end, every
 *     event counter, the pending hard/RNR/probe feedback;
 *   - per domain, the in-flight admission tests: inflight - stale_est;
 *   - per lane and domain, the credit cached at the current credit epoch;
 *   - task_query (state and detail) wherever it is called: evidence
 *     reports the in-flight figure admission tests
 *     (mcc_dom_inflight_admission), path independent at any time.
 * domain_stats, every field, right after each tick and at the end (every
 * permit settled, lanes closed: in-flight 0); between ticks every field but
 * inflight_bytes. After an epoch bump (any state, mode or window change,
 * at a tick or by a signal or async event), the general path hands a lane's
 * now stale credit back (stale_returned) when it next touches the domain,
 * while the exact and mixed fast paths never touch the lane slot of an
 * exact domain, so the credit stays there until the next tick snapshots it
 * (stale_est): domain_stats subtracts max(stale_est, stale_returned), so its
 * inflight_bytes may differ by that credit until the tick; admission
 * subtracts both the same way (checked above). The raw counters (inflight,
 * stale_est, stale_returned, limit) and where the feedback counts sit (the
 * exact paths' pending pairs, the slots) therefore differ and are compared
 * through the totals. The seven domains must have distinct lane slots: a
 * slot shared by two domains is rebound on the general path only.
 *
 * Evidence reports mcc_dom_inflight_admission() (inflight - stale_est: what
 * admission tests) from every source, hot path and slow path alike, so it
 * is compared exactly.
 *
 * The two-thread variant (also under TSan in CI): two poster lanes on their
 * own threads, each with a fixed operation sequence per phase (admit,
 * complete with the phase's latency, partial release, receiver-not-ready
 * errors in some phases), one device, three routes (one shared). Between
 * phases both wait at a barrier while the main thread ticks and hands each
 * thread's live permits to the other (the cross-lane hand-off, ordered by
 * the barrier). Each thread holds at most min_window / 8, so with cached
 * and stale credit no admission can be refused in any interleaving and the
 * epoch totals do not depend on it: every admission must succeed, the
 * domain statistics after each tick must match on both paths (windows grow
 * and are cut), every admitted byte is settled once (no double release)
 * and in-flight returns to 0.
 */
#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "cu_driver.h"
#include "harness.h"

#define NDEV 2
#define NROUTE 5
#define NLANE 3
#define NPERMIT 64
#define NBATCH 3
#define NTASK 8

static uint64_t rnd(uint64_t *s)
{
	/* xorshift64* */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1Dull;
}

static uint64_t below(uint64_t *s, uint64_t n)
{
	return rnd(s) % n;
}

/* [module.aimd] credit_min_admits of the instance being created */
static const char *g_min_admits = "1";

static const char *diff_module_get(const struct mcc_config_v1 *cfg, const char *key)
{
	(void)cfg;
	return strcmp(key, "credit_min_admits") == 0 ? g_min_admits : NULL;
}

static uint64_t diff_clock(void *arg);

/* One instance driven through one set of admission paths. */
struct run {
	const struct mcc_policy_v1 *ops;
	bool general; /* admission and settlement through the general path only */
	void *ctx;
	struct mcc_host_v1 host;
	_Atomic uint64_t now;
	mcc_lane *lane[NLANE]; /* NULL: closed */
	mcc_device *dev[NDEV];
	mcc_route *route[NROUTE];
	struct mcc_permit_v1 p[NPERMIT];
};

static uint64_t diff_clock(void *arg)
{
	return atomic_load(&((struct run *)arg)->now);
}

/* `p` as the last operation left it (dead: settled, refused or unused). */
static int run_acquire(struct run *u, mcc_lane *l, mcc_route *r, uint64_t bytes, uint32_t gen,
                       const struct mcc_task_ref_v1 *t, struct mcc_permit_v1 *p)
{
	if (u->general)
		return mcc_core_acquire_general(l, r, bytes, gen, t, p);
	return u->ops->try_acquire(l, r, bytes, gen, t, p);
}

static int run_release(struct run *u, mcc_lane *l, struct mcc_permit_v1 *p, uint64_t bytes,
                       uint32_t reason)
{
	if (u->general)
		return mcc_core_release_general(l, p, bytes, reason);
	return u->ops->release(l, p, bytes, reason);
}

static void run_complete(struct run *u, mcc_lane *l, struct mcc_permit_v1 *p,
                         const struct mcc_completion_v1 *wc)
{
	if (u->general)
		mcc_core_completion_general(l, p, wc);
	else
		u->ops->on_completion(l, p, wc);
}

static void run_open_lane(struct run *u, uint32_t id)
{
	struct mcc_lane_desc_v1 ld = { sizeof(ld), id, MCC_LANE_POST_POLL, 0 };
	CU_ASSERT_EQUAL_FATAL(u->ops->lane_open(u->ctx, &ld, &u->lane[id]), 0);
}

static void run_tick(struct run *u, uint64_t advance_ns)
{
	uint64_t now = atomic_fetch_add(&u->now, advance_ns) + advance_ns;
	u->ops->tick(u->ctx, now);
}

static struct mcc_domain_stats_v1 run_stats(struct run *u, int kind, const void *dom)
{
	return th_stats(u->ops, u->ctx, kind, dom);
}

/* Instance, `ndev` devices, `nroute` routes (route k on device k % ndev,
 * port 1 + k / ndev, cq k), lanes 0..nlane-1 open. */
static void run_init(struct run *u, const struct mcc_policy_v1 *ops, bool general,
                     const struct mcc_config_v1 *cfg, int ndev, int nroute, int nlane)
{
	memset(u, 0, sizeof(*u));
	u->ops = ops;
	u->general = general;
	atomic_init(&u->now, 1000000000ull);
	u->host = (struct mcc_host_v1){ MCC_POLICY_ABI_V1, sizeof(u->host), "test",
		                        MCC_HOST_CAP_ASYNC_EVENTS | MCC_HOST_CAP_CQ_IDENTITY |
		                            MCC_HOST_CAP_POLLER_PROGRESS | MCC_HOST_CAP_COMPLETION_TS,
		                        diff_clock, u, th_log_quiet, u, 4, 0 };
	struct mcc_config_v1 c = *cfg;
	c.mode = ops->mode;
	CU_ASSERT_EQUAL_FATAL(ops->init(&u->host, &c, NULL, &u->ctx), 0);
	for (int i = 0; i < ndev; i++) {
		struct mcc_device_desc_v1 d = { sizeof(d), (uint32_t)i, "mlx5_d", 2, 0, 400000000000ull, 0 };
		CU_ASSERT_EQUAL_FATAL(ops->device_open(u->ctx, &d, &u->dev[i]), 0);
	}
	for (int k = 0; k < nroute; k++) {
		struct mcc_route_desc_v1 r = { sizeof(r), 1 + (uint32_t)(k / ndev), (uint32_t)k, 1,
			                       100 + (uint64_t)k, "10.0.0.9:1@mlx5_1", 7, 0 };
		CU_ASSERT_EQUAL_FATAL(ops->route_open(u->ctx, u->dev[k % ndev], &r, &u->route[k]), 0);
	}
	for (int i = 0; i < nlane; i++)
		run_open_lane(u, (uint32_t)i);
	for (int i = 0; i < NPERMIT; i++)
		u->p[i] = (struct mcc_permit_v1)MCC_PERMIT_INIT;
}

static void run_fini(struct run *u, int ndev, int nroute)
{
	for (int i = 0; i < NLANE; i++)
		if (u->lane[i])
			u->ops->lane_close(u->ctx, u->lane[i]);
	for (int k = 0; k < nroute; k++)
		u->ops->route_close(u->ctx, u->route[k]);
	for (int i = 0; i < ndev; i++)
		u->ops->device_close(u->ctx, u->dev[i]);
	u->ops->fini(u->ctx);
}

/* ------------------------------------------------------------ operations */

enum op_kind {
	OP_ACQ,
	OP_WC,
	OP_REL,
	OP_DOUBLE,
	OP_PROGRESS,
	OP_TICK,
	OP_SIGNAL,
	OP_ASYNC,
	OP_LANE,
	OP_QUERY,
	OP_BFREE,
	OP_STATS,
};

static const char *const op_names[] = { "acquire", "completion", "release", "double",
	                                "progress", "tick",       "signal",  "async",
	                                "lane",     "query",      "batch_free", "stats" };

/* One operation, drawn once and applied to both instances. */
struct op {
	enum op_kind kind;
	int lane, route, dev, slot;
	uint64_t bytes, v0, v1, advance;
	uint32_t gen, reason, flags;
	int32_t code;
	uint64_t lat;
	struct mcc_task_ref_v1 task;
};

/* The sequence's generator state (never read from either instance, except
 * which permits are live: the instances must agree on that). */
struct gen {
	uint64_t s;
	uint32_t rgen[NROUTE];
	bool lane_open[NLANE];
	int nlanes;
};

/* Coverage of the admission modes the dispatch instance offered (whole
 * test): both credit, both exact, mixed, other (general only). */
static uint64_t cov[4];

static int pick_lane(struct gen *g)
{
	int k = (int)below(&g->s, NLANE);
	while (!g->lane_open[k])
		k = (k + 1) % NLANE;
	return k;
}

static int pick_slot(struct gen *g, const struct run *a, bool live)
{
	int start = (int)below(&g->s, NPERMIT);
	for (int i = 0; i < NPERMIT; i++) {
		int k = (start + i) % NPERMIT;
		if (!(a->p[k].flags & MCC_PERMIT_F_LIVE) == !live)
			return k;
	}
	return -1;
}

static struct mcc_task_ref_v1 pick_task(struct gen *g)
{
	struct mcc_task_ref_v1 t = { 0, 0, 0, 0 };
	if (below(&g->s, 10) < 7) {
		t.batch_id = 1 + below(&g->s, NBATCH);
		t.task_id = below(&g->s, NTASK);
		t.attempt = (uint32_t)below(&g->s, 2);
	}
	return t;
}

static void draw(struct gen *g, const struct run *a, struct op *o)
{
	static const int32_t wc_err[] = { IBV_WC_RETRY_EXC_ERR,  IBV_WC_RNR_RETRY_EXC_ERR,
		                          IBV_WC_WR_FLUSH_ERR,   IBV_WC_REM_ACCESS_ERR,
		                          IBV_WC_LOC_LEN_ERR,    IBV_WC_RESP_TIMEOUT_ERR,
		                          IBV_WC_GENERAL_ERR,    999 };
	static const uint32_t sigs[] = { MCC_SIG_BACKLOG,        MCC_SIG_SOFT_DEADLINE,
		                         MCC_SIG_ENDPOINT_REBUILT, MCC_SIG_METADATA_STALE,
		                         MCC_SIG_CM_EVENT,       MCC_SIG_DEVICE_TELEMETRY,
		                         MCC_SIG_POST_REJECTED,  MCC_SIG_NO_USABLE_PATH,
		                         MCC_SIG_CANCELLED,      MCC_SIG_SEGMENT_RPC_FAILED };
	static const int32_t asy[] = { IBV_EVENT_QP_FATAL, IBV_EVENT_PATH_MIG_ERR,
		                       IBV_EVENT_PORT_ACTIVE, IBV_EVENT_SRQ_ERR,
		                       IBV_EVENT_CQ_ERR,   IBV_EVENT_PORT_ERR,
		                       IBV_EVENT_QP_REQ_ERR, IBV_EVENT_DEVICE_FATAL };
	memset(o, 0, sizeof(*o));
	uint64_t x = below(&g->s, 1000);
	o->lane = pick_lane(g);
	o->route = (int)below(&g->s, NROUTE);
	o->dev = o->route % NDEV;
	uint32_t rg = g->rgen[o->route];
	if (x < 450) {
		o->kind = OP_ACQ;
		o->slot = pick_slot(g, a, false);
		uint64_t y = below(&g->s, 100);
		o->bytes = y < 2 ? 1 + below(&g->s, 256 * KiB) : y < 30 ? 64 * KiB : 1 + below(&g->s, 64 * KiB);
		y = below(&g->s, 100);
		o->gen = y < 2 ? rg + 1 : (y < 5 && rg > 1) ? rg - 1 : rg;
		if (o->gen > rg)
			g->rgen[o->route] = o->gen;
		o->task = pick_task(g);
	} else if (x < 790) { /* a live permit settles: a completion or a release */
		o->kind = x < 680 ? OP_WC : OP_REL;
		o->slot = pick_slot(g, a, true);
		if (o->slot < 0)
			return;
		const struct mcc_permit_v1 *p = &a->p[o->slot];
		if (o->kind == OP_REL) {
			o->bytes = below(&g->s, 2) ? p->bytes : 1 + below(&g->s, p->bytes);
			o->reason = below(&g->s, 10) < 8 ? MCC_REL_NOT_POSTED : (uint32_t)below(&g->s, 5);
		} else {
			uint64_t y = below(&g->s, 100);
			o->code = y < 94 ? IBV_WC_SUCCESS : wc_err[below(&g->s, 8)];
			y = below(&g->s, 100);
			o->bytes = y < 55 ? 0 : y < 80 ? p->bytes : 1 + below(&g->s, p->bytes);
			y = below(&g->s, 100);
			o->gen = y < 50 ? 0 : y < 95 ? p->generation : p->generation + 1;
			y = below(&g->s, 100);
			o->lat = y < 40 ? 0
			         : y < 90 ? 1 + below(&g->s, 50000)
			                  : 1000000 + below(&g->s, 1000000);
		}
	} else if (x < 800) {
		o->kind = OP_DOUBLE;
		o->slot = (int)below(&g->s, NPERMIT); /* admitted, refused or unused */
		o->bytes = below(&g->s, 2) ? 0 : 1 + below(&g->s, 4096);
		o->flags = (uint32_t)below(&g->s, 2); /* 1: a completion, 0: a release */
	} else if (x < 820) {
		o->kind = OP_PROGRESS;
	} else if (x < 870) {
		o->kind = OP_TICK;
		uint64_t y = below(&g->s, 100);
		o->advance = y < 12 ? 1100000000ull : y < 20 ? 300000 : 1000000;
	} else if (x < 888) {
		o->kind = OP_SIGNAL;
		o->reason = sigs[below(&g->s, 10)];
		o->gen = rg;
		if (o->reason == MCC_SIG_ENDPOINT_REBUILT)
			o->gen = g->rgen[o->route] = rg + 1;
		else if (below(&g->s, 10) == 0 && rg > 1)
			o->gen = rg - 1;
		o->code = below(&g->s, 2) ? MCC_RDMA_CM_EVENT_DISCONNECTED : MCC_RDMA_CM_EVENT_UNREACHABLE;
		o->v0 = below(&g->s, 8 * MiB);
		o->v1 = below(&g->s, 8 * MiB);
		o->task = pick_task(g);
	} else if (x < 898) {
		o->kind = OP_ASYNC;
		o->code = asy[below(&g->s, 8)];
		if (o->code == IBV_EVENT_DEVICE_FATAL && below(&g->s, 8))
			o->code = IBV_EVENT_PORT_ACTIVE; /* keep device-wide quarantine rarer */
		o->gen = rg;
	} else if (x < 908) {
		o->kind = OP_LANE;
		o->lane = (int)below(&g->s, NLANE);
		if (g->lane_open[o->lane] && g->nlanes == 1)
			o->kind = OP_STATS; /* keep one lane open */
		else {
			g->lane_open[o->lane] = !g->lane_open[o->lane];
			g->nlanes += g->lane_open[o->lane] ? 1 : -1;
		}
	} else if (x < 975) {
		o->kind = OP_QUERY;
		o->task = pick_task(g);
		o->task.batch_id = 1 + below(&g->s, NBATCH);
		o->flags = (uint32_t)below(&g->s, 16); /* MCC_TASKQ_* host facts */
		o->reason = (uint32_t)below(&g->s, 2); /* 1: the detailed query */
	} else if (x < 980) {
		o->kind = OP_BFREE;
		o->task.batch_id = 1 + below(&g->s, NBATCH);
	} else {
		o->kind = OP_STATS;
	}
}

/* Apply `o` to `u`; the result code and (queries) detail for comparison. */
static int apply(struct run *u, const struct op *o, struct mcc_task_detail_v1 *det)
{
	mcc_lane *l = u->lane[o->lane];
	mcc_route *r = u->route[o->route];
	mcc_device *dv = u->dev[o->dev];
	uint64_t now = atomic_load(&u->now);
	switch (o->kind) {
	case OP_ACQ:
		if (o->slot < 0)
			return 0;
		return run_acquire(u, l, r, o->bytes, o->gen, &o->task, &u->p[o->slot]);
	case OP_WC:
	case OP_DOUBLE:
		if (o->slot < 0)
			return 0;
		if (o->kind == OP_WC || o->flags) {
			struct mcc_permit_v1 *p = &u->p[o->slot];
			struct mcc_completion_v1 wc = { sizeof(wc), o->kind == OP_WC ? o->code : IBV_WC_SUCCESS,
				                        7, o->gen, o->bytes, o->lat ? now - o->lat : 0,
				                        o->lat ? now : 0, 0, 0 };
			run_complete(u, l, p, &wc);
			return 0;
		}
		return run_release(u, l, &u->p[o->slot], u->p[o->slot].bytes + 1 + o->bytes,
		                   MCC_REL_NOT_POSTED);
	case OP_REL:
		if (o->slot < 0)
			return 0;
		return run_release(u, l, &u->p[o->slot], o->bytes, o->reason);
	case OP_PROGRESS:
		u->ops->poller_progress(l, dv, 1);
		return 0;
	case OP_TICK:
		run_tick(u, o->advance);
		return 0;
	case OP_SIGNAL: {
		struct mcc_signal_v1 s = { sizeof(s), o->reason, dv, r, o->task, o->gen, -5, o->code, 0,
			                   o->v0, o->v1, now };
		u->ops->on_signal(u->ctx, &s);
		return 0;
	}
	case OP_ASYNC: {
		struct mcc_async_event_v1 e = { sizeof(e), o->code, dv, r,
			                        1 + (uint32_t)(o->route / NDEV), (uint32_t)o->route, 0,
			                        o->gen, now };
		u->ops->on_async_event(u->ctx, &e);
		return 0;
	}
	case OP_LANE:
		if (u->lane[o->lane]) {
			u->ops->lane_close(u->ctx, u->lane[o->lane]);
			u->lane[o->lane] = NULL;
		} else {
			run_open_lane(u, (uint32_t)o->lane);
		}
		return 0;
	case OP_QUERY:
		memset(det, 0, sizeof(*det));
		det->struct_size = sizeof(*det);
		return u->ops->task_query(u->ctx, &o->task, o->flags, o->reason ? det : NULL);
	case OP_BFREE:
		u->ops->batch_free(u->ctx, o->task.batch_id);
		return 0;
	case OP_STATS:
		return 0;
	}
	return 0;
}

/* ----------------------------------------------------------- comparison */

struct diff {
	uint64_t seed;
	int step;
	bool failed;
	bool ops;          /* hist holds the operations (not the threaded run) */
	struct op hist[8]; /* the last operations, for the report */
};

static void describe(const struct op *o, char *buf, size_t n)
{
	snprintf(buf, n,
	         "%s lane=%d route=%d dev=%d slot=%d bytes=%llu gen=%u reason/kind=%u code=%d "
	         "lat=%llu flags=%u task=%llu/%llu/%u advance=%llu",
	         op_names[o->kind], o->lane, o->route, o->dev, o->slot, (unsigned long long)o->bytes,
	         o->gen, o->reason, o->code, (unsigned long long)o->lat, o->flags,
	         (unsigned long long)o->task.batch_id, (unsigned long long)o->task.task_id,
	         o->task.attempt, (unsigned long long)o->advance);
}

/* Record the first disagreement (the general path is the expectation); the
 * name is formatted only then. */
static bool differ(struct diff *df, uint64_t expected, uint64_t got, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static bool differ(struct diff *df, uint64_t expected, uint64_t got, const char *fmt, ...)
{
	if (expected == got)
		return false;
	if (!df->failed) {
		char what[96], buf[256];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(what, sizeof(what), fmt, ap);
		va_end(ap);
		fprintf(stderr, "paths disagree: seed %llu step %d: %s: general %llu, dispatch %llu\n",
		        (unsigned long long)df->seed, df->step, what, (unsigned long long)expected,
		        (unsigned long long)got);
		for (int i = 7; i >= 0 && df->ops; i--) {
			int k = df->step - i;
			if (k < 0)
				continue;
			describe(&df->hist[k % 8], buf, sizeof(buf));
			fprintf(stderr, "  step %d: %s\n", k, buf);
		}
	}
	df->failed = true;
	return true;
}

static uint64_t eff_inflight(const struct mcc_dom *d)
{
	return (uint64_t)(atomic_load(&d->inflight) - (int64_t)atomic_load(&d->stale_est));
}

static uint64_t cur_credit(struct mcc_lane *lane, const struct mcc_dom *d)
{
	if (!lane)
		return 0;
	const struct mcc_slot *s = mcc_slot_of(lane, d);
	return atomic_load(&s->dom) == d && atomic_load(&s->epoch) == mcc_ctl_epoch(atomic_load(&d->ctl))
	           ? atomic_load(&s->credit)
	           : 0;
}

static void cmp_dom(struct diff *df, const char *name, int i, const struct run *a,
                    const struct mcc_dom *x, const struct run *b, const struct mcc_dom *y)
{
#define DOMF(f)                                                                        \
	differ(df, (uint64_t)atomic_load(&y->f), (uint64_t)atomic_load(&x->f), "%s %d " #f, \
	       name, i)
	DOMF(ctl);
	DOMF(window);
	DOMF(chunk);
	DOMF(max_slice);
	DOMF(generation);
	DOMF(q_generation);
	DOMF(defers);
	DOMF(avoids);
	DOMF(would_defer);
	DOMF(would_avoid);
	DOMF(errors);
	DOMF(stale_feedback);
	DOMF(double_release);
	DOMF(probes);
	DOMF(hard_pending);
	DOMF(rnr_pending);
	DOMF(probe_ok);
	DOMF(probe_fail);
	DOMF(backlog);
	DOMF(suppressed);
	DOMF(err_gen);
	DOMF(probe_bound);
	DOMF(q_until_ns);
	DOMF(meta_stale_gen);
#undef DOMF
	if (x->kind == MCC_DOM_DEVICE && y->kind == MCC_DOM_DEVICE)
		differ(df, (uint64_t)atomic_load(&((const struct mcc_device *)y)->progress_mark),
		       (uint64_t)atomic_load(&((const struct mcc_device *)x)->progress_mark),
		       "%s %d progress_mark", name, i);
	differ(df, eff_inflight(y), eff_inflight(x), "%s %d inflight - stale_est", name, i);
	for (int k = 0; k < NLANE; k++)
		differ(df, cur_credit(b->lane[k], y), cur_credit(a->lane[k], x),
		       "%s %d credit of lane %d", name, i, k);
}

/* A permit's handles as index + 1 on their instance, 0 for NULL, -1 for a
 * foreign one. */
static int64_t route_idx(const struct run *u, const mcc_route *r)
{
	for (int k = 0; k < NROUTE; k++)
		if (r && u->route[k] == r)
			return k + 1;
	return r ? -1 : 0;
}

static int64_t dev_idx(const struct run *u, const mcc_device *d)
{
	for (int i = 0; i < NDEV; i++)
		if (d && u->dev[i] == d)
			return i + 1;
	return d ? -1 : 0;
}

/* Every field of permit k (x on a, y on b), the handles by index. */
static void cmp_permit(struct diff *df, int k, const struct run *a, const struct run *b)
{
	const struct mcc_permit_v1 *x = &a->p[k], *y = &b->p[k];
#define PF(f) differ(df, (uint64_t)y->f, (uint64_t)x->f, "permit %d " #f, k)
	PF(struct_size);
	PF(flags);
	PF(bytes);
	PF(reason);
	PF(generation);
	PF(module16);
	PF(task.batch_id);
	PF(task.task_id);
	PF(task.attempt);
	PF(task.reserved0);
	PF(module64);
#undef PF
	differ(df, (uint64_t)route_idx(b, y->route), (uint64_t)route_idx(a, x->route),
	       "permit %d route", k);
	differ(df, (uint64_t)dev_idx(b, y->device), (uint64_t)dev_idx(a, x->device),
	       "permit %d device", k);
}

/* The cheap state compared after every operation. */
static void cmp_state(struct diff *df, const struct run *a, const struct run *b)
{
	for (int i = 0; i < NDEV; i++)
		cmp_dom(df, "device", i, a, &a->dev[i]->d, b, &b->dev[i]->d);
	for (int k = 0; k < NROUTE; k++)
		cmp_dom(df, "route", k, a, &a->route[k]->d, b, &b->route[k]->d);
}

/* `all`: inflight_bytes too (see the head comment: right after a tick). */
static void cmp_stats_one(struct diff *df, const char *name, int i, struct mcc_domain_stats_v1 x,
                          struct mcc_domain_stats_v1 y, bool all)
{
	if (!all)
		x.inflight_bytes = y.inflight_bytes;
#define SF(f) differ(df, (uint64_t)y.f, (uint64_t)x.f, "stats %s %d " #f, name, i)
	SF(state);
	SF(window_bytes);
	SF(inflight_bytes);
	SF(generation);
	SF(hard_errors);
	SF(cooldown_ms);
	SF(admits);
	SF(completed_bytes);
	SF(completions);
	SF(defers);
	SF(avoids);
	SF(would_defer);
	SF(would_avoid);
	SF(errors);
	SF(stale_feedback);
	SF(double_release);
	SF(quarantines);
	SF(probes);
	SF(window_cuts);
	SF(drain_us);
	SF(rate_bps);
	SF(suppressed_deadlines);
#undef SF
	differ(df, 0, memcmp(&x, &y, sizeof(x)) != 0, "stats %s %d (whole struct)", name, i);
}

static void cmp_stats(struct diff *df, struct run *a, struct run *b, int ndev, int nroute,
                      bool all)
{
	for (int i = 0; i < ndev; i++)
		cmp_stats_one(df, "device", i, run_stats(a, MCC_DOMAIN_DEVICE, a->dev[i]),
		              run_stats(b, MCC_DOMAIN_DEVICE, b->dev[i]), all);
	for (int k = 0; k < nroute; k++)
		cmp_stats_one(df, "route", k, run_stats(a, MCC_DOMAIN_ROUTE, a->route[k]),
		              run_stats(b, MCC_DOMAIN_ROUTE, b->route[k]), all);
}

static void cmp_detail(struct diff *df, const struct mcc_task_detail_v1 *x,
                       const struct mcc_task_detail_v1 *y)
{
#define QF(f) differ(df, (uint64_t)y->f, (uint64_t)x->f, "task_query detail " #f)
	QF(state);
	QF(observed);
	QF(reason);
	QF(scope);
	QF(resolved);
	QF(route_id);
	QF(observed_ns);
	QF(attempt);
	QF(generation);
	QF(window_bytes);
	QF(inflight_bytes);
	QF(cooldown_ms);
	QF(wc_status);
	QF(vendor_err);
	QF(path_state);
#undef QF
	differ(df, 0, memcmp(x, y, sizeof(*x)) != 0, "task_query detail (whole struct)");
}

static void cmp_queries(struct diff *df, struct run *a, struct run *b)
{
	for (uint64_t bt = 1; bt <= NBATCH; bt++)
		for (uint64_t t = 0; t < NTASK; t++) {
			struct op o = { .kind = OP_QUERY, .reason = 1, .task = { bt, t, 0, 0 } };
			struct mcc_task_detail_v1 x, y;
			int rx = apply(a, &o, &x), ry = apply(b, &o, &y);
			differ(df, (uint64_t)ry, (uint64_t)rx, "task_query state");
			cmp_detail(df, &x, &y);
		}
}

/* Which admission mode the dispatch instance offers for route k now. */
static void count_mode(const struct run *a, int k)
{
	uint64_t rc = atomic_load(&a->route[k]->d.ctl), dc = atomic_load(&a->dev[k % NDEV]->d.ctl);
	bool rcr = !(rc & MCC_CTL_SLOWPATH), dcr = !(dc & MCC_CTL_SLOWPATH);
	bool rx = mcc_ctl_exact_admits(rc), dx = mcc_ctl_exact_admits(dc);
	cov[rcr && dcr ? 0 : rx && dx ? 1 : (rcr || rx) && (dcr || dx) ? 2 : 3]++;
}

/* ------------------------------------------------------- the sequences */

static void seq_cfg(uint64_t seed, struct mcc_config_v1 *c)
{
	static const uint64_t minw[] = { 128 * KiB, 1 * MiB, 2 * MiB };
	static const char *const cma[] = { "1", "2", "8" };
	th_cfg_defaults(c);
	c->min_window_bytes = minw[seed % 3];
	c->max_window_bytes = 8 * MiB;
	c->evidence_tasks = 16; /* fewer than the 24 tasks used: eviction too */
	c->recorder_entries = 64;
	c->module_get = diff_module_get;
	g_min_admits = cma[(seed / 3) % 3];
}

/* Every domain in its own lane slot (see the head comment). */
static void check_slots(const struct run *u)
{
	uint16_t off[NDEV + NROUTE];
	for (int i = 0; i < NDEV; i++)
		off[i] = u->dev[i]->d.slot_off;
	for (int k = 0; k < NROUTE; k++)
		off[NDEV + k] = u->route[k]->d.slot_off;
	for (int i = 0; i < NDEV + NROUTE; i++)
		for (int j = i + 1; j < NDEV + NROUTE; j++)
			CU_ASSERT_NOT_EQUAL_FATAL(off[i], off[j]);
}

/* One sequence on both paths; false on the first disagreement. */
static bool sequence(const struct mcc_policy_v1 *ops, uint64_t seed, int nops)
{
	static struct run a, b;
	struct mcc_config_v1 cfg;
	seq_cfg(seed, &cfg);
	run_init(&a, ops, false, &cfg, NDEV, NROUTE, NLANE);
	run_init(&b, ops, true, &cfg, NDEV, NROUTE, NLANE);
	check_slots(&a);
	struct gen g = { .s = seed * 0x9E3779B97F4A7C15ull + 1, .nlanes = NLANE };
	for (int k = 0; k < NROUTE; k++)
		g.rgen[k] = 1;
	for (int i = 0; i < NLANE; i++)
		g.lane_open[i] = true;
	struct diff df = { .seed = seed, .ops = true };
	for (df.step = 0; df.step < nops && !df.failed; df.step++) {
		struct op *o = &df.hist[df.step % 8];
		draw(&g, &a, o);
		if (o->kind == OP_ACQ && o->slot >= 0)
			count_mode(&a, o->route);
		struct mcc_task_detail_v1 x, y;
		int rx = apply(&a, o, &x), ry = apply(&b, o, &y);
		differ(&df, (uint64_t)ry, (uint64_t)rx, "return value");
		if (o->kind == OP_QUERY && o->reason)
			cmp_detail(&df, &x, &y);
		if (o->slot >= 0 && o->kind <= OP_DOUBLE)
			cmp_permit(&df, o->slot, &a, &b);
		cmp_state(&df, &a, &b);
		if (o->kind == OP_TICK || o->kind == OP_STATS)
			cmp_stats(&df, &a, &b, NDEV, NROUTE, o->kind == OP_TICK);
	}
	/* settle everything on one lane, close the lanes, two ticks */
	int l = 0;
	while (!a.lane[l])
		l++;
	for (int k = 0; k < NPERMIT; k++) {
		cmp_permit(&df, k, &a, &b);
		if (a.p[k].flags & MCC_PERMIT_F_LIVE) {
			struct op o = { .kind = OP_REL, .lane = l, .slot = k, .bytes = a.p[k].bytes };
			int ry = apply(&b, &o, NULL), rx = apply(&a, &o, NULL);
			differ(&df, (uint64_t)ry, (uint64_t)rx, "final release of permit %d", k);
		}
	}
	for (int i = 0; i < NLANE; i++)
		if (a.lane[i]) {
			struct op o = { .kind = OP_LANE, .lane = i };
			apply(&a, &o, NULL);
			apply(&b, &o, NULL);
		}
	run_tick(&a, 1000000);
	run_tick(&b, 1000000);
	run_tick(&a, 1000000);
	run_tick(&b, 1000000);
	cmp_state(&df, &a, &b);
	cmp_stats(&df, &a, &b, NDEV, NROUTE, true);
	cmp_queries(&df, &a, &b);
	for (int i = 0; i < NDEV; i++)
		CU_ASSERT_EQUAL(run_stats(&a, MCC_DOMAIN_DEVICE, a.dev[i]).inflight_bytes, 0);
	for (int k = 0; k < NROUTE; k++)
		CU_ASSERT_EQUAL(run_stats(&a, MCC_DOMAIN_ROUTE, a.route[k]).inflight_bytes, 0);
	run_fini(&a, NDEV, NROUTE);
	run_fini(&b, NDEV, NROUTE);
	return !df.failed;
}

static void sequences(const struct mcc_policy_v1 *ops, uint64_t seed0, int nseq, int nops)
{
	int failed = 0;
	for (int i = 0; i < nseq; i++)
		if (!sequence(ops, seed0 + (uint64_t)i, nops))
			failed++;
	CU_ASSERT_EQUAL(failed, 0);
}

static void test_diff_fast_paths_agree_with_general_path_enforce(void)
{
	memset(cov, 0, sizeof(cov));
	sequences(&mcc_test_aimd_v1, 1, 200, 2000);
	if (getenv("MCC_TEST_VERBOSE"))
		fprintf(stderr, "admissions offered: credit %llu exact %llu mixed %llu other %llu\n",
		        (unsigned long long)cov[0], (unsigned long long)cov[1],
		        (unsigned long long)cov[2], (unsigned long long)cov[3]);
	/* the sequences did reach every admission mode */
	for (int i = 0; i < 4; i++)
		CU_ASSERT(cov[i] >= 1000);
}

static void test_diff_fast_paths_agree_with_general_path_observe(void)
{
	sequences(&mcc_test_observe_v1, 1001, 40, 2000);
}

/* ------------------------------------------------- the two-thread variant */

#define TT_PHASES 24
#define TT_OPS 300
#define TT_HELD 16 /* permits a thread holds at most */
#define TT_MINW (1 * MiB)

struct tt_thread {
	struct run *u;
	pthread_barrier_t *bar;
	int id;
	struct mcc_permit_v1 p[2 * TT_HELD];
	uint64_t live; /* bytes held by p */
	uint64_t admitted, settled, refused;
	unsigned bad; /* calls that failed (CUnit asserts only on the main thread) */
};

struct tt {
	struct run u;
	pthread_barrier_t bar;
	struct tt_thread t[2];
};

/* Settle `n` bytes of permit p (complete or release). */
static void tt_settle(struct tt_thread *t, mcc_lane *l, struct mcc_permit_v1 *p, uint64_t n,
                      bool complete, int32_t status, uint64_t lat)
{
	uint64_t now = atomic_load(&t->u->now);
	t->settled += n;
	t->live -= n;
	if (complete) {
		struct mcc_completion_v1 wc = { sizeof(wc), status, 0, p->generation, n,
			                        lat ? now - lat : 0, lat ? now : 0, 0, 0 };
		run_complete(t->u, l, p, &wc);
	} else {
		t->bad += run_release(t->u, l, p, n, MCC_REL_NOT_POSTED) != 0;
	}
}

/* One phase of thread t's fixed sequence (seeded by thread and phase). */
static void tt_phase(struct tt_thread *t, mcc_lane *l, int phase)
{
	uint64_t s = 0x5DEECE66Dull * (uint64_t)(phase + 1) + (uint64_t)t->id * 7919 + 1;
	/* a phase's latency: three phases of eight queue (cuts), the rest not */
	uint64_t lat = phase % 8 >= 4 && phase % 8 < 7 ? 3000000 : 20000;
	int route = t->id == 0 ? 0 : 2; /* route 1 is shared */
	for (int i = 0; i < TT_OPS; i++) {
		uint64_t x = below(&s, 100);
		int k = (int)below(&s, 2 * TT_HELD);
		struct mcc_permit_v1 *p = &t->p[k];
		bool live = p->flags & MCC_PERMIT_F_LIVE;
		if (x < 50 && !live) {
			uint64_t bytes = 1 + below(&s, 64 * KiB);
			if (t->live + bytes > TT_MINW / 8)
				continue;
			int r = run_acquire(t->u, l, t->u->route[below(&s, 2) ? 1 : route], bytes, 1,
			                    NULL, p);
			if (r == MCC_ADMIT) {
				t->admitted += bytes;
				t->live += bytes;
			} else {
				t->refused++;
			}
		} else if (x < 80 && live) {
			uint64_t n = below(&s, 3) ? p->bytes : 1 + below(&s, p->bytes);
			tt_settle(t, l, p, n, true,
			          phase % 8 != 7 || below(&s, 50) ? IBV_WC_SUCCESS
			                                          : IBV_WC_RNR_RETRY_EXC_ERR,
			          lat);
		} else if (live) {
			tt_settle(t, l, p, 1 + below(&s, p->bytes), false, 0, 0);
		}
	}
}

static void *tt_main(void *arg)
{
	struct tt_thread *t = arg;
	mcc_lane *l = NULL;
	struct mcc_lane_desc_v1 ld = { sizeof(ld), 1 + (uint32_t)t->id, MCC_LANE_POST, 0 };
	t->bad += t->u->ops->lane_open(t->u->ctx, &ld, &l) != 0;
	pthread_barrier_wait(t->bar);
	for (int ph = 0; ph < TT_PHASES; ph++) {
		if (l)
			tt_phase(t, l, ph);
		pthread_barrier_wait(t->bar); /* main ticks, swaps the permits */
		pthread_barrier_wait(t->bar);
	}
	if (!l)
		return NULL;
	/* settle what this thread now holds (the other one's last phase) */
	for (int k = 0; k < 2 * TT_HELD; k++)
		if (t->p[k].flags & MCC_PERMIT_F_LIVE)
			tt_settle(t, l, &t->p[k], t->p[k].bytes, true, IBV_WC_SUCCESS, 0);
	t->u->ops->lane_close(t->u->ctx, l);
	return NULL;
}

/* Run the two threads on one path; the stats after each tick in st. */
static void tt_run(struct tt *tt, bool general, struct mcc_domain_stats_v1 st[TT_PHASES][4],
                   int *credit_phases)
{
	struct mcc_config_v1 cfg;
	th_cfg_defaults(&cfg);
	cfg.min_window_bytes = TT_MINW;
	cfg.max_window_bytes = 8 * TT_MINW;
	cfg.module_get = diff_module_get;
	g_min_admits = "4";
	memset(tt, 0, sizeof(*tt));
	run_init(&tt->u, &mcc_test_aimd_v1, general, &cfg, 1, 3, 0);
	CU_ASSERT_EQUAL_FATAL(pthread_barrier_init(&tt->bar, NULL, 3), 0);
	pthread_t th[2];
	for (int i = 0; i < 2; i++) {
		tt->t[i].u = &tt->u;
		tt->t[i].bar = &tt->bar;
		tt->t[i].id = i;
		for (int k = 0; k < 2 * TT_HELD; k++)
			tt->t[i].p[k] = (struct mcc_permit_v1)MCC_PERMIT_INIT;
		CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, tt_main, &tt->t[i]), 0);
	}
	pthread_barrier_wait(&tt->bar); /* lanes open */
	for (int ph = 0; ph < TT_PHASES; ph++) {
		pthread_barrier_wait(&tt->bar); /* the phase is done */
		run_tick(&tt->u, 1000000);
		st[ph][0] = run_stats(&tt->u, MCC_DOMAIN_DEVICE, tt->u.dev[0]);
		for (int k = 0; k < 3; k++)
			st[ph][1 + k] = run_stats(&tt->u, MCC_DOMAIN_ROUTE, tt->u.route[k]);
		if (!(atomic_load(&tt->u.dev[0]->d.ctl) & MCC_CTL_SLOWPATH))
			(*credit_phases)++; /* the next phase admits from lane credit */
		/* the cross-lane hand-off: each thread settles the other's permits */
		struct mcc_permit_v1 tmp[2 * TT_HELD];
		memcpy(tmp, tt->t[0].p, sizeof(tmp));
		memcpy(tt->t[0].p, tt->t[1].p, sizeof(tmp));
		memcpy(tt->t[1].p, tmp, sizeof(tmp));
		uint64_t lv = tt->t[0].live;
		tt->t[0].live = tt->t[1].live;
		tt->t[1].live = lv;
		pthread_barrier_wait(&tt->bar);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&tt->bar);
	run_tick(&tt->u, 1000000);
	uint64_t admitted = 0, settled = 0;
	for (int i = 0; i < 2; i++) {
		admitted += tt->t[i].admitted;
		settled += tt->t[i].settled;
		CU_ASSERT_EQUAL(tt->t[i].refused, 0);
		CU_ASSERT_EQUAL(tt->t[i].bad, 0);
		CU_ASSERT_EQUAL(tt->t[i].live, 0);
	}
	CU_ASSERT(admitted > 0);
	CU_ASSERT_EQUAL(admitted, settled);
	struct mcc_domain_stats_v1 d = run_stats(&tt->u, MCC_DOMAIN_DEVICE, tt->u.dev[0]);
	CU_ASSERT_EQUAL(d.inflight_bytes, 0);
	CU_ASSERT_EQUAL(d.double_release, 0);
	for (int k = 0; k < 3; k++) {
		struct mcc_domain_stats_v1 r = run_stats(&tt->u, MCC_DOMAIN_ROUTE, tt->u.route[k]);
		CU_ASSERT_EQUAL(r.inflight_bytes, 0);
		CU_ASSERT_EQUAL(r.double_release, 0);
	}
	run_fini(&tt->u, 1, 3);
}

static void test_diff_two_threads_same_windows_every_byte_settled_once(void)
{
	static struct tt tt;
	static struct mcc_domain_stats_v1 sa[TT_PHASES][4], sb[TT_PHASES][4];
	int ca = 0, cb = 0;
	tt_run(&tt, false, sa, &ca);
	tt_run(&tt, true, sb, &cb);
	struct diff df = { .seed = 0 };
	bool cut = false, grew = false;
	for (int ph = 0; ph < TT_PHASES; ph++) {
		df.step = ph;
		for (int k = 0; k < 4; k++)
			cmp_stats_one(&df, k ? "route" : "device", k ? k - 1 : 0, sa[ph][k], sb[ph][k],
			              true);
		cut |= sa[ph][2].window_cuts > 0;
		grew |= sa[ph][2].window_bytes > TT_MINW;
	}
	CU_ASSERT(!df.failed);
	CU_ASSERT(grew && cut); /* the shared route's window grew, and was cut */
	CU_ASSERT(ca > 0); /* the device was in credit mode */
	CU_ASSERT_EQUAL(ca, cb);
}

static CU_pSuite t_init_admission_diff_tests(void)
{
	CU_pSuite s = CU_add_suite("policy_admission_diff", NULL, NULL);
	if (!s)
		return NULL;
	MCC_CU_ADD(s, test_diff_fast_paths_agree_with_general_path_enforce);
	MCC_CU_ADD(s, test_diff_fast_paths_agree_with_general_path_observe);
	MCC_CU_ADD(s, test_diff_two_threads_same_windows_every_byte_settled_once);
	return s;
}

int main(int argc, char **argv)
{
	static const mcc_cu_suite_fn s[] = { t_init_admission_diff_tests };
	return mcc_cu_main(argc, argv, s, 1);
}
