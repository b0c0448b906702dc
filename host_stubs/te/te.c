/* SPDX-License-Identifier: MIT */
/*
 * te.c - classic Transfer Engine RDMA transport stub (see te.h).
 *
 * Object model as in mooncake-transfer-engine/src/transport/rdma_transport:
 *   te_engine  ~ RdmaTransport (+ TransferEngineImpl batch/status surface)
 *   te_ctx     ~ RdmaContext: one per local NIC, with its CQ, endpoint store,
 *                worker pool (workers_per_ctx threads: thread 0 polls, the
 *                others post, each owning shards) and a monitor thread
 *   te_route   ~ the (local context, peer_nic_path) pair: rail state,
 *                current endpoint, and the RFC route domain
 *   te_ep      ~ RdmaEndPoint: num_qp_per_ep RC QPs towards one remote NIC
 *
 * Engine steps (executor actors): te_post_step (WorkerPool::performPostSend),
 * te_poll_step (WorkerPool::performPollCq), te_monitor_step
 * (WorkerPool::monitorWorker). Hooks are compiled in with
 * MCC_ENABLE_ADAPTIVE_CC=1 (mcc_hooks.h) and vanish otherwise.
 */
#include "te.h"

#include "mcc_hooks.h"
#if MCC_CC_COMPILED_IN
#include "mcc_engine.h"
#endif

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TE_MAX_CTX 8
#define TE_MAX_SEG 72 /* segment = node id: MCC_FAB_MAX_NODES */
#define TE_MAX_PEER_DEV 8
#define TE_SHARDS 8          /* kShardCount */
#define TE_POLL_COUNT 64     /* kPollCount */
#define TE_MAX_QP 4
#define TE_MAX_WORKERS 8
#define TE_MAX_BUFS 64
#define TE_RAIL_ERR_THRESHOLD 5                  /* kRailErrorThreshold */
#define TE_RAIL_ERR_WINDOW_NS 5000000000ull      /* kRailErrorWindowNs */
#define TE_CTX_FAILURE_THRESHOLD 32              /* kContextFailureThreshold */
#define TE_BLOCKED_RETRY_NS 200000   /* poster fallback re-check when blocked */
#define TE_BLOCKED_DEFER 2           /* *blocked bit: only the policy DEFERred */
#define TE_AVOID_BACKOFF_MAX 64      /* epochs: cap of a PROBING route's AVOID mark */
#define TE_HELD_EPOCHS 4             /* epochs a held (DEFER near the floor) mark lasts */
#define TE_PAUSED_MEMO_NS 250000000ull /* a paused rail seen by the rail check, remembered */
#define TE_BATCH_MAGIC 0x7465626174636821ull

enum { SL_PENDING = 0, SL_POSTED, SL_SUCCESS, SL_FAILED };
enum { EP_CONNECTED = 1, EP_DESTROYING = 2 };

struct te_task;
struct te_ep;
struct te_ctx;

struct te_slice {
	struct te_slice *next;
	struct te_task *task;
	uint64_t src, dst;
	uint32_t len;
	int opcode;
	int32_t seg;
	int peer_dev;
	uint32_t rkey;
	uint32_t retry_cnt;
	uint32_t avoid_hops; /* reroutes (site 9 moves; not the retry budget) */
	uint32_t generation;
	int qp;
	struct te_ep *ep;
	uint64_t ts;
	int status;
	MCC_FIELD(struct mcc_permit_v1 permit; int admitted;)
};

struct te_batch;
struct te_task {
	struct te_batch *batch;
	uint64_t task_id;
	uint64_t total_bytes;
	_Atomic uint64_t transferred;
	uint32_t slice_count;
	_Atomic uint32_t success, failed;
	_Atomic uint32_t resolved; /* slices in a terminal state */
	_Atomic int finished;      /* set last: the batch may be freed from here on */
	int submitted;
	struct te_slice *slices;
};

struct te_batch {
	uint64_t magic;
	te_engine *e;
	size_t cap, n;
	struct te_task *tasks;
};

struct te_rail { /* RailState */
	uint32_t error_count;
	uint64_t pause_until_ns, last_error_ns;
};

struct te_qpslot {
	mcc_fab_qp *qp;
	_Atomic uint32_t depth; /* wr_depth_list_[qp] */
	struct te_slice **fifo; /* posted, in SQ order (posted-slice tracker) */
	uint32_t cap;
	_Atomic uint32_t head, tail;
};

struct te_route;
struct te_ep {
	struct te_route *rt;
	struct te_ctx *ctx;
	uint32_t gen;
	_Atomic int state;
	_Atomic int refs;
	uint32_t nqp;
	uint32_t next_qp;
	struct te_qpslot q[TE_MAX_QP];
	pthread_mutex_t lock;
	struct te_ep *next_retired;
};

struct te_route {
	struct te_ctx *ctx;
	int32_t seg;
	int dev;
	char path[64]; /* peer_nic_path */
	struct te_ep *ep;
	uint32_t gen;  /* last endpoint generation on this route */
	struct te_rail rail;
	/* reroute mark (rt_mu), the adapter's Pool::Mark (mcc_mooncake.cpp):
	 * 1 avoided (AVOID), 2 held (DEFER near the floor, or SUSPECT), until
	 * mark_until; mark_signalled: NO_USABLE_PATH reported under it */
	int mark, mark_signalled;
	uint64_t mark_until, mark_backoff;
	/* until when TE's rail check was last seen to refuse this path (set
	 * where peer_alt_locked asks it; Mark::paused_until) */
	uint64_t paused_until;
	uint64_t route_id;
	/* poster-private queue (collective_slice_queue_) */
	struct te_slice *pq, *pq_tail;
	int in_active;
	MCC_FIELD(mcc_route *cc; int cc_owned;)
};

struct te_worker {
	struct te_ctx *ctx;
	int tid;
	mcc_actor *actor;
	char name[32];
	struct te_route **active;
	uint32_t nactive, capactive;
	uint32_t seen_redispatch;
	MCC_FIELD(mcc_lane *lane; mcc_lane_ref lane_ref;)
};

struct te_ctx {
	te_engine *e;
	int idx;
	mcc_fab_dev *dev;
	struct mcc_fab_device_attr attr;
	mcc_fab_cq *cq;
	uint32_t cq_id;
	_Atomic int active;
	_Atomic int cq_error; /* 1: CQ_ERR seen, reclaim pending; 2: reclaimed */
	_Atomic int fatal;
	uint64_t recover_at;
	_Atomic uint32_t cq_outstanding;
	_Atomic int ctx_failures;
	_Atomic uint32_t redispatch_counter;
	_Atomic uint64_t dev_held_until; /* its device domain held near its floor */
	_Atomic uint64_t stall_until, last_poll_ns;
	pthread_mutex_t shard_mu[TE_SHARDS];
	struct te_slice *shard_h[TE_SHARDS], *shard_t[TE_SHARDS];
	pthread_mutex_t rt_mu; /* routes, endpoints, retired list, rail state */
	struct te_route *routes[TE_MAX_SEG][TE_MAX_PEER_DEV];
	struct te_ep *retired;
	struct te_worker workers[TE_MAX_WORKERS];
	uint32_t nworkers;
	mcc_actor *monitor;
	char mon_name[32];
	MCC_FIELD(mcc_device *ccdev; mcc_lane *mon_lane; mcc_lane_ref mon_lane_ref;)
};

struct te_buf {
	void *addr;
	size_t len;
	struct mcc_fab_mr mr[TE_MAX_CTX];
};

struct te_counters {
	_Atomic uint64_t slices_posted, slices_completed, slices_failed, slices_retried;
	_Atomic uint64_t wc_errors, flushes, post_rejects, defers, avoids, admits;
	_Atomic uint64_t endpoints_created, endpoints_deleted, rail_pauses, handoffs, rebinds, spills;
	_Atomic uint64_t reroute_peer, reroute_local, no_usable_path, avoided_hits;
	_Atomic uint64_t async_events, reclaimed, cpu_virtual_ns;
	_Atomic int64_t permits_live;
};

struct te_engine {
	struct te_config cfg;
	struct mcc_host_env env;
	const struct mcc_fab_ops *fo;
	struct te_ctx ctx[TE_MAX_CTX];
	uint32_t nctx;
	pthread_mutex_t mr_mu;
	struct te_buf bufs[TE_MAX_BUFS];
	uint32_t nbufs;
	pthread_mutex_t seg_mu;
	struct mcc_seg_desc segs[TE_MAX_SEG];
	uint8_t seg_valid[TE_MAX_SEG];
	_Atomic uint32_t rr;
	void (*notify)(void *, uint64_t, uint64_t);
	void *notify_arg;
	struct te_counters c;
	/* cc_on: the controller is not off (read once at construction: mode
	 * off bypasses every hook, RFC "off: bypass policy and admission
	 * state"); cc_enforce: its answers are acted on (dispatch_slice);
	 * sig_mask / cc_async: what the module subscribed to; floor: a window
	 * at most this large is held near the minimum (2 x min_window_bytes, 0
	 * when the windows never leave it); nmarked: some route may carry a
	 * reroute mark (a hint, as the adapter's) */
	MCC_FIELD(mcc_engine *eng; mcc_instance *inst; const struct mcc_policy_v1 *ops; void *cc;
	          pthread_mutex_t cc_mu;
	          uint64_t epoch_ns; uint64_t sig_mask; uint64_t floor; bool cc_on;
	          bool cc_enforce; bool cc_async; _Atomic uint32_t nmarked;)
};

#define CNT_ADD(e, f, v) atomic_fetch_add_explicit(&(e)->c.f, (v), memory_order_relaxed)

/* ------------------------------------------------------------------ config */

void te_config_defaults(struct te_config *c)
{
	memset(c, 0, sizeof(*c));
	c->workers_per_ctx = 2;
	c->slice_size = 65536;
	c->max_wr = 256;
	c->num_qp_per_ep = 2;
	c->max_cqe = 4096;
	c->retry_cnt = 9;
	c->ib_timeout = 14;
	c->ib_retry_cnt = 7;
	c->ib_rnr_retry = 7;
	c->ib_min_rnr_timer = 12;
	c->rail_pause_s = 30;
	c->ctx_recovery_delay_ns = 30000000000ull;
	c->monitor_period_us = 1000;
}

static uint64_t now_of(te_engine *e)
{
	return mcc_exec_now(e->env.ex);
}

/* ------------------------------------------------------------ task status */

/* The single terminal transition of a slice. The slice and its task live
 * in the batch, which the application may free as soon as the task is
 * finished (freeBatchID): everything needed afterwards is read before the
 * last slice publishes `finished`, and nothing of the batch is touched after
 * it. One counter decides which slice is the last (two counters, read one
 * after the other, can let two slices both see themselves last). */
