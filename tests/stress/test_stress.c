/* SPDX-License-Identifier: MIT */
/*
 * test_stress.c - concurrency stress of a policy module loaded through
 * libmcc (mcc_instance_acquire), with a bounded amount of work: operation
 * counts, never time.
 *
 * Threads, all at once on shared device and route domains:
 *   - ST_POSTERS posting threads, each with its own POST lane: try_acquire on
 *     a random route; on ADMIT either a whole or partial post (the unposted
 *     part released NOT_POSTED), a post rejection or a generation change
 *     (whole release), then the permit is handed to the poller through a
 *     mutex-protected queue;
 *   - one poller thread with its own POLL lane: completes each permit with a
 *     seeded random WC status (errors, unknown statuses), sometimes in two
 *     WCs, sometimes with a stale generation, reports poller progress, and
 *     sometimes injects a deliberate double release (must be -EALREADY);
 *   - one monitor thread: tick() with the injected clock (it advances by
 *     ST_NS_PER_OP per posting operation), async events (QP/CQ/path/port/
 *     device errors and recoveries), endpoint rebuilds (new generations),
 *     route rebinds between the two devices;
 *   - one caller thread: task_query (minimal and detailed) and batch_free.
 *
 * Checked at the end (CUnit asserts only on the main thread):
 *   - every domain's inflight_bytes is 0 after all permits settled and all
 *     lanes closed;
 *   - no -EALREADY except the injected double releases, which all got it;
 *   - the window bound held at every sampled admission: the shadow bytes
 *     live in the domain right after the admission (incremented after the
 *     module reserved, decremented before it settles, so never above the
 *     module's own count) are <= max(window, this slice) + credit slack,
 *     sampled only when no slow-path mutation (tick, event, signal, rebind)
 *     ran between reading the window and the check (a seqlock);
 *   - task states are legal enum values.
 * Slack (modules/core/README.md, "Credit design"): the shared counter
 * includes every lane's cached credit and every increase of it is a CAS
 * against the bound, so live bytes <= max(window, one slice) at each
 * admission; the one documented exception is a tick racing a credit spend,
 * which may over-admit by at most (lanes - 1) x max slice for one epoch. The
 * test asserts that documented bound and separately counts (and prints) the
 * admissions that needed any of it: the strict count is expected to be 0.
 *
 * Faults and choices come from per-thread xorshift generators seeded from
 * MCC_STRESS_SEED (default fixed); thread interleaving is the scheduler's.
 * MCC_STRESS_OPS=N sets the posting operations per poster (benchmark mode:
 * prints operations per second; never used by `make check`).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "cu_driver.h"
#include "mcc_loader.h"

#define ST_POSTERS 4
#define ST_DEVS 2
#define ST_ROUTES 6
#define ST_DEFAULT_OPS 4000 /* per poster, make check */
#define ST_NS_PER_OP 2000   /* injected clock advance per posting operation */
#define ST_OPS_PER_MON 8    /* posting operations per monitor action */
#define ST_OPS_PER_QUERY 4  /* posting operations per caller query */
#define ST_LAG 64           /* posters may run this many operations ahead */
#define ST_QP_DEPTH 32      /* outstanding WRs per poster (a static QP limit) */
#define ST_MAX_SLICE (32ull << 20)

struct st_dev {
	mcc_device *h;
	_Atomic uint64_t shadow; /* live permit bytes admitted on this device */
	_Atomic uint64_t window; /* snapshot after the last slow-path mutation */
};

struct st_route {
	mcc_route *h;
	_Atomic int dev;          /* device the route is bound to now */
	_Atomic uint32_t gen;     /* host endpoint generation */
	_Atomic uint64_t shadow;  /* live permit bytes admitted on this route */
	_Atomic uint64_t window;
};

struct st_item {
	struct mcc_permit_v1 p;
	struct st_item *next;
	uint64_t live; /* bytes still reserved: shadow of p.bytes */
	int route, dev;
	int split; /* complete in two WCs */
	int poster;
};

struct st_ctx {
	mcc_instance *inst;
	const struct mcc_policy_v1 *ops;
	void *ctx;
	enum mcc_mode mode;
	uint64_t seed;
	unsigned ops_per_poster;
	struct st_dev devs[ST_DEVS];
	struct st_route routes[ST_ROUTES];
	mcc_lane *post_lanes[ST_POSTERS];
	mcc_lane *poll_lane;
	mcc_lane *mon_lane;

	pthread_mutex_t qlock;
	pthread_cond_t qcond;
	struct st_item *qhead, *qtail;
	int posters_left;

	_Atomic uint64_t seq;    /* seqlock of slow-path mutations (odd: running) */
	_Atomic uint64_t nops;   /* posting operations started (all posters) */
	_Atomic uint64_t mon_done, query_done; /* monitor actions, caller queries */
	_Atomic int mon_finished, caller_finished;
	uint64_t total_ops;
	_Atomic uint32_t outstanding[ST_POSTERS]; /* pushed, not yet completed */

