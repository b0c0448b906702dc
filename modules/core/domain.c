/* SPDX-License-Identifier: MIT */
/*
 * domain.c - lanes, per-lane byte-credit caches and permits: the hot path.
 *
 * try_acquire / release / on_completion / poller_progress take no lock, make
 * no system call, read no clock, allocate nothing, log nothing and use no
 * TLS. Per-thread state is reached through the lane handle.
 *
 * Credit (see README.md "Credit design"): a lane caches byte credit per
 * domain in a small direct-mapped table. The shared counter d->inflight
 * includes every byte of cached credit, so
 *     actual in-flight <= d->inflight,
 * and every increase of d->inflight checked the bound (a CAS, or a locked
 * add whose returned value is tested and taken back when over), so no
 * admission ever exceeds max(window, one slice). A domain in exact mode
 * (MCC_CTL_EXACT: small window or any state but HEALTHY) admits with a
 * shared locked add per slice and nothing is cached; its feedback counts go
 * to the lane's pending pairs. Each state change or window
 * cut bumps the domain's credit epoch; a lane checks the epoch before
 * spending and hands stale credit back through d->stale_returned, which the
 * next tick subtracts (tick's stale-credit snapshot d->stale_est keeps
 * exact admission from counting credit that idle lanes still hold).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#define NOINLINE __attribute__((noinline))
#define COLD __attribute__((cold, noinline))

uint64_t mcc_core_now(const struct mcc_core *core)
{
	return core->host->now_ns(core->host->clock_arg);
}

void mcc_dom_init(struct mcc_core *core, struct mcc_dom *d, uint32_t kind, uint32_t idx)
{
	/* d is zeroed by the caller */
	d->kind = kind;
	d->idx = idx;
	/* Fibonacci hashing spreads consecutive indices over the slots */
	/* devices use slots [0, MCC_DEV_SLOTS) by open order, routes hash into
	 * the rest: a route never evicts its own device from a lane's cache */
	uint32_t slot;
	if (kind == MCC_DOM_DEVICE) {
		slot = idx % MCC_DEV_SLOTS;
	} else {
		uint32_t h = (uint32_t)(((uint64_t)idx * 0x9E3779B97F4A7C15ull) >> 32);
		slot = MCC_DEV_SLOTS + (uint32_t)(((uint64_t)h * (MCC_LANE_SLOTS - MCC_DEV_SLOTS)) >> 32);
	}
	d->slot_off = (uint16_t)(offsetof(struct mcc_lane, slots) + sizeof(struct mcc_slot) * slot);
	d->pend_off = (uint16_t)(offsetof(struct mcc_lane, pend) +
	                         sizeof(struct mcc_pend) * (slot % MCC_LANE_PEND));
	_Static_assert(offsetof(struct mcc_lane, pend) + sizeof(struct mcc_pend) * MCC_LANE_PEND <=
	                   UINT16_MAX,
	               "lane offsets fit 16 bits");
	atomic_init(&d->window, core->p.max_window); /* healthy paths start at the max */
	mcc_dom_set_limit(d);
	atomic_init(&d->probe_bound, core->p.probe_window);
	d->cs.cooldown_ms = core->p.cooldown_ms;
	d->cs.suspect_prev = MCC_PATH_HEALTHY;
	atomic_init(&d->ctl, 1ull << 32); /* the caller publishes its first state */
}

void mcc_dom_free(struct mcc_dom *d)
{
	free(d); /* the domain is the first member of its device/route */
}

/* Closed domains that no lane slot or pair named during the last full scan
 * are freed (core->lock held). */
void mcc_dom_sweep_zombies(struct mcc_core *core)
{
	if (!core->scan_stable)
		return;
	for (struct mcc_dom *d = core->zombies, *n; d; d = n) {
		n = d->next;
		if (d->stamp != core->scan_stamp) { /* no slot or pair of the scan */
			mcc_dom_list_del(&core->zombies, d);
			mcc_dom_free(d);
		}
	}
}

uint64_t mcc_dom_inflight(const struct mcc_dom *d)
{
	int64_t v = atomic_load_explicit(&d->inflight, RLX);
	uint64_t r = atomic_load_explicit(&d->stale_returned, RLX);
	if (v <= 0)
		return 0;
	return (uint64_t)v > r ? (uint64_t)v - r : 0;
}

uint64_t mcc_dom_inflight_admission(const struct mcc_dom *d)
{
	int64_t v = atomic_load_explicit(&d->inflight, RLX);
	uint64_t st = atomic_load_explicit(&d->stale_est, RLX);
	return v > 0 && (uint64_t)v > st ? (uint64_t)v - st : 0;
}

/* ------------------------------------------------------------ credit slots */

/* Give back the slot's credit: current-epoch credit directly, stale credit
 * through stale_returned (tick subtracts it together with its snapshot). */
static void slot_flush(struct mcc_slot *s, struct mcc_dom *d, uint64_t ctl)
{
	uint64_t c = atomic_load_explicit(&s->credit, RLX);
	if (!c)
		return;
	if (atomic_load_explicit(&s->epoch, RLX) == mcc_ctl_epoch(ctl))
		atomic_fetch_sub_explicit(&d->inflight, (int64_t)c, RLX);
	else
		atomic_fetch_add_explicit(&d->stale_returned, c, RLX);
	atomic_store_explicit(&s->credit, 0, RLX);
}

/* ------------------------------------------------------- feedback counters */

static void fb_zero(struct mcc_feedback *f)
{
	atomic_store_explicit(&f->admits, 0, RLX);
	atomic_store_explicit(&f->completed_bytes, 0, RLX);
	atomic_store_explicit(&f->completions, 0, RLX);
	atomic_store_explicit(&f->lat_sum_ns, 0, RLX);
	atomic_store_explicit(&f->lat_samples, 0, RLX);
}

/* Add a counter set into a scan's totals. */
static void fb_sum(struct mcc_counters *t, const struct mcc_feedback *f)
{
	t->admits += atomic_load_explicit(&f->admits, RLX);
	t->completed_bytes += atomic_load_explicit(&f->completed_bytes, RLX);
	t->completions += atomic_load_explicit(&f->completions, RLX);
	t->lat_sum_ns += atomic_load_explicit(&f->lat_sum_ns, RLX);
	t->lat_samples += atomic_load_explicit(&f->lat_samples, RLX);
}

/* One successful completion of `n` bytes (`lat`: its latency, 0 when not
 * sampled), counted by the set's only writer. */
static inline void fb_completion(struct mcc_feedback *f, uint64_t n, uint64_t lat)
{
	mcc_ctr_add(&f->completed_bytes, n);
	mcc_ctr_add(&f->completions, 1);
	if (lat) {
		mcc_ctr_add(&f->lat_sum_ns, lat);
		mcc_ctr_add(&f->lat_samples, 1);
	}
}

/* A completion's latency, 0 when the host did not sample it. */
static inline uint64_t wc_latency(const struct mcc_completion_v1 *wc)
{
	return wc->post_ns && wc->complete_ns > wc->post_ns ? wc->complete_ns - wc->post_ns : 0;
}

/* ------------------------------------------------------------------ spill */

int mcc_spill_init(struct mcc_spillring *ring)
{
	ring->e = calloc(MCC_SPILL_RING, sizeof(*ring->e));
	return ring->e ? 0 : -ENOMEM;
}

void mcc_spill_fini(struct mcc_spillring *ring)
{
	free(ring->e);
	ring->e = NULL;
}

static bool fb_nonzero(const struct mcc_feedback *f)
{
	return atomic_load_explicit(&f->admits, RLX) | atomic_load_explicit(&f->completed_bytes, RLX) |
	       atomic_load_explicit(&f->completions, RLX) | atomic_load_explicit(&f->lat_sum_ns, RLX) |
	       atomic_load_explicit(&f->lat_samples, RLX);
}

/* A lane-owned counter set, read once (its only writer is this lane). */
static inline __attribute__((always_inline)) struct mcc_counters fb_read(const struct mcc_feedback *f)
{
	return (struct mcc_counters){ atomic_load_explicit(&f->admits, RLX),
		                      atomic_load_explicit(&f->completed_bytes, RLX),
		                      atomic_load_explicit(&f->completions, RLX),
		                      atomic_load_explicit(&f->lat_sum_ns, RLX),
		                      atomic_load_explicit(&f->lat_samples, RLX) };
}

/* Counts of `d` (and of `d2`, a pending pair's device, unless NULL) into
 * the lane's spill ring (single producer); false when the ring is full. */
static inline __attribute__((always_inline)) bool spill_push(struct mcc_lane *lane, struct mcc_dom *d,
                                                             struct mcc_dom *d2,
                                                             const struct mcc_counters *c)
{
	struct mcc_spillring *ring = &lane->spill;
	uint32_t head = atomic_load_explicit(&ring->head, RLX);
	if (UNLIKELY(head - atomic_load_explicit(&ring->tail, ACQ) >= MCC_SPILL_RING))
		return false;
	struct mcc_spill *e = &ring->e[head & (MCC_SPILL_RING - 1)];
	e->dom = d;
	e->dom2 = d2;
	e->c = *c;
	atomic_store_explicit(&ring->head, head + 1, REL);
	return true;
}

/* A full ring: `d` goes onto the core's wake stack (Treiber push, popped
 * whole under the lock), unless it is there already. */
static void wake_push(struct mcc_core *core, struct mcc_dom *d)
{
	if (atomic_exchange_explicit(&d->wq, 1, ACQ))
		return;
	struct mcc_dom *h = atomic_load_explicit(&core->wake_head, RLX);
	do
		atomic_store_explicit(&d->wnext, h, RLX);
	while (!atomic_compare_exchange_weak_explicit(&core->wake_head, &h, d, REL, RLX));
}

/* A full ring: the counts into the domain's folded totals, which every
 * lane may add to, and the domain onto the wake stack. */
