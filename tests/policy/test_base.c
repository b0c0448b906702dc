/* SPDX-License-Identifier: MIT */
/*
 * test_base.c - issue 11: pressure relative to a path's own base (a
 * windowed minimum of its drain time beyond local serialisation), the
 * bounded first burst (windows start small and double while feedback is
 * clean), and recovery from a probe to HEALTHY, read by the caller as
 * NORMAL through task_query.
 */
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cu_driver.h"
#include "harness.h"

/* One epoch: a full window of 64 KiB slices, all completed, then a tick. */
static void full_epoch(struct th *h, mcc_route *r)
{
	th_push(h, r, (unsigned)(th_rwin(h, r) / (64 * KiB)), 64 * KiB, h->gen);
	th_drain(h);
	th_tick(h);
}

/* Route 1 on device 0, every completion `lat_ns` from post to poll, the
 * base RTT `stated_ns` stated by the host (0: none), after `epochs` full
 * epochs. */
static struct th *path_of(uint64_t lat_ns, uint64_t stated_ns, int epochs, mcc_device **d,
                          mcc_route **r)
{
	struct th *h = th_new(&mcc_test_aimd_v1, NULL);
	h->lat_ns = lat_ns;
	h->base_rtt_ns = stated_ns;
	*d = th_dev(h, 0);
	*r = th_route(h, *d, 1, 1, 0, 1);
	for (int e = 0; e < epochs; e++)
		full_epoch(h, *r);
	return h;
}