	/* results, read by the main thread after join */
	_Atomic uint64_t admits, defers, avoids, errors, einval;
	_Atomic uint64_t bound_checks, bound_violations, slack_used, slack_max;
	_Atomic uint64_t injected_double, double_ok, unexpected_ealready, bad_rc;
	_Atomic uint64_t completions, releases, partials;
	_Atomic uint64_t bad_task_state, queries;
	_Atomic uint64_t ticks, events, signals, rebinds;
	char first_violation[256];
	pthread_mutex_t vlock;
};

static _Atomic uint64_t st_clock = 1000000000ull;

static uint64_t st_now(void *arg)
{
	(void)arg;
	return atomic_load(&st_clock);
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void st_log(void *arg, int level, const char *fmt, ...)
{
	(void)arg;
	if (level <= MCC_LOG_WARN && getenv("MCC_STRESS_VERBOSE")) {
		va_list ap;
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
}

static uint64_t st_rand(uint64_t *s)
{
	/* xorshift64* */
	uint64_t x = *s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1Dull;
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void st_violation(struct st_ctx *c, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&c->vlock);
	if (!c->first_violation[0]) {
		va_start(ap, fmt);
		vsnprintf(c->first_violation, sizeof(c->first_violation), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&c->vlock);
}

static int st_dev_index(struct st_ctx *c, const mcc_device *h)
{
	for (int d = 0; d < ST_DEVS; d++)
		if (c->devs[d].h == h)
			return d;
	return -1;
}

static uint64_t st_window(struct st_ctx *c, int kind, const void *dom)
{
	struct mcc_domain_stats_v1 st;

	memset(&st, 0, sizeof(st));
	st.struct_size = sizeof(st);
	if (c->ops->domain_stats(c->ctx, kind, dom, &st) != 0)
		return UINT64_MAX;
	return st.window_bytes;
}

/* Monitor: wrap one slow-path mutation in the seqlock and re-snapshot the
 * windows it may have changed. */
static void st_mutation_begin(struct st_ctx *c)
{
	atomic_fetch_add(&c->seq, 1); /* odd */
}

static void st_mutation_end(struct st_ctx *c)
{
	for (int d = 0; d < ST_DEVS; d++)
		atomic_store(&c->devs[d].window, st_window(c, MCC_DOMAIN_DEVICE, c->devs[d].h));
	for (int r = 0; r < ST_ROUTES; r++)
		atomic_store(&c->routes[r].window, st_window(c, MCC_DOMAIN_ROUTE, c->routes[r].h));
	atomic_fetch_add(&c->seq, 1); /* even */
}

static void st_push(struct st_ctx *c, struct st_item *it)
{
	pthread_mutex_lock(&c->qlock);
	it->next = NULL;
	if (c->qtail)
		c->qtail->next = it;
	else
		c->qhead = it;
	c->qtail = it;
	pthread_cond_signal(&c->qcond);
	pthread_mutex_unlock(&c->qlock);
}

/* Shadow bookkeeping: decrement BEFORE the module settles. */
static void st_unshadow(struct st_ctx *c, struct st_item *it, uint64_t bytes)
{
	atomic_fetch_sub(&c->routes[it->route].shadow, bytes);
	atomic_fetch_sub(&c->devs[it->dev].shadow, bytes);
	it->live -= bytes;
}

static void st_release(struct st_ctx *c, mcc_lane *lane, struct st_item *it, uint64_t bytes,
                       uint32_t reason)
{
	int rc;

	st_unshadow(c, it, bytes);
	rc = c->ops->release(lane, &it->p, bytes, reason);
	atomic_fetch_add(&c->releases, 1);
	if (rc == -EALREADY)
		atomic_fetch_add(&c->unexpected_ealready, 1);
	else if (rc != 0)
		atomic_fetch_add(&c->bad_rc, 1);
}

static void st_check_bound(struct st_ctx *c, const char *what, int idx, uint64_t after,
                           uint64_t window, uint64_t bytes)
{
	uint64_t strict = window > bytes ? window : bytes;
	uint64_t bound = strict + (ST_POSTERS - 1) * ST_MAX_SLICE; /* documented slack */

	atomic_fetch_add(&c->bound_checks, 1);
	if (after > strict) {
		uint64_t excess = after - strict, cur = atomic_load(&c->slack_max);

		atomic_fetch_add(&c->slack_used, 1);
		while (excess > cur && !atomic_compare_exchange_weak(&c->slack_max, &cur, excess))
			;
	}
	if (after > bound) {
		atomic_fetch_add(&c->bound_violations, 1);
		st_violation(c, "%s %d: %" PRIu64 " bytes live after admitting %" PRIu64
		                " under window %" PRIu64,
		             what, idx, after, bytes, window);
	}
}

struct st_poster_arg {
	struct st_ctx *c;
	int id;
};

static void *st_poster(void *argp)
{
	struct st_poster_arg *pa = argp;
	struct st_ctx *c = pa->c;
	mcc_lane *lane = c->post_lanes[pa->id];
	uint64_t rng = c->seed ^ (0x9e3779b97f4a7c15ull * (uint64_t)(pa->id + 1));
	static const uint64_t sizes[] = { 4096, 65536, 65536, 262144, 1 << 20, 4 << 20 };

	for (unsigned op = 0; op < c->ops_per_poster; op++) {
		uint64_t x;
		uint64_t n = atomic_fetch_add(&c->nops, 1);

		/* Bounded work, real interleaving: never run more than ST_LAG
		 * operations ahead of the monitor and caller, nor more than a QP
		 * depth of WRs ahead of the poller. Yielding, never sleeping. */
		while ((!atomic_load(&c->mon_finished) &&
		        n > atomic_load(&c->mon_done) * ST_OPS_PER_MON + ST_LAG) ||
		       (!atomic_load(&c->caller_finished) &&
		        n > atomic_load(&c->query_done) * ST_OPS_PER_QUERY + ST_LAG) ||
		       atomic_load(&c->outstanding[pa->id]) >= ST_QP_DEPTH)
			sched_yield();
		x = st_rand(&rng);
		int r = (int)(x % ST_ROUTES);
		struct st_route *rt = &c->routes[r];
		uint64_t bytes = (x >> 8) % 997 == 0 ? ST_MAX_SLICE : sizes[(x >> 16) % 6];
		struct mcc_task_ref_v1 task = { 1 + (uint64_t)pa->id * 1000 + op / 256, op % 64, 0, 0 };
		struct st_item *it = calloc(1, sizeof(*it));
		uint64_t s0, s1, wr, wd, after_r, after_d;
		uint32_t gen;
		int d, rc;

		if (!it) {
			atomic_fetch_add(&c->bad_rc, 1);
			break;
		}
		{
			struct mcc_permit_v1 init = MCC_PERMIT_INIT;
			it->p = init;
		}
		atomic_fetch_add(&st_clock, ST_NS_PER_OP);
		gen = atomic_load(&rt->gen);
		if ((x >> 24) % 50 == 0 && gen > 0)
			gen--; /* a post racing an endpoint rebuild: stale generation */

		/* No host lock: rebinds race with posts, as the ABI allows. */
		s0 = atomic_load(&c->seq);
		d = atomic_load(&rt->dev);
		wr = atomic_load(&rt->window);
		wd = atomic_load(&c->devs[d].window);
		rc = c->ops->try_acquire(lane, rt->h, bytes, gen, &task, &it->p);

		if (rc == MCC_DEFER || rc == MCC_AVOID) {
			atomic_fetch_add(rc == MCC_DEFER ? &c->defers : &c->avoids, 1);
			if (c->mode != MCC_MODE_ENFORCE)
				st_violation(c, "mode %d refused a post (%d)", c->mode, rc);
			if (it->p.bytes || (it->p.flags & MCC_PERMIT_F_LIVE))
				st_violation(c, "refused permit holds %" PRIu64 " bytes", it->p.bytes);
			free(it);
			continue;
		}
		if (rc < 0) {
			/* -EINVAL (e.g. a generation it refuses): pass-through. */
			atomic_fetch_add(rc == -EINVAL ? &c->einval : &c->bad_rc, 1);
			free(it);
			continue;
		}
		if (rc != MCC_ADMIT || it->p.bytes != bytes) {
			atomic_fetch_add(&c->bad_rc, 1);
			free(it);
			continue;
		}
		atomic_fetch_add(&c->admits, 1);
		it->route = r;
		it->dev = st_dev_index(c, it->p.device);
		if (it->dev < 0) {
			st_violation(c, "permit names an unknown device");
			it->dev = d;
		}
		it->live = bytes;
		after_r = atomic_fetch_add(&rt->shadow, bytes) + bytes;
		after_d = atomic_fetch_add(&c->devs[it->dev].shadow, bytes) + bytes;
		s1 = atomic_load(&c->seq);
		if (c->mode == MCC_MODE_ENFORCE && s0 == s1 && !(s0 & 1)) {
			st_check_bound(c, "route", r, after_r, wr, bytes);
			if (it->dev == d)
				st_check_bound(c, "device", d, after_d, wd, bytes);
		}

		switch ((x >> 32) % 20) {
		case 0: /* ibv_post_send rejected the WR */
			st_release(c, lane, it, bytes, MCC_REL_POST_REJECTED);
			if (c->ops->on_signal) {
				struct mcc_signal_v1 sig = { .struct_size = sizeof(sig),
					                     .kind = MCC_SIG_POST_REJECTED,
					                     .device = it->p.device,
					                     .route = rt->h,
					                     .task = task,
					                     .generation = gen,
					                     .error = -ENOMEM,
					                     .now_ns = 0 };
				c->ops->on_signal(c->ctx, &sig);
			}
			free(it);
			continue;
		case 1: /* the endpoint changed between acquire and post */
			st_release(c, lane, it, bytes, MCC_REL_GENERATION_CHANGED);
			free(it);
			continue;
		case 2:
		case 3: /* partial post: the unposted tail goes back */
			if (bytes > 4096) {
				st_release(c, lane, it, bytes / 2, MCC_REL_NOT_POSTED);
				atomic_fetch_add(&c->partials, 1);
			}
			break;
		case 4:
			it->split = 1;
			break;
		default:
			break;
		}
		it->poster = pa->id;
		atomic_fetch_add(&c->outstanding[pa->id], 1);
		st_push(c, it);
	}
	pthread_mutex_lock(&c->qlock);
	c->posters_left--;
	pthread_cond_broadcast(&c->qcond);
	pthread_mutex_unlock(&c->qlock);
	return NULL;
}

static int32_t st_wc_status(uint64_t x)
{
	static const int32_t errs[] = {
		IBV_WC_RETRY_EXC_ERR,  IBV_WC_RNR_RETRY_EXC_ERR, IBV_WC_WR_FLUSH_ERR,
		IBV_WC_REM_ACCESS_ERR, IBV_WC_LOC_LEN_ERR,       IBV_WC_FATAL_ERR,
		IBV_WC_RESP_TIMEOUT_ERR, IBV_WC_GENERAL_ERR,     4242 /* unknown */,
	};

	if (x % 1000 < 985)
		return IBV_WC_SUCCESS; /* 1.5% error completions */
	return errs[(x >> 8) % (sizeof(errs) / sizeof(errs[0]))];
}

static void *st_poller(void *argp)
{
	struct st_ctx *c = argp;
	uint64_t rng = c->seed ^ 0x5bd1e995ull;

	for (;;) {
		struct st_item *batch;
		uint32_t n = 0;

		pthread_mutex_lock(&c->qlock);
		while (!c->qhead && c->posters_left > 0)
			pthread_cond_wait(&c->qcond, &c->qlock);
		batch = c->qhead;
		c->qhead = c->qtail = NULL;
		pthread_mutex_unlock(&c->qlock);
		if (!batch)
			break; /* posters done and queue drained */
		while (batch) {
			struct st_item *it = batch;
			uint64_t x = st_rand(&rng);
			struct mcc_completion_v1 wc;
			int parts = it->split ? 2 : 1;

			batch = it->next;
			for (int k = 0; k < parts; k++) {
				memset(&wc, 0, sizeof(wc));
				wc.struct_size = sizeof(wc);
				wc.wc_status = k + 1 == parts ? st_wc_status(x) : IBV_WC_SUCCESS;
				wc.vendor_err = wc.wc_status ? (uint32_t)(x >> 40) : 0;
				wc.generation = (x >> 20) % 40 == 0 && it->p.generation > 0
				                        ? it->p.generation - 1 /* stale feedback */
				                        : it->p.generation;
				wc.bytes = k + 1 == parts ? it->live : it->live / 2;
				wc.qp_num = (uint32_t)it->route;
				st_unshadow(c, it, wc.bytes);
				c->ops->on_completion(c->poll_lane, &it->p, &wc);
				atomic_fetch_add(&c->completions, 1);
			}
			if ((x >> 48) % 25 == 0) {
				/* Deliberate double release of the settled permit. */
				int rc = c->ops->release(c->poll_lane, &it->p, 1 + (x >> 56),
				                         MCC_REL_RECLAIMED);
				atomic_fetch_add(&c->injected_double, 1);
				if (rc == -EALREADY)
					atomic_fetch_add(&c->double_ok, 1);
			}
			if (it->p.bytes != 0 || it->live != 0)
				st_violation(c, "permit not settled after its WCs (%" PRIu64 " left)",
				             it->p.bytes);
			atomic_fetch_sub(&c->outstanding[it->poster], 1);
			free(it);
			n++;
		}
		c->ops->poller_progress(c->poll_lane, c->devs[0].h, n);
		c->ops->poller_progress(c->poll_lane, c->devs[1].h, n);
	}
	return NULL;
}

static void st_async(struct st_ctx *c, uint64_t x)
{
	static const int32_t evs[] = {
		IBV_EVENT_QP_FATAL,  IBV_EVENT_QP_REQ_ERR,  IBV_EVENT_QP_ACCESS_ERR,
		IBV_EVENT_PATH_MIG_ERR, IBV_EVENT_CQ_ERR,   IBV_EVENT_PORT_ERR,
		IBV_EVENT_PORT_ACTIVE, IBV_EVENT_GID_CHANGE, IBV_EVENT_DEVICE_FATAL,
		IBV_EVENT_SRQ_ERR,   IBV_EVENT_WQ_FATAL,    77 /* unknown */,
	};
	int r = (int)((x >> 8) % ST_ROUTES);
	struct mcc_async_event_v1 ev;

	memset(&ev, 0, sizeof(ev));
	ev.struct_size = sizeof(ev);
	ev.event_type = evs[(x >> 16) % (sizeof(evs) / sizeof(evs[0]))];
	/* DEVICE_FATAL is rare: it isolates a whole device. */
	if (ev.event_type == IBV_EVENT_DEVICE_FATAL && (x >> 40) % 8)
		ev.event_type = IBV_EVENT_PORT_ACTIVE;
	ev.device = c->devs[atomic_load(&c->routes[r].dev)].h;
	ev.route = c->routes[r].h;
	ev.port_num = 1;
	ev.cq_id = (uint32_t)(r % 2);
	ev.qp_num = (uint32_t)r;
	ev.generation = atomic_load(&c->routes[r].gen);
	ev.now_ns = st_now(NULL);
	c->ops->on_async_event(c->ctx, &ev);
}

static void st_rebuild(struct st_ctx *c, uint64_t x)
{
	int r = (int)((x >> 8) % ST_ROUTES);
	struct mcc_signal_v1 sig;

	memset(&sig, 0, sizeof(sig));
	sig.struct_size = sizeof(sig);
	sig.kind = MCC_SIG_ENDPOINT_REBUILT;
	sig.route = c->routes[r].h;
	sig.device = c->devs[atomic_load(&c->routes[r].dev)].h;
	sig.generation = atomic_fetch_add(&c->routes[r].gen, 1) + 1;
	sig.now_ns = st_now(NULL);
	c->ops->on_signal(c->ctx, &sig);
}

static void st_other_signal(struct st_ctx *c, uint64_t x)
{
	static const uint32_t kinds[] = { MCC_SIG_SOFT_DEADLINE, MCC_SIG_METADATA_STALE,
		                          MCC_SIG_BACKLOG, MCC_SIG_DEVICE_TELEMETRY,
		                          MCC_SIG_CANCELLED, MCC_SIG_CM_EVENT };
	int r = (int)((x >> 8) % ST_ROUTES);
	struct mcc_signal_v1 sig;

	memset(&sig, 0, sizeof(sig));
	sig.struct_size = sizeof(sig);
	sig.kind = kinds[(x >> 16) % 6];
	sig.route = c->routes[r].h;
	sig.device = c->devs[atomic_load(&c->routes[r].dev)].h;
	sig.generation = atomic_load(&c->routes[r].gen);
	sig.task.batch_id = 1 + (x >> 24) % 4000;
	sig.task.task_id = (x >> 40) % 64;
	sig.raw = MCC_RDMA_CM_EVENT_DISCONNECTED;
	sig.value0 = (x >> 20) & 0xffffff;
	sig.value1 = sig.value0 / 2;
	sig.now_ns = st_now(NULL);
	c->ops->on_signal(c->ctx, &sig);
}

/* The monitor performs exactly total_ops / ST_OPS_PER_MON actions, action i
 * once i * ST_OPS_PER_MON posting operations have started: a bounded,
 * seed-determined number of ticks, events, rebuilds, signals and rebinds,
 * interleaved with the data path. */
static void *st_monitor(void *argp)
{
	struct st_ctx *c = argp;
	uint64_t rng = c->seed ^ 0xc2b2ae3d27d4eb4full;
	const struct mcc_config *cfg = mcc_instance_config(c->inst);
	uint64_t epoch_ns = (uint64_t)cfg->policy.epoch_us * 1000;
	uint64_t last_tick = 0, actions = c->total_ops / ST_OPS_PER_MON;

	for (uint64_t i = 0; i < actions; i++) {
		uint64_t now, x;

		while (atomic_load(&c->nops) < i * ST_OPS_PER_MON)
			sched_yield();
		now = atomic_load(&st_clock);
		x = st_rand(&rng);
		st_mutation_begin(c);
		if (now - last_tick >= epoch_ns) {
			c->ops->tick(c->ctx, now);
			last_tick = now;
			atomic_fetch_add(&c->ticks, 1);
		}
		if (x % 48 == 0) {
			st_async(c, x);
			atomic_fetch_add(&c->events, 1);
		} else if (x % 16 == 1 || x % 16 == 2) {
			st_rebuild(c, x);
			atomic_fetch_add(&c->signals, 1);
		} else if (x % 16 == 3) {
			st_other_signal(c, x);
			atomic_fetch_add(&c->signals, 1);
		} else if (x % 64 == 4) {
			/* Local-NIC handoff: rebind the route to the other device. */
			int r = (int)((x >> 8) % ST_ROUTES);
			struct st_route *rt = &c->routes[r];
			int nd = 1 - atomic_load(&rt->dev);

			if (c->ops->route_rebind(c->ctx, rt->h, c->devs[nd].h, 1, (uint32_t)nd) == 0)
				atomic_store(&rt->dev, nd);
			atomic_fetch_add(&c->rebinds, 1);
		}
		st_mutation_end(c);
		atomic_fetch_add(&c->mon_done, 1);
	}
	atomic_store(&c->mon_finished, 1); /* release any waiting poster */
	return NULL;
}

/* The caller: one query per ST_OPS_PER_QUERY posting operations. */
static void *st_caller(void *argp)
{
	struct st_ctx *c = argp;
	uint64_t rng = c->seed ^ 0x27d4eb2f165667c5ull;
	uint64_t queries = c->total_ops / ST_OPS_PER_QUERY;

	for (uint64_t i = 0; i < queries; i++) {
		uint64_t x = st_rand(&rng);
		struct mcc_task_ref_v1 t = { 1 + (x % ST_POSTERS) * 1000 + (x >> 8) % 32,
			                     (x >> 16) % 64, 0, 0 };
		struct mcc_task_detail_v1 dt;
		int rc;

		while (atomic_load(&c->nops) < i * ST_OPS_PER_QUERY)
			sched_yield();
		memset(&dt, 0, sizeof(dt));
		dt.struct_size = sizeof(dt);
		rc = c->ops->task_query(c->ctx, &t, (uint32_t)((x >> 24) & 3), &dt);
		atomic_fetch_add(&c->queries, 1);
		if (rc >= 0 && (rc > MCC_TASK_UNKNOWN || dt.state != (uint32_t)rc ||
		                dt.reason >= MCC_REASON_COUNT_ || dt.scope > MCC_SCOPE_DEVICE ||
		                !memchr(dt.path, 0, sizeof(dt.path))))
			atomic_fetch_add(&c->bad_task_state, 1);
		if ((x >> 32) % 16 == 0)
			c->ops->batch_free(c->ctx, t.batch_id);
		atomic_fetch_add(&c->query_done, 1);
	}
	atomic_store(&c->caller_finished, 1);
	return NULL;
}

static unsigned st_ops_from_env(void)
{
	const char *s = getenv("MCC_STRESS_OPS");
	char *end;
	unsigned long v;

	if (!s || !*s)
		return ST_DEFAULT_OPS;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v == 0 || v > 1000000000ul)
		return ST_DEFAULT_OPS;
	return (unsigned)v;
}

static uint64_t st_seed_from_env(void)
{
	const char *s = getenv("MCC_STRESS_SEED");
	uint64_t v = s && *s ? strtoull(s, NULL, 0) : 0;

	return v ? v : 0x6d63632d73747273ull;
}

static int st_write_ini(char *path, size_t len, const char *mode)
{
	const char *moddir = getenv("MCC_TEST_MODULE_DIR");
	FILE *f;
	int fd;

	snprintf(path, len, "/tmp/mcc-stress-XXXXXX.ini");
	fd = mkstemps(path, 4);
	if (fd < 0)
		return -1;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		return -1;
	}
	fprintf(f,
	        "[policy]\nmode = %s\n%s%s\n"
	        "[controller]\n"
	        "min_window_bytes = 131072\n"
	        "max_window_bytes = 16777216\n"
	        "hard_error_threshold = 3\n"
	        "cooldown_ms = 2\n"
	        "cooldown_max_ms = 20\n"
	        "epoch_us = 100\n"
	        "evidence_tasks = 1024\n",
	        mode, moddir ? "module_dir = " : "", moddir ? moddir : "");
	fclose(f);
	return 0;
}

static void st_run(const char *mode_name, enum mcc_mode want_mode)
{
	static struct st_ctx C; /* big; zeroed per run */
	struct st_ctx *c = &C;
	struct mcc_loader_opts opts;
	char ini[64];
	pthread_t posters[ST_POSTERS], poller, monitor, caller;
	struct st_poster_arg pa[ST_POSTERS];
	struct timespec t0, t1;
	int rc;

	memset(c, 0, sizeof(*c));
	c->seed = st_seed_from_env();
	c->ops_per_poster = st_ops_from_env();
	c->total_ops = (uint64_t)c->ops_per_poster * ST_POSTERS;
	pthread_mutex_init(&c->qlock, NULL);
	pthread_cond_init(&c->qcond, NULL);
	pthread_mutex_init(&c->vlock, NULL);
	c->posters_left = ST_POSTERS;

	CU_ASSERT_FATAL(st_write_ini(ini, sizeof(ini), mode_name) == 0);
	memset(&opts, 0, sizeof(opts));
	opts.struct_size = sizeof(opts);
	opts.max_lanes = ST_POSTERS + 2;
	opts.engine = "te";
	opts.ini_path = ini;
	opts.host_caps = MCC_HOST_CAP_ASYNC_EVENTS | MCC_HOST_CAP_CQ_IDENTITY |
	                 MCC_HOST_CAP_POLLER_PROGRESS;
	opts.now_ns = st_now;
	opts.log = st_log;
	opts.module_dir = getenv("MCC_TEST_MODULE_DIR");
	opts.ignore_env = 1;
	rc = mcc_instance_acquire(&opts, &c->inst);
	unlink(ini);
	if (rc != 0)
		fprintf(stderr, "mcc_instance_acquire(%s): %d %s\n", mode_name, rc,
		        c->inst ? mcc_instance_error(c->inst) : "");
	CU_ASSERT_FATAL(rc == 0);
	CU_ASSERT_FATAL(mcc_instance_mode(c->inst) == want_mode);
	c->ops = mcc_instance_ops(c->inst);
	c->ctx = mcc_instance_ctx(c->inst);
	c->mode = want_mode;

	for (int l = 0; l < ST_POSTERS + 2; l++) {
		struct mcc_lane_desc_v1 ld = { sizeof(ld), (uint32_t)l,
			                       l < ST_POSTERS ? MCC_LANE_POST
			                                      : l == ST_POSTERS ? MCC_LANE_POLL
			                                                        : MCC_LANE_MONITOR,
			                       0 };
		mcc_lane **dst = l < ST_POSTERS ? &c->post_lanes[l]
		                 : l == ST_POSTERS ? &c->poll_lane
		                                   : &c->mon_lane;
		CU_ASSERT_FATAL(c->ops->lane_open(c->ctx, &ld, dst) == 0);
	}
	for (int d = 0; d < ST_DEVS; d++) {
		char name[16];
		struct mcc_device_desc_v1 dd = { sizeof(dd), (uint32_t)d, name, 1, 0, 400000000000ull, 0 };
		snprintf(name, sizeof(name), "mlx5_%d", d);
		CU_ASSERT_FATAL(c->ops->device_open(c->ctx, &dd, &c->devs[d].h) == 0);
	}
	for (int r = 0; r < ST_ROUTES; r++) {
		char peer[48];
		int d = r % ST_DEVS;
		struct mcc_route_desc_v1 rd = { sizeof(rd), 1, (uint32_t)d, 1, (uint64_t)r + 100, peer,
			                        (uint64_t)r / 2, 0 };
		snprintf(peer, sizeof(peer), "10.0.0.%d:15000@mlx5_%d", r / 2, r % 2);
		atomic_store(&c->routes[r].dev, d);
		atomic_store(&c->routes[r].gen, 1);
		CU_ASSERT_FATAL(c->ops->route_open(c->ctx, c->devs[d].h, &rd, &c->routes[r].h) == 0);
	}
	st_mutation_begin(c);
	st_mutation_end(c); /* first window snapshot */

	clock_gettime(CLOCK_MONOTONIC, &t0); /* reported only, never asserted */
	CU_ASSERT_FATAL(pthread_create(&poller, NULL, st_poller, c) == 0);
	CU_ASSERT_FATAL(pthread_create(&monitor, NULL, st_monitor, c) == 0);
	CU_ASSERT_FATAL(pthread_create(&caller, NULL, st_caller, c) == 0);
	for (int i = 0; i < ST_POSTERS; i++) {
		pa[i].c = c;
		pa[i].id = i;
		CU_ASSERT_FATAL(pthread_create(&posters[i], NULL, st_poster, &pa[i]) == 0);
	}
	for (int i = 0; i < ST_POSTERS; i++)
		pthread_join(posters[i], NULL);
	pthread_join(poller, NULL);
	pthread_join(monitor, NULL);
	pthread_join(caller, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);

	/* Quiescent: every permit was settled by its WCs or releases. */
	for (int r = 0; r < ST_ROUTES; r++)
		CU_ASSERT_EQUAL(atomic_load(&c->routes[r].shadow), 0);
	for (int d = 0; d < ST_DEVS; d++)
		CU_ASSERT_EQUAL(atomic_load(&c->devs[d].shadow), 0);
	for (int l = 0; l < ST_POSTERS; l++)
		c->ops->lane_close(c->ctx, c->post_lanes[l]);
	c->ops->lane_close(c->ctx, c->poll_lane);
	c->ops->lane_close(c->ctx, c->mon_lane);
	printf("\n  %s: final route states:", mode_name);
	for (int r = 0; r < ST_ROUTES; r++) {
		struct mcc_domain_stats_v1 st = { .struct_size = sizeof(st) };
		CU_ASSERT_EQUAL(c->ops->domain_stats(c->ctx, MCC_DOMAIN_ROUTE, c->routes[r].h, &st), 0);
		printf(" %s(q%" PRIu64 ",p%" PRIu64 ")", mcc_path_state_name((int)st.state),
		       st.quarantines, st.probes);
		if (st.inflight_bytes)
			fprintf(stderr, "route %d: %" PRIu64 " bytes in flight at the end\n", r,
			        st.inflight_bytes);
		CU_ASSERT_EQUAL(st.inflight_bytes, 0);
		CU_ASSERT(st.state <= MCC_PATH_PROBING);
	}
	for (int d = 0; d < ST_DEVS; d++) {
		struct mcc_domain_stats_v1 st = { .struct_size = sizeof(st) };
		CU_ASSERT_EQUAL(c->ops->domain_stats(c->ctx, MCC_DOMAIN_DEVICE, c->devs[d].h, &st), 0);
		if (st.inflight_bytes)
			fprintf(stderr, "device %d: %" PRIu64 " bytes in flight at the end\n", d,
			        st.inflight_bytes);
		CU_ASSERT_EQUAL(st.inflight_bytes, 0);
	}

	printf("\n  %s: seed %#" PRIx64 ", %u ops x %d posters: %" PRIu64 " admit %" PRIu64
	       " defer %" PRIu64 " avoid %" PRIu64 " einval; %" PRIu64 " completions, %" PRIu64
	       " releases (%" PRIu64 " partial), %" PRIu64 "/%" PRIu64
	       " injected double releases got -EALREADY; %" PRIu64 " window checks (%" PRIu64
	       " used the documented slack, max %" PRIu64 " bytes); %" PRIu64
	       " ticks %" PRIu64 " events %" PRIu64 " signals %" PRIu64 " rebinds %" PRIu64
	       " queries\n",
	       mode_name, c->seed, c->ops_per_poster, ST_POSTERS, atomic_load(&c->admits),
	       atomic_load(&c->defers), atomic_load(&c->avoids), atomic_load(&c->einval),
	       atomic_load(&c->completions), atomic_load(&c->releases), atomic_load(&c->partials),
	       atomic_load(&c->double_ok), atomic_load(&c->injected_double),
	       atomic_load(&c->bound_checks), atomic_load(&c->slack_used),
	       atomic_load(&c->slack_max), atomic_load(&c->ticks), atomic_load(&c->events),
	       atomic_load(&c->signals), atomic_load(&c->rebinds), atomic_load(&c->queries));
	if (getenv("MCC_STRESS_OPS")) {
		double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
		printf("  benchmark: %.3f s, %.0f posting ops/s\n", s,
		       s > 0 ? (double)c->ops_per_poster * ST_POSTERS / s : 0.0);
	}
	if (c->first_violation[0])
		fprintf(stderr, "  first violation: %s\n", c->first_violation);

	CU_ASSERT_EQUAL(atomic_load(&c->bad_rc), 0);
	CU_ASSERT_EQUAL(atomic_load(&c->unexpected_ealready), 0);
	CU_ASSERT_EQUAL(atomic_load(&c->double_ok), atomic_load(&c->injected_double));
	CU_ASSERT_EQUAL(atomic_load(&c->bound_violations), 0);
	CU_ASSERT_EQUAL(atomic_load(&c->bad_task_state), 0);
	CU_ASSERT(c->first_violation[0] == 0);
	CU_ASSERT(atomic_load(&c->admits) > 0);
	CU_ASSERT(atomic_load(&c->injected_double) > 0);
	/* The faults really happened, concurrently with the data path. */
	CU_ASSERT(atomic_load(&c->ticks) > 0);
	CU_ASSERT(atomic_load(&c->events) > 0);
	CU_ASSERT(atomic_load(&c->signals) > 0);
	CU_ASSERT(atomic_load(&c->rebinds) > 0);
	CU_ASSERT(atomic_load(&c->queries) == c->total_ops / ST_OPS_PER_QUERY);
	if (want_mode == MCC_MODE_ENFORCE)
		CU_ASSERT(atomic_load(&c->bound_checks) > 0);

	for (int r = 0; r < ST_ROUTES; r++) {
		c->ops->route_close(c->ctx, c->routes[r].h);
	}
	for (int d = 0; d < ST_DEVS; d++)
		c->ops->device_close(c->ctx, c->devs[d].h);
	mcc_instance_release(c->inst);
	pthread_mutex_destroy(&c->qlock);
	pthread_cond_destroy(&c->qcond);
	pthread_mutex_destroy(&c->vlock);
}

static void test_stress_enforce_concurrent_lanes_settle_every_byte(void)
{
	st_run("enforce", MCC_MODE_ENFORCE);
}

static void test_stress_observe_concurrent_lanes_settle_every_byte(void)
{
	st_run("observe", MCC_MODE_OBSERVE);
}

MCC_CU_SUITE(t_init_stress_tests, "stress", NULL, NULL,
             test_stress_enforce_concurrent_lanes_settle_every_byte,
             test_stress_observe_concurrent_lanes_settle_every_byte)

MCC_CU_MAIN(t_init_stress_tests)
