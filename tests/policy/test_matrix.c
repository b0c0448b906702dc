/* SPDX-License-Identifier: MIT */
/*
 * test_matrix.c - one behavioural test per row of the RFC's three handling
 * matrices (Completion/WC, Async Event, Non-WC and Control-Plane), through
 * the aimd module: controller state, counters, scope, and task evidence.
 */
#include <errno.h>
#include <infiniband/verbs.h>

#include "cu_driver.h"
#include "harness.h"

struct fix {
	struct th *h;
	mcc_device *d, *d2;
	mcc_route *r, *r2, *other; /* r, r2 on d (port 1); other on d2 to the same peer */
};

static struct fix fx(const struct mcc_config_v1 *cfg)
{
	static const struct th_rt rt[] = { { 0, 1, 1, 5 }, { 0, 2, 1, 6 }, { 1, 1, 1, 5 } };
	struct th *h = th_world(cfg, 2, rt, 3, true);
	return (struct fix){ h, h->devs[0], h->devs[1], h->routes[0], h->routes[1], h->routes[2] };
}

/* One WC with `status` for task (b, t) on route r. */
static void wc_task(struct th *h, mcc_route *r, int32_t status, uint32_t vendor_err, uint64_t b,
                    uint64_t t, uint32_t gen)
{
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq(h, r, 4096, gen, b, t, 0, &p), MCC_ADMIT);
	th_wc(h, &p, status, vendor_err);
}

static void assert_untouched(struct th *h, mcc_route *r)
{
	struct mcc_domain_stats_v1 s = th_rs(h, r);
	CU_ASSERT_EQUAL(s.state, MCC_PATH_HEALTHY);
	CU_ASSERT_EQUAL(s.window_bytes, 16 * MiB);
	CU_ASSERT_EQUAL(s.hard_errors, 0);
	CU_ASSERT_EQUAL(s.quarantines, 0);
}

static void assert_dev_untouched(struct th *h, mcc_device *d)
{
	struct mcc_domain_stats_v1 s = th_ds(h, d);
	CU_ASSERT_EQUAL(s.state, MCC_PATH_HEALTHY);
	CU_ASSERT_EQUAL(s.window_bytes, 16 * MiB);
	CU_ASSERT_EQUAL(s.quarantines, 0);
}

/* ----------------------------------------------------------- WC matrix */

static void test_wc_success_records_bytes_and_resolves_task(void)
{
	struct mcc_config_v1 c = th_cfg();
	c.min_window_bytes = c.max_window_bytes = 64 * KiB;
	struct fix f = fx(&c);
	struct mcc_permit_v1 filler = MCC_PERMIT_INIT, p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 64 * KiB, 1, 9, 9, 0, &filler), MCC_ADMIT);
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 64 * KiB, 1, 1, 1, 0, &p), MCC_DEFER);
	CU_ASSERT_EQUAL(th_query(f.h, 1, 1, 0, NULL), MCC_TASK_CONGESTED);
	th_wc(f.h, &filler, IBV_WC_SUCCESS, 0);
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 64 * KiB, 1, 1, 1, 0, &p), MCC_ADMIT);
	th_wc(f.h, &p, IBV_WC_SUCCESS, 0);
	struct mcc_task_detail_v1 d;
	CU_ASSERT_EQUAL(th_query(f.h, 1, 1, 0, &d), MCC_TASK_NORMAL);
	CU_ASSERT_EQUAL(d.resolved, 1);
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_BYTE_WINDOW);
	struct mcc_domain_stats_v1 s = th_rs(f.h, f.r);
	CU_ASSERT_EQUAL(s.completed_bytes, 128 * KiB);
	CU_ASSERT_EQUAL(s.completions, 2);
	th_free(f.h);
}

static void test_wc_success_with_rising_drain_exposes_congested_shrinks_only_window(void)
{
	struct fix f = fx(NULL);
	th_press(f.h, f.r, 2);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_CONGESTED);
	wc_task(f.h, f.r, IBV_WC_SUCCESS, 0, 2, 1, 1);
	struct mcc_task_detail_v1 d;
	CU_ASSERT_EQUAL(th_query(f.h, 2, 1, 0, &d), MCC_TASK_CONGESTED);
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_CONGESTION_FEEDBACK);
	CU_ASSERT_EQUAL(d.path_state, MCC_PATH_CONGESTED);
	struct mcc_domain_stats_v1 s = th_rs(f.h, f.r);
	CU_ASSERT_EQUAL(s.window_bytes, 8 * MiB);
	CU_ASSERT_EQUAL(s.quarantines, 0);
	CU_ASSERT_EQUAL(s.avoids, 0);
	CU_ASSERT_EQUAL(s.hard_errors, 0);
	th_free(f.h);
}

