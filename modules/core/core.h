/* SPDX-License-Identifier: MIT */
/*
 * core.h - internal header of the shared policy core linked into the aimd
 * (enforce) and observe modules. Never installed.
 *
 * Files:
 *   classify.c  pure RFC matrices (classify.h)
 *   domain.c    lanes, credit caches, permits: the hot path
 *   control.c   tick, AIMD, path state machine, async events and signals
 *   evidence.c  per-task evidence: lane rings, bounded table, task_query
 *   recorder.c  observe mode's lock-free signal recorder and dump()
 *   policy.c    init/fini, domain lifecycle, domain_stats, the vtable
 *   qos.c       try_acquire_qos: the window shared in class order
 *
 * Synchronisation:
 *   - hot path (try_acquire, release, on_completion, poller_progress): no
 *     lock; lane-private state through the lane handle; shared state through
 *     atomics (one locked RMW per credit chunk, not per slice);
 *   - everything else under core->lock (slow path), which owns every field
 *     marked "cold" below and is the only writer of a domain's control word,
 *     window, chunk and probe bound.
 */
#ifndef MCC_CORE_H
#define MCC_CORE_H

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "classify.h"
#include "law.h"
#include "mcc_policy_v1.h"
#include "policy.h"

#define MCC_LINE 64
#define MCC_LANE_SLOTS 64u                /* credit cache slots per lane (direct mapped) */
#define MCC_DEV_SLOTS 8u                  /* of which reserved for devices */
#define MCC_LANE_PEND 64u                 /* exact-mode feedback entries per lane (one per slot) */
#define MCC_EV_RING 1024u                 /* evidence records per lane ring (power of two) */
#define MCC_EV_OKCACHE 16u                /* lane cache of recent success records */
#define MCC_CHUNK_MAX ((uint64_t)1 << 20) /* credit chunk cap: 1 MiB */
#define MCC_SLICE_REF ((uint64_t)65536)   /* reference slice until one is seen (TE default) */
#define MCC_BYTES_MAX ((uint64_t)1 << 48) /* larger try_acquire sizes are -EINVAL */
#define MCC_MAX_LANES_DEFAULT 64u
#define MCC_MAX_LANES_CAP 1024u
#define MCC_DEADLINES_MAX 4096u /* soft deadlines pending per epoch */
/* base of a path's drain time: minimum over the last 1-2 buckets of this
 * many epochs with completions (0.5-1 s at the default 1 ms epoch) */
#define MCC_BASE_EPOCHS 512u
/* a device measures its queueing beyond its learned base only when that base
 * is at least this many times target_drain_us (control.c base_of) */
#define MCC_LONG_BASE_X 2u
/* a stated base RTT (route_open base_rtt_ns) above this reads as this */
#define MCC_SBASE_MAX_NS 1000000000ull
/* a software device's paths (control.c "A software device"): delivery rate
 * smoothed with this time constant, and its peak over the last 1-2 buckets
 * of MCC_SW_PEAK_NS (wall time: a slow path completes in few epochs) */
#define MCC_SW_RATE_TAU_NS 250000000ull
#define MCC_SW_PEAK_NS 1000000000ull
/* a software path whose slow rate fell below 1 / this of its peak has
 * collapsed whatever its window (a shaper, a stalled peer; README.md "A
 * software device") */
#define MCC_SW_DEEP 16u
/* credit mode needs this many admissions in the last epoch: below it a
 * shared CAS per slice costs nothing measurable and keeps stats exact */
#define MCC_CREDIT_MIN_ADMITS 64u
/* the QoS reserve (qos.c): one of HIGH's largest slices, at most half the
 * window, while HIGH called within the last 2 epochs */
#define MCC_QOS_RESERVE_SLICES 1u
#define MCC_QOS_RESERVE_PERCENT 50u
#define MCC_QOS_HOLD_EPOCHS 2u

#define RLX memory_order_relaxed
#define ACQ memory_order_acquire
#define REL memory_order_release

/* ------------------------------------------------------------ control word */

/* d->ctl: epoch << 32 | flags. One acquire load gives a lane the state, the
 * admission mode and the credit epoch; written only under core->lock. */
#define MCC_CTL_STATE 0x7ull /* enum mcc_path_state */
#define MCC_CTL_EXACT 0x8ull /* exact mode: shared CAS per slice, no caching */
/* Any of these bits set: the general (slow) admission path. Credit mode
 * implies HEALTHY (state 0) and not EXACT, so both low nibbles are zero. */
#define MCC_CTL_SLOWPATH 0xfull

static inline uint32_t mcc_ctl_state(uint64_t ctl)
{
	return (uint32_t)(ctl & MCC_CTL_STATE);
}

static inline uint32_t mcc_ctl_epoch(uint64_t ctl)
{
	return (uint32_t)(ctl >> 32);
}

/* Exact mode and HEALTHY, CONGESTED or SUSPECT: low nibble 8, 9 or 10 (the
 * exact fast path admits). */
static inline bool mcc_ctl_exact_admits(uint64_t ctl)
{
	return (ctl & MCC_CTL_SLOWPATH) - (MCC_CTL_EXACT | MCC_PATH_HEALTHY) <
	       (uint64_t)MCC_PATH_QUARANTINED;
}

/* Monotonic raise (CAS max): generations only ever move forward, whoever
 * raises them (hot path or slow path). */
