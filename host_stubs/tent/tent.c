/* SPDX-License-Identifier: MIT */
/*
 * tent.c - TENT RDMA transport stub (see tent.h).
 *
 *   tent_engine  ~ TransferEngineImpl + RdmaTransport
 *   tent_lane    ~ one Workers worker thread (WorkerContext): asyncPostSend
 *                  then asyncPollCq on the same thread; lane w posts on QP w
 *                  of every endpoint and polls CQ w of every device
 *   tent_dev     ~ RdmaContext (+ DeviceSelector::DeviceInfo telemetry)
 *   tent_ep      ~ RdmaEndPoint: one-way lifecycle, reset => new generation
 *   tent_rec     ~ a posted WR: the per-QP slice_queue_ entry; it also holds
 *                  the admission permit (one per post) so that a WR swept by
 *                  acknowledge() keeps its reservation until its own WC
 * Monitor: Workers::monitorThread (handleContextEvents, endpoint reclaim).
 */
#include "tent.h"

#include "mcc_hooks.h"
#if MCC_CC_COMPILED_IN
#include "mcc_engine.h"
#endif

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TENT_MAX_DEV 8
#define TENT_MAX_SEG 72 /* segment = node id: MCC_FAB_MAX_NODES */
#define TENT_MAX_RDEV 8
#define TENT_MAX_LANES 8
#define TENT_POLL 64
#define TENT_BATCH_MAGIC 0x74656e7462617463ull
#define TENT_MAX_SLICES_PER_REQ 64
#define TENT_AVOID_HOPS 8         /* re-dispatches after AVOID per slice */
#define TENT_AVOID_BACKOFF_MAX 64 /* epochs: cap of a route's AVOID backoff */

enum { R_PENDING = 0, R_COMPLETED, R_FAILED, R_TIMEOUT };

struct tent_task;
struct tent_slice {
	struct tent_slice *next;
	struct tent_task *task;
	uint64_t src, dst;
	uint32_t len;
	int opcode;
	uint32_t seg;
	int src_dev, dst_dev; /* -1: not chosen yet */
	uint32_t rkey;
	uint32_t retry_count;
	uint32_t avoid_hops; /* re-dispatches after AVOID (not the retry budget) */
	uint32_t last_fallback_idx;
	int priority;
	uint64_t enqueue_ts;
	int tier;         /* the lane queue it waits in: its priority, or higher once promoted */
	uint64_t tier_ts; /* when it entered that tier (promotion) */
	MCC_FIELD(int cc_qdev;) /* device whose deferred bytes count this slice, or -1 */
};

struct tent_batch;
struct tent_task {
	struct tent_batch *batch;
	uint64_t id;
	uint64_t total;
	_Atomic uint64_t transferred;
	uint32_t nslices;
	_Atomic uint32_t success, resolved;
	_Atomic int failed;
	struct tent_slice *slices;
};

struct tent_batch {
	uint64_t magic;
	size_t cap, n;
	struct tent_task *tasks;
};

struct tent_ep;
struct tent_rec {
	struct tent_ep *ep;
	struct tent_slice *slice; /* NULL once acknowledged (swept) */
	uint32_t qp;
	uint32_t gen;
	uint64_t post_ts;
	uint32_t bytes;
	int src_dev;
	MCC_FIELD(int admitted; struct mcc_permit_v1 permit;)
};

struct tent_qp {
	mcc_fab_qp *qp;
	struct tent_rec *ring;
	uint32_t cap;
	uint64_t tail, wc_head, ack_head; /* lane-private */
	_Atomic uint32_t depth;
};

struct tent_route;
struct tent_ep {
	struct tent_route *rt;
	uint32_t gen;
	_Atomic int state; /* 1 ready, 2 destroying */
	_Atomic int refs;
	uint32_t nqp;
	struct tent_qp q[TENT_MAX_LANES];
	struct tent_ep *next_retired;
};

struct tent_route { /* PostPath {local_dev, remote_segment, remote_dev} */
	int dev;
	uint32_t seg;
	int rdev;
	uint32_t gen;
	struct tent_ep *ep;
	char path[64];
	/* the policy answered AVOID (route QUARANTINED): device selection skips
	 * the path before avoid_until; the backoff doubles per AVOID up to
	 * TENT_AVOID_BACKOFF_MAX epochs and restarts on an admission */
	_Atomic uint64_t avoid_until, avoid_backoff;
	/* the last DEFER, and the last one near the minimum window (defer_spill) */
	MCC_FIELD(mcc_route *cc; _Atomic uint64_t defer_at, held_at;)
};

struct tent_dev {
	struct tent_engine *e;
	int idx;
	mcc_fab_dev *dev;
	struct mcc_fab_device_attr attr;
	mcc_fab_cq *cq[TENT_MAX_LANES];
	_Atomic int enabled;    /* DEVICE_ENABLED */
	_Atomic int cq_error;
	pthread_mutex_t mu;     /* endpoint store */
	struct tent_route *routes[TENT_MAX_SEG][TENT_MAX_RDEV];
	struct tent_ep *retired;
	/* DeviceSelector::DeviceInfo */
	_Atomic uint64_t inflight_bytes, posted_bytes, completed_bytes;
	_Atomic uint64_t ewma_bw_bits; /* double */
	/* slices that chose this device but were deferred by admission: queued
	 * behind its window, so the DeviceSelector counts them as load (else a
	 * device whose window is full keeps winning ties it cannot serve) */
	MCC_FIELD(mcc_device *ccdev; _Atomic uint64_t cc_deferred_bytes;)
};

struct tent_rail { /* RailMonitor entry */
	uint32_t errors;
	uint64_t first_error_ns, pause_until_ns, cooldown_ns;
};

struct tent_lane {
	struct tent_engine *e;
	uint32_t id;
	mcc_actor *actor;
	char name[32];
	pthread_mutex_t qmu;
	struct tent_slice *prio_h[3], *prio_t[3]; /* MPSC priority queues */
	/* worker.requests, one list per tier (HIGH, MEDIUM, LOW), scanned in
	 * that order: a slice left queued (DEFER, a static limit) holds only
	 * later slices of its own path and priority (async_post_send) */
	struct tent_slice *pending[3], *pending_tail[3];
	uint64_t next_promo; /* next promotion check (promoteTimedOutRequests) */
	_Atomic uint64_t inflight;
	_Atomic uint64_t stall_until;
	uint64_t next_timeout_scan;
	struct tent_rail rails[TENT_MAX_DEV][TENT_MAX_SEG][TENT_MAX_RDEV];
	MCC_FIELD(mcc_lane *lane; mcc_lane_ref lane_ref;)
};

struct tent_counters {
	_Atomic uint64_t slices_posted, slices_completed, slices_failed, slices_retried;
	_Atomic uint64_t wc_errors, flushes, timeouts, post_rejects, defers, avoids, admits;
	_Atomic uint64_t endpoints_created, endpoints_reset, rail_pauses, async_events, reclaimed;
	_Atomic int64_t permits_live;
	_Atomic uint64_t cpu_virtual_ns, handoffs, spills;
};

struct tent_engine {
	struct tent_config cfg;
	struct mcc_host_env env;
	const struct mcc_fab_ops *fo;
	struct tent_dev dev[TENT_MAX_DEV];
	uint32_t ndev;
	struct tent_lane lanes[TENT_MAX_LANES];
	uint32_t nlanes;
	mcc_actor *monitor;
	char mon_name[32];
	pthread_mutex_t mr_mu;
	struct {
		void *addr;
		size_t len;
		struct mcc_fab_mr mr[TENT_MAX_DEV];
	} bufs[32];
	uint32_t nbufs;
	pthread_mutex_t seg_mu;
	struct mcc_seg_desc segs[TENT_MAX_SEG];
	uint8_t seg_valid[TENT_MAX_SEG];
	_Atomic uint32_t rr;
	void (*notify)(void *, uint64_t, uint64_t);
	void *notify_arg;
	struct tent_counters c;
	/* cc_on: the controller is not off (read once at construction: mode
	 * off bypasses every hook); sig_mask / cc_async: the module's
	 * subscriptions */
	MCC_FIELD(mcc_engine *eng; mcc_instance *inst; const struct mcc_policy_v1 *ops; void *cc;
	          uint64_t epoch_ns;
	          uint64_t sig_mask; uint64_t spill_below; bool cc_on; bool cc_async;)
};

#define CNT_ADD(e, f, v) atomic_fetch_add_explicit(&(e)->c.f, (v), memory_order_relaxed)

void tent_config_defaults(struct tent_config *c)
{
	memset(c, 0, sizeof(*c));
	c->num_lanes = 6;
	c->block_size = 65536;
	c->max_qp_wr = 256;
	c->max_cqe = 4096;
	c->max_retry_count = 8;
	c->max_timeout_ns = 10000000000ull;
	c->ib_timeout = 14;
	c->ib_retry_cnt = 7;
	c->ib_rnr_retry = 7;
	c->ib_min_rnr_timer = 12;
	c->rail_error_threshold = 3;
	c->rail_error_window_secs = 10;
	c->rail_cooldown_secs = 30;
	c->monitor_period_us = 1000;
	c->priority_promotion_timeout_us = 10000;
}

