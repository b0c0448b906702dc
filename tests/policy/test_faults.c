/* SPDX-License-Identifier: MIT */
/*
 * test_faults.c - fault semantics of the path state machine (control.c
 * "Faults"), clock injected: hard errors counted across endpoint generations
 * within the flap window (a flapping rail, RETRY_EXC bursts of a reordering
 * rxe path), probation after a quarantine (flap damping with a growing
 * cooldown), a rail dead at start, idle SUSPECT and PROBING routes, and
 * LONG_UNAVAILABLE as "no usable path now" at task_query.
 */
#include <infiniband/verbs.h>
#include <stdio.h>

#include "cu_driver.h"
#include "harness.h"

struct fix {
	struct th *h;
	mcc_device *d, *d2;
	mcc_route *r, *r2; /* r on d, r2 on d2 (another local NIC) */
};

/* Two devices, a route on each; both delivered (warm). */
static struct fix fx(const struct mcc_config_v1 *cfg)
{
	struct fix f;
	f.h = th_new(&mcc_test_aimd_v1, cfg);
	f.d = th_dev(f.h, 0);
	f.d2 = th_dev(f.h, 1);
	f.r = th_route(f.h, f.d, 1, 1, 0, 1);
	f.r2 = th_route(f.h, f.d2, 2, 1, 1, 1);
	th_warm(f.h, f.d, f.r);
	th_warm(f.h, f.d2, f.r2);
	return f;
}

/* One WR of generation `gen` on r ends with `status` (a task if t). */
static void wc_on(struct th *h, mcc_route *r, uint32_t gen, int32_t status, uint64_t b,
                  uint64_t t, uint32_t attempt)
{
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL_FATAL(th_acq(h, r, 4096, gen, b, t, attempt, &p), MCC_ADMIT);
	th_wc(h, &p, status, 0);
}

/* `ms` of healthy traffic on r (generation h->gen), one epoch per ms. */
static void up_for(struct th *h, mcc_route *r, unsigned ms)
{
	th_calm(h, r, (int)ms);
}

/* Recover a QUARANTINED route: wait out its cooldown, then probe_successes
 * clean probes on generation `gen` (newer than the failed one). */
static void recover(struct th *h, mcc_route *r, uint32_t gen)
{
	uint64_t left = th_rs(h, r).cooldown_ms;
	th_advance_ms(h, left);
	th_tick(h);
	CU_ASSERT_EQUAL_FATAL(th_rstate(h, r), MCC_PATH_PROBING);
	for (uint32_t i = 0; i < h->cfg.probe_successes; i++)
		wc_on(h, r, gen, IBV_WC_SUCCESS, 0, 0, 0);
	th_tick(h);
	CU_ASSERT_EQUAL_FATAL(th_rstate(h, r), MCC_PATH_HEALTHY);
}

/* A rail that flaps: each flap ends one endpoint generation with 2
 * RETRY_EXC (one per QP), then the rebuilt endpoint works until the next
 * flap (1.5 s up). The errors of the second flap add to the first's: the
 * route is quarantined (before: a new generation and the clean epochs of
 * the up phase cleared them, and it cycled SUSPECT -> HEALTHY for good). */
static void test_flapping_rail_errors_accumulate_across_generations(void)
{
	struct fix f = fx(NULL);
	wc_on(f.h, f.r, 1, IBV_WC_RETRY_EXC_ERR, 0, 0, 0);
	wc_on(f.h, f.r, 1, IBV_WC_RETRY_EXC_ERR, 0, 0, 0);
	th_tick(f.h);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_SUSPECT);
	f.h->gen = 2; /* rebuilt endpoint, link back: 1.5 s of clean traffic */
	up_for(f.h, f.r, 50);
	th_advance_ms(f.h, 1450);
	up_for(f.h, f.r, 1);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_HEALTHY);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).hard_errors, 2); /* still counted */
	wc_on(f.h, f.r, 2, IBV_WC_RETRY_EXC_ERR, 0, 0, 0); /* the next flap */
	th_tick(f.h);
	struct mcc_domain_stats_v1 s = th_rs(f.h, f.r);
	CU_ASSERT_EQUAL(s.state, MCC_PATH_QUARANTINED);
	CU_ASSERT_EQUAL(s.quarantines, 1);
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 4096, 3, 0, 0, 0, &p), MCC_AVOID);
	th_free(f.h);
}