static COLD void spill_full(struct mcc_lane *lane, struct mcc_dom *d, const struct mcc_counters *c)
{
	const uint64_t v[5] = { c->admits, c->completed_bytes, c->completions, c->lat_sum_ns,
		                c->lat_samples };
	_Atomic uint64_t *t[5] = { &d->fl.admits, &d->fl.completed_bytes, &d->fl.completions,
		                   &d->fl.lat_sum_ns, &d->fl.lat_samples };
	for (int i = 0; i < 5; i++)
		if (v[i])
			atomic_fetch_add_explicit(t[i], v[i], RLX);
	wake_push(lane->core, d);
}

/* Counts of `d` that leave a rebound slot: through the spill ring. Inside
 * a seqlock write section. */
static inline void counts_out(struct mcc_lane *lane, struct mcc_dom *d, const struct mcc_counters *c)
{
	if (UNLIKELY(!spill_push(lane, d, NULL, c)))
		spill_full(lane, d, c);
}

/* Move a pending pair's counts out, one spill entry for both domains (a
 * pair never needs its slots bound, so a lane that uses many routes in
 * exact mode evicts no slot, and its device's slot takes nothing: one
 * entry per retarget) and free it. Inside a seqlock write section. */
static inline __attribute__((always_inline)) void pend_out(struct mcc_lane *lane,
                                                           struct mcc_pend *e)
{
	struct mcc_dom *rd = atomic_load_explicit(&e->rd, RLX);
	if (!rd)
		return;
	struct mcc_dom *dd = atomic_load_explicit(&e->dd, RLX);
	struct mcc_spillring *ring = &lane->spill;
	uint32_t head = atomic_load_explicit(&ring->head, RLX);
	if (UNLIKELY(head - atomic_load_explicit(&ring->tail, ACQ) >= MCC_SPILL_RING)) {
		struct mcc_counters c = fb_read(&e->fb);
		spill_full(lane, rd, &c);
		spill_full(lane, dd, &c);
		return;
	}
	/* field by field from the pair into the entry (spill_push) */
	struct mcc_spill *x = &ring->e[head & (MCC_SPILL_RING - 1)];
	x->dom = rd;
	x->dom2 = dd;
	x->c.admits = atomic_load_explicit(&e->fb.admits, RLX);
	x->c.completed_bytes = atomic_load_explicit(&e->fb.completed_bytes, RLX);
	x->c.completions = atomic_load_explicit(&e->fb.completions, RLX);
	x->c.lat_sum_ns = atomic_load_explicit(&e->fb.lat_sum_ns, RLX);
	x->c.lat_samples = atomic_load_explicit(&e->fb.lat_samples, RLX);
	atomic_store_explicit(&ring->head, head + 1, REL);
}

static void pend_fold(struct mcc_lane *lane, struct mcc_pend *e)
{
	pend_out(lane, e);
	fb_zero(&e->fb);
	atomic_store_explicit(&e->rd, NULL, RLX);
	atomic_store_explicit(&e->dd, NULL, RLX);
}

/* Drained spill counts into `d`'s totals, `d` woken. */
static void spill_take(struct mcc_core *core, struct mcc_dom *d, const struct mcc_counters *c)
{
	if (d->closed)
		return;
	struct mcc_counters *t = &d->cs.spilled;
	t->admits += c->admits;
	t->completed_bytes += c->completed_bytes;
	t->completions += c->completions;
	t->lat_sum_ns += c->lat_sum_ns;
	t->lat_samples += c->lat_samples;
	mcc_dom_wake(core, d); /* its totals moved */
}

void mcc_spill_drain(struct mcc_core *core)
{
	for (struct mcc_dom *d = atomic_exchange_explicit(&core->wake_head, NULL, ACQ), *n; d; d = n) {
		n = atomic_load_explicit(&d->wnext, RLX);
		atomic_store_explicit(&d->wq, 0, REL);
		if (!d->closed)
			mcc_dom_wake(core, d); /* its totals moved (into fl) */
	}
	for (uint32_t i = 0; i < core->lanes_hi; i++) {
		struct mcc_lane *lane = core->lanes[i];
		if (!lane)
			continue;
		struct mcc_spillring *ring = &lane->spill;
		uint32_t head = atomic_load_explicit(&ring->head, ACQ);
		uint32_t tail = atomic_load_explicit(&ring->tail, RLX);
		for (; tail != head; tail++) {
			const struct mcc_spill *e = &ring->e[tail & (MCC_SPILL_RING - 1)];
			spill_take(core, e->dom, &e->c);
			if (e->dom2)
				spill_take(core, e->dom2, &e->c);
		}
		atomic_store_explicit(&ring->tail, tail, REL);
	}
}

/*
 * Rebind slot `s` from its domain to `d` (NULL: unbind). The old domain's
 * counters leave through the lane's spill ring (counts_out): no locked
 * operation and no write to the old domain, which may rest (control.c
 * "Activity"): the drain wakes it. No reference count either: a closed
 * domain is freed only once a stable scan finds no slot, pending pair,
 * ring or stack entry naming it (mcc_dom_unreferenced, the tick's sweep).
 */
static COLD void slot_rebind(struct mcc_lane *lane, struct mcc_slot *s, struct mcc_dom *d)
{
	struct mcc_dom *old = atomic_load_explicit(&s->dom, RLX);
	uint32_t seq = atomic_load_explicit(&lane->seq, RLX);
	atomic_store_explicit(&lane->seq, seq + 1, RLX); /* seqlock: write begins */
	atomic_thread_fence(REL);
	if (old) {
		slot_flush(s, old, atomic_load_explicit(&old->ctl, ACQ));
		if (fb_nonzero(&s->fb)) {
			struct mcc_counters c = fb_read(&s->fb);
			atomic_store_explicit(&s->dom, NULL, RLX); /* not its own slot any more */
			counts_out(lane, old, &c);
			fb_zero(&s->fb);
		}
		atomic_store_explicit(&s->dom, NULL, RLX);
	}
	if (d) {
		atomic_store_explicit(&s->epoch, mcc_ctl_epoch(atomic_load_explicit(&d->ctl, ACQ)),
		                      RLX);
		atomic_store_explicit(&s->dom, d, RLX);
	}
	atomic_store_explicit(&lane->seq, seq + 2, REL); /* write ends */
}

/* First sight of `d` in scan `stamp`: its scratch starts from zero. */
static void scan_begin(struct mcc_core *core, struct mcc_dom *d)
{
	d->stamp = core->scan_stamp;
	d->cs.tmp_credit = d->cs.tmp_stale = 0;
	memset(&d->cs.tmp, 0, sizeof(d->cs.tmp));
	if (!d->active && core->ntouched < core->touched_cap)
		core->touched[core->ntouched++] = d;
}

static void scan_add(struct mcc_core *core, struct mcc_dom *d, const struct mcc_slot *s)
{
	if (d->stamp != core->scan_stamp)
		scan_begin(core, d);
	uint64_t c = atomic_load_explicit(&s->credit, RLX);
	d->cs.tmp_credit += c;
	if (c && atomic_load_explicit(&s->epoch, RLX) != mcc_ctl_epoch(atomic_load_explicit(&d->ctl, RLX)))
		d->cs.tmp_stale += c;
	fb_sum(&d->cs.tmp, &s->fb);
}

static void scan_pend(struct mcc_core *core, const struct mcc_pend *e)
{
	struct mcc_dom *dom[2] = { atomic_load_explicit(&e->rd, RLX),
		                   atomic_load_explicit(&e->dd, RLX) };
	if (!dom[0] || !dom[1])
		return; /* a stable read never sees one without the other */
	for (int k = 0; k < 2; k++) {
		if (dom[k]->stamp != core->scan_stamp)
			scan_begin(core, dom[k]);
		fb_sum(&dom[k]->cs.tmp, &e->fb);
	}
}

/* The totals a lane no longer holds: folded by rebinds (a full spill ring)
 * and taken from the spill rings. */
static void scan_folded(struct mcc_dom *d)
{
	fb_sum(&d->cs.tmp, &d->fl);
	struct mcc_counters *t = &d->cs.tmp;
	const struct mcc_counters *x = &d->cs.spilled;
	t->admits += x->admits;
	t->completed_bytes += x->completed_bytes;
	t->completions += x->completions;
	t->lat_sum_ns += x->lat_sum_ns;
	t->lat_samples += x->lat_samples;
}

/*
 * core->lock held: cs.tmp* of every active domain and of every domain a
 * lane slot or pending pair names (those at rest are listed in
 * core->touched: the tick wakes the ones whose totals moved). O(lanes +
 * active), never a walk of the resting domains.
 */
bool mcc_scan_lanes(struct mcc_core *core)
{
	for (int attempt = 0; attempt < 8; attempt++) {
		bool stable = true;
		for (uint32_t i = 0; i < core->lanes_hi; i++) {
			struct mcc_lane *lane = core->lanes[i];
			if (!lane)
				continue;
			core->scan_seq[i] = atomic_load_explicit(&lane->seq, ACQ);
			if (core->scan_seq[i] & 1)
				stable = false;
		}
		/* inside the attempt: a rebind that moves counts from a slot to
		 * its ring during the scan changes the lane's seq, and the next
		 * attempt drains what it moved */
		mcc_spill_drain(core);
		if (++core->scan_stamp == 0)
			core->scan_stamp = 1;
		core->ntouched = 0;
		for (uint32_t i = 0; i < core->lanes_hi; i++) {
			struct mcc_lane *lane = core->lanes[i];
			if (!lane)
				continue;
			for (unsigned k = 0; k < MCC_LANE_SLOTS; k++) {
				struct mcc_dom *d = atomic_load_explicit(&lane->slots[k].dom, RLX);
				if (d)
					scan_add(core, d, &lane->slots[k]);
			}
			for (unsigned k = 0; k < MCC_LANE_PEND; k++)
				scan_pend(core, &lane->pend[k]);
		}
		for (int k = 0; k < 2; k++)
			for (struct mcc_dom *d = core->act[k]; d; d = d->anext) {
				if (d->stamp != core->scan_stamp) /* no lane names it */
					scan_begin(core, d);
				scan_folded(d);
			}
		for (uint32_t i = 0; i < core->ntouched; i++)
			scan_folded(core->touched[i]);
		atomic_thread_fence(ACQ);
		for (uint32_t i = 0; i < core->lanes_hi; i++)
			if (core->lanes[i] &&
			    atomic_load_explicit(&core->lanes[i]->seq, RLX) != core->scan_seq[i])
				stable = false;
		if (stable)
			return true; /* else a slot was being rebound: read again */
	}
	return false;
}

