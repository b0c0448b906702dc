/* SPDX-License-Identifier: MIT */
/*
 * control.c - the control plane: tick (AIMD with hysteresis, cooldowns,
 * probing), the path state machine, and the slow-path evidence sources
 * (async events, non-WC signals). Everything here runs under core->lock.
 *
 * State machine (RFC "Path State Machine"), per route and device domain:
 *
 *   HEALTHY   --high_pressure_epochs high epochs-->            CONGESTED (cut)
 *   CONGESTED --low_pressure_epochs low successful epochs-->   HEALTHY (grow)
 *   HEALTHY/CONGESTED --hard error below threshold-->          SUSPECT
 *   SUSPECT   --clean successful epoch-->                      HEALTHY or CONGESTED
 *   HEALTHY/CONGESTED/SUSPECT --threshold, CQ/port/device fatal--> QUARANTINED
 *   QUARANTINED --cooldown expired-->                          PROBING
 *   PROBING   --probe_successes clean probe completions-->     HEALTHY at min window (slow start)
 *   PROBING   --probe failure or hard error-->                 QUARANTINED (new cooldown)
 *   SUSPECT   --no traffic for cooldown_ms-->                  HEALTHY or CONGESTED
 *
 * Faults (the counting that drives SUSPECT and QUARANTINED, mcc_ctl_hard_error):
 *   - A route's hard errors count toward hard_error_threshold until
 *     flap_window_ms passes without one. Neither clean epochs nor a new
 *     endpoint generation clears them: a rail that fails once per flap (one
 *     RETRY_EXC per endpoint, then a rebuilt endpoint that works until the
 *     next flap), or a path whose reordered and duplicated packets end one
 *     WR in many with RETRY_EXC_ERR (rxe), reaches the threshold like a path
 *     that fails outright. (They used to decay after low_pressure_epochs
 *     clean epochs, so such a rail cycled SUSPECT -> HEALTHY for good.)
 *   - The threshold is 1 for a route that never delivered a success (a rail
 *     dead at start is quarantined by its first transport timeout, not its
 *     third), for one whose rebuilt endpoint failed too (a hard error on a
 *     newer endpoint generation than the last one, with no success since:
 *     the path is dead, and each endpoint costs the host a QP timeout plus
 *     its own rail pause, so waiting for a third error left a dead rail
 *     SUSPECT for most of a 5 s outage), and for one quarantined within the
 *     last flap_window_ms (a route back from quarantine is on probation:
 *     its next failure quarantines it again, with the flap-damped, doubled
 *     cooldown). The errors of one endpoint (every QP timing out) are one
 *     episode: they still need the threshold.
 *   - Hard errors of an endpoint generation older than the route's are
 *     stale (late WCs of a replaced endpoint) and count for nothing.
 *   - Idle routes: SUSPECT holds no evidence of its own once traffic stops,
 *     so a SUSPECT route with no admission, no completion and nothing in
 *     flight for cooldown_ms returns to where it came from (its hard errors
 *     still count within the flap window). QUARANTINED ends with its
 *     cooldown whatever the traffic. PROBING is probed on its next use: it
 *     admits the probe then, so an idle PROBING route stays PROBING (there is
 *     nothing to learn from no traffic) and the host's next slice on it is
 *     the probe.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

#define NS_PER_MS 1000000ull

uint32_t mcc_dom_device_id(const struct mcc_dom *d)
{
	if (d->kind == MCC_DOM_DEVICE)
		return ((const struct mcc_device *)d)->device_id;
	const struct mcc_device *dv =
	    atomic_load_explicit(&((const struct mcc_route *)d)->dev, RLX);
	return dv ? dv->device_id : 0;
}

uint64_t mcc_dom_route_id(const struct mcc_dom *d)
{
	return d->kind == MCC_DOM_ROUTE ? ((const struct mcc_route *)d)->route_id : 0;
}

/* A domain as an operator names it: "device mlx5_0", "route mlx5_0 ->
 * 10.0.0.2:12001@mlx5_1" (the device the route is bound to, the peer the
 * host described); the host's ids only where it gave no name. */
const char *mcc_dom_label(const struct mcc_core *core, const struct mcc_dom *d, char *buf,
                          size_t len)
{
	const struct mcc_device *dv = d->kind == MCC_DOM_DEVICE
	                                      ? (const struct mcc_device *)d
	                                      : atomic_load_explicit(
	                                                &((const struct mcc_route *)d)->dev, RLX);
	char dev[80];

	if (dv && dv->name[0])
		snprintf(dev, sizeof(dev), "%s", dv->name);
	else
		snprintf(dev, sizeof(dev), "#%u", dv ? dv->device_id : 0);
	if (d->kind == MCC_DOM_DEVICE) {
		snprintf(buf, len, "device %s", dev);
	} else {
		const struct mcc_route *r = (const struct mcc_route *)d;
		const char *path = r->name_idx ? core->reg[r->name_idx - 1].path : NULL;

		if (path && path[0])
			snprintf(buf, len, "route %s -> %s", dev, path);
		else
			snprintf(buf, len, "route %s -> #%llu", dev, (unsigned long long)r->route_id);
	}
	return buf;
}

uint64_t mcc_ctl_cooldown_left_ms(const struct mcc_dom *d, uint64_t now)
{
	if (mcc_ctl_state(atomic_load_explicit(&d->ctl, RLX)) != MCC_PATH_QUARANTINED)
		return 0;
	uint64_t until = atomic_load_explicit(&d->q_until_ns, RLX);
	return until > now ? (until - now + NS_PER_MS - 1) / NS_PER_MS : 0;
}

static void rec_state(struct mcc_core *core, uint32_t kind, const struct mcc_dom *d,
                      uint32_t from, uint32_t to, uint32_t cls, uint32_t scope, uint32_t reason,
                      uint64_t bytes, uint64_t now, uint32_t code)
{
	if (!core->rec)
		return;
	struct mcc_rec_entry e = { 0 };
	e.ts = now;
	e.kind = (uint8_t)kind;
	e.cls = (uint8_t)cls;
	e.scope = (uint8_t)scope;
	e.reason = (uint8_t)reason;
	e.from = (uint8_t)from;
	e.to = (uint8_t)to;
	e.bytes = bytes;
	e.code = code;
	e.flags = MCC_RECF_STATES;
	if (d) {
		e.device_id = mcc_dom_device_id(d);
		e.flags |= MCC_RECF_DEVICE;
		e.generation = atomic_load_explicit(&d->generation, RLX);
		if (d->kind == MCC_DOM_ROUTE) {
			e.route_id = mcc_dom_route_id(d);
			e.flags |= MCC_RECF_ROUTE;
		}
	}
	mcc_rec_put(core->rec, &e);
}

/* ------------------------------------------------------ control word, states */

static void pace_set(struct mcc_dom *d, uint64_t pace);

/* Store a window clamped to [min_window, max_window]; returns it. */
static uint64_t set_window(struct mcc_core *core, struct mcc_dom *d, uint64_t w)
{
	if (w < core->p.min_window)
		w = core->p.min_window;
	if (w > core->p.max_window)
		w = core->p.max_window;
	if (w != atomic_load_explicit(&d->window, RLX)) {
		atomic_store_explicit(&d->window, w, RLX);
		mcc_dom_set_limit(d);
	}
	return w;
}

/* The control word and chunk for `state`, a new credit epoch on any change
 * or `bump`; the domain stays where it is (active or at rest). */
