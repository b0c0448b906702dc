/* SPDX-License-Identifier: MIT */
/*
 * law_aimd.c - the AIMD control law (law.h), run by modules/aimd (enforced)
 * and modules/observe (computed, never enforced).
 *
 * Pressure is queueing q beyond the learned base over the target, or a
 * signal the core measured without delay (receiver-not-ready completions, a
 * growing backlog). The target is target_drain_us for a window of at least
 * AIMD_FS_REF x min_window_bytes; a smaller window (a paced route's
 * effective window too) is held to the target x sqrt(AIMD_FS_REF x
 * min_window / window), at most AIMD_FS_MAX x (Swift's flow-scaled target,
 * below). The law has two regions and no band
 * between them, which is what makes it fair (modules/core/README.md "Why
 * the law is fair"):
 *
 *   q > target (high)   multiplicative decrease: window x md_percent / 100
 *                       (on a path with a stated round trip S, at least
 *                       (S + target / 2) / (S + target), at most 90 %: the
 *                       share that still holds the path's own round trip
 *                       and half a target of queue),
 *                       the first after high_pressure_epochs high epochs in a
 *                       row (the RFC's hysteresis), then each high epoch in
 *                       which the previous cut has taken effect (in flight
 *                       at or below the window, a stated round trip since
 *                       the cut; a drained domain's also having delivered
 *                       beyond its bytes at the cut).
 *                       A route already at min_window_bytes is paced
 *                       instead (below).
 *   q <= target (calm)  after low_pressure_epochs calm epochs, growth every
 *                       calm epoch: fast recovery halves the gap to the
 *                       window before the last cut for fast_recovery_epochs
 *                       epochs (not on a hardware device's window under
 *                       2 x ai_bytes, below), then + ai_bytes (a hardware
 *                       device: at most min_window_bytes / 2, below);
 *                       each step at most half the window and tapered by
 *                       queueing, (target - q) / target, whole at no
 *                       queueing, 1/16 at the target; a device's less
 *                       the pull, 1 / AIMD_PULL_DIV of the bytes its
 *                       window keeps in the queue beyond half the target
 *                       (w x (q - target / 2) / drain time).
 *
 * A hardware device whose window was under 2 x ai_bytes when it was cut
 * has no fast recovery: senders' devices that share a port sit there (a
 * few slices each), and returning each toward its own window before the
 * cut gives back in proportion what the cut took in proportion, so the
 * split the devices had survives every cycle (two TE flows on one port
 * held 16.4 / 8.6 Gb/s, Jain 0.911). Only the additive step, the same
 * bytes for every device, evens them out (Chiu and Jain); 2 x ai_bytes is
 * the window under which growth was found to go in proportion
 * (modules/core/README.md "Why the law is fair", 4 and 5). A larger
 * window keeps it (a lone sender's bulk regrows fast: without it TENT's
 * flush scenario lost 14 % of its goodput), a route keeps it (a route cut
 * in an incast must give its window back quickly, or it paces its
 * sender's last bytes while the port idles), and so does a software
 * device (after a guest stall it must regrow fast; README.md, ai_bytes).
 *
 * Flows that share a bottleneck see the same queueing, so they cut in the
 * same epochs by the same factor and grow by the same bytes: the AIMD
 * argument (Chiu and Jain) moves them toward equal windows at every cycle.
 * Between cuts the pull does it every calm epoch: growth the same bytes for
 * every device, the pull in proportion to each one's bytes in the queue, so
 * the calm epochs' fixed point is the same rate for every device behind
 * that queue (pull()). Without it, where fair windows lie far above the
 * minimum (100 and 400 Gb/s), the taper held the queue just under the
 * target, nobody was cut for hundreds of epochs, and a flow that joined
 * late kept the share it joined with. Routes have no pull: each measures
 * beyond a base of its own, and a pull turns a difference in measured
 * queueing into a difference in rate.
 * A hold band between growth and decrease (the law before this one held the
 * window while target / 2 < q <= target) breaks that: any split of the
 * bottleneck whose queue sits inside the band is a fixed point, so the first
 * flow to arrive kept its share for good.
 *
 * What breaks the symmetry AIMD needs is where flows stop being cut alike:
 * a domain at min_window_bytes is not cut further (a route is paced only
 * after AIMD_PACE_AFTER runs), and routes that joined a standing queue
 * measure less of it than the ones it grew under. The flow-scaled target
 * answers both: of two domains on one queue, the one with the smaller
 * window tolerates more queueing, so while the queue lies between their
 * targets the larger is cut and the smaller grows, and the only fixed point
 * is equal windows (Swift, SIGCOMM 2020, section 3.4). The target is still
 * one function of the window for every sender (a common reference), and at
 * the reference window and above it is target_drain_us itself.
 *
 * Pacing (law.h): a route already at min_window_bytes whose high runs go on
 * (AIMD_PACE_AFTER of them), its window bound in one of their epochs
 * (window_bound: a small flow's never does, and pacing it would only delay
 * its messages), cannot shrink its window, a slice being
 * indivisible; it gets an effective window below the minimum, w_eff =
 * window x md_percent / 100, and the pace w_eff per drain time. w_eff is cut
 * by md on each run of high_pressure_epochs high epochs with completions
 * and grows while calm (epochs without completions included: a paced route
 * waits for its tokens) by ai_bytes x w_eff / min_window, tapered and at
 * most half, against the flow-scaled target of w_eff (below the minimum
 * growth and decrease are both in proportion to the window, and the smaller
 * window tolerating more queueing is what evens the paced routes out; the
 * same function as a window's, so a route's target is continuous across
 * the minimum window where pacing begins and ends). Pacing ends
 * when w_eff reaches the minimum window. Many senders behind one receiver
 * (64 x 128 KiB = 8 MiB, twice a 4 MiB switch buffer) so share the port at
 * a queue near the target instead of at their windows' floor.
 *
 * Slow start: a new domain doubles its window each calm epoch in which it
 * used half of it, while queueing stays within target / 4, up to `resume`;
 * the first high epoch or queueing above target / 4 ends it.
 */
