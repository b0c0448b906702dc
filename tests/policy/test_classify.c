/* SPDX-License-Identifier: MIT */
/*
 * test_classify.c - the pure classifier against every row of the RFC's WC,
 * async-event and non-WC matrices, plus a coverage test over every
 * enumerator of the installed <infiniband/verbs.h> (generated at build time).
 */
#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "classify.h"
#include "cu_driver.h"
#include "verbs_enums.h"

#define HAS(c, f) (((c).flags & (f)) != 0)

/* A row of the RFC's WC or async-event matrix: each of its codes
 * classifies with class `cls`, scope `scope` and reason `reason` (ANY: not
 * a column of that row), the flags `on` all set and `off` all clear. */
#define ANY (-1)
struct row {
	const char *what;
	int cls, scope, reason;
	unsigned on, off;
	unsigned n;
	int32_t code[12];
};
#define CODES(...) (unsigned)(sizeof((int32_t[]){ __VA_ARGS__ }) / sizeof(int32_t)), { __VA_ARGS__ }
#define KNOWN MCC_CLS_F_KNOWN
#define HARD MCC_CLS_F_HARD
#define QUAR MCC_CLS_F_QUARANTINE
#define PRESSURE MCC_CLS_F_PRESSURE

static void check_rows(enum mcc_src src, const struct row *rows, unsigned nrows)
{
	for (unsigned i = 0; i < nrows; i++)
		for (unsigned k = 0; k < rows[i].n; k++) {
			const struct row *w = &rows[i];
			struct mcc_cls c = mcc_classify(src, w->code[k], 0);
			bool ok = (w->cls == ANY || c.cls == w->cls) &&
			          (w->scope == ANY || c.scope == w->scope) &&
			          (w->reason == ANY || c.reason == w->reason) &&
			          (c.flags & w->on) == w->on && (c.flags & w->off) == 0;
			if (!ok)
				fprintf(stderr, "%s: code %d reads class %u scope %u reason %u flags %#x\n",
				        w->what, w->code[k], c.cls, c.scope, c.reason, c.flags);
			CU_ASSERT(ok);
		}
}

/* ---------------------------------------------------------- WC matrix rows */

static void test_cls_wc_matrix_rows(void)
{
	static const struct row rows[] = {
		{ "success", MCC_CLASS_SUCCESS, MCC_SCOPE_OPERATION, MCC_REASON_NONE, KNOWN, HARD,
		  CODES(IBV_WC_SUCCESS) },
		/* receiver pressure never declares the rail failed */
		{ "rnr retries exceeded", MCC_CLASS_RECEIVER_PRESSURE, MCC_SCOPE_QP,
		  MCC_REASON_RECEIVER_PRESSURE, KNOWN | PRESSURE, HARD,
		  CODES(IBV_WC_RNR_RETRY_EXC_ERR) },
		/* a hard error; only the threshold quarantines */
		{ "route timeout", MCC_CLASS_ROUTE_TIMEOUT, MCC_SCOPE_QP, MCC_REASON_ROUTE_TIMEOUT,
		  KNOWN | HARD, QUAR, CODES(IBV_WC_RETRY_EXC_ERR, IBV_WC_RESP_TIMEOUT_ERR) },
		{ "local operation error", MCC_CLASS_LOCAL_CONFIGURATION, MCC_SCOPE_OPERATION,
		  MCC_REASON_LOCAL_CONFIGURATION, KNOWN, HARD | PRESSURE,
		  CODES(IBV_WC_LOC_LEN_ERR, IBV_WC_LOC_PROT_ERR, IBV_WC_MW_BIND_ERR,
		        IBV_WC_LOC_ACCESS_ERR) },
		{ "local QP error", MCC_CLASS_LOCAL_CONFIGURATION, MCC_SCOPE_QP,
		  MCC_REASON_LOCAL_CONFIGURATION, KNOWN, HARD | PRESSURE,
		  CODES(IBV_WC_LOC_QP_OP_ERR, IBV_WC_LOC_EEC_OP_ERR, IBV_WC_LOC_RDD_VIOL_ERR,
		        IBV_WC_INV_EECN_ERR, IBV_WC_INV_EEC_STATE_ERR) },
		{ "remote metadata", MCC_CLASS_REMOTE_METADATA, MCC_SCOPE_OPERATION,
		  MCC_REASON_REMOTE_METADATA, KNOWN | MCC_CLS_F_ESCALATE, HARD | QUAR,
		  CODES(IBV_WC_BAD_RESP_ERR, IBV_WC_REM_INV_REQ_ERR, IBV_WC_REM_ACCESS_ERR,
		        IBV_WC_REM_OP_ERR, IBV_WC_REM_INV_RD_REQ_ERR, IBV_WC_REM_ABORT_ERR) },
		/* derived: never increments hard errors */
		{ "flush", MCC_CLASS_DERIVED_FLUSH, MCC_SCOPE_QP, MCC_REASON_DERIVED_FLUSH, KNOWN,
		  HARD, CODES(IBV_WC_WR_FLUSH_ERR) },
		/* a hard error that never widens directly */
		{ "fatal, general, tag matching", MCC_CLASS_FATAL, MCC_SCOPE_QP, MCC_REASON_FATAL,
		  KNOWN | HARD, QUAR,
		  CODES(IBV_WC_FATAL_ERR, IBV_WC_GENERAL_ERR, IBV_WC_TM_ERR,
		        IBV_WC_TM_RNDV_INCOMPLETE) },
		/* unknown statuses fail closed */
		{ "unknown status", MCC_CLASS_FATAL, MCC_SCOPE_QP, ANY, HARD, KNOWN | QUAR,
		  CODES(-1, 999, 0x7fffffff, IBV_WC_TM_RNDV_INCOMPLETE + 100) },
	};
	check_rows(MCC_SRC_WC, rows, sizeof(rows) / sizeof(rows[0]));
}