static inline void mcc_raise_u32(_Atomic uint32_t *p, uint32_t v)
{
	uint32_t cur = atomic_load_explicit(p, RLX);
	while (cur < v && !atomic_compare_exchange_weak_explicit(p, &cur, v, RLX, RLX))
		;
}

static inline void mcc_raise_u64(_Atomic uint64_t *p, uint64_t v)
{
	uint64_t cur = atomic_load_explicit(p, RLX);
	while (cur < v && !atomic_compare_exchange_weak_explicit(p, &cur, v, RLX, RLX))
		;
}

/* Take what lanes accumulated (reset to 0), under core->lock: a load
 * first, so the usual 0 costs no locked exchange (a count added after the
 * load is taken at the next tick, as one added after the exchange is). */
static inline uint64_t mcc_take(_Atomic uint64_t *p)
{
	return atomic_load_explicit(p, RLX) ? atomic_exchange_explicit(p, 0, RLX) : 0;
}

/* Single-writer counter increment (no locked instruction). */
static inline void mcc_ctr_add(_Atomic uint64_t *c, uint64_t v)
{
	atomic_store_explicit(c, atomic_load_explicit(c, RLX) + v, RLX);
}

/* --------------------------------------------------------------- parameters */

struct mcc_params {
	uint64_t min_window;
	uint64_t max_window;
	uint64_t probe_window; /* 0: one slice */
	uint64_t ai_bytes;
	uint32_t target_drain_us;
	uint32_t high_epochs;
	uint32_t low_epochs;
	uint32_t hard_threshold;
	uint32_t cooldown_ms;
	uint32_t cooldown_max_ms;
	uint32_t flap_window_ms;
	uint32_t epoch_us;
	uint32_t md_percent;
	uint32_t fr_epochs;
	uint32_t probe_successes;
	uint32_t evidence_tasks;
	uint32_t recorder_entries;
	uint32_t credit_min_admits; /* [module.<name>] credit_min_admits */
	/* [module.<name>] keys of the QoS reserve (qos.c) */
	uint32_t qos_reserve_slices;  /* reserve: this many of HIGH's largest slice */
	uint32_t qos_reserve_percent; /* ... at most this share of the window */
	uint32_t qos_hold_epochs;     /* HIGH is active this long after its last call */
};

/* ------------------------------------------------------------------ domains */

enum mcc_dom_kind { MCC_DOM_DEVICE = 0, MCC_DOM_ROUTE = 1 };

/* Feedback counters: a lane counts in its slot for the domain (struct
 * mcc_slot) and folds them into the domain's `fl` totals when the slot is
 * rebound; tick and domain_stats add both under the lanes' seqlocks. */
struct mcc_counters {
	uint64_t admits;
	uint64_t completed_bytes;
	uint64_t completions;
	uint64_t lat_sum_ns;
	uint64_t lat_samples;
};

/* The same counters where they are kept: a lane slot, a pending pair (one
 * writer each: relaxed load + store) and a domain's folded totals. */
struct mcc_feedback {
	_Atomic uint64_t admits;
	_Atomic uint64_t completed_bytes;
	_Atomic uint64_t completions;
	_Atomic uint64_t lat_sum_ns;
	_Atomic uint64_t lat_samples;
};

/* Cold control state (core->lock). */
struct mcc_ctl {
	uint64_t last_bytes, last_compl, last_lat_sum, last_lat_n, last_admits;
	uint64_t last_tel;
	uint64_t last_backlog;
	uint64_t rate;     /* smoothed delivery rate, bytes/s */
	uint64_t drain_us; /* last epoch's drain-time estimate */
	uint64_t drained_ns; /* tick at which it last delivered or held nothing */
	uint64_t dlv_rate;   /* rate at that tick (the gap cap of drain_us) */
	/* the path's own base: windowed minimum of drain_us over epochs with
	 * completions (two buckets of MCC_BASE_EPOCHS; control.c "Base"); a
	 * route's queueing is measured beyond it, a device's is not (control.c
	 * queueing) */
	uint64_t base_us, base_cur, base_prev;
	uint32_t base_n;     /* epochs in the current bucket */
	bool base_prev_ok;   /* base_prev holds a full bucket */
	/* a software device's paths (control.c "A software device"): the
	 * delivery rate smoothed over MCC_SW_RATE_TAU_NS of backlogged epochs, its
	 * peak in the bucket started at peak_t0 and in the one before */
	uint64_t rate_slow, peak_cur, peak_prev, peak_t0;
	/* the window (KiB) when each peak was measured: at a smaller window
	 * the peak counts in proportion (control.c queueing) */
	uint32_t peak_wk_cur, peak_wk_prev;
	struct mcc_law_state law; /* the control law's own (law.h) */
	uint64_t pace;        /* route: the law's pace, bytes per epoch (0: none) */
	/* this epoch's measurement (tick: measured for every domain before any
	 * state changes, see control.c "Pressure") */
	uint64_t ep_bytes, ep_compl, ep_lat, ep_latn, ep_admits;
	uint64_t ep_actual; /* in-flight bytes, lane credit excluded */
	uint64_t ep_rnr;    /* receiver-pressure completions */
	uint64_t ep_rate;   /* delivery rate of this epoch alone, bytes/s */
	uint64_t pre_q_window; /* window before quarantine: recovery target */
	uint64_t cooldown_ms;  /* current (flap-damped) cooldown */
	uint64_t last_q_ns;    /* host time of the last quarantine; 0: never */
	uint64_t window_cuts;
	uint64_t quarantines;
	uint64_t tmp_credit; /* scan scratch: credit cached by lanes */
	uint64_t tmp_stale;  /* scan scratch: of which stale (old epoch) */
	struct mcc_counters tmp; /* scan scratch: feedback totals */
	struct mcc_counters spilled; /* totals the tick took from the lanes' spill rings */
	uint32_t clean_streak; /* clean epochs since the last hard error */
	uint32_t hard_errors; /* toward the threshold, within flap_window (control.c "Faults") */
	uint64_t last_hard_ns; /* host time of the last hard error; 0: none */
	uint64_t busy_ns;      /* tick of the last traffic (admissions, completions, bytes held) */
	uint32_t hard_epoch;  /* hard errors applied in the current epoch */
	uint32_t probe_ok;    /* clean probe completions in this PROBING period */
	uint32_t suspect_prev; /* HEALTHY or CONGESTED: where SUSPECT returns */
	bool tel_seen;
	bool quarantined_once;
	bool delivered; /* a successful completion was ever counted */
	bool failing;   /* a hard error and no successful completion since */
	uint32_t fail_gen; /* highest endpoint generation of those errors (err_gen) */
	bool busy; /* last epoch had >= MCC_CREDIT_MIN_ADMITS admissions */
	bool route_limited; /* route: its bottleneck is beyond the local device */
};

