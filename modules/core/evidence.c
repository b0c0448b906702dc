/* SPDX-License-Identifier: MIT */
/*
 * evidence.c - bounded per-task evidence (RFC "Caller Observability").
 *
 * Producers:
 *   - lanes (hot path): DEFER/AVOID, error WCs, non-trivial releases and the
 *     successes that may resolve something are pushed into the lane's
 *     single-producer ring with a global sequence number; no lock;
 *   - slow paths (signals, soft deadlines, path recovery) apply directly under
 *     core->lock.
 * The core->lock holder drains the rings (tick, task_query, batch_free,
 * lane_close) and applies records to the table in sequence order; the apply
 * rules only compare sequence numbers, so a record published late still lands
 * correctly (a success resolves the task's older records it can answer:
 * CONGESTED evidence of its attempt or an older one, a slice's own evidence
 * (AVOID, errors, LONG_UNAVAILABLE, UNKNOWN) only from a newer attempt; see
 * task_query in mcc_policy_v1.h). A task without a record reads
 * MCC_REASON_NO_RECORD, its state from the host's facts alone.
 *
 * Successful completions stay cheap: they push a record only when
 * core->ev_active (pending records + tasks with unresolved evidence) is
 * non-zero, the task's hash bucket has a non-zero count, and the bucket's
 * version moved since this lane last pushed a success for that task.
 *
 * Table: evidence_tasks entries; chained hash on (batch_id, task_id) and on
 * batch_id (batch_free); entries sit on a FREE, RESOLVED (ordered by
 * resolution time) or UNRESOLVED (ordered by the time they became
 * unresolved) list. When full, the oldest resolved entry is evicted, else the
 * oldest unresolved one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

#define NONE UINT32_MAX
#define BLOOM_VER (1ull << 32)

static uint64_t mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h;
}

static uint64_t task_hash(uint64_t b, uint64_t t)
{
	return mix64(b * 0x9E3779B97F4A7C15ull ^ mix64(t + 0x632BE59BD9B4E019ull));
}

static uint32_t pow2_at_least(uint64_t v)
{
	uint32_t p = 1;
	while (p < v && p < (1u << 30))
		p <<= 1;
	return p;
}

int mcc_ev_init(struct mcc_core *core)
{
	struct mcc_evtab *t = &core->ev;
	uint32_t cap = core->p.evidence_tasks ? core->p.evidence_tasks : 1;
	uint32_t buckets = pow2_at_least(cap);
	uint32_t bloom = pow2_at_least(cap < 4096 ? 4096 : cap);
	t->e = calloc(cap, sizeof(*t->e));
	t->ln = calloc(cap, sizeof(*t->ln));
	t->tix = malloc(buckets * sizeof(*t->tix));
	t->bix = malloc(buckets * sizeof(*t->bix));
	t->bloom = calloc(bloom, sizeof(*t->bloom));
	t->scratch_cap = 8192;
	t->scratch = malloc(t->scratch_cap * sizeof(*t->scratch));
	if (!t->e || !t->ln || !t->tix || !t->bix || !t->bloom || !t->scratch) {
		mcc_ev_fini(core);
		return -ENOMEM;
	}
	t->mask = buckets - 1;
	for (uint32_t i = 0; i < buckets; i++)
		t->tix[i] = t->bix[i] = NONE;
	t->cap = cap;
	t->bloom_mask = bloom - 1;
	for (int l = 0; l < MCC_EVL_N; l++)
		t->head[l] = t->tail[l] = NONE;
	/* every entry starts on the free list */
	for (uint32_t i = 0; i < cap; i++) {
		t->e[i].list = MCC_EVL_FREE;
		t->e[i].prev = i ? i - 1 : NONE;
		t->e[i].next = i + 1 < cap ? i + 1 : NONE;
	}
	t->head[MCC_EVL_FREE] = 0;
	t->tail[MCC_EVL_FREE] = cap - 1;
	return 0;
}

