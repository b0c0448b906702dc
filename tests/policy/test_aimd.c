/* SPDX-License-Identifier: MIT */
/*
 * test_aimd.c - AIMD with hysteresis (tick epochs driven by the test with an
 * injected clock) and every edge of the path state machine, including flap
 * damping and fast recovery.
 */
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>

#include "core.h" /* MCC_BASE_EPOCHS */
#include "cu_driver.h"
#include "harness.h"

static void timeout_wc(struct th *h, mcc_route *r, uint32_t gen)
{
	th_slices(h, r, 1, gen, IBV_WC_RETRY_EXC_ERR);
}

static void probe_ok(struct th *h, mcc_route *r, uint32_t gen)
{
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq(h, r, 4096, gen, 0, 0, 0, &p), MCC_ADMIT);
	CU_ASSERT(p.flags & MCC_PERMIT_F_PROBE);
	th_wc(h, &p, IBV_WC_SUCCESS, 0);
}

static void test_windows_start_at_max_on_healthy_path(void)
{
	struct th_fix f = th_fix(NULL);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).window_bytes, 16 * MiB);
	CU_ASSERT_EQUAL(th_ds(f.h, f.d).window_bytes, 16 * MiB);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_HEALTHY);
	CU_ASSERT_EQUAL(th_dstate(f.h, f.d), MCC_PATH_HEALTHY);
	th_free(f.h);
}

static void test_edge_healthy_to_congested_after_high_pressure_epochs(void)
{
	struct th_fix f = th_fix(NULL);
	th_press(f.h, f.r, 1);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_HEALTHY); /* hysteresis: 1 of 2 */
	CU_ASSERT_EQUAL(th_rwin(f.h, f.r), 16 * MiB);
	CU_ASSERT(th_rs(f.h, f.r).drain_us > 200);
	th_press(f.h, f.r, 1);
	struct mcc_domain_stats_v1 s = th_rs(f.h, f.r);
	CU_ASSERT_EQUAL(s.state, MCC_PATH_CONGESTED);
	CU_ASSERT_EQUAL(s.window_bytes, 8 * MiB); /* md_percent 50 */
	CU_ASSERT_EQUAL(s.window_cuts, 1);
	CU_ASSERT_EQUAL(s.quarantines, 0); /* no failover */
	CU_ASSERT(s.rate_bps > 0);
	th_free(f.h);
}

static void test_edge_congested_to_healthy_after_low_pressure_epochs(void)
{
	struct th_fix f = th_fix(NULL);
	th_press(f.h, f.r, 2);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_CONGESTED);
	th_calm(f.h, f.r, 3);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_CONGESTED); /* 3 of 4 */
	CU_ASSERT_EQUAL(th_rwin(f.h, f.r), 8 * MiB);
	th_calm(f.h, f.r, 1);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_HEALTHY);
	CU_ASSERT_EQUAL(th_rwin(f.h, f.r), 12 * MiB); /* fast recovery: half the gap */
	th_free(f.h);
}

static void test_at_most_one_multiplicative_cut_per_epoch(void)
{
	struct th_fix f = th_fix(NULL);
	th_press(f.h, f.r, 1);
	/* a storm of pressure in one epoch: receiver pressure, backlog growth */
	for (int i = 0; i < 50; i++) {
		struct mcc_permit_v1 p = MCC_PERMIT_INIT;
		CU_ASSERT_EQUAL(th_acq_simple(f.h, f.r, 4096, &p), MCC_ADMIT);
		th_wc(f.h, &p, IBV_WC_RNR_RETRY_EXC_ERR, 0);
		th_sig(f.h, MCC_SIG_BACKLOG, NULL, f.r, 0, 0, 1, 0, (uint64_t)(i + 1) * MiB, 0);
	}
	th_press(f.h, f.r, 1);
	CU_ASSERT_EQUAL(th_rwin(f.h, f.r), 8 * MiB);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).window_cuts, 1);
	/* CONGESTED, the cut already in effect (in-flight <= window): the next
	 * high epoch cuts again at once, still once */
	th_press(f.h, f.r, 1);
	CU_ASSERT_EQUAL(th_rwin(f.h, f.r), 4 * MiB);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).window_cuts, 2);
	th_free(f.h);
}

static void test_next_cut_waits_until_the_previous_one_took_effect(void)
{
	struct th_fix f = th_fix(NULL);
	/* 12.5 MiB in flight, 1 slice delivered per epoch */
	CU_ASSERT_EQUAL(th_push(f.h, f.r, 200, 64 * KiB, 1), 200);
	th_epoch(f.h, f.r, 0, 1, 64 * KiB);
	th_epoch(f.h, f.r, 0, 1, 64 * KiB);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_CONGESTED);
	CU_ASSERT_EQUAL(th_rwin(f.h, f.r), 8 * MiB);
	/* in-flight still above the cut window: the drain time shows the old
	 * backlog, so the next cut needs another high_pressure_epochs run */
	th_epoch(f.h, f.r, 0, 1, 64 * KiB);
	CU_ASSERT_EQUAL(th_rwin(f.h, f.r), 8 * MiB);
	th_epoch(f.h, f.r, 0, 1, 64 * KiB);
	CU_ASSERT_EQUAL(th_rwin(f.h, f.r), 4 * MiB);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).window_cuts, 2);
	th_free(f.h);
}

static void test_fast_recovery_halves_gap_then_additive_growth(void)
{
	struct th_fix f = th_fix(NULL);
	/* 16 -> 8 MiB -> 4 MiB; pre-cut window 8 MiB */
	th_press(f.h, f.r, 3);
	CU_ASSERT_EQUAL(th_rwin(f.h, f.r), 4 * MiB);
	th_calm(f.h, f.r, 3);
	CU_ASSERT_EQUAL(th_rwin(f.h, f.r), 4 * MiB);
	uint64_t expect[] = { 6 * MiB, 7 * MiB, 7 * MiB + 512 * KiB, 7 * MiB + 768 * KiB,
		              7 * MiB + 896 * KiB,           /* 5 fast-recovery epochs */
		              7 * MiB + 896 * KiB + 256 * KiB, /* then + ai_bytes */
		              7 * MiB + 896 * KiB + 512 * KiB };
	for (unsigned i = 0; i < sizeof(expect) / sizeof(expect[0]); i++) {
		th_calm(f.h, f.r, 1);
		CU_ASSERT_EQUAL(th_rwin(f.h, f.r), expect[i]);
	}
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_HEALTHY);
	th_free(f.h);
}

