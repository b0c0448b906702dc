/* SPDX-License-Identifier: MIT */
/*
 * test_law.c - the control laws of modules/core/law.h as pure functions:
 * the AIMD law (modules/core/law_aimd.c) and the delay-target law
 * (modules/delay/law_delay.c), one epoch at a time with hand-set
 * measurements. Their place in the mechanism (quarantine, credit, evidence)
 * is tested through the descriptors elsewhere.
 */
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
	struct mcc_law_in in;
	memset(&in, 0, sizeof(in));
	in.window = w;
	in.actual = w;
	in.ep_bytes = w;
	in.q_us = q;
	in.based = in.clean = true;
	return in;
}

static struct mcc_law_out run(const struct mcc_law *law, struct mcc_law_state *ls,
                              const struct mcc_law_in *in)
{
	struct mcc_law_out out = { in->window, in->congested };
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

/* The AIMD law's own rules, as modules/core/README.md states them. */
static void test_aimd_hysteresis_halving_and_recovery(void)
{
	struct mcc_law_state ls = { 0 };
	CU_ASSERT_EQUAL(mcc_law_aimd.start(&P, &ls, MiB, P.max_window, false), MiB);
	struct mcc_law_in in = ep(8 * MiB, 500); /* q / (2 T) >= 1: full md */
	CU_ASSERT_EQUAL(run(&mcc_law_aimd, &ls, &in).window, 8 * MiB);
	struct mcc_law_out o = run(&mcc_law_aimd, &ls, &in);
	CU_ASSERT_EQUAL(o.window, 4 * MiB);
	CU_ASSERT_TRUE(o.congested);
	/* fast recovery: after low_epochs clean epochs, halve the gap to 8 MiB */
	in = ep(4 * MiB, 0);
	in.congested = true;
	for (uint32_t i = 1; i < P.low_epochs; i++)
		CU_ASSERT_EQUAL(run(&mcc_law_aimd, &ls, &in).window, 4 * MiB);
	o = run(&mcc_law_aimd, &ls, &in);
	CU_ASSERT_EQUAL(o.window, 6 * MiB);
	CU_ASSERT_FALSE(o.congested);
	/* recovery from quarantine: slow start from the minimum, held until a
	 * low run has passed */
	CU_ASSERT_EQUAL(mcc_law_aimd.start(&P, &ls, P.min_window, 8 * MiB, true), P.min_window);
	in = ep(P.min_window, 0);
	for (uint32_t i = 1; i < P.low_epochs; i++)
		CU_ASSERT_EQUAL(run(&mcc_law_aimd, &ls, &in).window, P.min_window);
	CU_ASSERT_EQUAL(run(&mcc_law_aimd, &ls, &in).window, 2 * P.min_window);
}

/* AIMD growth after a low run: ai_bytes per calm epoch, at most half the
 * window, tapered by queueing (whole at none, half at target / 4, none at
 * target / 2); fast recovery's steps the same way. */
static void test_aimd_growth_tapers_with_queueing(void)
{
	struct mcc_law_state ls = { 0 }; /* HEALTHY, past slow start */
	struct mcc_law_in in = ep(4 * MiB, 0);
	for (uint32_t i = 1; i < P.low_epochs; i++)
		CU_ASSERT_EQUAL(run(&mcc_law_aimd, &ls, &in).window, 4 * MiB);
	CU_ASSERT_EQUAL(run(&mcc_law_aimd, &ls, &in).window, 4 * MiB + P.ai_bytes);
	in.q_us = P.target_drain_us / 4;
	CU_ASSERT_EQUAL(run(&mcc_law_aimd, &ls, &in).window, 4 * MiB + P.ai_bytes / 2);
	in.q_us = P.target_drain_us / 2 - 1; /* 2 of 200 us headroom left */
	CU_ASSERT_EQUAL(run(&mcc_law_aimd, &ls, &in).window, 4 * MiB + P.ai_bytes / 100);
	in.q_us = P.target_drain_us / 2; /* the hold band: no growth, still calm */
	struct mcc_law_out o = run(&mcc_law_aimd, &ls, &in);
	CU_ASSERT_EQUAL(o.window, 4 * MiB);
	CU_ASSERT_FALSE(o.congested);
	/* a window under 2 x ai_bytes grows by at most half of itself */
	in = ep(P.min_window, 0);
	CU_ASSERT_EQUAL(run(&mcc_law_aimd, &ls, &in).window, P.min_window * 3 / 2);
	in.q_us = P.target_drain_us / 4;
	CU_ASSERT_EQUAL(run(&mcc_law_aimd, &ls, &in).window, P.min_window * 5 / 4);
	/* fast recovery after a cut 8 -> 4 MiB, at target / 4: a quarter of
	 * the gap instead of half */
	memset(&ls, 0, sizeof(ls));
	in = ep(8 * MiB, 500);
	run(&mcc_law_aimd, &ls, &in);
	CU_ASSERT_EQUAL(run(&mcc_law_aimd, &ls, &in).window, 4 * MiB);
	in = ep(4 * MiB, P.target_drain_us / 4);
	in.congested = true;
	for (uint32_t i = 1; i < P.low_epochs; i++)
		CU_ASSERT_EQUAL(run(&mcc_law_aimd, &ls, &in).window, 4 * MiB);
	CU_ASSERT_EQUAL(run(&mcc_law_aimd, &ls, &in).window, 5 * MiB);
}

MCC_CU_SUITE(t_init_law_tests, "law", NULL, NULL,
             test_delay_cut_scales_with_overshoot,
             test_delay_growth_needs_base_use_and_headroom,
             test_aimd_hysteresis_halving_and_recovery,
             test_aimd_growth_tapers_with_queueing)

MCC_CU_MAIN(t_init_law_tests)