void mcc_ev_fini(struct mcc_core *core)
{
	struct mcc_evtab *t = &core->ev;
	free(t->e);
	free(t->ln);
	free(t->tix);
	free(t->bix);
	free(t->bloom);
	free(t->scratch);
	memset(t, 0, sizeof(*t));
}

int mcc_ev_ring_init(struct mcc_evring *ring)
{
	ring->rec = calloc(MCC_EV_RING, sizeof(*ring->rec));
	return ring->rec ? 0 : -ENOMEM;
}

void mcc_ev_ring_fini(struct mcc_evring *ring)
{
	free(ring->rec);
	ring->rec = NULL;
}

/* ------------------------------------------------------------------ lists */

static void l_del(struct mcc_evtab *t, uint32_t i)
{
	struct mcc_ev_task *e = &t->e[i];
	if (e->prev != NONE)
		t->e[e->prev].next = e->next;
	else
		t->head[e->list] = e->next;
	if (e->next != NONE)
		t->e[e->next].prev = e->prev;
	else
		t->tail[e->list] = e->prev;
}

static void l_add(struct mcc_evtab *t, uint32_t i, uint32_t list)
{
	struct mcc_ev_task *e = &t->e[i];
	e->list = list;
	e->next = NONE;
	e->prev = t->tail[list];
	if (e->prev != NONE)
		t->e[e->prev].next = i;
	else
		t->head[list] = i;
	t->tail[list] = i;
}

/* chained bucket lists (task and batch) */
static void c_add(uint32_t *bucket, struct mcc_ev_links *ln, uint32_t i, bool batch)
{
	uint32_t h = *bucket;
	if (batch) {
		ln[i].bnext = h;
		ln[i].bprev = NONE;
		if (h != NONE)
			ln[h].bprev = i;
	} else {
		ln[i].tnext = h;
		ln[i].tprev = NONE;
		if (h != NONE)
			ln[h].tprev = i;
	}
	*bucket = i;
}

static void c_del(uint32_t *bucket, struct mcc_ev_links *ln, uint32_t i, bool batch)
{
	uint32_t n = batch ? ln[i].bnext : ln[i].tnext, p = batch ? ln[i].bprev : ln[i].tprev;
	if (p != NONE) {
		if (batch)
			ln[p].bnext = n;
		else
			ln[p].tnext = n;
	} else {
		*bucket = n;
	}
	if (n != NONE) {
		if (batch)
			ln[n].bprev = p;
		else
			ln[n].tprev = p;
	}
}

/* ------------------------------------------------------------------ bloom */

static void bloom_inc(struct mcc_core *core, uint64_t h)
{
	atomic_fetch_add(&core->ev.bloom[h & core->ev.bloom_mask], 1 | BLOOM_VER);
	atomic_fetch_add(&core->ev_active, 1);
	atomic_fetch_add(&core->ev_bumps, 1); /* after the bloom: mcc_ev_success() */
}

static void bloom_dec(struct mcc_core *core, uint64_t h)
{
	atomic_fetch_sub(&core->ev.bloom[h & core->ev.bloom_mask], 1);
	atomic_fetch_sub(&core->ev_active, 1);
}

/* ---------------------------------------------------------------- entries */

static bool unresolved(const struct mcc_ev_task *e)
{
	for (int c = 0; c < MCC_EVC_N; c++)
		if (e->it[c].used && !e->it[c].resolved)
			return true;
	return false;
}

static void settle_status(struct mcc_core *core, uint32_t i, bool was)
{
	struct mcc_evtab *t = &core->ev;
	bool now = unresolved(&t->e[i]);
	if (now == was)
		return;
	l_del(t, i);
	l_add(t, i, now ? MCC_EVL_UNRESOLVED : MCC_EVL_RESOLVED);
	if (now)
		bloom_inc(core, t->e[i].hash);
	else
		bloom_dec(core, t->e[i].hash);
}