static void task_settle(te_engine *e, struct te_slice *s, int ok)
{
	struct te_task *t = s->task;
	uint64_t batch_id = (uint64_t)(uintptr_t)t->batch, task_id = t->task_id;
	uint32_t count = t->slice_count;
	s->status = ok ? SL_SUCCESS : SL_FAILED;
	if (ok) { /* Slice::markSuccess */
		atomic_fetch_add(&t->transferred, s->len);
		atomic_fetch_add(&t->success, 1);
		CNT_ADD(e, slices_completed, 1);
	} else { /* Slice::markFailed */
		atomic_fetch_add(&t->failed, 1);
		CNT_ADD(e, slices_failed, 1);
	}
	if (atomic_fetch_add(&t->resolved, 1) + 1 != count)
		return; /* not the last: the task (and s) may be gone from here on */
	atomic_store(&t->finished, 1); /* t and s may be freed from here on */
	if (e->notify)
		e->notify(e->notify_arg, batch_id, task_id);
}

/* --------------------------------------------------------- policy helpers */

#if MCC_CC_COMPILED_IN
static void cc_signal(te_engine *e, uint32_t kind, struct te_ctx *ctx, struct te_route *rt,
                      const struct te_slice *s, uint32_t gen, int32_t err, uint64_t v0)
{
	if (!(e->sig_mask & (1ull << kind))) /* off, or not subscribed */
		return;
	struct mcc_signal_v1 sig;
	mcc_host_signal(&sig, kind, ctx ? ctx->ccdev : NULL, rt ? rt->cc : NULL, gen, err, v0, 0,
	                now_of(e));
	if (s) {
		sig.task.batch_id = (uint64_t)(uintptr_t)s->task->batch;
		sig.task.task_id = s->task->task_id;
		sig.task.attempt = s->retry_cnt;
	}
	e->ops->on_signal(e->cc, &sig);
}

/* Settle a live permit without a WC. */
static void cc_release(te_engine *e, mcc_lane *lane, struct te_slice *s, uint32_t reason)
{
	if (!s->admitted)
		return;
	e->ops->release(lane, &s->permit, s->permit.bytes, reason);
	s->admitted = 0;
	atomic_fetch_sub(&e->c.permits_live, 1);
}

/* The route domain of (ctx, seg, dev): opened when the route is resolved;
 * adopted by route_rebind on a local-NIC handoff. Called with ctx->rt_mu. */
static void cc_route_open(te_engine *e, struct te_ctx *ctx, struct te_route *rt)
{
	pthread_mutex_lock(&e->cc_mu);
	/* local-NIC handoff: an inactive context's route to the same peer NIC
	 * moves here (RFC: "A local-NIC handoff rebinds the route"). */
	for (uint32_t i = 0; i < e->nctx && !rt->cc; i++) {
		struct te_ctx *o = &e->ctx[i];
		if (o == ctx || atomic_load(&o->active))
			continue;
		struct te_route *ort = o->routes[rt->seg][rt->dev];
		if (ort && ort->cc && ort->cc_owned) {
			/* Quarantine evidence of the failed NIC stays with it: a
			 * quarantined route is not carried to another device (the
			 * RFC scope table: never expand to other local devices). */
			struct mcc_domain_stats_v1 ds;
			memset(&ds, 0, sizeof(ds));
			ds.struct_size = sizeof(ds);
			if (e->ops->domain_stats(e->cc, MCC_DOMAIN_ROUTE, ort->cc, &ds) == 0 &&
			    (ds.state == MCC_PATH_QUARANTINED || ds.state == MCC_PATH_PROBING))
				continue;
			/* WorkerPool::tryHandoffToAnotherLocalWorker: same peer path */
			if (e->ops->route_rebind(e->cc, ort->cc, ctx->ccdev, 1, ctx->cq_id) == 0) {
				rt->cc = ort->cc;
				rt->cc_owned = 1;
				ort->cc_owned = 0;
				CNT_ADD(e, rebinds, 1);
			}
		}
	}
	if (!rt->cc) {
		struct mcc_route_desc_v1 d;
		memset(&d, 0, sizeof(d));
		d.struct_size = sizeof(d);
		d.port_num = 1;
		d.cq_id = ctx->cq_id;
		d.generation = rt->gen;
		d.route_id = rt->route_id;
		d.peer_path = rt->path;
		d.remote_id = (uint64_t)rt->seg;
		d.base_rtt_ns = mcc_engine_base_rtt_ns(e->eng); /* [engine] base_rtt_us */
		if (e->ops->route_open(e->cc, ctx->ccdev, &d, &rt->cc) != 0)
			rt->cc = NULL;
		rt->cc_owned = rt->cc != NULL;
	}
	/* the live view (mcc stat): the route under its peer path, on the
	 * device it is bound to now (after a handoff too) */
	if (rt->cc)
		mcc_engine_stat_route_add(e->eng, ctx->ccdev, rt->cc, rt->path, strlen(rt->path),
		                          rt->route_id);
	pthread_mutex_unlock(&e->cc_mu);
}
#endif

/* ------------------------------------------------------------- segments */

static int seg_get(te_engine *e, int32_t seg, struct mcc_seg_desc *out, int refresh)
{
	if (seg < 0 || seg >= TE_MAX_SEG)
		return -EINVAL;
	pthread_mutex_lock(&e->seg_mu);
	int rc = 0;
	if (!e->seg_valid[seg] || refresh) {
		rc = e->env.get_segment(e->env.seg_arg, (uint32_t)seg, &e->segs[seg]);
		e->seg_valid[seg] = rc == 0;
	}
	if (rc == 0)
		*out = e->segs[seg];
	pthread_mutex_unlock(&e->seg_mu);
	return rc;
}

static uint32_t lkey_of(te_engine *e, int ctx, uint64_t addr, uint32_t len)
{
	uint32_t k = 0;
	pthread_mutex_lock(&e->mr_mu);
	for (uint32_t i = 0; i < e->nbufs; i++) {
		struct te_buf *b = &e->bufs[i];
		if (addr >= (uintptr_t)b->addr && addr + len <= (uintptr_t)b->addr + b->len) {
			k = b->mr[ctx].lkey;
			break;
		}
	}
	pthread_mutex_unlock(&e->mr_mu);
	return k;
}

/* ------------------------------------------------------------ rail state */

/* WorkerPool::isRailAvailable (rt_mu held) */
static int rail_available(struct te_route *rt, uint64_t now)
{
	if (rt->rail.pause_until_ns && now >= rt->rail.pause_until_ns) {
		rt->rail.pause_until_ns = 0; /* auto-recovery: no probe, full traffic */
		rt->rail.error_count = 0;
	}
	return rt->rail.pause_until_ns == 0;
}

/* WorkerPool::markRailFailed (rt_mu held) */
static void rail_mark_failed(te_engine *e, struct te_route *rt, uint64_t now, int immediate)
{
	if (now - rt->rail.last_error_ns > TE_RAIL_ERR_WINDOW_NS)
		rt->rail.error_count = 0;
	rt->rail.last_error_ns = now;
	if (++rt->rail.error_count >= TE_RAIL_ERR_THRESHOLD || immediate) {
		if (!rt->rail.pause_until_ns)
			CNT_ADD(e, rail_pauses, 1);
		rt->rail.pause_until_ns = now + (uint64_t)e->cfg.rail_pause_s * 1000000000ull;
	}
}

static struct te_route *route_get(te_engine *e, struct te_ctx *ctx, int32_t seg, int dev, int create)
{
	struct te_route *rt = ctx->routes[seg][dev];
	if (rt || !create)
		return rt;
	rt = calloc(1, sizeof(*rt));
	if (!rt)
		return NULL;
	rt->ctx = ctx;
	rt->seg = seg;
	rt->dev = dev;
	/* MakeNicPath: "<peer server name>@<peer nic name>" */
	snprintf(rt->path, sizeof(rt->path), "node%d:12345@mlx5_%d", seg, dev);
	rt->route_id = ((uint64_t)ctx->idx << 32) | ((uint64_t)seg << 8) | (uint64_t)dev;
	ctx->routes[seg][dev] = rt;
	MCC_HOOK(if (e->cc_on) cc_route_open(e, ctx, rt);) /* endpoint to a remote NIC resolved */
	MCC_NOCC((void)e;)
	return rt;
}

#if MCC_CC_COMPILED_IN
static int ctx_dev_bad(te_engine *e, struct te_ctx *ctx, uint64_t now, int kind);
static unsigned cc_local_ok(te_engine *e, struct te_ctx *ctx, int32_t seg, uint64_t now);

/* The reroute mark of rt at now (rt_mu held). */
static int rt_marked(const struct te_route *rt, uint64_t now)
{
	return rt && rt->mark_until > now ? rt->mark : 0;
}

/* A target for traffic leaving a path marked `kind` (the adapter's
 * target_ok): from an AVOIDed path any path not AVOIDed itself; from a
 * held path only an unmarked one. */
static int target_ok(int target_kind, int kind)
{
	return target_kind == 0 || (kind == 1 && target_kind == 2);
}

/* Another route of ctx to seg, seen here, that can take the traffic of
 * (seg, dev) marked `kind` and whose rail TE has not paused (rt_mu held;
 * Pool::peer_alternative with TE's rail check, INTEGRATION.md sites 9 and
 * 10: a paused rail is no alternative, or TE's selection would find no
 * rail and fail the slice). */
static int peer_alt_locked(struct te_ctx *ctx, int32_t seg, int dev, int kind, uint64_t now)
{
	for (int d = 0; d < TE_MAX_PEER_DEV; d++) {
		struct te_route *o = ctx->routes[seg][d];
		if (d == dev || !o || !target_ok(rt_marked(o, now), kind))
			continue;
		if (rail_available(o, now)) {
			o->paused_until = 0;
			return 1;
		}
		o->paused_until = now + TE_PAUSED_MEMO_NS;
	}
	return 0;
}

/* Site 10, Pool::avoided() (rt_mu held): the policy moves traffic off
 * (ctx, seg, dev) and ctx has another route to the peer that can take it:
 * TE's selection passes over it, unless ctx's device is bad and another
 * local device can take the traffic (`local_ok`, cc_local_ok). Never the
 * last usable path to the peer. */
static int avoided_locked(te_engine *e, struct te_ctx *ctx, int32_t seg, int dev, uint64_t now,
                          unsigned local_ok)
{
	int kind;
	if (!atomic_load_explicit(&e->nmarked, memory_order_relaxed) ||
	    !(kind = rt_marked(ctx->routes[seg][dev], now)))
		return 0;
	if (!peer_alt_locked(ctx, seg, dev, kind, now))
		return 0; /* none */
	/* a bad device whose traffic another local device can take: that
	 * hand-off, not another path of this device; with none, another path
	 * of it beats the marked one (cc_reroute's last RR_PEER) */
	if (ctx_dev_bad(e, ctx, now, kind) && (local_ok >> (kind - 1) & 1u))
		return 0;
	CNT_ADD(e, avoided_hits, 1);
	return 1;
}
#endif

/* A peer device on `ctx` (WorkerPool::selectPeerDevice + the paused-rail
 * scan of submitPostSend): preferred = same rail as the local NIC, rotated by
 * the retry count; paused rails skipped, and (site 10, isRailAvailable)
 * paths the controller moves traffic off while the device has another;
 * `avoid_dev` excluded. -1: none. */