struct mcc_dom {
	/* line 0, read by every admission: written under core->lock except the
	 * rare monotonic raises of generation and max_slice */
	alignas(MCC_LINE) _Atomic uint64_t ctl;
	_Atomic uint64_t window;
	_Atomic uint64_t chunk;       /* credit chunk (0 in exact mode) */
	_Atomic uint64_t limit;       /* window + stale_est (mcc_dom_set_limit) */
	_Atomic uint64_t stale_est;   /* stale credit still cached by lanes (tick) */
	_Atomic uint64_t max_slice;   /* largest slice seen */
	_Atomic uint32_t generation;  /* route: highest endpoint generation seen */
	_Atomic uint32_t q_generation;/* route: generation at quarantine */
	uint16_t slot_off;            /* byte offset in a lane of its slot (constant) */
	uint16_t pend_off;            /* route: ... of its pending pair (constant) */
	uint32_t kind;                /* enum mcc_dom_kind (constant) */

	/* line 1: the shared reservation counter (includes lane credit), and
	 * what only lanes add to and the tick takes: a line lanes write in exact
	 * mode anyway (README.md "Scale": memory) */
	alignas(MCC_LINE) _Atomic int64_t inflight;
	_Atomic uint64_t hard_pending;
	_Atomic uint64_t rnr_pending;
	_Atomic uint64_t probe_ok;
	_Atomic uint64_t probe_fail;
	_Atomic uint64_t stale_returned; /* stale credit flushed, subtracted at tick */
	_Atomic int64_t pace_tokens;     /* bytes the pace has earned, not yet spent */

	/* line 2: counters of rare events */
	alignas(MCC_LINE) _Atomic uint64_t defers;
	_Atomic uint64_t avoids;
	_Atomic uint64_t would_defer;
	_Atomic uint64_t would_avoid;
	_Atomic uint64_t errors;
	_Atomic uint64_t stale_feedback;
	_Atomic uint64_t double_release;
	_Atomic uint64_t probes;

	/* line 3: counters folded by lanes (a full spill ring), signals */
	alignas(MCC_LINE) struct mcc_feedback fl;
	_Atomic uint64_t backlog;        /* MCC_SIG_BACKLOG value0 */
	_Atomic uint64_t telemetry;      /* MCC_SIG_DEVICE_TELEMETRY value1 */
	_Atomic uint64_t suppressed;     /* soft deadlines dropped for poller stall */

	/* line 4 */
	alignas(MCC_LINE) _Atomic uint64_t probe_bound; /* PROBING bound (0: one slice) */
	_Atomic uint64_t q_until_ns;     /* end of the cooldown (QUARANTINED) */
	_Atomic(struct mcc_dom *) wnext; /* core->wake_head stack link */
	_Atomic uint32_t paced;          /* route: paced (law.h "Pacing"), see pace_take */
	_Atomic uint32_t err_gen;        /* route: highest generation that carried a hard
	                                  * error since the last quarantine (0: none) */
	_Atomic uint32_t wq;             /* on that stack */
	_Atomic uint32_t meta_stale_gen; /* route: generation with stale metadata */
	uint32_t idx;
	/* QoS (qos.c): epoch_no of the last HIGH try_acquire_qos (0: none),
	 * HIGH's largest slice, refusals per class (refuse()) */
	_Atomic uint64_t qos_high_ep;
	_Atomic uint64_t qos_high_slice;
	_Atomic uint64_t qos_refused[MCC_QOS_CLASS_COUNT_];