/* Six flaps (1-2 s down, 1.5-2.5 s up): after the first quarantine the
 * route is on probation for a flap window, so each later flap quarantines
 * it at its first error, with a doubled cooldown (flap damping), up to
 * cooldown_max_ms. */
static void test_flapping_rail_quarantined_with_growing_cooldown(void)
{
	struct fix f = fx(NULL);
	uint32_t gen = 1;
	uint64_t last = 0;
	unsigned quarantined = 0;
	for (int flap = 0; flap < 6; flap++) {
		/* down: the current endpoint ends with 2 transport timeouts */
		uint32_t st = th_rstate(f.h, f.r);
		if (st != MCC_PATH_QUARANTINED) {
			wc_on(f.h, f.r, gen, IBV_WC_RETRY_EXC_ERR, 0, 0, 0);
			if (th_rstate(f.h, f.r) != MCC_PATH_QUARANTINED)
				wc_on(f.h, f.r, gen, IBV_WC_RETRY_EXC_ERR, 0, 0, 0);
			th_tick(f.h);
		}
		gen++;
		struct mcc_domain_stats_v1 s = th_rs(f.h, f.r);
		if (s.state == MCC_PATH_QUARANTINED) {
			quarantined++;
			printf("(flap %d: cooldown %llu ms) ", flap, (unsigned long long)s.cooldown_ms);
			if (quarantined > 1) /* damped: each cooldown doubles (capped) */
				CU_ASSERT(s.cooldown_ms >= (2 * last < 30000 ? 2 * last : 30000));
			last = s.cooldown_ms;
			recover(f.h, f.r, gen++); /* the link is back by the probe */
		}
		f.h->gen = gen;
		up_for(f.h, f.r, 20); /* up: clean traffic */
		th_advance_ms(f.h, 1500);
	}
	CU_ASSERT(quarantined >= 5); /* the first flap only makes it SUSPECT */
	CU_ASSERT(last >= 16000);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).quarantines, quarantined);
	th_free(f.h);
}

/* Reordering and duplication on rxe end one WR in many with RETRY_EXC_ERR;
 * TE deletes the endpoint at each, so every error is on a new generation,
 * with successes in between. The errors still count: the third quarantines
 * the route and its traffic is AVOIDed (the host moves it), while the other
 * local NIC's route stays HEALTHY. */
static void test_retry_exc_bursts_on_new_generations_move_the_traffic(void)
{
	struct fix f = fx(NULL);
	for (uint32_t g = 1; g <= 3; g++) {
		f.h->gen = g;
		up_for(f.h, f.r, 3);
		wc_on(f.h, f.r, g, IBV_WC_RETRY_EXC_ERR, 0, 0, 0);
		th_tick(f.h);
	}
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_QUARANTINED);
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 4096, 4, 0, 0, 0, &p), MCC_AVOID);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r2), MCC_PATH_HEALTHY);
	CU_ASSERT_EQUAL(th_acq(f.h, f.r2, 4096, 1, 0, 0, 0, &p), MCC_ADMIT);
	th_wc(f.h, &p, IBV_WC_SUCCESS, 0);
	th_free(f.h);
}

/* Late WCs of a replaced endpoint are stale: they count for nothing, even
 * while the errors of the current one accumulate. */
static void test_stale_generation_errors_count_for_nothing(void)
{
	struct fix f = fx(NULL);
	f.h->gen = 5;
	up_for(f.h, f.r, 1); /* generation 5 is current */
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	for (int i = 0; i < 5; i++) {
		CU_ASSERT_EQUAL(th_acq(f.h, f.r, 4096, 5, 0, 0, 0, &p), MCC_ADMIT);
		th_wc_gen(f.h, &p, IBV_WC_RETRY_EXC_ERR, 4, 0); /* WC of generation 4 */
	}
	th_tick(f.h);
	struct mcc_domain_stats_v1 s = th_rs(f.h, f.r);
	CU_ASSERT_EQUAL(s.state, MCC_PATH_HEALTHY);
	CU_ASSERT_EQUAL(s.hard_errors, 0);
	CU_ASSERT_EQUAL(s.stale_feedback, 5);
	th_free(f.h);
}

