/* SPDX-License-Identifier: MIT */
/*
 * engine.c - the engine SDK (mcc_engine.h): the engine and its instance,
 * the process clock, the process-wide lane registry, the tick driver, DEFER
 * parking and batch lifetimes. Routes and async routing: engine_route.c.
 */
#define _GNU_SOURCE
#include "engine_internal.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define RLX memory_order_relaxed

/* ------------------------------------------------------------ process state */

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned g_engines;              /* open engines */
static mcc_engine *g_open;              /* the open engines, by reg_next */
static struct mcc_engine_hub *g_hubs;   /* one per instance in use */

struct lane_slot {
	uint64_t ref;      /* 0: free */
	mcc_lane *lane;    /* NULL while opening or closing */
	mcc_engine *owner;
	uint32_t gen;      /* of the last reference handed out */
};
static struct lane_slot g_lanes[MCC_ENGINE_LANES_MAX];

/* The process clock: the installed engine clock plus a forward-only offset. */
static struct {
	uint64_t (*fn)(void *);
	void *arg;
	_Atomic uint64_t offset, last, steps_back, held;
	pthread_mutex_t mu;
} g_clk = {.mu = PTHREAD_MUTEX_INITIALIZER};

static uint64_t clock_monotonic(void *arg)
{
	(void)arg;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The host table's now_ns of every SDK engine's instance. */
static uint64_t clock_now(void *unused)
{
	(void)unused;
	uint64_t raw = g_clk.fn(g_clk.arg);
	uint64_t v = raw + atomic_load_explicit(&g_clk.offset, memory_order_acquire);
	uint64_t l = atomic_load_explicit(&g_clk.last, RLX);
	while (v > l)
		if (atomic_compare_exchange_weak_explicit(&g_clk.last, &l, v, RLX, RLX))
			return v;
	if (l - v <= MCC_ENGINE_CLOCK_SLACK_NS) { /* jitter or a small step: hold */
		if (l != v)
			atomic_fetch_add_explicit(&g_clk.held, 1, RLX);
		return l;
	}
	/* a large step back: re-anchor so time goes on from `last` */
	pthread_mutex_lock(&g_clk.mu);
	uint64_t off = atomic_load_explicit(&g_clk.offset, RLX);
	v = raw + off;
	l = atomic_load_explicit(&g_clk.last, RLX);
	if (v < l && l - v > MCC_ENGINE_CLOCK_SLACK_NS) {
		atomic_store_explicit(&g_clk.offset, off + (l - v), memory_order_release);
		atomic_fetch_add_explicit(&g_clk.steps_back, 1, RLX);
	}
	pthread_mutex_unlock(&g_clk.mu);
	return l;
}

uint64_t mcc_engine_now(const mcc_engine *e)
{
	(void)e;
	return clock_now(NULL);
}

/* ------------------------------------------------------------------ engine */

/* Under g_mu: the link holding e in the open list, or NULL. */
static mcc_engine **engine_link(const mcc_engine *e)
{
	for (mcc_engine **pp = &g_open; *pp; pp = &(*pp)->reg_next)
		if (*pp == e)
			return pp;
	return NULL;
}

int mcc__engine_live(const mcc_engine *e)
{
	pthread_mutex_lock(&g_mu);
	int live = e && engine_link(e) != NULL;
	pthread_mutex_unlock(&g_mu);
	return live;
}

void mcc__engine_misuse(const char *call, const void *e)
{
	fprintf(stderr,
	        "mcc: fatal: %s: %p is not an open engine (used after mcc_engine_close, or "
	        "never opened)\n",
	        call, e);
	abort();
}

static struct mcc_engine_hub *hub_get(mcc_engine *e)
{
	for (struct mcc_engine_hub *h = g_hubs; h; h = h->next)
		if (h->inst == e->inst) {
			h->refs++;
			return h;
		}
	struct mcc_engine_hub *h = aligned_alloc(64, sizeof(*h));
	if (!h)
		return NULL;
	memset(h, 0, sizeof(*h));
	h->inst = e->inst;
	h->refs = 1;
	h->ops = e->ops;
	h->ctx = e->ctx;
	const struct mcc_config *cfg = mcc_instance_config(e->inst);
	h->epoch_ns = cfg && cfg->policy.epoch_us ? (uint64_t)cfg->policy.epoch_us * 1000u : 1000000u;
	h->next = g_hubs;
	g_hubs = h;
	return h;
}

static void hub_put(struct mcc_engine_hub *h)
{
	if (--h->refs)
		return;
	for (struct mcc_engine_hub **pp = &g_hubs; *pp; pp = &(*pp)->next)
		if (*pp == h) {
			*pp = h->next;
			break;
		}
	free(h);
}

static void *tick_main(void *arg)
{
	mcc_engine *e = arg;
	pthread_mutex_lock(&e->thr_mu);
	while (!e->thr_stop) {
		pthread_mutex_unlock(&e->thr_mu);
		mcc_engine_tick_if_due(e, mcc_engine_now(e));
		pthread_mutex_lock(&e->thr_mu);
		if (e->thr_stop)
			break;
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		uint64_t ns = (uint64_t)ts.tv_nsec + e->hub->epoch_ns;
		ts.tv_sec += (time_t)(ns / 1000000000u);
		ts.tv_nsec = (long)(ns % 1000000000u);
		pthread_cond_timedwait(&e->thr_cv, &e->thr_mu, &ts);
	}
	pthread_mutex_unlock(&e->thr_mu);
	return NULL;
}

/* Free what open built, in reverse; the engine holds nothing of the process
 * state except (when counted) one engine count and (when set) its hub. */
static void engine_free(mcc_engine *e, int counted)
{
	pthread_mutex_lock(&g_mu);
	if (e->hub)
		hub_put(e->hub);
	if (counted)
		g_engines--;
	pthread_mutex_unlock(&g_mu);
	if (e->inst)
		mcc_instance_release(e->inst);
	atomic_store_explicit(&e->magic, MCC_ENG_MAGIC_DEAD, memory_order_release);
	pthread_mutex_destroy(&e->thr_mu);
	pthread_cond_destroy(&e->thr_cv);
	pthread_mutex_destroy(&e->rt_mu);
	pthread_mutex_destroy(&e->as_mu);
	pthread_mutex_destroy(&e->b_mu);
	pthread_mutex_destroy(&e->dv_mu);
	free(e);
}

int mcc_engine_open(const struct mcc_engine_opts *opts, mcc_engine **out)
{
	struct mcc_engine_opts o;
	if (!out)
		return -EINVAL;
	*out = NULL;
	/* whole or refused: never a part of a struct (mcc_engine.h) */
	memset(&o, 0, sizeof(o));
	o.struct_size = sizeof(o);
	if (opts && opts->struct_size < MCC_ENGINE_OPTS_V1_0_SIZE)
		return -EINVAL;
	if (opts)
		memcpy(&o, opts, opts->struct_size < sizeof(o) ? opts->struct_size : sizeof(o));
	if (o.tick > MCC_ENGINE_TICK_POLL)
		return -EINVAL;
	mcc_engine *e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	atomic_init(&e->magic, MCC_ENG_MAGIC_LIVE);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&e->thr_cv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&e->thr_mu, NULL);
	pthread_mutex_init(&e->rt_mu, NULL);
	pthread_mutex_init(&e->as_mu, NULL);
	pthread_mutex_init(&e->b_mu, NULL);
	pthread_mutex_init(&e->dv_mu, NULL);

	struct mcc_loader_opts lo;
	const struct mcc_loader_opts *lp = &lo;
	memset(&lo, 0, sizeof(lo));
	if (o.loader && o.loader->struct_size < MCC_LOADER_OPTS_V1_0_SIZE)
		lp = o.loader; /* refused whole by the loader, with its message */
	else if (o.loader)
		memcpy(&lo, o.loader,
		       o.loader->struct_size < sizeof(lo) ? o.loader->struct_size : sizeof(lo));
	lo.struct_size = sizeof(lo);
	lo.now_ns = clock_now;
	lo.clock_arg = NULL;
	if (!lo.max_lanes)
		lo.max_lanes = MCC_ENGINE_LANES_MAX;
	e->log = lo.log ? lo.log : mcc__log_stderr; /* libmcc's, MC_ADAPTIVE_CC_LOG_LEVEL */
	e->log_arg = lo.log ? lo.log_arg : NULL;
	/* the live view's file name: [A-Za-z0-9_-], "engine" when none */
	snprintf(e->name, sizeof(e->name), "%s", lo.engine && *lo.engine ? lo.engine : "engine");
	for (char *c = e->name; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
		      *c == '_' || *c == '-'))
			*c = '_';
	uint64_t (*fn)(void *) = o.now_ns ? o.now_ns : clock_monotonic;
	void *arg = o.now_ns ? o.clock_arg : NULL;

	pthread_mutex_lock(&g_mu);
	int other_clock = 0;
	if (g_engines++ == 0) { /* first engine: install its clock */
		g_clk.fn = fn;
		g_clk.arg = arg;
		atomic_store(&g_clk.offset, 0);
		atomic_store(&g_clk.last, 0);
	} else {
		other_clock = g_clk.fn != fn || g_clk.arg != arg;
	}
	pthread_mutex_unlock(&g_mu);
	if (other_clock)
		MCC_ENG_LOG(e, MCC_LOG_WARN,
		            "engine '%s': another engine's clock is the process clock; this "
		            "engine's clock is not used",
		            lo.engine ? lo.engine : "unknown");

	int rc = mcc_instance_acquire(lp, &e->inst);
	if (!e->inst) {
		engine_free(e, 1);
		return -ENOMEM;
	}
	e->ops = mcc_instance_ops(e->inst);
	e->ctx = mcc_instance_ctx(e->inst);
	int on = mcc_instance_mode(e->inst) != MCC_MODE_OFF;
	e->sig_mask = on ? mcc_instance_signal_mask(e->inst) : 0;
	e->want_async = on && mcc_instance_wants_async_events(e->inst);
	const struct mcc_config *cfg = mcc_instance_config(e->inst);
	e->qos = cfg && cfg->qos_enabled;
	e->base_rtt_ns = (uint64_t)mcc__instance_base_rtt_us(e->inst) * 1000;
	e->next_route_id = 1;
	e->next_cq_id = 1;
	pthread_mutex_lock(&g_mu);
	e->hub = hub_get(e);
	pthread_mutex_unlock(&g_mu);
	if (!e->hub) {
		engine_free(e, 1);
		return -ENOMEM;
	}
	/* mode off has nothing to tick: no thread waking every epoch */
	if (o.tick == MCC_ENGINE_TICK_THREAD && on) {
		if (pthread_create(&e->thr, NULL, tick_main, e) != 0) {
			engine_free(e, 1);
			return -EAGAIN;
		}
		e->thr_on = 1;
	}
	pthread_mutex_lock(&g_mu);
	e->reg_next = g_open;
	g_open = e;
	pthread_mutex_unlock(&g_mu);
	/* the live view, when configured (any mode: an operator sees "off"),
	 * with its own thread: a slow publish never delays a tick */
	mcc__engine_stat_open(e);
	*out = e;
	return rc;
}

