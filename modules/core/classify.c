/* SPDX-License-Identifier: MIT */
/*
 * classify.c - the RFC's three handling matrices as one pure function.
 *
 * Only enum constants are taken from <infiniband/verbs.h>; nothing is linked
 * from libibverbs. Every enumerator of enum ibv_wc_status and enum
 * ibv_event_type in the installed header has an explicit row here; the test
 * suite generates the enumerator list from the header at build time and
 * fails when a new rdma-core value reaches the fallback.
 */
#include "classify.h"
#include "names_table.h"

#include <infiniband/verbs.h>

#define CLS(c, s, r, f)                                                                  \
	((struct mcc_cls){ .cls = (uint8_t)(c), .scope = (uint8_t)(s), .reason = (uint8_t)(r), \
	                   .flags = (uint16_t)((f) | MCC_CLS_F_KNOWN) })
#define CLS_FALLBACK(c, s, r, f)                                                         \
	((struct mcc_cls){ .cls = (uint8_t)(c), .scope = (uint8_t)(s), .reason = (uint8_t)(r), \
	                   .flags = (uint16_t)(f) })

/* RFC "Completion/WC Handling Matrix". */
static struct mcc_cls classify_wc(int32_t status)
{
	switch (status) {
	case IBV_WC_SUCCESS:
		return CLS(MCC_CLASS_SUCCESS, MCC_SCOPE_OPERATION, MCC_REASON_NONE, 0);
	case IBV_WC_RNR_RETRY_EXC_ERR:
		/* pressure on the receiving route only; never the source NIC */
		return CLS(MCC_CLASS_RECEIVER_PRESSURE, MCC_SCOPE_QP, MCC_REASON_RECEIVER_PRESSURE,
		           MCC_CLS_F_PRESSURE);
	case IBV_WC_RETRY_EXC_ERR:
	case IBV_WC_RESP_TIMEOUT_ERR:
		return CLS(MCC_CLASS_ROUTE_TIMEOUT, MCC_SCOPE_QP, MCC_REASON_ROUTE_TIMEOUT,
		           MCC_CLS_F_HARD);
	case IBV_WC_LOC_LEN_ERR:
	case IBV_WC_LOC_PROT_ERR:
	case IBV_WC_MW_BIND_ERR:
	case IBV_WC_LOC_ACCESS_ERR:
		return CLS(MCC_CLASS_LOCAL_CONFIGURATION, MCC_SCOPE_OPERATION,
		           MCC_REASON_LOCAL_CONFIGURATION, 0);
	case IBV_WC_LOC_QP_OP_ERR:
	case IBV_WC_LOC_EEC_OP_ERR:
	case IBV_WC_LOC_RDD_VIOL_ERR:
	case IBV_WC_INV_EECN_ERR:
	case IBV_WC_INV_EEC_STATE_ERR:
		return CLS(MCC_CLASS_LOCAL_CONFIGURATION, MCC_SCOPE_QP,
		           MCC_REASON_LOCAL_CONFIGURATION, 0);
	case IBV_WC_BAD_RESP_ERR:
	case IBV_WC_REM_INV_REQ_ERR:
	case IBV_WC_REM_ACCESS_ERR:
	case IBV_WC_REM_OP_ERR:
	case IBV_WC_REM_INV_RD_REQ_ERR:
	case IBV_WC_REM_ABORT_ERR:
		return CLS(MCC_CLASS_REMOTE_METADATA, MCC_SCOPE_OPERATION, MCC_REASON_REMOTE_METADATA,
		           MCC_CLS_F_ESCALATE);
	case IBV_WC_WR_FLUSH_ERR:
		/* a consequence, never a root failure: inherits the root cause */
		return CLS(MCC_CLASS_DERIVED_FLUSH, MCC_SCOPE_QP, MCC_REASON_DERIVED_FLUSH, 0);
	case IBV_WC_FATAL_ERR:
	case IBV_WC_GENERAL_ERR:
	case IBV_WC_TM_ERR:
	case IBV_WC_TM_RNDV_INCOMPLETE:
		return CLS(MCC_CLASS_FATAL, MCC_SCOPE_QP, MCC_REASON_FATAL, MCC_CLS_F_HARD);
	default:
		/* fail closed at the minimum QP/route scope; the caller keeps the raw
		 * status and vendor_err */
		return CLS_FALLBACK(MCC_CLASS_FATAL, MCC_SCOPE_QP, MCC_REASON_FATAL, MCC_CLS_F_HARD);
	}
}