/* A long path: every completion 5 ms from post to poll. */
static struct th *long_path(int epochs, mcc_device **d, mcc_route **r)
{
	return path_of(5000000, 0, epochs, d, r);
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

/* A path whose round trip (300 us from post to poll, every completion) is
 * between one and two targets, its base RTT stated by the host or not. */
static struct th *mid_path(uint64_t stated_ns, int epochs, mcc_device **d, mcc_route **r)
{
	return path_of(300000, stated_ns, epochs, d, r);
}

/* (b2) A device compares its drain time with the target itself unless its
 * learned base is two targets or more: on a 300 us path it reads the round
 * trip as queueing and stays CONGESTED at its first window. With the base RTT stated (route_open
 * base_rtt_ns, ABI 1.3) the round trip is not queueing: HEALTHY at the full
 * window, never cut; and queueing on top of it (300 -> 800 us) still cuts
 * (the route, as in (b)). */
static void test_stated_base_rtt_is_not_queueing(void)
{
	mcc_device *d;
	mcc_route *r;
	struct th *h = mid_path(0, 40, &d, &r);
	struct mcc_domain_stats_v1 ds = th_ds(h, d);
	/* unstated: the device never leaves its first window */
	CU_ASSERT_EQUAL(ds.state, MCC_PATH_CONGESTED);
	CU_ASSERT_EQUAL(ds.window_bytes, 128 * KiB);
	th_free(h);

	h = mid_path(300000, 40, &d, &r);
	ds = th_ds(h, d);
	struct mcc_domain_stats_v1 rs = th_rs(h, r);
	CU_ASSERT_EQUAL(ds.state, MCC_PATH_HEALTHY);
	CU_ASSERT_EQUAL(rs.state, MCC_PATH_HEALTHY);
	CU_ASSERT_EQUAL(ds.window_bytes, 16 * MiB);
	CU_ASSERT_EQUAL(ds.window_cuts + rs.window_cuts, 0);
	h->lat_ns = 800000;
	for (int e = 0; e < 4; e++)
		full_epoch(h, r);
	rs = th_rs(h, r);
	CU_ASSERT_EQUAL(rs.state, MCC_PATH_CONGESTED);
	CU_ASSERT(rs.window_cuts >= 1);
	CU_ASSERT(rs.window_bytes < 16 * MiB);
	th_free(h);
}

/* `rounds` round trips of a 5 ms path at 1 ms epochs: a window posted, four
 * epochs without a completion, then the whole window completes (5 ms from
 * post to poll), the base RTT `stated_ns` stated by the host (0: none). */
static struct th *bursty_path(uint64_t stated_ns, int rounds, mcc_device **d, mcc_route **r)
{
	struct th *h = path_of(5000000, stated_ns, 0, d, r);
	for (int k = 0; k < rounds; k++) {
		th_push(h, *r, (unsigned)(th_rwin(h, *r) / (64 * KiB)), 64 * KiB, h->gen);
		th_ticks(h, 4);
		th_drain(h);
		th_tick(h);
	}
	return h;
}

/* (b3) A path whose round trip spans several epochs delivers its window in
 * bursts one round trip apart. The epochs between hold bytes and deliver
 * nothing: read as a stall, they hold the route at its floor whatever its
 * base. With the round trip stated, the first round trip of such a gap is
 * no stall (control.c gap_capped): HEALTHY, the windows grown. */
static void test_stated_base_rtt_gaps_are_no_stall(void)
{
	mcc_device *d;
	mcc_route *r;
	struct th *h = bursty_path(0, 60, &d, &r);
	struct mcc_domain_stats_v1 rs = th_rs(h, r);
	CU_ASSERT_EQUAL(rs.state, MCC_PATH_CONGESTED); /* unstated: at the floor */
	CU_ASSERT_EQUAL(rs.window_bytes, 128 * KiB);
	th_free(h);

	h = bursty_path(5000000, 60, &d, &r);
	rs = th_rs(h, r);
	struct mcc_domain_stats_v1 ds = th_ds(h, d);
	CU_ASSERT_EQUAL(rs.state, MCC_PATH_HEALTHY);
	CU_ASSERT_EQUAL(ds.state, MCC_PATH_HEALTHY);
	CU_ASSERT(rs.window_bytes >= 2 * MiB); /* 16x the floor: the device's */
	CU_ASSERT(ds.window_bytes >= 2 * MiB); /* window binds, 3 MiB here */
	th_free(h);
}

/* (b4) The slow start of such a path: each clean round trip doubles the
 * windows, so the next window's bytes wait a whole round trip behind a
 * delivery rate measured on half as many. Read beyond the stated round
 * trip, that backlog at the old rate is queueing and cuts the windows at
 * their first doubling; within one stated round trip of the last delivery
 * an epoch that delivers nothing measures no more than that delivery did
 * (control.c gap_capped): no cut, HEALTHY, both windows at the maximum. */
static void test_stated_base_rtt_slow_start_is_not_cut(void)
{
	mcc_device *d;
	mcc_route *r;
	struct th *h = path_of(5000000, 5000000, 0, &d, &r);
	unsigned sent[5] = { 0 }; /* slices posted in each of the last 5 epochs */
	for (int e = 0; e < 40; e++) {
		th_pop(h, sent[e % 5], IBV_WC_SUCCESS); /* posted a round trip ago */
		uint64_t w = th_rwin(h, r), held = (uint64_t)th_live(h) * 64 * KiB;
		sent[e % 5] = held < w ? th_push(h, r, (unsigned)((w - held) / (64 * KiB)), 64 * KiB, h->gen) : 0;
		th_tick(h);
		CU_ASSERT_EQUAL(th_rstate(h, r), MCC_PATH_HEALTHY);
		CU_ASSERT_EQUAL(th_dstate(h, d), MCC_PATH_HEALTHY);
	}
	struct mcc_domain_stats_v1 rs = th_rs(h, r), ds = th_ds(h, d);
	CU_ASSERT_EQUAL(rs.window_cuts + ds.window_cuts, 0); /* was cut at 1 MiB */
	CU_ASSERT_EQUAL(rs.window_bytes, 16 * MiB);
	CU_ASSERT_EQUAL(ds.window_bytes, 16 * MiB);
	th_free(h);
}

/* (c) The first burst is bounded: a new device and route admit
 * min_window_bytes (128 KiB) before any feedback; the first clean epoch
 * learns the base, each later one that used at least half the window
 * doubles it: 16 MiB after 8 clean epochs. A domain that does not use its
 * window does not grow. */
static void test_first_burst_bounded_then_doubles_to_max(void)
{
	struct th_fix f = th_fix_cold(NULL);
	CU_ASSERT_EQUAL(th_ds(f.h, f.d).window_bytes, 128 * KiB);
	CU_ASSERT_EQUAL(th_rwin(f.h, f.r), 128 * KiB);
	CU_ASSERT_EQUAL(th_push(f.h, f.r, 1000, 64 * KiB, 1), 2); /* the whole first burst */
	th_drain(f.h);
	th_tick(f.h); /* learns the base */
	CU_ASSERT_EQUAL(th_rwin(f.h, f.r), 128 * KiB);
	for (int e = 2; e <= 8; e++) {
		full_epoch(f.h, f.r);
		CU_ASSERT_EQUAL(th_rwin(f.h, f.r), (128 * KiB) << (e - 1));
		CU_ASSERT_EQUAL(th_ds(f.h, f.d).window_bytes, (128 * KiB) << (e - 1));
		CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_HEALTHY);
	}
	CU_ASSERT_EQUAL(th_rwin(f.h, f.r), 16 * MiB);
	th_free(f.h);