static void ctl_write(struct mcc_core *core, struct mcc_dom *d, uint32_t state, bool bump)
{
	uint64_t old = atomic_load_explicit(&d->ctl, RLX);
	uint64_t w = atomic_load_explicit(&d->window, RLX);
	uint64_t slice = atomic_load_explicit(&d->max_slice, RLX);
	uint32_t lanes = atomic_load_explicit(&core->lanes_open, RLX);
	uint64_t lanes4 = 4ull * (lanes ? lanes : 1);
	if (!slice)
		slice = MCC_SLICE_REF;
	/* credit mode only while HEALTHY, busy, with window >= 4 * lanes * slice,
	 * lanes = lanes open now (not the host's declared bound): at most
	 * lanes x chunk <= window / 4 is cached */
	bool credit = state == MCC_PATH_HEALTHY && d->cs.busy && w / lanes4 >= slice;
	uint64_t chunk = w / lanes4, cap = MCC_CHUNK_MAX > slice ? MCC_CHUNK_MAX : slice;
	if (chunk < slice)
		chunk = slice;
	if (chunk > cap)
		chunk = cap;
	atomic_store_explicit(&d->chunk, credit ? chunk : 0, RLX);
	uint64_t flags = state | (credit ? 0 : MCC_CTL_EXACT);
	if ((old & 0xffffffffull) != flags || bump)
		atomic_store_explicit(&d->ctl, ((uint64_t)(mcc_ctl_epoch(old) + 1) << 32) | flags, REL);
}

void mcc_ctl_publish(struct mcc_core *core, struct mcc_dom *d, uint32_t state, bool bump)
{
	ctl_write(core, d, state, bump);
	mcc_dom_wake(core, d); /* its control word moved: the tick visits it */
}

void mcc_ctl_set_state(struct mcc_core *core, struct mcc_dom *d, uint32_t state, uint64_t now)
{
	uint32_t from = mcc_ctl_state(atomic_load_explicit(&d->ctl, RLX));
	if (state != MCC_PATH_CONGESTED)
		pace_set(d, 0); /* only a CONGESTED route is paced */
	mcc_ctl_publish(core, d, state, true);
	if (from != state)
		rec_state(core, MCC_REC_TRANSITION, d, from, state, MCC_CLASS_NONE, MCC_SCOPE_NONE,
		          MCC_REASON_NONE, atomic_load_explicit(&d->window, RLX), now, 0);
}

void mcc_ctl_quarantine(struct mcc_core *core, struct mcc_dom *d, uint64_t now)
{
	struct mcc_ctl *cs = &d->cs;
	const struct mcc_params *p = &core->p;
	uint32_t st = mcc_ctl_state(atomic_load_explicit(&d->ctl, RLX));
	if (st == MCC_PATH_QUARANTINED)
		return; /* one quarantine; avoidance never counts as a new failure */
	if (st != MCC_PATH_PROBING)
		cs->pre_q_window = atomic_load_explicit(&d->window, RLX);
	/* flap damping: a repeated quarantine within flap_window doubles the
	 * cooldown, capped at cooldown_max */
	if (cs->quarantined_once && now >= cs->last_q_ns &&
	    now - cs->last_q_ns < (uint64_t)p->flap_window_ms * NS_PER_MS) {
		cs->cooldown_ms *= 2;
		if (cs->cooldown_ms > p->cooldown_max_ms)
			cs->cooldown_ms = p->cooldown_max_ms;
		if (cs->cooldown_ms < p->cooldown_ms)
			cs->cooldown_ms = p->cooldown_ms;
	} else {
		cs->cooldown_ms = p->cooldown_ms;
	}
	cs->last_q_ns = now;
	cs->quarantined_once = true;
	atomic_store_explicit(&d->q_until_ns, now + cs->cooldown_ms * NS_PER_MS, RLX);
	/* The generation to beat is the one the failures were seen on, not the
	 * route's newest: an engine that rebuilt its endpoint right after the
	 * error (TENT does) probes on that rebuilt, unproven generation rather
	 * than waiting for one it never creates. Evidence without a generation
	 * (async events, signals) fences the current one. */
	uint32_t eg = atomic_exchange_explicit(&d->err_gen, 0, RLX);
	atomic_store_explicit(&d->q_generation,
	                      eg ? eg : atomic_load_explicit(&d->generation, RLX), RLX);
	cs->fail_gen = 0; /* err_gen restarts too */
	cs->quarantines++;
	cs->hard_errors = 0;
	cs->clean_streak = 0;
	cs->probe_ok = 0;
	atomic_exchange_explicit(&d->probe_ok, 0, RLX);
	atomic_exchange_explicit(&d->probe_fail, 0, RLX);
	mcc_ctl_set_state(core, d, MCC_PATH_QUARANTINED, now);
	char label[MCC_PATH_NAME_MAX + 96];
	mcc_log(core, MCC_LOG_WARN, "%s quarantined for %llu ms (quarantine #%llu)",
	        mcc_dom_label(core, d, label, sizeof(label)), (unsigned long long)cs->cooldown_ms,
	        (unsigned long long)cs->quarantines);
}

void mcc_ctl_hard_error(struct mcc_core *core, struct mcc_dom *d, uint32_t n, uint64_t now)
{
	struct mcc_ctl *cs = &d->cs;
	uint32_t st = mcc_ctl_state(atomic_load_explicit(&d->ctl, RLX));
	if (!n || st == MCC_PATH_QUARANTINED)
		return;
	const uint64_t flap = (uint64_t)core->p.flap_window_ms * NS_PER_MS;
	cs->hard_epoch += n;
	cs->busy_ns = now;
	if (st == MCC_PATH_PROBING) { /* the new generation failed too */
		mcc_ctl_quarantine(core, d, now);
		return;
	}
	/* "Faults" above: counted within the flap window, across generations */
	if (cs->last_hard_ns && now >= cs->last_hard_ns && now - cs->last_hard_ns >= flap)
		cs->hard_errors = 0;
	cs->last_hard_ns = now;
	cs->hard_errors += n;
	cs->clean_streak = 0;
	uint32_t thr = core->p.hard_threshold;
	uint32_t eg = atomic_load_explicit(&d->err_gen, RLX);
	if (!cs->delivered || (cs->failing && eg > cs->fail_gen) ||
	    (cs->quarantined_once && now >= cs->last_q_ns && now - cs->last_q_ns < flap))
		thr = 1; /* never delivered, a rebuilt endpoint failed too, on probation */
	cs->failing = true;
	if (eg > cs->fail_gen)
		cs->fail_gen = eg;
	if (cs->hard_errors >= thr) {
		mcc_ctl_quarantine(core, d, now);
	} else if (st != MCC_PATH_SUSPECT) {
		cs->suspect_prev = st == MCC_PATH_CONGESTED ? MCC_PATH_CONGESTED : MCC_PATH_HEALTHY;
		mcc_ctl_set_state(core, d, MCC_PATH_SUSPECT, now);
	}
}

/* A new domain: the law's first window (from `w0`, its share of the
 * device), HEALTHY. */
void mcc_ctl_start(struct mcc_core *core, struct mcc_dom *d, uint64_t w0)
{
	set_window(core, d, core->law->start(&core->p, &d->cs.law, w0, core->p.max_window, false));
	mcc_ctl_publish(core, d, MCC_PATH_HEALTHY, true);
}

static void enter_probing(struct mcc_core *core, struct mcc_dom *d, uint64_t now)
{
	atomic_store_explicit(&d->window, core->p.min_window, RLX);
	mcc_dom_set_limit(d);
	atomic_store_explicit(&d->probe_bound, core->p.probe_window, RLX);
	atomic_store_explicit(&d->q_until_ns, 0, RLX);
	d->cs.probe_ok = 0;
	atomic_exchange_explicit(&d->probe_ok, 0, RLX);
	atomic_exchange_explicit(&d->probe_fail, 0, RLX);
	mcc_ctl_set_state(core, d, MCC_PATH_PROBING, now);
}

/* Probe succeeded: HEALTHY, with the law's window from the minimum toward
 * the pre-quarantine window (AIMD: slow start once low_pressure_epochs clean
 * epochs have passed, as fast recovery did).
 * Not CONGESTED: nothing measured pressure, so successes on the recovered
 * path are not congestion feedback; a high epoch takes the ordinary
 * HEALTHY -> CONGESTED path. The base is learned anew: the new endpoint
 * generation may take another way through the fabric. */