/* Whether no lane slot, pending pair, spill ring or wake stack entry names
 * `d` (core->lock held; nobody binds a closed domain anew: every call that
 * names a domain happens before its close). False when the lanes kept
 * rebinding through every attempt: the tick's sweep decides later. */
bool mcc_dom_unreferenced(struct mcc_core *core, const struct mcc_dom *d)
{
	for (int attempt = 0; attempt < 8; attempt++) {
		bool stable = true, found = false;
		for (uint32_t i = 0; i < core->lanes_hi; i++) {
			struct mcc_lane *lane = core->lanes[i];
			if (!lane)
				continue;
			core->scan_seq[i] = atomic_load_explicit(&lane->seq, ACQ);
			if (core->scan_seq[i] & 1)
				stable = false;
		}
		mcc_spill_drain(core); /* entries pushed before the snapshot */
		for (uint32_t i = 0; i < core->lanes_hi && !found; i++) {
			struct mcc_lane *lane = core->lanes[i];
			if (!lane)
				continue;
			found = atomic_load_explicit(&mcc_slot_of(lane, d)->dom, RLX) == d;
			for (unsigned k = 0; k < MCC_LANE_PEND; k++)
				found |= atomic_load_explicit(&lane->pend[k].rd, RLX) == d ||
				         atomic_load_explicit(&lane->pend[k].dd, RLX) == d;
		}
		atomic_thread_fence(ACQ);
		for (uint32_t i = 0; i < core->lanes_hi; i++)
			if (core->lanes[i] &&
			    atomic_load_explicit(&core->lanes[i]->seq, RLX) != core->scan_seq[i])
				stable = false;
		if (stable)
			return !found;
	}
	return false;
}

/* One domain's feedback totals and the credit lanes cache for it, without
 * a scan of every domain: its slot has a fixed offset in each lane, and so
 * has a route's pending pair (a device's may sit in any of a lane's few
 * entries). O(lanes), consistent under the lanes' seqlocks. */
void mcc_dom_sum(struct mcc_core *core, const struct mcc_dom *d, struct mcc_counters *t,
                 uint64_t *credit, uint64_t *stale)
{
	for (int attempt = 0; attempt < 8; attempt++) {
		bool stable = true;
		uint64_t c = 0, st = 0;
		memset(t, 0, sizeof(*t));
		uint32_t ep = mcc_ctl_epoch(atomic_load_explicit(&d->ctl, RLX));
		for (uint32_t i = 0; i < core->lanes_hi; i++) {
			struct mcc_lane *lane = core->lanes[i];
			if (!lane)
				continue;
			core->scan_seq[i] = atomic_load_explicit(&lane->seq, ACQ);
			if (core->scan_seq[i] & 1)
				stable = false;
			const struct mcc_slot *s = mcc_slot_of(lane, d);
			if (atomic_load_explicit(&s->dom, RLX) == d) {
				uint64_t v = atomic_load_explicit(&s->credit, RLX);
				c += v;
				if (v && atomic_load_explicit(&s->epoch, RLX) != ep)
					st += v;
				fb_sum(t, &s->fb);
			}
			/* a route's pair has a fixed offset too; a device's may be
			 * any of them */
			unsigned k0 = d->kind == MCC_DOM_ROUTE
			                  ? (unsigned)((d->pend_off - offsetof(struct mcc_lane, pend)) /
			                               sizeof(struct mcc_pend))
			                  : 0;
			unsigned k1 = d->kind == MCC_DOM_ROUTE ? k0 + 1 : MCC_LANE_PEND;
			for (unsigned k = k0; k < k1; k++) {
				const struct mcc_pend *e = &lane->pend[k];
				const struct mcc_dom *rd = atomic_load_explicit(&e->rd, RLX);
				const struct mcc_dom *dd = atomic_load_explicit(&e->dd, RLX);
				if (rd && dd && (rd == d || dd == d))
					fb_sum(t, &e->fb);
			}
		}
		fb_sum(t, &d->fl);
		t->admits += d->cs.spilled.admits;
		t->completed_bytes += d->cs.spilled.completed_bytes;
		t->completions += d->cs.spilled.completions;
		t->lat_sum_ns += d->cs.spilled.lat_sum_ns;
		t->lat_samples += d->cs.spilled.lat_samples;
		atomic_thread_fence(ACQ);
		for (uint32_t i = 0; i < core->lanes_hi; i++)
			if (core->lanes[i] &&
			    atomic_load_explicit(&core->lanes[i]->seq, RLX) != core->scan_seq[i])
				stable = false;
		if (credit)
			*credit = c;
		if (stale)
			*stale = st;
		if (stable)
			return; /* else a slot was being rebound: read again */
	}
}

/* The epoch moved (window cut, state change): the cached credit is stale. */
static COLD void slot_restale(struct mcc_slot *s, struct mcc_dom *d, uint64_t ctl)
{
	slot_flush(s, d, ctl);
	atomic_store_explicit(&s->epoch, mcc_ctl_epoch(ctl), RLX);
}

static inline struct mcc_slot *lane_slot(struct mcc_lane *lane, struct mcc_dom *d, uint64_t ctl)
{
	struct mcc_slot *s = mcc_slot_of(lane, d);
	if (UNLIKELY(atomic_load_explicit(&s->dom, RLX) != d))
		slot_rebind(lane, s, d);
	if (UNLIKELY(atomic_load_explicit(&s->epoch, RLX) != mcc_ctl_epoch(ctl)))
		slot_restale(s, d, ctl);
	return s;
}

void mcc_lane_flush_all(struct mcc_lane *lane)
{
	uint32_t seq = atomic_load_explicit(&lane->seq, RLX);
	atomic_store_explicit(&lane->seq, seq + 1, RLX); /* seqlock: write begins */
	atomic_thread_fence(REL);
	for (unsigned i = 0; i < MCC_LANE_PEND; i++) /* the pairs first: into the ring */
		pend_fold(lane, &lane->pend[i]);
	atomic_store_explicit(&lane->seq, seq + 2, REL); /* write ends */
	for (unsigned i = 0; i < MCC_LANE_SLOTS; i++)
		if (atomic_load_explicit(&lane->slots[i].dom, RLX))
			slot_rebind(lane, &lane->slots[i], NULL);
}

/* ------------------------------------------------------------- reservation */

/*
 * Reserve `want` bytes if the effective in-flight (shared counter minus the
 * stale credit idle lanes still hold) stays within `bound`; with `rule`, also
 * when the domain holds nothing but the caller's own cached credit `own`
 * (the empty-domain rule: one complete slice larger than the window).
 */
static inline bool dom_reserve(struct mcc_dom *d, uint64_t want, uint64_t bound, uint64_t own,
                               bool rule)
{
	int64_t cur = atomic_load_explicit(&d->inflight, RLX);
	for (;;) {
		uint64_t stale = atomic_load_explicit(&d->stale_est, RLX);
		uint64_t u = cur > 0 ? (uint64_t)cur : 0;
		uint64_t eff = u > stale ? u - stale : 0;
		if (eff + want > bound && !(rule && eff <= own))
			return false;
		if (atomic_compare_exchange_weak_explicit(&d->inflight, &cur, cur + (int64_t)want, RLX,
		                                          RLX))
			return true;
	}
}

static NOINLINE bool credit_refill(struct mcc_slot *s, struct mcc_dom *d, uint64_t b, uint64_t c)
{
	uint64_t bound = atomic_load_explicit(&d->window, RLX);
	uint64_t need = b - c;
	uint64_t chunk = atomic_load_explicit(&d->chunk, RLX);
	if (chunk > need && dom_reserve(d, chunk, bound, c, false)) {
		atomic_store_explicit(&s->credit, c + chunk - b, RLX);
		return true;
	}
	if (dom_reserve(d, need, bound, c, true)) {
		atomic_store_explicit(&s->credit, 0, RLX);
		return true;
	}
	return false;
}

/* A paced domain (law.h "Pacing"): within its window (or the empty-domain
 * rule) and within the bytes its pace has earned, taken on admission. */
static COLD bool pace_take(struct mcc_dom *d, uint64_t b)
{
	int64_t tok = atomic_load_explicit(&d->pace_tokens, RLX);
	do {
		if (tok < (int64_t)b)
			return false;
	} while (!atomic_compare_exchange_weak_explicit(&d->pace_tokens, &tok, tok - (int64_t)b, RLX,
	                                                RLX));
	if (dom_reserve(d, b, atomic_load_explicit(&d->window, RLX), 0, true))
		return true;
	atomic_fetch_add_explicit(&d->pace_tokens, (int64_t)b, RLX);
	return false;
}

/* Admit `b` bytes in `d` (control word `ctl` as loaded by the caller). */
static inline bool dom_take(struct mcc_lane *lane, struct mcc_dom *d, uint64_t ctl, uint64_t b)
{
	struct mcc_slot *s = lane_slot(lane, d, ctl);
	if (LIKELY(!(ctl & MCC_CTL_EXACT))) {
		uint64_t c = atomic_load_explicit(&s->credit, RLX);
		if (LIKELY(c >= b)) {
			atomic_store_explicit(&s->credit, c - b, RLX);
			return true;
		}
		return credit_refill(s, d, b, c);
	}
	if (UNLIKELY(atomic_load_explicit(&d->paced, RLX)))
		return pace_take(d, b);
	uint64_t bound = mcc_ctl_state(ctl) == MCC_PATH_PROBING
	                     ? atomic_load_explicit(&d->probe_bound, RLX)
	                     : atomic_load_explicit(&d->window, RLX);
	return dom_reserve(d, b, bound, 0, true);
}