	struct mcc_ctl cs; /* cold */
	struct mcc_dom *next, *prev; /* core list (cold) */
	/* activity (control.c "Activity", cold): on the tick's active list
	 * (anext/aprev), or at rest; a QUARANTINED domain at rest waits in the
	 * timer heap at position tq_idx - 1 */
	struct mcc_dom *anext, *aprev;
	uint32_t stamp;  /* the lane scan whose totals cs.tmp* hold */
	uint32_t tq_idx; /* 0: not in the timer heap */
	/* the path's base RTT the host stated, us (route_open: base_rtt_ns);
	 * a device's: that of its routes that drove it, weighted by their
	 * delivery rates (control.c base_of); 0: none stated */
	uint32_t sbase_us;
	bool active;
	bool rested; /* has rested since its last visit: catch up when woken */
	bool closed;
};

/* The exact fast path's bound: an admission that leaves the effective
 * in-flight (inflight - stale_est) within the window leaves inflight within
 * window + stale_est. Stored after every change of either. */
static inline void mcc_dom_set_limit(struct mcc_dom *d)
{
	atomic_store_explicit(&d->limit,
	                      atomic_load_explicit(&d->paced, RLX)
	                          ? 0 /* paced: the general path admits (pace_take) */
	                          : atomic_load_explicit(&d->window, RLX) +
	                                atomic_load_explicit(&d->stale_est, RLX),
	                      RLX);
}

/* The exact fast path's empty-domain rule: a paced domain always takes
 * the general path (domain.c pace_take). */
static inline bool mcc_pace_pass(const struct mcc_dom *d)
{
	return !atomic_load_explicit(&d->paced, RLX);
}

struct mcc_route;

struct mcc_device {
	struct mcc_dom d; /* first */
	/* what its route-limited routes contributed this epoch (excluded from
	 * the device's own pressure; cold, tick scratch) */
	uint64_t x_actual, x_rate, x_lat, x_latn;
	/* ... and what the others contributed to its stated base: rates
	 * (KiB/s) and rate x stated base (control.c route_pressure) */
	uint64_t b_rate, b_sum;
	uint32_t device_id;
	uint32_t num_ports;
	uint64_t link_rate_bps;
	bool software; /* rdma_rxe, siw: serialises on the host (policy.c) */
	bool close_pending; /* closed with routes open: freed with the last */
	uint32_t nroutes;        /* cold: open routes bound to it (a new route's share) */
	struct mcc_route *routes; /* cold: those routes, newest first (scoped quarantine) */
	char name[64];
	/* epoch of the last poll pass (poller_progress): its own line */
	alignas(MCC_LINE) _Atomic uint64_t progress_mark;
};

struct mcc_route {
	struct mcc_dom d; /* first */
	_Atomic(struct mcc_device *) dev; /* current binding (route_rebind) */
	uint32_t port_num;                /* cold */
	uint32_t cq_id;                   /* cold */
	uint64_t route_id;
	uint64_t remote_id;
	uint32_t name_idx; /* route registry entry (evidence path names) */
	uint32_t refs;     /* cold: route_open of an open (device, route_id) */
	/* cold: the route table's chain (key: device, route_id) and the
	 * device's list of its routes (policy.c) */
	struct mcc_route *hnext;
	struct mcc_route *dnext, *dprev;
};

/* -------------------------------------------------------------------- lanes */

/* One credit slot: bytes reserved in the shared counter but not yet spent by
 * this lane, valid while `epoch` equals the domain's credit epoch. Written by
 * the lane (relaxed stores); read by tick to measure cached and stale credit. */
struct mcc_slot {
	alignas(MCC_LINE) _Atomic(struct mcc_dom *) dom;
	_Atomic uint64_t credit;
	_Atomic uint32_t epoch;
	uint32_t reserved0;
	struct mcc_feedback fb; /* this lane's, for `dom` since the slot was bound */
};

/*
 * Exact-mode feedback of one (route, device) pair, kept on the lane's own
 * lines (domain.c "pending pairs"): the exact fast path counts here instead
 * of in the two lane slots, whose addresses depend on loads of both domains
 * and would sit between its locked operations. Direct mapped by the route's
 * slot; folded into the two slots when the entry is retargeted or one of
 * its slots is rebound, so while `rd` is set both slots are bound to `rd`
 * and `dd`. Written by the lane only; read by the tick's scan.
 */
struct mcc_pend {
	alignas(MCC_LINE) _Atomic(struct mcc_dom *) rd;
	_Atomic(struct mcc_dom *) dd;
	struct mcc_feedback fb;
};

/* One evidence record (lane ring and slow path). */
enum mcc_ev_kind { MCC_EVK_ANOMALY = 1, MCC_EVK_SUCCESS = 2 };

struct mcc_ev {
	uint64_t seq;
	uint64_t batch_id;
	uint64_t task_id;
	uint32_t attempt;
	uint32_t generation;
	uint8_t kind;       /* enum mcc_ev_kind */
	uint8_t reason;     /* enum mcc_reason */
	uint8_t scope;      /* enum mcc_scope */
	uint8_t path_state; /* enum mcc_path_state at observation */
	uint16_t observed;  /* MCC_OBS_* */
	uint16_t reserved0;
	int32_t wc_status;
	uint32_t vendor_err;
	uint32_t name_idx; /* route registry index + 1; 0: no path */
	uint32_t reserved1;
	uint64_t route_id;
	uint64_t observed_ns;
	uint64_t window;
	uint64_t inflight; /* mcc_dom_inflight_admission() */
	uint64_t cooldown_ms;
};