static void ev_remove(struct mcc_core *core, uint32_t i)
{
	struct mcc_evtab *t = &core->ev;
	struct mcc_ev_task *e = &t->e[i];
	if (e->list == MCC_EVL_FREE)
		return;
	c_del(&t->tix[e->hash & t->mask], t->ln, i, false);
	c_del(&t->bix[mix64(e->batch_id) & t->mask], t->ln, i, true);
	if (e->list == MCC_EVL_UNRESOLVED)
		bloom_dec(core, e->hash);
	for (int c = 0; c < MCC_EVC_N; c++) /* its items no longer name their paths */
		if (e->it[c].used)
			mcc_reg_put(core, e->it[c].name_idx);
	l_del(t, i);
	memset(e, 0, sizeof(*e));
	l_add(t, i, MCC_EVL_FREE);
	t->used--;
	atomic_store_explicit(&core->ev_entries, t->used, RLX);
}

static uint32_t ev_find(struct mcc_core *core, uint64_t b, uint64_t tk, uint64_t h)
{
	const struct mcc_evtab *t = &core->ev;
	for (uint32_t i = t->tix[h & t->mask]; i != NONE; i = t->ln[i].tnext) {
		const struct mcc_ev_task *e = &t->e[i];
		if (e->hash == h && e->batch_id == b && e->task_id == tk)
			return i;
	}
	return NONE;
}

static uint32_t ev_get(struct mcc_core *core, uint64_t b, uint64_t tk, bool create)
{
	struct mcc_evtab *t = &core->ev;
	uint64_t h = task_hash(b, tk);
	uint32_t i = ev_find(core, b, tk, h);
	if (i != NONE || !create)
		return i;
	if (t->head[MCC_EVL_FREE] == NONE) {
		/* bounded: evict the oldest resolved entry, else the oldest one */
		uint32_t v = t->head[MCC_EVL_RESOLVED] != NONE ? t->head[MCC_EVL_RESOLVED]
		                                               : t->head[MCC_EVL_UNRESOLVED];
		ev_remove(core, v);
		t->evictions++;
	}
	i = t->head[MCC_EVL_FREE];
	l_del(t, i);
	struct mcc_ev_task *e = &t->e[i];
	memset(e, 0, sizeof(*e));
	e->batch_id = b;
	e->task_id = tk;
	e->hash = h;
	l_add(t, i, MCC_EVL_RESOLVED); /* nothing unresolved yet */
	c_add(&t->tix[h & t->mask], t->ln, i, false);
	c_add(&t->bix[mix64(b) & t->mask], t->ln, i, true);
	t->used++;
	atomic_store_explicit(&core->ev_entries, t->used, RLX);
	return i;
}

/* Evidence that belongs to one slice's attempt (anything but CONGESTED
 * evidence without an error completion): a success of the same attempt may
 * be another slice's, so only a newer attempt resolves it. */
static bool slice_bound(int cls, uint32_t observed)
{
	return cls != MCC_EVC_CG || (observed & MCC_OBS_WC);
}

/* Does a success of `ok_attempt` (sequenced after the item) resolve it?
 * LONG_UNAVAILABLE says the task has no usable path now: any later success
 * of the task, whatever its attempt, shows it has one (its slices moved and
 * complete elsewhere), so it resolves LONG_UNAVAILABLE evidence; a slice
 * still without a path records it again at its next refusal. */
static bool resolved_by(int cls, uint32_t observed, uint32_t attempt, uint32_t ok_attempt)
{
	if (cls == MCC_EVC_LU)
		return true;
	return slice_bound(cls, observed) ? attempt < ok_attempt : attempt <= ok_attempt;
}

static int class_of(uint32_t reason)
{
	switch (mcc_reason_projection(reason)) {
	case MCC_TASK_LONG_UNAVAILABLE:
		return MCC_EVC_LU;
	case MCC_TASK_CONGESTED:
		return MCC_EVC_CG;
	case MCC_TASK_UNKNOWN:
		return MCC_EVC_UK;
	default:
		return -1;
	}
}