static int select_peer_dev(te_engine *e, struct te_ctx *ctx, int32_t seg, uint32_t ndev,
                           uint32_t retry, int avoid_dev)
{
	uint64_t now = now_of(e);
	int best = -1;
	MCC_HOOK(unsigned local_ok = cc_local_ok(e, ctx, seg, now);)
	pthread_mutex_lock(&ctx->rt_mu);
	for (uint32_t k = 0; k < ndev && best < 0; k++) {
		int dev = (int)(((uint32_t)ctx->idx + retry + k) % ndev);
		if (dev == avoid_dev)
			continue;
		struct te_route *r = ctx->routes[seg][dev];
		if (r && !rail_available(r, now))
			continue;
		MCC_HOOK(if (e->cc_enforce && avoided_locked(e, ctx, seg, dev, now, local_ok)) continue;)
		best = dev;
	}
	pthread_mutex_unlock(&ctx->rt_mu);
	return best;
}

static struct te_ctx *pick_active_ctx(te_engine *e, uint32_t start)
{
	for (uint32_t k = 0; k < e->nctx; k++) {
		struct te_ctx *c = &e->ctx[(start + k) % e->nctx];
		if (atomic_load(&c->active))
			return c;
	}
	return NULL;
}

#if MCC_CC_COMPILED_IN
/* The controller's hand-off, tryHandoffToAnotherLocalWorker(slice, true)
 * (INTEGRATION.md sites 9 and 11): the next active context after `from`,
 * starting at retry_cnt mod the contexts (TE's rotation), that has a usable
 * path to the slice's segment (hasAvailablePeerRailAlternative on that
 * context), and the peer device that context's own selection picks
 * (submitPostSend there). The peer NIC is chosen again because another
 * local NIC may not reach the old one (a rail-optimised fabric: each local
 * NIC reaches the peer NIC of its rail). NULL: none. */
static struct te_ctx *handoff_target(te_engine *e, struct te_ctx *from, const struct te_slice *s,
                                     uint32_t ndev, int *dev)
{
	for (uint32_t k = 0; k < e->nctx; k++) {
		struct te_ctx *o = &e->ctx[(s->retry_cnt + k) % e->nctx];
		if (o == from || !atomic_load(&o->active))
			continue;
		*dev = select_peer_dev(e, o, s->seg, ndev, s->retry_cnt, -1);
		if (*dev >= 0)
			return o;
	}
	return NULL;
}

/* Pool::local_alternative: another active context whose device can take
 * the traffic of a path to seg marked `kind`: the hand-off lets that
 * context select the peer device, so one of its routes to seg must be a
 * target that TE's rail check was not last seen to refuse (paused_until),
 * or it has none yet (a fresh selection). A route of its own that is held,
 * or paused, would send the slice back (a ping-pong at one instant).
 * Kind 1 (as AVOIDed) is also site 11's hand_off_ok. */
static int cc_local_alternative(te_engine *e, struct te_ctx *from, int32_t seg, uint64_t now,
                                int kind)
{
	if (!e->cc_enforce)
		return 0;
	for (uint32_t k = 0; k < e->nctx; k++) {
		struct te_ctx *o = &e->ctx[k];
		if (o == from || !atomic_load(&o->active) || ctx_dev_bad(e, o, now, kind))
			continue;
		int seen = 0, ok = 0;
		pthread_mutex_lock(&o->rt_mu);
		for (int d = 0; d < TE_MAX_PEER_DEV && !ok; d++) {
			struct te_route *r = o->routes[seg][d];
			seen |= r != NULL;
			ok = r && target_ok(rt_marked(r, now), kind) && r->paused_until <= now;
		}
		pthread_mutex_unlock(&o->rt_mu);
		if (ok || !seen)
			return 1;
	}
	return 0;
}

/* For site 10 on a bad device: bit kind - 1 set when another local device
 * can take the traffic of its paths to seg marked `kind` (1, 2), found
 * before select_peer_dev takes rt_mu (cc_local_alternative takes the
 * other contexts'). 0 while ctx's device is not bad. */
static unsigned cc_local_ok(te_engine *e, struct te_ctx *ctx, int32_t seg, uint64_t now)
{
	unsigned ok = 0;
	if (!e->cc_enforce || !atomic_load_explicit(&e->nmarked, memory_order_relaxed))
		return 0;
	for (int kind = 1; kind <= 2; kind++) {
		if (ctx_dev_bad(e, ctx, now, kind) && cc_local_alternative(e, ctx, seg, now, kind))
			ok |= 1u << (kind - 1);
	}
	return ok;
}
#endif

static void wake_posters(struct te_ctx *ctx, uint64_t at)
{
	for (uint32_t w = 1; w < ctx->nworkers; w++)
		mcc_exec_wake(ctx->workers[w].actor, at);
	if (ctx->nworkers == 1)
		mcc_exec_wake(ctx->workers[0].actor, at);
}

static int shard_of(const struct te_slice *s)
{
	return (int)(((uint32_t)s->seg * 10007u + (uint32_t)s->peer_dev) % TE_SHARDS);
}

/* Put a prepared slice into ctx's shard queue (submitPreparedPostSend). */
static void enqueue_slice(te_engine *e, struct te_ctx *ctx, struct te_slice *s)
{
	int sh = shard_of(s);
	s->next = NULL;
	s->status = SL_PENDING;
	pthread_mutex_lock(&ctx->shard_mu[sh]);
	if (ctx->shard_t[sh])
		ctx->shard_t[sh]->next = s;
	else
		ctx->shard_h[sh] = s;
	ctx->shard_t[sh] = s;
	pthread_mutex_unlock(&ctx->shard_mu[sh]);
	wake_posters(ctx, now_of(e));
}

/* Route a slice to (ctx, peer device) with fresh keys, or fail it.
 * Used by submit, redispatch and handoff. */
static void dispatch_slice(te_engine *e, struct te_ctx *ctx, struct te_slice *s, int avoid_dev,
                           int refresh)
{
	struct mcc_seg_desc sd;
	if (!ctx || seg_get(e, s->seg, &sd, refresh) != 0) {
		task_settle(e, s, 0);
		return;
	}
	int dev = select_peer_dev(e, ctx, s->seg, sd.ndev, s->retry_cnt, avoid_dev);
	/* Site 11 (Pool::hand_off_ok): the engine has paused every rail of
	 * this device to the peer. Where TE would fail the slice ("all rails
	 * failed"), it goes to another local device and a peer NIC that
	 * device's selection picks (the controller's hand-off) when the
	 * controller knows that device can take it (enforce only: observe
	 * changes nothing). */
	MCC_HOOK(if (dev < 0 && avoid_dev < 0) {
		int d;
		struct te_ctx *o = NULL;
		if (cc_local_alternative(e, ctx, s->seg, now_of(e), 1) &&
		    (o = handoff_target(e, ctx, s, sd.ndev, &d)) != NULL) {
			CNT_ADD(e, handoffs, 1);
			ctx = o;
			dev = d;
		}
	})
	if (dev < 0 && avoid_dev >= 0)
		dev = avoid_dev; /* no alternative: stay on the path */
	if (dev < 0) { /* all rails paused: markFailed ("all rails failed") */
		task_settle(e, s, 0);
		return;
	}
	s->peer_dev = dev;
	s->rkey = sd.rkey[dev];
	enqueue_slice(e, ctx, s);
}

/* WorkerPool::redispatch: retry with remote re-selection if the budget
 * allows (shouldRetrySlice), on this context or, when inactive, handed off
 * to another local context keeping the peer path. */
static void retry_slice(te_engine *e, struct te_ctx *ctx, struct te_slice *s, int refresh)
{
	if (++s->retry_cnt >= e->cfg.retry_cnt) {
		task_settle(e, s, 0);
		return;
	}
	CNT_ADD(e, slices_retried, 1);
	if (!atomic_load(&ctx->active)) {
		/* tryHandoffToAnotherLocalWorker */
		struct te_ctx *o = pick_active_ctx(e, s->retry_cnt);
		CNT_ADD(e, handoffs, 1);
		if (!o) {
			task_settle(e, s, 0);
			return;
		}
		struct mcc_seg_desc sd;
		if (seg_get(e, s->seg, &sd, refresh) != 0) {
			task_settle(e, s, 0);
			return;
		}
		s->rkey = sd.rkey[s->peer_dev];
		enqueue_slice(e, o, s);
		return;
	}
	dispatch_slice(e, ctx, s, -1, refresh);
}

/* ------------------------------------------------------------- endpoints */

static void ep_free(te_engine *e, struct te_ep *ep)
{
	for (uint32_t i = 0; i < ep->nqp; i++) {
		if (ep->q[i].qp)
			e->fo->destroy_qp(ep->q[i].qp);
		free(ep->q[i].fifo);
	}
	pthread_mutex_destroy(&ep->lock);
	free(ep);
}

/* RdmaEndPoint construct + setupConnectionsByActive (rt_mu held). */
static struct te_ep *ep_create(te_engine *e, struct te_ctx *ctx, struct te_route *rt)
{
	struct mcc_seg_desc sd;
	if (seg_get(e, rt->seg, &sd, 0) != 0)
		return NULL;
	struct te_ep *ep = calloc(1, sizeof(*ep));
	if (!ep)
		return NULL;
	pthread_mutex_init(&ep->lock, NULL);
	ep->rt = rt;
	ep->ctx = ctx;
	ep->gen = ++rt->gen;
	ep->nqp = e->cfg.num_qp_per_ep > TE_MAX_QP ? TE_MAX_QP : e->cfg.num_qp_per_ep;
	for (uint32_t i = 0; i < ep->nqp; i++) {
		struct mcc_fab_qp_attr a = {.port_num = 1, .max_send_wr = e->cfg.max_wr,
		                            .timeout = e->cfg.ib_timeout, .retry_cnt = e->cfg.ib_retry_cnt,
		                            .rnr_retry = e->cfg.ib_rnr_retry,
		                            .min_rnr_timer = e->cfg.ib_min_rnr_timer, .generation = ep->gen};
		struct mcc_fab_addr ra = {sd.node, (uint32_t)rt->dev, 1, 0};
		ep->q[i].cap = e->cfg.max_wr + 1;
		ep->q[i].fifo = calloc(ep->q[i].cap, sizeof(*ep->q[i].fifo));
		ep->q[i].qp = e->fo->create_qp(ctx->dev, ctx->cq, &a, ep);
		if (!ep->q[i].fifo || !ep->q[i].qp || e->fo->connect_qp(ep->q[i].qp, &ra) != 0) {
			ep_free(e, ep);
			return NULL;
		}
	}
	atomic_store(&ep->state, EP_CONNECTED);
	CNT_ADD(e, endpoints_created, 1);
	/* rebuilt with a new generation: tell the policy */
	MCC_HOOK(if (ep->gen > 1) cc_signal(e, MCC_SIG_ENDPOINT_REBUILT, ctx, rt, NULL, ep->gen, 0, 0);)
	return ep;
}

/* Endpoint lifetime: a retired endpoint is freed by the monitor
 * (finishDestroy) only when idle: every QP depth 0 (no WC to come) and no
 * reference (nobody between two uses of it). Whoever uses an endpoint
 * after giving back a depth (the poller) takes its reference first, and the
 * monitor reads the depths before the references, so it never sees both
 * at 0 while such a user is still on it (sequentially consistent atomics). */
