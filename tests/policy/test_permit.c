/* SPDX-License-Identifier: MIT */
/*
 * test_permit.c - permits (two-domain reservation, rollback, settle-once,
 * partial release), the adaptive bound max(window, one slice), the credit
 * design's invariants, lanes and route handles.
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdbool.h>
#include <string.h>

#include "cu_driver.h"
#include "harness.h"

static mcc_lane *open_lane(struct th *h, uint32_t id)
{
	struct mcc_lane_desc_v1 d = { sizeof(d), id, MCC_LANE_POST_POLL, 0 };
	mcc_lane *l = NULL;
	CU_ASSERT_EQUAL_FATAL(h->ops->lane_open(h->ctx, &d, &l), 0);
	return l;
}

static void test_permit_reserves_full_slice_in_device_and_route(void)
{
	struct th_fix f = th_fix_cold(NULL);
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 65536, 1, 7, 9, 2, &p), MCC_ADMIT);
	CU_ASSERT(p.flags & MCC_PERMIT_F_LIVE);
	CU_ASSERT_EQUAL(p.bytes, 65536);
	CU_ASSERT_PTR_EQUAL(p.route, f.r);
	CU_ASSERT_PTR_EQUAL(p.device, f.d);
	CU_ASSERT_EQUAL(p.generation, 1);
	CU_ASSERT_EQUAL(p.task.batch_id, 7);
	CU_ASSERT_EQUAL(p.task.task_id, 9);
	CU_ASSERT_EQUAL(p.task.attempt, 2);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).inflight_bytes, 65536);
	CU_ASSERT_EQUAL(th_ds(f.h, f.d).inflight_bytes, 65536);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).admits, 1);
	CU_ASSERT_EQUAL(th_ds(f.h, f.d).admits, 1);
	th_wc(f.h, &p, IBV_WC_SUCCESS, 0);
	CU_ASSERT(!(p.flags & MCC_PERMIT_F_LIVE));
	CU_ASSERT_EQUAL(p.bytes, 0);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).inflight_bytes, 0);
	CU_ASSERT_EQUAL(th_ds(f.h, f.d).inflight_bytes, 0);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).completed_bytes, 65536);
	CU_ASSERT_EQUAL(th_ds(f.h, f.d).completions, 1);
	th_free(f.h);
}

/* Cut one route's window with receiver pressure (route only), fill it: the
 * device still has room, the route refuses, the device rolls back. */
static void test_permit_failed_route_reservation_rolls_back_device(void)
{
	struct th_fix f = th_fix(NULL);
	uint64_t ddefers0 = th_ds(f.h, f.d).defers, rdefers0 = th_rs(f.h, f.r).defers;
	for (int e = 0; e < 2; e++) {
		struct mcc_permit_v1 p = MCC_PERMIT_INIT;
		CU_ASSERT_EQUAL(th_acq_simple(f.h, f.r, 4096, &p), MCC_ADMIT);
		th_wc(f.h, &p, IBV_WC_RNR_RETRY_EXC_ERR, 0);
		th_tick(f.h);
	}
	uint64_t w = th_rwin(f.h, f.r);
	CU_ASSERT_EQUAL(w, 8 * MiB);
	CU_ASSERT_EQUAL(th_ds(f.h, f.d).window_bytes, 16 * MiB);
	unsigned n = th_push(f.h, f.r, 1000, 64 * KiB, 1);
	CU_ASSERT_EQUAL(n, w / (64 * KiB));
	CU_ASSERT_EQUAL(th_ds(f.h, f.d).inflight_bytes, w);
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq_simple(f.h, f.r, 64 * KiB, &p), MCC_DEFER);
	CU_ASSERT_EQUAL(p.reason, MCC_REASON_BYTE_WINDOW);
	CU_ASSERT(!(p.flags & MCC_PERMIT_F_LIVE));
	CU_ASSERT_EQUAL(th_ds(f.h, f.d).inflight_bytes, w); /* rolled back */
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).inflight_bytes, w);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).defers, rdefers0 + 2); /* th_push stopped at one too */
	CU_ASSERT_EQUAL(th_ds(f.h, f.d).defers, ddefers0);
	th_drain(f.h);
	CU_ASSERT_EQUAL(th_ds(f.h, f.d).inflight_bytes, 0);
	th_free(f.h);
}

static void test_permit_release_beyond_live_is_ealready_and_counted(void)
{
	struct th_fix f = th_fix_cold(NULL);
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq_simple(f.h, f.r, 8192, &p), MCC_ADMIT);
	CU_ASSERT_EQUAL(th_rel(f.h, &p, 8192, MCC_REL_NOT_POSTED), 0);
	CU_ASSERT_EQUAL(th_rel(f.h, &p, 8192, MCC_REL_NOT_POSTED), -EALREADY);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).double_release, 1);
	CU_ASSERT_EQUAL(th_ds(f.h, f.d).double_release, 1);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).inflight_bytes, 0);
	/* more than live: only the live bytes return */
	CU_ASSERT_EQUAL(th_acq_simple(f.h, f.r, 8192, &p), MCC_ADMIT);
	CU_ASSERT_EQUAL(th_rel(f.h, &p, 10000, MCC_REL_CANCELLED), -EALREADY);
	CU_ASSERT_EQUAL(p.bytes, 0);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).double_release, 2);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).inflight_bytes, 0);
	CU_ASSERT_EQUAL(th_ds(f.h, f.d).inflight_bytes, 0);
	th_free(f.h);
}