static void test_wc_rnr_pressures_only_the_receiving_route(void)
{
	struct fix f = fx(NULL);
	for (int e = 0; e < 2; e++) {
		wc_task(f.h, f.r, IBV_WC_RNR_RETRY_EXC_ERR, 0, 3, 1, 1);
		wc_task(f.h, f.r2, IBV_WC_SUCCESS, 0, 3, 2, 1);
		th_tick(f.h);
	}
	struct mcc_domain_stats_v1 s = th_rs(f.h, f.r);
	CU_ASSERT_EQUAL(s.state, MCC_PATH_CONGESTED); /* backs off, not SUSPECT */
	CU_ASSERT_EQUAL(s.window_bytes, 8 * MiB);
	CU_ASSERT_EQUAL(s.hard_errors, 0);
	assert_untouched(f.h, f.r2); /* other receivers sharing the source NIC */
	assert_dev_untouched(f.h, f.d);
	struct mcc_task_detail_v1 d;
	CU_ASSERT_EQUAL(th_query(f.h, 3, 1, 0, &d), MCC_TASK_CONGESTED);
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_RECEIVER_PRESSURE);
	CU_ASSERT_EQUAL(d.wc_status, IBV_WC_RNR_RETRY_EXC_ERR);
	th_free(f.h);
}

static void test_wc_retry_exc_resp_timeout_suspect_then_threshold_quarantine(void)
{
	struct fix f = fx(NULL);
	wc_task(f.h, f.r, IBV_WC_RETRY_EXC_ERR, 0, 4, 1, 1);
	th_tick(f.h);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_SUSPECT);
	struct mcc_task_detail_v1 d;
	CU_ASSERT_EQUAL(th_query(f.h, 4, 1, 0, &d), MCC_TASK_CONGESTED);
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_ROUTE_TIMEOUT);
	CU_ASSERT_EQUAL(d.scope, MCC_SCOPE_QP);
	wc_task(f.h, f.r, IBV_WC_RESP_TIMEOUT_ERR, 0, 4, 2, 1);
	th_tick(f.h);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_SUSPECT);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).hard_errors, 2);
	wc_task(f.h, f.r, IBV_WC_RETRY_EXC_ERR, 0, 4, 3, 1);
	th_tick(f.h);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_QUARANTINED);
	assert_untouched(f.h, f.r2);
	assert_dev_untouched(f.h, f.d);
	th_free(f.h);
}

static void check_local(uint32_t scope, const int32_t *st, unsigned n)
{
	struct fix f = fx(NULL);
	for (unsigned i = 0; i < n; i++)
		for (int k = 0; k < 5; k++)
			wc_task(f.h, f.r, st[i], 7, 5, i + 1, 1);
	th_ticks(f.h, 3);
	assert_untouched(f.h, f.r);
	assert_dev_untouched(f.h, f.d);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).errors, 5 * n);
	for (unsigned i = 0; i < n; i++) {
		struct mcc_task_detail_v1 d;
		CU_ASSERT_EQUAL(th_query(f.h, 5, i + 1, MCC_TASKQ_SEEN_SUCCESS, &d), MCC_TASK_UNKNOWN);
		CU_ASSERT_EQUAL(d.reason, MCC_REASON_LOCAL_CONFIGURATION);
		CU_ASSERT_EQUAL(d.scope, scope);
		CU_ASSERT_EQUAL(d.wc_status, st[i]);
	}
	th_free(f.h);
}

static void test_wc_local_operation_errors_touch_no_window_or_failure_count(void)
{
	int32_t st[] = { IBV_WC_LOC_LEN_ERR, IBV_WC_LOC_PROT_ERR, IBV_WC_MW_BIND_ERR,
		         IBV_WC_LOC_ACCESS_ERR };
	check_local(MCC_SCOPE_OPERATION, st, 4);
}

static void test_wc_local_qp_errors_are_not_congestion_or_remote_failure(void)
{
	int32_t st[] = { IBV_WC_LOC_QP_OP_ERR, IBV_WC_LOC_EEC_OP_ERR, IBV_WC_LOC_RDD_VIOL_ERR,
		         IBV_WC_INV_EECN_ERR, IBV_WC_INV_EEC_STATE_ERR };
	check_local(MCC_SCOPE_QP, st, 5);
}

