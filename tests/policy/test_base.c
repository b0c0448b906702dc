/* SPDX-License-Identifier: MIT */
/*
 * test_base.c - issue 11: pressure relative to a path's own base (a
 * windowed minimum of its drain time beyond local serialisation), the
 * bounded first burst (windows start small and double while feedback is
 * clean), and recovery from a probe to HEALTHY, read by the caller as
 * NORMAL through task_query.
 */
#include <infiniband/verbs.h>

#include "cu_driver.h"
#include "harness.h"

/* One epoch: a full window of 64 KiB slices, all completed, then a tick. */
static void full_epoch(struct th *h, mcc_route *r)
{
	th_push(h, r, (unsigned)(th_rwin(h, r) / (64 * KiB)), 64 * KiB, h->gen);
	th_drain(h);
	th_tick(h);
}

/* A long path: route 1 on device 0, every completion 5 ms from post to
 * poll, after `epochs` full epochs. */
static struct th *long_path(int epochs, mcc_device **d, mcc_route **r)
{
	struct th *h = th_new(&mcc_test_aimd_v1, NULL);
	h->lat_ns = 5000000;
	*d = th_dev(h, 0);
	*r = th_route(h, *d, 1, 1, 0, 1);
	for (int e = 0; e < epochs; e++)
		full_epoch(h, *r);
	return h;
}

/* (a) A long path: every completion takes 5 ms from post to poll, 25 times
 * the 200 us target, and nothing queues (the latency never changes). Its
 * base is that latency: HEALTHY at the full window, never cut. Compared
 * with the absolute target it would be CONGESTED within two epochs. */
static void test_constant_base_latency_is_not_congestion(void)
{
	mcc_device *d;
	mcc_route *r;
	struct th *h = long_path(40, &d, &r);
	struct mcc_domain_stats_v1 rs = th_rs(h, r), ds = th_ds(h, d);
	CU_ASSERT(rs.drain_us >= 4900); /* the drain time itself is long */
	CU_ASSERT_EQUAL(rs.state, MCC_PATH_HEALTHY);
	CU_ASSERT_EQUAL(ds.state, MCC_PATH_HEALTHY);
	CU_ASSERT_EQUAL(rs.window_bytes, 16 * MiB);
	CU_ASSERT_EQUAL(ds.window_bytes, 16 * MiB);
	CU_ASSERT_EQUAL(rs.window_cuts + ds.window_cuts, 0);
	th_free(h);
}

/* (b) The same path, then 2 ms of queueing on top of its 5 ms base (10x
 * the target): high-pressure epochs, CONGESTED, the window cut. */
static void test_queueing_above_the_base_is_congestion(void)
{
	mcc_device *d;
	mcc_route *r;
	struct th *h = long_path(20, &d, &r);
	CU_ASSERT_EQUAL(th_rstate(h, r), MCC_PATH_HEALTHY);
	CU_ASSERT_EQUAL(th_rwin(h, r), 16 * MiB);
	h->lat_ns = 7000000;
	for (int e = 0; e < 2; e++)
		full_epoch(h, r);
	struct mcc_domain_stats_v1 rs = th_rs(h, r);
	CU_ASSERT_EQUAL(rs.state, MCC_PATH_CONGESTED);
	CU_ASSERT(rs.window_cuts >= 1);
	CU_ASSERT(rs.window_bytes < 16 * MiB);
	CU_ASSERT_EQUAL(rs.quarantines, 0);
	th_free(h);
}

/* (c) The first burst is bounded: a new device and route admit
 * min_window_bytes (128 KiB) before any feedback; the first clean epoch
 * learns the base, each later one that used at least half the window
 * doubles it: 16 MiB after 8 clean epochs. A domain that does not use its
 * window does not grow. */
static void test_first_burst_bounded_then_doubles_to_max(void)
{
	struct th *h = th_new(&mcc_test_aimd_v1, NULL);
	mcc_device *d = th_dev(h, 0);
	mcc_route *r = th_route(h, d, 1, 1, 0, 1);
	CU_ASSERT_EQUAL(th_ds(h, d).window_bytes, 128 * KiB);
	CU_ASSERT_EQUAL(th_rwin(h, r), 128 * KiB);
	CU_ASSERT_EQUAL(th_push(h, r, 1000, 64 * KiB, 1), 2); /* the whole first burst */
	th_drain(h);
	th_tick(h); /* learns the base */
	CU_ASSERT_EQUAL(th_rwin(h, r), 128 * KiB);
	for (int e = 2; e <= 8; e++) {
		full_epoch(h, r);
		CU_ASSERT_EQUAL(th_rwin(h, r), (128 * KiB) << (e - 1));
		CU_ASSERT_EQUAL(th_ds(h, d).window_bytes, (128 * KiB) << (e - 1));
		CU_ASSERT_EQUAL(th_rstate(h, r), MCC_PATH_HEALTHY);
	}
	CU_ASSERT_EQUAL(th_rwin(h, r), 16 * MiB);
	th_free(h);

	/* application-limited: 16 KiB per epoch in a 128 KiB window */
	h = th_new(&mcc_test_aimd_v1, NULL);
	d = th_dev(h, 0);
	r = th_route(h, d, 1, 1, 0, 1);
	for (int e = 0; e < 10; e++) {
		CU_ASSERT_EQUAL(th_push(h, r, 1, 16 * KiB, 1), 1);
		th_drain(h);
		th_tick(h);
	}
	CU_ASSERT_EQUAL(th_rwin(h, r), 128 * KiB);
	CU_ASSERT_EQUAL(th_rstate(h, r), MCC_PATH_HEALTHY);
	th_free(h);
}