static void test_permit_completion_beyond_live_is_counted_and_harmless(void)
{
	struct th_fix f = th_fix_cold(NULL);
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq_simple(f.h, f.r, 8192, &p), MCC_ADMIT);
	th_wc_gen(f.h, &p, IBV_WC_SUCCESS, 1, 16384); /* more than live */
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).double_release, 1);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).inflight_bytes, 0);
	th_wc_gen(f.h, &p, IBV_WC_SUCCESS, 1, 0); /* settled permit */
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).double_release, 2);
	CU_ASSERT_EQUAL(th_ds(f.h, f.d).double_release, 2);
	CU_ASSERT_EQUAL(th_ds(f.h, f.d).inflight_bytes, 0);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).completions, 1); /* the duplicate is not feedback */
	th_free(f.h);
}

/* What a refused permit holds: struct_size and reason, nothing else. */
static void check_refused(const struct mcc_permit_v1 *p, uint32_t reason)
{
	struct mcc_permit_v1 want = MCC_PERMIT_INIT;
	want.reason = (uint16_t)reason;
	CU_ASSERT_EQUAL(p->reason, reason);
	CU_ASSERT_PTR_NULL(p->route);
	CU_ASSERT_PTR_NULL(p->device);
	CU_ASSERT_EQUAL(memcmp(p, &want, sizeof(want)), 0);
}

/* Settling a refused permit: ignored, counted in no domain. */
static void check_refused_settle_ignored(struct th *h, mcc_device *d, mcc_route *r,
                                         struct mcc_permit_v1 *p)
{
	struct mcc_domain_stats_v1 rs = th_rs(h, r), ds = th_ds(h, d);
	CU_ASSERT_EQUAL(th_rel(h, p, 4096, MCC_REL_NOT_POSTED), -EALREADY);
	th_wc_gen(h, p, IBV_WC_SUCCESS, 1, 4096);
	th_wc(h, p, IBV_WC_RETRY_EXC_ERR, 0);
	CU_ASSERT_EQUAL(th_rs(h, r).double_release, rs.double_release);
	CU_ASSERT_EQUAL(th_ds(h, d).double_release, ds.double_release);
	CU_ASSERT_EQUAL(th_rs(h, r).inflight_bytes, rs.inflight_bytes);
	CU_ASSERT_EQUAL(th_ds(h, d).inflight_bytes, ds.inflight_bytes);
	CU_ASSERT_EQUAL(th_rs(h, r).completions, rs.completions);
	CU_ASSERT_EQUAL(th_rs(h, r).errors, rs.errors);
}

/* A refusal leaves a permit dead, naming no domain, holding only its
 * reason, whatever it held before (here a settled admission's route,
 * device, generation and task) and whichever path refused: the credit fast
 * path declining into the general path (DEFER, window full), the general
 * path alone (AVOID, route quarantined). */
static void test_permit_refused_holds_only_reason(void)
{
	struct th_fix f = th_fix(NULL);
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 4096, 1, 7, 9, 2, &p), MCC_ADMIT);
	th_wc(f.h, &p, IBV_WC_SUCCESS, 0);
	CU_ASSERT_PTR_EQUAL(p.route, f.r); /* dead, still naming its domains */
	CU_ASSERT(th_push(f.h, f.r, 1000, 64 * KiB, 1) > 0); /* the window is full */
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 64 * KiB, 1, 7, 9, 3, &p), MCC_DEFER);
	check_refused(&p, MCC_REASON_BYTE_WINDOW);
	check_refused_settle_ignored(f.h, f.d, f.r, &p);
	th_drain(f.h);

	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 4096, 1, 7, 9, 4, &p), MCC_ADMIT);
	th_wc(f.h, &p, IBV_WC_SUCCESS, 0);
	th_quarantine_route(f.h, f.r, 1);
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 4096, 1, 7, 9, 5, &p), MCC_AVOID);
	check_refused(&p, MCC_REASON_PATH_QUARANTINED);
	check_refused_settle_ignored(f.h, f.d, f.r, &p);
	/* reusable like any dead permit */
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 4096, 1, 7, 9, 6, &p), MCC_AVOID);
	th_free(f.h);
}

static void test_permit_partial_release_returns_only_given_bytes(void)
{
	struct th_fix f = th_fix_cold(NULL);
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq_simple(f.h, f.r, 65536, &p), MCC_ADMIT);
	CU_ASSERT_EQUAL(th_rel(f.h, &p, 16384, MCC_REL_NOT_POSTED), 0);
	CU_ASSERT(p.flags & MCC_PERMIT_F_LIVE);
	CU_ASSERT_EQUAL(p.bytes, 49152);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).inflight_bytes, 49152);
	CU_ASSERT_EQUAL(th_ds(f.h, f.d).inflight_bytes, 49152);
	/* the posted part settles through its WC */
	th_wc_gen(f.h, &p, IBV_WC_SUCCESS, 1, 49152);
	CU_ASSERT(!(p.flags & MCC_PERMIT_F_LIVE));
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).inflight_bytes, 0);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).completed_bytes, 49152);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).double_release, 0);
	th_free(f.h);
}

static void test_permit_reclaimed_release_settles_posted_bytes(void)
{
	struct th_fix f = th_fix_cold(NULL);
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq_simple(f.h, f.r, 32768, &p), MCC_ADMIT);
	CU_ASSERT_EQUAL(th_rel(f.h, &p, 32768, MCC_REL_RECLAIMED), 0);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).inflight_bytes, 0);
	CU_ASSERT_EQUAL(th_ds(f.h, f.d).inflight_bytes, 0);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).double_release, 0);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).state, MCC_PATH_HEALTHY); /* no failure from teardown */
	th_free(f.h);
}

