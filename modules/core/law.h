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
 *           the epoch's measurement record (struct mcc_law_in, computed by
 *           the core); sets out->window, out->pace and out->congested.
 *           A smaller window counts as a cut (domain_stats window_cuts).
 *           While SUSPECT the core keeps the state and remembers `congested`
 *           for when the domain returns.
 *
 * Pacing: a route whose window is at min_window_bytes, binds (no further
 * slice fits beside what is in flight) and is still under pressure cannot
 * shrink its window further (a slice is indivisible), so a law may answer
 * a pace instead: out->pace bytes per epoch (0: not paced). A route whose
 * window does not bind (a small flow) takes nothing from the queue a cut
 * or pace could give back; the aimd law never paces it.
 * A paced route admits within its window and only bytes its pace has earned:
 * a token bucket the core fills at each tick (pace bytes per epoch_us of
 * host time, at most two slices in store) and each admission spends (the
 * empty-domain rule included); its refusals are DEFERs whose retry-after is
 * the next tick. The core honours a pace only on a CONGESTED route; any
 * other state, and a device domain, clears it.
 *
 * A law keeps its per-domain state in the opaque struct mcc_law_state
 * (MCC_LAW_STATE_SIZE bytes, zeroed when the domain is created); it casts
 * it to its own type (MCC_LAW_STATE_OF), whose size it checks at build
 * time with MCC_LAW_STATE_CHECK. It must not keep pointers to the core's objects.
 * An idle domain rests (the tick stops visiting it until it is used again)
 * after an epoch with nothing admitted, in flight or delivered that changed
 * neither this state nor the window (control.c "Activity"): a law whose
 * state changes in every such epoch (a count of epochs) keeps every domain
 * it runs awake, a visit per tick each.
 */
#ifndef MCC_CORE_LAW_H
#define MCC_CORE_LAW_H

#include <stdbool.h>
#include <stdint.h>

struct mcc_params;

/* Per-domain state owned by the law: opaque to the core. */
#define MCC_LAW_STATE_SIZE 64
struct mcc_law_state {
	_Alignas(8) unsigned char opaque[MCC_LAW_STATE_SIZE];
};
/* In a law's source: MCC_LAW_STATE_CHECK(struct my_state); */
#define MCC_LAW_STATE_CHECK(type)                                                          \
	_Static_assert(sizeof(type) <= MCC_LAW_STATE_SIZE && _Alignof(type) <= 8,          \
	               #type " must fit struct mcc_law_state")
/* The law's own view of it: MCC_LAW_STATE_OF(struct my_state, ls) */
#define MCC_LAW_STATE_OF(type, ls) ((type *)(void *)(ls)->opaque)

/* One epoch of one domain: the measurement record the core computed. */
struct mcc_law_in {
	uint64_t window;    /* current window, bytes */
	uint64_t pace;      /* current pace, bytes per epoch (0: not paced) */
	uint64_t actual;    /* bytes in use: in flight at this tick, lane credit excluded */
	uint64_t ep_bytes;  /* bytes completed in the epoch */
	uint64_t rate;      /* smoothed delivery rate, bytes per second */
	uint64_t drain_us;  /* drain time of the bytes in flight (control.c "Pressure") */
	uint64_t base_us;   /* the base q_us is measured beyond (control.c base_of):
	                     * the path's windowed minimum drain time, or 0 */
	uint64_t q_us;      /* queueing: a route's drain time beyond its base, a
	                     * device's drain time (control.c "Pressure") */
	uint64_t stated_us; /* of the base, the round trip the host stated (0: none) */
	uint64_t slice;     /* largest slice seen on the domain, bytes */
	uint32_t epoch_us;  /* the configured epoch (pace unit) */
	bool route;         /* a route domain (only routes may be paced) */
	bool software;      /* the host declared the device a software transport */
	bool based;         /* the base comes from earlier epochs (not only this one) */
	bool clean;         /* completions, no hard error, no receiver pressure */
	bool signal;        /* pressure not measured as delay: receiver-not-ready
	                     * completions or a growing backlog */
	bool congested;     /* CONGESTED now (or was, if SUSPECT) */
	bool suspect;       /* SUSPECT: hold, do not grow */
};

struct mcc_law_out {
	uint64_t window;
	uint64_t pace; /* bytes per epoch; 0: not paced */
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

/* The AIMD law (law_aimd.c): hysteresis, multiplicative decrease above the
 * target and growth below it with no band between (fast recovery, then
 * additive increase tapered by queueing), pacing below the minimum window,
 * slow start bounded by queueing. */
extern const struct mcc_law mcc_law_aimd;

#endif /* MCC_CORE_LAW_H */