static void lanes_close_all(mcc_engine *e);

void mcc_engine_close(mcc_engine *e)
{
	if (!e)
		return;
	/* off the open list first: a second close, or a call racing this one,
	 * finds nothing (-EBADF) instead of a half-freed engine */
	pthread_mutex_lock(&g_mu);
	mcc_engine **pp = engine_link(e);
	if (pp)
		*pp = e->reg_next;
	pthread_mutex_unlock(&g_mu);
	if (!pp) {
		mcc__log_stderr(NULL, MCC_LOG_ERROR,
		           "mcc_engine_close: %p is not an open engine (closed twice, or never "
		           "opened); ignored",
		           (void *)e);
		return;
	}
	if (e->thr_on) {
		pthread_mutex_lock(&e->thr_mu);
		e->thr_stop = 1;
		pthread_cond_signal(&e->thr_cv);
		pthread_mutex_unlock(&e->thr_mu);
		pthread_join(e->thr, NULL);
	}
	mcc__engine_stat_close(e);
	lanes_close_all(e);
	mcc__engine_routes_fini(e);
	mcc__engine_stat_routes_fini(e);
	mcc__engine_devices_fini(e);
	pthread_mutex_lock(&e->b_mu);
	mcc__eng_map_clear(&e->batches);
	pthread_mutex_unlock(&e->b_mu);
	engine_free(e, 1);
}