static uint64_t now_of(tent_engine *e)
{
	return mcc_exec_now(e->env.ex);
}

static double ld_bw(struct tent_dev *d)
{
	uint64_t b = atomic_load(&d->ewma_bw_bits);
	double v;
	memcpy(&v, &b, sizeof(v));
	return v;
}

static void st_bw(struct tent_dev *d, double v)
{
	uint64_t b;
	memcpy(&b, &v, sizeof(b));
	atomic_store(&d->ewma_bw_bits, b);
}

static int seg_get(tent_engine *e, uint32_t seg, struct mcc_seg_desc *out, int refresh)
{
	if (seg >= TENT_MAX_SEG)
		return -EINVAL;
	pthread_mutex_lock(&e->seg_mu);
	int rc = 0;
	if (!e->seg_valid[seg] || refresh) {
		rc = e->env.get_segment(e->env.seg_arg, seg, &e->segs[seg]);
		e->seg_valid[seg] = rc == 0;
	}
	if (!rc)
		*out = e->segs[seg];
	pthread_mutex_unlock(&e->seg_mu);
	return rc;
}

static uint32_t lkey_of(tent_engine *e, int dev, uint64_t a, uint32_t len)
{
	uint32_t k = 0;
	pthread_mutex_lock(&e->mr_mu);
	for (uint32_t i = 0; i < e->nbufs; i++)
		if (a >= (uintptr_t)e->bufs[i].addr && a + len <= (uintptr_t)e->bufs[i].addr + e->bufs[i].len)
			k = e->bufs[i].mr[dev].lkey;
	pthread_mutex_unlock(&e->mr_mu);
	return k;
}

/* ------------------------------------------------------------ task status */

/* updateSliceStatus: the single terminal transition of a slice. Once the
 * last slice is resolved the application may free the batch (task and
 * slice with it): what the notification needs is read before. */
static void slice_done(tent_engine *e, struct tent_slice *s, int ok)
{
	struct tent_task *t = s->task;
	uint64_t batch_id = (uint64_t)(uintptr_t)t->batch, task_id = t->id;
	uint32_t count = t->nslices;
	if (ok) {
		atomic_fetch_add(&t->transferred, s->len);
		atomic_fetch_add(&t->success, 1);
		CNT_ADD(e, slices_completed, 1);
	} else {
		atomic_store(&t->failed, 1);
		CNT_ADD(e, slices_failed, 1);
	}
	if (atomic_fetch_add(&t->resolved, 1) + 1 == count && e->notify)
		e->notify(e->notify_arg, batch_id, task_id); /* t, s: may be gone */
}

/* ------------------------------------------------------------- policy glue */

#if MCC_CC_COMPILED_IN
static void cc_signal(tent_engine *e, uint32_t kind, struct tent_dev *d, struct tent_route *rt,
                      const struct tent_slice *s, uint32_t gen, int32_t err, uint64_t v0,
                      uint64_t v1)
{
	if (!(e->sig_mask & (1ull << kind))) /* off, or not subscribed */
		return;
	struct mcc_signal_v1 sig;
	mcc_host_signal(&sig, kind, d ? d->ccdev : NULL, rt ? rt->cc : NULL, gen, err, v0, v1,
	                now_of(e));
	if (s) {
		sig.task.batch_id = (uint64_t)(uintptr_t)s->task->batch;
		sig.task.task_id = s->task->id;
		sig.task.attempt = s->retry_count + s->avoid_hops;
	}
	e->ops->on_signal(e->cc, &sig);
}
#endif

#if MCC_CC_COMPILED_IN
/* A deferred slice leaves (or re-enters) its device's deferred count. */
static void cc_unqueue(tent_engine *e, struct tent_slice *s)
{
	if (s->cc_qdev >= 0) {
		atomic_fetch_sub(&e->dev[s->cc_qdev].cc_deferred_bytes, s->len);
		s->cc_qdev = -1;
	}
}

static void cc_queue(tent_engine *e, struct tent_slice *s)
{
	s->cc_qdev = s->src_dev;
	atomic_fetch_add(&e->dev[s->src_dev].cc_deferred_bytes, s->len);
}
#endif

/* ------------------------------------------------------------ rail monitor */

static int rail_available(struct tent_lane *l, int dev, uint32_t seg, int rdev, uint64_t now)
{
	struct tent_rail *r = &l->rails[dev][seg][rdev];
	if (r->pause_until_ns && now >= r->pause_until_ns) {
		r->pause_until_ns = 0; /* cooldown expiry fully resets */
		r->errors = 0;
	}
	return !r->pause_until_ns;
}

static void rail_mark_failed(struct tent_lane *l, int dev, uint32_t seg, int rdev, uint64_t now)
{
	tent_engine *e = l->e;
	struct tent_rail *r = &l->rails[dev][seg][rdev];
	uint64_t win = (uint64_t)e->cfg.rail_error_window_secs * 1000000000ull;
	if (!r->errors || now - r->first_error_ns > win) {
		r->errors = 0;
		r->first_error_ns = now;
	}
	if (++r->errors >= e->cfg.rail_error_threshold && !r->pause_until_ns) {
		uint64_t base = (uint64_t)e->cfg.rail_cooldown_secs * 1000000000ull;
		r->cooldown_ns = r->cooldown_ns ? r->cooldown_ns * 2 : base;
		if (r->cooldown_ns > 10 * base)
			r->cooldown_ns = 10 * base; /* doubling up to 300 s */
		r->pause_until_ns = now + r->cooldown_ns;
		CNT_ADD(e, rail_pauses, 1);
	}
}

static void rail_mark_recovered(struct tent_lane *l, int dev, uint32_t seg, int rdev)
{
	struct tent_rail *r = &l->rails[dev][seg][rdev];
	r->errors = 0;
	r->cooldown_ns = 0;
}

/* ------------------------------------------------------- device selection */

/* DeviceSelector (smart mode): score = (inflight + bytes) / ewma_bw. */
static int select_device(tent_engine *e, uint32_t bytes, int avoid)
{
	int best = -1;
	double bs = 0;
	for (uint32_t i = 0; i < e->ndev; i++) {
		struct tent_dev *d = &e->dev[i];
		if (!atomic_load(&d->enabled) || (int)i == avoid)
			continue;
		double load = (double)atomic_load(&d->inflight_bytes);
		MCC_HOOK(load += (double)atomic_load(&d->cc_deferred_bytes);)
		double score = (load + bytes) / ld_bw(d);
		if (best < 0 || score < bs) {
			best = (int)i;
			bs = score;
		}
	}
	return best;
}

/* Whether the policy avoids the path (dev -> seg, rdev) now. */
static int route_avoided(tent_engine *e, int dev, uint32_t seg, int rdev, uint64_t now)
{
	struct tent_dev *d = &e->dev[dev];
	pthread_mutex_lock(&d->mu);
	struct tent_route *rt = d->routes[seg][rdev];
	pthread_mutex_unlock(&d->mu);
	return rt && atomic_load(&rt->avoid_until) > now;
}

/* generatePostPath: local device (DeviceSelector), remote device
 * (RailMonitor::findBestRemoteDevice: same rail), or selectFallbackDevice
 * for retries / paused rails (rotate over pairs after last_fallback_idx),
 * passing over paths the policy avoids. 0: a path; 1: only avoided paths
 * (one of them is set: the slice waits there); < 0: none. */
static int generate_post_path(struct tent_lane *l, struct tent_slice *s, int avoid_dev,
                              int avoid_rdev, int refresh)
{
	tent_engine *e = l->e;
	struct mcc_seg_desc sd;
	uint64_t now = now_of(e);
	if (seg_get(e, s->seg, &sd, refresh) != 0 || !sd.ndev)
		return -ENOENT;
	if (s->retry_count == 0 && avoid_dev < 0) {
		int d = select_device(e, s->len, -1);
		if (d >= 0) {
			int rd = d % (int)sd.ndev;
			if (rail_available(l, d, s->seg, rd, now) && !route_avoided(e, d, s->seg, rd, now)) {
				s->src_dev = d;
				s->dst_dev = rd;
				s->rkey = sd.rkey[rd];
				return 0;
			}
		}
	}
	uint32_t pairs = e->ndev * sd.ndev;
	int64_t only_avoided = -1; /* a pair the policy avoids: used when nothing else */
	for (uint32_t k = 1; k <= pairs; k++) {
		uint32_t idx = (s->last_fallback_idx + k) % pairs;
		int d = (int)(idx / sd.ndev), rd = (int)(idx % sd.ndev);
		if (!atomic_load(&e->dev[d].enabled) || (d == avoid_dev && rd == avoid_rdev))
			continue;
		if (!rail_available(l, d, s->seg, rd, now))
			continue;
		if (route_avoided(e, d, s->seg, rd, now)) {
			if (only_avoided < 0)
				only_avoided = idx;
			continue;
		}
		s->last_fallback_idx = idx;
		s->src_dev = d;
		s->dst_dev = rd;
		s->rkey = sd.rkey[rd];
		return 0;
	}
	if (only_avoided < 0)
		return -ENODEV;
	s->src_dev = (int)((uint32_t)only_avoided / sd.ndev);
	s->dst_dev = (int)((uint32_t)only_avoided % sd.ndev);
	s->rkey = sd.rkey[s->dst_dev];
	return 1; /* every usable path is avoided: wait on one of them */
}

