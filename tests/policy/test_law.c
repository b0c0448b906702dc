/* SPDX-License-Identifier: MIT */
/*
 * test_law.c - the control laws of modules/core/law.h as pure functions:
 * the AIMD law (modules/core/law_aimd.c) and the delay-target law
 * (modules/delay/law_delay.c), one epoch at a time with hand-set
 * measurements. Their place in the mechanism (quarantine, credit, evidence)
 * is tested through the descriptors elsewhere.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "cu_driver.h"

extern const struct mcc_law mcc_law_delay;

static const struct mcc_params P = {
	.min_window = 131072, .max_window = 16777216, .ai_bytes = 262144,
	.target_drain_us = 200, .high_epochs = 2, .low_epochs = 4,
	.md_percent = 50, .fr_epochs = 5,
};

#define MiB (1024ull * 1024)

/* a used, clean epoch with queueing q (us) on a window w */
static struct mcc_law_in ep(uint64_t w, uint64_t q)
{
	return (struct mcc_law_in){
		.window = w, .actual = w, .ep_bytes = w, .q_us = q, .based = true, .clean = true
	};
}

/* the same on a route */
static struct mcc_law_in rep(uint64_t w, uint64_t q)
{
	struct mcc_law_in in = ep(w, q);
	in.route = true;
	return in;
}

static struct mcc_law_out run(const struct mcc_law *law, struct mcc_law_state *ls,
                              const struct mcc_law_in *in)
{
	struct mcc_law_out out = { in->window, in->pace, in->congested };
	law->epoch(&P, ls, in, &out);
	return out;
}

static void test_delay_cut_scales_with_overshoot(void)
{
	struct mcc_law_state ls = { 0 };
	CU_ASSERT_EQUAL(mcc_law_delay.start(&P, &ls, 4 * MiB, P.max_window, false), 4 * MiB);
	struct mcc_law_in in = ep(4 * MiB, 400); /* T = 200: overshoot 200/400 */
	struct mcc_law_out o = run(&mcc_law_delay, &ls, &in);
	CU_ASSERT_EQUAL(o.window, 4 * MiB); /* hysteresis: one high epoch */
	CU_ASSERT_FALSE(o.congested);
	o = run(&mcc_law_delay, &ls, &in);
	CU_ASSERT_EQUAL(o.window, 4 * MiB / 100 * 60 + 4 * MiB % 100 * 60 / 100); /* 1 - 0.8 x 0.5 */
	CU_ASSERT_TRUE(o.congested);
	/* congested and in-flight within the window: the next high epoch cuts
	 * at once; a far overshoot is floored at md (50 %) */
	in = ep(o.window, 100000);
	in.congested = true;
	in.actual = in.window / 2;
	struct mcc_law_out o2 = run(&mcc_law_delay, &ls, &in);
	CU_ASSERT_EQUAL(o2.window, in.window / 2);
	/* receiver pressure without a delay measure: md */
	in = ep(2 * MiB, 0);
	in.signal = true;
	in.congested = true;
	in.actual = MiB;
	CU_ASSERT_EQUAL(run(&mcc_law_delay, &ls, &in).window, MiB);
}

static void test_delay_growth_needs_base_use_and_headroom(void)
{
	struct mcc_law_state ls = { 0 };
	const uint64_t ai = P.ai_bytes / P.low_epochs;
	struct mcc_law_in in = ep(MiB, 0);
	in.based = false; /* the first epoch is its own base: hold */
	CU_ASSERT_EQUAL(run(&mcc_law_delay, &ls, &in).window, MiB);
	in.based = true;
	CU_ASSERT_EQUAL(run(&mcc_law_delay, &ls, &in).window, MiB + ai);
	in.q_us = 150; /* 3/4 of the target: a quarter of the step */
	CU_ASSERT_EQUAL(run(&mcc_law_delay, &ls, &in).window, MiB + ai / 4);
	in.q_us = 200; /* at the target: hold */
	CU_ASSERT_EQUAL(run(&mcc_law_delay, &ls, &in).window, MiB);
	in.q_us = 0;
	in.actual = in.ep_bytes = MiB / 4; /* application-limited: hold */
	CU_ASSERT_EQUAL(run(&mcc_law_delay, &ls, &in).window, MiB);
	in = ep(MiB, 0);
	in.suspect = true; /* SUSPECT holds */
	CU_ASSERT_EQUAL(run(&mcc_law_delay, &ls, &in).window, MiB);
	in = ep(MiB, 0);
	in.clean = false; /* a hard error in the epoch: hold */
	CU_ASSERT_EQUAL(run(&mcc_law_delay, &ls, &in).window, MiB);
	/* CONGESTED -> HEALTHY after low_epochs calm clean epochs */
	memset(&ls, 0, sizeof(ls));
	in = ep(MiB, 90);
	in.congested = true;
	for (uint32_t i = 1; i < P.low_epochs; i++)
		CU_ASSERT_TRUE(run(&mcc_law_delay, &ls, &in).congested);
	CU_ASSERT_FALSE(run(&mcc_law_delay, &ls, &in).congested);
}