static void test_cls_wc_congestion_row_is_success_plus_pressure(void)
{
	/* "Success while drain time/backlog keeps rising": the WC is a success;
	 * the congestion class comes from backlog telemetry and drain time */
	struct mcc_cls b = mcc_classify(MCC_SRC_SIGNAL, MCC_SIG_BACKLOG, 0);
	CU_ASSERT_EQUAL(b.cls, MCC_CLASS_CONGESTION);
	CU_ASSERT(HAS(b, MCC_CLS_F_TELEMETRY));
	CU_ASSERT(!HAS(b, MCC_CLS_F_HARD) && !HAS(b, MCC_CLS_F_QUARANTINE));
	CU_ASSERT_EQUAL(mcc_reason_projection(MCC_REASON_CONGESTION_FEEDBACK), MCC_TASK_CONGESTED);
}

/* -------------------------------------------------------- async matrix rows */

static void test_cls_async_matrix_rows(void)
{
	static const struct row rows[] = {
		/* one hard error each, no quarantine */
		{ "QP error", MCC_CLASS_FATAL, MCC_SCOPE_QP, ANY, KNOWN | HARD, QUAR,
		  CODES(IBV_EVENT_QP_FATAL, IBV_EVENT_QP_REQ_ERR, IBV_EVENT_QP_ACCESS_ERR) },
		{ "WQ / SRQ error", ANY, MCC_SCOPE_QP, ANY, KNOWN | HARD, 0,
		  CODES(IBV_EVENT_WQ_FATAL, IBV_EVENT_SRQ_ERR) },
		{ "CQ error", ANY, MCC_SCOPE_CQ, ANY, KNOWN | QUAR, 0, CODES(IBV_EVENT_CQ_ERR) },
		{ "path migration error", ANY, MCC_SCOPE_ROUTE, ANY, KNOWN | HARD, QUAR,
		  CODES(IBV_EVENT_PATH_MIG_ERR) },
		{ "port error", ANY, MCC_SCOPE_PORT, ANY, KNOWN | QUAR, 0, CODES(IBV_EVENT_PORT_ERR) },
		{ "device fatal", ANY, MCC_SCOPE_DEVICE, ANY, KNOWN | QUAR, 0,
		  CODES(IBV_EVENT_DEVICE_FATAL) },
		/* events that are no failure are recovery hints */
		{ "hint", MCC_CLASS_RECOVERY_HINT, ANY, ANY, KNOWN | MCC_CLS_F_HINT, HARD | QUAR,
		  CODES(IBV_EVENT_PORT_ACTIVE, IBV_EVENT_GID_CHANGE, IBV_EVENT_LID_CHANGE,
		        IBV_EVENT_PKEY_CHANGE, IBV_EVENT_PATH_MIG, IBV_EVENT_CLIENT_REREGISTER,
		        IBV_EVENT_SM_CHANGE, IBV_EVENT_COMM_EST, IBV_EVENT_SQ_DRAINED,
		        IBV_EVENT_SRQ_LIMIT_REACHED, IBV_EVENT_QP_LAST_WQE_REACHED) },
		/* an unknown event changes nothing */
		{ "unknown event", MCC_CLASS_NONE, ANY, ANY, 0, KNOWN | HARD | QUAR | PRESSURE,
		  CODES(12345) },
	};
	check_rows(MCC_SRC_ASYNC, rows, sizeof(rows) / sizeof(rows[0]));
}