/* Return `b` settled bytes of `d`; returns the control word seen. */
static inline uint64_t dom_give(struct mcc_lane *lane, struct mcc_dom *d, uint64_t b)
{
	uint64_t ctl = atomic_load_explicit(&d->ctl, ACQ);
	struct mcc_slot *s = lane_slot(lane, d, ctl);
	if (LIKELY(!(ctl & MCC_CTL_EXACT))) {
		uint64_t c = atomic_load_explicit(&s->credit, RLX) + b;
		uint64_t chunk = atomic_load_explicit(&d->chunk, RLX);
		if (UNLIKELY(c > chunk)) {
			/* over a chunk: flush down to half a chunk, so a lane that
			 * only settles (TE's poller) pays one shared RMW per half
			 * chunk of completions, not one per completion */
			atomic_fetch_sub_explicit(&d->inflight, (int64_t)(c - chunk / 2), RLX);
			c = chunk / 2;
		}
		atomic_store_explicit(&s->credit, c, RLX);
	} else {
		atomic_fetch_sub_explicit(&d->inflight, (int64_t)b, RLX);
	}
	return ctl;
}

/* ---------------------------------------------------------------- evidence */

static uint64_t cooldown_left_hot(const struct mcc_core *core, const struct mcc_dom *d)
{
	uint64_t until = atomic_load_explicit(&d->q_until_ns, RLX);
	uint64_t now = atomic_load_explicit(&core->now_ns, RLX);
	return until > now ? (until - now + 999999) / 1000000 : 0;
}

/* Fill an evidence record from hot-path facts (no clock: the observation
 * time is the completion timestamp when sampled, else the last tick). */
static void ev_fill(struct mcc_lane *lane, struct mcc_ev *e, const struct mcc_task_ref_v1 *task,
                    uint32_t reason, uint32_t scope, const struct mcc_route *r,
                    const struct mcc_dom *obs, uint32_t generation, uint64_t ts)
{
	struct mcc_core *core = lane->core;
	uint32_t st = mcc_ctl_state(atomic_load_explicit(&obs->ctl, RLX));
	memset(e, 0, sizeof(*e));
	e->kind = MCC_EVK_ANOMALY;
	e->batch_id = task->batch_id;
	e->task_id = task->task_id;
	e->attempt = task->attempt;
	e->generation = generation;
	e->reason = (uint8_t)reason;
	e->scope = (uint8_t)scope;
	e->path_state = (uint8_t)st;
	e->route_id = r->route_id;
	e->name_idx = r->name_idx;
	e->observed_ns = ts ? ts : atomic_load_explicit(&core->now_ns, RLX);
	e->window = atomic_load_explicit(&obs->window, RLX);
	e->inflight = mcc_dom_inflight_admission(obs);
	e->observed = MCC_OBS_REASON | MCC_OBS_PATH | MCC_OBS_TIME | MCC_OBS_GENERATION |
	              MCC_OBS_WINDOW | MCC_OBS_INFLIGHT;
	if (scope != MCC_SCOPE_NONE)
		e->observed |= MCC_OBS_SCOPE;
	if (st == MCC_PATH_QUARANTINED) {
		e->cooldown_ms = cooldown_left_hot(core, obs);
		e->observed |= MCC_OBS_COOLDOWN;
	}
}

static void rec_put(struct mcc_core *core, uint32_t kind, uint32_t cls, uint32_t scope,
                    uint32_t reason, const struct mcc_route *r, const struct mcc_device *dv,
                    uint32_t from, uint32_t to, uint32_t generation, uint64_t bytes, uint64_t ts,
                    const struct mcc_completion_v1 *wc, uint32_t code)
{
	struct mcc_rec_entry e = { 0 };
	e.ts = ts ? ts : atomic_load_explicit(&core->now_ns, RLX);
	e.kind = (uint8_t)kind;
	e.cls = (uint8_t)cls;
	e.scope = (uint8_t)scope;
	e.reason = (uint8_t)reason;
	e.from = (uint8_t)from;
	e.to = (uint8_t)to;
	e.flags = MCC_RECF_STATES;
	e.generation = generation;
	e.bytes = bytes;
	e.code = code;
	if (r) {
		e.route_id = r->route_id;
		e.flags |= MCC_RECF_ROUTE;
	}
	if (dv) {
		e.device_id = dv->device_id;
		e.flags |= MCC_RECF_DEVICE;
	}
	if (wc) {
		e.wc_status = wc->wc_status;
		e.vendor_err = wc->vendor_err;
		e.flags |= MCC_RECF_WC;
	}
	mcc_rec_put(core->rec, &e);
}

/* ---------------------------------------------------------------- lanes */

int mcc_core_lane_open(void *ctx, const struct mcc_lane_desc_v1 *desc, mcc_lane **out)
{
	struct mcc_core *core = ctx;
	if (!core || !desc || !out || desc->struct_size < MCC_LANE_DESC_V1_0_SIZE)
		return -EINVAL;
	if (desc->lane_id >= core->max_lanes) {
		mcc_log(core, MCC_LOG_ERROR,
		        "mcc: lane id %u refused: this instance holds lanes 0..%u (the host "
		        "table's max_lanes%s)",
		        desc->lane_id, core->max_lanes - 1,
		        core->max_lanes == MCC_MAX_LANES_CAP ? ", at the core's cap" : "");
		return -EINVAL;
	}
	_Static_assert(sizeof(struct mcc_slot) == MCC_LINE, "one slot per cache line");
	pthread_mutex_lock(&core->lock);
	if (core->lanes[desc->lane_id]) {
		pthread_mutex_unlock(&core->lock);
		return -EBUSY;
	}
	/* one lane's memory per id, kept after close (a closed handle reads
	 * closed, never freed memory) and reused when the id opens again */
	struct mcc_lane *lane = core->lane_mem[desc->lane_id];
	if (!lane)
		lane = aligned_alloc(MCC_LINE,
		                     (sizeof(*lane) + MCC_LINE - 1) & ~(size_t)(MCC_LINE - 1));
	if (!lane) {
		pthread_mutex_unlock(&core->lock);
		return -ENOMEM;
	}
	core->lane_mem[desc->lane_id] = lane;
	memset(lane, 0, sizeof(*lane));
	if (mcc_ev_ring_init(&lane->ring) != 0 || mcc_spill_init(&lane->spill) != 0) {
		mcc_ev_ring_fini(&lane->ring);
		atomic_store_explicit(&lane->closed, 1, RLX);
		pthread_mutex_unlock(&core->lock);
		return -ENOMEM;
	}
	lane->core = core;
	lane->id = desc->lane_id;
	lane->role = desc->role;
	core->lanes[desc->lane_id] = lane;
	if (desc->lane_id >= core->lanes_hi)
		core->lanes_hi = desc->lane_id + 1;
	atomic_fetch_add_explicit(&core->lanes_open, 1, RLX);
	pthread_mutex_unlock(&core->lock);
	*out = lane;
	return 0;
}

void mcc_core_lane_close(void *ctx, mcc_lane *lane)
{
	struct mcc_core *core = ctx;
	if (!core || !lane)
		return;
	pthread_mutex_lock(&core->lock);
	if (atomic_load_explicit(&lane->closed, RLX) || lane->id >= core->max_lanes ||
	    core->lane_mem[lane->id] != lane) {
		pthread_mutex_unlock(&core->lock); /* closed twice, or not a lane of ours */
		return;
	}
	mcc_ev_drain(core); /* the ring dies with the lane */
	mcc_lane_flush_all(lane);
	mcc_spill_drain(core); /* so does the spill ring the flush filled */
	if (core->lanes[lane->id] == lane) {
		core->lanes[lane->id] = NULL;
		atomic_fetch_sub_explicit(&core->lanes_open, 1, RLX);
		while (core->lanes_hi && !core->lanes[core->lanes_hi - 1])
			core->lanes_hi--;
	}
	mcc_ev_ring_fini(&lane->ring); /* under the lock: a reopen of the id waits */
	mcc_spill_fini(&lane->spill);
	atomic_store_explicit(&lane->closed, 1, RLX);
	pthread_mutex_unlock(&core->lock);
}

/* -------------------------------------------------------------- admission */

static COLD int refuse(struct mcc_lane *lane, struct mcc_route *r, struct mcc_device *dv,
                       struct mcc_dom *by, int decision, uint64_t bytes, uint32_t generation,
                       const struct mcc_task_ref_v1 *task, struct mcc_permit_v1 *p)
{
	struct mcc_core *core = lane->core;
	struct mcc_cls c = mcc_classify(MCC_SRC_DECISION, decision, 0);
	uint32_t scope = by->kind == MCC_DOM_DEVICE ? MCC_SCOPE_DEVICE : MCC_SCOPE_ROUTE;
	uint32_t st = mcc_ctl_state(atomic_load_explicit(&by->ctl, RLX));

	if (lane->qos_cls) /* a try_acquire_qos call (qos.c) */
		atomic_fetch_add_explicit(&by->qos_refused[lane->qos_cls - 1], 1, RLX);

	if (core->mode == MCC_MODE_OBSERVE) {
		atomic_fetch_add_explicit(decision == MCC_DEFER ? &by->would_defer : &by->would_avoid,
		                          1, RLX);
		rec_put(core, MCC_REC_DECISION, c.cls, scope, c.reason, r, dv, st, st, generation,
		        bytes, 0, NULL, (uint32_t)decision);
		return decision;
	}
	atomic_fetch_add_explicit(decision == MCC_DEFER ? &by->defers : &by->avoids, 1, RLX);
	if (mcc_task_is_set(task)) {
		struct mcc_ev e;
		ev_fill(lane, &e, task, c.reason, scope, r, by, generation, 0);
		mcc_ev_lane_anomaly(lane, &e);
	}
	/* a refused permit is dead and names no domain (mcc_policy_v1.h): a
	 * fast path may have filled it before declining; `task` may point
	 * into it, so this comes last */
	*p = (struct mcc_permit_v1){ .struct_size = p->struct_size, .reason = c.reason };
	return decision;
}