static void test_wc_remote_metadata_no_window_change_escalates_only_after_refresh(void)
{
	struct fix f = fx(NULL);
	int32_t st[] = { IBV_WC_BAD_RESP_ERR,   IBV_WC_REM_INV_REQ_ERR,    IBV_WC_REM_ACCESS_ERR,
		         IBV_WC_REM_OP_ERR, IBV_WC_REM_INV_RD_REQ_ERR, IBV_WC_REM_ABORT_ERR };
	for (unsigned i = 0; i < 6; i++)
		wc_task(f.h, f.r, st[i], 0, 6, i + 1, 1);
	th_tick(f.h);
	assert_untouched(f.h, f.r); /* one event does not replace the rail */
	struct mcc_task_detail_v1 d;
	CU_ASSERT_EQUAL(th_query(f.h, 6, 1, 0, &d), MCC_TASK_UNKNOWN);
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_REMOTE_METADATA);
	/* a timeout on the same, unrefreshed generation is not escalated */
	wc_task(f.h, f.r, IBV_WC_RETRY_EXC_ERR, 0, 6, 10, 1);
	th_tick(f.h);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_HEALTHY);
	CU_ASSERT_EQUAL(th_query(f.h, 6, 10, 0, NULL), MCC_TASK_UNKNOWN);
	/* the refreshed generation still times out: now it counts */
	th_sig(f.h, MCC_SIG_ENDPOINT_REBUILT, NULL, f.r, 0, 0, 2, 0, 0, 0);
	wc_task(f.h, f.r, IBV_WC_RETRY_EXC_ERR, 0, 6, 11, 2);
	th_tick(f.h);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_SUSPECT);
	th_free(f.h);
}

static void test_wc_flush_inherits_root_cause_and_counts_once(void)
{
	struct fix f = fx(NULL);
	wc_task(f.h, f.r, IBV_WC_RETRY_EXC_ERR, 0, 7, 1, 1);
	for (int i = 0; i < 20; i++) /* the QP went to ERR: its WRs flush */
		wc_task(f.h, f.r, IBV_WC_WR_FLUSH_ERR, 0, 7, 1, 1);
	th_tick(f.h);
	struct mcc_domain_stats_v1 s = th_rs(f.h, f.r);
	CU_ASSERT_EQUAL(s.hard_errors, 1);
	CU_ASSERT_EQUAL(s.state, MCC_PATH_SUSPECT);
	CU_ASSERT_EQUAL(s.errors, 21);
	struct mcc_task_detail_v1 d;
	CU_ASSERT_EQUAL(th_query(f.h, 7, 1, 0, &d), MCC_TASK_CONGESTED);
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_ROUTE_TIMEOUT); /* the root cause */
	/* a flush alone never fails a path: teardown cleanup, UNKNOWN */
	for (int i = 0; i < 20; i++)
		wc_task(f.h, f.r2, IBV_WC_WR_FLUSH_ERR, 0, 7, 2, 1);
	th_ticks(f.h, 2);
	assert_untouched(f.h, f.r2);
	CU_ASSERT_EQUAL(th_query(f.h, 7, 2, 0, &d), MCC_TASK_UNKNOWN);
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_DERIVED_FLUSH);
	th_free(f.h);
}

static void test_wc_fatal_counts_route_hard_error_and_keeps_vendor_err(void)
{
	struct fix f = fx(NULL);
	wc_task(f.h, f.r, IBV_WC_GENERAL_ERR, 0x81, 8, 1, 1);
	th_tick(f.h);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_SUSPECT);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).hard_errors, 1);
	struct mcc_task_detail_v1 d;
	CU_ASSERT_EQUAL(th_query(f.h, 8, 1, 0, &d), MCC_TASK_UNKNOWN);
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_FATAL);
	CU_ASSERT_EQUAL(d.wc_status, IBV_WC_GENERAL_ERR);
	CU_ASSERT_EQUAL(d.vendor_err, 0x81);
	CU_ASSERT(d.observed & MCC_OBS_WC);
	wc_task(f.h, f.r, IBV_WC_FATAL_ERR, 0x99, 8, 2, 1);
	wc_task(f.h, f.r, IBV_WC_TM_ERR, 0, 8, 3, 1);
	th_tick(f.h);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_QUARANTINED);
	assert_dev_untouched(f.h, f.d); /* no direct expansion */
	assert_untouched(f.h, f.r2);
	assert_untouched(f.h, f.other);
	wc_task(f.h, f.r2, IBV_WC_TM_RNDV_INCOMPLETE, 0, 8, 4, 1);
	th_tick(f.h);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r2), MCC_PATH_SUSPECT);
	th_free(f.h);
}

static void test_wc_unknown_status_fails_closed_at_route_scope(void)
{
	struct fix f = fx(NULL);
	wc_task(f.h, f.r, 200, 0xdead, 9, 1, 1);
	th_tick(f.h);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_SUSPECT);
	struct mcc_task_detail_v1 d;
	th_query(f.h, 9, 1, 0, &d);
	CU_ASSERT_EQUAL(d.wc_status, 200); /* raw status kept */
	CU_ASSERT_EQUAL(d.vendor_err, 0xdead);
	CU_ASSERT_EQUAL(d.scope, MCC_SCOPE_QP);
	assert_dev_untouched(f.h, f.d); /* needs an async event to widen */
	assert_untouched(f.h, f.r2);
	th_free(f.h);
}