/* Single-producer (the lane) single-consumer (core->lock holder) ring. */
struct mcc_evring {
	alignas(MCC_LINE) _Atomic uint32_t head; /* producer */
	alignas(MCC_LINE) _Atomic uint32_t tail; /* consumer */
	_Atomic uint64_t dropped;
	struct mcc_ev *rec; /* [MCC_EV_RING] */
};

struct mcc_okcache {
	uint64_t batch_id, task_id, ver;
};

/* Recently pushed anomalies: an identical record (task, attempt, path,
 * reason) in the same epoch is not pushed again. */
struct mcc_ancache {
	uint64_t batch_id, task_id, route_id, epoch;
	uint32_t attempt;
	uint8_t reason;
	uint8_t reserved[3];
};
#define MCC_EV_ANCACHE 16u

/* Feedback moved out of a lane slot rebound to another domain, or of a
 * pending pair retargeted to another pair: the lane writes it into its
 * spill ring (no locked operation, no write to the domain), the slow-path
 * lock holder adds it to the domain's cs.spilled and wakes the domain
 * (domain.c "spill"). A pair's counts are one entry naming both domains.
 * A domain named by an entry is not freed. */
struct mcc_spill {
	struct mcc_dom *dom;
	struct mcc_dom *dom2; /* a pending pair's device (the same counts), or NULL */
	struct mcc_counters c;
};

#define MCC_SPILL_RING 2048u /* per lane (power of two) */

struct mcc_spillring {
	alignas(MCC_LINE) _Atomic uint32_t head; /* producer: the lane */
	alignas(MCC_LINE) _Atomic uint32_t tail; /* consumer: core->lock holder */
	struct mcc_spill *e;                     /* [MCC_SPILL_RING] */
};

struct mcc_lane {
	struct mcc_slot slots[MCC_LANE_SLOTS]; /* first: slot address = lane + offset */
	struct mcc_pend pend[MCC_LANE_PEND];
	struct mcc_core *core;
	uint32_t id;
	uint32_t role;
	/* seqlock of slot rebinds (odd while a slot folds its counters into a
	 * domain), so scans never count a folded value twice */
	_Atomic uint32_t seq;
	uint32_t qos_cls; /* class + 1 of the try_acquire_qos in progress, 0: none */
	/* 1 after lane_close: the memory stays (core->lane_mem) and the hot
	 * path answers a closed lane's handle with -EBADF, never a
	 * use-after-free; 0 again when its id is opened anew */
	_Atomic uint32_t closed;
	struct mcc_evring ring;
	struct mcc_spillring spill;
	struct mcc_okcache ok[MCC_EV_OKCACHE];
	/* the task attempt of this lane's last success check and
	 * core->ev_bumps before it (mcc_ev_success) */
	uint64_t okm_batch, okm_task, okm_bumps;
	uint32_t okm_attempt;
	struct mcc_ancache an[MCC_EV_ANCACHE];
	/* dedupe: congestion feedback once per task per epoch; one recorder
	 * entry per flush burst */
	uint64_t cf_batch, cf_task, cf_epoch;
	uint64_t fl_route, fl_epoch;
	uint32_t fl_gen;
};

/* The slot of `d` in `lane` (bound to `d` or not). */
static inline struct mcc_slot *mcc_slot_of(struct mcc_lane *lane, const struct mcc_dom *d)
{
	return (struct mcc_slot *)(void *)((char *)lane + d->slot_off);
}

/* ---------------------------------------------------------------- evidence */

struct mcc_ev_item {
	uint64_t seq;
	uint64_t route_id;
	uint64_t observed_ns;
	uint64_t window;
	uint64_t inflight;
	uint64_t cooldown_ms;
	uint32_t name_idx;
	uint32_t attempt;
	uint32_t generation;
	uint32_t vendor_err;
	int32_t wc_status;
	uint16_t observed;
	uint8_t reason;
	uint8_t scope;
	uint8_t path_state;
	uint8_t used;
	uint8_t resolved;
	uint8_t reserved0;
};

enum { MCC_EVC_LU = 0, MCC_EVC_CG = 1, MCC_EVC_UK = 2, MCC_EVC_N = 3 };

struct mcc_ev_task {
	uint64_t batch_id;
	uint64_t task_id;
	uint64_t hash;
	uint64_t ok_seq;     /* latest success applied */
	uint32_t ok_attempt; /* highest successful attempt */
	uint32_t list;       /* which list the entry is on */
	uint32_t next, prev; /* list links (entry indices, UINT32_MAX: none) */
	struct mcc_ev_item it[MCC_EVC_N];
};

enum { MCC_EVL_FREE = 0, MCC_EVL_RESOLVED = 1, MCC_EVL_UNRESOLVED = 2, MCC_EVL_N = 3 };

/* Chain links of an entry: task-hash bucket chain and batch bucket chain. */
struct mcc_ev_links {
	uint32_t tnext, tprev;
	uint32_t bnext, bprev;
};

struct mcc_evtab {
	struct mcc_ev_task *e;    /* [cap] */
	struct mcc_ev_links *ln;  /* [cap] */
	uint32_t *tix;            /* task buckets: first entry index or UINT32_MAX */
	uint32_t *bix;            /* batch buckets */
	uint32_t mask;            /* bucket mask (both) */
	uint32_t cap;
	uint32_t used;
	uint32_t reserved2;
	uint32_t head[MCC_EVL_N], tail[MCC_EVL_N];
	_Atomic uint64_t *bloom; /* per hash bucket: count (low 32) | version (high 32) */
	uint32_t bloom_mask;
	uint32_t reserved0;
	uint64_t evictions;
	struct mcc_ev *scratch;
	uint32_t scratch_cap;
	uint32_t reserved1;
};