/* The AIMD law's own rules, as modules/core/README.md states them: two
 * high epochs halve, then after low_epochs calm ones fast recovery halves
 * the gap to the window before the cut: on a hardware device, a route and a
 * software device cut from 8 MiB; a hardware device cut from under
 * 2 x ai_bytes (448 KiB) adds its additive step instead (law_aimd.c). */
static void test_aimd_hysteresis_halving_and_recovery(void)
{
	struct mcc_law_state ls = { 0 };
	struct mcc_law_in in;
	struct mcc_law_out o;
	for (int kind = 0; kind < 4; kind++) { /* device, route, software device, small device */
		const uint64_t w = kind == 3 ? 448 * 1024 : 8 * MiB;
		memset(&ls, 0, sizeof(ls));
		CU_ASSERT_EQUAL(mcc_law_aimd.start(&P, &ls, MiB, P.max_window, false), MiB);
		in = ep(w, 500); /* q / (2 T) >= 1: full md */
		in.route = kind == 1;
		in.software = kind == 2;
		CU_ASSERT_EQUAL(run(&mcc_law_aimd, &ls, &in).window, w);
		o = run(&mcc_law_aimd, &ls, &in);
		CU_ASSERT_EQUAL(o.window, w / 2);
		CU_ASSERT_TRUE(o.congested);
		in.window = in.actual = in.ep_bytes = w / 2;
		in.q_us = 0;
		in.congested = true;
		for (uint32_t i = 1; i < P.low_epochs; i++)
			CU_ASSERT_EQUAL(run(&mcc_law_aimd, &ls, &in).window, w / 2);
		o = run(&mcc_law_aimd, &ls, &in);
		CU_ASSERT_EQUAL(o.window, kind == 3 ? w / 2 + P.min_window / 2 : 6 * MiB);
		CU_ASSERT_FALSE(o.congested);
	}
	/* recovery from quarantine: slow start from the minimum, held until a
	 * low run has passed */
	CU_ASSERT_EQUAL(mcc_law_aimd.start(&P, &ls, P.min_window, 8 * MiB, true), P.min_window);
	in = ep(P.min_window, 0);
	for (uint32_t i = 1; i < P.low_epochs; i++)
		CU_ASSERT_EQUAL(run(&mcc_law_aimd, &ls, &in).window, P.min_window);
	CU_ASSERT_EQUAL(run(&mcc_law_aimd, &ls, &in).window, 2 * P.min_window);
}

/* After a cut, the next high epoch cuts again at once if the cut has taken
 * effect: in flight at or below the window. A domain that holds nothing and
 * delivered no more than it held at the cut posted nothing under the cut
 * window (its host moved the slices away): the queueing it read is the old
 * bytes', and only a second high epoch cuts it (high_epochs). */
static void test_aimd_drained_cut_waits_for_its_bytes(void)
{
	/* a device drained of its old bytes; drained and beyond them; holding
	 * bytes posted under the cut window; a route drained of its old bytes */
	for (int kind = 0; kind < 4; kind++) {
		struct mcc_law_state ls = { 0 };
		mcc_law_aimd.start(&P, &ls, MiB, P.max_window, false);
		struct mcc_law_in in = ep(8 * MiB, 500);
		in.route = kind == 3;
		run(&mcc_law_aimd, &ls, &in);
		CU_ASSERT_EQUAL(run(&mcc_law_aimd, &ls, &in).window, 4 * MiB); /* 8 MiB in flight */
		in.window = 4 * MiB;
		in.congested = true;
		in.actual = kind == 2 ? MiB : 0;
		in.ep_bytes = kind == 1 ? 8 * MiB + 64 * 1024 : 8 * MiB;
		const bool waits = kind == 0 || kind == 3;
		CU_ASSERT_EQUAL(run(&mcc_law_aimd, &ls, &in).window, waits ? 4 * MiB : 2 * MiB);
		if (waits) /* the second high epoch in a row */
			CU_ASSERT_EQUAL(run(&mcc_law_aimd, &ls, &in).window, 2 * MiB);
	}
}

