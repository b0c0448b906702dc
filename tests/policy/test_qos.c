/* SPDX-License-Identifier: MIT */
/*
 * test_qos.c - try_acquire_qos (ABI v1.2, modules/core/qos.c): the window
 * served in class order. A reserve for HIGH while HIGH is active, LOW (and
 * half of it, MEDIUM) admitted only outside it; the whole window for any
 * class while HIGH is idle or the domain is empty; per-class refusal
 * counts; observe reports what enforce would have refused; module keys.
 * Fresh domains start at min_window_bytes (128 KiB): two 64 KiB slices.
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <string.h>

#include "cu_driver.h"
#include "harness.h"

#define SL (64 * KiB)

static int acq(struct th *h, mcc_route *r, uint32_t cls, uint64_t bytes, struct mcc_permit_v1 *p)
{
	struct mcc_task_ref_v1 t = { 5, 6, 0, 0 };
	*p = (struct mcc_permit_v1)MCC_PERMIT_INIT;
	return h->ops->try_acquire_qos(h->lane, r, bytes, 1, &t, cls, p);
}

static void done(struct th *h, struct mcc_permit_v1 *p)
{
	th_wc(h, p, IBV_WC_SUCCESS, 0);
}

static void test_qos_descriptors_carry_the_slot(void)
{
	CU_ASSERT(mcc_test_aimd_v1.struct_size >= MCC_POLICY_V1_2_SIZE);
	CU_ASSERT_PTR_NOT_NULL(mcc_test_aimd_v1.try_acquire_qos);
	CU_ASSERT_PTR_NOT_NULL(mcc_test_observe_v1.try_acquire_qos);
}

/* No HIGH work: LOW gets the whole window, as try_acquire. */
static void test_qos_low_alone_gets_the_whole_window(void)
{
	struct th *h = th_new(&mcc_test_aimd_v1, NULL);
	mcc_device *d = th_dev(h, 0);
	mcc_route *r = th_route(h, d, 1, 1, 0, 1);
	struct mcc_permit_v1 a, b, c;
	CU_ASSERT_EQUAL(th_ds(h, d).window_bytes, 2 * SL);
	CU_ASSERT_EQUAL(acq(h, r, MCC_QOS_LOW, SL, &a), MCC_ADMIT);
	CU_ASSERT_EQUAL(acq(h, r, MCC_QOS_LOW, SL, &b), MCC_ADMIT);
	CU_ASSERT_EQUAL(acq(h, r, MCC_QOS_LOW, SL, &c), MCC_DEFER); /* the window itself */
	CU_ASSERT_EQUAL(c.reason, MCC_REASON_BYTE_WINDOW);
	struct mcc_domain_stats_v1 s = th_ds(h, d);
	CU_ASSERT_EQUAL(s.qos_reserve_bytes, 0);
	CU_ASSERT_EQUAL(s.qos_refused[MCC_QOS_LOW], 1); /* the window's refusal, by class */
	CU_ASSERT_EQUAL(s.qos_refused[MCC_QOS_HIGH], 0);
	CU_ASSERT_EQUAL(s.defers, 1);
	done(h, &a);
	done(h, &b);
	th_free(h);
}

/* HIGH active: LOW stops one slice short of the window; the room that is
 * left goes to HIGH. */
static void test_qos_reserve_holds_room_for_high(void)
{
	struct th *h = th_new(&mcc_test_aimd_v1, NULL);
	mcc_device *d = th_dev(h, 0);
	mcc_route *r = th_route(h, d, 1, 1, 0, 1);
	struct mcc_permit_v1 hi, lo1, lo2, hi2;
	CU_ASSERT_EQUAL(acq(h, r, MCC_QOS_HIGH, SL, &hi), MCC_ADMIT);
	done(h, &hi);
	CU_ASSERT_EQUAL(th_ds(h, d).qos_reserve_bytes, SL);
	CU_ASSERT_EQUAL(th_rs(h, r).qos_reserve_bytes, SL);
	CU_ASSERT_EQUAL(acq(h, r, MCC_QOS_LOW, SL, &lo1), MCC_ADMIT); /* empty domain */
	CU_ASSERT_EQUAL(acq(h, r, MCC_QOS_LOW, SL, &lo2), MCC_DEFER); /* into the reserve */
	CU_ASSERT_EQUAL(lo2.reason, MCC_REASON_BYTE_WINDOW);
	CU_ASSERT(!(lo2.flags & MCC_PERMIT_F_LIVE));
	CU_ASSERT_PTR_NULL(lo2.route);
	CU_ASSERT_EQUAL(th_ds(h, d).qos_refused[MCC_QOS_LOW], 1); /* the device refused */
	CU_ASSERT_EQUAL(th_ds(h, d).inflight_bytes, SL);          /* nothing reserved */
	CU_ASSERT_EQUAL(acq(h, r, MCC_QOS_HIGH, SL, &hi2), MCC_ADMIT);
	CU_ASSERT_EQUAL(th_ds(h, d).inflight_bytes, 2 * SL);
	CU_ASSERT_EQUAL(th_ds(h, d).qos_refused[MCC_QOS_HIGH], 0);
	/* the task's evidence reads CONGESTED (a window deferral) */
	struct mcc_task_detail_v1 td;
	CU_ASSERT_EQUAL(th_query(h, 5, 6, 0, &td), MCC_TASK_CONGESTED);
	CU_ASSERT_EQUAL(td.reason, MCC_REASON_BYTE_WINDOW);
	done(h, &lo1);
	done(h, &hi2);
	th_free(h);
}

