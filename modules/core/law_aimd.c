/* SPDX-License-Identifier: MIT */
/*
 * law_aimd.c - the AIMD control law (law.h), run by modules/aimd (enforced)
 * and modules/observe (computed, never enforced).
 *
 * Pressure is queueing q beyond the learned base over target_drain_us, or a
 * signal the core measured without delay (receiver-not-ready completions, a
 * growing backlog). Anchors: md 0.5 and additive increase per clean run as in
 * NCCL/UCX-style AIMD, the increase tapered as queueing nears the hold band
 * (as the delay-target law and Swift scale theirs); hysteresis of
 * high_pressure_epochs / low_pressure_epochs epochs as the RFC's state
 * machine asks.
 */
#include "core.h"

/* What a clean epoch does in slow start: hold (no base from an earlier epoch
 * yet), double (queueing at most target / 4), or end slow start (queueing
 * rose above that: the window passed what the path holds without a queue) */
enum ss_step { SS_HOLD, SS_GROW, SS_EXIT };

/* A bounded first burst: slow start from w0, doubling per clean epoch in
 * which the domain used its window, up to `resume` or the first high epoch.
 * A new domain has no congestion to resume from, so its low run counts as
 * complete; a recovered one first needs low_pressure_epochs clean epochs, as
 * fast recovery did. */
static uint64_t aimd_start(const struct mcc_params *p, struct mcc_law_state *ls, uint64_t w0,
                           uint64_t resume, bool recovered)
{
	ls->pre_cut = resume > p->min_window ? resume : p->min_window;
	ls->ss = true;
	ls->fr_left = 0;
	ls->high_streak = 0;
	ls->low_streak = recovered ? 0 : p->low_epochs;
	return w0;
}

/* A growth step of a window w under queueing q (2 q <= t): at most half the
 * window, so no epoch grows faster than slow start would, and scaled by the
 * headroom left below the hold band, whole at no queueing and none at
 * t / 2. Senders behind one bottleneck see the same queueing and take their
 * steps in the same epochs; smaller steps as the queue builds keep their
 * sum from overshooting it. */
static uint64_t grow_step(uint64_t step, uint64_t w, uint64_t q, uint64_t t)
{
	if (step > w / 2)
		step = w / 2;
	if (2 * q >= t)
		return 0;
	return mcc_law_scale(step, t - 2 * q, t);
}

/*
 * One epoch. The multiplicative decrease is scaled by the severity
 * queueing / (2 x target), capped at 1; a signal without a delay measure
 * counts as 1 (anchors T3: x (1 - (1 - md) * s), at most once per epoch).
 *
 * The first cut needs high_pressure_epochs consecutive high epochs (the
 * RFC's hysteresis). Once CONGESTED, a high epoch cuts again as soon as the
 * previous cut has taken effect (in-flight already at or below the window:
 * admission is bounded by the cut window, so further excess is new
 * evidence, not the old backlog draining), else only after another full run
 * of high_pressure_epochs (observe mode, where in-flight is never bounded,
 * mostly takes that path). A cut of a window far above what the domain uses
 * changes nothing, so it is absorbed at once and the next epoch cuts again:
 * the window reaches the in-flight level within a few epochs.
 *
 * Growth after low_pressure_epochs calm epochs (queueing at most target /
 * 2): fast recovery halves the gap to the window before the last cut for
 * fast_recovery_epochs epochs, then ai_bytes per epoch, each step through
 * grow_step() (at most half the window, tapered by queueing).
 */
static void aimd_epoch(const struct mcc_params *p, struct mcc_law_state *ls,
                       const struct mcc_law_in *in, struct mcc_law_out *out)
{
	const uint64_t w = in->window, t = p->target_drain_us, q = in->q_us;
	const bool over = q > t, high = over || in->signal;
	const bool calm = 2 * q <= t;
	const enum ss_step ssx = !in->based ? SS_HOLD : 4 * q <= t ? SS_GROW : SS_EXIT;
	uint64_t nw = w;

	out->congested = in->congested;
	if (high) {
		ls->low_streak = 0;
		ls->ss = false; /* the first high epoch ends slow start */
		if (++ls->high_streak >= p->high_epochs || (in->congested && in->actual <= w)) {
			ls->high_streak = 0;
			uint32_t sev = in->signal || q / t >= 2 ? 100 : (uint32_t)(q * 50 / t);
			uint32_t f = 100 - (100 - p->md_percent) * sev / 100;
			uint64_t cut = mcc_law_scale(w, f, 100);
			if (cut < p->min_window)
				cut = p->min_window;
			if (cut < w) {
				ls->pre_cut = w;
				ls->fr_left = p->fr_epochs;
				nw = cut;
			}
			out->congested = true;
		}
	} else if (in->clean && !calm) {
		/* queueing between target / 2 and target: hold the window (and
		 * the low run), neither a cut nor growth */
		ls->high_streak = 0;
		if (ls->ss && ssx == SS_EXIT)
			ls->ss = false;
	} else if (in->clean && ls->ss && !in->congested && !in->suspect) {
		/* slow start: double while clean, but only a window in use (in
		 * flight at tick or delivered in the epoch at least half of it), so
		 * an idle or application-limited domain does not grow unproven */
		ls->high_streak = 0;
		ls->low_streak++;
		if (ssx == SS_EXIT)
			ls->ss = false;
		else if (ssx == SS_GROW && ls->low_streak >= p->low_epochs &&
		         (2 * in->actual >= w || 2 * in->ep_bytes >= w))
			nw = w < ls->pre_cut / 2 ? 2 * w : ls->pre_cut;
		if (nw > p->max_window)
			nw = p->max_window;
		if (nw >= ls->pre_cut || nw >= p->max_window)
			ls->ss = false; /* then additive increase */
	} else if (in->clean) {
		ls->high_streak = 0;
		if (++ls->low_streak >= p->low_epochs && !in->suspect) {
			uint64_t step;
			if (ls->fr_left && ls->pre_cut > w) {
				step = (ls->pre_cut - w + 1) / 2; /* halve the gap */
				ls->fr_left--;
			} else {
				ls->fr_left = 0;
				step = p->ai_bytes;
			}
			nw = w + grow_step(step, w, q, t);
			if (nw > p->max_window)
				nw = p->max_window;
			out->congested = false;
		}
	} else {
		ls->high_streak = 0; /* idle epochs break a high run, keep a low run */
	}
	out->window = nw;
}

const struct mcc_law mcc_law_aimd = { "aimd", aimd_start, aimd_epoch };