/* On a path with a stated round trip S longer than an epoch, the at-once
 * cut of a CONGESTED domain waits for S to pass since the last cut (its
 * effect cannot show before); the high_pressure_epochs run does not. */
static void test_aimd_long_path_cuts_once_per_round_trip(void)
{
	struct mcc_law_state ls = { 0 };
	mcc_law_aimd.start(&P, &ls, MiB, P.max_window, false);
	struct mcc_law_in in = ep(8 * MiB, 500);
	in.stated_us = 5000;
	in.epoch_us = 1000;
	run(&mcc_law_aimd, &ls, &in);
	uint64_t w = run(&mcc_law_aimd, &ls, &in).window; /* the first cut, keeping 90 % */
	CU_ASSERT_TRUE(w < 8 * MiB);
	in.congested = true;
	in.window = in.actual = in.ep_bytes = w;
	/* one high epoch between calm ones (no run of high_pressure_epochs):
	 * 2 and 4 epochs after the cut, too soon */
	for (int e = 1; e <= 5; e++) {
		in.q_us = e % 2 ? 0 : 500;
		CU_ASSERT_EQUAL(run(&mcc_law_aimd, &ls, &in).window, w);
	}
	in.q_us = 500; /* 6 epochs after it: at once */
	CU_ASSERT_TRUE(run(&mcc_law_aimd, &ls, &in).window < w);
}

/* A cut on a path with a stated round trip S keeps (S + target / 2) /
 * (S + target) of the window (the share that holds the path's own round
 * trip and half a target of queue), at least md_percent and at most 90 %:
 * at a 200 us target none or 3 us keep half, 100 us 66 %, 200 us 75 %,
 * 500 us 85 %, 1 ms and 5 ms 90 %. */
static void test_aimd_cut_keeps_the_stated_round_trip(void)
{
	static const struct {
		uint64_t stated_us, keep_percent;
	} c[] = { { 0, 50 },   { 3, 50 },    { 100, 66 }, { 200, 75 },
	          { 500, 85 }, { 1000, 90 }, { 5000, 90 } };
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct mcc_law_state ls = { 0 };
		mcc_law_aimd.start(&P, &ls, MiB, P.max_window, false);
		struct mcc_law_in in = ep(8 * MiB, 500);
		in.stated_us = c[i].stated_us;
		in.base_us = c[i].stated_us;
		CU_ASSERT_EQUAL(run(&mcc_law_aimd, &ls, &in).window, 8 * MiB);
		CU_ASSERT_EQUAL(run(&mcc_law_aimd, &ls, &in).window,
		                mcc_law_scale(8 * MiB, c[i].keep_percent, 100));
	}
}

/* AIMD growth of a route after a low run: ai_bytes per calm epoch, at most
 * half the window, tapered by queueing, (target - q) / target: whole at none, three
 * quarters at target / 4, half at target / 2, none at the target (no hold
 * band: q <= target is calm); fast recovery's steps the same way. */