static void test_permit_inflight_never_negative_and_never_leaks(void)
{
	struct th_fix f = th_fix(NULL);
	struct mcc_permit_v1 p[8];
	uint64_t live = 0;
	for (int round = 0; round < 50; round++) {
		for (int i = 0; i < 8; i++) {
			p[i] = (struct mcc_permit_v1)MCC_PERMIT_INIT;
			CU_ASSERT_EQUAL(th_acq_simple(f.h, f.r, 4096u * (unsigned)(i + 1), &p[i]), MCC_ADMIT);
			live += 4096u * (unsigned)(i + 1);
		}
		CU_ASSERT_EQUAL(th_rs(f.h, f.r).inflight_bytes, live);
		for (int i = 0; i < 8; i++) {
			uint64_t b = p[i].bytes;
			switch ((round + i) % 4) {
			case 0:
				th_wc(f.h, &p[i], IBV_WC_SUCCESS, 0);
				break;
			case 1:
				CU_ASSERT_EQUAL(th_rel(f.h, &p[i], 1024, MCC_REL_NOT_POSTED), 0);
				th_wc(f.h, &p[i], IBV_WC_WR_FLUSH_ERR, 0);
				break;
			case 2:
				CU_ASSERT_EQUAL(th_rel(f.h, &p[i], b, MCC_REL_POST_REJECTED), 0);
				break;
			default:
				th_wc(f.h, &p[i], IBV_WC_LOC_LEN_ERR, 0);
				th_wc(f.h, &p[i], IBV_WC_SUCCESS, 0); /* duplicate */
				break;
			}
			live -= b;
			struct mcc_domain_stats_v1 s = th_rs(f.h, f.r);
			CU_ASSERT_EQUAL(s.inflight_bytes, live);
			CU_ASSERT(s.inflight_bytes <= (uint64_t)INT64_MAX);
		}
		th_tick(f.h);
	}
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).inflight_bytes, 0);
	CU_ASSERT_EQUAL(th_ds(f.h, f.d).inflight_bytes, 0);
	th_free(f.h);
}

static struct mcc_config_v1 small_window(uint64_t w)
{
	struct mcc_config_v1 c = th_cfg();
	c.min_window_bytes = w;
	c.max_window_bytes = w;
	return c;
}

static void test_bound_empty_domain_admits_one_oversized_slice(void)
{
	struct mcc_config_v1 c = small_window(1 * MiB);
	struct th_fix f = th_fix_cold(&c);
	struct mcc_permit_v1 big = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq_simple(f.h, f.r, 4 * MiB, &big), MCC_ADMIT);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).inflight_bytes, 4 * MiB); /* full bytes reserved */
	CU_ASSERT_EQUAL(th_ds(f.h, f.d).inflight_bytes, 4 * MiB);
	th_wc(f.h, &big, IBV_WC_SUCCESS, 0);
	th_free(f.h);
}

static void test_bound_oversized_slice_blocks_until_drained(void)
{
	struct mcc_config_v1 c = small_window(1 * MiB);
	struct th_fix f = th_fix_cold(&c);
	struct mcc_permit_v1 big = MCC_PERMIT_INIT, small = MCC_PERMIT_INIT, big2 = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq_simple(f.h, f.r, 4 * MiB, &big), MCC_ADMIT);
	CU_ASSERT_EQUAL(th_acq_simple(f.h, f.r, 4096, &small), MCC_DEFER);
	CU_ASSERT_EQUAL(th_acq_simple(f.h, f.r, 4 * MiB, &big2), MCC_DEFER);
	/* partially drained: still over the window */
	th_wc_gen(f.h, &big, IBV_WC_SUCCESS, 1, 3 * MiB + 512 * KiB);
	CU_ASSERT_EQUAL(th_acq_simple(f.h, f.r, 1 * MiB, &small), MCC_DEFER);
	th_wc(f.h, &big, IBV_WC_SUCCESS, 0);
	CU_ASSERT_EQUAL(th_acq_simple(f.h, f.r, 4096, &small), MCC_ADMIT);
	CU_ASSERT_EQUAL(th_acq_simple(f.h, f.r, 4 * MiB, &big2), MCC_DEFER); /* not empty */
	th_wc(f.h, &small, IBV_WC_SUCCESS, 0);
	CU_ASSERT_EQUAL(th_acq_simple(f.h, f.r, 4 * MiB, &big2), MCC_ADMIT);
	th_wc(f.h, &big2, IBV_WC_SUCCESS, 0);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).inflight_bytes, 0);
	th_free(f.h);
}

static void test_bound_oversized_slice_admitted_while_probing(void)
{
	struct th_fix f = th_fix(NULL);
	th_probing(f.h, f.r, 1);
	struct mcc_permit_v1 p = MCC_PERMIT_INIT, q = MCC_PERMIT_INIT;
	/* one slice larger than min window and probe budget, on a new generation */
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 1 * MiB, 2, 0, 0, 0, &p), MCC_ADMIT);
	CU_ASSERT(p.flags & MCC_PERMIT_F_PROBE);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).inflight_bytes, 1 * MiB);
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 4096, 2, 0, 0, 0, &q), MCC_AVOID); /* budget used */
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 4096, 1, 0, 0, 0, &q), MCC_AVOID); /* old generation */
	th_wc(f.h, &p, IBV_WC_SUCCESS, 0);
	th_free(f.h);
}

static void test_bound_is_max_of_window_and_one_slice(void)
{
	struct mcc_config_v1 c = small_window(256 * KiB);
	struct th_fix f = th_fix_cold(&c);
	CU_ASSERT_EQUAL(th_push(f.h, f.r, 100, 64 * KiB, 1), 4); /* exactly the window */
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).inflight_bytes, 256 * KiB);
	th_drain(f.h);
	CU_ASSERT_EQUAL(th_push(f.h, f.r, 100, 100 * KiB, 1), 2); /* 200 KiB <= 256 KiB < 300 */
	th_drain(f.h);
	CU_ASSERT_EQUAL(th_push(f.h, f.r, 100, 300 * KiB, 1), 1); /* one slice beyond */
	th_drain(f.h);
	th_free(f.h);
}