/* A rail dead at start (no success ever) is quarantined by its first
 * transport timeout: bounded by one QP timeout, not three. A route that
 * delivered needs hard_error_threshold. */
static void test_rail_dead_at_start_quarantined_at_first_hard_error(void)
{
	struct th *h = th_new(&mcc_test_aimd_v1, NULL);
	mcc_device *d = th_dev(h, 0);
	mcc_route *dead = th_route(h, d, 1, 1, 0, 1), *ok = th_route(h, d, 2, 1, 0, 1);
	th_calm(h, ok, 1);
	wc_on(h, dead, 1, IBV_WC_RETRY_EXC_ERR, 0, 0, 0);
	wc_on(h, ok, 1, IBV_WC_RETRY_EXC_ERR, 0, 0, 0);
	th_tick(h);
	CU_ASSERT_EQUAL(th_rstate(h, dead), MCC_PATH_QUARANTINED);
	CU_ASSERT_EQUAL(th_rstate(h, ok), MCC_PATH_SUSPECT);
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq(h, dead, 4096, 2, 0, 0, 0, &p), MCC_AVOID);
	/* a success and an error in the same epoch: it delivered */
	mcc_route *mixed = th_route(h, d, 3, 1, 0, 1);
	CU_ASSERT_EQUAL(th_acq(h, mixed, 4096, 1, 0, 0, 0, &p), MCC_ADMIT);
	th_wc(h, &p, IBV_WC_SUCCESS, 0);
	wc_on(h, mixed, 1, IBV_WC_RETRY_EXC_ERR, 0, 0, 0);
	th_tick(h);
	CU_ASSERT_EQUAL(th_rstate(h, mixed), MCC_PATH_SUSPECT);
	th_free(h);
}

/* A dead path: its endpoint times out, the host pauses the rail and builds
 * a new one, which times out too, with no success between. That second
 * generation's error quarantines it (waiting for a third error left a dead
 * rail SUSPECT for most of a 5 s outage); with a success between them it
 * stays SUSPECT. The errors of one endpoint (its QPs, in different epochs)
 * are one episode. */
static void test_second_hard_error_without_success_quarantines(void)
{
	struct fix f = fx(NULL);
	wc_on(f.h, f.r, 1, IBV_WC_RETRY_EXC_ERR, 0, 0, 0);
	th_tick(f.h);
	wc_on(f.h, f.r, 1, IBV_WC_RETRY_EXC_ERR, 0, 0, 0); /* its other QP, later */
	th_tick(f.h);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_SUSPECT); /* one episode */
	th_advance_ms(f.h, 1000);
	th_ticks(f.h, 2);
	wc_on(f.h, f.r, 2, IBV_WC_RETRY_EXC_ERR, 0, 0, 0);
	th_tick(f.h);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_QUARANTINED);
	/* the other route: a success between its two errors */
	wc_on(f.h, f.r2, 1, IBV_WC_RETRY_EXC_ERR, 0, 0, 0);
	th_tick(f.h);
	th_calm(f.h, f.r2, 1);
	wc_on(f.h, f.r2, 2, IBV_WC_RETRY_EXC_ERR, 0, 0, 0);
	th_tick(f.h);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r2), MCC_PATH_SUSPECT);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r2).hard_errors, 2);
	th_free(f.h);
}

/* An idle SUSPECT route (no admission, no completion, nothing in flight)
 * returns to where it came from after cooldown_ms; its errors still count
 * within the flap window. */
static void test_idle_suspect_decays_after_a_cooldown(void)
{
	struct fix f = fx(NULL);
	wc_on(f.h, f.r, 1, IBV_WC_RETRY_EXC_ERR, 0, 0, 0);
	th_tick(f.h);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_SUSPECT);
	th_ticks(f.h, 998); /* 999 ms idle */
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_SUSPECT);
	th_ticks(f.h, 2);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_HEALTHY);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).hard_errors, 1);
	/* bytes held without completions are not idle: a stuck SUSPECT stays */
	th_calm(f.h, f.r, 1); /* (a success first: else this error quarantines) */
	wc_on(f.h, f.r, 1, IBV_WC_RETRY_EXC_ERR, 0, 0, 0);
	struct mcc_permit_v1 held = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 4096, 1, 0, 0, 0, &held), MCC_ADMIT);
	th_ticks(f.h, 1500);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_SUSPECT);
	th_wc(f.h, &held, IBV_WC_SUCCESS, 0);
	th_tick(f.h);
	/* a clean epoch ends SUSPECT (its 1.5 s wait may read as congestion) */
	uint32_t st = th_rstate(f.h, f.r);
	CU_ASSERT(st == MCC_PATH_HEALTHY || st == MCC_PATH_CONGESTED);
	th_free(f.h);
}