static void test_window_clamped_to_min_and_max(void)
{
	struct th_fix f = th_fix(NULL);
	for (int i = 0; i < 20; i++) {
		/* a queue that keeps growing (400 us more each epoch, stamped on
		 * the completions): high beyond any base the route learns */
		f.h->lat_ns += 400000;
		th_press(f.h, f.r, 1);
		th_drain(f.h); /* keep admitting at small windows */
		CU_ASSERT(th_rwin(f.h, f.r) >= 128 * KiB);
	}
	CU_ASSERT_EQUAL(th_rwin(f.h, f.r), 128 * KiB);
	/* at most one cut per epoch (a pace begun or lowered counts too) */
	CU_ASSERT(th_rs(f.h, f.r).window_cuts <= 20);
	CU_ASSERT(th_rs(f.h, f.r).window_cuts >= 7); /* 16 MiB -> 128 KiB */
	f.h->lat_ns = 0;
	th_calm(f.h, f.r, 200);
	CU_ASSERT_EQUAL(th_rwin(f.h, f.r), 16 * MiB);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_HEALTHY);
	th_free(f.h);
}

static void test_idle_epochs_change_nothing(void)
{
	struct th_fix f = th_fix(NULL);
	th_press(f.h, f.r, 2);
	th_drain(f.h);
	th_tick(f.h); /* the drain epoch itself: clean, low */
	uint64_t w = th_rwin(f.h, f.r);
	th_ticks(f.h, 50);
	CU_ASSERT_EQUAL(th_rwin(f.h, f.r), w);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_CONGESTED);
	th_free(f.h);
}

static void test_drain_time_from_completion_timestamps(void)
{
	struct th_fix f = th_fix(NULL);
	th_calm(f.h, f.r, 3); /* immediate completions: no pressure */
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_HEALTHY);
	f.h->lat_ns = 2000000; /* 2 ms post -> poll, target 200 us */
	th_calm(f.h, f.r, 2);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_CONGESTED);
	CU_ASSERT(th_rs(f.h, f.r).drain_us >= 2000);
	CU_ASSERT_EQUAL(th_rwin(f.h, f.r), 8 * MiB);
	th_free(f.h);
}

static void test_backlog_growth_is_pressure(void)
{
	struct th_fix f = th_fix(NULL);
	for (int e = 0; e < 3; e++) { /* constant backlog: no pressure */
		th_sig(f.h, MCC_SIG_BACKLOG, NULL, f.r, 0, 0, 1, 0, 4 * MiB, 0);
		th_calm(f.h, f.r, 1);
	}
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_HEALTHY);
	for (int e = 0; e < 2; e++) { /* growing: two high epochs */
		th_sig(f.h, MCC_SIG_BACKLOG, NULL, f.r, 0, 0, 1, 0, (uint64_t)(5 + e) * MiB, 0);
		th_calm(f.h, f.r, 1);
	}
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_CONGESTED);
	CU_ASSERT_EQUAL(th_rwin(f.h, f.r), 8 * MiB);
	CU_ASSERT_EQUAL(th_dstate(f.h, f.d), MCC_PATH_HEALTHY); /* route backlog only */
	th_free(f.h);
}

static void test_edge_healthy_to_suspect_on_route_timeout(void)
{
	struct th_fix f = th_fix(NULL);
	timeout_wc(f.h, f.r, 1);
	th_tick(f.h);
	struct mcc_domain_stats_v1 s = th_rs(f.h, f.r);
	CU_ASSERT_EQUAL(s.state, MCC_PATH_SUSPECT);
	CU_ASSERT_EQUAL(s.hard_errors, 1);
	CU_ASSERT_EQUAL(s.window_bytes, 16 * MiB); /* no cut, no quarantine */
	CU_ASSERT_EQUAL(s.quarantines, 0);
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq_simple(f.h, f.r, 4096, &p), MCC_ADMIT); /* recovery chance kept */
	th_wc(f.h, &p, IBV_WC_SUCCESS, 0);
	th_free(f.h);
}

static void test_edge_congested_to_suspect_on_route_timeout(void)
{
	struct th_fix f = th_fix(NULL);
	th_press(f.h, f.r, 2);
	th_drain(f.h);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_CONGESTED);
	timeout_wc(f.h, f.r, 1);
	th_tick(f.h);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_SUSPECT);
	th_free(f.h);
}

static void test_edge_suspect_to_healthy_on_clean_success(void)
{
	struct th_fix f = th_fix(NULL);
	timeout_wc(f.h, f.r, 1);
	th_tick(f.h);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_SUSPECT);
	th_calm(f.h, f.r, 1);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_HEALTHY);
	th_free(f.h);
}

static void test_edge_suspect_to_congested_on_success_after_congestion(void)
{
	struct th_fix f = th_fix(NULL);
	th_press(f.h, f.r, 2);
	th_drain(f.h);
	timeout_wc(f.h, f.r, 1);
	th_tick(f.h);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_SUSPECT);
	th_calm(f.h, f.r, 1);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_CONGESTED);
	th_free(f.h);
}

static void test_suspect_stops_window_growth(void)
{
	struct mcc_config_v1 c = th_cfg();
	c.hard_error_threshold = 1000; /* stay SUSPECT */
	struct th_fix f = th_fix(&c);
	th_press(f.h, f.r, 2);
	th_drain(f.h);
	CU_ASSERT_EQUAL(th_rwin(f.h, f.r), 8 * MiB);
	for (int e = 0; e < 12; e++) { /* successes every epoch, and a timeout */
		timeout_wc(f.h, f.r, 1);
		th_calm(f.h, f.r, 1);
		CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_SUSPECT);
	}
	CU_ASSERT_EQUAL(th_rwin(f.h, f.r), 8 * MiB);
	th_calm(f.h, f.r, 5); /* clean: leaves SUSPECT, then grows */
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_HEALTHY);
	CU_ASSERT(th_rwin(f.h, f.r) > 8 * MiB);
	th_free(f.h);
}