static void test_permit_invalid_arguments(void)
{
	struct th_fix f = th_fix_cold(NULL);
	struct mcc_permit_v1 p = MCC_PERMIT_INIT, z;
	memset(&z, 0, sizeof(z));
	CU_ASSERT_EQUAL(f.h->ops->try_acquire(f.h->lane, NULL, 4096, 1, NULL, &p), -EINVAL);
	CU_ASSERT_EQUAL(f.h->ops->try_acquire(NULL, f.r, 4096, 1, NULL, &p), -EINVAL);
	CU_ASSERT_EQUAL(f.h->ops->try_acquire(f.h->lane, f.r, 0, 1, NULL, &p), -EINVAL);
	CU_ASSERT_EQUAL(f.h->ops->try_acquire(f.h->lane, f.r, 4096, 1, NULL, NULL), -EINVAL);
	CU_ASSERT_EQUAL(f.h->ops->try_acquire(f.h->lane, f.r, 4096, 1, NULL, &z), -EINVAL);
	CU_ASSERT_EQUAL(f.h->ops->try_acquire(f.h->lane, f.r, 4096, 1, NULL, &p), MCC_ADMIT);
	CU_ASSERT_EQUAL(p.task.batch_id, 0); /* no task */
	CU_ASSERT_EQUAL(f.h->ops->try_acquire(f.h->lane, f.r, 4096, 1, NULL, &p), -EINVAL); /* live */
	CU_ASSERT_EQUAL(f.h->ops->release(f.h->lane, NULL, 1, 0), -EINVAL);
	CU_ASSERT_EQUAL(th_rel(f.h, &p, 0, MCC_REL_NOT_POSTED), 0); /* zero bytes: nothing */
	CU_ASSERT_EQUAL(p.bytes, 4096);
	struct mcc_permit_v1 never = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_rel(f.h, &never, 1, MCC_REL_NOT_POSTED), -EALREADY);
	f.h->ops->on_completion(f.h->lane, &never, NULL); /* ignored */
	th_wc(f.h, &p, IBV_WC_SUCCESS, 0);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).inflight_bytes, 0);
	th_free(f.h);
}

static void test_permit_reusable_after_settlement(void)
{
	struct th_fix f = th_fix_cold(NULL);
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	for (int i = 0; i < 100; i++) {
		CU_ASSERT_EQUAL(th_acq_simple(f.h, f.r, 4096, &p), MCC_ADMIT);
		if (i % 2)
			th_wc(f.h, &p, IBV_WC_SUCCESS, 0);
		else
			CU_ASSERT_EQUAL(th_rel(f.h, &p, 4096, MCC_REL_NOT_POSTED), 0);
	}
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).admits, 100);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).completions, 50);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).inflight_bytes, 0);
	th_free(f.h);
}

/* A busy epoch switches a HEALTHY domain with a large window to credit mode:
 * the shared counter then includes cached credit, and still never exceeds
 * the window; lane_close hands every cached byte back. */
static void test_credit_mode_invariant_and_lane_close_flush(void)
{
	struct th_fix f = th_fix(NULL);
	uint64_t admits0 = th_rs(f.h, f.r).admits;
	for (int i = 0; i < 200; i++) { /* busy epoch */
		struct mcc_permit_v1 p = MCC_PERMIT_INIT;
		CU_ASSERT_EQUAL(th_acq_simple(f.h, f.r, 64 * KiB, &p), MCC_ADMIT);
		th_wc(f.h, &p, IBV_WC_SUCCESS, 0);
	}
	th_tick(f.h);
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq_simple(f.h, f.r, 64 * KiB, &p), MCC_ADMIT);
	struct mcc_domain_stats_v1 s = th_rs(f.h, f.r);
	/* chunk = clamp(16 MiB / (4 * 1 lane open), slice, 1 MiB) = 1 MiB */
	CU_ASSERT_EQUAL(s.inflight_bytes, 1 * MiB);
	th_wc(f.h, &p, IBV_WC_SUCCESS, 0);
	CU_ASSERT(th_rs(f.h, f.r).inflight_bytes <= 1 * MiB); /* cached, at most one chunk */
	/* fill: the actual in-flight (live permits) stays within the window */
	unsigned n = th_push(f.h, f.r, TH_FIFO, 64 * KiB, 1);
	CU_ASSERT_EQUAL((uint64_t)n * 64 * KiB, 16 * MiB);
	s = th_rs(f.h, f.r);
	CU_ASSERT(s.inflight_bytes <= s.window_bytes);
	CU_ASSERT(s.inflight_bytes >= (uint64_t)n * 64 * KiB);
	th_drain(f.h);
	f.h->ops->lane_close(f.h->ctx, f.h->lane);
	f.h->lane = NULL;
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).inflight_bytes, 0);
	CU_ASSERT_EQUAL(th_ds(f.h, f.d).inflight_bytes, 0);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).admits, admits0 + 201 + n);
	th_free(f.h);
}

/* Credit cached by an idle lane becomes stale when the window is cut; the
 * next tick's snapshot keeps it from blocking the other lanes' exact
 * admission, and the idle lane returns it on its next call. */