/* ------------------------------------------------------------- endpoints */

static struct tent_route *route_get(tent_engine *e, struct tent_dev *d, uint32_t seg, int rdev)
{
	pthread_mutex_lock(&d->mu);
	struct tent_route *rt = d->routes[seg][rdev];
	if (!rt && (rt = calloc(1, sizeof(*rt)))) {
		rt->dev = d->idx;
		rt->seg = seg;
		rt->rdev = rdev;
		snprintf(rt->path, sizeof(rt->path), "node%u:12345@mlx5_%d", seg, rdev);
#if MCC_CC_COMPILED_IN
		struct mcc_route_desc_v1 rd = {sizeof(rd), 1, e->fo->cq_id(d->cq[0]), 0,
		                               ((uint64_t)d->idx << 32) | ((uint64_t)seg << 8) | (uint64_t)rdev,
		                               rt->path, seg, e->eng ? mcc_engine_base_rtt_ns(e->eng) : 0};
		if (!e->cc_on || !d->ccdev || e->ops->route_open(e->cc, d->ccdev, &rd, &rt->cc) != 0)
			rt->cc = NULL;
		else /* the live view (mcc stat) */
			mcc_engine_stat_route_add(e->eng, d->ccdev, rt->cc, rt->path, strlen(rt->path),
			                          rd.route_id);
#else
		(void)e;
#endif
		d->routes[seg][rdev] = rt;
	}
	pthread_mutex_unlock(&d->mu);
	return rt;
}

static void ep_free(tent_engine *e, struct tent_ep *ep)
{
	for (uint32_t i = 0; i < ep->nqp; i++) {
		if (ep->q[i].qp)
			e->fo->destroy_qp(ep->q[i].qp);
		free(ep->q[i].ring);
	}
	free(ep);
}

/* EndpointStore::getOrInsert + handshake; returns a referenced endpoint. */
static struct tent_ep *get_endpoint(tent_engine *e, struct tent_dev *d, struct tent_route *rt)
{
	pthread_mutex_lock(&d->mu);
	struct tent_ep *ep = rt->ep;
	if (!ep && atomic_load(&d->enabled)) {
		struct mcc_seg_desc sd;
		ep = calloc(1, sizeof(*ep));
		if (ep && seg_get(e, rt->seg, &sd, 0) == 0) {
			ep->rt = rt;
			ep->gen = ++rt->gen;
			ep->nqp = e->nlanes;
			atomic_store(&ep->state, 1);
			for (uint32_t i = 0; i < ep->nqp; i++) {
				struct mcc_fab_qp_attr a = {1, e->cfg.max_qp_wr, e->cfg.ib_timeout,
				                            e->cfg.ib_retry_cnt, e->cfg.ib_rnr_retry,
				                            e->cfg.ib_min_rnr_timer, ep->gen};
				struct mcc_fab_addr ra = {sd.node, (uint32_t)rt->rdev, 1, 0};
				ep->q[i].cap = e->cfg.max_qp_wr;
				ep->q[i].ring = calloc(ep->q[i].cap, sizeof(struct tent_rec));
				/* QP i is bound to CQ i % cqCount */
				ep->q[i].qp = e->fo->create_qp(d->dev, d->cq[i % e->nlanes], &a, ep);
				if (!ep->q[i].ring || !ep->q[i].qp || e->fo->connect_qp(ep->q[i].qp, &ra)) {
					ep_free(e, ep);
					ep = NULL;
					break;
				}
			}
			if (ep) {
				rt->ep = ep;
				CNT_ADD(e, endpoints_created, 1);
				MCC_HOOK(if (ep->gen > 1) cc_signal(e, MCC_SIG_ENDPOINT_REBUILT, d, rt, NULL,
				                                    ep->gen, 0, 0, 0);)
			}
		} else {
			free(ep);
			ep = NULL;
		}
	}
	if (ep)
		atomic_fetch_add(&ep->refs, 1);
	pthread_mutex_unlock(&d->mu);
	return ep;
}

/* Endpoint lifetime: a retired endpoint is freed by the monitor only when
 * idle: every QP depth 0 (no WC to come) and no reference. A lane that uses
 * an endpoint after giving back a depth takes its reference first, and the
 * monitor reads the depths before the references, so it never sees both at
 * 0 while such a lane is still on it (sequentially consistent atomics). */
static int ep_idle(struct tent_ep *ep)
{
	for (uint32_t k = 0; k < ep->nqp; k++)
		if (atomic_load(&ep->q[k].depth) != 0)
			return 0;
	return atomic_load(&ep->refs) == 0;
}

/* resetConnection: begin destroy, remove from the store (next getOrInsert
 * builds a new generation); WRs flush to their CQs. */
static void ep_reset(tent_engine *e, struct tent_dev *d, struct tent_ep *ep)
{
	pthread_mutex_lock(&d->mu);
	if (atomic_load(&ep->state) != 1) {
		pthread_mutex_unlock(&d->mu);
		return;
	}
	atomic_store(&ep->state, 2);
	if (ep->rt->ep == ep)
		ep->rt->ep = NULL;
	ep->next_retired = d->retired;
	d->retired = ep;
	for (uint32_t i = 0; i < ep->nqp; i++)
		e->fo->reset_qp(ep->q[i].qp);
	pthread_mutex_unlock(&d->mu);
	CNT_ADD(e, endpoints_reset, 1);
}

/* --------------------------------------------------------------- submit */

_Static_assert(TENT_PRIO_HIGH == MCC_QOS_HIGH && TENT_PRIO_MEDIUM == MCC_QOS_MEDIUM &&
                   TENT_PRIO_LOW == MCC_QOS_LOW,
               "a TENT priority is its QoS class");

/* The slice's priority as a queue index (an out-of-range one is MEDIUM). */
static int prio_of(const struct tent_slice *s)
{
	return s->priority < 0 || s->priority > 2 ? TENT_PRIO_MEDIUM : s->priority;
}

static void lane_push(struct tent_lane *l, struct tent_slice *s)
{
	int p = prio_of(s);
	s->next = NULL;
	s->tier = p;
	s->tier_ts = now_of(l->e);
	pthread_mutex_lock(&l->qmu);
	if (l->prio_t[p])
		l->prio_t[p]->next = s;
	else
		l->prio_h[p] = s;
	l->prio_t[p] = s;
	pthread_mutex_unlock(&l->qmu);
	mcc_exec_wake(l->actor, now_of(l->e));
}

/* resubmit after an error: retry budget, then fallback path selection */
static void resubmit(struct tent_lane *l, struct tent_slice *s)
{
	tent_engine *e = l->e;
	if (++s->retry_count >= e->cfg.max_retry_count) {
		slice_done(e, s, 0);
		return;
	}
	CNT_ADD(e, slices_retried, 1);
	s->src_dev = -1;
	lane_push(l, s);
}

/* ----------------------------------------------------------- post path */

/* acknowledge(rec, status): pop the per-QP FIFO up to and including `k`,
 * applying the status to every popped slice (in-order completion of RC). */
static void acknowledge(struct tent_lane *l, struct tent_qp *q, uint64_t k, int status, int refresh)
{
	tent_engine *e = l->e;
	while (q->ack_head <= k && q->ack_head < q->tail) {
		struct tent_rec *r = &q->ring[q->ack_head % q->cap];
		q->ack_head++;
		struct tent_slice *s = r->slice;
		if (!s)
			continue;
		r->slice = NULL;
		atomic_fetch_sub(&l->inflight, 1);
		if (status == R_COMPLETED)
			slice_done(e, s, 1);
		else if (status == R_PENDING) { /* retry via fallback selection */
			if (refresh) {
				struct mcc_seg_desc sd;
				seg_get(e, s->seg, &sd, 1);
			}
			resubmit(l, s);
		} else
			slice_done(e, s, 0);
	}
}

#if MCC_CC_COMPILED_IN
/* A slice on a path the policy avoids: selectFallbackDevice passing over
 * avoided paths (another remote device, else another local device: the
 * DeviceSelector's hand-off), never charging the retry budget, at most
 * TENT_AVOID_HOPS times per slice. -1: moved; 0: it waits on its path (no
 * other path, or out of hops; `signal`: tell the policy NO_USABLE_PATH). */