static void apply_anomaly(struct mcc_core *core, const struct mcc_ev *r)
{
	int cls = class_of(r->reason);
	if (cls < 0)
		return;
	uint32_t i = ev_get(core, r->batch_id, r->task_id, true);
	struct mcc_ev_task *e = &core->ev.e[i];
	bool was = unresolved(e);
	/* late feedback from an older generation of the same path cannot
	 * overwrite evidence of the newer one */
	for (int c = 0; c < MCC_EVC_N; c++) {
		const struct mcc_ev_item *x = &e->it[c];
		if (x->used && r->name_idx && x->name_idx == r->name_idx &&
		    r->generation < x->generation)
			return;
	}
	/* a flush inherits the root cause: it never adds to existing evidence */
	if (r->reason == MCC_REASON_DERIVED_FLUSH && was)
		return;
	struct mcc_ev_item *it = &e->it[cls];
	if (it->used && it->seq > r->seq)
		return;
	bool res = e->ok_seq > r->seq && resolved_by(cls, r->observed, r->attempt, e->ok_attempt);
	if (!res && cls != MCC_EVC_UK && r->name_idx &&
	    core->reg[r->name_idx - 1].recovered_seq > r->seq)
		res = true; /* the path recovered since */
	if (r->name_idx) /* the item keeps the path's name alive */
		core->reg[r->name_idx - 1].refs++;
	if (it->used)
		mcc_reg_put(core, it->name_idx);
	it->seq = r->seq;
	it->route_id = r->route_id;
	it->observed_ns = r->observed_ns;
	it->window = r->window;
	it->inflight = r->inflight;
	it->cooldown_ms = r->cooldown_ms;
	it->name_idx = r->name_idx;
	it->attempt = r->attempt;
	it->generation = r->generation;
	it->vendor_err = r->vendor_err;
	it->wc_status = r->wc_status;
	it->observed = r->observed;
	it->reason = r->reason;
	it->scope = r->scope;
	it->path_state = r->path_state;
	it->used = 1;
	it->resolved = res;
	settle_status(core, i, was);
}

static void apply_success(struct mcc_core *core, const struct mcc_ev *r)
{
	uint32_t i = ev_get(core, r->batch_id, r->task_id, false);
	if (i == NONE)
		return;
	struct mcc_ev_task *e = &core->ev.e[i];
	bool was = unresolved(e);
	if (r->seq > e->ok_seq)
		e->ok_seq = r->seq;
	if (r->attempt > e->ok_attempt)
		e->ok_attempt = r->attempt;
	/* a success clears older evidence it can be the answer to: CONGESTED
	 * evidence of the same or an older attempt, a slice's own evidence only
	 * from a newer attempt (resolved_by) */
	for (int c = 0; c < MCC_EVC_N; c++) {
		struct mcc_ev_item *it = &e->it[c];
		if (it->used && !it->resolved && it->seq < r->seq &&
		    resolved_by(c, it->observed, it->attempt, r->attempt))
			it->resolved = 1;
	}
	settle_status(core, i, was);
}

static void apply(struct mcc_core *core, const struct mcc_ev *r)
{
	if (r->kind == MCC_EVK_SUCCESS)
		apply_success(core, r);
	else
		apply_anomaly(core, r);
}

/* --------------------------------------------------------------- producers */

/* Single producer: room checked first; the pending count is raised before
 * the record is published, so it never under-counts published records and
 * a drain that sees it at zero has nothing to do. */
static bool ring_push(struct mcc_core *core, struct mcc_evring *ring, const struct mcc_ev *rec)
{
	uint32_t head = atomic_load_explicit(&ring->head, RLX);
	uint32_t tail = atomic_load_explicit(&ring->tail, ACQ);
	if (head - tail >= MCC_EV_RING) {
		atomic_fetch_add_explicit(&ring->dropped, 1, RLX);
		return false;
	}
	atomic_fetch_add(&core->ev_pending, 1);
	ring->rec[head & (MCC_EV_RING - 1)] = *rec;
	atomic_store_explicit(&ring->head, head + 1, REL);
	return true;
}