int mcc_core_refuse(struct mcc_lane *lane, struct mcc_route *r, struct mcc_device *dv,
                    struct mcc_dom *by, int decision, uint64_t bytes, uint32_t generation,
                    const struct mcc_task_ref_v1 *task, struct mcc_permit_v1 *p)
{
	return refuse(lane, r, dv, by, decision, bytes, generation, task, p);
}

/* Fill a permit admitted on (r, dv). */
static inline void permit_fill(struct mcc_permit_v1 *p, struct mcc_route *r, struct mcc_device *dv,
                               uint64_t bytes, uint32_t generation,
                               const struct mcc_task_ref_v1 *task)
{
	p->flags = MCC_PERMIT_F_LIVE;
	p->route = r;
	p->device = dv;
	p->bytes = bytes;
	p->generation = generation;
	p->reason = 0;
	mcc_task_set(&p->task, task);
}

/* The general admission path: any state, exact or credit mode, cache misses,
 * stale epochs, refills, generation and slice-size bookkeeping. */
NOINLINE int mcc_core_acquire_general(struct mcc_lane *lane, struct mcc_route *r, uint64_t bytes,
                                      uint32_t generation, const struct mcc_task_ref_v1 *task,
                                      struct mcc_permit_v1 *p)
{
	struct mcc_device *dv = atomic_load_explicit(&r->dev, ACQ);
	struct mcc_dom *rd = &r->d, *dd = &dv->d;
	uint64_t rctl = atomic_load_explicit(&rd->ctl, ACQ);
	uint64_t dctl = atomic_load_explicit(&dd->ctl, ACQ);
	uint32_t rs = mcc_ctl_state(rctl), ds = mcc_ctl_state(dctl);
	uint32_t flags = MCC_PERMIT_F_LIVE;

	if (UNLIKELY(generation > atomic_load_explicit(&rd->generation, RLX)))
		mcc_raise_u32(&rd->generation, generation);
	if (UNLIKELY(bytes > atomic_load_explicit(&rd->max_slice, RLX))) {
		mcc_raise_u64(&rd->max_slice, bytes);
		mcc_raise_u64(&dd->max_slice, bytes);
	}

	if (UNLIKELY(rs >= MCC_PATH_QUARANTINED || ds >= MCC_PATH_QUARANTINED)) {
		/* QUARANTINED: avoid; PROBING: only a bounded probe on a new generation */
		struct mcc_dom *q = NULL;
		if (ds == MCC_PATH_QUARANTINED)
			q = dd;
		else if (rs == MCC_PATH_QUARANTINED ||
		         (rs == MCC_PATH_PROBING &&
		          generation <= atomic_load_explicit(&rd->q_generation, RLX)))
			q = rd;
		if (q) {
			int d = refuse(lane, r, dv, q, MCC_AVOID, bytes, generation, task, p);
			if (d != MCC_AVOID || lane->core->mode != MCC_MODE_OBSERVE)
				return d;
			atomic_fetch_add_explicit(&dd->inflight, (int64_t)bytes, RLX);
			atomic_fetch_add_explicit(&rd->inflight, (int64_t)bytes, RLX);
			flags |= MCC_PERMIT_F_OBSERVED;
			goto admitted;
		}
		flags |= MCC_PERMIT_F_PROBE;
	}

	bool dok = dom_take(lane, dd, dctl, bytes);
	bool rok = dok && dom_take(lane, rd, rctl, bytes);
	if (UNLIKELY(!rok)) {
		struct mcc_dom *by = dok ? rd : dd;
		/* over a PROBING domain's probe budget: the path is still
		 * unproven (recovery evidence, RFC: LONG_UNAVAILABLE), so use the
		 * alternate rail rather than wait out a probe that may take a
		 * full QP timeout; over a window: defer */
		int dec = mcc_ctl_state(dok ? rctl : dctl) == MCC_PATH_PROBING ? MCC_AVOID
		                                                               : MCC_DEFER;
		if (lane->core->mode != MCC_MODE_OBSERVE) {
			if (dok) /* roll back the first reservation */
				dom_give(lane, dd, bytes);
			return refuse(lane, r, dv, by, dec, bytes, generation, task, p);
		}
		refuse(lane, r, dv, by, dec, bytes, generation, task, p);
		if (!dok)
			atomic_fetch_add_explicit(&dd->inflight, (int64_t)bytes, RLX);
		atomic_fetch_add_explicit(&rd->inflight, (int64_t)bytes, RLX);
		/* observe keeps PROBE on new-generation slices beyond the probe
		 * budget: its in-flight includes traffic enforce would have avoided,
		 * so the budget alone would never let a probe through */
		flags |= MCC_PERMIT_F_OBSERVED;
	}

admitted:
	mcc_ctr_add(&lane_slot(lane, dd, atomic_load_explicit(&dd->ctl, ACQ))->fb.admits, 1);
	mcc_ctr_add(&lane_slot(lane, rd, atomic_load_explicit(&rd->ctl, ACQ))->fb.admits, 1);
	if (UNLIKELY(flags & MCC_PERMIT_F_PROBE)) {
		if (rs == MCC_PATH_PROBING)
			atomic_fetch_add_explicit(&rd->probes, 1, RLX);
		if (ds == MCC_PATH_PROBING)
			atomic_fetch_add_explicit(&dd->probes, 1, RLX);
	}
	permit_fill(p, r, dv, bytes, generation, task);
	p->flags = flags;
	return MCC_ADMIT;
}

/* ------------------------------------------------------------- settlement */

static COLD void count_double(struct mcc_permit_v1 *p)
{
	if (p->route)
		atomic_fetch_add_explicit(&p->route->d.double_release, 1, RLX);
	if (p->device)
		atomic_fetch_add_explicit(&p->device->d.double_release, 1, RLX);
}

NOINLINE int mcc_core_release_general(struct mcc_lane *lane, struct mcc_permit_v1 *p, uint64_t bytes,
                                      uint32_t reason)
{
	uint64_t live = (p->flags & MCC_PERMIT_F_LIVE) ? p->bytes : 0;
	uint64_t n = bytes;
	int rc = 0;
	if (UNLIKELY(bytes > live)) {
		count_double(p);
		n = live;
		rc = -EALREADY;
	}
	if (LIKELY(n)) {
		dom_give(lane, &p->device->d, n);
		dom_give(lane, &p->route->d, n);
		p->bytes = live - n;
		if (!p->bytes)
			p->flags &= ~MCC_PERMIT_F_LIVE;
		if (UNLIKELY(reason != MCC_REL_NOT_POSTED)) {
			struct mcc_core *core = lane->core;
			struct mcc_cls c = mcc_classify(MCC_SRC_RELEASE, (int32_t)reason, 0);
			if (core->rec)
				rec_put(core, MCC_REC_RELEASE, c.cls, c.scope, c.reason, p->route,
				        p->device, MCC_PATH_HEALTHY, MCC_PATH_HEALTHY, p->generation, n, 0,
				        NULL, reason);
			if (c.reason != MCC_REASON_NONE && mcc_task_is_set(&p->task)) {
				struct mcc_ev e;
				ev_fill(lane, &e, &p->task, c.reason, c.scope, p->route, &p->route->d,
				        p->generation, 0);
				mcc_ev_lane_anomaly(lane, &e);
			}
		}
	}
	return rc;
}

static COLD void probe_success(struct mcc_permit_v1 *p, uint64_t rctl, uint64_t dctl)
{
	if (mcc_ctl_state(rctl) == MCC_PATH_PROBING)
		atomic_fetch_add_explicit(&p->route->d.probe_ok, 1, RLX);
	if (mcc_ctl_state(dctl) == MCC_PATH_PROBING)
		atomic_fetch_add_explicit(&p->device->d.probe_ok, 1, RLX);
}

static COLD void congestion_feedback(struct mcc_lane *lane, struct mcc_permit_v1 *p, uint64_t rctl,
                                     uint32_t generation, uint64_t ts)
{
	struct mcc_core *core = lane->core;
	uint64_t ep = atomic_load_explicit(&core->epoch_no, RLX);
	if (lane->cf_epoch == ep && lane->cf_batch == p->task.batch_id &&
	    lane->cf_task == p->task.task_id)
		return;
	lane->cf_epoch = ep;
	lane->cf_batch = p->task.batch_id;
	lane->cf_task = p->task.task_id;
	struct mcc_dom *obs = mcc_ctl_state(rctl) == MCC_PATH_CONGESTED ? &p->route->d
	                                                                 : &p->device->d;
	struct mcc_ev e;
	ev_fill(lane, &e, &p->task, MCC_REASON_CONGESTION_FEEDBACK,
	        obs->kind == MCC_DOM_DEVICE ? MCC_SCOPE_DEVICE : MCC_SCOPE_ROUTE, p->route, obs,
	        generation, ts);
	mcc_ev_lane_anomaly(lane, &e);
}