static int avoid_move(struct tent_lane *l, struct tent_slice *s, struct tent_dev *d,
                      struct tent_route *rt, uint32_t gen, int signal)
{
	tent_engine *e = l->e;
	int avoid_dev = s->src_dev, avoid_rdev = s->dst_dev;
	uint32_t rkey = s->rkey;
	if (s->avoid_hops < TENT_AVOID_HOPS &&
	    generate_post_path(l, s, avoid_dev, avoid_rdev, 0) == 0) {
		s->avoid_hops++;
		if (s->src_dev != avoid_dev)
			CNT_ADD(e, handoffs, 1);
		cc_unqueue(e, s);
		lane_push(l, s);
		return -1;
	}
	s->src_dev = avoid_dev;
	s->dst_dev = avoid_rdev;
	s->rkey = rkey;
	if (signal)
		cc_signal(e, MCC_SIG_NO_USABLE_PATH, d, rt, s, gen, 0, 0, 0);
	return 0;
}

/* Whether the path (dev -> seg, rdev) is a spill target now: enabled, rail
 * not paused, not avoided, and its route (if any) not DEFERred for an epoch. */
static int spill_target(struct tent_lane *l, int dev, uint32_t seg, int rdev, uint64_t now)
{
	tent_engine *e = l->e;
	struct tent_dev *d = &e->dev[dev];
	if (!atomic_load(&d->enabled) || !rail_available(l, dev, seg, rdev, now))
		return 0;
	pthread_mutex_lock(&d->mu);
	struct tent_route *rt = d->routes[seg][rdev];
	pthread_mutex_unlock(&d->mu);
	return !rt || (atomic_load(&rt->avoid_until) <= now &&
	               now - atomic_load(&rt->defer_at) >= e->epoch_ns);
}

/* The policy holds rt near its minimum window (DEFER with at most
 * spill_below in flight: gray loss, or congestion on that path only; the
 * engine SDK's "DEFER near the floor"): move the slice to another local
 * device's own rail (the pair the DeviceSelector and findBestRemoteDevice
 * would give it; cross-rail pairs spread a QP flush's errors over the rail
 * monitor until every rail was paused) that has had no DEFER for an epoch,
 * is not paused and not avoided. Not charged to the retry budget; at most
 * TENT_AVOID_HOPS re-dispatches per slice, counted with AVOID's. 1: moved
 * (pushed back to the lane). */
static int defer_spill(struct tent_lane *l, struct tent_slice *s, struct tent_route *rt, uint64_t now)
{
	tent_engine *e = l->e;
	struct mcc_seg_desc sd;
	if (s->avoid_hops >= TENT_AVOID_HOPS || seg_get(e, s->seg, &sd, 0) != 0 || !sd.ndev)
		return 0;
	for (uint32_t k = 1; k < e->ndev; k++) {
		int d = (int)(((uint32_t)rt->dev + k) % e->ndev), rd = d % (int)sd.ndev;
		if (!spill_target(l, d, s->seg, rd, now))
			continue;
		s->src_dev = d;
		s->dst_dev = rd;
		s->rkey = sd.rkey[rd];
		s->avoid_hops++;
		CNT_ADD(e, spills, 1);
		cc_unqueue(e, s);
		lane_push(l, s);
		return 1;
	}
	return 0;
}
#endif

/* The paths a pass left slices queued on, each with the priority of those
 * slices: a later slice of the same path and priority keeps its place
 * behind them; one of another priority does not wait for them. */
#define TENT_HELD_MAX 64
struct tent_held {
	struct tent_route *rt[TENT_HELD_MAX];
	int prio[TENT_HELD_MAX];
	uint32_t n;
};

#if MCC_CC_COMPILED_IN
static void held_add(struct tent_held *h, struct tent_route *rt, int prio)
{
	if (h->n < TENT_HELD_MAX) {
		h->rt[h->n] = rt;
		h->prio[h->n++] = prio;
	}
}
#endif

/* RdmaEndPoint::submitSlices for one slice (the post boundary). Returns
 * 1 posted, 0 leave queued (limits or DEFER), -1 slice moved elsewhere. */
static int submit_slice(struct tent_lane *l, struct tent_slice *s, struct tent_held *held)
{
	tent_engine *e = l->e;
	struct tent_dev *d = &e->dev[s->src_dev];
	struct tent_route *rt = route_get(e, d, s->seg, s->dst_dev);
	if (!rt)
		return 0;
	int prio = prio_of(s);
	for (uint32_t i = 0; i < held->n; i++)
		if (held->rt[i] == rt && held->prio[i] == prio) {
			/* keep order behind a deferred slice of the same path,
			 * unless the policy holds that path near its floor */
			MCC_HOOK(if (atomic_load(&rt->held_at) == atomic_load(&rt->defer_at) &&
			             defer_spill(l, s, rt, now_of(e)))
			                 return -1;)
			return 0;
		}
	struct tent_ep *ep = get_endpoint(e, d, rt);
	if (!ep) { /* endpoint unavailable: retry */
		MCC_HOOK(cc_unqueue(e, s);) /* before resubmit: it may finish the task */
		resubmit(l, s);
		return -1;
	}
	struct tent_qp *q = &ep->q[l->id];
	int rc = 0;
	/* wr_count = min(CQ free quota, max_qp_wr - depth[qp], #slices) */
	if (atomic_load(&q->depth) >= e->cfg.max_qp_wr || atomic_load(&ep->state) != 1)
		goto out;
	struct tent_rec *r = &q->ring[q->tail % q->cap];
	memset(r, 0, sizeof(*r));
#if MCC_CC_COMPILED_IN
	/* Workers::asyncPostSend -> RdmaEndPoint::submitSlices: admission right
	 * before ibv_post_send, after getEndpoint resolved the path. */
	if (e->cc_on && rt->cc) {
		struct mcc_permit_v1 pi = MCC_PERMIT_INIT;
		r->permit = pi;
		/* attempt counts every dispatch (retries and AVOID moves) */
		struct mcc_task_ref_v1 tr = {(uint64_t)(uintptr_t)s->task->batch, s->task->id,
		                             s->retry_count + s->avoid_hops, 0};
		uint64_t now = now_of(e);
		if (atomic_load(&rt->avoid_until) > now) { /* backing off: not offered */
			rc = avoid_move(l, s, d, rt, ep->gen, 0);
			if (!rc)
				held_add(held, rt, prio);
			goto out;
		}
		/* the request's priority is the slice's class ([engine] qos = on;
		 * TENT_PRIO_* are MCC_QOS_*) */
		int dcs = mcc_engine_try_acquire_qos(e->eng, l->lane, rt->cc, s->len, ep->gen, &tr,
		                                     (uint32_t)prio, &r->permit);
		if (dcs == MCC_DEFER) {
			CNT_ADD(e, defers, 1);
			atomic_store(&rt->defer_at, now);
			uint64_t out = 0;
			for (uint32_t k = 0; k < ep->nqp; k++)
				out += atomic_load(&ep->q[k].depth);
			held_add(held, rt, prio);
			if (out * s->len <= e->spill_below) { /* held near the floor */
				atomic_store(&rt->held_at, now);
				rc = defer_spill(l, s, rt, now) ? -1 : 0;
			}
			goto out;
		}
		if (dcs == MCC_AVOID) { /* selectFallbackDevice, no rail penalty */
			CNT_ADD(e, avoids, 1);
			uint64_t cap = TENT_AVOID_BACKOFF_MAX * e->epoch_ns, b = atomic_load(&rt->avoid_backoff);
			b = !b ? e->epoch_ns : b * 2 > cap ? cap : b * 2;
			atomic_store(&rt->avoid_backoff, b);
			atomic_store(&rt->avoid_until, now + b);
			rc = avoid_move(l, s, d, rt, ep->gen, 1);
			if (!rc)
				held_add(held, rt, prio);
			goto out;
		}
		if (dcs == MCC_ADMIT) {
			if (atomic_load(&rt->avoid_backoff))
				atomic_store(&rt->avoid_backoff, 0); /* the route admits again */
			r->admitted = 1;
			atomic_fetch_add(&e->c.permits_live, 1);
			CNT_ADD(e, admits, 1);
		}
	}
	cc_unqueue(e, s); /* leaves the queue: posted, or rejected and resubmitted */
#endif
	struct mcc_fab_send_wr wr = {0}, *bad = NULL;
	wr.wr_id = (uint64_t)(uintptr_t)r;
	wr.opcode = s->opcode == TENT_OPCODE_READ ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE;
	wr.local_addr = s->src;
	wr.length = s->len;
	wr.lkey = lkey_of(e, s->src_dev, s->src, s->len);
	wr.remote_addr = s->dst;
	wr.rkey = s->rkey;
	r->ep = ep;
	r->slice = s;
	r->qp = l->id;
	r->gen = ep->gen;
	r->post_ts = now_of(e);
	r->bytes = s->len;
	r->src_dev = s->src_dev;
	atomic_fetch_add(&d->inflight_bytes, s->len);
	atomic_fetch_add(&d->posted_bytes, s->len); /* markPosted */
	q->tail++;
	atomic_fetch_add(&q->depth, 1);
	int prc = e->fo->post_send(q->qp, &wr, &bad);
	if (prc) { /* post rejected: flag failed, retry */
		q->tail--;
		atomic_fetch_sub(&q->depth, 1);
		atomic_fetch_sub(&d->inflight_bytes, s->len);
		CNT_ADD(e, post_rejects, 1);
#if MCC_CC_COMPILED_IN
		if (r->admitted) {
			e->ops->release(l->lane, &r->permit, r->permit.bytes,
			                prc == ENOMEM ? MCC_REL_NOT_POSTED : MCC_REL_POST_REJECTED);
			r->admitted = 0;
			atomic_fetch_sub(&e->c.permits_live, 1);
		}
		cc_signal(e, MCC_SIG_POST_REJECTED, d, rt, s, ep->gen, prc, 0, 0);
#endif
		resubmit(l, s);
		rc = -1;
		goto out;
	}
	atomic_fetch_add(&l->inflight, 1);
	CNT_ADD(e, slices_posted, 1);
	rc = 1;
out:
	atomic_fetch_sub(&ep->refs, 1);
	return rc;
}