mcc_instance *mcc_engine_instance(const mcc_engine *e)
{
	mcc__engine_check_fast(e, "mcc_engine_instance");
	return e->inst;
}

const struct mcc_policy_v1 *mcc_engine_ops(const mcc_engine *e)
{
	mcc__engine_check_fast(e, "mcc_engine_ops");
	return e->ops;
}

void *mcc_engine_ctx(const mcc_engine *e)
{
	mcc__engine_check_fast(e, "mcc_engine_ctx");
	return e->ctx;
}

/* ------------------------------------------------------------------- lanes */

#define REF_ID(ref) ((uint32_t)((ref) & 0xffffffffu) - 1u)

int mcc_engine_lane_open(mcc_engine *e, uint32_t role, mcc_lane_ref *ref, mcc_lane **lane)
{
	if (!e || !ref || !lane)
		return -EINVAL;
	*ref = 0;
	*lane = NULL;
	pthread_mutex_lock(&g_mu);
	if (!engine_link(e)) {
		pthread_mutex_unlock(&g_mu);
		return -EBADF;
	}
	uint32_t id = 0;
	while (id < MCC_ENGINE_LANES_MAX && g_lanes[id].ref)
		id++;
	if (id == MCC_ENGINE_LANES_MAX) {
		pthread_mutex_unlock(&g_mu);
		MCC_ENG_LOG(e, MCC_LOG_ERROR, "lane registry exhausted: %u lanes open in the process",
		            MCC_ENGINE_LANES_MAX);
		return -ENOSPC;
	}
	/* the policy takes ids below the max_lanes it was loaded with */
	uint32_t cap = mcc_instance_mode(e->inst) != MCC_MODE_OFF
	                   ? mcc__instance_max_lanes(e->inst)
	                   : MCC_ENGINE_LANES_MAX;
	if (id >= cap) {
		pthread_mutex_unlock(&g_mu);
		MCC_ENG_LOG(e, MCC_LOG_ERROR,
		            "lane_open: lane id %u would exceed max_lanes %u of the policy instance "
		            "(mcc_loader_opts.max_lanes of the engine that loaded it; 0 means %u "
		            "through the SDK): close a lane or raise max_lanes",
		            id, cap, MCC_ENGINE_LANES_MAX);
		return -ENOSPC;
	}
	struct lane_slot *s = &g_lanes[id];
	if (++s->gen == 0)
		s->gen = 1;
	s->ref = ((uint64_t)s->gen << 32) | (id + 1u);
	s->owner = e;
	uint64_t r = s->ref;
	pthread_mutex_unlock(&g_mu);

	struct mcc_lane_desc_v1 d = {sizeof(d), id, role, 0};
	mcc_lane *l = NULL;
	int rc = e->ops->lane_open(e->ctx, &d, &l);
	pthread_mutex_lock(&g_mu);
	if (rc == 0 && l) {
		s->lane = l;
	} else {
		s->ref = 0;
		s->owner = NULL;
	}
	pthread_mutex_unlock(&g_mu);
	if (rc != 0 || !l) {
		rc = rc ? rc : -EPROTO;
		MCC_ENG_LOG(e, MCC_LOG_ERROR, "lane %u: the policy's lane_open failed: %s (%d)", id,
		            mcc_strerror(rc), rc);
		return rc;
	}
	atomic_fetch_add_explicit(&e->lanes_open, 1, RLX);
	*ref = r;
	*lane = l;
	return 0;
}