static void test_credit_stale_in_idle_lane_does_not_block_exact_admission(void)
{
	struct th_fix f = th_fix(NULL);
	mcc_lane *idle = open_lane(f.h, 1);
	for (int i = 0; i < 200; i++) {
		struct mcc_permit_v1 p = MCC_PERMIT_INIT;
		CU_ASSERT_EQUAL(f.h->ops->try_acquire(idle, f.r, 64 * KiB, 1, NULL, &p), MCC_ADMIT);
		f.h->ops->release(idle, &p, 64 * KiB, MCC_REL_NOT_POSTED);
	}
	th_tick(f.h); /* busy: credit mode */
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(f.h->ops->try_acquire(idle, f.r, 64 * KiB, 1, NULL, &p), MCC_ADMIT);
	f.h->ops->release(idle, &p, 64 * KiB, MCC_REL_NOT_POSTED);
	uint64_t cached = th_rs(f.h, f.r).inflight_bytes;
	CU_ASSERT(cached >= 64 * KiB);
	/* receiver pressure cuts the route: exact mode at 8 MiB */
	for (int e = 0; e < 2; e++) {
		CU_ASSERT_EQUAL(th_acq_simple(f.h, f.r, 4096, &p), MCC_ADMIT);
		th_wc(f.h, &p, IBV_WC_RNR_RETRY_EXC_ERR, 0);
		th_tick(f.h);
	}
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_CONGESTED);
	uint64_t w = th_rwin(f.h, f.r);
	CU_ASSERT_EQUAL(w, 8 * MiB);
	/* lane 0 gets the whole window although `idle` still holds credit */
	unsigned n = th_push(f.h, f.r, TH_FIFO, 64 * KiB, 1);
	CU_ASSERT_EQUAL((uint64_t)n * 64 * KiB, w);
	th_drain(f.h);
	/* the idle lane's next call returns its stale credit; the next tick folds it */
	CU_ASSERT_EQUAL(f.h->ops->try_acquire(idle, f.r, 4096, 1, NULL, &p), MCC_ADMIT);
	f.h->ops->release(idle, &p, 4096, MCC_REL_NOT_POSTED);
	th_tick(f.h);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).inflight_bytes, 0);
	f.h->ops->lane_close(f.h->ctx, idle);
	th_free(f.h);
}

/* The credit threshold and chunk follow the lanes actually open, not the
 * host's declared bound: a host declaring 1024 lanes and running 1 still
 * gets lane credit (window >= 4 x lanes x slice), and the chunk shrinks as
 * lanes open (at most window / 4 cached by all of them). */
static void test_credit_chunk_follows_lanes_open_not_declared_max(void)
{
	struct th *h = th_new_lanes(&mcc_test_aimd_v1, NULL, 1024);
	mcc_device *d = th_dev(h, 0);
	mcc_route *r = th_route(h, d, 1, 1, 0, 1);
	th_warm(h, d, r);
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	for (int i = 0; i < 100; i++) { /* a busy epoch */
		CU_ASSERT_EQUAL(th_acq_simple(h, r, 64 * KiB, &p), MCC_ADMIT);
		th_rel(h, &p, 64 * KiB, MCC_REL_NOT_POSTED);
	}
	th_tick(h);
	CU_ASSERT_EQUAL(th_acq_simple(h, r, 64 * KiB, &p), MCC_ADMIT);
	/* 1 lane open: chunk = clamp(16 MiB / (4 x 1), slice, 1 MiB) */
	CU_ASSERT_EQUAL(th_rs(h, r).inflight_bytes, 1 * MiB);
	th_rel(h, &p, 64 * KiB, MCC_REL_NOT_POSTED);
	/* 16 lanes open: 16 MiB / (4 x 16) = 256 KiB, from the next tick */
	mcc_lane *more[15];
	for (uint32_t i = 0; i < 15; i++)
		more[i] = open_lane(h, 100 + i);
	for (int i = 0; i < 100; i++) {
		CU_ASSERT_EQUAL(th_acq_simple(h, r, 64 * KiB, &p), MCC_ADMIT);
		th_rel(h, &p, 64 * KiB, MCC_REL_NOT_POSTED);
	}
	th_tick(h);
	CU_ASSERT_EQUAL(th_acq_simple(h, r, 64 * KiB, &p), MCC_ADMIT);
	CU_ASSERT_EQUAL(th_rs(h, r).inflight_bytes, 256 * KiB);
	th_rel(h, &p, 64 * KiB, MCC_REL_NOT_POSTED);
	/* 64 lanes: 4 x 64 x 64 KiB = 16 MiB, still credit at one slice each */
	mcc_lane *most[48];
	for (uint32_t i = 0; i < 48; i++)
		most[i] = open_lane(h, 200 + i);
	for (int i = 0; i < 100; i++) {
		CU_ASSERT_EQUAL(th_acq_simple(h, r, 64 * KiB, &p), MCC_ADMIT);
		th_rel(h, &p, 64 * KiB, MCC_REL_NOT_POSTED);
	}
	th_tick(h);
	CU_ASSERT_EQUAL(th_acq_simple(h, r, 64 * KiB, &p), MCC_ADMIT);
	CU_ASSERT_EQUAL(th_rs(h, r).inflight_bytes, 64 * KiB);
	th_rel(h, &p, 64 * KiB, MCC_REL_NOT_POSTED);
	for (uint32_t i = 0; i < 48; i++)
		h->ops->lane_close(h->ctx, most[i]);
	for (uint32_t i = 0; i < 15; i++)
		h->ops->lane_close(h->ctx, more[i]);
	th_tick(h);
	CU_ASSERT_EQUAL(th_rs(h, r).inflight_bytes, 0);
	th_free(h);
}