/* Workers::promoteTimedOutRequests, checked once per millisecond: when the
 * oldest slice of the MEDIUM tier has waited in it for
 * priority_promotion_timeout_us, the whole tier moves up to HIGH (behind
 * what HIGH holds); else the same for LOW to MEDIUM. One step per check, so
 * a LOW slice needs two timeouts to reach HIGH. The slice keeps its
 * priority (its place among the held paths, its class for the policy):
 * only the order of the scan changes, and with a single priority that
 * order is the lists' concatenation either way. */
static void promote_timed_out(struct tent_lane *l, uint64_t now)
{
	uint64_t tmo = (uint64_t)l->e->cfg.priority_promotion_timeout_us * 1000u;
	if (now < l->next_promo)
		return;
	l->next_promo = now + 1000000u;
	for (int p = TENT_PRIO_MEDIUM; p <= TENT_PRIO_LOW; p++) {
		struct tent_slice *h = l->pending[p];
		if (!h || now - h->tier_ts < tmo)
			continue;
		for (struct tent_slice *x = h; x; x = x->next) {
			x->tier = p - 1;
			x->tier_ts = now;
		}
		if (l->pending_tail[p - 1])
			l->pending_tail[p - 1]->next = h;
		else
			l->pending[p - 1] = h;
		l->pending_tail[p - 1] = l->pending_tail[p];
		l->pending[p] = l->pending_tail[p] = NULL;
		return;
	}
}

/* Workers::asyncPostSend */
static uint32_t async_post_send(struct tent_lane *l)
{
	tent_engine *e = l->e;
	/* pop the priority queues into their tiers */
	pthread_mutex_lock(&l->qmu);
	for (int p = 0; p < 3; p++) {
		if (!l->prio_h[p])
			continue;
		if (l->pending_tail[p])
			l->pending_tail[p]->next = l->prio_h[p];
		else
			l->pending[p] = l->prio_h[p];
		l->pending_tail[p] = l->prio_t[p];
		l->prio_h[p] = l->prio_t[p] = NULL;
	}
	pthread_mutex_unlock(&l->qmu);
	if (e->cfg.priority_promotion_timeout_us)
		promote_timed_out(l, now_of(e));
	struct tent_held held;
	held.n = 0;
	uint32_t posted = 0;
	for (int p = 0; p < 3; p++) { /* HIGH -> MEDIUM -> LOW */
		struct tent_slice **pp = &l->pending[p], *prev = NULL;
		while (*pp) {
			struct tent_slice *s = *pp;
			if (s->src_dev < 0 || !atomic_load(&e->dev[s->src_dev].enabled)) {
				MCC_HOOK(cc_unqueue(e, s);) /* choosing a device again */
				if (generate_post_path(l, s, -1, -1, 0) < 0) {
					/* no path at all: fail (cross-transport failover is
					 * the runtime's, not modelled) */
					*pp = s->next;
					if (l->pending_tail[p] == s)
						l->pending_tail[p] = prev;
					slice_done(e, s, 0);
					continue;
				}
			}
			struct tent_slice *nx = s->next;
			int rc = submit_slice(l, s, &held);
			if (rc != 0) { /* posted or moved: unlink */
				*pp = nx;
				if (l->pending_tail[p] == s)
					l->pending_tail[p] = prev;
				posted += rc > 0;
				continue;
			}
			/* still queued on its device (deferred, or behind a deferred
			 * slice of its path and priority, or at a static limit): the
			 * DeviceSelector counts it there */
			MCC_HOOK(if (e->cc_on && s->cc_qdev != s->src_dev) {
				cc_unqueue(e, s);
				cc_queue(e, s);
			})
			prev = s;
			pp = &s->next;
		}
	}
	return posted;
}

/* ----------------------------------------------------------- poll path */

static void reclaim_lane_qps(struct tent_lane *l, struct tent_dev *d)
{
	tent_engine *e = l->e;
	pthread_mutex_lock(&d->mu);
	for (struct tent_ep *ep = d->retired; ep; ep = ep->next_retired) {
		struct tent_qp *q = &ep->q[l->id];
		while (q->wc_head < q->tail) {
			struct tent_rec *r = &q->ring[q->wc_head % q->cap];
			MCC_HOOK(if (r->admitted) {
				e->ops->release(l->lane, &r->permit, r->permit.bytes, MCC_REL_RECLAIMED);
				r->admitted = 0;
				atomic_fetch_sub(&e->c.permits_live, 1);
			})
			atomic_fetch_sub(&d->inflight_bytes, r->bytes);
			if (r->slice) {
				struct tent_slice *s = r->slice;
				r->slice = NULL;
				atomic_fetch_sub(&l->inflight, 1);
				resubmit(l, s);
			}
			q->wc_head++;
			q->ack_head = q->wc_head > q->ack_head ? q->wc_head : q->ack_head;
			atomic_fetch_sub(&q->depth, 1);
			CNT_ADD(e, reclaimed, 1);
		}
	}
	pthread_mutex_unlock(&d->mu);
}

/* Software timeout: any in-flight slice older than max_timeout_ns. */
static void check_timeouts(struct tent_lane *l, uint64_t now)
{
	tent_engine *e = l->e;
	for (uint32_t i = 0; i < e->ndev; i++) {
		struct tent_dev *d = &e->dev[i];
		struct tent_ep *hit = NULL;
		uint64_t k = 0;
		pthread_mutex_lock(&d->mu);
		for (int sg = 0; sg < TENT_MAX_SEG && !hit; sg++)
			for (int rd = 0; rd < TENT_MAX_RDEV && !hit; rd++) {
				struct tent_route *rt = d->routes[sg][rd];
				struct tent_ep *ep = rt ? rt->ep : NULL;
				if (!ep)
					continue;
				struct tent_qp *q = &ep->q[l->id];
				/* (threaded: a WR may have been posted after `now` was read) */
				if (q->ack_head < q->tail && now > q->ring[q->ack_head % q->cap].post_ts &&
				    now - q->ring[q->ack_head % q->cap].post_ts > e->cfg.max_timeout_ns) {
					hit = ep;
					k = q->ack_head;
					atomic_fetch_add(&ep->refs, 1);
				}
			}
		pthread_mutex_unlock(&d->mu);
		if (!hit)
			continue;
		CNT_ADD(e, timeouts, 1);
		/* software completion deadline while this poller makes progress */
		MCC_HOOK(cc_signal(e, MCC_SIG_SOFT_DEADLINE, d, hit->rt,
		                   hit->q[l->id].ring[k % hit->q[l->id].cap].slice, hit->gen, 0, 0, 0);)
		rail_mark_failed(l, d->idx, hit->rt->seg, hit->rt->rdev, now);
		acknowledge(l, &hit->q[l->id], k, R_TIMEOUT, 0);
		ep_reset(e, d, hit); /* disableEndpoint */
		atomic_fetch_sub(&hit->refs, 1);
	}
}