static int ep_idle(struct te_ep *ep)
{
	for (uint32_t k = 0; k < ep->nqp; k++)
		if (atomic_load(&ep->q[k].depth) != 0)
			return 0;
	return atomic_load(&ep->refs) == 0;
}

/* deleteEndpoint: beginDestroy (QPs -> ERR, WRs flush to the CQ); the
 * monitor finishes the destroy when the endpoint is idle (ep_idle). The
 * caller holds a reference (or is the monitor); this one keeps the
 * endpoint across the QP resets, which run after rt_mu is dropped. */
static void ep_delete(te_engine *e, struct te_ep *ep)
{
	struct te_ctx *ctx = ep->ctx;
	pthread_mutex_lock(&ctx->rt_mu);
	if (atomic_load(&ep->state) != EP_CONNECTED) {
		pthread_mutex_unlock(&ctx->rt_mu);
		return;
	}
	atomic_store(&ep->state, EP_DESTROYING);
	if (ep->rt->ep == ep)
		ep->rt->ep = NULL;
	atomic_fetch_add(&ep->refs, 1);
	ep->next_retired = ctx->retired;
	ctx->retired = ep;
	pthread_mutex_unlock(&ctx->rt_mu);
	pthread_mutex_lock(&ep->lock);
	for (uint32_t i = 0; i < ep->nqp; i++)
		e->fo->reset_qp(ep->q[i].qp);
	pthread_mutex_unlock(&ep->lock);
	atomic_fetch_sub(&ep->refs, 1);
	CNT_ADD(e, endpoints_deleted, 1);
}

static void ctx_disconnect_all(te_engine *e, struct te_ctx *ctx)
{
	for (;;) {
		struct te_ep *victim = NULL;
		pthread_mutex_lock(&ctx->rt_mu);
		for (int s = 0; s < TE_MAX_SEG && !victim; s++)
			for (int d = 0; d < TE_MAX_PEER_DEV && !victim; d++)
				if (ctx->routes[s][d] && ctx->routes[s][d]->ep)
					victim = ctx->routes[s][d]->ep;
		pthread_mutex_unlock(&ctx->rt_mu);
		if (!victim)
			return;
		ep_delete(e, victim);
	}
}

/* ------------------------------------------------------------- post path */

static void active_add(struct te_worker *w, struct te_route *rt)
{
	if (rt->in_active)
		return;
	if (w->nactive == w->capactive) {
		uint32_t cap = w->capactive ? w->capactive * 2 : 16;
		struct te_route **a = realloc(w->active, cap * sizeof(*a));
		if (!a)
			abort();
		w->active = a;
		w->capactive = cap;
	}
	w->active[w->nactive++] = rt;
	rt->in_active = 1;
}

static struct te_slice *pq_pop(struct te_route *rt)
{
	struct te_slice *s = rt->pq;
	if (s) {
		rt->pq = s->next;
		if (!rt->pq)
			rt->pq_tail = NULL;
		s->next = NULL;
	}
	return s;
}

static void pq_push(struct te_route *rt, struct te_slice *s)
{
	s->next = NULL;
	if (rt->pq_tail)
		rt->pq_tail->next = s;
	else
		rt->pq = s;
	rt->pq_tail = s;
}

#if MCC_CC_COMPILED_IN
/* Detach the whole queue of rt (to re-dispatch it: what stays is pushed
 * back in order onto the now empty queue). */
static struct te_slice *pq_take(struct te_route *rt)
{
	struct te_slice *s = rt->pq;
	rt->pq = rt->pq_tail = NULL;
	return s;
}
#endif

/* Hand everything this poster holds to other contexts (the context went
 * inactive: performPostSend redispatches with handoff_to_local_worker). */
static void post_handoff_all(te_engine *e, struct te_worker *w)
{
	for (uint32_t i = 0; i < w->nactive; i++) {
		struct te_route *rt = w->active[i];
		struct te_slice *s;
		while ((s = pq_pop(rt)))
			retry_slice(e, w->ctx, s, 0);
		rt->in_active = 0;
	}
	w->nactive = 0;
}

#if MCC_CC_COMPILED_IN
/* The device of ctx cannot take traffic moved off a path marked `kind`:
 * inactive, quarantined or probing; or, for a held path's traffic, held
 * near its floor itself (Pool::device_bad). */
static int ctx_dev_bad(te_engine *e, struct te_ctx *ctx, uint64_t now, int kind)
{
	if (!atomic_load(&ctx->active) || (kind == 2 && atomic_load(&ctx->dev_held_until) > now))
		return 1;
	struct mcc_domain_stats_v1 ds;
	memset(&ds, 0, sizeof(ds));
	ds.struct_size = sizeof(ds);
	return e->ops->domain_stats(e->cc, MCC_DOMAIN_DEVICE, ctx->ccdev, &ds) == 0 &&
	       ds.state >= MCC_PATH_QUARANTINED;
}

/* A refusal on rt (Pool::mark_refusal): AVOID marks the path until the
 * cooldown ends (PROBING over its budget: a backoff doubling from one
 * epoch); a DEFER while the route is SUSPECT, or held near its floor (too
 * full there for the slice), or its device is near its floor, marks it held
 * for TE_HELD_EPOCHS epochs (mcc_engine.h "DEFER near the floor"). A DEFER at a
 * large window (full, not held) marks nothing. */
static void cc_mark_refusal(te_engine *e, struct te_ctx *ctx, struct te_route *rt, int d,
                            uint64_t len, uint64_t now)
{
	struct mcc_domain_stats_v1 st, ds;
	memset(&st, 0, sizeof(st));
	st.struct_size = sizeof(st);
	ds = st;
	int rok = e->ops->domain_stats(e->cc, MCC_DOMAIN_ROUTE, rt->cc, &st) == 0;
	int dok = e->ops->domain_stats(e->cc, MCC_DOMAIN_DEVICE, ctx->ccdev, &ds) == 0;
	int dev_held = dok && (ds.state >= MCC_PATH_QUARANTINED ||
	                       (d == MCC_DEFER && e->floor && ds.window_bytes <= e->floor));
	int held = d == MCC_DEFER &&
	           ((rok && (st.state == MCC_PATH_SUSPECT ||
	                     (e->floor && st.window_bytes <= e->floor &&
	                      st.inflight_bytes + len > st.window_bytes))) ||
	            dev_held);
	if (dev_held)
		atomic_store(&ctx->dev_held_until, now + TE_HELD_EPOCHS * e->epoch_ns);
	if (d != MCC_AVOID && !held)
		return;
	pthread_mutex_lock(&ctx->rt_mu);
	uint64_t until;
	if (d == MCC_AVOID && rok && st.cooldown_ms) {
		until = now + st.cooldown_ms * 1000000ull;
		rt->mark_backoff = 0;
	} else if (d == MCC_AVOID) {
		uint64_t b = rt->mark_backoff ? rt->mark_backoff : e->epoch_ns;
		int again = rt->mark == 1 && rt->mark_until + 2 * b > now;
		uint64_t cap = TE_AVOID_BACKOFF_MAX * e->epoch_ns;
		rt->mark_backoff = !again || !rt->mark_backoff ? e->epoch_ns
		                   : 2 * rt->mark_backoff > cap ? cap : 2 * rt->mark_backoff;
		until = now + rt->mark_backoff;
	} else {
		until = now + TE_HELD_EPOCHS * e->epoch_ns;
	}
	int kind = d == MCC_AVOID ? 1 : 2;
	if (rt->mark_until <= now || rt->mark != kind)
		rt->mark_signalled = 0; /* a new mark: report again */
	rt->mark = kind;
	rt->mark_until = until;
	pthread_mutex_unlock(&ctx->rt_mu);
	atomic_store(&e->nmarked, 1);
}

enum { RR_STAY = 0, RR_PEER, RR_LOCAL, RR_NONE };

/* Site 9, Pool::reroute: where the group queued on rt goes. */
static int cc_reroute(te_engine *e, struct te_ctx *ctx, struct te_route *rt, uint64_t now)
{
	if (!e->cc_enforce || !atomic_load_explicit(&e->nmarked, memory_order_relaxed))
		return RR_STAY;
	pthread_mutex_lock(&ctx->rt_mu);
	int kind = rt_marked(rt, now);
	int peer = kind && peer_alt_locked(ctx, rt->seg, rt->dev, kind, now);
	int bad = kind && ctx_dev_bad(e, ctx, now, kind);
	pthread_mutex_unlock(&ctx->rt_mu);
	if (!kind)
		return RR_STAY;
	/* another peer NIC from this device when the device itself can carry
	 * it (a fault of the local NIC is not left by another peer); from a bad
	 * device another local device first, and another peer NIC only when no
	 * local device can take the group (a device held because its one busy
	 * route met a faulty peer NIC is not itself the fault) */
	int local = (!peer || bad) && cc_local_alternative(e, ctx, rt->seg, now, kind);
	if (peer && !local)
		return RR_PEER;
	if (local)
		return RR_LOCAL;
	return kind == 1 ? RR_NONE : RR_STAY;
}

/* MCC_SIG_NO_USABLE_PATH for the tasks queued on rt (at most 16
 * distinct), once per mark (Pool::no_usable_path). */
static void cc_no_usable_path(te_engine *e, struct te_ctx *ctx, struct te_route *rt)
{
	pthread_mutex_lock(&ctx->rt_mu);
	int done = rt->mark_signalled;
	rt->mark_signalled = 1;
	pthread_mutex_unlock(&ctx->rt_mu);
	if (done)
		return;
	const struct te_task *seen[16];
	int n = 0;
	for (struct te_slice *sl = rt->pq; sl && n < 16; sl = sl->next) {
		int dup = 0;
		for (int i = 0; i < n && !dup; i++)
			dup = seen[i] == sl->task;
		if (dup)
			continue;
		seen[n++] = sl->task;
		cc_signal(e, MCC_SIG_NO_USABLE_PATH, ctx, rt, sl, rt->gen, 0, 0);
	}
}

/* Site 9: move the group queued on rt as the verdict says. kPeer: TE's
 * remote re-selection (redispatch: selectPeerDevice with the slice's
 * retry count, passing over paused and avoided paths) when TE has another
 * rail, else as kLocal; kLocal: the controller's hand-off per slice
 * (another local NIC and the peer NIC it selects, handoff_target; a slice
 * no other NIC can take stays). Neither charges the
 * retry budget nor pauses a rail. Returns 1 when the group was handled
 * (moved, or waits with no usable path), 0 to post it. */