/* ------------------------------------------------------- non-WC matrix rows */

static struct mcc_cls sig(uint32_t kind, uint32_t aux)
{
	return mcc_classify(MCC_SRC_SIGNAL, (int32_t)kind, aux);
}

static void test_cls_nonwc_defer_byte_window(void)
{
	struct mcc_cls c = mcc_classify(MCC_SRC_DECISION, MCC_DEFER, 0);
	CU_ASSERT_EQUAL(c.reason, MCC_REASON_BYTE_WINDOW);
	CU_ASSERT_EQUAL(mcc_reason_projection(c.reason), MCC_TASK_CONGESTED);
}

static void test_cls_nonwc_avoid_path_quarantined_not_a_failure(void)
{
	struct mcc_cls c = mcc_classify(MCC_SRC_DECISION, MCC_AVOID, 0);
	CU_ASSERT_EQUAL(c.reason, MCC_REASON_PATH_QUARANTINED);
	CU_ASSERT_EQUAL(mcc_reason_projection(c.reason), MCC_TASK_LONG_UNAVAILABLE);
	CU_ASSERT(!HAS(c, MCC_CLS_F_HARD) && !HAS(c, MCC_CLS_F_QUARANTINE));
}

static void test_cls_nonwc_generation_change_unknown(void)
{
	struct mcc_cls c = mcc_classify(MCC_SRC_RELEASE, MCC_REL_GENERATION_CHANGED, 0);
	CU_ASSERT_EQUAL(c.reason, MCC_REASON_GENERATION_CHANGED);
	CU_ASSERT_EQUAL(mcc_reason_projection(c.reason), MCC_TASK_UNKNOWN);
	CU_ASSERT(!HAS(c, MCC_CLS_F_HARD));
}

static void test_cls_nonwc_post_rejection_no_fabricated_wc(void)
{
	struct mcc_cls c = sig(MCC_SIG_POST_REJECTED, 0);
	CU_ASSERT(HAS(c, MCC_CLS_F_KNOWN) && HAS(c, MCC_CLS_F_DIAG));
	CU_ASSERT(!HAS(c, MCC_CLS_F_HARD) && !HAS(c, MCC_CLS_F_PRESSURE));
	struct mcc_cls r = mcc_classify(MCC_SRC_RELEASE, MCC_REL_POST_REJECTED, 0);
	CU_ASSERT_EQUAL(r.reason, MCC_REASON_NONE);
}

static void test_cls_nonwc_soft_deadline_progress_vs_stall(void)
{
	struct mcc_cls p = sig(MCC_SIG_SOFT_DEADLINE, MCC_CLS_AUX_POLLER_PROGRESS);
	CU_ASSERT_EQUAL(p.cls, MCC_CLASS_ROUTE_TIMEOUT);
	CU_ASSERT_EQUAL(p.reason, MCC_REASON_ROUTE_TIMEOUT);
	CU_ASSERT(HAS(p, MCC_CLS_F_HARD));
	struct mcc_cls s = sig(MCC_SIG_SOFT_DEADLINE, 0);
	CU_ASSERT_EQUAL(s.reason, MCC_REASON_POLLER_STALL);
	CU_ASSERT(HAS(s, MCC_CLS_F_DIAG) && !HAS(s, MCC_CLS_F_HARD));
	CU_ASSERT_EQUAL(mcc_reason_projection(s.reason), MCC_TASK_UNKNOWN);
}

static void test_cls_nonwc_rpc_failures_no_window_change(void)
{
	uint32_t k[] = { MCC_SIG_SEGMENT_RPC_FAILED, MCC_SIG_CONTROL_RPC_FAILED };
	for (unsigned i = 0; i < 2; i++) {
		struct mcc_cls c = sig(k[i], 0);
		CU_ASSERT_EQUAL(c.reason, MCC_REASON_CONTROL_PLANE);
		CU_ASSERT(!HAS(c, MCC_CLS_F_HARD) && !HAS(c, MCC_CLS_F_PRESSURE) &&
		          !HAS(c, MCC_CLS_F_TELEMETRY));
	}
}

static void test_cls_nonwc_stale_metadata_remote_metadata(void)
{
	struct mcc_cls c = sig(MCC_SIG_METADATA_STALE, 0);
	CU_ASSERT_EQUAL(c.cls, MCC_CLASS_REMOTE_METADATA);
	CU_ASSERT_EQUAL(c.reason, MCC_REASON_REMOTE_METADATA);
	CU_ASSERT(HAS(c, MCC_CLS_F_ESCALATE) && !HAS(c, MCC_CLS_F_HARD));
}