	/* application-limited: 16 KiB per epoch in a 128 KiB window */
	f = th_fix_cold(NULL);
	for (int e = 0; e < 10; e++) {
		CU_ASSERT_EQUAL(th_push(f.h, f.r, 1, 16 * KiB, 1), 1);
		th_drain(f.h);
		th_tick(f.h);
	}
	CU_ASSERT_EQUAL(th_rwin(f.h, f.r), 128 * KiB);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_HEALTHY);
	th_free(f.h);
}

/* A route opened on a device that has grown starts at an equal share of
 * the device window (it cannot add to what the device admits); on a new
 * device, at the minimum. */
static void test_route_starts_at_its_share_of_a_grown_device(void)
{
	struct th_fix f = th_fix(NULL);
	CU_ASSERT_EQUAL(th_ds(f.h, f.d).window_bytes, 16 * MiB);
	mcc_route *r2 = th_route(f.h, f.d, 2, 1, 0, 1);
	CU_ASSERT_EQUAL(th_rwin(f.h, r2), 8 * MiB);
	CU_ASSERT_EQUAL(th_rstate(f.h, r2), MCC_PATH_HEALTHY);
	mcc_device *d2 = th_dev(f.h, 1);
	mcc_route *o = th_route(f.h, d2, 1, 1, 0, 1);
	CU_ASSERT_EQUAL(th_rwin(f.h, o), 128 * KiB);
	th_free(f.h);
}

/* (d) After a probe recovers a route, clean tasks on it read NORMAL through
 * task_query, as an outside caller asks: nothing measured pressure, so the
 * recovered route is HEALTHY and its successes are not congestion feedback.
 * The window comes back by slow start, not stuck at the minimum. */
static void test_probe_recovery_then_clean_tasks_read_normal(void)
{
	struct th_fix f = th_fix(NULL);
	th_probing(f.h, f.r, 1);
	th_probe_pass(f.h, f.r, 2); /* a new generation */
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_HEALTHY);
	f.h->gen = 2;
	const uint32_t facts = MCC_TASKQ_SEEN_SUCCESS | MCC_TASKQ_FINISHED;
	for (uint64_t e = 0; e < 12; e++) { /* past low_pressure_epochs */
		for (uint64_t t = 0; t < 2; t++) {
			struct mcc_permit_v1 p = MCC_PERMIT_INIT;
			CU_ASSERT_EQUAL(th_acq(f.h, f.r, 64 * KiB, 2, 40 + e, t, 0, &p), MCC_ADMIT);
			th_wc(f.h, &p, IBV_WC_SUCCESS, 0);
			struct mcc_task_ref_v1 task = { 40 + e, t, 0, 0 };
			struct mcc_task_detail_v1 dt = { .struct_size = sizeof(dt) };
			CU_ASSERT_EQUAL(f.h->ops->task_query(f.h->ctx, &task, facts, &dt), MCC_TASK_NORMAL);
			CU_ASSERT_EQUAL(dt.state, MCC_TASK_NORMAL);
			CU_ASSERT_NOT_EQUAL(dt.reason, MCC_REASON_CONGESTION_FEEDBACK);
		}
		th_tick(f.h);
		CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_HEALTHY);
	}
	CU_ASSERT(th_rwin(f.h, f.r) > 128 * KiB); /* slow start under way */
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).window_cuts, 0);
	th_free(f.h);
}