static void test_edge_suspect_to_quarantined_at_threshold(void)
{
	struct th_fix f = th_fix(NULL);
	timeout_wc(f.h, f.r, 1);
	timeout_wc(f.h, f.r, 1);
	th_tick(f.h);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_SUSPECT);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).hard_errors, 2);
	timeout_wc(f.h, f.r, 1);
	th_tick(f.h);
	struct mcc_domain_stats_v1 s = th_rs(f.h, f.r);
	CU_ASSERT_EQUAL(s.state, MCC_PATH_QUARANTINED);
	CU_ASSERT_EQUAL(s.quarantines, 1);
	CU_ASSERT_EQUAL(s.cooldown_ms, 1000);
	/* The log names the route by its device and peer, once prefixed (by
	 * the host's logger, not the module). */
	CU_ASSERT_STRING_EQUAL(f.h->last_log, "route mlx5_t -> 10.0.0.1:12345@mlx5_1 quarantined "
	                                      "for 1000 ms (quarantine #1)");
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq_simple(f.h, f.r, 4096, &p), MCC_AVOID);
	CU_ASSERT_EQUAL(p.reason, MCC_REASON_PATH_QUARANTINED);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).avoids, 1);
	th_free(f.h);
}

static void test_edge_healthy_to_quarantined_on_fatal_event(void)
{
	struct th_fix f = th_fix(NULL);
	th_async(f.h, IBV_EVENT_PORT_ERR, f.d, NULL, 1, 0, 0);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_QUARANTINED); /* at once */
	th_free(f.h);
}

static void test_edge_congested_to_quarantined_on_cq_fatal_event(void)
{
	struct th_fix f = th_fix(NULL);
	th_press(f.h, f.r, 2);
	th_drain(f.h);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_CONGESTED);
	th_async(f.h, IBV_EVENT_CQ_ERR, f.d, NULL, 0, 0, 0); /* the route uses cq 0 */
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_QUARANTINED);
	th_free(f.h);
}

static void test_edge_suspect_to_quarantined_on_device_fatal_event(void)
{
	struct th_fix f = th_fix(NULL);
	timeout_wc(f.h, f.r, 1);
	th_tick(f.h);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_SUSPECT);
	th_async(f.h, IBV_EVENT_DEVICE_FATAL, f.d, NULL, 0, 0, 0);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_QUARANTINED);
	CU_ASSERT_EQUAL(th_dstate(f.h, f.d), MCC_PATH_QUARANTINED);
	th_free(f.h);
}

static void test_edge_quarantined_to_probing_after_cooldown(void)
{
	struct th_fix f = th_fix(NULL);
	th_quarantine_route(f.h, f.r, 1);
	th_advance_ms(f.h, 998);
	th_tick(f.h); /* 999 ms */
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_QUARANTINED);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).cooldown_ms, 1);
	th_tick(f.h); /* 1000 ms */
	struct mcc_domain_stats_v1 s = th_rs(f.h, f.r);
	CU_ASSERT_EQUAL(s.state, MCC_PATH_PROBING);
	CU_ASSERT_EQUAL(s.window_bytes, 128 * KiB);
	CU_ASSERT_EQUAL(s.cooldown_ms, 0);
	th_free(f.h);
}

static void test_probing_admits_only_new_generation(void)
{
	struct th_fix f = th_fix(NULL);
	th_probing(f.h, f.r, 3);
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 4096, 3, 0, 0, 0, &p), MCC_AVOID);
	CU_ASSERT_EQUAL(p.reason, MCC_REASON_PATH_QUARANTINED);
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 4096, 2, 0, 0, 0, &p), MCC_AVOID);
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 4096, 4, 0, 0, 0, &p), MCC_ADMIT);
	CU_ASSERT(p.flags & MCC_PERMIT_F_PROBE);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).probes, 1);
	th_wc(f.h, &p, IBV_WC_SUCCESS, 0);
	th_free(f.h);
}

/* An engine that rebuilds its endpoint right after the failing WC (TENT's
 * resetConnection) announces the new generation before the tick that
 * quarantines: that rebuilt generation never failed, so it may probe. */
static void test_probing_admits_generation_rebuilt_before_quarantine(void)
{
	struct th_fix f = th_fix(NULL);
	for (uint32_t i = 0; i < 3; i++) {
		struct mcc_permit_v1 p = MCC_PERMIT_INIT;
		CU_ASSERT_EQUAL(th_acq(f.h, f.r, 4096, 3, 0, 0, 0, &p), MCC_ADMIT);
		th_wc(f.h, &p, IBV_WC_RETRY_EXC_ERR, 0);
	}
	th_sig(f.h, MCC_SIG_ENDPOINT_REBUILT, NULL, f.r, 0, 0, 4, 0, 0, 0);
	th_tick(f.h);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_QUARANTINED);
	th_cooldown(f.h, f.r);
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 4096, 3, 0, 0, 0, &p), MCC_AVOID);
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 4096, 4, 0, 0, 0, &p), MCC_ADMIT);
	CU_ASSERT(p.flags & MCC_PERMIT_F_PROBE);
	th_wc(f.h, &p, IBV_WC_SUCCESS, 0);
	th_free(f.h);
}

static void test_probing_admits_only_a_bounded_probe(void)
{
	struct mcc_config_v1 c = th_cfg();
	c.probe_window_bytes = 64 * KiB;
	struct th_fix f = th_fix(&c);
	th_probing(f.h, f.r, 1);
	struct mcc_permit_v1 a = MCC_PERMIT_INIT, b = MCC_PERMIT_INIT, x = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 32 * KiB, 2, 0, 0, 0, &a), MCC_ADMIT);
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 32 * KiB, 2, 0, 0, 0, &b), MCC_ADMIT);
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 4096, 2, 0, 0, 0, &x), MCC_AVOID); /* unproven */
	CU_ASSERT_EQUAL(x.reason, MCC_REASON_PATH_QUARANTINED);
	th_wc(f.h, &a, IBV_WC_SUCCESS, 0);
	th_wc(f.h, &b, IBV_WC_SUCCESS, 0);
	th_free(f.h);
}