static COLD void error_feedback(struct mcc_lane *lane, struct mcc_permit_v1 *p,
                                const struct mcc_completion_v1 *wc, uint64_t rctl, uint64_t dctl,
                                uint32_t gen, uint64_t n)
{
	struct mcc_core *core = lane->core;
	struct mcc_route *r = p->route;
	struct mcc_cls c = mcc_classify_wc(wc->wc_status);
	uint32_t rs = mcc_ctl_state(rctl);
	uint32_t reason = c.reason;

	atomic_fetch_add_explicit(&r->d.errors, 1, RLX);
	atomic_fetch_add_explicit(&p->device->d.errors, 1, RLX);
	if (c.flags & MCC_CLS_F_HARD) {
		uint32_t meta = atomic_load_explicit(&r->d.meta_stale_gen, RLX);
		if (rs == MCC_PATH_QUARANTINED) {
			/* already isolated: not counted again */
		} else if (c.cls == MCC_CLASS_ROUTE_TIMEOUT && meta && gen <= meta) {
			/* stale metadata not yet refreshed: escalate only once the
			 * refreshed generation still times out */
			reason = MCC_REASON_REMOTE_METADATA;
		} else if (p->flags & MCC_PERMIT_F_PROBE) {
			mcc_raise_u32(&r->d.err_gen, gen);
			if (rs == MCC_PATH_PROBING)
				atomic_fetch_add_explicit(&r->d.probe_fail, 1, RLX);
			if (mcc_ctl_state(dctl) == MCC_PATH_PROBING)
				atomic_fetch_add_explicit(&p->device->d.probe_fail, 1, RLX);
			reason = MCC_REASON_PROBE_FAILED;
		} else {
			/* QP/route scope: never the device (vendor_err never widens) */
			mcc_raise_u32(&r->d.err_gen, gen);
			atomic_fetch_add_explicit(&r->d.hard_pending, 1, RLX);
		}
	}
	if (c.flags & MCC_CLS_F_PRESSURE)
		atomic_fetch_add_explicit(&r->d.rnr_pending, 1, RLX);
	if (c.cls == MCC_CLASS_REMOTE_METADATA)
		mcc_raise_u32(&r->d.meta_stale_gen, gen);

	if (core->rec) {
		bool burst = c.cls == MCC_CLASS_DERIVED_FLUSH && lane->fl_route == r->route_id &&
		             lane->fl_gen == gen &&
		             lane->fl_epoch == atomic_load_explicit(&core->epoch_no, RLX);
		if (c.cls == MCC_CLASS_DERIVED_FLUSH) {
			lane->fl_route = r->route_id;
			lane->fl_gen = gen;
			lane->fl_epoch = atomic_load_explicit(&core->epoch_no, RLX);
		}
		if (!burst) /* a flush burst is recorded once */
			rec_put(core, MCC_REC_WC, c.cls, c.scope, reason, r, p->device, rs, rs, gen, n,
			        wc->complete_ns, wc, (uint32_t)wc->wc_status);
	}
	if (reason != MCC_REASON_NONE && mcc_task_is_set(&p->task)) {
		struct mcc_ev e;
		ev_fill(lane, &e, &p->task, reason, c.scope, r, &r->d, gen, wc->complete_ns);
		e.wc_status = wc->wc_status;
		e.vendor_err = wc->vendor_err;
		e.observed |= MCC_OBS_WC;
		mcc_ev_lane_anomaly(lane, &e);
	}
}

/* Some task holds evidence or has some pending: successes are checked. */
static inline bool ev_active(const struct mcc_lane *lane)
{
	return atomic_load_explicit(&lane->core->ev_active, RLX) != 0;
}

/* Either domain CONGESTED (credit mode implies HEALTHY). */
static inline bool ctl_congested(uint64_t rctl, uint64_t dctl)
{
	return mcc_ctl_state(rctl) == MCC_PATH_CONGESTED || mcc_ctl_state(dctl) == MCC_PATH_CONGESTED;
}

/* The tail of a successful completion while some task holds evidence or a
 * domain is CONGESTED (every path's, the fast ones in a cold call): the
 * success record (it may resolve the task's older evidence), then the
 * congestion evidence (states as of now: a tick in between moves the
 * evidence to the next completion, as if this one were polled later). */
static COLD void completion_evidence(struct mcc_lane *lane, struct mcc_permit_v1 *p,
                                     const struct mcc_completion_v1 *wc)
{
	uint32_t gen = wc->generation ? wc->generation : p->generation;
	if (ev_active(lane))
		mcc_ev_success(lane, &p->task, gen);
	uint64_t rctl = atomic_load_explicit(&p->route->d.ctl, RLX);
	if (ctl_congested(rctl, atomic_load_explicit(&p->device->d.ctl, RLX)) &&
	    mcc_task_is_set(&p->task))
		congestion_feedback(lane, p, rctl, gen, wc->complete_ns);
}

/* The WC when completion_evidence() has work, else NULL. */
static inline const struct mcc_completion_v1 *evidence_of(struct mcc_lane *lane,
                                                       const struct mcc_completion_v1 *wc,
                                                       uint64_t rctl, uint64_t dctl)
{
	return ctl_congested(rctl, dctl) || ev_active(lane) ? wc : NULL;
}

NOINLINE void mcc_core_completion_general(struct mcc_lane *lane, struct mcc_permit_v1 *p,
                                          const struct mcc_completion_v1 *wc)
{
	if (UNLIKELY(!p->route || !p->device))
		return;
	uint64_t live = (p->flags & MCC_PERMIT_F_LIVE) ? p->bytes : 0;
	if (UNLIKELY(!live)) {
		count_double(p); /* a settled permit: harmless, counted */
		return;
	}
	uint64_t n = wc->bytes ? wc->bytes : live;
	if (UNLIKELY(n > live)) {
		count_double(p);
		n = live;
	}
	struct mcc_route *r = p->route;
	struct mcc_device *dv = p->device;
	uint64_t dctl = dom_give(lane, &dv->d, n);
	uint64_t rctl = dom_give(lane, &r->d, n);
	p->bytes = live - n;
	if (!p->bytes)
		p->flags &= ~MCC_PERMIT_F_LIVE;

	uint32_t gen = wc->generation ? wc->generation : p->generation;
	if (UNLIKELY(gen < atomic_load_explicit(&r->d.generation, RLX))) {
		/* late feedback of an old endpoint: accounting only */
		atomic_fetch_add_explicit(&r->d.stale_feedback, 1, RLX);
		return;
	}
	if (UNLIKELY(wc->wc_status != 0)) {
		error_feedback(lane, p, wc, rctl, dctl, gen, n);
		return;
	}
	struct mcc_slot *ld = lane_slot(lane, &dv->d, dctl), *lr = lane_slot(lane, &r->d, rctl);
	uint64_t lat = wc_latency(wc);
	fb_completion(&ld->fb, n, lat);
	fb_completion(&lr->fb, n, lat);
	if (UNLIKELY(p->flags & MCC_PERMIT_F_PROBE))
		probe_success(p, rctl, dctl);
	if (UNLIKELY(evidence_of(lane, wc, rctl, dctl) != NULL))
		completion_evidence(lane, p, wc);
}

/* ---------------------------------------------------------------- fast path */

/*
 * The common cases (anything else takes the general path, which is correct
 * for every case):
 *
 * - credit: both domains HEALTHY in credit mode (control word low nibble
 *   zero), the lane slots of both bound to them at the current credit epoch,
 *   and enough cached credit (admission) or room under the chunk
 *   (settlement). No atomic read-modify-write, no shared-line write.
 * - exact: both domains in exact mode, neither QUARANTINED nor PROBING
 *   (admission; settlement takes any state): one locked add per domain,
 *   tested on the value it returned, and the feedback counted in the lane's
 *   pending pair (core.h struct mcc_pend).
 * - mixed: one domain exact as above, the other HEALTHY in credit mode as
 *   above (the usual CONGESTED route on a busy, healthy device): one locked
 *   add, the lane slot for the other, the feedback in the pending pair.
 *
 * Locked operations do not overlap each other nor much of what lies between
 * them, so in exact mode every instruction, spill and saved register around
 * them adds to the pair (measured with tests/bench): each entry point only
 * checks and dispatches by tail call, each mode's function keeps its few
 * live values in caller-saved registers and reaches its slow cases (a
 * pending-pair miss, a refusal) through cold functions.
 */
static inline bool slots_bound(struct mcc_lane *lane, struct mcc_dom *rd, struct mcc_dom *dd,
                               uint64_t rctl, uint64_t dctl, struct mcc_slot **rs,
                               struct mcc_slot **ds)
{
	*rs = mcc_slot_of(lane, rd);
	*ds = mcc_slot_of(lane, dd);
	return atomic_load_explicit(&(*rs)->dom, RLX) == rd &&
	       atomic_load_explicit(&(*ds)->dom, RLX) == dd &&
	       atomic_load_explicit(&(*rs)->epoch, RLX) == mcc_ctl_epoch(rctl) &&
	       atomic_load_explicit(&(*ds)->epoch, RLX) == mcc_ctl_epoch(dctl);
}

/* dom_reserve's test on the in-flight value `old` a locked add of `want`
 * found: within the bound (mcc_dom_set_limit), or the domain held nothing
 * but stale credit (the empty-domain rule, read only when the first fails). */
static inline bool exact_fits(const struct mcc_dom *d, int64_t old, uint64_t want, uint64_t limit)
{
	return LIKELY(old + (int64_t)want <= (int64_t)limit) ||
	       ((old > 0 ? (uint64_t)old : 0) <= atomic_load_explicit(&d->stale_est, RLX) &&
	        mcc_pace_pass(d));
}

static inline struct mcc_pend *pend_of(struct mcc_lane *lane, const struct mcc_dom *rd)
{
	return (struct mcc_pend *)(void *)((char *)lane + rd->pend_off);
}

/* The lane's pending pair for (rd, dd), or NULL when its direct-mapped
 * entry holds another pair. */
static inline struct mcc_pend *pend_hit(struct mcc_lane *lane, const struct mcc_dom *rd,
                                        const struct mcc_dom *dd)
{
	struct mcc_pend *e = pend_of(lane, rd);
	return atomic_load_explicit(&e->rd, RLX) == rd && atomic_load_explicit(&e->dd, RLX) == dd
	           ? e
	           : NULL;
}

/* Point the entry of (rd, dd) at that pair with the counts `c`, its
 * previous pair's counts moved out (pend_out): one seqlock section, the
 * new counts stored, not zeroed and then added. The slots of rd and dd
 * stay as they are. */