/* One WC of asyncPollCq (the caller holds a reference on r->ep). */
static void poll_wc(struct tent_lane *l, struct tent_dev *d, struct tent_rec *r,
                    const struct mcc_fab_wc *wc, uint64_t now)
{
	tent_engine *e = l->e;
	struct tent_ep *ep = r->ep;
	struct tent_qp *q = &ep->q[r->qp];
	uint64_t idx = q->wc_head++;
	atomic_fetch_sub(&q->depth, 1);
	atomic_fetch_sub(&d->inflight_bytes, r->bytes);
	int st = wc->status;
#if MCC_CC_COMPILED_IN
	/* Workers::asyncPollCq: ibv_poll_cq returned this WC */
	if (e->cc_on && r->admitted) {
		struct mcc_completion_v1 c;
		mcc_host_completion(&c, wc, r->gen, r->permit.bytes, r->post_ts, now);
		e->ops->on_completion(l->lane, &r->permit, &c);
		r->admitted = 0;
		atomic_fetch_sub(&e->c.permits_live, 1);
	}
#endif
	if (!r->slice) /* already acknowledged by an earlier sweep */
		return;
	struct tent_slice *s = r->slice;
	if (st == IBV_WC_SUCCESS) {
		/* releaseSliceQuota: EWMA from enqueue (includes queueing) */
		uint64_t lat = now > s->enqueue_ts ? now - s->enqueue_ts : 1;
		double bw = (double)s->len * 1e9 / (double)lat, old = ld_bw(d);
		double lo = 0.1 * (double)d->attr.link_rate_bps / 8, hi = 10.0 * lo * 10;
		double nw = old * 0.99 + bw * 0.01;
		st_bw(d, nw < lo ? lo : nw > hi ? hi : nw);
		atomic_fetch_add(&d->completed_bytes, s->len); /* noteCompleted */
		rail_mark_recovered(l, d->idx, s->seg, s->dst_dev);
		acknowledge(l, q, idx, R_COMPLETED, 0);
		return;
	}
	if (st == IBV_WC_WR_FLUSH_ERR)
		CNT_ADD(e, flushes, 1);
	else
		CNT_ADD(e, wc_errors, 1);
	/* every error resets the endpoint and charges the rail */
	rail_mark_failed(l, d->idx, s->seg, s->dst_dev, now);
	int refresh = st == IBV_WC_REM_ACCESS_ERR || st == IBV_WC_REM_OP_ERR;
	MCC_HOOK(if (refresh) cc_signal(e, MCC_SIG_METADATA_STALE, d, ep->rt, s, r->gen, st, 0,
	                                0);)
	acknowledge(l, q, idx, R_PENDING, refresh);
	ep_reset(e, d, ep);
}

/* Workers::asyncPollCq */
static uint32_t async_poll_cq(struct tent_lane *l, uint64_t now)
{
	tent_engine *e = l->e;
	struct mcc_fab_wc wc[TENT_POLL];
	uint32_t total = 0;
	if (now >= l->next_timeout_scan) {
		check_timeouts(l, now);
		l->next_timeout_scan = now + 1000000;
	}
	for (uint32_t i = 0; i < e->ndev; i++) {
		struct tent_dev *d = &e->dev[i];
		int n = e->fo->poll_cq(d->cq[l->id], TENT_POLL, wc);
		for (int k = 0; k < n; k++) {
			struct tent_rec *r = (struct tent_rec *)(uintptr_t)wc[k].wr_id;
			struct tent_ep *ep = r->ep;
			/* the WC's endpoint is used after its depth went back, when the
			 * monitor may already free it: hold a reference, taken before
			 * the depth drops (ep_idle) */
			atomic_fetch_add(&ep->refs, 1);
			poll_wc(l, d, r, &wc[k], now);
			atomic_fetch_sub(&ep->refs, 1);
		}
		total += (uint32_t)(n > 0 ? n : 0);
		MCC_HOOK(if (e->cc_on) e->ops->poller_progress(l->lane, d->ccdev, (uint32_t)(n > 0 ? n : 0));)
		if (atomic_load(&d->cq_error) == 1)
			reclaim_lane_qps(l, d);
	}
	return total;
}

/* Workers::workerThread: post then poll on the same thread. */
static uint64_t tent_lane_step(void *arg, uint64_t now)
{
	struct tent_lane *l = arg;
	tent_engine *e = l->e;
	uint64_t stall = atomic_load(&l->stall_until);
	if (stall > now)
		return stall;
	uint32_t posted = async_post_send(l);
	uint32_t polled = async_poll_cq(l, now);
	uint64_t cost = MCC_HOST_COST_PASS_NS + posted * MCC_HOST_COST_WR_NS + polled * MCC_HOST_COST_WC_NS;
	CNT_ADD(e, cpu_virtual_ns, cost);
	if (posted || polled)
		return now + cost;
	if (l->pending[0] || l->pending[1] || l->pending[2])
		return now + 200000; /* blocked by limits/admission: completions wake us */
	return atomic_load(&l->inflight) ? now + 1000000 : MCC_EXEC_PARK;
}

static void cq_notify(void *arg)
{
	struct tent_lane *l = arg;
	mcc_exec_wake(l->actor, now_of(l->e) + MCC_HOST_POLL_LATENCY_NS);
}

static void async_notify(void *arg)
{
	struct tent_dev *d = arg;
	mcc_exec_wake(d->e->monitor, now_of(d->e) + MCC_HOST_POLL_LATENCY_NS);
}

/* ------------------------------------------------------------- monitor */

/* Workers::handleContextEvents, then the policy hook. */
static void handle_event(tent_engine *e, struct tent_dev *d, const struct mcc_fab_async_event *ev,
                         uint64_t now)
{
	struct tent_ep *ep = ev->qp_context;
	MCC_FIELD(struct tent_route *rt = ep ? ep->rt : NULL; uint32_t gen = ep ? ep->gen : 0;)
	CNT_ADD(e, async_events, 1);
	switch (ev->event_type) {
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_WQ_FATAL:
		if (ep)
			ep_reset(e, d, ep); /* remove endpoint */
		break;
	case IBV_EVENT_CQ_ERR: /* pause + resume the context; lanes reclaim */
		atomic_store(&d->cq_error, 1);
		for (int s = 0; s < TENT_MAX_SEG; s++)
			for (int r = 0; r < TENT_MAX_RDEV; r++) {
				struct tent_ep *x = d->routes[s][r] ? d->routes[s][r]->ep : NULL;
				if (x)
					ep_reset(e, d, x);
			}
		atomic_store(&d->enabled, 0);
		break;
	case IBV_EVENT_DEVICE_FATAL:
	case IBV_EVENT_PORT_ERR:
		atomic_store(&d->enabled, 0);
		break;
	case IBV_EVENT_PORT_ACTIVE:
		if (!atomic_load(&d->cq_error)) {
			atomic_store(&d->enabled, 1);
			st_bw(d, (double)d->attr.link_rate_bps / 8); /* re-seed from link speed */
		}
		break;
	default:
		break;
	}
	for (uint32_t i = 0; i < e->nlanes; i++)
		mcc_exec_wake(e->lanes[i].actor, now);
#if MCC_CC_COMPILED_IN
	struct mcc_async_event_v1 ae;
	memset(&ae, 0, sizeof(ae));
	ae.struct_size = sizeof(ae);
	ae.event_type = ev->event_type;
	ae.device = d->ccdev;
	ae.route = rt ? rt->cc : NULL;
	ae.port_num = ev->port_num;
	ae.cq_id = ev->cq_id;
	ae.qp_num = ev->qp_num;
	ae.generation = gen;
	ae.now_ns = now;
	if (e->cc_async && d->ccdev)
		e->ops->on_async_event(e->cc, &ae);
#endif
}

static uint64_t tent_monitor_step(void *arg, uint64_t now)
{
	tent_engine *e = arg;
	for (uint32_t i = 0; i < e->ndev; i++) {
		struct tent_dev *d = &e->dev[i];
		struct mcc_fab_async_event ev;
		while (e->fo->get_async_event(d->dev, &ev) == 0) {
			e->fo->ack_async_event(&ev);
			handle_event(e, d, &ev, now);
		}
		/* reclaim destroyed endpoints whose QPs drained */
		pthread_mutex_lock(&d->mu);
		for (struct tent_ep **pp = &d->retired; *pp;) {
			struct tent_ep *ep = *pp;
			if (!ep_idle(ep)) {
				pp = &ep->next_retired;
				continue;
			}
			*pp = ep->next_retired;
			ep_free(e, ep);
		}
		pthread_mutex_unlock(&d->mu);
#if MCC_CC_COMPILED_IN
		/* TENT keeps deriving delivery rate from its own telemetry */
		if (d->ccdev && (e->sig_mask & (1ull << MCC_SIG_DEVICE_TELEMETRY)))
			cc_signal(e, MCC_SIG_DEVICE_TELEMETRY, d, NULL, NULL, 0, 0,
			          atomic_load(&d->posted_bytes), atomic_load(&d->completed_bytes));
#endif
	}
#if MCC_CC_COMPILED_IN
	if (e->cc_on) /* one tick per epoch over every engine of the instance */
		mcc_engine_tick_if_due(e->eng, now);
#endif
	CNT_ADD(e, cpu_virtual_ns, MCC_HOST_COST_PASS_NS);
	return now + (uint64_t)e->cfg.monitor_period_us * 1000u;
}

/* ------------------------------------------------------------ construction */

#if MCC_CC_COMPILED_IN
/* TENT-style plugin loading: the plugin directory comes from the engine's
 * configuration (cf. MemoryProber::loadPlugins(dir)); libmcc checks the
 * descriptor and falls back to the null policy on any error. */