static void test_edge_probing_to_congested_after_probe_successes(void)
{
	struct th_fix f = th_fix(NULL);
	th_probing(f.h, f.r, 1);
	probe_ok(f.h, f.r, 2);
	probe_ok(f.h, f.r, 2);
	th_tick(f.h);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_PROBING); /* 2 of 3 */
	probe_ok(f.h, f.r, 2);
	th_tick(f.h);
	f.h->gen = 2;
	struct mcc_domain_stats_v1 s = th_rs(f.h, f.r);
	/* issue 11: recovers HEALTHY (nothing measured pressure) from the
	 * minimum window, then slow start: growth resumes after
	 * low_pressure_epochs (4) clean epochs (the first also learns the new
	 * generation's base), then each clean epoch doubles the window */
	CU_ASSERT_EQUAL(s.state, MCC_PATH_HEALTHY);
	CU_ASSERT_EQUAL(s.window_bytes, 128 * KiB);
	CU_ASSERT_EQUAL(s.hard_errors, 0);
	th_calm(f.h, f.r, 3);
	CU_ASSERT_EQUAL(th_rwin(f.h, f.r), 128 * KiB);
	th_calm(f.h, f.r, 1);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_HEALTHY);
	CU_ASSERT_EQUAL(th_rwin(f.h, f.r), 256 * KiB);
	th_calm(f.h, f.r, 1);
	CU_ASSERT_EQUAL(th_rwin(f.h, f.r), 512 * KiB);
	th_warm(f.h, f.d, f.r);
	CU_ASSERT(th_rwin(f.h, f.r) >= 15 * MiB); /* back at the pre-quarantine window */
	th_free(f.h);
}

static void test_edge_probing_to_quarantined_on_probe_failure(void)
{
	struct th_fix f = th_fix(NULL);
	th_probing(f.h, f.r, 1);
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 4096, 2, 5, 6, 1, &p), MCC_ADMIT);
	th_wc(f.h, &p, IBV_WC_RETRY_EXC_ERR, 0);
	th_tick(f.h);
	struct mcc_domain_stats_v1 s = th_rs(f.h, f.r);
	CU_ASSERT_EQUAL(s.state, MCC_PATH_QUARANTINED);
	CU_ASSERT_EQUAL(s.quarantines, 2);
	CU_ASSERT_EQUAL(s.cooldown_ms, 2000); /* a new (flap-damped) cooldown */
	struct mcc_task_detail_v1 d;
	CU_ASSERT_EQUAL(th_query(f.h, 5, 6, 0, &d), MCC_TASK_LONG_UNAVAILABLE);
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_PROBE_FAILED);
	/* the next probe needs a generation newer than the failed one */
	th_advance_ms(f.h, 2000);
	th_tick(f.h);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_PROBING);
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 4096, 2, 0, 0, 0, &p), MCC_AVOID);
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 4096, 3, 0, 0, 0, &p), MCC_ADMIT);
	th_wc(f.h, &p, IBV_WC_SUCCESS, 0);
	th_free(f.h);
}

static void test_flap_damping_doubles_cooldown_capped(void)
{
	struct mcc_config_v1 c = th_cfg();
	c.cooldown_ms = 1000;
	c.cooldown_max_ms = 3000;
	c.flap_window_ms = 60000;
	struct th_fix f = th_fix(&c);
	uint64_t expect[] = { 1000, 2000, 3000, 3000 };
	uint32_t gen = 1;
	for (int q = 0; q < 4; q++) {
		if (q == 0) {
			th_quarantine_route(f.h, f.r, gen);
		} else { /* probe fails on a new generation */
			struct mcc_permit_v1 p = MCC_PERMIT_INIT;
			CU_ASSERT_EQUAL(th_acq(f.h, f.r, 4096, ++gen, 0, 0, 0, &p), MCC_ADMIT);
			th_wc(f.h, &p, IBV_WC_RETRY_EXC_ERR, 0);
			th_tick(f.h);
		}
		CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_QUARANTINED);
		CU_ASSERT_EQUAL(th_rs(f.h, f.r).cooldown_ms, expect[q]);
		th_advance_ms(f.h, expect[q]);
		th_tick(f.h);
		CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_PROBING);
	}
	/* recover, stay quiet longer than flap_window: the cooldown resets */
	for (int i = 0; i < 3; i++)
		probe_ok(f.h, f.r, ++gen);
	th_tick(f.h);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_HEALTHY); /* issue 11 */
	th_advance_ms(f.h, 61000);
	th_quarantine_route(f.h, f.r, gen);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).cooldown_ms, 1000);
	th_free(f.h);
}

/* Hard errors leave SUSPECT after a clean epoch but count on for a flap
 * window (tests/policy/test_faults.c has the rest of these rules). */
static void test_hard_errors_decay_after_a_quiet_flap_window(void)
{
	struct th_fix f = th_fix(NULL);
	timeout_wc(f.h, f.r, 1);
	timeout_wc(f.h, f.r, 1);
	th_tick(f.h);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).hard_errors, 2);
	th_calm(f.h, f.r, 4); /* clean epochs: HEALTHY, the errors still count */
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).hard_errors, 2);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_HEALTHY);
	th_advance_ms(f.h, 60000); /* flap_window_ms without a hard error */
	th_calm(f.h, f.r, 1);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).hard_errors, 0);
	timeout_wc(f.h, f.r, 1);
	timeout_wc(f.h, f.r, 1);
	th_tick(f.h);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_SUSPECT); /* not quarantined */
	th_free(f.h);
}

static void test_congestion_never_fails_over(void)
{
	struct th_fix f = th_fix(NULL);
	for (int i = 0; i < 30; i++) {
		th_press(f.h, f.r, 1);
		struct mcc_permit_v1 p = MCC_PERMIT_INIT;
		int d = th_acq_simple(f.h, f.r, 4096, &p);
		CU_ASSERT(d == MCC_ADMIT || d == MCC_DEFER);
		if (d == MCC_ADMIT)
			th_wc(f.h, &p, IBV_WC_SUCCESS, 0);
	}
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).avoids, 0);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).quarantines, 0);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_CONGESTED);
	th_free(f.h);
}

static void test_device_domain_runs_its_own_aimd(void)
{
	struct th_fix f = th_fix(NULL);
	mcc_route *r2 = th_route(f.h, f.d, 2, 1, 0, 1);
	th_warm(f.h, f.d, r2);
	/* pressure shared by two routes shows on the device too */
	for (int e = 0; e < 2; e++) {
		th_push(f.h, f.r, 8, 64 * KiB, 1);
		th_push(f.h, r2, 8, 64 * KiB, 1);
		th_pop(f.h, 1, IBV_WC_SUCCESS);
		th_tick(f.h);
	}
	CU_ASSERT_EQUAL(th_dstate(f.h, f.d), MCC_PATH_CONGESTED);
	CU_ASSERT_EQUAL(th_ds(f.h, f.d).window_bytes, 8 * MiB);
	th_free(f.h);
}