/* Under g_mu: the slot of a live lane of `e`, or NULL with *err set. */
static struct lane_slot *lane_slot(mcc_engine *e, mcc_lane_ref ref, int *err)
{
	uint32_t id = REF_ID(ref);
	struct lane_slot *s = id < MCC_ENGINE_LANES_MAX ? &g_lanes[id] : NULL;
	if (!s || ref == 0 || s->ref != ref || !s->lane) {
		*err = -ESTALE;
		return NULL;
	}
	if (s->owner != e) {
		*err = -EPERM;
		return NULL;
	}
	return s;
}

/* Close the lane of slot s (under g_mu, which is dropped and retaken). */
static void lane_close_slot(mcc_engine *e, struct lane_slot *s)
{
	mcc_lane *l = s->lane;
	s->lane = NULL; /* closing: get and close see it as gone */
	pthread_mutex_unlock(&g_mu);
	e->ops->lane_close(e->ctx, l);
	atomic_fetch_sub_explicit(&e->lanes_open, 1, RLX);
	pthread_mutex_lock(&g_mu);
	s->ref = 0; /* the id is free only once the policy lane is gone */
	s->owner = NULL;
}

int mcc_engine_lane_close(mcc_engine *e, mcc_lane_ref ref)
{
	if (!e)
		return -EINVAL;
	int err = 0;
	pthread_mutex_lock(&g_mu);
	if (!engine_link(e)) {
		pthread_mutex_unlock(&g_mu);
		return -EBADF;
	}
	struct lane_slot *s = lane_slot(e, ref, &err);
	if (s)
		lane_close_slot(e, s);
	pthread_mutex_unlock(&g_mu);
	if (err)
		MCC_ENG_LOG(e, MCC_LOG_WARN, "lane_close: lane reference 0x%llx %s",
		            (unsigned long long)ref,
		            err == -ESTALE ? "is closed or was never opened" : "belongs to another engine");
	return err;
}