static int reroute_group(te_engine *e, struct te_worker *w, struct te_route *rt, int *blocked)
{
	struct te_ctx *ctx = w->ctx;
	uint64_t now = now_of(e);
	int v = cc_reroute(e, ctx, rt, now);
	if (v == RR_STAY)
		return 0;
	struct mcc_seg_desc sd;
	if (v == RR_NONE) {
		CNT_ADD(e, no_usable_path, 1);
		cc_no_usable_path(e, ctx, rt);
		*blocked = 1;
		return 1;
	}
	if (seg_get(e, rt->seg, &sd, 0) != 0)
		return 0;
	if (v == RR_PEER && select_peer_dev(e, ctx, rt->seg, sd.ndev, 0, rt->dev) < 0)
		v = RR_LOCAL; /* TE has paused every other rail: hasAvailablePeerRailAlternative */
	CNT_ADD(e, reroute_peer, v == RR_PEER);
	CNT_ADD(e, reroute_local, v == RR_LOCAL);
	struct te_slice *sl, *next;
	int stayed = 0;
	for (sl = pq_take(rt); sl; sl = next) {
		next = sl->next;
		if (v == RR_PEER) { /* redispatch: the slice's own selection */
			int dev = select_peer_dev(e, ctx, sl->seg, sd.ndev, sl->retry_cnt, -1);
			if (dev < 0 || dev == rt->dev)
				dev = select_peer_dev(e, ctx, sl->seg, sd.ndev, sl->retry_cnt, rt->dev);
			if (dev >= 0) {
				sl->avoid_hops++;
				sl->peer_dev = dev;
				sl->rkey = sd.rkey[dev];
				CNT_ADD(e, spills, 1);
				enqueue_slice(e, ctx, sl);
				continue;
			}
		} else {
			int dev;
			struct te_ctx *o = handoff_target(e, ctx, sl, sd.ndev, &dev);
			if (o) { /* another local NIC and its own peer NIC */
				sl->avoid_hops++;
				sl->peer_dev = dev;
				sl->rkey = sd.rkey[dev];
				CNT_ADD(e, handoffs, 1);
				enqueue_slice(e, o, sl);
				continue;
			}
		}
		pq_push(rt, sl);
		stayed = 1;
	}
	if (stayed)
		*blocked = 1;
	return 1;
}
#endif

/* RdmaEndPoint::submitPostSend for one peer_nic_path group. Returns the
 * number of WRs posted; *blocked set when slices stay queued. */
static uint32_t post_group(te_engine *e, struct te_worker *w, struct te_route *rt, int *blocked)
{
	struct te_ctx *ctx = w->ctx;
	uint64_t now = now_of(e);
	uint32_t posted = 0;
	int refused = 0; /* the policy's refusal of this pass */
	uint64_t refused_len = 0; /* the refused slice's bytes */

	/* site 9: a marked path's group goes where the controller says, before
	 * TE's rail check (which would charge the retry budget) */
	MCC_HOOK(if (reroute_group(e, w, rt, blocked)) return 0;)
	pthread_mutex_lock(&ctx->rt_mu);
	int avail = rail_available(rt, now);
	struct te_ep *ep = NULL;
	if (avail) {
		if (!rt->ep)
			rt->ep = ep_create(e, ctx, rt);
		ep = rt->ep;
		if (ep)
			atomic_fetch_add(&ep->refs, 1);
	}
	pthread_mutex_unlock(&ctx->rt_mu);
	if (!avail) { /* paused rail: whole group to failed_slice_list -> redispatch */
		struct te_slice *s;
		while ((s = pq_pop(rt)))
			retry_slice(e, ctx, s, 0);
		return 0;
	}
	if (!ep) { /* connect failed: pause if the peer has another rail */
		pthread_mutex_lock(&ctx->rt_mu);
		rail_mark_failed(e, rt, now, 1);
		pthread_mutex_unlock(&ctx->rt_mu);
		struct te_slice *s;
		while ((s = pq_pop(rt)))
			retry_slice(e, ctx, s, 0);
		return 0;
	}

	pthread_mutex_lock(&ep->lock);
	while (rt->pq) {
		struct te_slice *s = rt->pq;
		if (atomic_load(&ep->state) != EP_CONNECTED)
			break;
		/* static limits: CQ budget and per-QP depth (max_wr) */
		if (atomic_load(&ctx->cq_outstanding) >= e->cfg.max_cqe) {
			*blocked = 1;
			break;
		}
		int qp = -1;
		for (uint32_t k = 0; k < ep->nqp; k++) {
			uint32_t i = (ep->next_qp + k) % ep->nqp;
			if (atomic_load(&ep->q[i].depth) < e->cfg.max_wr) {
				qp = (int)i;
				break;
			}
		}
		if (qp < 0) {
			*blocked = 1;
			break;
		}
#if MCC_CC_COMPILED_IN
		/* RdmaEndPoint::submitPostSend: admission immediately before
		 * ibv_post_send, on the resolved (device, route), full slice. */
		if (e->cc_on && rt->cc) {
			/* attempt: every dispatch of the slice (error retries and
			 * re-dispatches after AVOID), so evidence of an earlier one
			 * is resolved by a later success, never by a sibling's. */
			struct mcc_task_ref_v1 tr = {(uint64_t)(uintptr_t)s->task->batch, s->task->task_id,
			                             s->retry_cnt, 0};
			int d = e->ops->try_acquire(w->lane, rt->cc, s->len, ep->gen, &tr, &s->permit);
			if (d == MCC_DEFER || d == MCC_AVOID) {
				/* leave it in its transport queue (AVOID folded into
				 * DEFER at the post site, as the adapter does); the
				 * path is marked when it should not carry it now, and
				 * the next pass reroutes the group (site 9) */
				CNT_ADD(e, defers, d == MCC_DEFER);
				CNT_ADD(e, avoids, d == MCC_AVOID);
				*blocked |= d == MCC_DEFER ? TE_BLOCKED_DEFER : 1;
				refused = d;
				refused_len = s->len;
				break;
			}
			if (d == MCC_ADMIT) {
				s->admitted = 1;
				atomic_fetch_add(&e->c.permits_live, 1);
				CNT_ADD(e, admits, 1);
			}
		}
#endif
		struct mcc_fab_send_wr wr = {0}, *bad = NULL;
		wr.wr_id = (uint64_t)(uintptr_t)s;
		wr.opcode = s->opcode == TE_OPCODE_READ ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE;
		wr.local_addr = s->src;
		wr.length = s->len;
		wr.lkey = lkey_of(e, ctx->idx, s->src, s->len);
		wr.remote_addr = s->dst;
		wr.rkey = s->rkey;
		/* the post time of this WR, not of the pass: on rxe each
		 * ibv_post_send transmits the message before it returns (ms
		 * under emulation), so a pass that posts as completions free
		 * room lasts many of them */
		s->ts = now_of(e);
		s->status = SL_POSTED;
		s->ep = ep;
		s->qp = qp;
		s->generation = ep->gen;
		struct te_qpslot *q = &ep->q[qp];
		uint32_t tail = atomic_load(&q->tail);
		q->fifo[tail % q->cap] = s;
		atomic_store(&q->tail, tail + 1);
		atomic_fetch_add(&q->depth, 1);
		atomic_fetch_add(&ctx->cq_outstanding, 1);
		/* unlink before posting: on a real device the WC can be polled (the
		 * slice re-queued, or its task finished and freed) before
		 * ibv_post_send returns, so the slice is not touched after it */
		pq_pop(rt);
		int rc = e->fo->post_send(q->qp, &wr, &bad);
		if (rc) { /* bad_wr: roll back counters, back to the failed list */
			atomic_store(&q->tail, tail);
			atomic_fetch_sub(&q->depth, 1);
			atomic_fetch_sub(&ctx->cq_outstanding, 1);
			s->status = SL_PENDING;
			s->ep = NULL;
			CNT_ADD(e, post_rejects, 1);
			MCC_HOOK(cc_release(e, w->lane, s, rc == ENOMEM ? MCC_REL_NOT_POSTED : MCC_REL_POST_REJECTED);
			         cc_signal(e, MCC_SIG_POST_REJECTED, ctx, rt, s, ep->gen, rc, 0);)
			pthread_mutex_unlock(&ep->lock);
			retry_slice(e, ctx, s, 0);
			pthread_mutex_lock(&ep->lock);
			continue;
		}
		ep->next_qp = (uint32_t)(qp + 1) % ep->nqp;
		posted++;
	}
	int dead = atomic_load(&ep->state) != EP_CONNECTED;
	pthread_mutex_unlock(&ep->lock);
	atomic_fetch_sub(&ep->refs, 1);
	if (dead && rt->pq) /* endpoint replaced under us: resolve again next pass */
		*blocked = 1;
	MCC_HOOK(if (refused) cc_mark_refusal(e, ctx, rt, refused, refused_len, now);)
	MCC_NOCC((void)refused; (void)refused_len;)
	CNT_ADD(e, slices_posted, posted);
	return posted;
}

/* WorkerPool::performPostSend: one pass of a posting worker. */
static uint64_t te_post_step(void *arg, uint64_t now)
{
	struct te_worker *w = arg;
	struct te_ctx *ctx = w->ctx;
	te_engine *e = ctx->e;
	uint32_t posters = ctx->nworkers > 1 ? ctx->nworkers - 1 : 1;
	uint32_t ptid = ctx->nworkers > 1 ? (uint32_t)w->tid - 1 : 0;
	uint64_t cost = MCC_HOST_COST_PASS_NS;

	/* drain owned shards into private per-path queues */
	for (uint32_t sh = ptid; sh < TE_SHARDS; sh += posters) {
		pthread_mutex_lock(&ctx->shard_mu[sh]);
		struct te_slice *s = ctx->shard_h[sh];
		ctx->shard_h[sh] = ctx->shard_t[sh] = NULL;
		pthread_mutex_unlock(&ctx->shard_mu[sh]);
		while (s) {
			struct te_slice *n = s->next;
			pthread_mutex_lock(&ctx->rt_mu);
			struct te_route *rt = route_get(e, ctx, s->seg, s->peer_dev, 1);
			pthread_mutex_unlock(&ctx->rt_mu);
			if (!rt)
				task_settle(e, s, 0);
			else {
				pq_push(rt, s);
				active_add(w, rt);
			}
			s = n;
		}
	}
	if (!atomic_load(&ctx->active)) {
		post_handoff_all(e, w);
		return MCC_EXEC_PARK;
	}
	/* a poller saw rail failures: queued groups re-route (redispatch_counter_) */
	uint32_t rc = atomic_load(&ctx->redispatch_counter);
	int reroute = rc != w->seen_redispatch;
	w->seen_redispatch = rc;

	/* visit the per-path groups round robin across passes, so that a path
	 * deferred by a shared (device) window does not starve behind others */
	if (w->nactive > 1) {
		struct te_route *first = w->active[0];
		memmove(w->active, w->active + 1, (w->nactive - 1) * sizeof(*w->active));
		w->active[w->nactive - 1] = first;
	}
	int blocked = 0;
	uint32_t posted = 0;
	for (uint32_t i = 0; i < w->nactive;) {
		struct te_route *rt = w->active[i];
		if (reroute && rt->pq) {
			pthread_mutex_lock(&ctx->rt_mu);
			int avail = rail_available(rt, now);
			pthread_mutex_unlock(&ctx->rt_mu);
			if (!avail) {
				struct te_slice *s;
				while ((s = pq_pop(rt)))
					dispatch_slice(e, ctx, s, rt->dev, 0);
			}
		}
		if (rt->pq)
			posted += post_group(e, w, rt, &blocked);
		if (!rt->pq) {
			rt->in_active = 0;
			w->active[i] = w->active[--w->nactive];
			continue;
		}
		i++;
	}
	cost += (uint64_t)posted * MCC_HOST_COST_WR_NS;
	CNT_ADD(e, cpu_virtual_ns, cost);
	if (!w->nactive)
		return MCC_EXEC_PARK;
#if MCC_CC_COMPILED_IN
	/* a DEFER alone: completions wake the poster (wake_posters), and
	 * otherwise the window changes only at a tick, so the fallback is the
	 * retry-after hint of one epoch (mcc_engine_retry_after_ns): re-trying
	 * the policy every 200 us cost a 1-vCPU Soft-RoCE guest about a
	 * quarter of enforce's throughput */
	if (blocked == TE_BLOCKED_DEFER)
		return now + e->epoch_ns;
#endif
	return now + (blocked ? TE_BLOCKED_RETRY_NS : cost);
}