/* A link delivering 16 slices of 64 KiB per 1 ms epoch: 1 MiB/ms. */
#define LINE_BPS (8ull * MiB * 1000ull)

/* Per-route traffic for the pressure tests: a standing backlog of `depth`
 * slices, `done` of the oldest completing per epoch (status `st`). */
struct lane_q {
	struct mcc_permit_v1 p[256];
	unsigned h, t;
};

static void q_fill(struct th *h, mcc_route *r, struct lane_q *q, unsigned depth)
{
	while (q->h - q->t < depth) {
		struct mcc_permit_v1 *p = &q->p[q->h % 256];
		*p = (struct mcc_permit_v1)MCC_PERMIT_INIT;
		CU_ASSERT_EQUAL_FATAL(th_acq_simple(h, r, 64 * KiB, p), MCC_ADMIT);
		q->h++;
	}
}

static void q_done(struct th *h, struct lane_q *q, unsigned n, int32_t st)
{
	for (unsigned i = 0; i < n && q->t != q->h; i++)
		th_wc_gen(h, &q->p[q->t++ % 256], st, 1, 0);
}

static void q_drain(struct th *h, struct lane_q *q)
{
	q_done(h, q, q->h - q->t, IBV_WC_SUCCESS);
}

/* Fill the route's window with 64 KiB slices (stop at the first refusal),
 * up to `cap` in flight. Returns the slices in flight. */
static unsigned q_fill_window(struct th *h, mcc_route *r, struct lane_q *q, unsigned cap)
{
	while (q->h - q->t < cap) {
		struct mcc_permit_v1 *p = &q->p[q->h % 256];
		*p = (struct mcc_permit_v1)MCC_PERMIT_INIT;
		if (th_acq_simple(h, r, 64 * KiB, p) != MCC_ADMIT)
			break;
		q->h++;
	}
	return q->h - q->t;
}

/* A lone sender behind its own line rate (16 slices of 64 KiB per 1 ms
 * epoch) that keeps its window full. There is no local exemption any more
 * (control.c "Pressure": a route's queueing is its drain time beyond its
 * learned base, whoever's queue it is): the 8 MiB standing queue is
 * queueing, the route is cut, and it settles with the window where the
 * drain time is near its base plus the target, goodput-neutral: the link
 * delivers its 16 slices every epoch throughout. With either estimator.
 * (Before: the same standing queue counted as local serialisation and the
 * route stayed HEALTHY at the full window.) */
static void test_lone_sender_at_line_rate_settles_near_base_plus_target(void)
{
	for (int ts = 0; ts < 2; ts++) {
		struct th *h = th_new(&mcc_test_aimd_v1, NULL);
		mcc_device *d = th_dev_rate(h, 0, LINE_BPS);
		mcc_route *r = th_route(h, d, 1, 1, 0, 1);
		th_warm(h, d, r);
		struct lane_q q = { .h = 0 };
		uint64_t maxd = 0;
		int idle = 0;
		for (int e = 0; e < 400; e++) {
			unsigned n = 0;
			for (int k = 0; k < 16; k++) { /* the link: one slice per 1/16 epoch */
				n = q_fill_window(h, r, &q, 128 + 16); /* refilled on completion */
				if (ts) /* completion stamps: a slice waits for those before it */
					h->lat_ns = (uint64_t)n * EPOCH_NS / 16;
				idle += n == 0 && e >= 100;
				q_done(h, &q, 1, IBV_WC_SUCCESS);
			}
			n = q_fill_window(h, r, &q, 128 + 16);
			th_tick(h);
			struct mcc_domain_stats_v1 rs = th_rs(h, r);
			if (getenv("MCC_TEST_VERBOSE") && e % 10 == 0)
				fprintf(stderr, "ts %d e %d n %u st %u w %llu drain %llu cuts %llu\n", ts, e, n,
				        rs.state, (unsigned long long)rs.window_bytes,
				        (unsigned long long)rs.drain_us, (unsigned long long)rs.window_cuts);
			if (e >= 300) {
				maxd = rs.drain_us > maxd ? rs.drain_us : maxd;
			}
		}
		struct mcc_domain_stats_v1 rs = th_rs(h, r), ds = th_ds(h, d);
		CU_ASSERT(rs.window_cuts > 0); /* the standing queue was queueing */
		CU_ASSERT_EQUAL(idle, 0);      /* goodput-neutral: the link never waited */
		/* settled: the drain time near the target over the base (the
		 * path has no base of its own beyond a slice's serialisation),
		 * not the 8 ms of the standing queue; the device holds it
		 * there, its pull keeping the queue under the target (law_aimd.c
		 * pull(): 233 KiB, while the route, never high, grew to 3.7 MiB;
		 * without the pull the route held it, at most 1 MiB) */
		CU_ASSERT(maxd <= 2 * h->cfg.target_drain_us);
		CU_ASSERT((rs.window_bytes < ds.window_bytes ? rs.window_bytes : ds.window_bytes) <= MiB);
		CU_ASSERT_EQUAL(rs.quarantines + ds.quarantines, 0);
		q_drain(h, &q);
		th_free(h);
	}
}

/* The same backlog behind a bottleneck beyond the device (delivery far
 * below the line rate): excess drain time, CONGESTED, windows cut. */
static void test_same_backlog_behind_a_remote_bottleneck_is_congestion(void)
{
	struct th *h = th_new(&mcc_test_aimd_v1, NULL);
	mcc_device *d = th_dev_rate(h, 0, 16 * LINE_BPS);
	mcc_route *r = th_route(h, d, 1, 1, 0, 1);
	th_warm(h, d, r);
	struct lane_q q = { .h = 0 };
	for (int e = 0; e < 2; e++) {
		q_fill(h, r, &q, 128 + 16);
		q_done(h, &q, 16, IBV_WC_SUCCESS);
		th_tick(h);
	}
	CU_ASSERT_EQUAL(th_rstate(h, r), MCC_PATH_CONGESTED);
	CU_ASSERT_EQUAL(th_rwin(h, r), 8 * MiB);
	CU_ASSERT_EQUAL(th_dstate(h, d), MCC_PATH_CONGESTED); /* shared by the device */
	q_drain(h, &q);
	th_free(h);
}