static int tent_load_cc_plugin(tent_engine *e)
{
	struct mcc_loader_opts o;
	memset(&o, 0, sizeof(o));
	o.struct_size = sizeof(o);
	o.max_lanes = e->env.cc_max_lanes; /* 0: the engine SDK's process-wide bound */
	o.engine = "tent";
	o.ini_path = e->cfg.cc_config ? e->cfg.cc_config : e->env.cc_ini_path;
	o.module_dir = e->cfg.cc_plugin_dir ? e->cfg.cc_plugin_dir : e->env.cc_module_dir;
	o.host_caps = MCC_HOST_CAP_ASYNC_EVENTS | MCC_HOST_CAP_CQ_IDENTITY |
	              MCC_HOST_CAP_POLLER_PROGRESS | MCC_HOST_CAP_DEVICE_TELEMETRY |
	              MCC_HOST_CAP_COMPLETION_TS;
	o.log = e->env.log;
	o.log_arg = e->env.log_arg;
	o.ignore_env = e->env.cc_ignore_env;
	struct mcc_engine_opts eo; /* the engine SDK: lanes, the tick claim, the clock */
	memset(&eo, 0, sizeof(eo));
	eo.struct_size = sizeof(eo);
	eo.tick = MCC_ENGINE_TICK_POLL; /* the monitor's pass ticks */
	eo.loader = &o;
	eo.now_ns = mcc_exec_clock;
	eo.clock_arg = e->env.ex;
	mcc_engine_open(&eo, &e->eng);
	if (!e->eng)
		return -ENOMEM;
	e->inst = mcc_engine_instance(e->eng);
	e->ops = mcc_instance_ops(e->inst);
	e->cc = mcc_instance_ctx(e->inst);
	const struct mcc_config *cfg = mcc_instance_config(e->inst);
	e->epoch_ns = cfg && cfg->policy.epoch_us ? (uint64_t)cfg->policy.epoch_us * 1000u : 1000000u;
	e->spill_below = cfg ? 2 * cfg->policy.min_window_bytes : 0;
	/* read once at construction (RFC): off bypasses every hook */
	e->cc_on = mcc_instance_mode(e->inst) != MCC_MODE_OFF;
	e->sig_mask = e->cc_on ? mcc_instance_signal_mask(e->inst) : 0;
	e->cc_async = e->cc_on && mcc_instance_wants_async_events(e->inst);
	return 0;
}
#endif

tent_engine *tent_engine_create(const struct tent_config *cfg, const struct mcc_host_env *env)
{
	tent_engine *e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->cfg = *cfg;
	e->env = *env;
	e->fo = env->fab.ops;
	e->nlanes = cfg->num_lanes ? cfg->num_lanes : 6;
	if (e->nlanes > TENT_MAX_LANES)
		e->nlanes = TENT_MAX_LANES;
	if (!e->cfg.monitor_period_us)
		e->cfg.monitor_period_us = 1000;
	pthread_mutex_init(&e->mr_mu, NULL);
	pthread_mutex_init(&e->seg_mu, NULL);
	MCC_HOOK(if (tent_load_cc_plugin(e) != 0) { free(e); return NULL; })
	int nd = e->fo->num_devices(env->fab.fab, cfg->node);
	if (cfg->num_devices && (int)cfg->num_devices < nd)
		nd = (int)cfg->num_devices;
	if (nd > TENT_MAX_DEV)
		nd = TENT_MAX_DEV;
	for (uint32_t w = 0; w < e->nlanes; w++) {
		struct tent_lane *l = &e->lanes[w];
		l->e = e;
		l->id = w;
		pthread_mutex_init(&l->qmu, NULL);
		snprintf(l->name, sizeof(l->name), "tent%u.lane%u", cfg->node, w);
#if MCC_CC_COMPILED_IN
		if (e->cc_on && mcc_engine_lane_open(e->eng, MCC_LANE_POST_POLL, &l->lane_ref, &l->lane))
			l->lane = NULL;
#endif
		l->actor = mcc_exec_add(env->ex, l->name, tent_lane_step, l, MCC_EXEC_PARK);
	}
	for (int i = 0; i < nd; i++) {
		struct tent_dev *d = &e->dev[e->ndev];
		d->e = e;
		d->idx = (int)e->ndev;
		d->dev = e->fo->open_device(env->fab.fab, cfg->node, (uint32_t)i);
		if (!d->dev)
			continue;
		e->fo->query_device(d->dev, &d->attr);
		pthread_mutex_init(&d->mu, NULL);
		for (uint32_t w = 0; w < e->nlanes; w++)
			d->cq[w] = e->fo->create_cq(d->dev, e->cfg.max_cqe / e->nlanes, d, cq_notify,
			                            &e->lanes[w]);
		st_bw(d, (double)d->attr.link_rate_bps / 8);
		atomic_store(&d->enabled, 1);
		e->fo->set_async_notify(d->dev, async_notify, d);
#if MCC_CC_COMPILED_IN
		struct mcc_device_desc_v1 dd = {sizeof(dd), (uint32_t)d->idx, d->attr.name, d->attr.num_ports,
		                                0, d->attr.link_rate_bps,
		                                mcc_engine_device_flags(NULL, d->attr.name)};
		if (!e->cc_on || mcc_engine_device_open(e->eng, &dd, &d->ccdev) != 0)
			d->ccdev = NULL;
#endif
		e->ndev++;
	}
	snprintf(e->mon_name, sizeof(e->mon_name), "tent%u.monitor", cfg->node);
	e->monitor = mcc_exec_add(env->ex, e->mon_name, tent_monitor_step, e, 0);
	return e;
}

void tent_engine_destroy(tent_engine *e)
{
	if (!e)
		return;
	for (uint32_t i = 0; i < e->ndev; i++) {
		struct tent_dev *d = &e->dev[i];
		for (int s = 0; s < TENT_MAX_SEG; s++)
			for (int r = 0; r < TENT_MAX_RDEV; r++) {
				struct tent_route *rt = d->routes[s][r];
				if (rt && rt->ep) {
					rt->ep->next_retired = d->retired;
					d->retired = rt->ep;
					rt->ep = NULL;
				}
			}
		for (struct tent_ep *ep = d->retired, *n; ep; ep = n) {
			n = ep->next_retired;
			for (uint32_t k = 0; k < ep->nqp; k++) {
				struct tent_qp *q = &ep->q[k];
				for (; q->wc_head < q->tail; q->wc_head++) {
					struct tent_rec *r = &q->ring[q->wc_head % q->cap];
					MCC_HOOK(if (r->admitted) {
						e->ops->release(e->lanes[k].lane, &r->permit, r->permit.bytes,
						                MCC_REL_RECLAIMED);
						atomic_fetch_sub(&e->c.permits_live, 1);
					})
					(void)r;
				}
			}
			ep_free(e, ep);
		}
		for (int s = 0; s < TENT_MAX_SEG; s++)
			for (int r = 0; r < TENT_MAX_RDEV; r++) {
				struct tent_route *rt = d->routes[s][r];
				if (!rt)
					continue;
				MCC_HOOK(if (rt->cc) {
					mcc_engine_stat_route_remove(e->eng, rt->cc);
					e->ops->route_close(e->cc, rt->cc);
				})
				free(rt);
			}
	}
#if MCC_CC_COMPILED_IN
	for (uint32_t w = 0; w < e->nlanes; w++)
		if (e->lanes[w].lane)
			mcc_engine_lane_close(e->eng, e->lanes[w].lane_ref);
	for (uint32_t i = 0; i < e->ndev; i++)
		if (e->dev[i].ccdev)
			mcc_engine_device_close(e->eng, e->dev[i].ccdev);
	mcc_engine_close(e->eng);
#endif
	for (uint32_t i = 0; i < e->ndev; i++) {
		struct tent_dev *d = &e->dev[i];
		for (uint32_t b = 0; b < e->nbufs; b++)
			if (e->bufs[b].mr[i].dev)
				e->fo->dereg_mr(&e->bufs[b].mr[i]);
		for (uint32_t w = 0; w < e->nlanes; w++)
			if (d->cq[w])
				e->fo->destroy_cq(d->cq[w]);
		e->fo->close_device(d->dev);
		pthread_mutex_destroy(&d->mu);
	}
	for (uint32_t w = 0; w < e->nlanes; w++)
		pthread_mutex_destroy(&e->lanes[w].qmu);
	pthread_mutex_destroy(&e->mr_mu);
	pthread_mutex_destroy(&e->seg_mu);
	free(e);
}

/* ---------------------------------------------------------------- public */