/* ------------------------------------------------------------- poll path */

static int is_local_wc_failure(int st)
{
	/* WorkerPool::isLocalWcFailure */
	return st == IBV_WC_LOC_LEN_ERR || st == IBV_WC_LOC_QP_OP_ERR || st == IBV_WC_LOC_PROT_ERR ||
	       st == IBV_WC_MW_BIND_ERR || st == IBV_WC_LOC_ACCESS_ERR || st == IBV_WC_LOC_EEC_OP_ERR ||
	       st == IBV_WC_LOC_RDD_VIOL_ERR;
}

static int peer_has_alternative(te_engine *e, struct te_ctx *ctx, int32_t seg, int dev)
{
	struct mcc_seg_desc sd;
	if (seg_get(e, seg, &sd, 0) != 0)
		return 0;
	return select_peer_dev(e, ctx, seg, sd.ndev, 0, dev) >= 0;
}

/* The CQ went to error: no WC will ever come for what is posted on it.
 * Reclaim every posted slice (release RECLAIMED: the owner of teardown is
 * this poller) and retry it elsewhere. */
/* Takes the oldest slice off QP slot q's FIFO (its WR still unanswered);
 * NULL when the FIFO is empty. Called with the endpoint's lock. */
static struct te_slice *qslot_pop(struct te_qpslot *q)
{
	uint32_t h = atomic_load(&q->head);
	if (h == atomic_load(&q->tail))
		return NULL;
	struct te_slice *s = q->fifo[h % q->cap];
	atomic_store(&q->head, h + 1);
	return s;
}

static void reclaim_cq(te_engine *e, struct te_worker *w)
{
	struct te_ctx *ctx = w->ctx;
	struct te_ep *eps[512];
	uint32_t n = 0;
	pthread_mutex_lock(&ctx->rt_mu);
	for (struct te_ep *ep = ctx->retired; ep && n < 512; ep = ep->next_retired) {
		atomic_fetch_add(&ep->refs, 1); /* kept while its depths drain here */
		eps[n++] = ep;
	}
	pthread_mutex_unlock(&ctx->rt_mu);
	for (uint32_t i = 0; i < n; i++) {
		struct te_ep *ep = eps[i];
		pthread_mutex_lock(&ep->lock);
		for (uint32_t k = 0; k < ep->nqp; k++) {
			struct te_qpslot *q = &ep->q[k];
			for (struct te_slice *s; (s = qslot_pop(q));) {
				atomic_fetch_sub(&q->depth, 1);
				atomic_fetch_sub(&ctx->cq_outstanding, 1);
				CNT_ADD(e, reclaimed, 1);
				MCC_HOOK(cc_release(e, w->lane, s, MCC_REL_RECLAIMED);)
				s->ep = NULL;
				retry_slice(e, ctx, s, 0);
			}
		}
		MCC_HOOK(cc_signal(e, MCC_SIG_ENDPOINT_RECLAIMED, ctx, ep->rt, NULL, ep->gen, 0, 0);)
		pthread_mutex_unlock(&ep->lock);
		atomic_fetch_sub(&ep->refs, 1);
	}
}

/* One WC of performPollCq (the caller holds a reference on ep). Returns 1
 * when a rail failed with an alternative (redispatch_counter_). */
static int poll_wc(te_engine *e, struct te_worker *w, struct te_ep *ep, struct te_slice *s,
                   const struct mcc_fab_wc *wc, uint64_t now)
{
	struct te_ctx *ctx = w->ctx;
	struct te_qpslot *q = &ep->q[s->qp];
	/* per-QP depth and CQ outstanding go back; pop the in-order FIFO */
	atomic_store(&q->head, atomic_load(&q->head) + 1);
	atomic_fetch_sub(&q->depth, 1);
	atomic_fetch_sub(&ctx->cq_outstanding, 1);
	s->ep = NULL;
#if MCC_CC_COMPILED_IN
	/* WorkerPool::performPollCq: ibv_poll_cq returned this WC */
	if (e->cc_on && s->admitted) {
		struct mcc_completion_v1 c;
		mcc_host_completion(&c, wc, s->generation, s->permit.bytes, s->ts, now);
		e->ops->on_completion(w->lane, &s->permit, &c);
		s->admitted = 0;
		atomic_fetch_sub(&e->c.permits_live, 1);
	}
#endif
	int st = wc->status;
	if (st == IBV_WC_SUCCESS) {
		atomic_store(&ctx->ctx_failures, 0); /* markContextSuccess */
		task_settle(e, s, 1);
		return 0;
	}
	struct te_route *rt = ep->rt;
	if (st == IBV_WC_WR_FLUSH_ERR) { /* teardown noise: no rail penalty */
		CNT_ADD(e, flushes, 1);
		retry_slice(e, ctx, s, 0);
		return 0;
	}
	CNT_ADD(e, wc_errors, 1);
	if (is_local_wc_failure(st)) {
		/* one rail error per path per pass; handleLocalFailure; retry
		 * handed to another local RNIC keeping the peer rail */
		pthread_mutex_lock(&ctx->rt_mu);
		rail_mark_failed(e, rt, now, 0);
		pthread_mutex_unlock(&ctx->rt_mu);
		if (atomic_fetch_add(&ctx->ctx_failures, 1) + 1 >= TE_CTX_FAILURE_THRESHOLD)
			atomic_store(&ctx->active, 0);
		ep_delete(e, ep);
		retry_slice(e, ctx, s, 0);
		return 0;
	}
	/* RETRY_EXC, RNR_RETRY_EXC, REM_*, GENERAL, ...: rail failure */
	int alt = peer_has_alternative(e, ctx, rt->seg, rt->dev);
	pthread_mutex_lock(&ctx->rt_mu);
	rail_mark_failed(e, rt, now, alt);
	pthread_mutex_unlock(&ctx->rt_mu);
	ep_delete(e, ep);
	int refresh = st == IBV_WC_REM_ACCESS_ERR || st == IBV_WC_REM_INV_REQ_ERR ||
	              st == IBV_WC_REM_OP_ERR;
	MCC_HOOK(if (refresh) cc_signal(e, MCC_SIG_METADATA_STALE, ctx, rt, s, s->generation,
	                                st, 0);)
	retry_slice(e, ctx, s, refresh);
	return alt != 0;
}

/* WorkerPool::performPollCq: one pass of worker 0. */
static uint64_t te_poll_step(void *arg, uint64_t now)
{
	struct te_worker *w = arg;
	struct te_ctx *ctx = w->ctx;
	te_engine *e = ctx->e;
	struct mcc_fab_wc wc[TE_POLL_COUNT];

	uint64_t stall = atomic_load(&ctx->stall_until);
	if (stall > now) /* injected poller stall (CPU scheduling, unconsumed CQ) */
		return stall;
	int n = e->fo->poll_cq(ctx->cq, TE_POLL_COUNT, wc);
	if (n < 0)
		n = 0;
	int failed_paths = 0;
	for (int i = 0; i < n; i++) {
		struct te_slice *s = (struct te_slice *)(uintptr_t)wc[i].wr_id;
		struct te_ep *ep = s->ep;
		/* the poller uses the endpoint below (rail, ep_delete) after its
		 * depth went back, when the monitor may already free it: hold a
		 * reference, taken before the depth drops (ep_idle) */
		atomic_fetch_add(&ep->refs, 1);
		failed_paths += poll_wc(e, w, ep, s, &wc[i], now);
		atomic_fetch_sub(&ep->refs, 1);
	}
	if (failed_paths)
		atomic_fetch_add(&ctx->redispatch_counter, 1);
	/* poll-interval bookkeeping (last_poll_ts_ns_) and the progress hook */
	atomic_store(&ctx->last_poll_ns, now);
	MCC_HOOK(if (e->cc_on) e->ops->poller_progress(w->lane, ctx->ccdev, (uint32_t)n);)
	if (atomic_load(&ctx->cq_error) == 1) {
		reclaim_cq(e, w);
		atomic_store(&ctx->cq_error, 2);
	}
	uint64_t cost = MCC_HOST_COST_PASS_NS + (uint64_t)n * MCC_HOST_COST_WC_NS;
	CNT_ADD(e, cpu_virtual_ns, cost);
	if (n > 0) {
		wake_posters(ctx, now + cost);
		return now + cost;
	}
	/* idle: the CQ notify wakes us; keep a heartbeat while WRs are out */
	return atomic_load(&ctx->cq_outstanding) ? now + 1000000 : MCC_EXEC_PARK;
}

/* 1-worker mode: the same thread posts and polls. */
static uint64_t te_post_poll_step(void *arg, uint64_t now)
{
	uint64_t a = te_poll_step(arg, now);
	uint64_t b = te_post_step(arg, now);
	return a < b ? a : b;
}

static void cq_notify(void *arg)
{
	struct te_ctx *ctx = arg;
	mcc_exec_wake(ctx->workers[0].actor, mcc_exec_now(ctx->e->env.ex) + MCC_HOST_POLL_LATENCY_NS);
}

static void async_notify(void *arg)
{
	struct te_ctx *ctx = arg;
	mcc_exec_wake(ctx->monitor, mcc_exec_now(ctx->e->env.ex) + MCC_HOST_POLL_LATENCY_NS);
}

/* ---------------------------------------------------------------- monitor */