/* A sender growing its share of a first-in-first-out bottleneck as fast as
 * its own link: 48 slices of other senders wait there (3 ms at the line
 * rate); its own backlog of D slices gets 16 D / (D + 48) slices per ms and
 * each slice waits (D + 48) / 16 ms. Its own bytes add to its drain time
 * just what they would take at its line rate, so while its whole backlog
 * counted as local serialisation its excess stayed 3 ms however much it
 * queued there: HEALTHY forever, the sender that grew alone to 1.2 MiB in
 * the model's 16:1 TENT incast. Its NIC, at a quarter to a half of its line
 * rate, is not what holds its bytes back, so they count as queueing in
 * proportion (control.c "Pressure"): CONGESTED before D reaches 48. */
static void test_own_share_of_a_shared_bottleneck_is_queueing(void)
{
	struct mcc_config_v1 cfg = th_cfg();
	cfg.min_window_bytes = 4 * MiB; /* the backlog below always fits */
	struct th *h = th_new(&mcc_test_aimd_v1, &cfg);
	mcc_device *d = th_dev_rate(h, 0, LINE_BPS);
	mcc_route *r = th_route(h, d, 1, 1, 0, 1);
	struct lane_q q = { .h = 0 };
	unsigned D = 16, acc = 0; /* completions owed, in 1/(D + 48) slices */
	int e = 0;
	for (; e < 24 + 64 && th_rstate(h, r) == MCC_PATH_HEALTHY; e++) {
		if (e >= 24 && e % 2 == 0)
			D++; /* from 16 slices (a quarter of the link) to 48 (a half) */
		acc += 16 * D;
		unsigned n = acc / (D + 48);
		acc %= D + 48;
		h->lat_ns = (uint64_t)(D + 48) * EPOCH_NS / 16;
		q_fill(h, r, &q, D + n);
		q_done(h, &q, n, IBV_WC_SUCCESS);
		th_tick(h);
		if (e == 23) { /* a steady share: its base */
			CU_ASSERT_EQUAL(th_rstate(h, r), MCC_PATH_HEALTHY);
			CU_ASSERT_EQUAL(th_rs(h, r).window_cuts, 0);
		}
	}
	CU_ASSERT(e > 24);
	CU_ASSERT_EQUAL(th_rstate(h, r), MCC_PATH_CONGESTED);
	CU_ASSERT(D < 48);
	CU_ASSERT_EQUAL(th_rs(h, r).quarantines, 0);
	q_drain(h, &q);
	th_free(h);
}

/* A smaller window that under-fills the pipe lowers the measured rate, so
 * the drain time of an under-filled pipe does not fall with the window:
 * 250 us here whenever slices are in flight at the tick, over the base of 0
 * the route learned while its warm-up drained every epoch. That reads as
 * queueing and is cut, but it does not feed back into a collapse (the loop
 * that once took TENT's window to the minimum): a cut below what the pipe
 * holds leaves nothing in flight at the tick, calm epochs follow, and the
 * route hovers around its demand (640 KiB), HEALTHY most of the run, never
 * near the minimum window, never quarantined. (The base is not re-learned
 * at the first congestion: a route that learned a standing queue as its
 * base kept it, and 32 senders held a pause-deep queue.) */
static void test_underfilled_pipe_does_not_read_as_pressure(void)
{
	struct th *h = th_new(&mcc_test_aimd_v1, NULL);
	mcc_device *d = th_dev_rate(h, 0, LINE_BPS);
	mcc_route *r = th_route(h, d, 1, 1, 0, 1);
	th_warm(h, d, r);
	struct lane_q q = { .h = 0 };
	uint64_t wmin = UINT64_MAX;
	unsigned healthy = 0, epochs = 2 * MCC_BASE_EPOCHS;
	for (unsigned e = 0; e < epochs; e++) {
		/* 2 slices in flight, 8 per epoch: half the line rate, drain 250 us */
		q_fill_window(h, r, &q, 2 + 8);
		q_done(h, &q, 8, IBV_WC_SUCCESS);
		th_tick(h);
		struct mcc_domain_stats_v1 rs = th_rs(h, r);
		wmin = rs.window_bytes < wmin ? rs.window_bytes : wmin;
		healthy += rs.state == MCC_PATH_HEALTHY;
	}
	struct mcc_domain_stats_v1 rs = th_rs(h, r);
	CU_ASSERT(rs.window_cuts > 0);   /* it read as queueing */
	CU_ASSERT(wmin >= 4 * 64 * KiB); /* no collapse: half the demand at most */
	CU_ASSERT(2 * healthy > epochs); /* HEALTHY most of the run */
	CU_ASSERT_EQUAL(rs.quarantines, 0);
	q_drain(h, &q);
	th_free(h);
}

/* A gap in completions (a descheduled poller, a guest stalled for tens of
 * ms) while bytes are in flight reads as what the backlog waits: the gap
 * plus in-flight / the rate measured before it, growing linearly. Decaying
 * the rate on every empty epoch instead made a 20 ms gap read as 0.6 s of
 * drain. A stall longer than the target is still pressure. */
static void test_completion_gap_reads_as_linear_drain(void)
{
	struct mcc_config_v1 cfg = th_cfg();
	cfg.target_drain_us = 100000;
	struct th *h = th_new(&mcc_test_aimd_v1, &cfg);
	mcc_device *d = th_dev_rate(h, 0, 0);
	mcc_route *r = th_route(h, d, 1, 1, 0, 1);
	th_warm(h, d, r); /* at the max window (min = max would make a cut a no-op) */
	struct lane_q q = { .h = 0 };
	for (int e = 0; e < 24; e++) { /* 1 MiB standing, 512 KiB per 1 ms epoch (24: the
	                                * rate smoothing forgets the warm-up) */
		q_fill(h, r, &q, 16 + 8);
		q_done(h, &q, 8, IBV_WC_SUCCESS);
		th_tick(h);
	}
	uint64_t base = th_rs(h, r).drain_us;
	CU_ASSERT(base >= 1500 && base <= 2500);
	th_ticks(h, 20); /* 20 ms without a completion */
	struct mcc_domain_stats_v1 rs = th_rs(h, r), ds = th_ds(h, d);
	CU_ASSERT(rs.drain_us >= base + 19000 && rs.drain_us <= base + 21000);
	CU_ASSERT(ds.drain_us >= base + 19000 && ds.drain_us <= base + 21000);
	CU_ASSERT_EQUAL(rs.state, MCC_PATH_HEALTHY);
	CU_ASSERT_EQUAL(rs.window_cuts + ds.window_cuts, 0);
	th_ticks(h, 100); /* 120 ms: beyond the target */
	rs = th_rs(h, r);
	CU_ASSERT_EQUAL(rs.state, MCC_PATH_CONGESTED);
	CU_ASSERT(rs.window_cuts >= 1);
	CU_ASSERT_EQUAL(rs.quarantines, 0);
	q_drain(h, &q);
	th_tick(h);
	CU_ASSERT(th_rs(h, r).drain_us < base + 1000); /* delivered: the gap ends */
	th_free(h);
}