static void test_aimd_growth_tapers_with_queueing(void)
{
	struct mcc_law_state ls = { 0 }; /* HEALTHY, past slow start */
	const uint64_t t = P.target_drain_us;
	struct mcc_law_in in = rep(4 * MiB, 0);
	for (uint32_t i = 1; i < P.low_epochs; i++)
		CU_ASSERT_EQUAL(run(&mcc_law_aimd, &ls, &in).window, 4 * MiB);
	CU_ASSERT_EQUAL(run(&mcc_law_aimd, &ls, &in).window, 4 * MiB + P.ai_bytes);
	in.q_us = t / 4;
	CU_ASSERT_EQUAL(run(&mcc_law_aimd, &ls, &in).window, 4 * MiB + P.ai_bytes * 3 / 4);
	in.q_us = t / 2; /* the old hold band's floor: now half a step */
	struct mcc_law_out o = run(&mcc_law_aimd, &ls, &in);
	CU_ASSERT_EQUAL(o.window, 4 * MiB + P.ai_bytes / 2);
	CU_ASSERT_FALSE(o.congested);
	in.q_us = t - 2; /* 2 of 200 us headroom left: the taper's floor, 1/16 */
	CU_ASSERT_EQUAL(run(&mcc_law_aimd, &ls, &in).window,
	                4 * MiB + mcc_law_scale(P.ai_bytes, t / 16, t));
	in.q_us = t; /* at the target: calm, still the floor (no fixed point there) */
	o = run(&mcc_law_aimd, &ls, &in);
	CU_ASSERT_EQUAL(o.window, 4 * MiB + mcc_law_scale(P.ai_bytes, t / 16, t));
	CU_ASSERT_FALSE(o.congested);
	/* a window under 2 x ai_bytes grows by at most half of itself (at 2
	 * x min_window and above, the target is target_drain_us) */
	in = rep(2 * P.min_window, 0);
	CU_ASSERT_EQUAL(run(&mcc_law_aimd, &ls, &in).window, 3 * P.min_window);
	in = rep(3 * P.min_window, t / 4);
	CU_ASSERT_EQUAL(run(&mcc_law_aimd, &ls, &in).window,
	                3 * P.min_window + 3 * P.min_window / 2 * 3 / 4);
	/* a route's fast recovery after a cut 8 -> 4 MiB, at target / 4: three
	 * quarters of half the gap */
	memset(&ls, 0, sizeof(ls));
	in = rep(8 * MiB, 500);
	run(&mcc_law_aimd, &ls, &in);
	CU_ASSERT_EQUAL(run(&mcc_law_aimd, &ls, &in).window, 4 * MiB);
	in = rep(4 * MiB, t / 4);
	in.congested = true;
	for (uint32_t i = 1; i < P.low_epochs; i++)
		CU_ASSERT_EQUAL(run(&mcc_law_aimd, &ls, &in).window, 4 * MiB);
	CU_ASSERT_EQUAL(run(&mcc_law_aimd, &ls, &in).window, 5 * MiB + MiB / 2);
}

/* No hold band: one microsecond either side of the target decides. Just
 * under it a calm epoch grows (a route by 1/16 of ai_bytes, the taper's
 * floor); just over
 * it, after high_epochs, the window is cut by md_percent, the same cut as
 * for a queue fifty times the target (no severity scaling). */
static void test_aimd_no_hold_band_at_the_target(void)
{
	struct mcc_law_state ls = { 0 };
	const uint64_t t = P.target_drain_us;
	struct mcc_law_in in = rep(4 * MiB, t - 1);
	for (uint32_t i = 1; i < P.low_epochs; i++)
		CU_ASSERT_EQUAL(run(&mcc_law_aimd, &ls, &in).window, 4 * MiB);
	struct mcc_law_out o = run(&mcc_law_aimd, &ls, &in);
	CU_ASSERT_EQUAL(o.window, 4 * MiB + mcc_law_scale(P.ai_bytes, t / 16, t));
	CU_ASSERT(o.window > 4 * MiB);
	CU_ASSERT_FALSE(o.congested);

	in = ep(4 * MiB, t + 1);
	o = run(&mcc_law_aimd, &ls, &in); /* hysteresis: 1 of high_epochs */
	CU_ASSERT_EQUAL(o.window, 4 * MiB);
	CU_ASSERT_FALSE(o.congested);
	o = run(&mcc_law_aimd, &ls, &in);
	CU_ASSERT_EQUAL(o.window, 2 * MiB); /* x md_percent / 100 */
	CU_ASSERT_TRUE(o.congested);

	struct mcc_law_state ls2 = { 0 };
	in = ep(4 * MiB, 50 * t);
	run(&mcc_law_aimd, &ls2, &in);
	o = run(&mcc_law_aimd, &ls2, &in);
	CU_ASSERT_EQUAL(o.window, 2 * MiB); /* the same cut */
	/* congested, the cut in effect: the next high epoch just over the
	 * target cuts again by md */
	in = ep(2 * MiB, t + 1);
	in.congested = true;
	CU_ASSERT_EQUAL(run(&mcc_law_aimd, &ls2, &in).window, MiB);
}