/* -------------------------------------------------------- async matrix */

static void test_async_qp_errors_count_one_route_hard_error_each(void)
{
	struct fix f = fx(NULL);
	th_async(f.h, IBV_EVENT_QP_FATAL, f.d, f.r, 1, 5, 1);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_SUSPECT);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).hard_errors, 1);
	assert_untouched(f.h, f.r2); /* other QPs on the same GID/port */
	th_async(f.h, IBV_EVENT_QP_REQ_ERR, f.d, f.r, 1, 5, 1);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).hard_errors, 2);
	th_async(f.h, IBV_EVENT_QP_ACCESS_ERR, f.d, f.r, 1, 5, 1);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_QUARANTINED);
	assert_untouched(f.h, f.r2);
	assert_dev_untouched(f.h, f.d);
	th_free(f.h);
}

static void test_async_wq_fatal_srq_err_report_at_qp_scope(void)
{
	struct fix f = fx(NULL);
	th_async(f.h, IBV_EVENT_WQ_FATAL, f.d, f.r, 1, 5, 1);
	th_async(f.h, IBV_EVENT_SRQ_ERR, f.d, f.r, 1, 5, 1);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_SUSPECT);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).hard_errors, 2);
	assert_untouched(f.h, f.r2);
	assert_dev_untouched(f.h, f.d);
	/* without an owning route there is nothing at QP scope to charge */
	th_async(f.h, IBV_EVENT_SRQ_ERR, f.d, NULL, 1, 5, 1);
	assert_untouched(f.h, f.r2);
	assert_dev_untouched(f.h, f.d);
	th_free(f.h);
}

static void test_async_cq_err_isolates_routes_on_that_cq_only(void)
{
	struct fix f = fx(NULL);
	mcc_route *same_cq = th_route(f.h, f.d, 3, 2, 5, 1);
	th_async(f.h, IBV_EVENT_CQ_ERR, f.d, NULL, 0, 5, 0);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_QUARANTINED);
	CU_ASSERT_EQUAL(th_rstate(f.h, same_cq), MCC_PATH_QUARANTINED);
	assert_untouched(f.h, f.r2);    /* cq 6 */
	assert_untouched(f.h, f.other); /* cq 5, but another device */
	assert_dev_untouched(f.h, f.d);
	th_free(f.h);
}

static void test_async_path_mig_err_route_hard_error_suspect_below_threshold(void)
{
	struct fix f = fx(NULL);
	th_async(f.h, IBV_EVENT_PATH_MIG_ERR, f.d, f.r, 1, 5, 1);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_SUSPECT);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).quarantines, 0);
	assert_untouched(f.h, f.r2);
	assert_dev_untouched(f.h, f.d);
	th_free(f.h);
}

static void test_async_port_err_isolates_routes_through_that_port(void)
{
	struct fix f = fx(NULL);
	mcc_route *port2 = th_route(f.h, f.d, 3, 2, 7, 1);
	th_warm(f.h, f.d, port2);
	th_async(f.h, IBV_EVENT_PORT_ERR, f.d, NULL, 1, 0, 0);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_QUARANTINED);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r2), MCC_PATH_QUARANTINED);
	assert_untouched(f.h, port2);   /* other ports */
	assert_untouched(f.h, f.other); /* other devices */
	assert_dev_untouched(f.h, f.d);
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq_simple(f.h, port2, 4096, &p), MCC_ADMIT);
	th_wc(f.h, &p, IBV_WC_SUCCESS, 0);
	th_free(f.h);
}

static void test_async_device_fatal_isolates_local_device_not_peer(void)
{
	struct fix f = fx(NULL);
	th_async(f.h, IBV_EVENT_DEVICE_FATAL, f.d, NULL, 0, 0, 0);
	CU_ASSERT_EQUAL(th_dstate(f.h, f.d), MCC_PATH_QUARANTINED);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_QUARANTINED);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r2), MCC_PATH_QUARANTINED);
	/* the same peer through another local device stays usable */
	assert_untouched(f.h, f.other);
	assert_dev_untouched(f.h, f.d2);
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 4096, 1, 10, 1, 0, &p), MCC_AVOID);
	CU_ASSERT_EQUAL(th_acq(f.h, f.other, 4096, 1, 10, 2, 0, &p), MCC_ADMIT);
	th_wc(f.h, &p, IBV_WC_SUCCESS, 0);
	struct mcc_task_detail_v1 d;
	CU_ASSERT_EQUAL(th_query(f.h, 10, 1, 0, &d), MCC_TASK_LONG_UNAVAILABLE);
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_PATH_QUARANTINED);
	CU_ASSERT_EQUAL(d.scope, MCC_SCOPE_DEVICE);
	th_free(f.h);
}