/* HIGH is never held back for a lower class: it fills the window. */
static void test_qos_high_takes_the_whole_window(void)
{
	struct th *h = th_new(&mcc_test_aimd_v1, NULL);
	mcc_device *d = th_dev(h, 0);
	mcc_route *r = th_route(h, d, 1, 1, 0, 1);
	struct mcc_permit_v1 a, b, c;
	CU_ASSERT_EQUAL(acq(h, r, MCC_QOS_HIGH, SL, &a), MCC_ADMIT);
	CU_ASSERT_EQUAL(acq(h, r, MCC_QOS_HIGH, SL, &b), MCC_ADMIT);
	CU_ASSERT_EQUAL(acq(h, r, MCC_QOS_HIGH, SL, &c), MCC_DEFER);
	CU_ASSERT_EQUAL(th_ds(h, d).qos_refused[MCC_QOS_HIGH], 1);
	done(h, &a);
	done(h, &b);
	th_free(h);
}

/* The reserve lasts qos_hold_epochs (2) after HIGH's last call, then the
 * window is LOW's again (work-conserving). */
static void test_qos_reserve_ends_when_high_goes_idle(void)
{
	struct th *h = th_new(&mcc_test_aimd_v1, NULL);
	mcc_device *d = th_dev(h, 0);
	mcc_route *r = th_route(h, d, 1, 1, 0, 1);
	struct mcc_permit_v1 hi, a, b;
	CU_ASSERT_EQUAL(acq(h, r, MCC_QOS_HIGH, SL, &hi), MCC_ADMIT);
	done(h, &hi);
	th_ticks(h, 2);
	CU_ASSERT_EQUAL(th_ds(h, d).qos_reserve_bytes, SL); /* still within the hold */
	th_tick(h);
	CU_ASSERT_EQUAL(th_ds(h, d).qos_reserve_bytes, 0);
	CU_ASSERT_EQUAL(th_rs(h, r).qos_reserve_bytes, 0);
	uint64_t w = th_ds(h, d).window_bytes;
	CU_ASSERT_EQUAL(acq(h, r, MCC_QOS_LOW, w / 2, &a), MCC_ADMIT);
	CU_ASSERT_EQUAL(acq(h, r, MCC_QOS_LOW, w / 2, &b), MCC_ADMIT);
	done(h, &a);
	done(h, &b);
	th_free(h);
}

/* MEDIUM leaves half the reserve: a 32 KiB MEDIUM slice fits where LOW's
 * does not. */
static void test_qos_medium_leaves_half_the_reserve(void)
{
	struct th *h = th_new(&mcc_test_aimd_v1, NULL);
	mcc_device *d = th_dev(h, 0);
	mcc_route *r = th_route(h, d, 1, 1, 0, 1);
	struct mcc_permit_v1 hi, a, lo, me, me2;
	CU_ASSERT_EQUAL(acq(h, r, MCC_QOS_HIGH, SL, &hi), MCC_ADMIT);
	done(h, &hi);
	CU_ASSERT_EQUAL(acq(h, r, MCC_QOS_LOW, SL, &a), MCC_ADMIT);
	CU_ASSERT_EQUAL(acq(h, r, MCC_QOS_LOW, 32 * KiB, &lo), MCC_DEFER);
	CU_ASSERT_EQUAL(acq(h, r, MCC_QOS_MEDIUM, 32 * KiB, &me), MCC_ADMIT);
	CU_ASSERT_EQUAL(acq(h, r, MCC_QOS_MEDIUM, 1 * KiB, &me2), MCC_DEFER);
	CU_ASSERT_EQUAL(th_ds(h, d).qos_refused[MCC_QOS_MEDIUM], 1);
	CU_ASSERT_EQUAL(th_ds(h, d).qos_refused[MCC_QOS_LOW], 1);
	done(h, &a);
	done(h, &me);
	th_free(h);
}