mcc_lane *mcc_engine_lane_get(mcc_engine *e, mcc_lane_ref ref)
{
	int err = 0;
	pthread_mutex_lock(&g_mu);
	struct lane_slot *s = e && engine_link(e) ? lane_slot(e, ref, &err) : NULL;
	mcc_lane *l = s ? s->lane : NULL;
	pthread_mutex_unlock(&g_mu);
	return l;
}

static void lanes_close_all(mcc_engine *e)
{
	pthread_mutex_lock(&g_mu);
	for (uint32_t id = 0; id < MCC_ENGINE_LANES_MAX; id++) {
		struct lane_slot *s = &g_lanes[id];
		if (s->owner != e || !s->lane)
			continue;
		pthread_mutex_unlock(&g_mu);
		MCC_ENG_LOG(e, MCC_LOG_WARN, "engine close: lane %u was still open; closed", id);
		pthread_mutex_lock(&g_mu);
		if (s->owner == e && s->lane)
			lane_close_slot(e, s);
	}
	pthread_mutex_unlock(&g_mu);
}

/* ------------------------------------------------------------- tick, room */

static void room_bump(struct mcc_engine_hub *h)
{
	/* seq_cst add then load, against the waiter's seq_cst add of `parked`
	 * then futex check of room_seq: one of the two sees the other */
	atomic_fetch_add(&h->room_seq, 1);
	if (atomic_load(&h->parked)) {
		syscall(SYS_futex, (uint32_t *)&h->room_seq, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
		atomic_fetch_add_explicit(&h->wakes, 1, RLX);
	}
}

int mcc_engine_tick_if_due(mcc_engine *e, uint64_t now_ns)
{
	mcc__engine_check_fast(e, "mcc_engine_tick_if_due");
	struct mcc_engine_hub *h = e->hub;
	uint64_t due = atomic_load_explicit(&h->due, memory_order_acquire);
	if (now_ns < due)
		return 0;
	if (!atomic_compare_exchange_strong_explicit(&h->due, &due, UINT64_MAX,
	                                             memory_order_acq_rel, RLX))
		return 0;
	h->ops->tick(h->ctx, now_ns);
	atomic_fetch_add_explicit(&h->ticks, 1, RLX);
	atomic_store_explicit(&h->due, now_ns + h->epoch_ns, memory_order_release);
	room_bump(h);
	return 1;
}

int mcc_engine_try_acquire_qos(const mcc_engine *e, mcc_lane *lane, mcc_route *route,
                               uint64_t bytes, uint32_t generation,
                               const struct mcc_task_ref_v1 *task, uint32_t qos_class,
                               struct mcc_permit_v1 *permit)
{
	mcc__engine_check_fast(e, "mcc_engine_try_acquire_qos");
	if (!e->qos) /* one class: the call of an engine without QoS */
		return e->ops->try_acquire(lane, route, bytes, generation, task, permit);
	return e->ops->try_acquire_qos(lane, route, bytes, generation, task, qos_class, permit);
}

int mcc_engine_qos(const mcc_engine *e)
{
	mcc__engine_check_fast(e, "mcc_engine_qos");
	return e->qos;
}

uint64_t mcc_engine_base_rtt_ns(const mcc_engine *e)
{
	mcc__engine_check_fast(e, "mcc_engine_base_rtt_ns");
	return e->base_rtt_ns;
}

uint64_t mcc_engine_retry_after_ns(const mcc_engine *e)
{
	mcc__engine_check_fast(e, "mcc_engine_retry_after_ns");
	return e->hub->epoch_ns;
}

uint32_t mcc_engine_room_seq(const mcc_engine *e)
{
	mcc__engine_check_fast(e, "mcc_engine_room_seq");
	return atomic_load_explicit(&e->hub->room_seq, memory_order_acquire);
}

void mcc_engine_room_notify(mcc_engine *e)
{
	mcc__engine_check_fast(e, "mcc_engine_room_notify");
	room_bump(e->hub);
}

int mcc_engine_room_wait(mcc_engine *e, uint32_t seq, uint64_t timeout_ns)
{
	mcc__engine_check_fast(e, "mcc_engine_room_wait");
	struct mcc_engine_hub *h = e->hub;
	if (atomic_load_explicit(&h->room_seq, memory_order_acquire) != seq)
		return 0;
	if (!timeout_ns)
		return -ETIMEDOUT;
	struct timespec ts = {(time_t)(timeout_ns / 1000000000u), (long)(timeout_ns % 1000000000u)};
	atomic_fetch_add(&h->parked, 1);
	atomic_fetch_add_explicit(&h->waits, 1, RLX);
	long r = syscall(SYS_futex, (uint32_t *)&h->room_seq, FUTEX_WAIT_PRIVATE, seq, &ts, NULL, 0);
	int err = r == 0 ? 0 : errno;
	atomic_fetch_sub(&h->parked, 1);
	if (atomic_load_explicit(&h->room_seq, memory_order_acquire) != seq)
		return 0;
	return err == ETIMEDOUT ? -ETIMEDOUT : -EINTR;
}

/* ----------------------------------------------------------------- batches */

/* batch_begin (begin = 1) and batch_free (begin = 0): the live-batch map
 * under b_mu, the module told of a batch that ends, a misuse counted and
 * logged. */
static int batch_update(mcc_engine *e, uint64_t batch_id, int begin)
{
	if (!e)
		return -EINVAL;
	if (!mcc__engine_live(e))
		return -EBADF;
	pthread_mutex_lock(&e->b_mu);
	struct mcc_eng_kv **slot = mcc__eng_map_find(&e->batches, batch_id, 0);
	int rc = 0;
	if (begin && *slot) {
		/* the previous free was missed: its evidence must not attach here */
		e->ops->batch_free(e->ctx, batch_id);
		atomic_fetch_add_explicit(&e->batch_reused, 1, RLX);
		rc = -EEXIST;
	} else if (begin) {
		if (!mcc__eng_map_insert(slot, batch_id, 0))
			rc = -ENOMEM;
	} else if (*slot) {
		mcc__eng_map_erase(slot);
		e->ops->batch_free(e->ctx, batch_id);
	} else {
		atomic_fetch_add_explicit(&e->batch_double_free, 1, RLX);
		rc = -ENOENT;
	}
	pthread_mutex_unlock(&e->b_mu);
	if (rc == -EEXIST)
		MCC_ENG_LOG(e, MCC_LOG_WARN,
		            "batch 0x%llx begun again without a free: its old evidence was dropped",
		            (unsigned long long)batch_id);
	else if (rc == -ENOENT)
		MCC_ENG_LOG(e, MCC_LOG_WARN,
		            "batch_free: batch 0x%llx is not live (freed twice or never begun); ignored",
		            (unsigned long long)batch_id);
	return rc;
}

int mcc_engine_batch_begin(mcc_engine *e, uint64_t batch_id)
{
	return batch_update(e, batch_id, 1);
}

int mcc_engine_batch_free(mcc_engine *e, uint64_t batch_id)
{
	return batch_update(e, batch_id, 0);
}

/* ------------------------------------------------------------------- stats */

int mcc_engine_get_stats(const mcc_engine *e, struct mcc_engine_stats *out)
{
	if (!e || !out || out->struct_size < MCC_ENGINE_STATS_V1_0_SIZE)
		return -EINVAL;
	if (!mcc__engine_live(e))
		return -EBADF;
	struct mcc_engine_stats s;
	memset(&s, 0, sizeof(s));
	s.struct_size = out->struct_size;
	s.lanes_open = atomic_load_explicit(&e->lanes_open, RLX);
	pthread_mutex_lock((pthread_mutex_t *)&e->rt_mu);
	s.routes_open = e->routes_open;
	pthread_mutex_unlock((pthread_mutex_t *)&e->rt_mu);
	s.ticks = atomic_load_explicit(&e->hub->ticks, RLX);
	s.room_wakes = atomic_load_explicit(&e->hub->wakes, RLX);
	s.room_waits = atomic_load_explicit(&e->hub->waits, RLX);
	s.clock_steps_back = atomic_load_explicit(&g_clk.steps_back, RLX);
	s.clock_held = atomic_load_explicit(&g_clk.held, RLX);
	s.async_delivered = atomic_load_explicit(&e->async_delivered, RLX);
	s.async_dropped = atomic_load_explicit(&e->async_dropped, RLX);
	s.batch_double_free = atomic_load_explicit(&e->batch_double_free, RLX);
	s.batch_reused = atomic_load_explicit(&e->batch_reused, RLX);
	memcpy(out, &s, out->struct_size < sizeof(s) ? out->struct_size : sizeof(s));
	return 0;
}