#define STEADY_EPOCHS 1500

/* Tops `w` bytes up with 64 KiB slices on r; returns the slices in flight. */
static unsigned keep_full(struct th *h, mcc_route *r, uint64_t w)
{
	unsigned want = (unsigned)(w / (64 * KiB)), live = th_live(h);
	if (want > live)
		th_push(h, r, want - live, 64 * KiB, h->gen);
	return th_live(h);
}

/* One epoch of a path limited by its own sender (Soft-RoCE: the host runs
 * the transport): the window is kept full, `per` 64 KiB slices complete
 * every `every` epochs whatever the window, and each waited as long as the
 * slices in flight need at that rate (Little's law). */
static void sender_limited_epoch(struct th *h, mcc_route *r, unsigned per, unsigned every, int e)
{
	unsigned live = keep_full(h, r, th_rwin(h, r));
	unsigned n = per * (unsigned)(e + 1) / every - per * (unsigned)e / every;
	h->lat_ns = (uint64_t)live * every * EPOCH_NS / per;
	th_pop(h, n, IBV_WC_SUCCESS);
	th_tick(h);
}

/* On a device the host states is a software transport, a sender-limited
 * route after STEADY_EPOCHS epochs at 2 slices per ms (131 MB/s). */
static struct th *steady_software_path(mcc_device **d, mcc_route **r)
{
	struct th *h = th_new(&mcc_test_aimd_v1, NULL);
	*d = th_dev_named(h, 0, "rxe_t", 0, MCC_DEVICE_F_SOFTWARE);
	*r = th_route(h, *d, 1, 1, 0, 1);
	for (int e = 0; e < STEADY_EPOCHS; e++)
		sender_limited_epoch(h, *r, 16, 8, e);
	return h;
}

/* (e) A software device (rdma_rxe, siw) serialises on the host: delivery
 * stays flat while the drain time grows with the window. On rxe_t that is
 * the host's own queue: HEALTHY at the full window, never cut. The same
 * traffic on a hardware device (mlx5_h, a PCI HCA; 400 Gb/s link, so the
 * local serialisation is negligible) is queueing behind a bottleneck:
 * CONGESTED and cut. */
static void test_software_device_own_queue_is_not_congestion(void)
{
	const uint64_t flags[] = { MCC_DEVICE_F_SOFTWARE, 0 };
	for (int k = 0; k < 2; k++) {
		struct th *h = th_new(&mcc_test_aimd_v1, NULL);
		mcc_device *d = th_dev_named(h, 0, k ? "mlx5_h" : "rxe_t", 400000000000ull, flags[k]);
		mcc_route *r = th_route(h, d, 1, 1, 0, 1);
		uint64_t cong = 0, wmin = UINT64_MAX;
		for (int e = 0; e < STEADY_EPOCHS; e++) {
			sender_limited_epoch(h, r, 16, 8, e); /* 2 slices per ms: 131 MB/s */
			cong += th_rstate(h, r) == MCC_PATH_CONGESTED;
			if (e >= 100 && th_rwin(h, r) < wmin)
				wmin = th_rwin(h, r);
		}
		struct mcc_domain_stats_v1 rs = th_rs(h, r), ds = th_ds(h, d);
		if (k == 0) {
			CU_ASSERT_EQUAL(cong, 0);
			CU_ASSERT_EQUAL(rs.state, MCC_PATH_HEALTHY);
			CU_ASSERT_EQUAL(ds.state, MCC_PATH_HEALTHY);
			CU_ASSERT_EQUAL(rs.window_bytes, 16 * MiB);
			CU_ASSERT_EQUAL(rs.window_cuts + ds.window_cuts, 0);
			CU_ASSERT(rs.drain_us >= 100000); /* 16 MiB at 131 MB/s */
			CU_ASSERT_EQUAL(wmin, 16 * MiB);
		} else {
			CU_ASSERT(cong > 0);
			CU_ASSERT(rs.window_cuts > 0);
			CU_ASSERT(wmin < 16 * MiB); /* cut again after slow start */
		}
		th_free(h);
	}
}