/* A hardware device's additive step is the same bytes for every window,
 * at most min_window_bytes / 2, so two devices splitting a bottleneck near
 * their minimum windows grow alike (with the half-window cap alone, 160 KiB
 * and 400 KiB would grow by 80 and 200 KiB: in proportion, and their split
 * would stay). A route and a software device keep ai_bytes, at most half
 * the window. */
static void test_aimd_device_step_same_bytes(void)
{
	const uint64_t t = P.target_drain_us, k = 1024;
	const uint64_t w[2] = { 160 * k, 400 * k };
	/* the flow-scaled target: 200 us x sqrt(256 / 160), and the target
	 * itself from 2 x min_window up */
	const uint64_t ft[2] = { 252, t };
	for (int i = 0; i < 2; i++) {
		struct mcc_law_state ls = { 0 }, lr = { 0 }, lsw = { 0 };
		struct mcc_law_in d = ep(w[i], t / 2), r = rep(w[i], t / 2), sw = ep(w[i], t / 2);
		sw.software = true;
		for (uint32_t e = 1; e < P.low_epochs; e++) {
			run(&mcc_law_aimd, &ls, &d);
			run(&mcc_law_aimd, &lr, &r);
			run(&mcc_law_aimd, &lsw, &sw);
		}
		uint64_t step = P.ai_bytes < w[i] / 2 ? P.ai_bytes : w[i] / 2;
		const uint64_t room = ft[i] - t / 2; /* the taper: room / ft[i] */
		CU_ASSERT_EQUAL(run(&mcc_law_aimd, &ls, &d).window,
		                w[i] + mcc_law_scale(P.min_window / 2, room, ft[i]));
		CU_ASSERT_EQUAL(run(&mcc_law_aimd, &lr, &r).window,
		                w[i] + mcc_law_scale(step, room, ft[i]));
		CU_ASSERT_EQUAL(run(&mcc_law_aimd, &lsw, &sw).window,
		                w[i] + mcc_law_scale(step, room, ft[i]));
	}
	/* a device window under the step's cap still grows by at most half */
	struct mcc_law_state ls = { 0 };
	struct mcc_law_in d = ep(64 * k, 0);
	for (uint32_t e = 1; e < P.low_epochs; e++)
		run(&mcc_law_aimd, &ls, &d);
	CU_ASSERT_EQUAL(run(&mcc_law_aimd, &ls, &d).window, 96 * k);
}

/* A shared bottleneck as a synthetic queue: FAIR_BDP bytes in flight fill
 * the pipe, the rest queues and drains at FAIR_BPUS bytes per microsecond;
 * both flows see the same queueing every epoch. */
#define FAIR_BDP (1 * MiB) /* below the target's queue (2 MB): AIMD's halving keeps it full */
#define FAIR_BPUS 10000u
#define FAIR_EPOCHS 1200

/* queueing (us) of windows w1 + w2 on a pipe of `bdp` bytes draining
 * `bpus` bytes per microsecond */
static uint64_t queue_us(uint64_t w1, uint64_t w2, uint64_t bdp, uint64_t bpus)
{
	uint64_t sum = w1 + w2;
	return sum > bdp ? (sum - bdp) / bpus : 0;
}

static void fair_step(struct mcc_law_state *ls, uint64_t *w, bool *cong, uint64_t q)
{
	struct mcc_law_in in = ep(*w, q);
	in.congested = *cong;
	struct mcc_law_out o = run(&mcc_law_aimd, ls, &in);
	*w = o.window < P.min_window ? P.min_window
	                             : o.window > P.max_window ? P.max_window : o.window;
	*cong = o.congested;
}

/* A domain's target scales with its window (Swift's flow-scaled target):
 * 200 us x sqrt(2 x min_window / window), at most twice, the target itself
 * from 2 x min_window up. At 250 us of queueing a route or a device at the
 * minimum window (target 282 us) is calm and grows after low_epochs, one
 * at 4 x the minimum is cut by md after high_epochs; at twice the target
 * every window is high. */