static NOINLINE void pend_retarget(struct mcc_lane *lane, struct mcc_dom *rd, struct mcc_dom *dd,
                                   const struct mcc_counters *c)
{
	struct mcc_pend *e = pend_of(lane, rd);
	uint32_t seq = atomic_load_explicit(&lane->seq, RLX);
	atomic_store_explicit(&lane->seq, seq + 1, RLX); /* seqlock: write begins */
	atomic_thread_fence(REL);
	pend_out(lane, e);
	atomic_store_explicit(&e->fb.admits, c->admits, RLX);
	atomic_store_explicit(&e->fb.completed_bytes, c->completed_bytes, RLX);
	atomic_store_explicit(&e->fb.completions, c->completions, RLX);
	atomic_store_explicit(&e->fb.lat_sum_ns, c->lat_sum_ns, RLX);
	atomic_store_explicit(&e->fb.lat_samples, c->lat_samples, RLX);
	atomic_store_explicit(&e->rd, rd, RLX);
	atomic_store_explicit(&e->dd, dd, RLX);
	atomic_store_explicit(&lane->seq, seq + 2, REL); /* write ends */
}

/* An admission counted in the lane's pending pair for (rd, dd): `e` when
 * it holds that pair, else the entry retargeted with this admission. */
static inline void pend_admit(struct mcc_lane *lane, struct mcc_pend *e, struct mcc_dom *rd,
                              struct mcc_dom *dd)
{
	static const struct mcc_counters one = { 1, 0, 0, 0, 0 };
	if (LIKELY(e != NULL))
		mcc_ctr_add(&e->fb.admits, 1);
	else
		pend_retarget(lane, rd, dd, &one);
}

static inline void permit_settled(struct mcc_permit_v1 *p, uint64_t n)
{
	p->bytes -= n;
	if (!p->bytes)
		p->flags &= ~MCC_PERMIT_F_LIVE;
}

/* The general path after a fast path declined a filled permit. */
static COLD int acquire_declined(struct mcc_lane *lane, struct mcc_permit_v1 *p)
{
	p->flags = 0;
	return mcc_core_acquire_general(lane, p->route, p->bytes, p->generation, &p->task, p);
}

/* Admission from cached credit, the permit already filled. */
static NOINLINE int credit_acquire(struct mcc_lane *lane, struct mcc_permit_v1 *p, uint64_t rctl,
                                   uint64_t dctl)
{
	struct mcc_dom *rd = &p->route->d, *dd = &p->device->d;
	uint64_t b = p->bytes;
	struct mcc_slot *rs, *ds;
	if (LIKELY(slots_bound(lane, rd, dd, rctl, dctl, &rs, &ds))) {
		uint64_t rc = atomic_load_explicit(&rs->credit, RLX);
		uint64_t dc = atomic_load_explicit(&ds->credit, RLX);
		if (LIKELY(rc >= b && dc >= b)) {
			atomic_store_explicit(&rs->credit, rc - b, RLX);
			atomic_store_explicit(&ds->credit, dc - b, RLX);
			mcc_ctr_add(&ds->fb.admits, 1);
			mcc_ctr_add(&rs->fb.admits, 1);
			return MCC_ADMIT;
		}
	}
	return acquire_declined(lane, p);
}

/*
 * Exact admission, the permit already filled: the device, then the route,
 * each a locked add tested on the value it returned (the bound is never
 * exceeded). A failed test takes both back and lets the general path decide
 * again with a compare-and-swap (dom_reserve), which also covers the race
 * where another attempt's bytes, added and about to be taken back, made
 * this one's test fail. A lane whose pending pair holds another pair
 * retargets it after the admission (pend_admit), no second pass.
 */
static NOINLINE int exact_acquire(struct mcc_lane *lane, struct mcc_permit_v1 *p, struct mcc_dom *rd,
                                  struct mcc_dom *dd, uint64_t b)
{
	struct mcc_pend *e = pend_hit(lane, rd, dd);
	uint64_t dlim = atomic_load_explicit(&dd->limit, RLX);
	int64_t old = atomic_fetch_add_explicit(&dd->inflight, (int64_t)b, RLX);
	if (UNLIKELY(!exact_fits(dd, old, b, dlim))) {
		atomic_fetch_sub_explicit(&dd->inflight, (int64_t)b, RLX);
		return acquire_declined(lane, p);
	}
	uint64_t rlim = atomic_load_explicit(&rd->limit, RLX);
	old = atomic_fetch_add_explicit(&rd->inflight, (int64_t)b, RLX);
	if (UNLIKELY(!exact_fits(rd, old, b, rlim))) {
		atomic_fetch_sub_explicit(&rd->inflight, (int64_t)b, RLX);
		atomic_fetch_sub_explicit(&dd->inflight, (int64_t)b, RLX);
		return acquire_declined(lane, p);
	}
	pend_admit(lane, e, rd, dd);
	return MCC_ADMIT;
}

/* Credit mode and HEALTHY (low nibble 0), or mcc_ctl_exact_admits(). */
static inline bool ctl_fast_admits(uint64_t ctl)
{
	return !(ctl & MCC_CTL_SLOWPATH) || mcc_ctl_exact_admits(ctl);
}

/* The lane slot of credit-mode domain `d` when bound to it at the epoch of
 * `ctl`, else NULL. */
static inline struct mcc_slot *slot_bound(struct mcc_lane *lane, struct mcc_dom *d, uint64_t ctl)
{
	struct mcc_slot *s = mcc_slot_of(lane, d);
	return atomic_load_explicit(&s->dom, RLX) == d &&
	               atomic_load_explicit(&s->epoch, RLX) == mcc_ctl_epoch(ctl)
	           ? s
	           : NULL;
}

/* The two domains of a mixed-mode permit: `rx`, the route is the exact one. */
static inline struct mcc_dom *mixed_exact(const struct mcc_permit_v1 *p, bool rx)
{
	return rx ? &p->route->d : &p->device->d;
}

static inline struct mcc_dom *mixed_credit(const struct mcc_permit_v1 *p, bool rx)
{
	return rx ? &p->device->d : &p->route->d;
}

/* The exact domain's test failed: give both reservations back, let the
 * general path decide again. */
static COLD int mixed_acquire_undo(struct mcc_lane *lane, struct mcc_permit_v1 *p, bool rx)
{
	atomic_fetch_sub_explicit(&mixed_exact(p, rx)->inflight, (int64_t)p->bytes, RLX);
	struct mcc_slot *s = mcc_slot_of(lane, mixed_credit(p, rx));
	atomic_store_explicit(&s->credit, atomic_load_explicit(&s->credit, RLX) + p->bytes, RLX);
	return acquire_declined(lane, p);
}

/*
 * Mixed admission, the permit already filled: `b` bytes from the lane's
 * credit of the credit-mode domain, then a tested locked add on the exact
 * one.
 */
static NOINLINE int mixed_acquire(struct mcc_lane *lane, struct mcc_permit_v1 *p, uint64_t rctl,
                                  uint64_t dctl)
{
	struct mcc_pend *e = pend_hit(lane, &p->route->d, &p->device->d);
	bool rx = rctl & MCC_CTL_EXACT;
	uint64_t b = p->bytes;
	struct mcc_slot *s = slot_bound(lane, mixed_credit(p, rx), rx ? dctl : rctl);
	uint64_t c = s ? atomic_load_explicit(&s->credit, RLX) : 0;
	if (UNLIKELY(s == NULL || c < b))
		return acquire_declined(lane, p);
	atomic_store_explicit(&s->credit, c - b, RLX);
	struct mcc_dom *xd = mixed_exact(p, rx);
	uint64_t lim = atomic_load_explicit(&xd->limit, RLX);
	int64_t old = atomic_fetch_add_explicit(&xd->inflight, (int64_t)b, RLX);
	if (UNLIKELY(!exact_fits(xd, old, b, lim)))
		return mixed_acquire_undo(lane, p, rx);
	pend_admit(lane, e, &p->route->d, &p->device->d);
	return MCC_ADMIT;
}

/* Neither both domains in credit nor both in exact mode, the permit
 * filled: mixed, else the general path. */
static NOINLINE int acquire_other(struct mcc_lane *lane, struct mcc_permit_v1 *p, uint64_t rctl,
                                  uint64_t dctl)
{
	if (LIKELY(ctl_fast_admits(rctl) && ctl_fast_admits(dctl)))
		return mixed_acquire(lane, p, rctl, dctl);
	return acquire_declined(lane, p);
}

int mcc_core_try_acquire(mcc_lane *lane, mcc_route *r, uint64_t bytes, uint32_t generation,
                         const struct mcc_task_ref_v1 *task, struct mcc_permit_v1 *p)
{
	if (UNLIKELY(!lane || !r || !p || bytes - 1 >= MCC_BYTES_MAX ||
	             p->struct_size < sizeof(*p) || (p->flags & MCC_PERMIT_F_LIVE)))
		return -EINVAL;
	if (UNLIKELY(atomic_load_explicit(&lane->closed, RLX)))
		return -EBADF; /* a closed lane's handle: nothing reserved */
	struct mcc_device *dv = atomic_load_explicit(&r->dev, ACQ);
	uint64_t rctl = atomic_load_explicit(&r->d.ctl, ACQ);
	uint64_t dctl = atomic_load_explicit(&dv->d.ctl, ACQ);
	if (LIKELY(generation <= atomic_load_explicit(&r->d.generation, RLX) &&
	           bytes <= atomic_load_explicit(&r->d.max_slice, RLX))) {
		permit_fill(p, r, dv, bytes, generation, task);
		if (LIKELY(!((rctl | dctl) & MCC_CTL_SLOWPATH)))
			return credit_acquire(lane, p, rctl, dctl);
		if (mcc_ctl_exact_admits(rctl) && mcc_ctl_exact_admits(dctl))
			return exact_acquire(lane, p, &r->d, &dv->d, bytes);
		return acquire_other(lane, p, rctl, dctl);
	}
	return mcc_core_acquire_general(lane, r, bytes, generation, task, p);
}

/* Settle `n` bytes into this lane's cached credit of both domains when
 * both slots are bound at the current epoch and stay within a chunk. */