/* (f) The same software path, then its delivery collapses 16-fold (a
 * shaped egress, "tc qdisc ... tbf" in make check-softroce's verbs_tbf):
 * its queueing counts again, CONGESTED and the window cut, never
 * quarantined. */
static void test_software_device_rate_collapse_is_congestion(void)
{
	mcc_device *d;
	mcc_route *r;
	struct th *h = steady_software_path(&d, &r);
	int e = STEADY_EPOCHS;
	CU_ASSERT_EQUAL(th_rstate(h, r), MCC_PATH_HEALTHY);
	CU_ASSERT_EQUAL(th_rwin(h, r), 16 * MiB);
	uint64_t cong = 0;
	for (int k = 0; k < 400; k++, e++) {
		sender_limited_epoch(h, r, 1, 8, e); /* 1 slice per 8 ms: 8 MB/s */
		cong += th_rstate(h, r) == MCC_PATH_CONGESTED;
	}
	struct mcc_domain_stats_v1 rs = th_rs(h, r);
	CU_ASSERT(cong > 0);
	CU_ASSERT(rs.window_cuts > 0);
	CU_ASSERT(rs.window_bytes < 16 * MiB);
	CU_ASSERT_EQUAL(rs.quarantines, 0);
	th_free(h);

	/* 64-fold (an 8 Mbit/s shaper on a 0.5 Gbit/s rxe): under 1/16 of the
	 * peak, a collapse at any window, so the cuts go on toward the minimum */
	h = steady_software_path(&d, &r);
	uint64_t wmin = UINT64_MAX;
	for (int k = 0; k < 1200; k++) {
		sender_limited_epoch(h, r, 1, 32, k); /* 1 slice per 32 ms: 2 MB/s */
		if (th_rwin(h, r) < wmin)
			wmin = th_rwin(h, r);
	}
	CU_ASSERT_EQUAL(wmin, 128 * KiB); /* min_window_bytes */
	CU_ASSERT_EQUAL(th_rs(h, r).quarantines, 0);
	th_free(h);
}

/* (g) The tail of a batch on a software device: after steady traffic the
 * application stops with one slice still in flight, which takes 300 ms
 * (nothing else is queued: the path delivers little because little is
 * there). Not a collapse: no cut, HEALTHY. */
static void test_software_device_batch_tail_is_not_collapse(void)
{
	mcc_device *d;
	mcc_route *r;
	struct th *h = steady_software_path(&d, &r);
	th_drain(h);
	th_tick(h);
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq_simple(h, r, 64 * KiB, &p), MCC_ADMIT);
	th_ticks(h, 300);
	h->lat_ns = 300 * EPOCH_NS;
	th_wc(h, &p, IBV_WC_SUCCESS, 0);
	th_ticks(h, 5);
	struct mcc_domain_stats_v1 rs = th_rs(h, r), ds = th_ds(h, d);
	CU_ASSERT_EQUAL(rs.state, MCC_PATH_HEALTHY);
	CU_ASSERT_EQUAL(ds.state, MCC_PATH_HEALTHY);
	CU_ASSERT_EQUAL(rs.window_cuts + ds.window_cuts, 0);
	CU_ASSERT_EQUAL(rs.window_bytes, 16 * MiB);
	th_free(h);
}

/* A host whose rate swings: a software transport runs on the guest's or
 * host's CPUs, whose share swings by several times for hundreds of ms (a
 * TCG guest's rounds spread 1.5-4x), and it delivers more the more bytes
 * it has in flight, up to `knee` slices (fewer, larger batches). Each
 * epoch keeps the window full and completes what that rate allows; every
 * 100-500 epochs the rate becomes `lo`..`hi` times its mean (a fixed
 * xorshift sequence). Returns the bytes delivered over what the host
 * could have delivered, and counts the epochs after the first 1,000 with
 * the window at the minimum. */