#include "core.h"

struct aimd_state {
	uint64_t pre_cut; /* window before the last cut / to resume to */
	uint64_t last_q;  /* queueing of the last epoch with completions */
	uint64_t last_drain; /* drain time of the last epoch with completions */
	uint64_t w_eff;   /* paced: the window below the minimum (0: not paced) */
	uint64_t cut_debt; /* bytes in flight at the last cut, not yet delivered */
	uint32_t high_streak, low_streak;
	uint32_t fr_left; /* fast-recovery epochs left */
	uint32_t floor_runs; /* high runs in a row with the window at its minimum */
	uint32_t since_cut;  /* epochs with bytes in flight or delivered since the last cut */
	bool ss;          /* slow start */
	bool bound;       /* route: its window bound in an epoch since the last cut or calm epoch */
};
MCC_LAW_STATE_CHECK(struct aimd_state);

/* a paced route's effective window never falls below this share of a slice */
#define AIMD_PACE_MIN_DIV 32u
/* high runs at the minimum window before a route is paced: a transient
 * (a joiner's first burst) drains within them, a standing floor does not */
#define AIMD_PACE_AFTER 4u
/* the taper of a growth step never goes below 1 / this (grow_step) */
#define AIMD_TAPER_FLOOR 16u
/* each calm epoch returns 1 / this of the bytes a device holds in the
 * queue beyond half the target (pull(): FAST TCP's equilibrium) */
#define AIMD_PULL_DIV 16u
/* the most a cut keeps on a path with a long stated round trip (percent) */
#define AIMD_KEEP_MAX 90u
/* a route's flow-scaled target is at most this many times target_drain_us */
#define AIMD_FS_MAX 2u
/* ... and target_drain_us itself at a window of this many min_window_bytes
 * or more (at the minimum window sqrt(2) targets) */
#define AIMD_FS_REF 2u

/* A bounded first burst: slow start from w0, doubling per calm epoch in
 * which the domain used its window, up to `resume` or the first high epoch.
 * A new domain has no congestion to resume from, so its low run counts as
 * complete; a recovered one first needs low_pressure_epochs clean epochs, as
 * fast recovery did. */
static uint64_t aimd_start(const struct mcc_params *p, struct mcc_law_state *ls, uint64_t w0,
                           uint64_t resume, bool recovered)
{
	struct aimd_state *s = MCC_LAW_STATE_OF(struct aimd_state, ls);
	s->pre_cut = resume > p->min_window ? resume : p->min_window;
	s->ss = true;
	s->bound = false;
	s->fr_left = 0;
	s->high_streak = 0;
	s->low_streak = recovered ? 0 : p->low_epochs;
	return w0;
}