static void test_async_non_failure_events_require_new_generation_probe(void)
{
	struct fix f = fx(NULL);
	int32_t hints[] = { IBV_EVENT_PORT_ACTIVE, IBV_EVENT_GID_CHANGE, IBV_EVENT_LID_CHANGE,
		            IBV_EVENT_PKEY_CHANGE, IBV_EVENT_PATH_MIG,   IBV_EVENT_CLIENT_REREGISTER,
		            IBV_EVENT_SM_CHANGE,   IBV_EVENT_COMM_EST,   IBV_EVENT_SQ_DRAINED,
		            IBV_EVENT_SRQ_LIMIT_REACHED, IBV_EVENT_QP_LAST_WQE_REACHED };
	for (unsigned i = 0; i < sizeof(hints) / sizeof(hints[0]); i++)
		th_async(f.h, hints[i], f.d, f.r2, 1, 6, 1);
	assert_untouched(f.h, f.r2); /* no direct failure */
	th_async(f.h, IBV_EVENT_PORT_ERR, f.d, NULL, 1, 0, 0);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_QUARANTINED);
	th_async(f.h, IBV_EVENT_PORT_ACTIVE, f.d, NULL, 1, 0, 0);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_QUARANTINED); /* not recovered */
	th_cooldown(f.h, f.r);
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 4096, 1, 0, 0, 0, &p), MCC_AVOID); /* old generation */
	th_probe_pass(f.h, f.r, 2);
	/* issue 11: a probe recovery is HEALTHY (at the min window), not CONGESTED */
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_HEALTHY);
	th_free(f.h);
}

static void test_async_unknown_event_changes_nothing(void)
{
	struct fix f = fx(NULL);
	th_async(f.h, 9999, f.d, f.r, 1, 5, 1);
	th_async(f.h, -3, f.d, NULL, 1, 5, 1);
	assert_untouched(f.h, f.r);
	assert_dev_untouched(f.h, f.d);
	th_free(f.h);
}

/* ------------------------------------------------------ non-WC matrix */

static void test_nonwc_defer_keeps_slice_queued_records_byte_window(void)
{
	struct mcc_config_v1 c = th_cfg();
	c.min_window_bytes = c.max_window_bytes = 128 * KiB;
	struct fix f = fx(&c);
	CU_ASSERT_EQUAL(th_push(f.h, f.r, 2, 64 * KiB, 1), 2);
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 64 * KiB, 1, 11, 1, 0, &p), MCC_DEFER);
	CU_ASSERT(!(p.flags & MCC_PERMIT_F_LIVE)); /* nothing reserved */
	CU_ASSERT_EQUAL(p.reason, MCC_REASON_BYTE_WINDOW);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).inflight_bytes, 128 * KiB);
	struct mcc_task_detail_v1 d;
	CU_ASSERT_EQUAL(th_query(f.h, 11, 1, 0, &d), MCC_TASK_CONGESTED);
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_BYTE_WINDOW);
	CU_ASSERT_EQUAL(d.window_bytes, 128 * KiB);
	CU_ASSERT_EQUAL(d.inflight_bytes, 128 * KiB);
	CU_ASSERT(d.observed & MCC_OBS_WINDOW);
	CU_ASSERT(d.observed & MCC_OBS_INFLIGHT);
	th_free(f.h);
}

static void test_nonwc_avoid_on_quarantined_path_is_not_a_new_failure(void)
{
	struct fix f = fx(NULL);
	th_quarantine_route(f.h, f.r, 1);
	struct mcc_domain_stats_v1 before = th_rs(f.h, f.r);
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	for (int i = 0; i < 10; i++) {
		CU_ASSERT_EQUAL(th_acq(f.h, f.r, 4096, 1, 12, 1, 0, &p), MCC_AVOID);
		CU_ASSERT(!(p.flags & MCC_PERMIT_F_LIVE));
	}
	th_tick(f.h);
	struct mcc_domain_stats_v1 s = th_rs(f.h, f.r);
	CU_ASSERT_EQUAL(s.quarantines, 1);
	CU_ASSERT_EQUAL(s.errors, before.errors);
	CU_ASSERT_EQUAL(s.avoids, 10);
	CU_ASSERT_EQUAL(s.inflight_bytes, 0);
	struct mcc_task_detail_v1 d;
	CU_ASSERT_EQUAL(th_query(f.h, 12, 1, 0, &d), MCC_TASK_LONG_UNAVAILABLE);
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_PATH_QUARANTINED);
	CU_ASSERT_EQUAL(d.path_state, MCC_PATH_QUARANTINED);
	CU_ASSERT(d.observed & MCC_OBS_COOLDOWN);
	CU_ASSERT(d.cooldown_ms > 0 && d.cooldown_ms <= 1000);
	th_free(f.h);
}