/* Route registry: stable names and recovery marks for evidence (records
 * never hold route pointers, which may be freed). An entry lives while an
 * open route or an evidence item names it (`refs`), then returns to the
 * free list; lookup by (device_id, route_id) is a hash (evidence.c). */
struct mcc_rname {
	uint64_t route_id;
	uint64_t recovered_seq;
	uint32_t device_id;
	uint32_t refs;  /* open routes + evidence items naming it; 0: free */
	uint32_t hnext; /* hash chain or free list: index + 1 (0: none) */
	uint32_t reserved0;
	char *path; /* its name, at its own length (< MCC_PATH_NAME_MAX); NULL: none */
};

/* ---------------------------------------------------------------- recorder */

enum mcc_rec_kind {
	MCC_REC_WC = 1,
	MCC_REC_ASYNC = 2,
	MCC_REC_SIGNAL = 3,
	MCC_REC_DECISION = 4,
	MCC_REC_TRANSITION = 5,
	MCC_REC_EPOCH = 6,
	MCC_REC_RELEASE = 7,
	MCC_REC_SUPPRESSED = 8,
};

#define MCC_RECF_ROUTE (1u << 0)
#define MCC_RECF_DEVICE (1u << 1)
#define MCC_RECF_STATES (1u << 2)
#define MCC_RECF_WC (1u << 3)

struct mcc_rec_entry {
	uint64_t ts;
	uint64_t route_id;
	uint64_t bytes;
	uint32_t device_id;
	uint32_t generation;
	int32_t wc_status;
	uint32_t vendor_err;
	uint32_t code; /* raw event / signal / decision code */
	uint8_t kind, cls, scope, from, to, reason, flags, reserved0;
};

struct mcc_rec_slot {
	_Atomic uint64_t seq; /* 2 * index + 2 when complete, odd while written */
	_Atomic uint64_t w[7];
};

struct mcc_recorder {
	alignas(MCC_LINE) _Atomic uint64_t head;
	alignas(MCC_LINE) _Atomic uint64_t dropped;
	struct mcc_rec_slot *slots;
	uint64_t mask;
};

/* ------------------------------------------------------------------- core */

struct mcc_deadline {
	struct mcc_route *route;
	struct mcc_device *dev;
	struct mcc_task_ref_v1 task;
	uint32_t generation;
	uint32_t reserved0;
	uint64_t ts;
};

struct mcc_core {
	/* read-mostly */
	alignas(MCC_LINE) uint32_t mode; /* enum mcc_mode */
	uint32_t max_lanes;
	const struct mcc_host_v1 *host;
	const struct mcc_law *law; /* the module's control law (law.h) */
	struct mcc_params p;
	_Atomic uint64_t now_ns;   /* host time of the last tick (hot-path timestamps) */
	_Atomic uint64_t epoch_no; /* tick count + 1 */

	_Atomic uint32_t lanes_open; /* lanes open now (credit chunk, tick) */
	uint32_t lanes_pub;          /* lanes_open the chunks were published for (cold) */
	uint32_t lanes_hi;           /* highest open lane id + 1: scan bound (cold) */

	alignas(MCC_LINE) _Atomic uint64_t ev_seq;    /* global evidence order */
	alignas(MCC_LINE) _Atomic uint64_t ev_active; /* pending + unresolved entries */
	_Atomic uint64_t ev_bumps; /* bloom increments, each counted after it */
	/* records pushed into lane rings and not yet drained: the drain (every
	 * task_query, batch_free, tick) is O(1) while it is zero */
	alignas(MCC_LINE) _Atomic uint64_t ev_pending;
	/* entries in the evidence table (written under core->lock): with none
	 * and nothing pending, task_query and batch_free answer without the lock */
	_Atomic uint32_t ev_entries;
	/* batch_free calls that dropped entries: part of the lanes' anomaly
	 * dedupe key, so a batch id reused within an epoch is recorded again */
	_Atomic uint32_t ev_frees;