static void test_cls_nonwc_cancel_reclaim_settle_unknown(void)
{
	uint32_t k[] = { MCC_SIG_CANCELLED, MCC_SIG_ENDPOINT_RECLAIMED };
	for (unsigned i = 0; i < 2; i++) {
		struct mcc_cls c = sig(k[i], 0);
		CU_ASSERT_EQUAL(c.reason, MCC_REASON_CANCELLED);
		CU_ASSERT(!HAS(c, MCC_CLS_F_HARD));
	}
	CU_ASSERT_EQUAL(mcc_classify(MCC_SRC_RELEASE, MCC_REL_CANCELLED, 0).reason,
	                MCC_REASON_CANCELLED);
	CU_ASSERT_EQUAL(mcc_classify(MCC_SRC_RELEASE, MCC_REL_RECLAIMED, 0).reason,
	                MCC_REASON_CANCELLED);
	CU_ASSERT_EQUAL(mcc_reason_projection(MCC_REASON_CANCELLED), MCC_TASK_UNKNOWN);
}

static void test_cls_nonwc_no_usable_path_long_unavailable(void)
{
	struct mcc_cls c = sig(MCC_SIG_NO_USABLE_PATH, 0);
	CU_ASSERT_EQUAL(c.reason, MCC_REASON_NO_USABLE_PATH);
	CU_ASSERT_EQUAL(mcc_reason_projection(c.reason), MCC_TASK_LONG_UNAVAILABLE);
}

static void test_cls_nonwc_cm_disconnected_unreachable_route(void)
{
	int32_t e[] = { MCC_RDMA_CM_EVENT_DISCONNECTED, MCC_RDMA_CM_EVENT_UNREACHABLE };
	for (unsigned i = 0; i < 2; i++) {
		struct mcc_cls c = sig(MCC_SIG_CM_EVENT, (uint32_t)e[i]);
		CU_ASSERT_EQUAL(c.scope, MCC_SCOPE_ROUTE);
		CU_ASSERT(HAS(c, MCC_CLS_F_KNOWN) && HAS(c, MCC_CLS_F_HARD));
		CU_ASSERT(!HAS(c, MCC_CLS_F_QUARANTINE));
		CU_ASSERT_EQUAL(mcc_classify(MCC_SRC_CM, e[i], 0).scope, MCC_SCOPE_ROUTE);
	}
}

static void test_cls_nonwc_cm_device_removal_device_scope(void)
{
	struct mcc_cls c = sig(MCC_SIG_CM_EVENT, MCC_RDMA_CM_EVENT_DEVICE_REMOVAL);
	CU_ASSERT_EQUAL(c.scope, MCC_SCOPE_DEVICE);
	CU_ASSERT(HAS(c, MCC_CLS_F_KNOWN) && HAS(c, MCC_CLS_F_QUARANTINE));
	/* other cm events: no change */
	struct mcc_cls o = sig(MCC_SIG_CM_EVENT, 0);
	CU_ASSERT(!HAS(o, MCC_CLS_F_KNOWN) && !HAS(o, MCC_CLS_F_HARD));
}

static void test_cls_every_signal_kind_explicit(void)
{
	for (uint32_t k = 1; k < MCC_SIG_KIND_COUNT_; k++) {
		uint32_t aux = k == MCC_SIG_CM_EVENT ? MCC_RDMA_CM_EVENT_DISCONNECTED : 0;
		CU_ASSERT(HAS(sig(k, aux), MCC_CLS_F_KNOWN));
	}
	CU_ASSERT(!HAS(sig(0, 0), MCC_CLS_F_KNOWN));
	CU_ASSERT(!HAS(sig(MCC_SIG_KIND_COUNT_, 0), MCC_CLS_F_KNOWN));
}

/* -------------------------------------------- installed header coverage */

static void test_cls_every_installed_wc_status_classified_explicitly(void)
{
	CU_ASSERT_FATAL(mcc_verbs_wc_status_count >= 24); /* generator found the enum */
	for (unsigned i = 0; i < mcc_verbs_wc_status_count; i++) {
		struct mcc_cls c = mcc_classify_wc(mcc_verbs_wc_status[i].value);
		if (!HAS(c, MCC_CLS_F_KNOWN))
			fprintf(stderr, "unclassified WC status %s = %d\n", mcc_verbs_wc_status[i].name,
			        mcc_verbs_wc_status[i].value);
		CU_ASSERT(HAS(c, MCC_CLS_F_KNOWN));
	}
}