static void test_nonwc_generation_change_after_acquire_rolls_back_unknown(void)
{
	struct fix f = fx(NULL);
	struct mcc_permit_v1 p = MCC_PERMIT_INIT, old = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 8192, 1, 13, 1, 0, &p), MCC_ADMIT);
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 8192, 1, 13, 2, 0, &old), MCC_ADMIT);
	th_sig(f.h, MCC_SIG_ENDPOINT_REBUILT, NULL, f.r, 0, 0, 2, 0, 0, 0);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).generation, 2);
	CU_ASSERT_EQUAL(th_rel(f.h, &p, 8192, MCC_REL_GENERATION_CHANGED), 0);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).inflight_bytes, 8192);
	CU_ASSERT_EQUAL(th_ds(f.h, f.d).inflight_bytes, 8192);
	struct mcc_task_detail_v1 d;
	CU_ASSERT_EQUAL(th_query(f.h, 13, 1, 0, &d), MCC_TASK_UNKNOWN);
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_GENERATION_CHANGED);
	/* the old attempt's late WC cannot affect the new generation */
	th_wc(f.h, &old, IBV_WC_RETRY_EXC_ERR, 0);
	th_tick(f.h);
	assert_untouched(f.h, f.r);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).stale_feedback, 1);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).inflight_bytes, 0);
	th_free(f.h);
}

static void test_nonwc_sync_post_rejection_releases_without_fabricated_wc(void)
{
	struct fix f = fx(NULL);
	uint64_t compl0 = th_rs(f.h, f.r).completions; /* the warm-up's */
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 8192, 1, 14, 1, 0, &p), MCC_ADMIT);
	CU_ASSERT_EQUAL(th_rel(f.h, &p, 8192, MCC_REL_POST_REJECTED), 0);
	struct mcc_signal_v1 s = { sizeof(s), MCC_SIG_POST_REJECTED, f.d, f.r, { 14, 1, 0, 0 }, 1,
		                   ENOMEM, 0, 0, 0, 0, 0 };
	f.h->ops->on_signal(f.h->ctx, &s);
	th_tick(f.h);
	struct mcc_domain_stats_v1 st = th_rs(f.h, f.r);
	CU_ASSERT_EQUAL(st.inflight_bytes, 0);
	CU_ASSERT_EQUAL(st.completions, compl0); /* no fabricated WC */
	CU_ASSERT_EQUAL(st.errors, 0);
	assert_untouched(f.h, f.r);
	CU_ASSERT_EQUAL(th_query(f.h, 14, 1, 0, NULL), MCC_TASK_UNKNOWN);
	th_free(f.h);
}

static void test_nonwc_soft_deadline_with_poller_progress_is_route_timeout(void)
{
	struct fix f = fx(NULL);
	th_progress(f.h, f.d);
	th_sig(f.h, MCC_SIG_SOFT_DEADLINE, f.d, f.r, 15, 1, 1, 0, 0, 0);
	th_tick(f.h);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_SUSPECT);
	struct mcc_task_detail_v1 d;
	CU_ASSERT_EQUAL(th_query(f.h, 15, 1, 0, &d), MCC_TASK_CONGESTED); /* below threshold */
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_ROUTE_TIMEOUT);
	for (int i = 0; i < 2; i++) {
		th_sig(f.h, MCC_SIG_SOFT_DEADLINE, f.d, f.r, 15, 2, 1, 0, 0, 0);
		th_progress(f.h, f.d); /* any time in the same epoch */
		th_tick(f.h);
	}
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_QUARANTINED);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).suppressed_deadlines, 0);
	assert_untouched(f.h, f.r2);
	th_free(f.h);
}

static void test_nonwc_soft_deadline_with_poller_stall_is_diagnostic_only(void)
{
	struct fix f = fx(NULL);
	th_progress(f.h, f.d);
	th_tick(f.h); /* progress in an earlier epoch does not count */
	th_sig(f.h, MCC_SIG_SOFT_DEADLINE, f.d, f.r, 16, 1, 1, 0, 0, 0);
	th_tick(f.h);
	assert_untouched(f.h, f.r);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).suppressed_deadlines, 1);
	CU_ASSERT_EQUAL(th_ds(f.h, f.d).suppressed_deadlines, 1);
	struct mcc_task_detail_v1 d;
	CU_ASSERT_EQUAL(th_query(f.h, 16, 1, 0, &d), MCC_TASK_UNKNOWN);
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_POLLER_STALL);
	th_free(f.h);
}

