/* SPDX-License-Identifier: MIT */
/*
 * law_delay.c - a delay-target control law (modules/core/law.h) in the
 * manner of Swift: the window follows the measured queueing against the
 * target, in proportion, instead of AIMD's halving and fixed steps.
 *
 *   decrease when queueing q beyond the base exceeds T = target_drain_us
 *            (or on receiver pressure / backlog growth):
 *            w x max(1 - beta x (q - T) / q, md), beta = 0.8, at most once
 *            per epoch; the first cut needs high_pressure_epochs high epochs
 *            in a row (the RFC's hysteresis), then each high epoch in which
 *            in-flight already fits the window cuts (new evidence); a signal
 *            without a delay measure cuts by md.
 *   increase each clean epoch with q <= T, not SUSPECT, once the base comes
 *            from earlier epochs, when the window was used (in flight or
 *            delivered at least half of it): + (ai_bytes / low_pressure_epochs)
 *            x (T - q) / T, AIMD's average pace scaled by the headroom left.
 *   state    CONGESTED from the first cut; HEALTHY again after
 *            low_pressure_epochs clean epochs with q <= T / 2.
 *   start    a new domain at its share w0; a recovered one at the minimum
 *            window, growing as above (no jump back to the old window: the
 *            new endpoint generation is unproven).
 * No slow start: growth is linear from the first window.
 */
#include "core.h"

#define DELAY_BETA_PERCENT 80u

struct delay_state {
	uint32_t high_streak, low_streak;
};
MCC_LAW_STATE_CHECK(struct delay_state);

static uint64_t delay_start(const struct mcc_params *p, struct mcc_law_state *ls, uint64_t w0,
                            uint64_t resume, bool recovered)
{
	struct delay_state *s = MCC_LAW_STATE_OF(struct delay_state, ls);
	(void)p;
	(void)resume;
	(void)recovered;
	s->high_streak = s->low_streak = 0;
	return w0;
}

static void delay_epoch(const struct mcc_params *p, struct mcc_law_state *lsp,
                        const struct mcc_law_in *in, struct mcc_law_out *out)
{
	struct delay_state *ls = MCC_LAW_STATE_OF(struct delay_state, lsp);
	const uint64_t w = in->window, t = p->target_drain_us, q = in->q_us;
	const bool high = q > t || in->signal;

	out->window = w;
	out->pace = 0;
	out->congested = in->congested;
	if (high) {
		ls->low_streak = 0;
		if (++ls->high_streak < p->high_epochs && !(in->congested && in->actual <= w))
			return;
		ls->high_streak = 0;
		/* decrease factor in percent: 100 - beta x overshoot, floored at md */
		uint64_t f = p->md_percent;
		if (!in->signal) {
			uint64_t dec = DELAY_BETA_PERCENT * (q - t) / q;
			f = 100 - dec > f ? 100 - dec : f;
		}
		out->window = mcc_law_scale(w, f, 100);
		out->congested = true;
		return;
	}
	ls->high_streak = 0;
	if (!in->clean || in->suspect)
		return;
	if (in->based && (2 * in->actual >= w || 2 * in->ep_bytes >= w)) {
		uint64_t ai = p->ai_bytes / p->low_epochs;
		uint64_t inc = mcc_law_scale(ai, t - q, t);
		out->window = w + inc;
	}
	if (in->congested && 2 * q <= t && ++ls->low_streak >= p->low_epochs)
		out->congested = false;
}

const struct mcc_law mcc_law_delay = { "delay", delay_start, delay_epoch };