	alignas(MCC_LINE) pthread_mutex_t lock;
	struct mcc_lane **lanes; /* [max_lanes] open lanes (cold) */
	struct mcc_lane **lane_mem; /* [max_lanes] each id's lane, kept until fini (cold) */
	uint32_t *scan_seq;      /* [max_lanes] scan scratch (cold) */
	struct mcc_dom *devices, *routes, *zombies; /* (cold) */
	uint32_t next_idx;
	uint32_t next_dev; /* device slot assignment */
	uint32_t ndl;
	struct mcc_deadline *dl; /* [MCC_DEADLINES_MAX] */
	struct mcc_evtab ev;
	struct mcc_rname *reg;   /* [reg_cap] route registry (evidence.c) */
	uint32_t nreg, reg_cap;  /* entries used so far (high mark), allocated */
	uint32_t *reg_bkt;       /* [reg_cap] hash buckets: index + 1 (0: none) */
	uint32_t reg_free;       /* free list head: index + 1 (0: none) */
	uint32_t reg_live;       /* entries in use */
	/* open routes by (device, route_id) (policy.c): chained hash */
	struct mcc_route **rtab; /* [rtab_mask + 1] */
	uint32_t rtab_mask;
	uint32_t nroutes;
	struct mcc_recorder *rec; /* observe mode only */
	uint64_t last_tick;
	uint64_t deadlines_dropped;
	bool ticked;
	/* activity (control.c "Activity"): the domains the tick visits, by kind
	 * (enum mcc_dom_kind), newest first; the others rest */
	struct mcc_dom *act[2];
	uint32_t nact[2];
	struct mcc_dom **tq; /* timer heap: QUARANTINED at rest, by q_until_ns */
	uint32_t ntq, tq_cap;
	struct mcc_dom **touched; /* scan scratch: domains the lanes name */
	uint32_t ntouched, touched_cap;
	uint32_t scan_stamp;
	bool scan_stable; /* the last scan read every lane consistently */
	bool snap_phase; /* between the tick's credit fold and its measurement */
	bool full_walk;  /* reference mode (tests): every domain every tick */
	bool sbase_seen; /* a route was opened with a stated base RTT (control.c base_of) */
	/* domains whose lane folded their counters into `fl` (a full spill
	 * ring): a lock-free stack through mcc_dom.wnext, each entry holding
	 * the slot's binding until the slow path pops it (mcc_spill_drain) */
	_Atomic(struct mcc_dom *) wake_head;
	uint64_t visits; /* domain visits by ticks (tests, benchmarks) */
};

/* --------------------------------------------------------------- domain.c */

void mcc_dom_init(struct mcc_core *core, struct mcc_dom *d, uint32_t kind, uint32_t idx);
void mcc_dom_free(struct mcc_dom *d);
void mcc_dom_sweep_zombies(struct mcc_core *core); /* core->lock held */

/* A domain list (core->devices, routes, zombies): add at the head, unlink. */
static inline void mcc_dom_list_add(struct mcc_dom **head, struct mcc_dom *d)
{
	d->prev = NULL;
	d->next = *head;
	if (*head)
		(*head)->prev = d;
	*head = d;
}

static inline void mcc_dom_list_del(struct mcc_dom **head, struct mcc_dom *d)
{
	if (d->prev)
		d->prev->next = d->next;
	else
		*head = d->next;
	if (d->next)
		d->next->prev = d->prev;
	d->next = d->prev = NULL;
}
/* core->lock held: fill every open domain's cs.tmp_* from the lane slots and
 * folded totals (consistent under the lanes' seqlocks). */
bool mcc_scan_lanes(struct mcc_core *core); /* false: never a stable read */
/* core->lock held: no lane names `d` (a closed domain may be freed) */
bool mcc_dom_unreferenced(struct mcc_core *core, const struct mcc_dom *d);
/* core->lock held: one domain's totals and cached credit (stale: of an old
 * epoch), O(lanes) (domain.c) */
void mcc_dom_sum(struct mcc_core *core, const struct mcc_dom *d, struct mcc_counters *t,
                 uint64_t *credit, uint64_t *stale);
/* core->lock held: take the lanes' spill rings into cs.spilled (waking the
 * domains they name) */
void mcc_spill_drain(struct mcc_core *core);
int mcc_spill_init(struct mcc_spillring *ring);
void mcc_spill_fini(struct mcc_spillring *ring);
uint64_t mcc_dom_inflight(const struct mcc_dom *d); /* shared - flushed stale */
/* in-flight as admission counts it (dom_reserve, exact_fits) and evidence
 * reports it: shared - stale_est. Equal to domain_stats' figure after each
 * tick; the same on the fast and the general paths at any time. */
uint64_t mcc_dom_inflight_admission(const struct mcc_dom *d);
void mcc_lane_flush_all(struct mcc_lane *lane);
uint64_t mcc_core_now(const struct mcc_core *core); /* host clock (slow path) */

/* (The callbacks of the descriptor are declared in policy.h.) The general
 * path alone, correct in every case: the reference the fast paths fall back to (also driven directly by test_admission_diff). */
int mcc_core_acquire_general(struct mcc_lane *lane, struct mcc_route *r, uint64_t bytes,
                             uint32_t generation, const struct mcc_task_ref_v1 *task,
                             struct mcc_permit_v1 *p);
int mcc_core_release_general(struct mcc_lane *lane, struct mcc_permit_v1 *p, uint64_t bytes,
                             uint32_t reason);
/* A refusal (MCC_DEFER / MCC_AVOID) by domain `by` decided outside the
 * admission paths (qos.c): counted, recorded, the permit left dead. */
int mcc_core_refuse(struct mcc_lane *lane, struct mcc_route *r, struct mcc_device *dv,
                    struct mcc_dom *by, int decision, uint64_t bytes, uint32_t generation,
                    const struct mcc_task_ref_v1 *task, struct mcc_permit_v1 *p);

/* ------------------------------------------------------------------ qos.c */

/* try_acquire_qos is declared in policy.h. The bytes of d's window held back for HIGH now (domain_stats). */
uint64_t mcc_qos_reserve(const struct mcc_core *core, const struct mcc_dom *d);
void mcc_core_completion_general(struct mcc_lane *lane, struct mcc_permit_v1 *p,
                                 const struct mcc_completion_v1 *wc);