static void test_nonwc_segment_desc_rpc_failure_keeps_window(void)
{
	struct fix f = fx(NULL);
	for (int i = 0; i < 5; i++)
		th_sig(f.h, MCC_SIG_SEGMENT_RPC_FAILED, f.d, f.r, 17, 1, 1, 0, 0, 0);
	th_ticks(f.h, 2);
	assert_untouched(f.h, f.r);
	assert_dev_untouched(f.h, f.d);
	struct mcc_task_detail_v1 d;
	CU_ASSERT_EQUAL(th_query(f.h, 17, 1, 0, &d), MCC_TASK_UNKNOWN);
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_CONTROL_PLANE);
	th_free(f.h);
}

static void test_nonwc_mutating_rpc_failure_no_replay_no_change(void)
{
	struct fix f = fx(NULL);
	uint64_t admits0 = th_rs(f.h, f.r).admits; /* the warm-up's */
	th_sig(f.h, MCC_SIG_CONTROL_RPC_FAILED, f.d, NULL, 18, 1, 0, 0, 0, 0);
	th_ticks(f.h, 2);
	assert_untouched(f.h, f.r);
	assert_dev_untouched(f.h, f.d);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).admits, admits0); /* nothing replayed */
	struct mcc_task_detail_v1 d;
	CU_ASSERT_EQUAL(th_query(f.h, 18, 1, 0, &d), MCC_TASK_UNKNOWN);
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_CONTROL_PLANE);
	th_free(f.h);
}

static void test_nonwc_stale_metadata_escalates_only_if_refreshed_generation_times_out(void)
{
	struct fix f = fx(NULL);
	th_sig(f.h, MCC_SIG_METADATA_STALE, f.d, f.r, 19, 1, 1, 0, 0, 0);
	struct mcc_task_detail_v1 d;
	CU_ASSERT_EQUAL(th_query(f.h, 19, 1, 0, &d), MCC_TASK_UNKNOWN);
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_REMOTE_METADATA);
	th_progress(f.h, f.d);
	th_sig(f.h, MCC_SIG_SOFT_DEADLINE, f.d, f.r, 19, 1, 1, 0, 0, 0);
	wc_task(f.h, f.r, IBV_WC_RETRY_EXC_ERR, 0, 19, 1, 1);
	th_tick(f.h);
	assert_untouched(f.h, f.r); /* not refreshed yet: not escalated */
	th_sig(f.h, MCC_SIG_ENDPOINT_REBUILT, f.d, f.r, 0, 0, 2, 0, 0, 0);
	th_progress(f.h, f.d);
	th_sig(f.h, MCC_SIG_SOFT_DEADLINE, f.d, f.r, 19, 1, 2, 0, 0, 0);
	th_tick(f.h);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_SUSPECT);
	CU_ASSERT_EQUAL(th_query(f.h, 19, 1, 0, &d), MCC_TASK_CONGESTED);
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_ROUTE_TIMEOUT);
	th_free(f.h);
}

static void test_nonwc_cancel_teardown_reclaim_settle_once_then_flush_is_derived(void)
{
	struct fix f = fx(NULL);
	struct mcc_permit_v1 a = MCC_PERMIT_INIT, b = MCC_PERMIT_INIT, c = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 8192, 1, 20, 1, 0, &a), MCC_ADMIT);
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 8192, 1, 20, 1, 0, &b), MCC_ADMIT);
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 8192, 1, 20, 1, 0, &c), MCC_ADMIT);
	th_sig(f.h, MCC_SIG_CANCELLED, f.d, f.r, 20, 1, 1, 0, 0, 0);
	CU_ASSERT_EQUAL(th_rel(f.h, &a, 8192, MCC_REL_CANCELLED), 0);
	th_sig(f.h, MCC_SIG_ENDPOINT_RECLAIMED, f.d, f.r, 20, 1, 1, 0, 0, 0);
	CU_ASSERT_EQUAL(th_rel(f.h, &b, 8192, MCC_REL_RECLAIMED), 0);
	th_wc(f.h, &c, IBV_WC_WR_FLUSH_ERR, 0); /* the torn-down QP flushes */
	th_tick(f.h);
	struct mcc_domain_stats_v1 s = th_rs(f.h, f.r);
	CU_ASSERT_EQUAL(s.inflight_bytes, 0);
	CU_ASSERT_EQUAL(s.double_release, 0); /* each byte settled exactly once */
	assert_untouched(f.h, f.r);          /* no new root failure */
	struct mcc_task_detail_v1 d;
	CU_ASSERT_EQUAL(th_query(f.h, 20, 1, 0, &d), MCC_TASK_UNKNOWN);
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_CANCELLED); /* the flush inherits it */
	th_free(f.h);
}