/* RFC WC matrix, RNR_RETRY_EXC_ERR: pressure only on the receiving route;
 * other receivers sharing the source NIC are not affected. One route's
 * bytes stuck at a slow receiver do not drive the shared device domain
 * (here with an unknown link rate, so only the exclusion of route-limited
 * routes keeps the device out of it). */
static void test_receiver_pressure_on_one_route_spares_the_device(void)
{
	struct th *h = th_new(&mcc_test_aimd_v1, NULL);
	mcc_device *d = th_dev_rate(h, 0, 0);
	mcc_route *a = th_route(h, d, 1, 1, 0, 1), *b = th_route(h, d, 2, 1, 0, 1),
	          *c = th_route(h, d, 3, 1, 0, 1);
	/* one after the other: b is busy, then idle while a and c warm up, so
	 * the rate b kept from its busy spell is stale when its RNRs start */
	th_warm(h, d, a);
	th_warm(h, d, b);
	th_warm(h, d, c);
	struct lane_q qa = { .h = 0 }, qb = { .h = 0 }, qc = { .h = 0 };
	for (int e = 0; e < 12; e++) {
		q_fill(h, a, &qa, 1 + 8); /* fast receivers: short backlog */
		q_fill(h, c, &qc, 1 + 7);
		if (qb.h - qb.t < 64)
			q_fill(h, b, &qb, th_rwin(h, b) / (64 * KiB) < 64 ? 1 : 64);
		q_done(h, &qa, 8, IBV_WC_SUCCESS);
		q_done(h, &qc, 7, IBV_WC_SUCCESS);
		q_done(h, &qb, 1, IBV_WC_RNR_RETRY_EXC_ERR); /* the slow receiver */
		q_done(h, &qb, 1, IBV_WC_SUCCESS);
		th_tick(h);
	}
	struct mcc_domain_stats_v1 ds = th_ds(h, d);
	CU_ASSERT_EQUAL(th_rstate(h, b), MCC_PATH_CONGESTED);
	CU_ASSERT(th_rs(h, b).window_cuts > 0);
	CU_ASSERT_EQUAL(ds.state, MCC_PATH_HEALTHY);
	CU_ASSERT_EQUAL(ds.window_cuts, 0);
	/* not cut; a and c's own queueing pulls it a little in calm epochs
	 * (law_aimd.c pull(): 16 -> 15.3 MiB) */
	CU_ASSERT(ds.window_bytes >= 15 * MiB);
	CU_ASSERT_EQUAL(th_rstate(h, a), MCC_PATH_HEALTHY);
	CU_ASSERT_EQUAL(th_rstate(h, c), MCC_PATH_HEALTHY);
	CU_ASSERT_EQUAL(th_rs(h, a).quarantines + th_rs(h, b).quarantines, 0); /* no failover */
	q_drain(h, &qa);
	q_drain(h, &qb);
	q_drain(h, &qc);
	th_free(h);
}

/* The route window is cut within one epoch of the drain
 * time exceeding the target (the RFC's high_pressure_epochs hysteresis: the
 * second high epoch), and a window far above what the route has in flight
 * comes down to it in a few epochs, not one cut per hysteresis run. */
static void test_incast_route_cut_within_one_epoch_then_converges(void)
{
	struct th *h = th_new(&mcc_test_aimd_v1, NULL);
	mcc_device *d = th_dev_rate(h, 0, 16 * LINE_BPS);
	mcc_route *r = th_route(h, d, 1, 1, 0, 1);
	th_warm(h, d, r);
	struct lane_q q = { .h = 0 };
	/* 4 MiB in flight, 1/16 of the link rate delivered (16:1 incast) */
	q_fill(h, r, &q, 64);
	q_done(h, &q, 1, IBV_WC_SUCCESS);
	th_tick(h); /* drain time over target: first high epoch */
	CU_ASSERT_EQUAL(th_rwin(h, r), 16 * MiB);
	q_done(h, &q, 1, IBV_WC_SUCCESS);
	th_tick(h);
	CU_ASSERT_EQUAL(th_rstate(h, r), MCC_PATH_CONGESTED);
	CU_ASSERT_EQUAL(th_rwin(h, r), 8 * MiB); /* cut one epoch later */
	int e = 0;
	while (th_rwin(h, r) > 4 * MiB && e++ < 4) { /* the no-op cuts go by at once */
		q_done(h, &q, 1, IBV_WC_SUCCESS);
		th_tick(h);
	}
	/* the cut in effect, the next high epoch cuts at once: at most 2
	 * epochs, where another hysteresis run would take 3 */
	CU_ASSERT(e <= 2);
	CU_ASSERT_EQUAL(th_rwin(h, r), 4 * MiB);
	q_drain(h, &q);
	th_free(h);
}

/* Admit up to `max` slices of 64 KiB one after the other, each completed at
 * once (so only a pace, not the window, can bound them); stop at the first
 * refusal, which must be a DEFER. Returns the slices admitted. */
static unsigned admit_completing(struct th *h, mcc_route *r, unsigned max)
{
	unsigned n = 0;
	for (; n < max; n++) {
		struct mcc_permit_v1 p = MCC_PERMIT_INIT;
		int rc = th_acq_simple(h, r, 64 * KiB, &p);
		if (rc != MCC_ADMIT) {
			CU_ASSERT_EQUAL(rc, MCC_DEFER);
			break;
		}
		th_wc_gen(h, &p, IBV_WC_SUCCESS, 1, 0);
	}
	return n;
}