/* A route opened on a device that has grown starts at an equal share of
 * the device window (it cannot add to what the device admits); on a new
 * device, at the minimum. */
static void test_route_starts_at_its_share_of_a_grown_device(void)
{
	struct th *h = th_new(&mcc_test_aimd_v1, NULL);
	mcc_device *d = th_dev(h, 0);
	mcc_route *r = th_route(h, d, 1, 1, 0, 1);
	th_warm(h, d, r);
	CU_ASSERT_EQUAL(th_ds(h, d).window_bytes, 16 * MiB);
	mcc_route *r2 = th_route(h, d, 2, 1, 0, 1);
	CU_ASSERT_EQUAL(th_rwin(h, r2), 8 * MiB);
	CU_ASSERT_EQUAL(th_rstate(h, r2), MCC_PATH_HEALTHY);
	mcc_device *d2 = th_dev(h, 1);
	mcc_route *o = th_route(h, d2, 1, 1, 0, 1);
	CU_ASSERT_EQUAL(th_rwin(h, o), 128 * KiB);
	th_free(h);
}

/* (d) After a probe recovers a route, clean tasks on it read NORMAL through
 * task_query, as an outside caller asks: nothing measured pressure, so the
 * recovered route is HEALTHY and its successes are not congestion feedback.
 * The window comes back by slow start, not stuck at the minimum. */
static void test_probe_recovery_then_clean_tasks_read_normal(void)
{
	struct th *h = th_new(&mcc_test_aimd_v1, NULL);
	mcc_device *d = th_dev(h, 0);
	mcc_route *r = th_route(h, d, 1, 1, 0, 1);
	th_warm(h, d, r);
	th_quarantine_route(h, r, 1);
	th_advance_ms(h, 1000);
	th_tick(h);
	CU_ASSERT_EQUAL_FATAL(th_rstate(h, r), MCC_PATH_PROBING);
	for (int i = 0; i < 3; i++) { /* probe_successes = 3, new generation */
		struct mcc_permit_v1 p = MCC_PERMIT_INIT;
		CU_ASSERT_EQUAL(th_acq(h, r, 4096, 2, 0, 0, 0, &p), MCC_ADMIT);
		th_wc(h, &p, IBV_WC_SUCCESS, 0);
	}
	th_tick(h);
	CU_ASSERT_EQUAL(th_rstate(h, r), MCC_PATH_HEALTHY);
	h->gen = 2;
	const uint32_t facts = MCC_TASKQ_SEEN_SUCCESS | MCC_TASKQ_FINISHED;
	for (uint64_t e = 0; e < 12; e++) { /* past low_pressure_epochs */
		for (uint64_t t = 0; t < 2; t++) {
			struct mcc_permit_v1 p = MCC_PERMIT_INIT;
			CU_ASSERT_EQUAL(th_acq(h, r, 64 * KiB, 2, 40 + e, t, 0, &p), MCC_ADMIT);
			th_wc(h, &p, IBV_WC_SUCCESS, 0);
			struct mcc_task_ref_v1 task = { 40 + e, t, 0, 0 };
			struct mcc_task_detail_v1 dt = { .struct_size = sizeof(dt) };
			CU_ASSERT_EQUAL(h->ops->task_query(h->ctx, &task, facts, &dt), MCC_TASK_NORMAL);
			CU_ASSERT_EQUAL(dt.state, MCC_TASK_NORMAL);
			CU_ASSERT_NOT_EQUAL(dt.reason, MCC_REASON_CONGESTION_FEEDBACK);
		}
		th_tick(h);
		CU_ASSERT_EQUAL(th_rstate(h, r), MCC_PATH_HEALTHY);
	}
	CU_ASSERT(th_rwin(h, r) > 128 * KiB); /* slow start under way */
	CU_ASSERT_EQUAL(th_rs(h, r).window_cuts, 0);
	th_free(h);
}

MCC_CU_SUITE(t_init_base_tests, "policy_base", NULL, NULL,
             test_constant_base_latency_is_not_congestion,
             test_queueing_above_the_base_is_congestion,
             test_first_burst_bounded_then_doubles_to_max,
             test_route_starts_at_its_share_of_a_grown_device,
             test_probe_recovery_then_clean_tasks_read_normal)

MCC_CU_MAIN(t_init_base_tests)