/* A growth step under queueing q <= t: at most half of `w` (no epoch grows
 * faster than slow start), scaled by the headroom left below the target,
 * (t - q) / t, but never below 1 / AIMD_TAPER_FLOOR: growth that stopped at
 * the target would make a queue that nears it from below a fixed point,
 * any split of the bottleneck frozen there, as the old hold band did. */
static uint64_t grow_step(uint64_t step, uint64_t w, uint64_t q, uint64_t t)
{
	if (step > w / 2)
		step = w / 2;
	uint64_t room = q < t ? t - q : 0;
	if (room < t / AIMD_TAPER_FLOOR)
		room = t / AIMD_TAPER_FLOOR;
	return t ? mcc_law_scale(step, room, t) : step;
}

/* What a calm epoch takes back from a device's window w whose drain time d
 * holds q of queueing: 1 / AIMD_PULL_DIV of the bytes it keeps in the
 * queue beyond half the target, w x (q - t / 2) / d (by Little's law its
 * rate x (q - t / 2)), q counted up to the target t. Against the growth
 * step, the same bytes for every device, a calm epoch then has a fixed
 * point where rate x (q - t / 2) = AIMD_PULL_DIV x step x (t - q) / t: the
 * same rate for every device that sees the same queue, whatever its window
 * or round trip, approached every calm epoch (FAST TCP's equilibrium of
 * alpha bytes queued per flow), not only at the cuts; and a queue between
 * half the target and the target, so the port keeps its cushion
 * (README.md "Why the law is fair", 7). */
static uint64_t pull(uint64_t w, uint64_t q, uint64_t d, uint64_t t)
{
	if (q > t)
		q = t;
	if (d < q)
		d = q;
	return q > t / 2 ? mcc_law_scale(w, q - t / 2, d * AIMD_PULL_DIV) : 0;
}

static uint64_t isqrt(uint64_t x)
{
	uint64_t r = 0, b = (uint64_t)1 << 62;
	while (b > x)
		b >>= 2;
	while (b) {
		if (x >= r + b) {
			x -= r + b;
			r = (r >> 1) + b;
		} else {
			r >>= 1;
		}
		b >>= 2;
	}
	return r;
}

/* The target of a domain whose window (a paced route's effective window) is w:
 * target x sqrt(AIMD_FS_REF x min_window / w), at least the target, at most
 * AIMD_FS_MAX x target (Swift's flow-scaled target, the header). */
static uint64_t fs_target(const struct mcc_params *p, uint64_t w)
{
	const uint64_t ref = AIMD_FS_REF * p->min_window;
	if (w >= ref) /* the common target (no square root on a busy tick) */
		return p->target_drain_us;
	if (w * AIMD_FS_MAX * AIMD_FS_MAX <= ref)
		return AIMD_FS_MAX * p->target_drain_us;
	uint64_t f = isqrt(mcc_law_scale(ref, 10000, w)); /* x100, in [100, 200) */
	return mcc_law_scale(p->target_drain_us, f, 100);
}

/* The pace of an effective window: w_eff per drain time, per epoch (a drain
 * time taken as at least 1/64 of an epoch, so an unmeasured one cannot
 * make the pace unbounded). */
static uint64_t pace_of(const struct aimd_state *s, const struct mcc_law_in *in)
{
	uint64_t d = s->last_drain > in->epoch_us / 64 ? s->last_drain : in->epoch_us / 64;
	uint64_t pace = mcc_law_scale(s->w_eff, in->epoch_us, d ? d : 1);
	return pace ? pace : 1;
}