static void test_aimd_target_scales_with_window(void)
{
	const uint64_t mw = P.min_window, q = 250;
	for (int route = 0; route < 2; route++) {
		struct mcc_law_state small = { 0 }, large = { 0 }, s2 = { 0 };
		struct mcc_law_in is = ep(mw, q), il = ep(4 * mw, q);
		is.route = il.route = route;
		is.congested = il.congested = true;
		struct mcc_law_out os = { 0 }, ol = { 0 };
		for (uint32_t e = 0; e < P.low_epochs; e++)
			os = run(&mcc_law_aimd, &small, &is);
		for (uint32_t e = 0; e < P.high_epochs; e++)
			ol = run(&mcc_law_aimd, &large, &il);
		CU_ASSERT_TRUE(os.window > mw); /* calm: grew after low_epochs */
		CU_ASSERT_FALSE(os.congested);
		CU_ASSERT_EQUAL(ol.window, 2 * mw); /* high: cut by md */
		CU_ASSERT_TRUE(ol.congested);
		is.q_us = 2 * P.target_drain_us + 1;
		for (uint32_t e = 0; e < P.high_epochs; e++)
			os = run(&mcc_law_aimd, &s2, &is);
		CU_ASSERT_TRUE(os.congested);
		CU_ASSERT_EQUAL(os.window, mw);
	}
}

/* Fairness (modules/core/law_aimd.c): two flows on one queue, from very
 * different windows (12 MiB and the minimum), cut in the same epochs by the
 * same factor and grow by the same tapered bytes, so their windows
 * converge; the taper's floor keeps them crossing the target (no fixed
 * point below it). */
static void test_aimd_two_flows_on_one_queue_converge(void)
{
	struct mcc_law_state a = { 0 }, b = { 0 };
	uint64_t wa = 12 * MiB, wb = P.min_window;
	bool ca = false, cb = false;
	uint32_t cuts = 0, full = 0;
	for (int e = 0; e < FAIR_EPOCHS; e++) {
		uint64_t q = queue_us(wa, wb, FAIR_BDP, FAIR_BPUS), pa = wa;
		fair_step(&a, &wa, &ca, q);
		fair_step(&b, &wb, &cb, q);
		cuts += wa < pa;
		full += e >= FAIR_EPOCHS / 2 && wa + wb >= FAIR_BDP;
	}
	uint64_t hi = wa > wb ? wa : wb, lo = wa > wb ? wb : wa;
	CU_ASSERT(cuts >= 10);             /* AIMD cycles, not a frozen split */
	CU_ASSERT(10 * (hi - lo) <= hi);   /* within 10 % of each other */
	CU_ASSERT(full * 10 >= FAIR_EPOCHS / 2 * 8); /* the pipe full 80 % of the time */
}

/* The same on a busy port, where the devices hold a few slices each above
 * a small bandwidth-delay product and are cut again and again: two flows
 * at a 2:1 split (the split TE's two flows of 1 MiB x 4 held on one 25 Gb/s
 * port) are within 10 % of each other after 100 epochs. With fast
 * recovery, which returned each device toward its own window before the
 * cut, they were 21 % apart (365 and 288 KiB). */
static void test_aimd_devices_even_out_on_a_busy_port(void)
{
	struct mcc_law_state a = { 0 }, b = { 0 };
	uint64_t wa = 450 * 1024, wb = 225 * 1024;
	bool ca = true, cb = true;
	mcc_law_aimd.start(&P, &a, wa, P.max_window, false);
	mcc_law_aimd.start(&P, &b, wb, P.max_window, false);
	for (int e = 0; e < 100; e++) {
		uint64_t q = queue_us(wa, wb, 64 * 1024, 3125); /* 25 Gb/s */
		fair_step(&a, &wa, &ca, q);
		fair_step(&b, &wb, &cb, q);
	}
	uint64_t hi = wa > wb ? wa : wb, lo = wa > wb ? wb : wa;
	CU_ASSERT(10 * (hi - lo) <= hi);
}