int tent_register_memory(tent_engine *e, void *addr, size_t len)
{
	pthread_mutex_lock(&e->mr_mu);
	if (e->nbufs == 32) {
		pthread_mutex_unlock(&e->mr_mu);
		return -ENOSPC;
	}
	e->bufs[e->nbufs].addr = addr;
	e->bufs[e->nbufs].len = len;
	for (uint32_t i = 0; i < e->ndev; i++)
		if (e->fo->reg_mr(e->dev[i].dev, addr, len, &e->bufs[e->nbufs].mr[i]) != 0) {
			pthread_mutex_unlock(&e->mr_mu);
			return -EIO;
		}
	e->nbufs++;
	pthread_mutex_unlock(&e->mr_mu);
	return 0;
}

static struct tent_batch *batch_of(uint64_t id)
{
	struct tent_batch *b = (struct tent_batch *)(uintptr_t)id;
	return (id && b->magic == TENT_BATCH_MAGIC) ? b : NULL;
}

uint64_t tent_allocate_batch(tent_engine *e, size_t n)
{
	struct tent_batch *b = calloc(1, sizeof(*b));
	if (!b || !(b->tasks = calloc(n ? n : 1, sizeof(*b->tasks)))) {
		free(b);
		return 0;
	}
	b->magic = TENT_BATCH_MAGIC;
	b->cap = n;
	/* batch ids are pointers, recycled: see te_allocate_batch */
	MCC_HOOK(if (e->cc_on && mcc_engine_batch_begin(e->eng, (uint64_t)(uintptr_t)b) == -ENOMEM) {
		free(b->tasks);
		free(b);
		return 0;
	})
	MCC_NOCC((void)e;)
	return (uint64_t)(uintptr_t)b;
}

/* RdmaTransport::submitTransferTasks: at most 64 slices per request, block
 * rounded up to a multiple of block_size; slices spread over the lanes. */
int tent_submit(tent_engine *e, uint64_t batch_id, const tent_request_t *reqs, size_t n)
{
	struct tent_batch *b = batch_of(batch_id);
	if (!b || b->n + n > b->cap)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		const tent_request_t *q = &reqs[i];
		struct mcc_seg_desc sd;
		if (seg_get(e, (uint32_t)q->target_id, &sd, 0) != 0 || !q->length ||
		    q->target_offset + q->length > sd.length)
			return -EINVAL;
		uint64_t block = e->cfg.block_size;
		while ((q->length + block - 1) / block > TENT_MAX_SLICES_PER_REQ)
			block += e->cfg.block_size;
		uint32_t cnt = (uint32_t)((q->length + block - 1) / block);
		if (cnt > 1 && q->length - (uint64_t)(cnt - 1) * block < block / 4)
			cnt--; /* tail < 25 % merges */
		struct tent_task *t = &b->tasks[b->n];
		t->slices = calloc(cnt, sizeof(*t->slices));
		if (!t->slices)
			return -ENOMEM;
		t->batch = b;
		t->id = b->n++;
		t->total = q->length;
		t->nslices = cnt;
		uint32_t lane0 = atomic_fetch_add(&e->rr, 1);
		uint64_t now = now_of(e);
		for (uint32_t k = 0; k < cnt; k++) {
			struct tent_slice *s = &t->slices[k];
			uint64_t off = (uint64_t)k * block;
			s->task = t;
			s->src = (uint64_t)(uintptr_t)q->source + off;
			s->dst = sd.base + q->target_offset + off;
			s->len = (uint32_t)(k + 1 == cnt ? q->length - off : block);
			s->opcode = q->opcode;
			s->seg = (uint32_t)q->target_id;
			s->src_dev = -1;
			s->priority = q->priority;
			s->enqueue_ts = now;
			MCC_HOOK(s->cc_qdev = -1;)
		}
		for (uint32_t k = 0; k < cnt; k++)
			lane_push(&e->lanes[(lane0 + k) % e->nlanes], &t->slices[k]);
	}
	return 0;
}

int tent_task_status(tent_engine *e, uint64_t batch_id, uint64_t task_id, tent_status_t *st)
{
	(void)e;
	struct tent_batch *b = batch_of(batch_id);
	if (!b || task_id >= b->n || !st)
		return -1;
	struct tent_task *t = &b->tasks[task_id];
	st->transferred_bytes = atomic_load(&t->transferred);
	if (atomic_load(&t->resolved) == t->nslices)
		st->status = atomic_load(&t->failed) ? TENT_STATUS_FAILED : TENT_STATUS_COMPLETED;
	else
		st->status = TENT_STATUS_PENDING;
	return 0;
}

int tent_free_batch(tent_engine *e, uint64_t batch_id)
{
	struct tent_batch *b = batch_of(batch_id);
	if (!b)
		return -EINVAL;
	for (size_t i = 0; i < b->n; i++)
		if (atomic_load(&b->tasks[i].resolved) != b->tasks[i].nslices)
			return -EBUSY;
	MCC_HOOK(if (e->cc_on) mcc_engine_batch_free(e->eng, batch_id);) /* tent_free_batch */
	MCC_NOCC((void)e;)
	for (size_t i = 0; i < b->n; i++)
		free(b->tasks[i].slices);
	free(b->tasks);
	b->magic = 0;
	free(b);
	return 0;
}

int tent_get_task_congestion_detail(tent_engine *e, uint64_t batch_id, uint64_t task_id,
                                    struct mcc_task_detail_v1 *detail)
{
	struct tent_batch *b = batch_of(batch_id);
	if (!b || task_id >= b->n || !detail || detail->struct_size < 8)
		return -EINVAL;
#if MCC_CC_COMPILED_IN
	struct tent_task *t = &b->tasks[task_id];
	uint32_t facts = 0;
	if (atomic_load(&t->success))
		facts |= MCC_TASKQ_SEEN_SUCCESS;
	if (atomic_load(&t->resolved) == t->nslices)
		facts |= MCC_TASKQ_FINISHED;
	if (atomic_load(&t->failed))
		facts |= MCC_TASKQ_FAILED;
	return mcc_host_task_detail(e->cc_on, e->ops, e->cc, batch_id, task_id, facts, detail);
#else
	(void)e;
	mcc_host_detail_unknown(detail); /* compiled out: no evidence */
	return 0;
#endif
}

int tent_get_task_congestion_state(tent_engine *e, uint64_t batch_id, uint64_t task_id, int *state)
{
	struct mcc_task_detail_v1 d;
	if (!state)
		return -EINVAL;
	int rc = tent_get_task_congestion_detail(e, batch_id, task_id, mcc_host_detail_init(&d));
	return mcc_host_task_state(rc, &d, state);
}

void tent_set_task_notify(tent_engine *e, void (*fn)(void *, uint64_t, uint64_t), void *arg)
{
	e->notify = fn;
	e->notify_arg = arg;
}

void tent_get_stats(tent_engine *e, struct tent_stats *o)
{
#define LD(f) o->f = atomic_load(&e->c.f)
	LD(slices_posted);
	LD(slices_completed);
	LD(slices_failed);
	LD(slices_retried);
	LD(wc_errors);
	LD(flushes);
	LD(timeouts);
	LD(post_rejects);
	LD(defers);
	LD(avoids);
	LD(admits);
	LD(endpoints_created);
	LD(endpoints_reset);
	LD(rail_pauses);
	LD(async_events);
	LD(reclaimed);
	LD(permits_live);
	LD(cpu_virtual_ns);
	LD(handoffs);
	LD(spills);
#undef LD
}

uint32_t tent_num_devices(const tent_engine *e)
{
	return e->ndev;
}

void tent_inject_poller_stall(tent_engine *e, uint32_t lane, uint64_t dur)
{
	for (uint32_t w = 0; w < e->nlanes; w++)
		if (w == lane || lane >= e->nlanes)
			atomic_store(&e->lanes[w].stall_until, now_of(e) + dur);
}

int tent_domain_stats(tent_engine *e, uint32_t dev, int seg, int rdev, struct mcc_domain_stats_v1 *out)
{
#if MCC_CC_COMPILED_IN
	if (dev >= e->ndev)
		return -ENOENT;
	struct tent_dev *d = &e->dev[dev];
	if (seg < 0)
		return d->ccdev ? e->ops->domain_stats(e->cc, MCC_DOMAIN_DEVICE, d->ccdev, out) : -ENOENT;
	if (seg >= TENT_MAX_SEG || rdev < 0 || rdev >= TENT_MAX_RDEV)
		return -EINVAL;
	pthread_mutex_lock(&d->mu);
	mcc_route *r = d->routes[seg][rdev] ? d->routes[seg][rdev]->cc : NULL;
	pthread_mutex_unlock(&d->mu);
	return r ? e->ops->domain_stats(e->cc, MCC_DOMAIN_ROUTE, r, out) : -ENOENT;
#else
	(void)e;
	(void)dev;
	(void)seg;
	(void)rdev;
	(void)out;
	return -EOPNOTSUPP;
#endif
}

const char *tent_cc_mode(const tent_engine *e)
{
#if MCC_CC_COMPILED_IN
	return mcc_host_mode_name(mcc_instance_mode(e->inst));
#else
	(void)e;
	return "compiled-out";
#endif
}