void mcc_ev_lane_anomaly(struct mcc_lane *lane, struct mcc_ev *rec)
{
	struct mcc_core *core = lane->core;
	struct mcc_evring *ring = &lane->ring;
	uint64_t h = task_hash(rec->batch_id, rec->task_id);
	/* dedupe key: the epoch, and the batch frees since (a freed batch id
	 * may come back at once) */
	uint64_t ep = atomic_load_explicit(&core->epoch_no, RLX) ^
	              (uint64_t)atomic_load_explicit(&core->ev_frees, RLX) << 40;
	struct mcc_ancache *ac = &lane->an[h & (MCC_EV_ANCACHE - 1)];
	if (ac->epoch == ep && ac->batch_id == rec->batch_id && ac->task_id == rec->task_id &&
	    ac->route_id == rec->route_id && ac->attempt == rec->attempt &&
	    ac->reason == rec->reason)
		return; /* the same evidence again in this epoch (a defer storm) */
	uint32_t head = atomic_load_explicit(&ring->head, RLX);
	if (head - atomic_load_explicit(&ring->tail, ACQ) >= MCC_EV_RING) {
		atomic_fetch_add_explicit(&ring->dropped, 1, RLX);
		return;
	}
	/* sequence first, then the bucket version (see mcc_ev_lane_success) */
	rec->seq = atomic_fetch_add(&core->ev_seq, 1) + 1;
	bloom_inc(core, h);
	ring_push(core, ring, rec);
	*ac = (struct mcc_ancache){ .batch_id = rec->batch_id, .task_id = rec->task_id,
		                    .route_id = rec->route_id, .epoch = ep,
		                    .attempt = rec->attempt, .reason = rec->reason };
}

void mcc_ev_lane_success(struct mcc_lane *lane, const struct mcc_task_ref_v1 *task,
                         uint32_t generation)
{
	if (!mcc_task_is_set(task))
		return;
	struct mcc_core *core = lane->core;
	/* the memo of mcc_ev_success(), read before the bloom */
	lane->okm_batch = task->batch_id;
	lane->okm_task = task->task_id;
	lane->okm_attempt = task->attempt;
	lane->okm_bumps = atomic_load_explicit(&core->ev_bumps, ACQ);
	uint64_t h = task_hash(task->batch_id, task->task_id);
	/* version before sequence: an anomaly whose version bump we see took its
	 * sequence earlier, so this success (later sequence) resolves it */
	uint64_t w = atomic_load(&core->ev.bloom[h & core->ev.bloom_mask]);
	if ((uint32_t)w == 0)
		return;
	struct mcc_okcache *oc = &lane->ok[h & (MCC_EV_OKCACHE - 1)];
	uint64_t ver = (w >> 32) << 32 | task->attempt;
	if (oc->batch_id == task->batch_id && oc->task_id == task->task_id && oc->ver == ver)
		return; /* nothing new since this lane's last success for the task */
	struct mcc_ev rec;
	memset(&rec, 0, sizeof(rec));
	rec.kind = MCC_EVK_SUCCESS;
	rec.batch_id = task->batch_id;
	rec.task_id = task->task_id;
	rec.attempt = task->attempt;
	rec.generation = generation;
	rec.seq = atomic_fetch_add(&core->ev_seq, 1) + 1;
	if (!ring_push(core, &lane->ring, &rec)) {
		lane->okm_bumps = UINT64_MAX; /* dropped: check again next time */
	} else {
		oc->batch_id = task->batch_id;
		oc->task_id = task->task_id;
		oc->ver = ver;
		/* a later identical anomaly must be recorded again */
		struct mcc_ancache *ac = &lane->an[h & (MCC_EV_ANCACHE - 1)];
		if (ac->batch_id == task->batch_id && ac->task_id == task->task_id)
			ac->epoch = 0;
	}
}

/* ---------------------------------------------------------------- consumer */

static int by_seq(const void *a, const void *b)
{
	uint64_t x = ((const struct mcc_ev *)a)->seq, y = ((const struct mcc_ev *)b)->seq;
	return x < y ? -1 : x > y;
}