static void recover(struct mcc_core *core, struct mcc_dom *d, uint64_t now)
{
	struct mcc_ctl *cs = &d->cs;
	set_window(core, d, core->law->start(&core->p, &cs->law, core->p.min_window,
	                                     cs->pre_q_window, true));
	cs->base_n = 0;
	cs->base_prev_ok = false;
	cs->clean_streak = 0;
	cs->hard_errors = 0;
	cs->probe_ok = 0;
	mcc_ctl_set_state(core, d, MCC_PATH_HEALTHY, now);
	if (d->kind == MCC_DOM_ROUTE) {
		mcc_ev_route_recovered(core, ((struct mcc_route *)d)->name_idx);
	} else {
		for (struct mcc_route *r = ((struct mcc_device *)d)->routes; r; r = r->dnext) {
			uint32_t st = mcc_ctl_state(atomic_load_explicit(&r->d.ctl, RLX));
			if (st != MCC_PATH_QUARANTINED && st != MCC_PATH_PROBING)
				mcc_ev_route_recovered(core, r->name_idx);
		}
	}
	char label[MCC_PATH_NAME_MAX + 96];
	mcc_log(core, MCC_LOG_INFO, "%s recovered by probe (min window)",
	        mcc_dom_label(core, d, label, sizeof(label)));
}

/* --------------------------------------------------------------- activity */

/*
 * Activity (README.md "Scale"). The tick visits the domains on the active
 * lists (core->act, newest first); every other domain rests. A domain
 * comes to rest at the end of a visit that found nothing (no admission, no
 * completion, nothing in flight, no receiver pressure) and changed nothing
 * (control word, window and law state as before it), HEALTHY or CONGESTED,
 * neither busy nor paced nor holding hard errors toward the threshold; a
 * QUARANTINED one likewise, until its cooldown ends (the timer heap wakes
 * it in the tick that would have ended it). SUSPECT and PROBING domains
 * never rest (their recovery and decay run per epoch).
 *
 * Such a visit is a fixed point: every later epoch without activity would
 * compute the same measurement (drain time 0, the same rate, base and
 * window) and leave the same state, except the time the domain last held
 * nothing (measure: drained_ns), which the wake sets to the last tick. So a
 * resting domain's epochs are applied in O(1) when it is woken:
 *   - by the tick's lane scan, when its totals moved (a lane counted an
 *     admission or completion in a slot or pending pair),
 *   - by the spill drain (a lane rebound the slot counting for it),
 *   - by any change of its control word (mcc_ctl_publish: a hard error, a
 *     quarantine, a state change) or a signal the tick reads (backlog,
 *     telemetry),
 *   - by its cooldown's end (timer heap).
 * A domain woken inside the tick after its credit fold is folded and
 * summed at once (dom_snap), in the order the tick does it for the others.
 */

/* ---- timer heap: QUARANTINED domains at rest, soonest cooldown end first */

static uint64_t tq_key(const struct mcc_dom *d)
{
	return atomic_load_explicit(&d->q_until_ns, RLX);
}

static void tq_set(struct mcc_core *core, uint32_t i, struct mcc_dom *d)
{
	core->tq[i] = d;
	d->tq_idx = i + 1;
}