/* Between cuts, the pull (law_aimd.c pull()): each calm epoch a device
 * gives back 1/16 of the bytes it keeps in the queue beyond half the
 * target, w x (q - t / 2) / drain time. On one queue that is a fixed point
 * at one rate for all: two devices on a 400 Gb/s port (50,000 bytes per
 * microsecond, a 3 us base, a queue of one target = 10 MB: windows far
 * above the minimum), one at 8 MiB and a joiner at the minimum, are within
 * 5 % of each other after 600 epochs with nobody cut, the queue between
 * half the target and the target. Without the pull (the law before it)
 * the taper held the queue just under the target, the same bytes went to
 * both every calm epoch, and in 600 epochs 6 were high: 6.8 and 2.6 MiB at
 * the end. Only queueing measured against a common reference pulls: a
 * route (beyond its own learned base, which differs from route to route)
 * and a device measured beyond a long base it learned itself (more than
 * the host stated) do not, and two of them from the same start are still
 * more than 10 % apart. */
static void test_aimd_pull_evens_devices_between_cuts(void)
{
	for (int own = 0; own < 3; own++) {
		struct mcc_law_state a = { 0 }, b = { 0 };
		uint64_t w[2] = { 8 * MiB, P.min_window };
		struct mcc_law_state *ls[2] = { &a, &b };
		uint32_t high = 0;
		for (int e = 0; e < 600; e++) {
			uint64_t q = queue_us(w[0], w[1], 150000, 50000);
			for (int i = 0; i < 2; i++) {
				struct mcc_law_in in = ep(w[i], q);
				in.route = own == 1;
				in.base_us = own == 2 ? 500 : 0; /* q beyond it */
				in.drain_us = in.base_us + 3 + q;
				struct mcc_law_out o = run(&mcc_law_aimd, ls[i], &in);
				high += o.congested;
				w[i] = o.window;
			}
		}
		uint64_t hi = w[0] > w[1] ? w[0] : w[1], lo = w[0] > w[1] ? w[1] : w[0];
		uint64_t q = queue_us(w[0], w[1], 150000, 50000);
		if (own) {
			CU_ASSERT(10 * (hi - lo) > hi);
			continue;
		}
		CU_ASSERT_EQUAL(high, 0);
		CU_ASSERT(20 * (hi - lo) <= hi);
		CU_ASSERT(q > P.target_drain_us / 2 && q <= P.target_drain_us);
	}
}

/* Pacing: a route at the minimum window still high after AIMD_PACE_AFTER
 * (4) high runs gets an effective window min x md and a pace of it per
 * drain time; a paced route stays CONGESTED, is cut by md after high_epochs
 * high epochs over its flow-scaled target (200 us x sqrt(4) at w_eff =
 * min / 2), grows multiplicatively while calm, and leaves pacing (pace 0)
 * at the minimum window. A device domain is never paced. */