/* WorkerPool::doProcessContextEvents / handleContextEvent. */
static void handle_async(te_engine *e, struct te_ctx *ctx, const struct mcc_fab_async_event *ev,
                         uint64_t now)
{
	struct te_ep *ep = ev->qp_context;
	MCC_FIELD(uint32_t gen = ep ? ep->gen : 0; struct te_route *rt = ep ? ep->rt : NULL;)
	CNT_ADD(e, async_events, 1);
	switch (ev->event_type) {
	case IBV_EVENT_QP_FATAL: /* ack first, then deleteEndpointByPtr */
		if (ep)
			ep_delete(e, ep);
		break;
	case IBV_EVENT_CQ_ERR:
	case IBV_EVENT_DEVICE_FATAL:
	case IBV_EVENT_WQ_FATAL:
	case IBV_EVENT_PORT_ERR:
	case IBV_EVENT_LID_CHANGE:
		if (ev->event_type == IBV_EVENT_DEVICE_FATAL)
			atomic_store(&ctx->fatal, 1);
		if (ev->event_type == IBV_EVENT_CQ_ERR) { /* the poller reclaims */
			atomic_store(&ctx->cq_error, 1);
			mcc_exec_wake(ctx->workers[0].actor, now);
		}
		atomic_store(&ctx->active, 0);
		ctx->recover_at = 0;
		ctx_disconnect_all(e, ctx);
		wake_posters(ctx, now); /* queued slices hand off */
		break;
	case IBV_EVENT_PORT_ACTIVE: /* recovery after kContextRecoveryDelayNs */
		if (!atomic_load(&ctx->fatal))
			ctx->recover_at = now + e->cfg.ctx_recovery_delay_ns;
		break;
	default: /* GID_CHANGE, PATH_MIG_ERR, ...: logged by the engine */
		break;
	}
#if MCC_CC_COMPILED_IN
	/* WorkerPool::doProcessContextEvents: after the engine's own handling */
	struct mcc_async_event_v1 ae;
	memset(&ae, 0, sizeof(ae));
	ae.struct_size = sizeof(ae);
	ae.event_type = ev->event_type;
	ae.device = ctx->ccdev;
	ae.route = rt ? rt->cc : NULL;
	ae.port_num = ev->port_num;
	ae.cq_id = ev->cq_id;
	ae.qp_num = ev->qp_num;
	ae.generation = gen;
	ae.now_ns = now;
	if (e->cc_async && ctx->ccdev)
		e->ops->on_async_event(e->cc, &ae);
#endif
}

/* WorkerPool::monitorWorker: one iteration. */
static uint64_t te_monitor_step(void *arg, uint64_t now)
{
	struct te_ctx *ctx = arg;
	te_engine *e = ctx->e;
	struct mcc_fab_async_event ev;

	while (e->fo->get_async_event(ctx->dev, &ev) == 0) {
		e->fo->ack_async_event(&ev);
		handle_async(e, ctx, &ev, now);
	}
	/* re-activate a recovered context */
	if (!atomic_load(&ctx->active) && ctx->recover_at && now >= ctx->recover_at) {
		int st = 0;
		ctx->recover_at = 0;
		if (e->fo->query_port(ctx->dev, 1, &st) == 0 && st == MCC_FAB_PORT_ACTIVE &&
		    !atomic_load(&ctx->fatal) && atomic_load(&ctx->cq_error) == 0) {
			atomic_store(&ctx->ctx_failures, 0);
			atomic_store(&ctx->active, 1);
		}
	}
	/* finishDestroy of retired endpoints whose QP depths drained */
	for (;;) {
		struct te_ep *done = NULL;
		pthread_mutex_lock(&ctx->rt_mu);
		for (struct te_ep **pp = &ctx->retired; *pp; pp = &(*pp)->next_retired) {
			struct te_ep *ep = *pp;
			if (ep_idle(ep)) {
				*pp = ep->next_retired;
				done = ep;
				break;
			}
		}
		pthread_mutex_unlock(&ctx->rt_mu);
		if (!done)
			break;
		ep_free(e, done);
	}
#if MCC_CC_COMPILED_IN
	/* control epoch */
	if (e->cc_on) /* one tick per epoch over every engine of the instance */
		mcc_engine_tick_if_due(e->eng, now);
#endif
	CNT_ADD(e, cpu_virtual_ns, MCC_HOST_COST_PASS_NS);
	return now + (uint64_t)e->cfg.monitor_period_us * 1000u;
}

/* ------------------------------------------------------------ construction */

#if MCC_CC_COMPILED_IN
static int cc_setup(te_engine *e)
{
	/* worker construction: load the process's policy (always usable)
	 * through the engine SDK: lanes, the tick claim and the clock */
	struct mcc_loader_opts o;
	memset(&o, 0, sizeof(o));
	o.struct_size = sizeof(o);
	o.max_lanes = e->env.cc_max_lanes; /* 0: the SDK's process-wide bound */
	o.engine = "te";
	o.ini_path = e->env.cc_ini_path;
	o.host_caps = MCC_HOST_CAP_ASYNC_EVENTS | MCC_HOST_CAP_CQ_IDENTITY |
	              MCC_HOST_CAP_POLLER_PROGRESS | MCC_HOST_CAP_COMPLETION_TS;
	o.log = e->env.log;
	o.log_arg = e->env.log_arg;
	o.module_dir = e->env.cc_module_dir;
	o.ignore_env = e->env.cc_ignore_env;
	struct mcc_engine_opts eo;
	memset(&eo, 0, sizeof(eo));
	eo.struct_size = sizeof(eo);
	eo.tick = MCC_ENGINE_TICK_POLL; /* the monitor's pass ticks (monitor_step) */
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
	e->floor = cfg && 2 * cfg->policy.min_window_bytes < cfg->policy.max_window_bytes
	                   ? 2 * cfg->policy.min_window_bytes
	                   : 0;
	/* read once at construction (RFC): off bypasses every hook; signals and
	 * async events only as subscribed */
	e->cc_on = mcc_instance_mode(e->inst) != MCC_MODE_OFF;
	e->cc_enforce = mcc_instance_mode(e->inst) == MCC_MODE_ENFORCE;
	e->sig_mask = e->cc_on ? mcc_instance_signal_mask(e->inst) : 0;
	e->cc_async = e->cc_on && mcc_instance_wants_async_events(e->inst);
	pthread_mutex_init(&e->cc_mu, NULL);
	return 0;
}

static int cc_lane(te_engine *e, uint32_t role, mcc_lane **lane, mcc_lane_ref *ref)
{
	*lane = NULL;
	*ref = 0;
	if (!e->cc_on)
		return 0;
	int rc = mcc_engine_lane_open(e->eng, role, ref, lane);
	if (rc)
		*lane = NULL;
	return rc;
}
#endif

te_engine *te_engine_create(const struct te_config *cfg, const struct mcc_host_env *env)
{
	te_engine *e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->cfg = *cfg;
	e->env = *env;
	e->fo = env->fab.ops;
	if (!e->cfg.workers_per_ctx)
		e->cfg.workers_per_ctx = 2;
	if (e->cfg.workers_per_ctx > TE_MAX_WORKERS)
		e->cfg.workers_per_ctx = TE_MAX_WORKERS;
	if (!e->cfg.monitor_period_us)
		e->cfg.monitor_period_us = 1000;
	pthread_mutex_init(&e->mr_mu, NULL);
	pthread_mutex_init(&e->seg_mu, NULL);
	int ndev = e->fo->num_devices(env->fab.fab, cfg->node);
	if (cfg->num_devices && (int)cfg->num_devices < ndev)
		ndev = (int)cfg->num_devices;
	if (ndev > TE_MAX_CTX)
		ndev = TE_MAX_CTX;
	if (ndev < 0)
		ndev = 0;
	MCC_HOOK(if (cc_setup(e) != 0) { free(e); return NULL; })
	for (int i = 0; i < ndev; i++) {
		struct te_ctx *ctx = &e->ctx[e->nctx];
		ctx->e = e;
		ctx->idx = (int)e->nctx;
		ctx->dev = e->fo->open_device(env->fab.fab, cfg->node, (uint32_t)i);
		if (!ctx->dev)
			continue;
		e->fo->query_device(ctx->dev, &ctx->attr);
		for (int s = 0; s < TE_SHARDS; s++)
			pthread_mutex_init(&ctx->shard_mu[s], NULL);
		pthread_mutex_init(&ctx->rt_mu, NULL);
		ctx->cq = e->fo->create_cq(ctx->dev, e->cfg.max_cqe, ctx, cq_notify, ctx);
		ctx->cq_id = ctx->cq ? e->fo->cq_id(ctx->cq) : 0;
		atomic_store(&ctx->active, ctx->cq != NULL);
		e->fo->set_async_notify(ctx->dev, async_notify, ctx);
#if MCC_CC_COMPILED_IN
		/* RdmaContext construct: the device domain */
		struct mcc_device_desc_v1 dd = {sizeof(dd), (uint32_t)ctx->idx, ctx->attr.name,
		                                ctx->attr.num_ports, 0, ctx->attr.link_rate_bps,
		                                mcc_engine_device_flags(NULL, ctx->attr.name)};
		if (!e->cc_on || mcc_engine_device_open(e->eng, &dd, &ctx->ccdev) != 0)
			ctx->ccdev = NULL;
		cc_lane(e, MCC_LANE_MONITOR, &ctx->mon_lane, &ctx->mon_lane_ref);
#endif
		ctx->nworkers = e->cfg.workers_per_ctx;
		for (uint32_t w = 0; w < ctx->nworkers; w++) {
			struct te_worker *wk = &ctx->workers[w];
			wk->ctx = ctx;
			wk->tid = (int)w;
			snprintf(wk->name, sizeof(wk->name), "te%u.c%d.w%u", cfg->node, ctx->idx, w);
			mcc_actor_fn fn = ctx->nworkers == 1 ? te_post_poll_step
			                  : w == 0            ? te_poll_step
			                                      : te_post_step;
			MCC_HOOK(cc_lane(e, ctx->nworkers == 1 ? MCC_LANE_POST_POLL
			                    : w == 0           ? MCC_LANE_POLL
			                                       : MCC_LANE_POST,
			                 &wk->lane, &wk->lane_ref);)
			wk->actor = mcc_exec_add(env->ex, wk->name, fn, wk, MCC_EXEC_PARK);
		}
		snprintf(ctx->mon_name, sizeof(ctx->mon_name), "te%u.c%d.mon", cfg->node, ctx->idx);
		ctx->monitor = mcc_exec_add(env->ex, ctx->mon_name, te_monitor_step, ctx, 0);
		e->nctx++;
	}
	return e;
}

static void route_free_all(te_engine *e, struct te_ctx *ctx)
{
	for (int s = 0; s < TE_MAX_SEG; s++)
		for (int d = 0; d < TE_MAX_PEER_DEV; d++) {
			struct te_route *rt = ctx->routes[s][d];
			if (!rt)
				continue;
			MCC_HOOK(if (rt->cc && rt->cc_owned) {
				mcc_engine_stat_route_remove(e->eng, rt->cc);
				e->ops->route_close(e->cc, rt->cc);
			})
			MCC_NOCC((void)e;)
			free(rt);
		}
}