static void test_credit_flushed_on_state_change_epoch(void)
{
	struct th_fix f = th_fix(NULL);
	for (int i = 0; i < 200; i++) {
		struct mcc_permit_v1 p = MCC_PERMIT_INIT;
		CU_ASSERT_EQUAL(th_acq_simple(f.h, f.r, 64 * KiB, &p), MCC_ADMIT);
		th_rel(f.h, &p, 64 * KiB, MCC_REL_NOT_POSTED);
	}
	th_tick(f.h);
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq_simple(f.h, f.r, 64 * KiB, &p), MCC_ADMIT);
	CU_ASSERT(th_rs(f.h, f.r).inflight_bytes > 64 * KiB); /* credit cached */
	/* a QP hard error moves the route to SUSPECT: exact mode, new epoch */
	th_async(f.h, IBV_EVENT_QP_FATAL, f.d, f.r, 1, 0, 1);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_SUSPECT);
	th_wc(f.h, &p, IBV_WC_SUCCESS, 0); /* returns to the shared counter now */
	th_tick(f.h);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).inflight_bytes, 0);
	th_free(f.h);
}

static void test_route_rebind_keeps_state_and_settles_on_admitting_device(void)
{
	struct th *h = th_new(&mcc_test_aimd_v1, NULL);
	mcc_device *d0 = th_dev(h, 0), *d1 = th_dev(h, 1);
	mcc_route *r = th_route(h, d0, 1, 1, 5, 1);
	th_calm(h, r, 1); /* it delivered: its first hard error does not quarantine it */
	th_async(h, IBV_EVENT_PATH_MIG_ERR, d0, r, 1, 0, 1);
	CU_ASSERT_EQUAL(th_rstate(h, r), MCC_PATH_SUSPECT);
	struct mcc_permit_v1 p = MCC_PERMIT_INIT, q = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq_simple(h, r, 8192, &p), MCC_ADMIT);
	CU_ASSERT_EQUAL(h->ops->route_rebind(h->ctx, r, d1, 2, 6), 0);
	CU_ASSERT_EQUAL(th_rstate(h, r), MCC_PATH_SUSPECT); /* state stays */
	CU_ASSERT_EQUAL(th_acq_simple(h, r, 4096, &q), MCC_ADMIT);
	CU_ASSERT_PTR_EQUAL(q.device, d1);
	CU_ASSERT_EQUAL(th_ds(h, d0).inflight_bytes, 8192);
	CU_ASSERT_EQUAL(th_ds(h, d1).inflight_bytes, 4096);
	th_wc(h, &p, IBV_WC_SUCCESS, 0); /* settles against d0 */
	th_wc(h, &q, IBV_WC_SUCCESS, 0);
	CU_ASSERT_EQUAL(th_ds(h, d0).inflight_bytes, 0);
	CU_ASSERT_EQUAL(th_ds(h, d1).inflight_bytes, 0);
	CU_ASSERT_EQUAL(th_rs(h, r).inflight_bytes, 0);
	/* port scope now follows the new binding */
	th_async(h, IBV_EVENT_PORT_ERR, d0, NULL, 1, 0, 0);
	CU_ASSERT_EQUAL(th_rstate(h, r), MCC_PATH_SUSPECT);
	th_async(h, IBV_EVENT_PORT_ERR, d1, NULL, 2, 0, 0);
	CU_ASSERT_EQUAL(th_rstate(h, r), MCC_PATH_QUARANTINED);
	th_free(h);
}

static void test_route_open_same_id_returns_same_handle(void)
{
	struct th *h = th_new(&mcc_test_aimd_v1, NULL);
	mcc_device *d = th_dev(h, 0);
	mcc_route *r = th_route(h, d, 42, 1, 0, 1);
	struct mcc_route_desc_v1 rd = { sizeof(rd), 1, 0, 1, 42, "x", 1, 0 };
	mcc_route *again = NULL, *other = NULL;
	CU_ASSERT_EQUAL(h->ops->route_open(h->ctx, d, &rd, &again), 0);
	CU_ASSERT_PTR_EQUAL(again, r);
	rd.route_id = 43;
	CU_ASSERT_EQUAL(h->ops->route_open(h->ctx, d, &rd, &other), 0);
	CU_ASSERT_PTR_NOT_EQUAL(other, r);
	h->ops->route_close(h->ctx, again); /* one reference left */
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq_simple(h, r, 4096, &p), MCC_ADMIT);
	th_wc(h, &p, IBV_WC_SUCCESS, 0);
	h->ops->route_close(h->ctx, other);
	th_free(h);
}

static void test_lane_open_rejects_duplicate_and_out_of_range(void)
{
	struct th *h = th_new(&mcc_test_aimd_v1, NULL); /* max_lanes 4, lane 0 open */
	struct mcc_lane_desc_v1 d = { sizeof(d), 0, MCC_LANE_POST, 0 };
	mcc_lane *l = NULL;
	CU_ASSERT_EQUAL(h->ops->lane_open(h->ctx, &d, &l), -EBUSY);
	d.lane_id = 4;
	CU_ASSERT_EQUAL(h->ops->lane_open(h->ctx, &d, &l), -EINVAL);
	d.lane_id = 3;
	CU_ASSERT_EQUAL(h->ops->lane_open(h->ctx, &d, &l), 0);
	h->ops->lane_close(h->ctx, l);
	CU_ASSERT_EQUAL(h->ops->lane_open(h->ctx, &d, &l), 0); /* reusable id */
	h->ops->lane_close(h->ctx, l);
	th_free(h);
}

/* A poller lane settles permits admitted by a posting lane. */
static void test_permit_settled_on_another_lane(void)
{
	struct th_fix f = th_fix(NULL);
	uint64_t compl0 = th_rs(f.h, f.r).completions;
	mcc_lane *poller = open_lane(f.h, 2);
	struct mcc_permit_v1 p[300];
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 300; i++) {
			p[i] = (struct mcc_permit_v1)MCC_PERMIT_INIT;
			CU_ASSERT_EQUAL(th_acq_simple(f.h, f.r, 16 * KiB, &p[i]), MCC_ADMIT);
		}
		struct mcc_completion_v1 wc = { sizeof(wc), 0, 0, 1, 0, 0, 0, 0, 0 };
		for (int i = 0; i < 300; i++)
			f.h->ops->on_completion(poller, &p[i], &wc);
		th_tick(f.h);
	}
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).completions, compl0 + 900);
	f.h->ops->lane_close(f.h->ctx, poller);
	f.h->ops->lane_close(f.h->ctx, f.h->lane);
	f.h->lane = NULL;
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).inflight_bytes, 0);
	CU_ASSERT_EQUAL(th_ds(f.h, f.d).inflight_bytes, 0);
	th_free(f.h);
}