/* A class above LOW, or any bad input, is -EINVAL and touches nothing. */
static void test_qos_bad_input(void)
{
	struct th *h = th_new(&mcc_test_aimd_v1, NULL);
	mcc_device *d = th_dev(h, 0);
	mcc_route *r = th_route(h, d, 1, 1, 0, 1);
	struct mcc_permit_v1 p = MCC_PERMIT_INIT, hi;
	p.module64 = 77;
	CU_ASSERT_EQUAL(h->ops->try_acquire_qos(h->lane, r, SL, 1, NULL, MCC_QOS_CLASS_COUNT_, &p),
	                -EINVAL);
	CU_ASSERT_EQUAL(p.module64, 77);
	CU_ASSERT_EQUAL(h->ops->try_acquire_qos(h->lane, NULL, SL, 1, NULL, MCC_QOS_LOW, &p), -EINVAL);
	CU_ASSERT_EQUAL(h->ops->try_acquire_qos(NULL, r, SL, 1, NULL, MCC_QOS_LOW, &p), -EINVAL);
	CU_ASSERT_EQUAL(h->ops->try_acquire_qos(h->lane, r, SL, 1, NULL, MCC_QOS_LOW, NULL), -EINVAL);
	CU_ASSERT_EQUAL(h->ops->try_acquire_qos(h->lane, r, 0, 1, NULL, MCC_QOS_LOW, &p), -EINVAL);
	/* over the reserve, bad input is still -EINVAL, not a refusal */
	CU_ASSERT_EQUAL(acq(h, r, MCC_QOS_HIGH, SL, &hi), MCC_ADMIT);
	CU_ASSERT_EQUAL(h->ops->try_acquire_qos(h->lane, r, 2 * SL, 1, NULL, MCC_QOS_LOW, &hi),
	                -EINVAL); /* a live permit */
	CU_ASSERT_EQUAL(th_ds(h, d).defers, 0);
	done(h, &hi);
	CU_ASSERT_EQUAL(th_ds(h, d).inflight_bytes, 0);
	th_free(h);
}

/* Observe admits, flags what enforce would have refused, counts it by
 * class. */
static void test_qos_observe_reports_per_class(void)
{
	struct th *h = th_new(&mcc_test_observe_v1, NULL);
	mcc_device *d = th_dev(h, 0);
	mcc_route *r = th_route(h, d, 1, 1, 0, 1);
	struct mcc_permit_v1 hi, a, b;
	CU_ASSERT_EQUAL(acq(h, r, MCC_QOS_HIGH, SL, &hi), MCC_ADMIT);
	done(h, &hi);
	CU_ASSERT_EQUAL(acq(h, r, MCC_QOS_LOW, SL, &a), MCC_ADMIT);
	CU_ASSERT(!(a.flags & MCC_PERMIT_F_OBSERVED));
	CU_ASSERT_EQUAL(acq(h, r, MCC_QOS_LOW, SL, &b), MCC_ADMIT);
	CU_ASSERT(b.flags & MCC_PERMIT_F_OBSERVED);
	CU_ASSERT(b.flags & MCC_PERMIT_F_LIVE);
	struct mcc_domain_stats_v1 s = th_ds(h, d);
	CU_ASSERT_EQUAL(s.qos_refused[MCC_QOS_LOW], 1);
	CU_ASSERT_EQUAL(s.would_defer, 1);
	CU_ASSERT_EQUAL(s.defers, 0);
	CU_ASSERT_EQUAL(s.inflight_bytes, 2 * SL);
	done(h, &a);
	done(h, &b);
	CU_ASSERT_EQUAL(th_ds(h, d).inflight_bytes, 0);
	th_free(h);
}

/* [module.aimd] qos_reserve_slices / qos_reserve_percent / qos_hold_epochs */
static const char *g_keys[3][2];

static const char *keys_get(const struct mcc_config_v1 *cfg, const char *key)
{
	(void)cfg;
	for (int i = 0; i < 3; i++)
		if (g_keys[i][0] && strcmp(g_keys[i][0], key) == 0)
			return g_keys[i][1];
	return NULL;
}