void mcc_ev_drain(struct mcc_core *core)
{
	struct mcc_evtab *t = &core->ev;
	for (;;) {
		/* O(1) on a healthy system: nothing pushed since the last drain */
		if (atomic_load_explicit(&core->ev_pending, ACQ) == 0)
			return;
		uint32_t n = 0;
		for (uint32_t l = 0; l < core->lanes_hi && n < t->scratch_cap; l++) {
			struct mcc_lane *lane = core->lanes[l];
			if (!lane)
				continue;
			struct mcc_evring *ring = &lane->ring;
			uint32_t head = atomic_load_explicit(&ring->head, ACQ);
			uint32_t tail = atomic_load_explicit(&ring->tail, RLX);
			while (tail != head && n < t->scratch_cap)
				t->scratch[n++] = ring->rec[tail++ & (MCC_EV_RING - 1)];
			atomic_store_explicit(&ring->tail, tail, REL);
		}
		if (!n)
			return;
		atomic_fetch_sub(&core->ev_pending, n);
		qsort(t->scratch, n, sizeof(*t->scratch), by_seq);
		for (uint32_t i = 0; i < n; i++) {
			const struct mcc_ev *r = &t->scratch[i];
			apply(core, r);
			if (r->kind == MCC_EVK_ANOMALY) /* no longer pending */
				bloom_dec(core, task_hash(r->batch_id, r->task_id));
		}
		if (n < t->scratch_cap)
			return;
	}
}

void mcc_ev_apply_direct(struct mcc_core *core, struct mcc_ev *rec)
{
	rec->seq = atomic_fetch_add(&core->ev_seq, 1) + 1;
	apply(core, rec);
}

void mcc_ev_route_recovered(struct mcc_core *core, uint32_t name_idx)
{
	struct mcc_evtab *t = &core->ev;
	if (!name_idx)
		return;
	uint64_t seq = atomic_fetch_add(&core->ev_seq, 1) + 1;
	core->reg[name_idx - 1].recovered_seq = seq;
	/* path recovery clears the old blocking (LU and CG) evidence on it */
	for (uint32_t i = t->head[MCC_EVL_UNRESOLVED], nx; i != NONE; i = nx) {
		struct mcc_ev_task *e = &t->e[i];
		nx = e->next;
		for (int c = MCC_EVC_LU; c <= MCC_EVC_CG; c++) {
			struct mcc_ev_item *it = &e->it[c];
			if (it->used && !it->resolved && it->name_idx == name_idx && it->seq < seq)
				it->resolved = 1;
		}
		settle_status(core, i, true);
	}
}

static uint32_t reg_hash(const struct mcc_core *core, uint32_t device_id, uint64_t route_id)
{
	return (uint32_t)mix64(route_id * 0x9E3779B97F4A7C15ull ^ device_id) & (core->reg_cap - 1);
}