static void test_nonwc_all_rails_unavailable_long_unavailable_no_usable_path(void)
{
	struct fix f = fx(NULL);
	th_sig(f.h, MCC_SIG_NO_USABLE_PATH, NULL, NULL, 21, 1, 0, 0, 0, 0);
	struct mcc_task_detail_v1 d;
	CU_ASSERT_EQUAL(th_query(f.h, 21, 1, 0, &d), MCC_TASK_LONG_UNAVAILABLE);
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_NO_USABLE_PATH);
	CU_ASSERT(!(d.observed & MCC_OBS_PATH));
	assert_untouched(f.h, f.r);
	assert_dev_untouched(f.h, f.d);
	CU_ASSERT_EQUAL(th_query(f.h, 21, 2, 0, NULL), MCC_TASK_UNKNOWN); /* no evidence */
	th_free(f.h);
}

static void test_nonwc_cm_disconnected_unreachable_are_route_scoped(void)
{
	struct fix f = fx(NULL);
	th_sig(f.h, MCC_SIG_CM_EVENT, f.d, f.r, 22, 1, 1, MCC_RDMA_CM_EVENT_DISCONNECTED, 0, 0);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_SUSPECT);
	th_sig(f.h, MCC_SIG_CM_EVENT, f.d, f.r, 22, 1, 1, MCC_RDMA_CM_EVENT_UNREACHABLE, 0, 0);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).hard_errors, 2);
	assert_untouched(f.h, f.r2);
	assert_dev_untouched(f.h, f.d);
	CU_ASSERT_EQUAL(th_query(f.h, 22, 1, 0, NULL), MCC_TASK_CONGESTED);
	/* other cm events: nothing */
	th_sig(f.h, MCC_SIG_CM_EVENT, f.d, f.r2, 0, 0, 1, 9, 0, 0);
	assert_untouched(f.h, f.r2);
	th_free(f.h);
}

static void test_nonwc_cm_device_removal_isolates_local_device_not_peer(void)
{
	struct fix f = fx(NULL);
	th_sig(f.h, MCC_SIG_CM_EVENT, f.d, NULL, 0, 0, 0, MCC_RDMA_CM_EVENT_DEVICE_REMOVAL, 0, 0);
	CU_ASSERT_EQUAL(th_dstate(f.h, f.d), MCC_PATH_QUARANTINED);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_QUARANTINED);
	assert_untouched(f.h, f.other); /* the peer is not proven failed */
	assert_dev_untouched(f.h, f.d2);
	th_free(f.h);
}

MCC_CU_SUITE(t_init_matrix_tests, "policy_matrix", NULL, NULL,
             test_wc_success_records_bytes_and_resolves_task,
             test_wc_success_with_rising_drain_exposes_congested_shrinks_only_window,
             test_wc_rnr_pressures_only_the_receiving_route,
             test_wc_retry_exc_resp_timeout_suspect_then_threshold_quarantine,
             test_wc_local_operation_errors_touch_no_window_or_failure_count,
             test_wc_local_qp_errors_are_not_congestion_or_remote_failure,
             test_wc_remote_metadata_no_window_change_escalates_only_after_refresh,
             test_wc_flush_inherits_root_cause_and_counts_once,
             test_wc_fatal_counts_route_hard_error_and_keeps_vendor_err,
             test_wc_unknown_status_fails_closed_at_route_scope,
             test_async_qp_errors_count_one_route_hard_error_each,
             test_async_wq_fatal_srq_err_report_at_qp_scope,
             test_async_cq_err_isolates_routes_on_that_cq_only,
             test_async_path_mig_err_route_hard_error_suspect_below_threshold,
             test_async_port_err_isolates_routes_through_that_port,
             test_async_device_fatal_isolates_local_device_not_peer,
             test_async_non_failure_events_require_new_generation_probe,
             test_async_unknown_event_changes_nothing,
             test_nonwc_defer_keeps_slice_queued_records_byte_window,
             test_nonwc_avoid_on_quarantined_path_is_not_a_new_failure,
             test_nonwc_generation_change_after_acquire_rolls_back_unknown,
             test_nonwc_sync_post_rejection_releases_without_fabricated_wc,
             test_nonwc_soft_deadline_with_poller_progress_is_route_timeout,
             test_nonwc_soft_deadline_with_poller_stall_is_diagnostic_only,
             test_nonwc_segment_desc_rpc_failure_keeps_window,
             test_nonwc_mutating_rpc_failure_no_replay_no_change,
             test_nonwc_stale_metadata_escalates_only_if_refreshed_generation_times_out,
             test_nonwc_cancel_teardown_reclaim_settle_once_then_flush_is_derived,
             test_nonwc_all_rails_unavailable_long_unavailable_no_usable_path,
             test_nonwc_cm_disconnected_unreachable_are_route_scoped,
             test_nonwc_cm_device_removal_isolates_local_device_not_peer)

MCC_CU_MAIN(t_init_matrix_tests)