static void tq_sift(struct mcc_core *core, uint32_t i)
{
	struct mcc_dom *d = core->tq[i];
	uint64_t k = tq_key(d);
	while (i > 0 && tq_key(core->tq[(i - 1) / 2]) > k) { /* up */
		tq_set(core, i, core->tq[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	for (;;) { /* down */
		uint32_t c = 2 * i + 1;
		if (c >= core->ntq)
			break;
		if (c + 1 < core->ntq && tq_key(core->tq[c + 1]) < tq_key(core->tq[c]))
			c++;
		if (tq_key(core->tq[c]) >= k)
			break;
		tq_set(core, i, core->tq[c]);
		i = c;
	}
	tq_set(core, i, d);
}

static bool tq_push(struct mcc_core *core, struct mcc_dom *d)
{
	if (core->ntq == core->tq_cap) {
		uint32_t cap = core->tq_cap ? core->tq_cap * 2 : 64;
		struct mcc_dom **v = realloc(core->tq, cap * sizeof(*v));
		if (!v)
			return false; /* it stays active */
		core->tq = v;
		core->tq_cap = cap;
	}
	tq_set(core, core->ntq++, d);
	tq_sift(core, core->ntq - 1);
	return true;
}

static void tq_remove(struct mcc_core *core, struct mcc_dom *d)
{
	if (!d->tq_idx)
		return;
	uint32_t i = d->tq_idx - 1;
	d->tq_idx = 0;
	struct mcc_dom *last = core->tq[--core->ntq];
	if (i < core->ntq) {
		tq_set(core, i, last);
		tq_sift(core, i);
	}
}

/* ---- the active lists */

static void act_unlink(struct mcc_core *core, struct mcc_dom *d)
{
	if (d->aprev)
		d->aprev->anext = d->anext;
	else
		core->act[d->kind] = d->anext;
	if (d->anext)
		d->anext->aprev = d->aprev;
	d->anext = d->aprev = NULL;
	d->active = false;
	core->nact[d->kind]--;
}

/* Fold the domain's returned stale credit, then sum its lanes (the tick's
 * order for every domain, credit_snapshot), for one woken late. */
static void dom_snap(struct mcc_core *core, struct mcc_dom *d)
{
	uint64_t r = mcc_take(&d->stale_returned);
	if (r)
		atomic_fetch_sub_explicit(&d->inflight, (int64_t)r, RLX);
	mcc_dom_sum(core, d, &d->cs.tmp, &d->cs.tmp_credit, &d->cs.tmp_stale);
	d->stamp = core->scan_stamp;
	atomic_store_explicit(&d->stale_est, d->cs.tmp_stale, RLX);
	mcc_dom_set_limit(d);
}

void mcc_dom_wake(struct mcc_core *core, struct mcc_dom *d)
{
	if (d->active || d->closed)
		return;
	tq_remove(core, d);
	struct mcc_dom **head = &core->act[d->kind];
	d->aprev = NULL;
	d->anext = *head;
	if (*head)
		(*head)->aprev = d;
	*head = d;
	d->active = true;
	core->nact[d->kind]++;
	if (d->rested) {
		/* the epochs it rested through: each would only have set the
		 * time it last held nothing */
		d->cs.drained_ns = core->last_tick;
		d->rested = false;
	}
	if (core->snap_phase)
		dom_snap(core, d);
}

void mcc_dom_forget(struct mcc_core *core, struct mcc_dom *d)
{
	if (d->active)
		act_unlink(core, d);
	tq_remove(core, d);
}

static void dom_rest(struct mcc_core *core, struct mcc_dom *d, bool timer)
{
	act_unlink(core, d);
	d->rested = true;
	if (timer && !tq_push(core, d))
		mcc_dom_wake(core, d);
}

/* Every domain that is not active: the reference mode. O(domains). */
static void wake_every(struct mcc_core *core)
{
	struct mcc_dom *lists[2] = { core->devices, core->routes };
	for (int l = 0; l < 2; l++)
		for (struct mcc_dom *d = lists[l]; d; d = d->next)
			mcc_dom_wake(core, d);
}

/* Resting domains a lane counted for since their last visit. */
static void wake_touched(struct mcc_core *core)
{
	for (uint32_t i = 0; i < core->ntouched; i++) {
		struct mcc_dom *d = core->touched[i];
		const struct mcc_ctl *cs = &d->cs;
		if (d->active || d->closed)
			continue;
		if (cs->tmp.admits != cs->last_admits || cs->tmp.completions != cs->last_compl ||
		    cs->tmp.completed_bytes != cs->last_bytes || cs->tmp.lat_sum_ns != cs->last_lat_sum ||
		    cs->tmp.lat_samples != cs->last_lat_n)
			mcc_dom_wake(core, d);
	}
}

/* A visit found no activity in the epoch (measure, gather). */
static bool epoch_idle(const struct mcc_dom *d)
{
	const struct mcc_ctl *cs = &d->cs;
	return !(cs->ep_admits | cs->ep_compl | cs->ep_bytes | cs->ep_actual | cs->ep_rnr |
	         cs->ep_latn);
}

static void ctl_domain(struct mcc_core *core, struct mcc_dom *d, uint64_t now, uint64_t dt);

/* The control step of one active domain, then whether it rests. */
static void visit(struct mcc_core *core, struct mcc_dom *d, uint64_t now, uint64_t dt)
{
	bool idle = !core->full_walk && epoch_idle(d);
	struct mcc_law_state law0;
	uint64_t ctl0 = 0, w0 = 0;
	if (idle) {
		law0 = d->cs.law;
		ctl0 = atomic_load_explicit(&d->ctl, RLX);
		w0 = atomic_load_explicit(&d->window, RLX);
	}
	ctl_domain(core, d, now, dt);
	if (!idle)
		return;
	uint64_t ctl = atomic_load_explicit(&d->ctl, RLX);
	if (ctl != ctl0 || atomic_load_explicit(&d->window, RLX) != w0 ||
	    memcmp(&law0, &d->cs.law, sizeof(law0)) != 0 || d->cs.busy || d->cs.pace ||
	    d->cs.hard_errors || atomic_load_explicit(&d->paced, RLX) ||
	    atomic_load_explicit(&d->inflight, RLX) || atomic_load_explicit(&d->stale_returned, RLX))
		return;
	uint32_t st = mcc_ctl_state(ctl);
	if (st == MCC_PATH_HEALTHY || st == MCC_PATH_CONGESTED)
		dom_rest(core, d, false);
	else if (st == MCC_PATH_QUARANTINED && atomic_load_explicit(&d->q_until_ns, RLX) > now)
		dom_rest(core, d, true);
}

/* ------------------------------------------------------------------- tick */

/*
 * Pressure (see README.md "Pressure").
 *
 * A domain's drain time D is the mean post-to-poll latency of its completed
 * WRs when the host samples timestamps, else in-flight bytes / delivery
 * rate R of posted work (R from completed bytes per epoch, smoothed 1/4).
 * An epoch that holds bytes and delivers none decays R by 1/4, so D grows
 * by 4/3 per empty epoch; D is capped at what the backlog has waited: the
 * time S since the domain last delivered (or held nothing) plus the
 * in-flight bytes at the rate measured then, S + B / R_then. Without the
 * cap a 0.3 s completion gap (a descheduled poller, a TCG guest) read as
 * 11 s of drain; with it a long gap grows linearly.
 * By Little's law both describe the same average backlog B = R x D.
 *
 * Queueing q is what a domain compares with target_drain_us:
 *
 *   route:   q = D_route - base   (base: the path's own drain time, below)
 *   device:  q = D_dev            (the target is the reference; beyond the
 *                                  base only on a path whose base is at least
 *                                  MCC_LONG_BASE_X targets: base_of)
 *   either, never below the base RTT the host stated (route_open
 *   base_rtt_ns, [engine] base_rtt_us): a round trip is not queueing.
 *
 * Nothing is subtracted for the local NIC serialising the host's own
 * backlog. Per sender that wait cannot be told from a shared queue beyond
 * the NIC (delivery near line rate, drain time rising with the window look
 * the same in both), and subtracting it made the sender that first took most
 * of a bottleneck blind to the queue it kept there while its competitors saw
 * all of it: two or three flows locked in at 90/5/5 % of one port. A lone
 * sender's own backlog now counts as queueing: its window settles where its
 * drain time is near base + target, which still keeps its NIC busy (goodput
 * unchanged; the rest waits in the host's queue).
 *
 * A device compares its drain time with the target itself: a reference that
 * every sender behind a bottleneck shares, where each route's learned base
 * differs with the queue it met when it learned it (a joiner learns a
 * standing queue as its base). A common reference is what gives a delay
 * signal a single fair operating point ("ECN or Delay", CoNEXT 2016); the
 * route's base keeps a path whose own delay exceeds the target (a long link,
 * emulation) from being cut by it.
 *
 * Route-limited routes do not drive their device (RFC WC matrix: receiver
 * pressure only "on the receiving route ... do not affect other receivers
 * sharing the source NIC"): a route with receiver pressure this epoch, not
 * HEALTHY (CONGESTED: already bounded by its own cut window; SUSPECT,
 * QUARANTINED, PROBING: its bytes may be stuck), holding bytes without any
 * delivery, or draining much slower than its device as a whole (D_route >
 * 2 D_dev + target) has its in-flight bytes, rate and latency samples
 * removed from its device's computation, and its rate from the device's
 * capacity. HEALTHY routes that share one bottleneck drain like their device
 * and keep counting, so pressure that several routes share cuts the device
 * too (in the same epoch as the routes' first cut).
 */
/* double -> uint64_t for rates and times, saturating at 2^60 (an out-of-range
 * conversion is undefined, and 3 * rate in the smoothing must not wrap).
 * Only absurd host counters (telemetry jumps, fuzzed input) reach the cap. */
#define MCC_SAT_MAX ((uint64_t)1 << 60)
static uint64_t sat_u64(double v)
{
	return v >= (double)MCC_SAT_MAX ? MCC_SAT_MAX : v > 0 ? (uint64_t)v : 0;
}

static uint64_t drain_of(uint64_t bytes, uint64_t rate, uint64_t lat, uint64_t latn)
{
	if (latn)
		return lat / latn / 1000;
	return rate ? sat_u64((double)bytes * 1e6 / (double)rate) : 0;
}

static uint64_t sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/* The drain time `drain_us` of `bytes` in flight, capped during a gap in
 * delivery at the gap plus their drain at the rate measured before it (also
 * once the decayed rate reaches 0, where drain_of() has no measure). Of the
 * gap, one stated round trip `rtt_us` is no stall: a path that long
 * delivers a window in bursts one round trip apart. Within that round trip
 * an epoch that delivers nothing has measured nothing new either, so it
 * reads at most what the last one measured (`cs->drain_us`): bytes posted
 * since (a window doubled in slow start) cannot have come back yet, and
 * at the rate of the last delivery, measured on half as many, they read
 * as a queue (a 5 ms path was cut at its first 1 MiB). */
static uint64_t gap_capped(const struct mcc_ctl *cs, uint64_t bytes, uint64_t drain_us,
                           uint64_t now, uint64_t rtt_us)
{
	if (!bytes || now == cs->drained_ns)
		return drain_us;
	uint64_t gap_us = (now - cs->drained_ns) / 1000;
	uint64_t cap = gap_us <= rtt_us ? cs->drain_us : UINT64_MAX;
	if (cs->dlv_rate) {
		uint64_t c = sub0(gap_us, rtt_us) + drain_of(bytes, cs->dlv_rate, 0, 0);
		cap = c < cap ? c : cap;
	}
	if (cap == UINT64_MAX)
		return drain_us;
	return drain_us && drain_us < cap ? drain_us : cap;
}

static void gather(struct mcc_dom *d)
{
	struct mcc_ctl *cs = &d->cs;
	const struct mcc_counters *t = &cs->tmp; /* mcc_scan_lanes() */
	cs->ep_bytes = t->completed_bytes - cs->last_bytes;
	cs->ep_compl = t->completions - cs->last_compl;
	cs->ep_lat = t->lat_sum_ns - cs->last_lat_sum;
	cs->ep_latn = t->lat_samples - cs->last_lat_n;
	cs->ep_admits = t->admits - cs->last_admits;
	cs->last_admits = t->admits;
	cs->last_bytes = t->completed_bytes;
	cs->last_compl = t->completions;
	cs->last_lat_sum = t->lat_sum_ns;
	cs->last_lat_n = t->lat_samples;
	if (d->kind == MCC_DOM_DEVICE) { /* TENT DeviceSelector telemetry */
		uint64_t tel = atomic_load_explicit(&d->telemetry, RLX);
		if (cs->tel_seen && tel > cs->last_tel && tel - cs->last_tel > cs->ep_bytes)
			cs->ep_bytes = tel - cs->last_tel;
		if (tel) {
			cs->tel_seen = true;
			cs->last_tel = tel;
		}
	}
}

/* The slow delivery rate and its peak (control.c "A software device"), in
 * epochs with at least a quarter of the window in flight: a batch's last
 * slices, or an application between batches, deliver little because little
 * is there, not because the path collapsed. From 0, so a first epoch's burst
 * is not the peak. */
static void slow_rate(struct mcc_ctl *cs, uint64_t dt, uint64_t now, uint64_t window)
{
	double k = dt >= MCC_SW_RATE_TAU_NS ? 1.0 : (double)dt / (double)MCC_SW_RATE_TAU_NS;
	double rs = (double)cs->rate_slow;
	cs->rate_slow = sat_u64(rs + ((double)cs->ep_rate - rs) * k);
	if (now - cs->peak_t0 >= MCC_SW_PEAK_NS) {
		cs->peak_prev = cs->peak_cur;
		cs->peak_wk_prev = cs->peak_wk_cur;
		cs->peak_cur = 0;
		cs->peak_t0 = now;
	}
	if (cs->rate_slow > cs->peak_cur) {
		cs->peak_cur = cs->rate_slow;
		cs->peak_wk_cur = (uint32_t)(window >> 10 < UINT32_MAX ? window >> 10 : UINT32_MAX);
	}
}

/* First pass over every domain: feedback of the epoch, delivery rate,
 * in-flight and drain time. No state changes. */
static void measure(struct mcc_dom *d, uint64_t dt, uint64_t now)
{
	struct mcc_ctl *cs = &d->cs;
	gather(d);
	uint64_t shared = mcc_dom_inflight(d);
	uint64_t actual = shared > cs->tmp_credit ? shared - cs->tmp_credit : 0;
	cs->ep_rate = dt ? sat_u64((double)cs->ep_bytes * 1e9 / (double)dt) : 0;
	if (dt && (cs->ep_bytes || actual)) {
		cs->rate = cs->rate ? (3 * cs->rate + cs->ep_rate) / 4 : cs->ep_rate;
		uint64_t w = atomic_load_explicit(&d->window, RLX);
		if (4 * actual >= w)
			slow_rate(cs, dt, now, w); /* backlogged: not an application's pause */
	}
	if (cs->ep_bytes || !actual) {
		cs->drained_ns = now;
		cs->dlv_rate = cs->rate;
	}
	cs->ep_actual = actual;
	cs->ep_rnr = mcc_take(&d->rnr_pending);
	cs->drain_us =
	        gap_capped(cs, actual, drain_of(actual, cs->rate, cs->ep_lat, cs->ep_latn), now,
	                   d->sbase_us);
	if (d->kind == MCC_DOM_DEVICE) {
		struct mcc_device *dv = (struct mcc_device *)d;
		dv->x_actual = dv->x_rate = dv->x_lat = dv->x_latn = 0;
		dv->b_rate = dv->b_sum = 0;
	}
	cs->route_limited = false;
}

/* Second pass, routes: whether the route is limited beyond the device (then
 * excluded from it). */
static void route_pressure(struct mcc_core *core, struct mcc_route *r)
{
	struct mcc_ctl *cs = &r->d.cs;
	struct mcc_device *dv = atomic_load_explicit(&r->dev, RLX);
	const struct mcc_ctl *dc = dv ? &dv->d.cs : NULL;
	uint32_t st = mcc_ctl_state(atomic_load_explicit(&r->d.ctl, RLX));
	bool lim = cs->ep_rnr || st != MCC_PATH_HEALTHY || (cs->ep_actual && !cs->rate) ||
	           (dc && cs->drain_us > 2 * dc->drain_us + core->p.target_drain_us);
	cs->route_limited = lim;
	if (lim && dv) {
		struct mcc_device *x = dv;
		x->x_actual += cs->ep_actual;
		/* at most what it delivered this epoch: a rate kept from a busy
		 * spell before an idle one (rates only move in active epochs)
		 * has long decayed out of the device's own rate */
		x->x_rate += cs->rate < cs->ep_rate ? cs->rate : cs->ep_rate;
		x->x_lat += cs->ep_lat;
		x->x_latn += cs->ep_latn;
	} else if (dv && cs->rate && core->sbase_seen) {
		/* KiB/s, at most 2^26 (64 GiB/s), x us (at most 10^6): under
		 * 2^46 per route (none while no host stated a base) */
		uint64_t k = cs->rate >> 10;
		if (k > (1u << 26))
			k = 1u << 26;
		dv->b_rate += k;
		dv->b_sum += k * r->d.sbase_us;
	}
}

/* Second pass, devices: drain time and excess over the traffic of routes
 * that are not route-limited, against the capacity they leave. */
static void device_pressure(struct mcc_device *dv, uint64_t now)
{
	struct mcc_ctl *cs = &dv->d.cs;
	uint64_t a = sub0(cs->ep_actual, dv->x_actual);
	uint64_t latn = sub0(cs->ep_latn, dv->x_latn);
	uint64_t lat = latn ? sub0(cs->ep_lat, dv->x_lat) : 0;
	uint64_t rate = sub0(cs->rate, dv->x_rate);
	if (!rate) /* rates are smoothed per domain: no usable difference */
		rate = cs->rate;
	if (dv->b_rate) /* else the last one: an epoch without deliveries */
		dv->d.sbase_us = (uint32_t)(dv->b_sum / dv->b_rate);
	cs->drain_us = gap_capped(cs, a, drain_of(a, rate, lat, latn), now, dv->d.sbase_us);
}

/*
 * Base (see README.md "Pressure"): the path's own drain time without
 * queueing, learned as the minimum drain time over the last one to two
 * buckets of MCC_BASE_EPOCHS epochs with completions (the windowed minimum
 * RTT of delay-based controllers such as TIMELY and Swift). An emulated or
 * long path whose drain time never falls under target_drain_us is thereby
 * not congested by itself; queueing that builds on top of it still is. The
 * current epoch counts, so a domain's first epoch is its own base.
 * Congestion never resets it (a route that did so at its first cut learned
 * the queue it was cut for as its own delay); a path back from quarantine
 * does (recover: its new endpoint may take another way).
 */
static void base_learn(struct mcc_ctl *cs)
{
	if (!cs->base_n || cs->drain_us < cs->base_cur)
		cs->base_cur = cs->drain_us;
	cs->base_us = cs->base_prev_ok && cs->base_prev < cs->base_cur ? cs->base_prev
	                                                                : cs->base_cur;
	if (++cs->base_n >= MCC_BASE_EPOCHS) {
		cs->base_prev = cs->base_cur;
		cs->base_prev_ok = true;
		cs->base_n = 0;
	}
}

/*
 * A software device (see README.md "A software device"): rdma_rxe and siw
 * run the transport on the host's CPUs, so the device serialises at
 * whatever rate the host gives it, not at its port's nominal rate, and that
 * rate keeps rising with the bytes in flight (fewer, larger batches). Its
 * paths' drain time therefore grows with the window like a queue behind a
 * bottleneck, but the queue is the host's own. On such a device queueing
 * counts only while the delivery rate has collapsed: the rate smoothed over
 * 250 ms of backlogged epochs (slow_rate) below half its peak over the last
 * 1-2 s (a shaped or congested egress, a stalled peer), the peak scaled
 * to the window now where that is smaller than the peak's (a smaller window
 * delivers less on such a host: a rate that fell with a cut is the cut's
 * doing, and counting it held a host's own low spell at the minimum
 * window). Hardware devices are not affected.
 */
static bool software_path(const struct mcc_dom *d)
{
	const struct mcc_device *dv =
	        d->kind == MCC_DOM_DEVICE ? (const struct mcc_device *)d
	                                  : atomic_load_explicit(&((const struct mcc_route *)d)->dev, RLX);
	return dv && dv->software;
}

/* The base a domain's queueing is measured beyond: a route's learned base;
 * a device's only when its path is a long one (a learned base of at least
 * MCC_LONG_BASE_X targets), else none (see "Pressure" above); and never
 * below the base RTT the host stated (route_open base_rtt_ns: a path's
 * round trip is not queueing). A device's stated base is the mean of its
 * routes' that drove it this epoch, weighted by their delivery rates (by
 * Little's law its drain time is their drain times' mean, weighted so). */
static uint64_t base_of(const struct mcc_dom *d, uint64_t target_us)
{
	const struct mcc_ctl *cs = &d->cs;
	uint64_t b = d->kind == MCC_DOM_ROUTE || cs->base_us >= MCC_LONG_BASE_X * target_us
	                     ? cs->base_us
	                     : 0;
	return b > d->sbase_us ? b : d->sbase_us;
}

/* The queueing of domain d whose base (base_of) is `base`. */
static uint64_t queueing(const struct mcc_dom *d, uint64_t base)
{
	const struct mcc_ctl *cs = &d->cs;
	uint64_t q = sub0(cs->drain_us, base);
	if (!q || !software_path(d))
		return q;
	bool prev = cs->peak_prev > cs->peak_cur;
	uint64_t peak = prev ? cs->peak_prev : cs->peak_cur;
	uint64_t peak_w = (uint64_t)(prev ? cs->peak_wk_prev : cs->peak_wk_cur) << 10;
	/* below 1 / MCC_SW_DEEP of the peak it has collapsed whatever the
	 * window; else against what this window delivered at the peak: on
	 * such a host a smaller window delivers less in proportion, so a rate
	 * that fell with a cut is the cut's doing, not the path's */
	if (cs->rate_slow < peak / MCC_SW_DEEP)
		return q;
	uint64_t w = atomic_load_explicit(&d->window, RLX);
	if (w < peak_w)
		peak = mcc_law_scale(peak, w, peak_w);
	return cs->rate_slow < peak / 2 ? q : 0;
}

/* A route's pace (law.h "Pacing"): `pace` bytes per epoch, 0 ends it. A
 * new pace starts with no tokens. */
static void pace_set(struct mcc_dom *d, uint64_t pace)
{
	struct mcc_ctl *cs = &d->cs;
	if (pace == cs->pace)
		return;
	if (!pace || !cs->pace) {
		atomic_store_explicit(&d->pace_tokens, 0, RLX);
		atomic_store_explicit(&d->paced, pace != 0, RLX);
	}
	cs->pace = pace;
	mcc_dom_set_limit(d);
}

/* Tokens earned over `dt` ns, at most two slices' worth in store. */
static void pace_tick(struct mcc_core *core, struct mcc_dom *d, uint64_t dt)
{
	struct mcc_ctl *cs = &d->cs;
	if (!cs->pace)
		return;
	uint64_t slice = atomic_load_explicit(&d->max_slice, RLX);
	int64_t cap = (int64_t)(2 * (slice ? slice : MCC_SLICE_REF));
	int64_t add = (int64_t)mcc_law_scale(cs->pace, dt, (uint64_t)core->p.epoch_us * 1000);
	int64_t tok = atomic_load_explicit(&d->pace_tokens, RLX), want;
	do {
		want = tok + add < cap ? tok + add : cap;
	} while (!atomic_compare_exchange_weak_explicit(&d->pace_tokens, &tok, want, RLX, RLX));
}

/* One epoch of the control law (law.h) for a HEALTHY, CONGESTED or SUSPECT
 * domain, given the measurement record; the core applies the answer: window
 * (a smaller one counts as a cut), pace (a CONGESTED route only) and
 * congestion (the state, or where SUSPECT returns to). */
static void law_epoch(struct mcc_core *core, struct mcc_dom *d, uint32_t st, uint64_t base,
                      uint64_t q, bool based, bool clean, bool signal, uint64_t now)
{
	struct mcc_ctl *cs = &d->cs;
	const bool suspect = st == MCC_PATH_SUSPECT;
	const uint64_t w = atomic_load_explicit(&d->window, RLX);
	const struct mcc_law_in in = {
		.window = w,
		.pace = cs->pace,
		.actual = cs->ep_actual,
		.ep_bytes = cs->ep_bytes,
		.rate = cs->rate,
		.drain_us = cs->drain_us,
		.base_us = base,
		.stated_us = d->sbase_us,
		.q_us = q,
		.slice = atomic_load_explicit(&d->max_slice, RLX),
		.epoch_us = core->p.epoch_us,
		.route = d->kind == MCC_DOM_ROUTE,
		.software = software_path(d),
		.based = based,
		.clean = clean,
		.signal = signal,
		.congested = (suspect ? cs->suspect_prev : st) == MCC_PATH_CONGESTED,
		.suspect = suspect,
	};
	struct mcc_law_out out = { w, cs->pace, in.congested };
	core->law->epoch(&core->p, &cs->law, &in, &out);

	uint32_t ns = out.congested ? MCC_PATH_CONGESTED : MCC_PATH_HEALTHY;
	if (suspect) {
		cs->suspect_prev = ns;
		ns = st;
	}
	const uint64_t nw = set_window(core, d, out.window);
	if (nw < w && out.congested)
		cs->window_cuts++; /* a calm epoch's smaller window is no cut (the aimd pull) */
	if (ns != st)
		mcc_ctl_set_state(core, d, ns, now);
	else if (nw != w)
		mcc_ctl_publish(core, d, st, nw < w);
	if (ns == MCC_PATH_CONGESTED && in.route) {
		if (out.pace && (!cs->pace || out.pace < cs->pace))
			cs->window_cuts++; /* a pace begun or lowered is a cut too */
		pace_set(d, out.pace);
	}
}

static void ctl_domain(struct mcc_core *core, struct mcc_dom *d, uint64_t now, uint64_t dt)
{
	struct mcc_ctl *cs = &d->cs;
	const struct mcc_params *p = &core->p;
	uint64_t hard = mcc_take(&d->hard_pending);
	uint64_t rnr = cs->ep_rnr;
	uint64_t pok = mcc_take(&d->probe_ok);
	uint64_t pfail = mcc_take(&d->probe_fail);
	uint64_t backlog = atomic_load_explicit(&d->backlog, RLX);
	bool grew = backlog > cs->last_backlog;
	cs->last_backlog = backlog;

	bool based = cs->base_n || cs->base_prev_ok; /* a base from earlier epochs */
	if (cs->ep_compl)
		base_learn(cs);
	uint64_t base = base_of(d, p->target_drain_us);
	uint64_t q = queueing(d, base); /* beyond the base */
	bool high = q > p->target_drain_us || rnr || grew;

	uint32_t from = mcc_ctl_state(atomic_load_explicit(&d->ctl, RLX));
	bool traffic = cs->ep_admits || cs->ep_compl || cs->ep_actual;
	if (traffic)
		cs->busy_ns = now;
	if (cs->ep_compl) { /* before this epoch's errors: it delivered */
		cs->delivered = true;
		cs->failing = false;
	}
	if (hard)
		mcc_ctl_hard_error(core, d, (uint32_t)hard, now);
	bool clean = cs->ep_compl && !cs->hard_epoch && !rnr;
	if (clean)
		cs->clean_streak++;
	/* hard errors decay after a flap window without one ("Faults") */
	if (cs->hard_errors && now >= cs->last_hard_ns &&
	    now - cs->last_hard_ns >= (uint64_t)p->flap_window_ms * NS_PER_MS)
		cs->hard_errors = 0;
	uint32_t st = mcc_ctl_state(atomic_load_explicit(&d->ctl, RLX));
	switch (st) {
	case MCC_PATH_QUARANTINED:
		if (now >= atomic_load_explicit(&d->q_until_ns, RLX))
			enter_probing(core, d, now);
		break;
	case MCC_PATH_PROBING:
		if (pfail) {
			mcc_ctl_quarantine(core, d, now);
			break;
		}
		cs->probe_ok += (uint32_t)pok;
		if (cs->probe_ok >= p->probe_successes)
			recover(core, d, now);
		break;
	default:
		if (st == MCC_PATH_SUSPECT &&
		    ((clean && !hard) ||
		     (!traffic && !hard && now >= cs->busy_ns && now - cs->busy_ns >= (uint64_t)p->cooldown_ms * NS_PER_MS))) {
			/* a clean epoch, or idle for a cooldown ("Faults") */
			st = cs->suspect_prev;
			mcc_ctl_set_state(core, d, st, now);
		}
		law_epoch(core, d, st, base, q, based, clean, rnr || grew, now);
		pace_tick(core, d, dt);
		break;
	}
	cs->hard_epoch = 0;
	bool busy = cs->ep_admits >= p->credit_min_admits;
	if (busy != cs->busy) { /* enter or leave credit mode */
		cs->busy = busy;
		mcc_ctl_publish(core, d, mcc_ctl_state(atomic_load_explicit(&d->ctl, RLX)), false);
	}
	if (core->rec && (cs->ep_compl || high)) {
		uint32_t to = mcc_ctl_state(atomic_load_explicit(&d->ctl, RLX));
		rec_state(core, MCC_REC_EPOCH, d, from, to, high ? MCC_CLASS_CONGESTION : MCC_CLASS_SUCCESS,
		          d->kind == MCC_DOM_DEVICE ? MCC_SCOPE_DEVICE : MCC_SCOPE_ROUTE,
		          MCC_REASON_NONE, cs->ep_bytes, now, 0);
	}
}

/* Fold stale credit flushed since the last tick, then snapshot the credit
 * lanes still cache (in this order: see domain.c), and the feedback
 * counters, for the active domains; resting ones whose totals moved are
 * woken (and folded and summed as they wake: dom_snap). */
static void credit_snapshot(struct mcc_core *core)
{
	for (int k = 0; k < 2; k++)
		for (struct mcc_dom *d = core->act[k]; d; d = d->anext) {
			uint64_t r = mcc_take(&d->stale_returned);
			if (r)
				atomic_fetch_sub_explicit(&d->inflight, (int64_t)r, RLX);
		}
	core->snap_phase = true;
	core->scan_stable = mcc_scan_lanes(core);
	wake_touched(core);
}

/* The stale credit the snapshot found, published as the domain's bound
 * (the tick's pass over the active domains, before their measurement; a
 * domain woken after the snapshot had it from dom_snap). */
static void stale_publish(struct mcc_dom *d)
{
	atomic_store_explicit(&d->stale_est, d->cs.tmp_stale, RLX);
	mcc_dom_set_limit(d);
}

/* Evidence from a slow path (core->lock held). */
static void ev_slow(struct mcc_core *core, const struct mcc_task_ref_v1 *task, uint32_t reason,
                    uint32_t scope, struct mcc_route *r, uint32_t generation, uint64_t now)
{
	if (!mcc_task_is_set(task) || reason == MCC_REASON_NONE)
		return;
	struct mcc_ev e = { 0 };
	e.kind = MCC_EVK_ANOMALY;
	e.batch_id = task->batch_id;
	e.task_id = task->task_id;
	e.attempt = task->attempt;
	e.generation = generation;
	e.reason = (uint8_t)reason;
	e.scope = (uint8_t)scope;
	e.observed_ns = now;
	e.observed = MCC_OBS_REASON | MCC_OBS_TIME | MCC_OBS_GENERATION;
	if (scope != MCC_SCOPE_NONE)
		e.observed |= MCC_OBS_SCOPE;
	if (r) {
		uint32_t st = mcc_ctl_state(atomic_load_explicit(&r->d.ctl, RLX));
		e.route_id = r->route_id;
		e.name_idx = r->name_idx;
		e.path_state = (uint8_t)st;
		e.window = atomic_load_explicit(&r->d.window, RLX);
		e.inflight = mcc_dom_inflight_admission(&r->d);
		e.observed |= MCC_OBS_PATH | MCC_OBS_WINDOW | MCC_OBS_INFLIGHT;
		if (st == MCC_PATH_QUARANTINED) {
			e.cooldown_ms = mcc_ctl_cooldown_left_ms(&r->d, now);
			e.observed |= MCC_OBS_COOLDOWN;
		}
	}
	mcc_ev_apply_direct(core, &e);
}

/* A route timeout (WC, soft deadline, cm event) on the route: counted unless
 * stale, already isolated, or explained by unrefreshed stale metadata.
 * Returns the task reason to record. */
static uint32_t route_timeout(struct mcc_core *core, struct mcc_route *r, uint32_t generation,
                              uint32_t reason, uint64_t now)
{
	uint32_t st = mcc_ctl_state(atomic_load_explicit(&r->d.ctl, RLX));
	uint32_t meta = atomic_load_explicit(&r->d.meta_stale_gen, RLX);
	if (st == MCC_PATH_QUARANTINED)
		return reason;
	if (meta && generation <= meta)
		return MCC_REASON_REMOTE_METADATA;
	mcc_ctl_hard_error(core, &r->d, 1, now);
	return st == MCC_PATH_PROBING ? MCC_REASON_PROBE_FAILED : reason;
}

static void deadlines(struct mcc_core *core, uint64_t now)
{
	uint64_t ep = atomic_load_explicit(&core->epoch_no, RLX);
	for (uint32_t i = 0; i < core->ndl; i++) {
		struct mcc_deadline *dl = &core->dl[i];
		struct mcc_route *r = dl->route;
		struct mcc_device *dv = dl->dev ? dl->dev : atomic_load_explicit(&r->dev, RLX);
		bool progress = atomic_load_explicit(&dv->progress_mark, RLX) == ep;
		struct mcc_cls c = mcc_classify(MCC_SRC_SIGNAL, MCC_SIG_SOFT_DEADLINE,
		                                progress ? MCC_CLS_AUX_POLLER_PROGRESS : 0);
		uint32_t reason = c.reason;
		uint32_t st = mcc_ctl_state(atomic_load_explicit(&r->d.ctl, RLX));
		if (dl->generation && dl->generation < atomic_load_explicit(&r->d.generation, RLX)) {
			atomic_fetch_add_explicit(&r->d.stale_feedback, 1, RLX);
			continue;
		}
		if (c.flags & MCC_CLS_F_HARD) {
			reason = route_timeout(core, r, dl->generation, reason, now);
			rec_state(core, MCC_REC_SIGNAL, &r->d, st,
			          mcc_ctl_state(atomic_load_explicit(&r->d.ctl, RLX)), c.cls, c.scope,
			          reason, 0, dl->ts, MCC_SIG_SOFT_DEADLINE);
		} else {
			/* poller stalled: a diagnostic, not a route timeout */
			atomic_fetch_add_explicit(&r->d.suppressed, 1, RLX);
			if (&dv->d != &r->d)
				atomic_fetch_add_explicit(&dv->d.suppressed, 1, RLX);
			rec_state(core, MCC_REC_SUPPRESSED, &r->d, st, st, c.cls, c.scope, reason, 0,
			          dl->ts, MCC_SIG_SOFT_DEADLINE);
		}
		ev_slow(core, &dl->task, reason, c.scope, r, dl->generation, dl->ts);
	}
	core->ndl = 0;
}

void mcc_core_tick(void *ctx, uint64_t now)
{
	struct mcc_core *core = ctx;
	if (!core)
		return;
	pthread_mutex_lock(&core->lock);
	uint64_t dt = core->ticked ? (now > core->last_tick ? now - core->last_tick : 0)
	                           : (uint64_t)core->p.epoch_us * 1000;
	atomic_store_explicit(&core->now_ns, now, RLX);
	uint32_t lanes = atomic_load_explicit(&core->lanes_open, RLX);
	if (lanes != core->lanes_pub) { /* chunks follow the lanes open (before the
	                                 * snapshot: old-size credit counts as stale).
	                                 * Every domain, resting ones too (not woken:
	                                 * in exact mode they cache no credit, and the
	                                 * epoch stays what a visit would leave):
	                                 * O(domains), once per lane open or close */
		core->lanes_pub = lanes;
		struct mcc_dom *lists[2] = { core->devices, core->routes };
		for (int l = 0; l < 2; l++)
			for (struct mcc_dom *d = lists[l]; d; d = d->next)
				ctl_write(core, d, mcc_ctl_state(atomic_load_explicit(&d->ctl, RLX)), true);
	}
	mcc_ev_drain(core);
	/* cooldowns that end now, the reference mode */
	while (core->ntq && tq_key(core->tq[0]) <= now)
		mcc_dom_wake(core, core->tq[0]);
	if (core->full_walk)
		wake_every(core);
	credit_snapshot(core);
	deadlines(core, now);
	core->snap_phase = false;
	core->visits += core->nact[MCC_DOM_DEVICE] + core->nact[MCC_DOM_ROUTE];
	/* Devices are measured first: a route's pressure needs its device's
	 * drain time. Each route is then measured, judged and visited in one
	 * pass (one trip through its lines): its visit changes no other
	 * domain's measurement, and reads nothing of its device's but that
	 * drain time and its software flag. A device's pressure excludes its
	 * route-limited routes, so devices are judged and visited last. */
	for (struct mcc_dom *d = core->act[MCC_DOM_DEVICE]; d; d = d->anext) {
		stale_publish(d);
		measure(d, dt, now);
	}
	for (struct mcc_dom *d = core->act[MCC_DOM_ROUTE], *n; d; d = n) {
		n = d->anext;
		stale_publish(d);
		measure(d, dt, now);
		route_pressure(core, (struct mcc_route *)d);
		visit(core, d, now, dt);
	}
	for (struct mcc_dom *d = core->act[MCC_DOM_DEVICE], *n; d; d = n) {
		n = d->anext;
		device_pressure((struct mcc_device *)d, now);
		visit(core, d, now, dt);
	}
	mcc_dom_sweep_zombies(core);
	core->last_tick = now;
	core->ticked = true;
	atomic_fetch_add_explicit(&core->epoch_no, 1, RLX);
	pthread_mutex_unlock(&core->lock);
}

/* ------------------------------------------------------- scoped quarantine */

enum match { M_DEVICE, M_PORT, M_CQ };

static void quarantine_routes(struct mcc_core *core, struct mcc_device *dv, enum match m,
                              uint32_t key, uint64_t now)
{
	for (struct mcc_route *r = dv->routes; r; r = r->dnext) {
		if ((m == M_PORT && r->port_num != key) || (m == M_CQ && r->cq_id != key))
			continue;
		mcc_ctl_quarantine(core, &r->d, now);
	}
}

static void quarantine_scope(struct mcc_core *core, uint32_t scope, struct mcc_device *dv,
                             struct mcc_route *r, uint32_t port, uint32_t cq, uint64_t now)
{
	switch (scope) {
	case MCC_SCOPE_DEVICE: /* the local device and its routes; never the peer */
		mcc_ctl_quarantine(core, &dv->d, now);
		quarantine_routes(core, dv, M_DEVICE, 0, now);
		break;
	case MCC_SCOPE_PORT:
		quarantine_routes(core, dv, M_PORT, port, now);
		break;
	case MCC_SCOPE_CQ:
		quarantine_routes(core, dv, M_CQ, cq, now);
		break;
	default:
		if (r)
			mcc_ctl_quarantine(core, &r->d, now);
		break;
	}
}

void mcc_core_on_async_event(void *ctx, const struct mcc_async_event_v1 *ev)
{
	struct mcc_core *core = ctx;
	if (!core || !ev || ev->struct_size < MCC_ASYNC_EVENT_V1_0_SIZE || !ev->device)
		return;
	struct mcc_cls c = mcc_classify_async(ev->event_type);
	struct mcc_device *dv = ev->device;
	struct mcc_route *r = ev->route;
	pthread_mutex_lock(&core->lock);
	uint64_t now = ev->now_ns ? ev->now_ns : mcc_core_now(core);
	struct mcc_dom *obs = r ? &r->d : &dv->d;
	uint32_t from = mcc_ctl_state(atomic_load_explicit(&obs->ctl, RLX));
	if (c.flags & MCC_CLS_F_QUARANTINE) {
		quarantine_scope(core, c.scope, dv, r, ev->port_num, ev->cq_id, now);
	} else if ((c.flags & MCC_CLS_F_HARD) && r) {
		if (ev->generation && ev->generation < atomic_load_explicit(&r->d.generation, RLX))
			atomic_fetch_add_explicit(&r->d.stale_feedback, 1, RLX); /* old QP */
		else
			mcc_ctl_hard_error(core, &r->d, 1, now);
	}
	/* recovery hints and unknown events change nothing: recovery needs a
	 * new-generation probe */
	rec_state(core, MCC_REC_ASYNC, obs, from, mcc_ctl_state(atomic_load_explicit(&obs->ctl, RLX)),
	          c.cls, c.scope, c.reason, 0, now, (uint32_t)ev->event_type);
	pthread_mutex_unlock(&core->lock);
}

void mcc_core_on_signal(void *ctx, const struct mcc_signal_v1 *sig)
{
	struct mcc_core *core = ctx;
	if (!core || !sig || sig->struct_size < MCC_SIGNAL_V1_0_SIZE)
		return;
	struct mcc_route *r = sig->route;
	struct mcc_cls c = mcc_classify(MCC_SRC_SIGNAL, (int32_t)sig->kind,
	                                sig->kind == MCC_SIG_CM_EVENT ? (uint32_t)sig->raw : 0);
	pthread_mutex_lock(&core->lock);
	uint64_t now = sig->now_ns ? sig->now_ns : mcc_core_now(core);
	struct mcc_device *dv = sig->device ? sig->device
	                                    : (r ? atomic_load_explicit(&r->dev, RLX) : NULL);
	struct mcc_dom *obs = r ? &r->d : (dv ? &dv->d : NULL);
	uint32_t from = obs ? mcc_ctl_state(atomic_load_explicit(&obs->ctl, RLX)) : 0;
	bool stale = r && sig->generation &&
	             sig->generation < atomic_load_explicit(&r->d.generation, RLX);
	uint32_t reason = c.reason;

	switch (sig->kind) {
	case MCC_SIG_SOFT_DEADLINE:
		/* decided at the end of the epoch: counted only if the device's
		 * poller made progress in it */
		if (!r) {
			reason = MCC_REASON_NONE;
		} else if (core->ndl < MCC_DEADLINES_MAX) {
			struct mcc_deadline *dl = &core->dl[core->ndl++];
			dl->route = r;
			dl->dev = sig->device;
			dl->task = sig->task;
			dl->generation = sig->generation;
			dl->ts = now;
			pthread_mutex_unlock(&core->lock);
			return;
		} else {
			core->deadlines_dropped++;
			reason = MCC_REASON_POLLER_STALL;
		}
		break;
	case MCC_SIG_ENDPOINT_REBUILT:
		if (r)
			mcc_raise_u32(&r->d.generation, sig->generation);
		break;
	case MCC_SIG_METADATA_STALE:
		if (r && !stale) {
			mcc_raise_u32(&r->d.meta_stale_gen,
			              sig->generation ? sig->generation
			                              : atomic_load_explicit(&r->d.generation, RLX));
		}
		break;
	case MCC_SIG_BACKLOG:
		if (obs) {
			atomic_store_explicit(&obs->backlog, sig->value0, RLX);
			mcc_dom_wake(core, obs); /* the tick compares it */
		}
		break;
	case MCC_SIG_DEVICE_TELEMETRY:
		if (dv) {
			atomic_store_explicit(&dv->d.telemetry, sig->value1, RLX);
			mcc_dom_wake(core, &dv->d);
		}
		break;
	case MCC_SIG_CM_EVENT:
		if ((c.flags & MCC_CLS_F_QUARANTINE) && dv) {
			quarantine_scope(core, c.scope, dv, r, 0, 0, now);
		} else if ((c.flags & MCC_CLS_F_HARD) && r) {
			if (stale)
				atomic_fetch_add_explicit(&r->d.stale_feedback, 1, RLX);
			else
				reason = route_timeout(core, r, sig->generation ? sig->generation
				                                                : atomic_load_explicit(
				                                                      &r->d.generation, RLX),
				                       reason, now);
		}
		break;
	default:
		/* post rejection, RPC failures, cancellation, reclamation, no usable
		 * path: task evidence only, no congestion-state change */
		break;
	}
	rec_state(core, MCC_REC_SIGNAL, obs, from,
	          obs ? mcc_ctl_state(atomic_load_explicit(&obs->ctl, RLX)) : 0, c.cls, c.scope, reason,
	          sig->value0, now, sig->kind == MCC_SIG_CM_EVENT ? (uint32_t)sig->raw : sig->kind);
	if (!stale) /* late older-generation feedback cannot overwrite newer evidence */
		ev_slow(core, &sig->task, reason, c.scope, r, sig->generation, now);
	pthread_mutex_unlock(&core->lock);
}
