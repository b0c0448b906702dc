/* SPDX-License-Identifier: MIT */
/*
 * law.h - the control-law seam of the policy core.
 *
 * The core (this directory) is the mechanism: domains, permits, lane credit,
 * measurement (drain time, base, queueing), the path state machine's error
 * side (SUSPECT, QUARANTINED, PROBING), evidence and the recorder. A control
 * law decides only the two things left: each domain's byte window, and
 * whether a domain under pressure is CONGESTED. A module chooses its law when
 * it calls mcc_core_init(); modules/aimd and modules/observe run the AIMD law
 * (law_aimd.c, here because both use it), modules/delay brings its own.
 *
 * Calls (all under core->lock, never on the fast path):
 *   start   a domain's first window: when it opens (w0 = its share of the
 *           device, resume = max_window_bytes, recovered = false) and when a
 *           probe recovers it from quarantine (w0 = min_window_bytes,
 *           resume = the window it had before quarantine, recovered = true).
 *           Returns the window, which the core clamps to [min_window_bytes,
 *           max_window_bytes].
 *   epoch   once per tick for each HEALTHY, CONGESTED or SUSPECT domain, with
 *           the epoch's measurement; sets out->window and out->congested.
 *           A smaller window counts as a cut (domain_stats window_cuts).
 *           While SUSPECT the core keeps the state and remembers `congested`
 *           for when the domain returns.
 * A law keeps its per-domain state in struct mcc_law_state, zeroed when the
 * domain is created; it must not keep pointers to the core's objects.
 */
#ifndef MCC_CORE_LAW_H
#define MCC_CORE_LAW_H

#include <stdbool.h>
#include <stdint.h>

struct mcc_params;

/* Per-domain state owned by the law (the AIMD law's names; another law may
 * use the fields as it likes). */
struct mcc_law_state {
	uint64_t pre_cut; /* window before the last cut / to resume to */
	uint32_t high_streak, low_streak;
	uint32_t fr_left; /* fast-recovery epochs left */
	bool ss;          /* slow start */
};

/* One epoch of one domain, as the mechanism measured it. */
struct mcc_law_in {
	uint64_t window;    /* current window, bytes */
	uint64_t actual;    /* in flight at this tick, lane credit excluded */
	uint64_t ep_bytes;  /* bytes completed in the epoch */
	uint64_t q_us;      /* queueing: drain time beyond local serialisation
	                     * and beyond the learned base */
	bool based;         /* the base comes from earlier epochs (not only this one) */
	bool clean;         /* completions, no hard error, no receiver pressure */
	bool signal;        /* pressure not measured as delay: receiver-not-ready
	                     * completions or a growing backlog */
	bool congested;     /* CONGESTED now (or was, if SUSPECT) */
	bool suspect;       /* SUSPECT: hold, do not grow */
};

struct mcc_law_out {
	uint64_t window;
	bool congested;
};

struct mcc_law {
	const char *name;
	uint64_t (*start)(const struct mcc_params *p, struct mcc_law_state *ls, uint64_t w0,
	                  uint64_t resume, bool recovered);
	void (*epoch)(const struct mcc_params *p, struct mcc_law_state *ls,
	              const struct mcc_law_in *in, struct mcc_law_out *out);
};

/* x * num / den rounded down, without forming the product x * num (a
 * window times a percentage or a time can pass 2^64); num * den must fit
 * in 64 bits. */
static inline uint64_t mcc_law_scale(uint64_t x, uint64_t num, uint64_t den)
{
	return x / den * num + x % den * num / den;
}

/* The AIMD law (law_aimd.c): hysteresis, severity-scaled multiplicative
 * decrease, fast recovery and additive increase tapered by queueing, slow
 * start bounded by queueing. */
extern const struct mcc_law mcc_law_aimd;

#endif /* MCC_CORE_LAW_H */