static void test_aimd_pacing_below_the_minimum_window(void)
{
	struct mcc_law_state ls = { 0 };
	const uint64_t mw = P.min_window;
	struct mcc_law_in in = ep(mw, 500);
	in.route = true;
	in.congested = true;
	in.drain_us = 1000;
	in.epoch_us = 1000;
	in.slice = 65536;
	struct mcc_law_out o;
	for (uint32_t i = 1; i < 4; i++) {
		o = run(&mcc_law_aimd, &ls, &in);
		CU_ASSERT_EQUAL(o.window, mw);
		CU_ASSERT_EQUAL(o.pace, 0);
		CU_ASSERT_TRUE(o.congested);
	}
	o = run(&mcc_law_aimd, &ls, &in); /* the 4th high run at the floor */
	CU_ASSERT_EQUAL(o.window, mw);
	CU_ASSERT_EQUAL(o.pace, mw / 2 * 1000 / 1000); /* w_eff per drain time */
	CU_ASSERT_TRUE(o.congested);
	uint64_t pace0 = o.pace;
	/* the same epochs on a device domain: never paced */
	struct mcc_law_state dls = { 0 };
	struct mcc_law_in din = in;
	din.route = false;
	for (int i = 0; i < 8; i++)
		CU_ASSERT_EQUAL(run(&mcc_law_aimd, &dls, &din).pace, 0);

	/* paced: q = 250 us is under the flow-scaled target (400 us): calm,
	 * no cut; at the old 200 us target it would have been high */
	in.pace = pace0;
	in.q_us = 250;
	in.drain_us = 1000;
	o = run(&mcc_law_aimd, &ls, &in);
	CU_ASSERT_EQUAL(o.pace, pace0);
	CU_ASSERT_TRUE(o.congested);
	/* high over it: cut by md after high_epochs */
	in.q_us = 500;
	o = run(&mcc_law_aimd, &ls, &in);
	CU_ASSERT_EQUAL(o.pace, pace0);
	o = run(&mcc_law_aimd, &ls, &in);
	CU_ASSERT_EQUAL(o.pace, pace0 / 2);
	CU_ASSERT_EQUAL(o.window, mw); /* the window stays at the minimum */
	CU_ASSERT_TRUE(o.congested);
	/* calm at no queueing, the drain time back at 1 ms: after low_epochs
	 * (here an epoch without completions counts as calm too) the
	 * effective window grows by half of itself per epoch: 32 -> 48 -> 72
	 * -> 108 KiB, then at >= min_window pacing ends */
	in.pace = o.pace;
	in.q_us = 0;
	for (uint32_t i = 1; i < P.low_epochs; i++) {
		struct mcc_law_in idle = in;
		if (i == 2) {
			idle.clean = false; /* no completion in this epoch */
			idle.ep_bytes = 0;
		}
		o = run(&mcc_law_aimd, &ls, &idle);
		CU_ASSERT_EQUAL(o.pace, pace0 / 2);
	}
	const uint64_t expect[] = { 49152, 73728, 110592 };
	for (unsigned i = 0; i < 3; i++) {
		in.pace = o.pace;
		o = run(&mcc_law_aimd, &ls, &in);
		CU_ASSERT_EQUAL(o.pace, expect[i]); /* w_eff per 1 ms per 1 ms epoch */
		CU_ASSERT_TRUE(o.congested);
	}
	in.pace = o.pace;
	o = run(&mcc_law_aimd, &ls, &in);
	CU_ASSERT_EQUAL(o.pace, 0); /* window mode again */
	CU_ASSERT_EQUAL(o.window, mw);
	CU_ASSERT_TRUE(o.congested);
	/* then window growth, and HEALTHY */
	in.pace = 0;
	o = run(&mcc_law_aimd, &ls, &in);
	CU_ASSERT_EQUAL(o.window, mw * 3 / 2);
	CU_ASSERT_FALSE(o.congested);
	CU_ASSERT_EQUAL(o.pace, 0);
}

/* A small flow at the minimum window (one 64 KiB slice outstanding in a
 * 128 KiB window: its window never binds) in a queue that stays high: it
 * is never paced, since a pace would only delay its messages and take
 * nothing from the queue (the victim of a 16:1 incast waited 1.3x longer
 * than without the controller, 5.6 ms at 32:1). The same route with its
 * window full once in the run is paced at the 4th high run. */
static void test_aimd_unbound_window_is_not_paced(void)
{
	const uint64_t mw = P.min_window;
	for (int bound_once = 0; bound_once < 2; bound_once++) {
		struct mcc_law_state ls = { 0 };
		struct mcc_law_in in = rep(mw, 500);
		in.congested = true;
		in.drain_us = 1000;
		in.epoch_us = 1000;
		in.slice = 65536;
		uint64_t pace = 0;
		for (int i = 0; i < 40 && !pace; i++) {
			in.actual = bound_once && i == 1 ? mw : in.slice; /* full once, else one slice */
			pace = run(&mcc_law_aimd, &ls, &in).pace;
		}
		CU_ASSERT_EQUAL(pace, bound_once ? mw / 2 : 0);
	}
}

MCC_CU_SUITE(t_init_law_tests, "law", NULL, NULL,
             test_delay_cut_scales_with_overshoot,
             test_delay_growth_needs_base_use_and_headroom,
             test_aimd_hysteresis_halving_and_recovery,
             test_aimd_drained_cut_waits_for_its_bytes,
             test_aimd_long_path_cuts_once_per_round_trip,
             test_aimd_cut_keeps_the_stated_round_trip,
             test_aimd_growth_tapers_with_queueing,
             test_aimd_no_hold_band_at_the_target,
             test_aimd_unbound_window_is_not_paced,
             test_aimd_device_step_same_bytes,
             test_aimd_target_scales_with_window,
             test_aimd_two_flows_on_one_queue_converge,
             test_aimd_devices_even_out_on_a_busy_port,
             test_aimd_pull_evens_devices_between_cuts,
             test_aimd_pacing_below_the_minimum_window)

MCC_CU_MAIN(t_init_law_tests)