void te_engine_destroy(te_engine *e)
{
	if (!e)
		return;
	for (uint32_t i = 0; i < e->nctx; i++) {
		struct te_ctx *ctx = &e->ctx[i];
		/* settle what is still reserved (shutdown = cancellation) */
		for (int s = 0; s < TE_MAX_SEG; s++)
			for (int d = 0; d < TE_MAX_PEER_DEV; d++) {
				struct te_route *rt = ctx->routes[s][d];
				if (rt && rt->ep) {
					struct te_ep *ep = rt->ep;
					rt->ep = NULL;
					ep->next_retired = ctx->retired;
					ctx->retired = ep;
				}
			}
		for (struct te_ep *ep = ctx->retired, *n; ep; ep = n) {
			n = ep->next_retired;
			for (uint32_t k = 0; k < ep->nqp; k++) {
				for (struct te_slice *sl; (sl = qslot_pop(&ep->q[k]));) {
					MCC_HOOK(cc_release(e, ctx->mon_lane, sl, MCC_REL_RECLAIMED);)
					(void)sl;
				}
			}
			ep_free(e, ep);
		}
		route_free_all(e, ctx);
	}
#if MCC_CC_COMPILED_IN
	for (uint32_t i = 0; i < e->nctx; i++) {
		struct te_ctx *ctx = &e->ctx[i];
		for (uint32_t w = 0; w < ctx->nworkers; w++)
			if (ctx->workers[w].lane)
				mcc_engine_lane_close(e->eng, ctx->workers[w].lane_ref);
		if (ctx->mon_lane)
			mcc_engine_lane_close(e->eng, ctx->mon_lane_ref);
		if (ctx->ccdev)
			mcc_engine_device_close(e->eng, ctx->ccdev);
	}
	mcc_engine_close(e->eng);
	pthread_mutex_destroy(&e->cc_mu);
#endif
	for (uint32_t i = 0; i < e->nctx; i++) {
		struct te_ctx *ctx = &e->ctx[i];
		pthread_mutex_lock(&e->mr_mu);
		for (uint32_t b = 0; b < e->nbufs; b++)
			if (e->bufs[b].mr[i].dev)
				e->fo->dereg_mr(&e->bufs[b].mr[i]);
		pthread_mutex_unlock(&e->mr_mu);
		if (ctx->cq)
			e->fo->destroy_cq(ctx->cq);
		e->fo->close_device(ctx->dev);
		for (uint32_t w = 0; w < ctx->nworkers; w++)
			free(ctx->workers[w].active);
		for (int s = 0; s < TE_SHARDS; s++)
			pthread_mutex_destroy(&ctx->shard_mu[s]);
		pthread_mutex_destroy(&ctx->rt_mu);
	}
	pthread_mutex_destroy(&e->mr_mu);
	pthread_mutex_destroy(&e->seg_mu);
	free(e);
}

/* ----------------------------------------------------------------- public */

int te_register_memory(te_engine *e, void *addr, size_t len)
{
	pthread_mutex_lock(&e->mr_mu);
	if (e->nbufs == TE_MAX_BUFS) {
		pthread_mutex_unlock(&e->mr_mu);
		return -ENOSPC;
	}
	struct te_buf *b = &e->bufs[e->nbufs];
	b->addr = addr;
	b->len = len;
	for (uint32_t i = 0; i < e->nctx; i++)
		if (e->fo->reg_mr(e->ctx[i].dev, addr, len, &b->mr[i]) != 0) {
			pthread_mutex_unlock(&e->mr_mu);
			return -EIO;
		}
	e->nbufs++;
	pthread_mutex_unlock(&e->mr_mu);
	return 0;
}

static struct te_batch *batch_of(uint64_t id)
{
	struct te_batch *b = (struct te_batch *)(uintptr_t)id;
	return (id && id != TE_INVALID_BATCH && b->magic == TE_BATCH_MAGIC) ? b : NULL;
}

uint64_t te_allocate_batch(te_engine *e, size_t n)
{
	struct te_batch *b = calloc(1, sizeof(*b));
	if (!b || !(b->tasks = calloc(n ? n : 1, sizeof(*b->tasks)))) {
		free(b);
		return TE_INVALID_BATCH;
	}
	b->magic = TE_BATCH_MAGIC;
	b->e = e;
	b->cap = n;
	/* batch ids are pointers, recycled: the SDK keeps a missed free's
	 * evidence off the next batch at the same address */
	MCC_HOOK(if (e->cc_on && mcc_engine_batch_begin(e->eng, (uint64_t)(uintptr_t)b) == -ENOMEM) {
		free(b->tasks);
		free(b);
		return TE_INVALID_BATCH;
	})
	return (uint64_t)(uintptr_t)b;
}

/* RdmaTransport::submitTransfer + submitTransferTask (caller thread). */
int te_submit(te_engine *e, uint64_t batch_id, const struct te_request *reqs, size_t n)
{
	struct te_batch *b = batch_of(batch_id);
	if (!b || b->n + n > b->cap)
		return -EINVAL;
	uint32_t ss = e->cfg.slice_size;
	for (size_t r = 0; r < n; r++) {
		const struct te_request *q = &reqs[r];
		struct te_task *t = &b->tasks[b->n];
		struct mcc_seg_desc sd;
		if (seg_get(e, q->target_id, &sd, 0) != 0 || !q->length ||
		    q->target_offset + q->length > sd.length)
			return -EINVAL;
		t->batch = b;
		t->task_id = b->n;
		t->total_bytes = q->length;
		/* slices of slice_size; a tail <= slice_size/4 merges into the previous */
		uint32_t cnt = (uint32_t)((q->length + ss - 1) / ss);
		if (cnt > 1 && q->length - (uint64_t)(cnt - 1) * ss <= ss / 4)
			cnt--;
		t->slices = calloc(cnt, sizeof(*t->slices));
		if (!t->slices)
			return -ENOMEM;
		t->slice_count = cnt;
		b->n++;
		/* selectDevice: one local context per request (round robin) */
		struct te_ctx *ctx = pick_active_ctx(e, atomic_fetch_add(&e->rr, 1));
		for (uint32_t i = 0; i < cnt; i++) {
			struct te_slice *s = &t->slices[i];
			uint64_t off = (uint64_t)i * ss;
			s->task = t;
			s->src = (uint64_t)(uintptr_t)q->source + off;
			s->dst = sd.base + q->target_offset + off;
			s->len = (uint32_t)(i + 1 == cnt ? q->length - off : ss);
			s->opcode = q->opcode;
			s->seg = q->target_id;
			MCC_HOOK(if (e->cc_on) {
				struct mcc_permit_v1 pi = MCC_PERMIT_INIT;
				s->permit = pi;
			})
		}
		t->submitted = 1;
		for (uint32_t i = 0; i < cnt; i++)
			dispatch_slice(e, ctx, &t->slices[i], -1, 0);
	}
	return 0;
}

int te_get_transfer_status(te_engine *e, uint64_t batch_id, size_t task_id,
                           struct te_transfer_status *st)
{
	(void)e;
	struct te_batch *b = batch_of(batch_id);
	if (!b || task_id >= b->n || !st)
		return -EINVAL;
	struct te_task *t = &b->tasks[task_id];
	/* terminal once `finished` is published: then freeBatchID succeeds */
	int fin = atomic_load(&t->finished);
	st->transferred_bytes = atomic_load(&t->transferred);
	if (fin)
		st->status = atomic_load(&t->failed) ? TE_STATUS_FAILED : TE_STATUS_COMPLETED;
	else
		st->status = TE_STATUS_WAITING;
	return 0;
}

int te_free_batch(te_engine *e, uint64_t batch_id)
{
	struct te_batch *b = batch_of(batch_id);
	if (!b)
		return -EINVAL;
	for (size_t i = 0; i < b->n; i++)
		if (!atomic_load(&b->tasks[i].finished))
			return -EBUSY;
	MCC_HOOK(if (e->cc_on) mcc_engine_batch_free(e->eng, batch_id);) /* freeBatchID */
	MCC_NOCC((void)e;)
	for (size_t i = 0; i < b->n; i++)
		free(b->tasks[i].slices);
	free(b->tasks);
	b->magic = 0;
	free(b);
	return 0;
}

int te_get_task_congestion_detail(te_engine *e, uint64_t batch_id, uint64_t task_id,
                                  struct mcc_task_detail_v1 *detail)
{
	struct te_batch *b = batch_of(batch_id);
	if (!b || task_id >= b->n || !detail || detail->struct_size < 8)
		return -EINVAL;
#if MCC_CC_COMPILED_IN
	struct te_task *t = &b->tasks[task_id];
	uint32_t facts = 0;
	if (atomic_load(&t->success))
		facts |= MCC_TASKQ_SEEN_SUCCESS;
	if (atomic_load(&t->finished))
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

int te_get_task_congestion_state(te_engine *e, uint64_t batch_id, uint64_t task_id, int *state)
{
	struct mcc_task_detail_v1 d;
	if (!state)
		return -EINVAL;
	int rc = te_get_task_congestion_detail(e, batch_id, task_id, mcc_host_detail_init(&d));
	return mcc_host_task_state(rc, &d, state);
}

void te_set_task_notify(te_engine *e, void (*fn)(void *, uint64_t, uint64_t), void *arg)
{
	e->notify = fn;
	e->notify_arg = arg;
}

void te_get_stats(te_engine *e, struct te_stats *o)
{
#define LD(f) o->f = atomic_load(&e->c.f)
	LD(slices_posted);
	LD(slices_completed);
	LD(slices_failed);
	LD(slices_retried);
	LD(wc_errors);
	LD(flushes);
	LD(post_rejects);
	LD(defers);
	LD(avoids);
	LD(admits);
	LD(endpoints_created);
	LD(endpoints_deleted);
	LD(rail_pauses);
	LD(handoffs);
	LD(rebinds);
	LD(spills);
	LD(reroute_peer);
	LD(reroute_local);
	LD(no_usable_path);
	LD(avoided_hits);
	LD(async_events);
	LD(reclaimed);
	LD(permits_live);
	LD(cpu_virtual_ns);
#undef LD
}

uint32_t te_num_contexts(const te_engine *e)
{
	return e->nctx;
}

void te_inject_poller_stall(te_engine *e, uint32_t ctx, uint64_t dur)
{
	if (ctx < e->nctx)
		atomic_store(&e->ctx[ctx].stall_until, now_of(e) + dur);
}

int te_domain_stats(te_engine *e, uint32_t ctx, int seg, int dev, struct mcc_domain_stats_v1 *out)
{
#if MCC_CC_COMPILED_IN
	if (ctx >= e->nctx)
		return -ENOENT;
	struct te_ctx *c = &e->ctx[ctx];
	if (seg < 0)
		return c->ccdev ? e->ops->domain_stats(e->cc, MCC_DOMAIN_DEVICE, c->ccdev, out) : -ENOENT;
	if (seg >= TE_MAX_SEG || dev < 0 || dev >= TE_MAX_PEER_DEV)
		return -EINVAL;
	pthread_mutex_lock(&c->rt_mu);
	struct te_route *rt = c->routes[seg][dev];
	mcc_route *r = rt && rt->cc_owned ? rt->cc : NULL;
	pthread_mutex_unlock(&c->rt_mu);
	return r ? e->ops->domain_stats(e->cc, MCC_DOMAIN_ROUTE, r, out) : -ENOENT;
#else
	(void)e;
	(void)ctx;
	(void)seg;
	(void)dev;
	(void)out;
	return -EOPNOTSUPP;
#endif
}

const char *te_cc_mode(const te_engine *e)
{
#if MCC_CC_COMPILED_IN
	return mcc_host_mode_name(mcc_instance_mode(e->inst));
#else
	(void)e;
	return "compiled-out";
#endif
}