/* An epoch of a paced route. */
static void paced_epoch(const struct mcc_params *p, struct aimd_state *s,
                        const struct mcc_law_in *in, struct mcc_law_out *out)
{
	uint64_t t = fs_target(p, s->w_eff);
	uint64_t floor = (in->slice ? in->slice : MCC_SLICE_REF) / AIMD_PACE_MIN_DIV;
	out->congested = true;
	if (in->clean) {
		s->last_q = in->q_us;
		s->last_drain = in->drain_us;
	}
	if ((in->clean && in->q_us > t) || in->signal) {
		s->low_streak = 0;
		if (++s->high_streak >= p->high_epochs) {
			s->high_streak = 0;
			s->w_eff = mcc_law_scale(s->w_eff, p->md_percent, 100);
			if (s->w_eff < floor)
				s->w_eff = floor;
		}
	} else if (!in->suspect) {
		/* a paced route waits for its tokens, so most of its epochs have
		 * no completion: they count as calm at the last queueing measured */
		s->high_streak = 0;
		if (++s->low_streak >= p->low_epochs) {
			uint64_t step = mcc_law_scale(p->ai_bytes, s->w_eff, p->min_window);
			s->w_eff += grow_step(step, s->w_eff, s->last_q, t);
			if (s->w_eff >= p->min_window)
				s->w_eff = 0; /* window mode again, at the minimum */
		}
	}
	out->pace = s->w_eff ? pace_of(s, in) : 0;
}

/* Whether the window binds: no further slice fits beside what is in flight
 * at the tick. A route whose window does not bind (a small flow, one slice
 * outstanding) adds nothing a cut or a pace could take from the queue:
 * pacing it would only delay its messages. (An estimate of what it held
 * over the epoch, delivery rate x drain time, swings with the queue: it
 * paced the 32:1 incast's latency flow again.) */
static bool window_bound(const struct mcc_law_in *in, uint64_t w)
{
	return in->actual + (in->slice ? in->slice : MCC_SLICE_REF) > w;
}