static double swinging_host(double lo, double hi, unsigned knee, int epochs, int *at_min)
{
	struct th *h = th_new(&mcc_test_aimd_v1, NULL);
	mcc_device *d = th_dev_named(h, 0, "rxe_t", 2500000000ull, MCC_DEVICE_F_SOFTWARE);
	mcc_route *r = th_route(h, d, 1, 1, 0, 1);
	uint64_t x = 88172645463325252ull;
	double acc = 0, f = 1, could = 0, done = 0;
	int left = 0;
	*at_min = 0;
	for (int e = 0; e < epochs; e++) {
		if (left-- <= 0) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			f = lo + (hi - lo) * (double)(x % 1000) / 1000.0;
			left = 100 + (int)(x / 1000 % 400);
		}
		uint64_t rw = th_rwin(h, r), dw = th_ds(h, d).window_bytes, w = rw < dw ? rw : dw;
		unsigned live = keep_full(h, r, w);
		double rate = 16.0 * f * (live < knee ? (double)live / knee : 1.0); /* slices per ms */
		could += 16.0 * f;
		acc += rate;
		unsigned n = (unsigned)acc;
		acc -= n;
		if (rate > 0)
			h->lat_ns = (uint64_t)((double)live / rate * EPOCH_NS); /* Little's law */
		done += th_pop(h, n, IBV_WC_SUCCESS);
		th_tick(h);
		*at_min += e >= 1000 && w <= 128 * KiB;
	}
	th_free(h);
	return done / could;
}

/* (h) Cut by its own swing: on such a host the rate of a low spell falls
 * under half of the last second's peak, which reads as a collapse, and the
 * window is cut; a smaller window delivers less again, which the old rule
 * read as the collapse going on, holding the window at the minimum for
 * about half of 20 s and delivering 0.51-0.62 of what the host could. The
 * peak scaled to a smaller window than its own is what that window could
 * deliver: a rate that fell with a cut is the cut's doing, not the path's,
 * the window stays above the minimum and the host's bytes are delivered. */
static void test_software_device_own_swing_is_not_collapse(void)
{
	const struct {
		double lo, hi;
		unsigned knee;
	} c[] = { { 0.4, 1.6, 32 }, { 0.25, 1.75, 32 }, { 0.4, 1.6, 128 }, { 0.25, 1.75, 128 } };
	for (unsigned k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		int at_min;
		double got = swinging_host(c[k].lo, c[k].hi, c[k].knee, 20000, &at_min);
		CU_ASSERT(got >= 0.95);
		CU_ASSERT_EQUAL(at_min, 0);
	}
}

/* The software fact is the host's: the device's name means nothing (an
 * "rxe" name without the flag is hardware), a v1.0 description (no flags
 * member; whatever lies beyond its size is not read) is hardware, and a
 * device stated software logs one INFO line at device_open. */
static void test_software_device_is_what_the_host_states(void)
{
	struct th *h = th_new(&mcc_test_aimd_v1, NULL);
	unsigned logs = h->logs;
	th_dev_named(h, 0, "rxe0", 0, 0);
	struct mcc_device_desc_v1 v10 = { MCC_DEVICE_DESC_V1_0_SIZE, 1, "rxe1", 2, 0, 0,
		                          MCC_DEVICE_F_SOFTWARE };
	mcc_device *dv = NULL;
	CU_ASSERT_EQUAL_FATAL(h->ops->device_open(h->ctx, &v10, &dv), 0);
	h->ops->device_close(h->ctx, dv);
	CU_ASSERT_EQUAL(h->logs, logs);
	th_dev_named(h, 2, "mlx5_0", 0, MCC_DEVICE_F_SOFTWARE);
	CU_ASSERT_EQUAL(h->logs, logs + 1);
	th_free(h);
}

MCC_CU_SUITE(t_init_base_tests, "policy_base", NULL, NULL,
             test_constant_base_latency_is_not_congestion,
             test_queueing_above_the_base_is_congestion,
             test_stated_base_rtt_is_not_queueing,
             test_stated_base_rtt_gaps_are_no_stall,
             test_stated_base_rtt_slow_start_is_not_cut,
             test_first_burst_bounded_then_doubles_to_max,
             test_route_starts_at_its_share_of_a_grown_device,
             test_probe_recovery_then_clean_tasks_read_normal,
             test_software_device_own_queue_is_not_congestion,
             test_software_device_rate_collapse_is_congestion,
             test_software_device_batch_tail_is_not_collapse,
             test_software_device_own_swing_is_not_collapse,
             test_software_device_is_what_the_host_states)

MCC_CU_MAIN(t_init_base_tests)