/* -------------------------------------------------------------- control.c */

/* All under core->lock. */
void mcc_ctl_publish(struct mcc_core *core, struct mcc_dom *d, uint32_t state, bool bump);
/* a new domain's first window: w0 within [min, max], then slow start (control.c) */
void mcc_ctl_start(struct mcc_core *core, struct mcc_dom *d, uint64_t w0);
/* Activity (control.c): put a resting domain back on the tick's active list
 * (its rest caught up in O(1)); take a closed one off every list. */
void mcc_dom_wake(struct mcc_core *core, struct mcc_dom *d);
void mcc_dom_forget(struct mcc_core *core, struct mcc_dom *d);
void mcc_ctl_set_state(struct mcc_core *core, struct mcc_dom *d, uint32_t state, uint64_t now);
void mcc_ctl_quarantine(struct mcc_core *core, struct mcc_dom *d, uint64_t now);
void mcc_ctl_hard_error(struct mcc_core *core, struct mcc_dom *d, uint32_t n, uint64_t now);
uint64_t mcc_ctl_cooldown_left_ms(const struct mcc_dom *d, uint64_t now);
uint32_t mcc_dom_device_id(const struct mcc_dom *d);
uint64_t mcc_dom_route_id(const struct mcc_dom *d);
/* "device <name>" / "route <device> -> <peer>", for log lines (slow path). */
const char *mcc_dom_label(const struct mcc_core *core, const struct mcc_dom *d, char *buf,
                          size_t len); /* core->lock held */


/* ------------------------------------------------------------- evidence.c */

int mcc_ev_init(struct mcc_core *core);
void mcc_ev_fini(struct mcc_core *core);
int mcc_ev_ring_init(struct mcc_evring *ring);
void mcc_ev_ring_fini(struct mcc_evring *ring);
/* hot path (lane) */
void mcc_ev_lane_anomaly(struct mcc_lane *lane, struct mcc_ev *rec);
void mcc_ev_lane_success(struct mcc_lane *lane, const struct mcc_task_ref_v1 *task,
                         uint32_t generation);
/* slow path, core->lock held */
void mcc_ev_drain(struct mcc_core *core);
void mcc_ev_apply_direct(struct mcc_core *core, struct mcc_ev *rec);
void mcc_ev_route_recovered(struct mcc_core *core, uint32_t name_idx);
/* The registry entry of (device_id, route_id), created if new (path NULL:
 * keep the name), with one more reference; 0 when out of memory. */
uint32_t mcc_reg_get(struct mcc_core *core, uint32_t device_id, uint64_t route_id,
                     const char *path);
void mcc_reg_put(struct mcc_core *core, uint32_t name_idx); /* one reference less */


static inline bool mcc_task_is_set(const struct mcc_task_ref_v1 *t)
{
	return t && (t->batch_id || t->task_id);
}

/* Copy a task reference into a permit (NULL: no task), one field per load.
 * A host fills its task reference field by field just before try_acquire;
 * a load wider than those stores cannot be forwarded from the store buffer
 * and stalls (~15 cycles on x86), so the copy must not be merged into one
 * vector load: relaxed atomic loads are never combined. */
static inline void mcc_task_set(struct mcc_task_ref_v1 *dst, const struct mcc_task_ref_v1 *src)
{
	if (src) {
		dst->batch_id = __atomic_load_n(&src->batch_id, __ATOMIC_RELAXED);
		dst->task_id = __atomic_load_n(&src->task_id, __ATOMIC_RELAXED);
		dst->attempt = __atomic_load_n(&src->attempt, __ATOMIC_RELAXED);
	} else {
		dst->batch_id = dst->task_id = 0;
		dst->attempt = 0;
	}
	dst->reserved0 = 0;
}

/* A successful completion of `task` on `lane` while core->ev_active: the
 * success record, when it may resolve evidence (mcc_ev_lane_success).
 * Evidence a success could resolve raises a bloom count, and every bloom
 * increment is counted in core->ev_bumps after it: with no bump since this
 * lane checked the same task attempt there is nothing new to check (no
 * hash, no bloom line). An increment not yet counted is concurrent with
 * this completion and ordered after it. */
static inline void mcc_ev_success(struct mcc_lane *lane, const struct mcc_task_ref_v1 *task,
                                  uint32_t generation)
{
	if (!mcc_task_is_set(task) ||
	    (atomic_load_explicit(&lane->core->ev_bumps, ACQ) == lane->okm_bumps &&
	     task->task_id == lane->okm_task && task->batch_id == lane->okm_batch &&
	     task->attempt == lane->okm_attempt))
		return;
	mcc_ev_lane_success(lane, task, generation);
}

/* ------------------------------------------------------------- recorder.c */

struct mcc_recorder *mcc_rec_create(uint32_t entries);
void mcc_rec_destroy(struct mcc_recorder *rec);
void mcc_rec_put(struct mcc_recorder *rec, const struct mcc_rec_entry *e); /* lock-free */
int mcc_rec_dump(struct mcc_recorder *rec, int fd);

#define mcc_log(core, level, ...)                                                       \
	do {                                                                            \
		if ((core)->host && (core)->host->log)                                  \
			(core)->host->log((core)->host->log_arg, (level), __VA_ARGS__); \
	} while (0)

#endif /* MCC_CORE_H */