/*
 * Feedback totals stay exact whatever caches them: 30 routes on 2 devices
 * (more routes than a lane's pending pairs, and colliding lane slots, so
 * pairs are retargeted and slots rebound while they hold counts), admitted
 * on one lane, settled on it or on a poller lane (which only settles), with
 * ticks in between (domains move between exact and credit mode), then the
 * poller lane closed. Every admission, completion and completed byte is
 * counted once in its route and its device.
 */
static void test_feedback_counts_exact_across_lane_caches(void)
{
	enum { NR = 30, N = 3000 };
	struct th *h = th_new(&mcc_test_aimd_v1, NULL);
	mcc_device *d[2] = { th_dev(h, 0), th_dev(h, 1) };
	mcc_route *r[NR];
	uint64_t adm[NR] = { 0 }, cmp[NR] = { 0 }, bytes[NR] = { 0 };
	for (int k = 0; k < NR; k++)
		r[k] = th_route(h, d[k % 2], 100 + (uint64_t)k, 1, 0, 1);
	mcc_lane *poller = open_lane(h, 3);
	h->lat_ns = 5000;
	uint64_t x = 12345;
	for (int i = 0; i < N; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		int k = (int)((x >> 33) % NR);
		uint64_t b = 4 * KiB << ((x >> 20) % 4);
		struct mcc_permit_v1 p = MCC_PERMIT_INIT;
		CU_ASSERT_EQUAL_FATAL(th_acq_simple(h, r[k], b, &p), MCC_ADMIT);
		adm[k]++;
		switch ((x >> 40) % 3) {
		case 0:
			th_wc(h, &p, IBV_WC_SUCCESS, 0);
			cmp[k]++;
			bytes[k] += b;
			break;
		case 1: {
			struct mcc_completion_v1 wc = { sizeof(wc), 0, 0, 1, 0, 1000, 6000, 0, 0 };
			h->ops->on_completion(poller, &p, &wc);
			cmp[k]++;
			bytes[k] += b;
			break;
		}
		default:
			CU_ASSERT_EQUAL(th_rel(h, &p, b, MCC_REL_NOT_POSTED), 0);
		}
		if (i % 97 == 96)
			th_tick(h);
	}
	h->ops->lane_close(h->ctx, poller);
	uint64_t dadm[2] = { 0 }, dcmp[2] = { 0 }, dbytes[2] = { 0 };
	for (int k = 0; k < NR; k++) {
		struct mcc_domain_stats_v1 s = th_rs(h, r[k]);
		CU_ASSERT_EQUAL(s.admits, adm[k]);
		CU_ASSERT_EQUAL(s.completions, cmp[k]);
		CU_ASSERT_EQUAL(s.completed_bytes, bytes[k]);
		CU_ASSERT_EQUAL(s.inflight_bytes, 0);
		dadm[k % 2] += adm[k];
		dcmp[k % 2] += cmp[k];
		dbytes[k % 2] += bytes[k];
	}
	for (int j = 0; j < 2; j++) {
		struct mcc_domain_stats_v1 s = th_ds(h, d[j]);
		CU_ASSERT_EQUAL(s.admits, dadm[j]);
		CU_ASSERT_EQUAL(s.completions, dcmp[j]);
		CU_ASSERT_EQUAL(s.completed_bytes, dbytes[j]);
	}
	th_free(h);
}

/* Through the mixed fast path (one domain exact, the other in lane
 * credit): fill route `r` to the window of its exact domain, check that
 * `other` (a route of the same device, or NULL) still admits, then settle
 * every permit by release and by completion, on the posting lane and on
 * another, and check that each admission and completion counted once and
 * nothing stayed in flight. */