/* RFC "Async Event Handling Matrix". Async events carry no task. */
static struct mcc_cls classify_async(int32_t ev)
{
	switch (ev) {
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
		/* one route hard error; other QPs on the same GID untouched */
		return CLS(MCC_CLASS_FATAL, MCC_SCOPE_QP, MCC_REASON_NONE, MCC_CLS_F_HARD);
	case IBV_EVENT_WQ_FATAL:
	case IBV_EVENT_SRQ_ERR:
		/* the WQ/SRQ and its dependent QPs, reported at QP scope */
		return CLS(MCC_CLASS_FATAL, MCC_SCOPE_QP, MCC_REASON_NONE, MCC_CLS_F_HARD);
	case IBV_EVENT_CQ_ERR:
		return CLS(MCC_CLASS_FATAL, MCC_SCOPE_CQ, MCC_REASON_NONE, MCC_CLS_F_QUARANTINE);
	case IBV_EVENT_PATH_MIG_ERR:
		return CLS(MCC_CLASS_FATAL, MCC_SCOPE_ROUTE, MCC_REASON_NONE, MCC_CLS_F_HARD);
	case IBV_EVENT_PORT_ERR:
		return CLS(MCC_CLASS_FATAL, MCC_SCOPE_PORT, MCC_REASON_NONE, MCC_CLS_F_QUARANTINE);
	case IBV_EVENT_DEVICE_FATAL:
		/* the local device only, never the remote peer */
		return CLS(MCC_CLASS_FATAL, MCC_SCOPE_DEVICE, MCC_REASON_NONE, MCC_CLS_F_QUARANTINE);
	case IBV_EVENT_PORT_ACTIVE:
	case IBV_EVENT_GID_CHANGE:
	case IBV_EVENT_LID_CHANGE:
	case IBV_EVENT_PKEY_CHANGE:
	case IBV_EVENT_CLIENT_REREGISTER:
	case IBV_EVENT_SM_CHANGE:
		return CLS(MCC_CLASS_RECOVERY_HINT, MCC_SCOPE_PORT, MCC_REASON_NONE, MCC_CLS_F_HINT);
	case IBV_EVENT_PATH_MIG:
		return CLS(MCC_CLASS_RECOVERY_HINT, MCC_SCOPE_ROUTE, MCC_REASON_NONE, MCC_CLS_F_HINT);
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		return CLS(MCC_CLASS_RECOVERY_HINT, MCC_SCOPE_QP, MCC_REASON_NONE, MCC_CLS_F_HINT);
	default:
		/* unknown: no congestion change; the event owner keeps handling it */
		return CLS_FALLBACK(MCC_CLASS_NONE, MCC_SCOPE_NONE, MCC_REASON_NONE, MCC_CLS_F_DIAG);
	}
}

/* rdma_cm rows of the non-WC matrix. */
static struct mcc_cls classify_cm(int32_t ev)
{
	switch (ev) {
	case MCC_RDMA_CM_EVENT_DISCONNECTED:
	case MCC_RDMA_CM_EVENT_UNREACHABLE:
		/* route-scoped connection evidence */
		return CLS(MCC_CLASS_ROUTE_TIMEOUT, MCC_SCOPE_ROUTE, MCC_REASON_ROUTE_TIMEOUT,
		           MCC_CLS_F_HARD);
	case MCC_RDMA_CM_EVENT_DEVICE_REMOVAL:
		/* the local device is persistently unavailable; the peer is not
		 * proven failed */
		return CLS(MCC_CLASS_FATAL, MCC_SCOPE_DEVICE, MCC_REASON_NONE, MCC_CLS_F_QUARANTINE);
	default:
		return CLS_FALLBACK(MCC_CLASS_NONE, MCC_SCOPE_NONE, MCC_REASON_NONE, MCC_CLS_F_DIAG);
	}
}