static void test_qos_module_keys(void)
{
	struct mcc_config_v1 c;
	th_cfg_defaults(&c);
	c.module_get = keys_get;
	g_keys[0][0] = "qos_reserve_slices";
	g_keys[0][1] = "4";
	g_keys[1][0] = "qos_reserve_percent";
	g_keys[1][1] = "25";
	g_keys[2][0] = "qos_hold_epochs";
	g_keys[2][1] = "0";
	struct th *h = th_new(&mcc_test_aimd_v1, &c);
	mcc_device *d = th_dev(h, 0);
	mcc_route *r = th_route(h, d, 1, 1, 0, 1);
	struct mcc_permit_v1 hi;
	CU_ASSERT_EQUAL(acq(h, r, MCC_QOS_HIGH, 16 * KiB, &hi), MCC_ADMIT);
	done(h, &hi);
	/* 4 x 16 KiB = 64 KiB, capped at 25 % of 128 KiB */
	CU_ASSERT_EQUAL(th_ds(h, d).qos_reserve_bytes, 32 * KiB);
	th_tick(h); /* hold 0: only the epoch of the call */
	CU_ASSERT_EQUAL(th_ds(h, d).qos_reserve_bytes, 0);
	th_free(h);
	/* a bad value keeps the default */
	g_keys[0][1] = "x";
	g_keys[1][1] = "101";
	g_keys[2][1] = "-1";
	h = th_new(&mcc_test_aimd_v1, &c);
	d = th_dev(h, 0);
	r = th_route(h, d, 1, 1, 0, 1);
	CU_ASSERT_EQUAL(acq(h, r, MCC_QOS_HIGH, SL, &hi), MCC_ADMIT);
	done(h, &hi);
	th_ticks(h, 2);
	CU_ASSERT_EQUAL(th_ds(h, d).qos_reserve_bytes, SL);
	th_free(h);
	memset(g_keys, 0, sizeof(g_keys));
}

/* One class only: the same decisions and counters as try_acquire, class by
 * class (LOW alone never sees a reserve, HIGH alone only marks). */
static void test_qos_one_class_is_try_acquire(void)
{
	for (uint32_t cls = 0; cls < MCC_QOS_CLASS_COUNT_; cls++) {
		struct th *a = th_new(&mcc_test_aimd_v1, NULL), *b = th_new(&mcc_test_aimd_v1, NULL);
		mcc_device *da = th_dev(a, 0), *db = th_dev(b, 0);
		mcc_route *ra = th_route(a, da, 1, 1, 0, 1), *rb = th_route(b, db, 1, 1, 0, 1);
		for (int e = 0; e < 40; e++) {
			struct mcc_permit_v1 pa[6], pb[6];
			int na = 0, nb = 0;
			for (int k = 0; k < 6; k++) {
				uint64_t sz = (uint64_t)(k % 3 + 1) * 16 * KiB;
				pa[na] = (struct mcc_permit_v1)MCC_PERMIT_INIT;
				if (th_acq(a, ra, sz, 1, 5, 6, 0, &pa[na]) == MCC_ADMIT)
					na++;
				if (acq(b, rb, cls, sz, &pb[nb]) == MCC_ADMIT)
					nb++;
			}
			CU_ASSERT_EQUAL(na, nb);
			for (int k = 0; k < na; k++)
				done(a, &pa[k]);
			for (int k = 0; k < nb; k++)
				done(b, &pb[k]);
			th_tick(a);
			th_tick(b);
		}
		struct mcc_domain_stats_v1 sa = th_ds(a, da), sb = th_ds(b, db);
		CU_ASSERT_EQUAL(sa.window_bytes, sb.window_bytes);
		CU_ASSERT_EQUAL(sa.defers, sb.defers);
		CU_ASSERT_EQUAL(sa.admits, sb.admits);
		CU_ASSERT_EQUAL(sb.qos_refused[cls], sb.defers);
		th_free(a);
		th_free(b);
	}
}

MCC_CU_SUITE(t_init_qos_tests, "policy_qos", NULL, NULL,
             test_qos_descriptors_carry_the_slot,
             test_qos_low_alone_gets_the_whole_window,
             test_qos_reserve_holds_room_for_high,
             test_qos_high_takes_the_whole_window,
             test_qos_reserve_ends_when_high_goes_idle,
             test_qos_medium_leaves_half_the_reserve,
             test_qos_bad_input,
             test_qos_observe_reports_per_class,
             test_qos_module_keys,
             test_qos_one_class_is_try_acquire)

MCC_CU_MAIN(t_init_qos_tests)