/* The core honours a law's pace (law.h "Pacing", domain.c pace_take): a
 * CONGESTED route at the minimum window whose queue keeps growing, its
 * window full at the tick, is paced after AIMD_PACE_AFTER (4) high runs at
 * the floor, at min x md (64 KiB) per drain time (1 ms): 64 KiB per epoch.
 * It then admits only what the token bucket (filled at each tick, at most
 * two slices) holds: DEFER on an empty bucket, an admission after a tick,
 * two slices after idle epochs, and never more bytes in an epoch than the
 * pace plus two slices, although every slice completes at once. Leaving
 * CONGESTED (here SUSPECT on a route timeout) clears the pace: admission by
 * the window again. */
static void test_core_honours_the_pace_of_a_congested_route(void)
{
	struct th_fix f = th_fix(NULL);
	struct th *h = f.h;
	/* 1 ms of queueing over the base learned while warming (0), every
	 * epoch: two high epochs, CONGESTED and cut to 8 MiB, then cut to the
	 * minimum and 4 high runs there */
	h->lat_ns = 1000000;
	th_calm(h, f.r, 2);
	CU_ASSERT_EQUAL(th_rstate(h, f.r), MCC_PATH_CONGESTED);
	for (int e = 0; e < 10; e++) {
		/* window mode: 4 slices offered an epoch, as many admitted as the
		 * window holds, in flight at the tick (the window binds at the
		 * minimum: law_aimd.c window_bound), completing after it */
		CU_ASSERT_EQUAL(th_push(h, f.r, 4, 64 * KiB, 1), e < 6 ? 4 : 2);
		th_tick(h);
		th_drain(h);
	}
	CU_ASSERT_EQUAL(th_rwin(h, f.r), 128 * KiB);
	CU_ASSERT_EQUAL(th_rstate(h, f.r), MCC_PATH_CONGESTED);
	/* 7 window cuts (16 MiB -> 128 KiB) and the pace begun, a cut too */
	CU_ASSERT_EQUAL(th_rs(h, f.r).window_cuts, 8);
	/* the tick that began the pace filled the bucket with one epoch's pace:
	 * one slice, then DEFER although the window has room */
	CU_ASSERT_EQUAL(admit_completing(h, f.r, 4), 1);
	CU_ASSERT_EQUAL(admit_completing(h, f.r, 4), 0); /* no tick: still empty */
	uint64_t defers = th_rs(h, f.r).defers;
	CU_ASSERT(defers >= 2);
	th_tick(h); /* one epoch's pace: one slice */
	CU_ASSERT_EQUAL(admit_completing(h, f.r, 4), 1);
	/* idle epochs (no completion: calm at the last queueing, over the
	 * target, so the pace holds; the first still sees the last completion
	 * and may halve it) fill the bucket to two slices at most */
	th_ticks(h, 8);
	CU_ASSERT_EQUAL(admit_completing(h, f.r, 4), 2);
	CU_ASSERT_EQUAL(th_rstate(h, f.r), MCC_PATH_CONGESTED);
	/* offered 16 slices an epoch, each completing at once: never more
	 * than the pace (at most the first, 64 KiB per epoch: a paced route
	 * under pressure is only cut) plus two slices in an epoch */
	uint64_t total = 0;
	for (int e = 0; e < 20; e++) {
		th_tick(h);
		uint64_t b = admit_completing(h, f.r, 16) * 64 * KiB;
		CU_ASSERT(b <= 64 * KiB + 2 * 64 * KiB);
		total += b;
	}
	CU_ASSERT(total > 0);
	CU_ASSERT(total <= 20 * 64 * KiB + 2 * 64 * KiB);
	CU_ASSERT(th_rs(h, f.r).defers > defers);
	CU_ASSERT_EQUAL(th_rwin(h, f.r), 128 * KiB); /* the window never moved */
	/* a route timeout: SUSPECT, out of CONGESTED, the pace cleared */
	th_ticks(h, 2);
	timeout_wc(h, f.r, 1);
	th_tick(h);
	CU_ASSERT_EQUAL(th_rstate(h, f.r), MCC_PATH_SUSPECT);
	CU_ASSERT_EQUAL(admit_completing(h, f.r, 16), 16); /* by the window again */
	th_free(h);
}

MCC_CU_SUITE(t_init_aimd_tests, "policy_aimd", NULL, NULL,
             test_windows_start_at_max_on_healthy_path,
             test_edge_healthy_to_congested_after_high_pressure_epochs,
             test_edge_congested_to_healthy_after_low_pressure_epochs,
             test_at_most_one_multiplicative_cut_per_epoch,
             test_next_cut_waits_until_the_previous_one_took_effect,
             test_fast_recovery_halves_gap_then_additive_growth,
             test_window_clamped_to_min_and_max,
             test_idle_epochs_change_nothing,
             test_drain_time_from_completion_timestamps,
             test_backlog_growth_is_pressure,
             test_edge_healthy_to_suspect_on_route_timeout,
             test_edge_congested_to_suspect_on_route_timeout,
             test_edge_suspect_to_healthy_on_clean_success,
             test_edge_suspect_to_congested_on_success_after_congestion,
             test_suspect_stops_window_growth,
             test_edge_suspect_to_quarantined_at_threshold,
             test_edge_healthy_to_quarantined_on_fatal_event,
             test_edge_congested_to_quarantined_on_cq_fatal_event,
             test_edge_suspect_to_quarantined_on_device_fatal_event,
             test_edge_quarantined_to_probing_after_cooldown,
             test_probing_admits_only_new_generation,
             test_probing_admits_generation_rebuilt_before_quarantine,
             test_probing_admits_only_a_bounded_probe,
             test_edge_probing_to_congested_after_probe_successes,
             test_edge_probing_to_quarantined_on_probe_failure,
             test_flap_damping_doubles_cooldown_capped,
             test_hard_errors_decay_after_a_quiet_flap_window,
             test_congestion_never_fails_over,
             test_device_domain_runs_its_own_aimd,
             test_lone_sender_at_line_rate_settles_near_base_plus_target,
             test_same_backlog_behind_a_remote_bottleneck_is_congestion,
             test_own_share_of_a_shared_bottleneck_is_queueing,
             test_underfilled_pipe_does_not_read_as_pressure,
             test_completion_gap_reads_as_linear_drain,
             test_receiver_pressure_on_one_route_spares_the_device,
             test_incast_route_cut_within_one_epoch_then_converges,
             test_core_honours_the_pace_of_a_congested_route)

MCC_CU_MAIN(t_init_aimd_tests)