/* RFC "Non-WC and Control-Plane Handling Matrix": host signals. */
static struct mcc_cls classify_signal(int32_t kind, uint32_t aux)
{
	switch (kind) {
	case MCC_SIG_POST_REJECTED:
		/* release the unposted permit; never fabricate a WC: no counter moves */
		return CLS(MCC_CLASS_NONE, MCC_SCOPE_OPERATION, MCC_REASON_FATAL, MCC_CLS_F_DIAG);
	case MCC_SIG_SOFT_DEADLINE:
		if (aux & MCC_CLS_AUX_POLLER_PROGRESS)
			return CLS(MCC_CLASS_ROUTE_TIMEOUT, MCC_SCOPE_QP, MCC_REASON_ROUTE_TIMEOUT,
			           MCC_CLS_F_HARD);
		/* poller stalled in that epoch: diagnostics only, not a route timeout */
		return CLS(MCC_CLASS_NONE, MCC_SCOPE_NONE, MCC_REASON_POLLER_STALL, MCC_CLS_F_DIAG);
	case MCC_SIG_ENDPOINT_REBUILT:
		return CLS(MCC_CLASS_RECOVERY_HINT, MCC_SCOPE_ROUTE, MCC_REASON_NONE,
		           MCC_CLS_F_GENERATION | MCC_CLS_F_HINT);
	case MCC_SIG_METADATA_STALE:
		return CLS(MCC_CLASS_REMOTE_METADATA, MCC_SCOPE_OPERATION, MCC_REASON_REMOTE_METADATA,
		           MCC_CLS_F_ESCALATE);
	case MCC_SIG_SEGMENT_RPC_FAILED:
	case MCC_SIG_CONTROL_RPC_FAILED:
		/* no window change; mutating RPCs are never replayed */
		return CLS(MCC_CLASS_NONE, MCC_SCOPE_NONE, MCC_REASON_CONTROL_PLANE, MCC_CLS_F_DIAG);
	case MCC_SIG_CANCELLED:
		return CLS(MCC_CLASS_NONE, MCC_SCOPE_OPERATION, MCC_REASON_CANCELLED, 0);
	case MCC_SIG_ENDPOINT_RECLAIMED:
		return CLS(MCC_CLASS_NONE, MCC_SCOPE_QP, MCC_REASON_CANCELLED, 0);
	case MCC_SIG_NO_USABLE_PATH:
		return CLS(MCC_CLASS_NONE, MCC_SCOPE_NONE, MCC_REASON_NO_USABLE_PATH, 0);
	case MCC_SIG_CM_EVENT:
		return classify_cm((int32_t)aux);
	case MCC_SIG_BACKLOG:
		return CLS(MCC_CLASS_CONGESTION, MCC_SCOPE_ROUTE, MCC_REASON_NONE,
		           MCC_CLS_F_TELEMETRY);
	case MCC_SIG_DEVICE_TELEMETRY:
		return CLS(MCC_CLASS_NONE, MCC_SCOPE_DEVICE, MCC_REASON_NONE, MCC_CLS_F_TELEMETRY);
	default:
		return CLS_FALLBACK(MCC_CLASS_NONE, MCC_SCOPE_NONE, MCC_REASON_NONE, MCC_CLS_F_DIAG);
	}
}

/* Admission outcomes: the first two rows of the non-WC matrix. */
static struct mcc_cls classify_decision(int32_t d)
{
	switch (d) {
	case MCC_ADMIT:
		return CLS(MCC_CLASS_NONE, MCC_SCOPE_NONE, MCC_REASON_NONE, 0);
	case MCC_DEFER:
		return CLS(MCC_CLASS_CONGESTION, MCC_SCOPE_ROUTE, MCC_REASON_BYTE_WINDOW, 0);
	case MCC_AVOID:
		/* not counted again as a new hardware failure */
		return CLS(MCC_CLASS_NONE, MCC_SCOPE_ROUTE, MCC_REASON_PATH_QUARANTINED, 0);
	default:
		return CLS_FALLBACK(MCC_CLASS_NONE, MCC_SCOPE_NONE, MCC_REASON_NONE, MCC_CLS_F_DIAG);
	}
}