/* Double the registry (entries and buckets), rehashing the live entries. */
static int reg_grow(struct mcc_core *core)
{
	uint32_t cap = core->reg_cap ? core->reg_cap * 2 : 64;
	struct mcc_rname *v = realloc(core->reg, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	core->reg = v;
	uint32_t *b = calloc(cap, sizeof(*b));
	if (!b)
		return -ENOMEM; /* the larger array is kept; the buckets are not */
	free(core->reg_bkt);
	core->reg_bkt = b;
	core->reg_cap = cap;
	for (uint32_t i = 0; i < core->nreg; i++) {
		struct mcc_rname *n = &core->reg[i];
		if (!n->refs)
			continue; /* on the free list */
		uint32_t h = reg_hash(core, n->device_id, n->route_id);
		n->hnext = b[h];
		b[h] = i + 1;
	}
	return 0;
}

/* The entry's name: its own copy at its own length, at most
 * MCC_PATH_NAME_MAX - 1 characters (out of memory: none). */
static void reg_name(struct mcc_rname *n, const char *path)
{
	size_t len = strnlen(path, MCC_PATH_NAME_MAX - 1);
	if (n->path && strncmp(n->path, path, len) == 0 && n->path[len] == '\0')
		return; /* the same name again */
	free(n->path);
	n->path = len ? malloc(len + 1) : NULL;
	if (n->path) {
		memcpy(n->path, path, len);
		n->path[len] = '\0';
	}
}

uint32_t mcc_reg_get(struct mcc_core *core, uint32_t device_id, uint64_t route_id,
                     const char *path)
{
	if (core->reg_cap) {
		for (uint32_t i = core->reg_bkt[reg_hash(core, device_id, route_id)]; i;
		     i = core->reg[i - 1].hnext) {
			struct mcc_rname *n = &core->reg[i - 1];
			if (n->device_id == device_id && n->route_id == route_id) {
				if (path)
					reg_name(n, path);
				n->refs++;
				return i;
			}
		}
	}
	uint32_t i = core->reg_free;
	if (i) {
		core->reg_free = core->reg[i - 1].hnext;
	} else {
		if (core->nreg == core->reg_cap && reg_grow(core) != 0)
			return 0;
		i = ++core->nreg;
	}
	struct mcc_rname *n = &core->reg[i - 1];
	memset(n, 0, sizeof(*n));
	n->device_id = device_id;
	n->route_id = route_id;
	n->refs = 1;
	if (path)
		reg_name(n, path);
	uint32_t h = reg_hash(core, device_id, route_id);
	n->hnext = core->reg_bkt[h];
	core->reg_bkt[h] = i;
	core->reg_live++;
	return i;
}

void mcc_reg_put(struct mcc_core *core, uint32_t name_idx)
{
	if (!name_idx)
		return;
	struct mcc_rname *n = &core->reg[name_idx - 1];
	if (--n->refs)
		return;
	/* unlink from its bucket, onto the free list: the name is gone */
	for (uint32_t *p = &core->reg_bkt[reg_hash(core, n->device_id, n->route_id)]; *p;
	     p = &core->reg[*p - 1].hnext) {
		if (*p == name_idx) {
			*p = n->hnext;
			break;
		}
	}
	free(n->path);
	n->path = NULL;
	n->hnext = core->reg_free;
	core->reg_free = name_idx;
	core->reg_live--;
}

/* ------------------------------------------------------------------ query */

/* The state of a task from the host's facts alone (no unresolved evidence):
 * a failed task is UNKNOWN, one with a success NORMAL, else UNKNOWN. */
static int facts_state(uint32_t host_flags, bool ok_seen)
{
	if (host_flags & (MCC_TASKQ_UNSUPPORTED | MCC_TASKQ_FAILED))
		return MCC_TASK_UNKNOWN;
	return ok_seen || (host_flags & MCC_TASKQ_SEEN_SUCCESS) ? MCC_TASK_NORMAL
	                                                        : MCC_TASK_UNKNOWN;
}

/* The rules stated at task_query in mcc_policy_v1.h. */
static const struct mcc_ev_item *pick_item(const struct mcc_ev_task *e, int *state,
                                           uint32_t host_flags)
{
	static const int order[] = { MCC_EVC_LU, MCC_EVC_CG, MCC_EVC_UK };
	static const int st[] = { MCC_TASK_LONG_UNAVAILABLE, MCC_TASK_CONGESTED, MCC_TASK_UNKNOWN };
	/* the most severe unresolved class wins; a failed task is never
	 * NORMAL nor CONGESTED */
	for (int k = 0; k < 3; k++) {
		const struct mcc_ev_item *it = &e->it[order[k]];
		if (it->used && !it->resolved) {
			*state = st[k];
			if ((host_flags & MCC_TASKQ_FAILED) && *state == MCC_TASK_CONGESTED)
				*state = MCC_TASK_UNKNOWN;
			return it;
		}
	}
	/* all resolved: the facts decide, and report the most recent
	 * (resolved) reason */
	*state = facts_state(host_flags, e->ok_seq != 0);
	const struct mcc_ev_item *best = NULL;
	for (int c = 0; c < MCC_EVC_N; c++)
		if (e->it[c].used && (!best || e->it[c].seq > best->seq))
			best = &e->it[c];
	return best;
}

int mcc_core_task_query(void *ctx, const struct mcc_task_ref_v1 *task, uint32_t host_flags,
                        struct mcc_task_detail_v1 *out)
{
	struct mcc_core *core = ctx;
	if (!core || !task || (out && out->struct_size < MCC_TASK_DETAIL_V1_0_SIZE))
		return -EINVAL; /* a short detail is refused whole, never written */
	int state = facts_state(host_flags, false);
	struct mcc_task_detail_v1 d;
	memset(&d, 0, sizeof(d));
	if (host_flags & MCC_TASKQ_UNSUPPORTED) {
		/* not an RDMA task: UNKNOWN, nothing observed */
	} else if (atomic_load_explicit(&core->ev_pending, ACQ) == 0 &&
	           atomic_load_explicit(&core->ev_entries, ACQ) == 0) {
		/* a healthy system (no evidence anywhere, nothing to drain): no
		 * record of the task, the host's facts decide */
		d.reason = MCC_REASON_NO_RECORD;
		d.observed = MCC_OBS_REASON;
	} else {
		/* a pure read of module state: draining the lanes' pending records
		 * only moves them into the table (no poll, post or probe) */
		pthread_mutex_lock(&core->lock);
		mcc_ev_drain(core);
		uint32_t i = ev_get(core, task->batch_id, task->task_id, false);
		if (i == NONE) { /* never recorded, freed or evicted */
			d.reason = MCC_REASON_NO_RECORD;
			d.observed = MCC_OBS_REASON;
		} else {
			const struct mcc_ev_item *it = pick_item(&core->ev.e[i], &state, host_flags);
			if (it) {
				d.observed = it->observed;
				d.reason = it->reason;
				d.scope = it->scope;
				d.resolved = it->resolved;
				d.route_id = it->route_id;
				if (it->name_idx) {
					const char *nm = core->reg[it->name_idx - 1].path;
					if (nm) /* NUL-terminated: d is zeroed */
						memcpy(d.path, nm, strnlen(nm, sizeof(d.path) - 1));
				} else {
					d.observed &= ~(uint32_t)MCC_OBS_PATH;
				}
				d.observed_ns = it->observed_ns;
				d.attempt = it->attempt;
				d.generation = it->generation;
				d.window_bytes = it->window;
				d.inflight_bytes = it->inflight;
				d.cooldown_ms = it->cooldown_ms;
				d.wc_status = it->wc_status;
				d.vendor_err = it->vendor_err;
				d.path_state = it->path_state;
			}
		}
		pthread_mutex_unlock(&core->lock);
	}
	d.state = (uint32_t)state;
	if (out) {
		d.struct_size = out->struct_size;
		memcpy(out, &d, sizeof(d)); /* a later minor's tail is the caller's */
	}
	return state;
}

void mcc_core_batch_free(void *ctx, uint64_t batch_id)
{
	struct mcc_core *core = ctx;
	if (!core)
		return;
	if (atomic_load_explicit(&core->ev_pending, ACQ) == 0 &&
	    atomic_load_explicit(&core->ev_entries, ACQ) == 0)
		return; /* nothing recorded for any batch */
	pthread_mutex_lock(&core->lock);
	mcc_ev_drain(core);
	struct mcc_evtab *t = &core->ev;
	bool dropped = false;
	for (uint32_t i = t->bix[mix64(batch_id) & t->mask], nx; i != NONE; i = nx) {
		nx = t->ln[i].bnext;
		if (core->ev.e[i].batch_id == batch_id) {
			ev_remove(core, i);
			dropped = true;
		}
	}
	if (dropped)
		atomic_fetch_add_explicit(&core->ev_frees, 1, RLX);
	pthread_mutex_unlock(&core->lock);
}