static void aimd_epoch(const struct mcc_params *p, struct mcc_law_state *ls,
                       const struct mcc_law_in *in, struct mcc_law_out *out)
{
	struct aimd_state *s = MCC_LAW_STATE_OF(struct aimd_state, ls);
	const uint64_t w = in->window, q = in->q_us;

	out->window = w;
	out->pace = in->pace;
	out->congested = in->congested;
	if (!in->pace)
		s->w_eff = 0; /* the core ended the pace (a state change) */
	if (s->w_eff) {
		paced_epoch(p, s, in, out); /* against the target of w_eff */
		return;
	}
	const uint64_t t = fs_target(p, w);
	const bool high = q > t || in->signal;
	/* a hardware device's window: a share of a port (the header, and
	 * README.md "Why the law is fair", 4 and 5) */
	const bool hw_device = !in->route && !in->software;
	if (in->route && window_bound(in, w))
		s->bound = true;
	/* A domain that holds nothing at the tick and delivered no more than
	 * it held at its last cut posted nothing under the cut window (its
	 * host moved the slices away): the queueing it read is the old
	 * bytes', and the cut has not taken effect. A failover burst cut a
	 * lone sender's device twice in two epochs, the second time on the
	 * burst's own bytes, to its minimum window, where TE held it idle
	 * ("DEFER near the floor") for 30 ms (the flush scenario, 0.94x of
	 * off). Waiting for such bytes whatever is in flight (AIMD's one cut
	 * per round trip) cost the 8:1 incasts on 0.5-1 ms paths (goodput
	 * 0.972, Jain 0.947): their repeated cuts are what evens them. */
	const bool after_cut = in->actual || in->ep_bytes > s->cut_debt;
	s->cut_debt = in->ep_bytes < s->cut_debt ? s->cut_debt - in->ep_bytes : 0;
	/* ... and a stated round trip has passed since it: before that no
	 * completion can show it (a lone flow on a 5 ms path, cut at once on
	 * every high epoch of its own 1 MiB bursts, 0.927x of off; 0.952x).
	 * Idle epochs are not counted: they must leave the state as it was
	 * (law.h). */
	if ((in->actual || in->ep_bytes) && s->since_cut < UINT32_MAX)
		s->since_cut++;
	const bool rtt_passed = (uint64_t)s->since_cut * in->epoch_us >= in->stated_us;
	if (high) {
		s->low_streak = 0;
		s->ss = false; /* the first high epoch ends slow start */
		bool took = in->congested && in->actual <= w && !in->pace && after_cut && rtt_passed;
		if (++s->high_streak < p->high_epochs && !took)
			return;
		s->high_streak = 0;
		/* A cut comes at a queue of about one target, where the window
		 * holds the stated round trip S and the target t (target_drain_us,
		 * not a route's flow-scaled one): W = R (S + t).
		 * It keeps at least (S + t / 2) / (S + t), what holds the path
		 * and half a target of queue, so the port does not idle before
		 * the window regrows (the sawtooth): keeping S / (S + t), the
		 * path alone, left a 200 us pair at 0.96x of off and a 1 ms 8:1
		 * incast at 0.90x. On a short path that is md_percent's half. */
		uint64_t keep = p->md_percent;
		if (in->stated_us) {
			const uint64_t t0 = p->target_drain_us;
			uint64_t k = mcc_law_scale(100, in->stated_us + t0 / 2, in->stated_us + t0);
			keep = k > AIMD_KEEP_MAX ? AIMD_KEEP_MAX : k > keep ? k : keep;
		}
		uint64_t cut = mcc_law_scale(w, keep, 100);
		if (cut < p->min_window)
			cut = p->min_window;
		if (cut < w) {
			s->pre_cut = w;
			s->bound = false;
			/* no fast recovery on a hardware device's small window */
			s->fr_left = hw_device && w < 2 * p->ai_bytes ? 0 : p->fr_epochs;
			s->floor_runs = 0;
			s->cut_debt = in->actual;
			s->since_cut = 0;
			out->window = cut;
		} else if (in->route && s->bound && ++s->floor_runs >= AIMD_PACE_AFTER) {
			s->w_eff = mcc_law_scale(w, p->md_percent, 100);
			s->last_drain = in->drain_us;
			s->last_q = q;
			out->pace = pace_of(s, in);
		}
		out->congested = true;
		return;
	}
	if (!in->clean) {
		s->high_streak = 0; /* idle epochs break a high run, keep a low run */
		return;
	}
	s->floor_runs = 0;
	s->bound = false;
	s->high_streak = 0;
	if (s->ss && !in->congested && !in->suspect) {
		/* slow start: double while queueing stays within target / 4, but
		 * only a window in use (in flight at tick or delivered in the
		 * epoch at least half of it), so an idle or application-limited
		 * domain does not grow unproven */
		s->low_streak++;
		if (!in->based)
			return;
		if (4 * q > t) {
			s->ss = false;
			return;
		}
		uint64_t nw = w;
		if (s->low_streak >= p->low_epochs && (2 * in->actual >= w || 2 * in->ep_bytes >= w))
			nw = w < s->pre_cut / 2 ? 2 * w : s->pre_cut;
		if (nw > p->max_window)
			nw = p->max_window;
		if (nw >= s->pre_cut || nw >= p->max_window)
			s->ss = false; /* then additive increase */
		out->window = nw;
		return;
	}
	if (++s->low_streak < p->low_epochs || in->suspect)
		return;
	uint64_t step;
	if (s->fr_left && s->pre_cut > w) {
		step = (s->pre_cut - w + 1) / 2; /* halve the gap */
		s->fr_left--;
	} else {
		s->fr_left = 0;
		step = p->ai_bytes;
		/* Senders that share a bottleneck split it by their devices'
		 * windows, which sit near the minimum there (a few slices each).
		 * With the half-window cap alone a window under 2 x ai_bytes
		 * grows by half of itself, in proportion, and the devices keep
		 * whatever split they had; the same bytes for every window is
		 * the additive step AIMD's fairness needs (README.md "Why the
		 * law is fair"). A route keeps ai_bytes: one cut in an incast
		 * must give its window back quickly, or it paces its sender's
		 * last bytes while the port idles. So does a software device:
		 * its queueing counts only while its rate has collapsed, and
		 * after a guest stall it must regrow fast (README.md, ai_bytes). */
		if (hw_device && step > p->min_window / 2)
			step = p->min_window / 2;
	}
	uint64_t nw = w + grow_step(step, w, q, t);
	if (!in->route && in->base_us <= in->stated_us) {
		/* the pull: a device's, against a common reference (pull()),
		 * never below the minimum window */
		uint64_t pl = pull(w, q, in->drain_us, t);
		uint64_t room = nw > p->min_window ? nw - p->min_window : 0;
		nw -= pl < room ? pl : room;
	}
	out->window = nw > p->max_window ? p->max_window : nw;
	out->congested = false;
}

const struct mcc_law mcc_law_aimd = { "aimd", aimd_start, aimd_epoch };