static void mixed_fill_and_settle(struct th *h, mcc_route *r, mcc_device *d, bool route_exact,
                                  mcc_route *other)
{
	struct mcc_domain_stats_v1 rs0 = th_rs(h, r), ds0 = th_ds(h, d);
	uint64_t w = route_exact ? rs0.window_bytes : ds0.window_bytes;
	CU_ASSERT_FATAL(w >= 64 * KiB && w < 16 * MiB && w % (64 * KiB) == 0);
	static struct mcc_permit_v1 p[256];
	unsigned n = 0;
	while (n < 256) {
		p[n] = (struct mcc_permit_v1)MCC_PERMIT_INIT;
		if (th_acq_simple(h, r, 64 * KiB, &p[n]) != MCC_ADMIT)
			break;
		n++;
	}
	CU_ASSERT_EQUAL(n, w / (64 * KiB)); /* the exact domain's window, exactly */
	CU_ASSERT_EQUAL(route_exact ? th_rs(h, r).inflight_bytes : th_ds(h, d).inflight_bytes, w);
	CU_ASSERT((route_exact ? th_ds(h, d).inflight_bytes : th_rs(h, r).inflight_bytes) >= w);
	if (other) { /* the refusal gave the device's credit back */
		struct mcc_permit_v1 q = MCC_PERMIT_INIT;
		CU_ASSERT_EQUAL(th_acq_simple(h, other, 64 * KiB, &q), MCC_ADMIT);
		CU_ASSERT_EQUAL(th_rel(h, &q, 64 * KiB, MCC_REL_NOT_POSTED), 0);
	}
	mcc_lane *poller = open_lane(h, 3);
	unsigned cmp = 0;
	for (unsigned i = 0; i < n; i++) {
		if (i % 3 == 0) {
			CU_ASSERT_EQUAL(th_rel(h, &p[i], 64 * KiB, MCC_REL_NOT_POSTED), 0);
		} else if (i % 3 == 1) {
			th_wc(h, &p[i], IBV_WC_SUCCESS, 0);
			cmp++;
		} else {
			struct mcc_completion_v1 wc = { sizeof(wc), 0, 0, 1, 0, 0, 0, 0, 0 };
			h->ops->on_completion(poller, &p[i], &wc);
			cmp++;
		}
		CU_ASSERT_EQUAL(p[i].flags & MCC_PERMIT_F_LIVE, 0);
	}
	h->ops->lane_close(h->ctx, poller);
	th_tick(h);
	struct mcc_domain_stats_v1 rs = th_rs(h, r), ds = th_ds(h, d);
	/* the exact domain holds nothing; the other at most the credit the
	 * posting lane still caches (one chunk, 1 MiB at most) */
	CU_ASSERT_EQUAL((route_exact ? rs : ds).inflight_bytes, 0);
	CU_ASSERT((route_exact ? ds : rs).inflight_bytes <= 1 * MiB);
	CU_ASSERT_EQUAL(rs.admits, rs0.admits + n);
	CU_ASSERT_EQUAL(rs.completions, rs0.completions + cmp);
	CU_ASSERT_EQUAL(rs.completed_bytes, rs0.completed_bytes + cmp * 64 * KiB);
	CU_ASSERT_EQUAL((route_exact ? rs : ds).defers, (route_exact ? rs0 : ds0).defers + 1);
	CU_ASSERT_EQUAL(ds.admits, ds0.admits + n + (other ? 1 : 0));
	CU_ASSERT_EQUAL(ds.completions, ds0.completions + cmp);
	CU_ASSERT_EQUAL(rs.double_release + ds.double_release, 0);
}

/* A CONGESTED route (exact admission) on a busy, HEALTHY device (lane
 * credit), the usual congested case. */
static void test_mixed_congested_route_on_credit_device_exact(void)
{
	struct th *h = th_new(&mcc_test_aimd_v1, NULL);
	mcc_device *d = th_dev(h, 0);
	mcc_route *a = th_route(h, d, 1, 1, 0, 1), *b = th_route(h, d, 2, 1, 0, 1);
	for (int e = 0; e < 3; e++) { /* b keeps the device busy, a's receiver pushes back */
		th_push(h, b, 64, 64 * KiB, 1);
		th_pop(h, 64, IBV_WC_SUCCESS);
		th_push(h, a, 1, 64 * KiB, 1);
		th_pop(h, 1, IBV_WC_RNR_RETRY_EXC_ERR);
		th_tick(h);
	}
	CU_ASSERT_EQUAL_FATAL(th_rstate(h, a), MCC_PATH_CONGESTED);
	CU_ASSERT_EQUAL(th_dstate(h, d), MCC_PATH_HEALTHY);
	mixed_fill_and_settle(h, a, d, true, b);
	th_free(h);
}

/* The other way round: a CONGESTED device (its backlog keeps growing) under
 * a busy, HEALTHY route in lane credit. */
static void test_mixed_congested_device_under_credit_route_exact(void)
{
	struct th_fix f = th_fix_cold(NULL);
	for (int e = 0; e < 3; e++) {
		th_sig(f.h, MCC_SIG_BACKLOG, f.d, NULL, 0, 0, 1, 0, (uint64_t)(e + 1) * MiB, 0);
		th_push(f.h, f.r, 64, 64 * KiB, 1);
		th_pop(f.h, 64, IBV_WC_SUCCESS);
		th_tick(f.h);
	}
	CU_ASSERT_EQUAL_FATAL(th_dstate(f.h, f.d), MCC_PATH_CONGESTED);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_HEALTHY);
	mixed_fill_and_settle(f.h, f.r, f.d, false, NULL);
	th_free(f.h);
}

MCC_CU_SUITE(t_init_permit_tests, "policy_permit", NULL, NULL,
             test_permit_reserves_full_slice_in_device_and_route,
             test_permit_failed_route_reservation_rolls_back_device,
             test_permit_release_beyond_live_is_ealready_and_counted,
             test_permit_completion_beyond_live_is_counted_and_harmless,
             test_permit_refused_holds_only_reason,
             test_permit_partial_release_returns_only_given_bytes,
             test_permit_reclaimed_release_settles_posted_bytes,
             test_permit_inflight_never_negative_and_never_leaks,
             test_bound_empty_domain_admits_one_oversized_slice,
             test_bound_oversized_slice_blocks_until_drained,
             test_bound_oversized_slice_admitted_while_probing,
             test_bound_is_max_of_window_and_one_slice,
             test_permit_invalid_arguments,
             test_permit_reusable_after_settlement,
             test_credit_mode_invariant_and_lane_close_flush,
             test_credit_stale_in_idle_lane_does_not_block_exact_admission,
             test_credit_flushed_on_state_change_epoch,
             test_credit_chunk_follows_lanes_open_not_declared_max,
             test_route_rebind_keeps_state_and_settles_on_admitting_device,
             test_route_open_same_id_returns_same_handle,
             test_lane_open_rejects_duplicate_and_out_of_range,
             test_permit_settled_on_another_lane,
             test_feedback_counts_exact_across_lane_caches,
             test_mixed_congested_route_on_credit_device_exact,
             test_mixed_congested_device_under_credit_route_exact)

MCC_CU_MAIN(t_init_permit_tests)