static void test_cls_every_installed_event_type_classified_explicitly(void)
{
	CU_ASSERT_FATAL(mcc_verbs_event_type_count >= 20);
	for (unsigned i = 0; i < mcc_verbs_event_type_count; i++) {
		struct mcc_cls c = mcc_classify_async(mcc_verbs_event_type[i].value);
		if (!HAS(c, MCC_CLS_F_KNOWN))
			fprintf(stderr, "unclassified async event %s = %d\n",
			        mcc_verbs_event_type[i].name, mcc_verbs_event_type[i].value);
		CU_ASSERT(HAS(c, MCC_CLS_F_KNOWN));
	}
}

static void test_cls_pure_and_deterministic(void)
{
	for (int round = 0; round < 3; round++)
		for (int src = MCC_SRC_WC; src <= MCC_SRC_RELEASE; src++)
			for (int32_t code = -2; code < 40; code++) {
				struct mcc_cls a = mcc_classify((enum mcc_src)src, code, 1);
				struct mcc_cls b = mcc_classify((enum mcc_src)src, code, 1);
				CU_ASSERT_EQUAL(memcmp(&a, &b, sizeof(a)), 0);
			}
}

static void test_cls_never_hard_and_quarantine_for_local_remote_flush(void)
{
	/* LocalConfiguration, RemoteMetadata and DerivedFlush never touch the
	 * AIMD counters */
	for (unsigned i = 0; i < mcc_verbs_wc_status_count; i++) {
		struct mcc_cls c = mcc_classify_wc(mcc_verbs_wc_status[i].value);
		if (c.cls == MCC_CLASS_LOCAL_CONFIGURATION || c.cls == MCC_CLASS_REMOTE_METADATA ||
		    c.cls == MCC_CLASS_DERIVED_FLUSH)
			CU_ASSERT(!HAS(c, MCC_CLS_F_HARD) && !HAS(c, MCC_CLS_F_PRESSURE) &&
			          !HAS(c, MCC_CLS_F_QUARANTINE));
	}
}

static void test_cls_reason_projection_table(void)
{
	CU_ASSERT_EQUAL(mcc_reason_projection(MCC_REASON_NONE), MCC_TASK_NORMAL);
	CU_ASSERT_EQUAL(mcc_reason_projection(MCC_REASON_BYTE_WINDOW), MCC_TASK_CONGESTED);
	CU_ASSERT_EQUAL(mcc_reason_projection(MCC_REASON_RECEIVER_PRESSURE), MCC_TASK_CONGESTED);
	CU_ASSERT_EQUAL(mcc_reason_projection(MCC_REASON_ROUTE_TIMEOUT), MCC_TASK_CONGESTED);
	CU_ASSERT_EQUAL(mcc_reason_projection(MCC_REASON_PROBE_FAILED), MCC_TASK_LONG_UNAVAILABLE);
	for (uint32_t r = MCC_REASON_LOCAL_CONFIGURATION; r < MCC_REASON_COUNT_; r++)
		CU_ASSERT_EQUAL(mcc_reason_projection(r), MCC_TASK_UNKNOWN);
}

MCC_CU_SUITE(t_init_classify_tests, "policy_classify", NULL, NULL,
             test_cls_wc_matrix_rows,
             test_cls_wc_congestion_row_is_success_plus_pressure,
             test_cls_async_matrix_rows,
             test_cls_nonwc_defer_byte_window,
             test_cls_nonwc_avoid_path_quarantined_not_a_failure,
             test_cls_nonwc_generation_change_unknown,
             test_cls_nonwc_post_rejection_no_fabricated_wc,
             test_cls_nonwc_soft_deadline_progress_vs_stall,
             test_cls_nonwc_rpc_failures_no_window_change,
             test_cls_nonwc_stale_metadata_remote_metadata,
             test_cls_nonwc_cancel_reclaim_settle_unknown,
             test_cls_nonwc_no_usable_path_long_unavailable,
             test_cls_nonwc_cm_disconnected_unreachable_route,
             test_cls_nonwc_cm_device_removal_device_scope,
             test_cls_every_signal_kind_explicit,
             test_cls_every_installed_wc_status_classified_explicitly,
             test_cls_every_installed_event_type_classified_explicitly,
             test_cls_pure_and_deterministic,
             test_cls_never_hard_and_quarantine_for_local_remote_flush,
             test_cls_reason_projection_table)

MCC_CU_MAIN(t_init_classify_tests)