/* An idle PROBING route is probed on its next use: it stays PROBING with
 * no traffic, and the next admission (a new generation) is the probe. */
static void test_idle_probing_is_probed_on_next_use(void)
{
	struct fix f = fx(NULL);
	th_quarantine_route(f.h, f.r, 1);
	th_advance_ms(f.h, 1000);
	th_tick(f.h);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_PROBING);
	th_advance_ms(f.h, 45000); /* no traffic for 45 s */
	th_ticks(f.h, 10);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_PROBING);
	for (int i = 0; i < 3; i++) {
		struct mcc_permit_v1 p = MCC_PERMIT_INIT;
		CU_ASSERT_EQUAL(th_acq(f.h, f.r, 4096, 2, 0, 0, 0, &p), MCC_ADMIT);
		CU_ASSERT(p.flags & MCC_PERMIT_F_PROBE);
		th_wc(f.h, &p, IBV_WC_SUCCESS, 0);
	}
	th_tick(f.h);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_HEALTHY);
	th_free(f.h);
}

/* LONG_UNAVAILABLE at task_query means no usable path now: a task AVOIDed
 * on a quarantined route whose slices then complete on the other local
 * NIC does not read it; a task whose every path is quarantined does, as
 * soon as its next slice is refused after the last quarantine (within the
 * epoch), and reads it again when a later slice is refused once more. */
static void test_long_unavailable_means_no_usable_path_now(void)
{
	struct fix f = fx(NULL);
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	struct mcc_task_detail_v1 d;
	th_quarantine_route(f.h, f.r, 1);
	/* task 1: AVOIDed on r, its slices move to r2 and complete */
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 4096, 1, 9, 1, 0, &p), MCC_AVOID);
	CU_ASSERT_EQUAL(th_query(f.h, 9, 1, 0, NULL), MCC_TASK_LONG_UNAVAILABLE);
	wc_on(f.h, f.r2, 1, IBV_WC_SUCCESS, 9, 1, 0);
	CU_ASSERT_EQUAL(th_query(f.h, 9, 1, MCC_TASKQ_SEEN_SUCCESS, &d), MCC_TASK_NORMAL);
	CU_ASSERT_EQUAL(d.resolved, 1);
	/* task 2: both rails down; r2's last path quarantined */
	th_quarantine_route(f.h, f.r2, 1);
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 4096, 1, 9, 2, 0, &p), MCC_AVOID);
	CU_ASSERT_EQUAL(th_acq(f.h, f.r2, 4096, 1, 9, 2, 0, &p), MCC_AVOID);
	CU_ASSERT_EQUAL(th_query(f.h, 9, 2, 0, &d), MCC_TASK_LONG_UNAVAILABLE);
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_PATH_QUARANTINED);
	CU_ASSERT(d.cooldown_ms > 0);
	th_ticks(f.h, 100);
	CU_ASSERT_EQUAL(th_query(f.h, 9, 2, 0, NULL), MCC_TASK_LONG_UNAVAILABLE);
	th_free(f.h);
}

MCC_CU_SUITE(t_init_faults_tests, "policy_faults", NULL, NULL,
             test_flapping_rail_errors_accumulate_across_generations,
             test_flapping_rail_quarantined_with_growing_cooldown,
             test_retry_exc_bursts_on_new_generations_move_the_traffic,
             test_stale_generation_errors_count_for_nothing,
             test_rail_dead_at_start_quarantined_at_first_hard_error,
             test_second_hard_error_without_success_quarantines,
             test_idle_suspect_decays_after_a_cooldown,
             test_idle_probing_is_probed_on_next_use,
             test_long_unavailable_means_no_usable_path_now)

MCC_CU_MAIN(t_init_faults_tests)