/* Settlement without a WC (release()). */
static struct mcc_cls classify_release(int32_t r)
{
	switch (r) {
	case MCC_REL_NOT_POSTED:
	case MCC_REL_POST_REJECTED: /* the signal, not the release, carries evidence */
		return CLS(MCC_CLASS_NONE, MCC_SCOPE_OPERATION, MCC_REASON_NONE, 0);
	case MCC_REL_GENERATION_CHANGED:
		/* roll back; the old attempt cannot affect the new generation */
		return CLS(MCC_CLASS_NONE, MCC_SCOPE_QP, MCC_REASON_GENERATION_CHANGED, 0);
	case MCC_REL_CANCELLED:
		return CLS(MCC_CLASS_NONE, MCC_SCOPE_OPERATION, MCC_REASON_CANCELLED, 0);
	case MCC_REL_RECLAIMED:
		return CLS(MCC_CLASS_NONE, MCC_SCOPE_QP, MCC_REASON_CANCELLED, 0);
	default:
		return CLS_FALLBACK(MCC_CLASS_NONE, MCC_SCOPE_OPERATION, MCC_REASON_NONE, 0);
	}
}

struct mcc_cls mcc_classify(enum mcc_src src, int32_t code, uint32_t aux)
{
	switch (src) {
	case MCC_SRC_WC:
		return classify_wc(code);
	case MCC_SRC_ASYNC:
		return classify_async(code);
	case MCC_SRC_CM:
		return classify_cm(code);
	case MCC_SRC_SIGNAL:
		return classify_signal(code, aux);
	case MCC_SRC_DECISION:
		return classify_decision(code);
	case MCC_SRC_RELEASE:
		return classify_release(code);
	}
	return CLS_FALLBACK(MCC_CLASS_NONE, MCC_SCOPE_NONE, MCC_REASON_NONE, MCC_CLS_F_DIAG);
}

enum mcc_task_state mcc_reason_projection(uint32_t reason)
{
	switch (reason) {
	case MCC_REASON_NONE:
		return MCC_TASK_NORMAL;
	case MCC_REASON_BYTE_WINDOW:
	case MCC_REASON_RECEIVER_PRESSURE:
	case MCC_REASON_CONGESTION_FEEDBACK:
	case MCC_REASON_ROUTE_TIMEOUT:
		return MCC_TASK_CONGESTED;
	case MCC_REASON_PATH_QUARANTINED:
	case MCC_REASON_PROBE_FAILED:
	case MCC_REASON_NO_USABLE_PATH:
		return MCC_TASK_LONG_UNAVAILABLE;
	default:
		return MCC_TASK_UNKNOWN;
	}
}

const char *mcc_class_str(uint32_t cls)
{
	static const char *const n[] = { "none",          "success",        "congestion",
		                         "receiver_pressure", "route_timeout", "local_configuration",
		                         "remote_metadata", "derived_flush", "fatal",
		                         "recovery_hint" };
	return cls < sizeof(n) / sizeof(n[0]) ? n[cls] : "unknown";
}

const char *mcc_scope_str(uint32_t scope)
{
	static const char *const n[] = { "none", "operation", "qp", "cq", "route", "port", "device" };
	return scope < sizeof(n) / sizeof(n[0]) ? n[scope] : "unknown";
}

#define LOWER_PATH(id, low) [MCC_PATH_##id] = #low,
#define LOWER_REASON(id, low) [MCC_REASON_##id] = #low,

const char *mcc_state_str(uint32_t state)
{
	static const char *const n[] = {MCC_PATH_STATE_NAMES(LOWER_PATH)};
	return state < sizeof(n) / sizeof(n[0]) ? n[state] : "unknown";
}

const char *mcc_reason_str(uint32_t reason)
{
	static const char *const n[MCC_REASON_COUNT_] = {MCC_REASON_NAMES(LOWER_REASON)};
	return reason < MCC_REASON_COUNT_ && n[reason] ? n[reason] : "unknown";
}