static inline bool credit_return(struct mcc_lane *lane, struct mcc_permit_v1 *p, uint64_t n,
                                 uint64_t rctl, uint64_t dctl, struct mcc_slot **rs,
                                 struct mcc_slot **ds)
{
	struct mcc_dom *rd = &p->route->d, *dd = &p->device->d;
	if (UNLIKELY(!slots_bound(lane, rd, dd, rctl, dctl, rs, ds)))
		return false;
	uint64_t rc = atomic_load_explicit(&(*rs)->credit, RLX) + n;
	uint64_t dc = atomic_load_explicit(&(*ds)->credit, RLX) + n;
	if (UNLIKELY(rc > atomic_load_explicit(&rd->chunk, RLX) ||
	             dc > atomic_load_explicit(&dd->chunk, RLX)))
		return false;
	atomic_store_explicit(&(*rs)->credit, rc, RLX);
	atomic_store_explicit(&(*ds)->credit, dc, RLX);
	permit_settled(p, n);
	return true;
}

static NOINLINE int credit_release(struct mcc_lane *lane, struct mcc_permit_v1 *p, uint64_t b,
                                   uint64_t rctl, uint64_t dctl)
{
	struct mcc_slot *rs, *ds;
	if (LIKELY(credit_return(lane, p, b, rctl, dctl, &rs, &ds)))
		return 0;
	return mcc_core_release_general(lane, p, b, MCC_REL_NOT_POSTED);
}

/* Settle `n` bytes of a permit with one domain exact and the other
 * HEALTHY in credit mode: a locked sub on the first, the lane slot of the
 * second when bound at its epoch with room under its chunk. False, nothing
 * settled, in any other case. */
static inline bool mixed_settle(struct mcc_lane *lane, struct mcc_permit_v1 *p, uint64_t n,
                                uint64_t rctl, uint64_t dctl)
{
	bool rx = (rctl & MCC_CTL_EXACT) && !(dctl & MCC_CTL_SLOWPATH);
	if (!rx && !((dctl & MCC_CTL_EXACT) && !(rctl & MCC_CTL_SLOWPATH)))
		return false;
	struct mcc_dom *cd = mixed_credit(p, rx);
	struct mcc_slot *s = slot_bound(lane, cd, rx ? dctl : rctl);
	if (UNLIKELY(!s))
		return false;
	uint64_t c = atomic_load_explicit(&s->credit, RLX) + n;
	if (UNLIKELY(c > atomic_load_explicit(&cd->chunk, RLX)))
		return false;
	atomic_store_explicit(&s->credit, c, RLX);
	atomic_fetch_sub_explicit(&mixed_exact(p, rx)->inflight, (int64_t)n, RLX);
	permit_settled(p, n);
	return true;
}

static NOINLINE int mixed_release(struct mcc_lane *lane, struct mcc_permit_v1 *p, uint64_t b,
                                  uint64_t rctl, uint64_t dctl)
{
	if (LIKELY(mixed_settle(lane, p, b, rctl, dctl)))
		return 0;
	return mcc_core_release_general(lane, p, b, MCC_REL_NOT_POSTED);
}

int mcc_core_release(mcc_lane *lane, struct mcc_permit_v1 *p, uint64_t bytes, uint32_t reason)
{
	if (UNLIKELY(!lane || !p || p->struct_size < MCC_PERMIT_V1_SIZE))
		return -EINVAL;
	if (UNLIKELY(atomic_load_explicit(&lane->closed, RLX)))
		return -EBADF; /* nothing settled: the permit stays live for an open lane */
	/* live permit, 0 < bytes <= live, unposted */
	if (LIKELY((p->flags & MCC_PERMIT_F_LIVE) && bytes - 1 < p->bytes &&
	           reason == MCC_REL_NOT_POSTED)) {
		struct mcc_dom *rd = &p->route->d, *dd = &p->device->d;
		uint64_t rctl = atomic_load_explicit(&rd->ctl, ACQ);
		uint64_t dctl = atomic_load_explicit(&dd->ctl, ACQ);
		if (LIKELY(!((rctl | dctl) & MCC_CTL_SLOWPATH)))
			return credit_release(lane, p, bytes, rctl, dctl);
		if (rctl & dctl & MCC_CTL_EXACT) {
			/* nothing cached: straight back to the shared counters */
			atomic_fetch_sub_explicit(&dd->inflight, (int64_t)bytes, RLX);
			atomic_fetch_sub_explicit(&rd->inflight, (int64_t)bytes, RLX);
			permit_settled(p, bytes);
			return 0;
		}
		return mixed_release(lane, p, bytes, rctl, dctl);
	}
	return mcc_core_release_general(lane, p, bytes, reason);
}

/* A successful completion settled into cached credit. */
static NOINLINE void credit_complete(struct mcc_lane *lane, struct mcc_permit_v1 *p,
                                     const struct mcc_completion_v1 *wc, uint64_t n, uint64_t rctl,
                                     uint64_t dctl)
{
	struct mcc_slot *rs, *ds;
	if (LIKELY(credit_return(lane, p, n, rctl, dctl, &rs, &ds))) {
		uint64_t lat = wc_latency(wc);
		fb_completion(&ds->fb, n, lat);
		fb_completion(&rs->fb, n, lat);
		if (UNLIKELY(ev_active(lane)))
			completion_evidence(lane, p, wc);
		return;
	}
	mcc_core_completion_general(lane, p, wc);
}

/* The rest of pend_completion() when the lane's pending pair is another
 * pair's. */
static COLD void pend_completion_miss(struct mcc_lane *lane, struct mcc_permit_v1 *p, uint64_t n,
                                      uint64_t lat, const struct mcc_completion_v1 *slow)
{
	struct mcc_counters c = { 0, n, 1, lat, lat ? 1 : 0 };
	pend_retarget(lane, &p->route->d, &p->device->d, &c);
	if (slow)
		completion_evidence(lane, p, slow);
}

/*
 * The feedback of a successful completion of `n` settled bytes (`lat`: its
 * latency, 0 unsampled) into the lane's pending pair, on the exact and the
 * mixed fast paths. `slow`: the WC when completion_evidence() has work
 * (evidence active, a domain CONGESTED), else NULL. Its slow cases are tail
 * calls: no value lives across a call.
 */
static inline __attribute__((always_inline)) void
pend_completion(struct mcc_lane *lane, struct mcc_permit_v1 *p, uint64_t n, uint64_t lat,
                const struct mcc_completion_v1 *slow)
{
	struct mcc_pend *e = pend_hit(lane, &p->route->d, &p->device->d);
	if (UNLIKELY(!e)) {
		pend_completion_miss(lane, p, n, lat, slow);
		return;
	}
	fb_completion(&e->fb, n, lat);
	if (UNLIKELY(slow != NULL))
		completion_evidence(lane, p, slow);
}

/* A successful completion settling `n` bytes of a permit whose domains are
 * both in exact mode: the two locked subtractions, then the feedback. Inline
 * in on_completion. */
static inline __attribute__((always_inline)) void
exact_complete(struct mcc_lane *lane, struct mcc_permit_v1 *p, uint64_t n, uint64_t lat,
               const struct mcc_completion_v1 *slow)
{
	atomic_fetch_sub_explicit(&p->device->d.inflight, (int64_t)n, RLX);
	atomic_fetch_sub_explicit(&p->route->d.inflight, (int64_t)n, RLX);
	permit_settled(p, n);
	pend_completion(lane, p, n, lat, slow);
}

/* A successful completion when the domains are neither both in credit nor
 * both in exact mode: mixed, else the general path. */
static NOINLINE void mixed_complete(struct mcc_lane *lane, struct mcc_permit_v1 *p,
                                    const struct mcc_completion_v1 *wc, uint64_t n, uint64_t rctl,
                                    uint64_t dctl)
{
	if (LIKELY(mixed_settle(lane, p, n, rctl, dctl))) {
		pend_completion(lane, p, n, wc_latency(wc), evidence_of(lane, wc, rctl, dctl));
		return;
	}
	mcc_core_completion_general(lane, p, wc);
}

void mcc_core_on_completion(mcc_lane *lane, struct mcc_permit_v1 *p, const struct mcc_completion_v1 *wc)
{
	if (UNLIKELY(!lane || !p || !wc || p->struct_size < MCC_PERMIT_V1_SIZE ||
	             wc->struct_size < MCC_COMPLETION_V1_0_SIZE ||
	             atomic_load_explicit(&lane->closed, RLX)))
		return;
	uint64_t n = wc->bytes ? wc->bytes : p->bytes;
	/* a successful WC on a live (non-probe) permit of the current generation */
	if (LIKELY((p->flags & (MCC_PERMIT_F_LIVE | MCC_PERMIT_F_PROBE)) == MCC_PERMIT_F_LIVE &&
	           wc->wc_status == 0 && n - 1 < p->bytes)) {
		struct mcc_dom *rd = &p->route->d, *dd = &p->device->d;
		uint32_t gen = wc->generation ? wc->generation : p->generation;
		uint64_t rctl = atomic_load_explicit(&rd->ctl, ACQ);
		uint64_t dctl = atomic_load_explicit(&dd->ctl, ACQ);
		if (LIKELY(gen >= atomic_load_explicit(&rd->generation, RLX))) {
			if (LIKELY(!((rctl | dctl) & MCC_CTL_SLOWPATH))) {
				credit_complete(lane, p, wc, n, rctl, dctl);
				return;
			}
			if (rctl & dctl & MCC_CTL_EXACT) {
				exact_complete(lane, p, n, wc_latency(wc),
				               evidence_of(lane, wc, rctl, dctl));
				return;
			}
			mixed_complete(lane, p, wc, n, rctl, dctl);
			return;
		}
	}
	mcc_core_completion_general(lane, p, wc);
}

void mcc_core_poller_progress(mcc_lane *lane, mcc_device *dev, uint32_t ncqe)
{
	(void)ncqe; /* a pass that reaped nothing still proves the poller runs */
	if (UNLIKELY(!lane || !dev || atomic_load_explicit(&lane->closed, RLX)))
		return;
	uint64_t ep = atomic_load_explicit(&lane->core->epoch_no, RLX);
	if (atomic_load_explicit(&dev->progress_mark, RLX) != ep)
		atomic_store_explicit(&dev->progress_mark, ep, RLX);
}
