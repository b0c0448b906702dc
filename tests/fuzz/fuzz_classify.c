/* SPDX-License-Identifier: MIT */
/*
 * fuzz_classify.c - fuzzer of the pure WC / async / non-WC classification
 * (modules/core/classify.h) with arbitrary (source, code, aux) triples.
 *
 * Invariants (the oracle below is written from the RFC matrices, not from
 * classify.c):
 *   - total and in range: every field a legal enum value, only defined flag
 *     bits, reserved fields zero, for any source value (even undefined ones);
 *   - deterministic: the same input classifies the same way twice;
 *   - an unknown WC status fails closed: FATAL at QP scope, a hard error,
 *     without MCC_CLS_F_KNOWN; a known one has an explicit row;
 *   - scope never wider than the RFC table allows for that source and code
 *     (WC: operation or QP; QP async events: QP; CQ_ERR: CQ; PATH_MIG_ERR:
 *     route; PORT_ERR: port; DEVICE_FATAL and CM DEVICE_REMOVAL: device;
 *     unknown async/cm events: no scope at all and no state change);
 *   - LocalConfiguration, RemoteMetadata and DerivedFlush never count as hard
 *     errors or pressure; a soft deadline without poller progress is never a
 *     route timeout; only CQ/port/device fatal evidence quarantines at once;
 *   - async events carry no task reason; DEFER -> BYTE_WINDOW, AVOID ->
 *     PATH_QUARANTINED and never a new failure;
 *   - the CM signal equals the CM source for the same event number;
 *   - the reason projection is the RFC's caller table; name functions never
 *     return NULL.
 * vendor_err is not an input of the classifier at all (it cannot widen a
 * scope by construction); fuzz_events checks the module end: the same event
 * sequence with different vendor_err values ends in the same state.
 */
#include <stdint.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "classify.h"
#include "fuzz_common.h"

#define ALL_FLAGS                                                                               \
	(MCC_CLS_F_KNOWN | MCC_CLS_F_HARD | MCC_CLS_F_PRESSURE | MCC_CLS_F_QUARANTINE |         \
	 MCC_CLS_F_HINT | MCC_CLS_F_DIAG | MCC_CLS_F_TELEMETRY | MCC_CLS_F_GENERATION |          \
	 MCC_CLS_F_ESCALATE)

/* RFC WC matrix, by raw ibv_wc_status value (rdma-core numbering, stable
 * ABI): class and scope of each row. */
static const struct {
	uint8_t cls, scope;
} wc_oracle[] = {
	[0] = { MCC_CLASS_SUCCESS, MCC_SCOPE_OPERATION },             /* SUCCESS */
	[1] = { MCC_CLASS_LOCAL_CONFIGURATION, MCC_SCOPE_OPERATION }, /* LOC_LEN_ERR */
	[2] = { MCC_CLASS_LOCAL_CONFIGURATION, MCC_SCOPE_QP },        /* LOC_QP_OP_ERR */
	[3] = { MCC_CLASS_LOCAL_CONFIGURATION, MCC_SCOPE_QP },        /* LOC_EEC_OP_ERR */
	[4] = { MCC_CLASS_LOCAL_CONFIGURATION, MCC_SCOPE_OPERATION }, /* LOC_PROT_ERR */
	[5] = { MCC_CLASS_DERIVED_FLUSH, MCC_SCOPE_QP },              /* WR_FLUSH_ERR */
	[6] = { MCC_CLASS_LOCAL_CONFIGURATION, MCC_SCOPE_OPERATION }, /* MW_BIND_ERR */
	[7] = { MCC_CLASS_REMOTE_METADATA, MCC_SCOPE_OPERATION },     /* BAD_RESP_ERR */
	[8] = { MCC_CLASS_LOCAL_CONFIGURATION, MCC_SCOPE_OPERATION }, /* LOC_ACCESS_ERR */
	[9] = { MCC_CLASS_REMOTE_METADATA, MCC_SCOPE_OPERATION },     /* REM_INV_REQ_ERR */
	[10] = { MCC_CLASS_REMOTE_METADATA, MCC_SCOPE_OPERATION },    /* REM_ACCESS_ERR */
	[11] = { MCC_CLASS_REMOTE_METADATA, MCC_SCOPE_OPERATION },    /* REM_OP_ERR */
	[12] = { MCC_CLASS_ROUTE_TIMEOUT, MCC_SCOPE_QP },             /* RETRY_EXC_ERR */
	[13] = { MCC_CLASS_RECEIVER_PRESSURE, MCC_SCOPE_QP },         /* RNR_RETRY_EXC_ERR */
	[14] = { MCC_CLASS_LOCAL_CONFIGURATION, MCC_SCOPE_QP },       /* LOC_RDD_VIOL_ERR */
	[15] = { MCC_CLASS_REMOTE_METADATA, MCC_SCOPE_OPERATION },    /* REM_INV_RD_REQ_ERR */
	[16] = { MCC_CLASS_REMOTE_METADATA, MCC_SCOPE_OPERATION },    /* REM_ABORT_ERR */
	[17] = { MCC_CLASS_LOCAL_CONFIGURATION, MCC_SCOPE_QP },       /* INV_EECN_ERR */
	[18] = { MCC_CLASS_LOCAL_CONFIGURATION, MCC_SCOPE_QP },       /* INV_EEC_STATE_ERR */
	[19] = { MCC_CLASS_FATAL, MCC_SCOPE_QP },                     /* FATAL_ERR */
	[20] = { MCC_CLASS_ROUTE_TIMEOUT, MCC_SCOPE_QP },             /* RESP_TIMEOUT_ERR */
	[21] = { MCC_CLASS_FATAL, MCC_SCOPE_QP },                     /* GENERAL_ERR */
	[22] = { MCC_CLASS_FATAL, MCC_SCOPE_QP },                     /* TM_ERR */
	[23] = { MCC_CLASS_FATAL, MCC_SCOPE_QP },                     /* TM_RNDV_INCOMPLETE */
};
#define WC_KNOWN ((int32_t)(sizeof(wc_oracle) / sizeof(wc_oracle[0])))
/* The oracle's numbering is rdma-core's (a stable ABI); catch a mismatch. */
_Static_assert(IBV_WC_RETRY_EXC_ERR == 12 && IBV_WC_TM_RNDV_INCOMPLETE == 23,
               "ibv_wc_status numbering");

/* Widest scope the RFC async matrix allows per ibv_event_type value
 * (0 CQ_ERR .. 19 WQ_FATAL); -1: any non-failure event (no failure scope
 * beyond a recovery hint, never a counted error). */
static const int8_t async_max_scope[] = {
	[0] = MCC_SCOPE_CQ,     /* CQ_ERR */
	[1] = MCC_SCOPE_QP,     /* QP_FATAL */
	[2] = MCC_SCOPE_QP,     /* QP_REQ_ERR */
	[3] = MCC_SCOPE_QP,     /* QP_ACCESS_ERR */
	[4] = -1,               /* COMM_EST */
	[5] = -1,               /* SQ_DRAINED */
	[6] = -1,               /* PATH_MIG (successful migration) */
	[7] = MCC_SCOPE_ROUTE,  /* PATH_MIG_ERR */
	[8] = MCC_SCOPE_DEVICE, /* DEVICE_FATAL */
	[9] = -1,               /* PORT_ACTIVE */
	[10] = MCC_SCOPE_PORT,  /* PORT_ERR */
	[11] = -1,              /* LID_CHANGE */
	[12] = -1,              /* PKEY_CHANGE */
	[13] = -1,              /* SM_CHANGE */
	[14] = MCC_SCOPE_QP,    /* SRQ_ERR */
	[15] = -1,              /* SRQ_LIMIT_REACHED */
	[16] = -1,              /* QP_LAST_WQE_REACHED */
	[17] = -1,              /* CLIENT_REREGISTER */
	[18] = -1,              /* GID_CHANGE */
	[19] = MCC_SCOPE_QP,    /* WQ_FATAL */
};
#define ASYNC_KNOWN ((int32_t)(sizeof(async_max_scope) / sizeof(async_max_scope[0])))
_Static_assert(IBV_EVENT_PORT_ERR == 10 && IBV_EVENT_WQ_FATAL == 19, "ibv_event_type numbering");

static void check_shape(const struct mcc_cls *c)
{
	MCC_FUZZ_CHECK(c->cls <= MCC_CLASS_RECOVERY_HINT, "class %u", c->cls);
	MCC_FUZZ_CHECK(c->scope <= MCC_SCOPE_DEVICE, "scope %u", c->scope);
	MCC_FUZZ_CHECK(c->reason < MCC_REASON_COUNT_, "reason %u", c->reason);
	MCC_FUZZ_CHECK((c->flags & ~ALL_FLAGS) == 0, "undefined flag bits %#x", c->flags);
	MCC_FUZZ_CHECK(c->reserved0 == 0 && c->reserved1 == 0, "reserved fields set");
	/* Classes outside the AIMD hard-error counters (RFC WC matrix note). */
	if (c->cls == MCC_CLASS_LOCAL_CONFIGURATION || c->cls == MCC_CLASS_REMOTE_METADATA ||
	    c->cls == MCC_CLASS_DERIVED_FLUSH)
		MCC_FUZZ_CHECK(!(c->flags & (MCC_CLS_F_HARD | MCC_CLS_F_PRESSURE |
		                             MCC_CLS_F_QUARANTINE)),
		               "class %u counts toward failure (flags %#x)", c->cls, c->flags);
	if (c->cls == MCC_CLASS_SUCCESS || c->cls == MCC_CLASS_RECOVERY_HINT ||
	    c->cls == MCC_CLASS_NONE)
		MCC_FUZZ_CHECK(!(c->flags & (MCC_CLS_F_HARD | MCC_CLS_F_QUARANTINE)),
		               "non-failure class %u is a failure (flags %#x)", c->cls, c->flags);
	if (c->flags & MCC_CLS_F_QUARANTINE)
		MCC_FUZZ_CHECK(c->cls == MCC_CLASS_FATAL && c->scope >= MCC_SCOPE_CQ,
		               "immediate quarantine from class %u scope %u", c->cls, c->scope);
	MCC_FUZZ_CHECK(mcc_class_str(c->cls) && mcc_scope_str(c->scope) &&
	                   mcc_reason_str(c->reason),
	               "a name function returned NULL");
}

static void check_wc(int32_t code, const struct mcc_cls *c)
{
	MCC_FUZZ_CHECK(c->scope == MCC_SCOPE_OPERATION || c->scope == MCC_SCOPE_QP,
	               "WC %d scope %u wider than QP", code, c->scope);
	MCC_FUZZ_CHECK(!(c->flags & MCC_CLS_F_QUARANTINE), "WC %d quarantines at once", code);
	if (code >= 0 && code < WC_KNOWN) {
		MCC_FUZZ_CHECK(c->flags & MCC_CLS_F_KNOWN, "known WC %d has no explicit row", code);
		MCC_FUZZ_CHECK(c->cls == wc_oracle[code].cls && c->scope == wc_oracle[code].scope,
		               "WC %d: class %u scope %u, RFC says %u/%u", code, c->cls, c->scope,
		               wc_oracle[code].cls, wc_oracle[code].scope);
	} else {
		MCC_FUZZ_CHECK(c->cls == MCC_CLASS_FATAL && c->scope == MCC_SCOPE_QP &&
		                   (c->flags & MCC_CLS_F_HARD) && !(c->flags & MCC_CLS_F_KNOWN),
		               "unknown WC %d: class %u scope %u flags %#x, want FATAL/QP hard", code,
		               c->cls, c->scope, c->flags);
	}
	if (code == 0)
		MCC_FUZZ_CHECK(c->reason == MCC_REASON_NONE && !(c->flags & MCC_CLS_F_HARD),
		               "SUCCESS carries failure evidence");
}

static void check_async(int32_t code, const struct mcc_cls *c)
{
	MCC_FUZZ_CHECK(c->reason == MCC_REASON_NONE, "async %d carries task reason %u", code,
	               c->reason);
	if (code >= 0 && code < ASYNC_KNOWN) {
		int8_t max = async_max_scope[code];
		MCC_FUZZ_CHECK(c->flags & MCC_CLS_F_KNOWN, "known async %d has no explicit row", code);
		if (max < 0)
			MCC_FUZZ_CHECK(!(c->flags & (MCC_CLS_F_HARD | MCC_CLS_F_QUARANTINE |
			                             MCC_CLS_F_PRESSURE)) &&
			                   c->cls != MCC_CLASS_FATAL,
			               "non-failure async %d counted as failure", code);
		else
			MCC_FUZZ_CHECK(c->scope <= (uint8_t)max, "async %d scope %u wider than %d",
			               code, c->scope, max);
	} else {
		MCC_FUZZ_CHECK(c->cls == MCC_CLASS_NONE && c->scope == MCC_SCOPE_NONE &&
		                   !(c->flags & ~(uint16_t)MCC_CLS_F_DIAG),
		               "unknown async %d changes state (class %u scope %u flags %#x)", code,
		               c->cls, c->scope, c->flags);
	}
}

static void check_cm(int32_t code, const struct mcc_cls *c)
{
	switch (code) {
	case MCC_RDMA_CM_EVENT_DISCONNECTED:
	case MCC_RDMA_CM_EVENT_UNREACHABLE:
		MCC_FUZZ_CHECK(c->scope <= MCC_SCOPE_ROUTE, "cm %d scope %u wider than route", code,
		               c->scope);
		break;
	case MCC_RDMA_CM_EVENT_DEVICE_REMOVAL:
		MCC_FUZZ_CHECK(c->scope <= MCC_SCOPE_DEVICE, "cm %d scope %u", code, c->scope);
		break;
	default:
		MCC_FUZZ_CHECK(c->cls == MCC_CLASS_NONE && c->scope == MCC_SCOPE_NONE &&
		                   !(c->flags & ~(uint16_t)MCC_CLS_F_DIAG),
		               "unknown cm %d changes state", code);
	}
}

static void check_signal(int32_t code, uint32_t aux, const struct mcc_cls *c)
{
	if (code == MCC_SIG_SOFT_DEADLINE && !(aux & MCC_CLS_AUX_POLLER_PROGRESS))
		MCC_FUZZ_CHECK(!(c->flags & MCC_CLS_F_HARD) && c->cls != MCC_CLASS_ROUTE_TIMEOUT,
		               "deadline during a poller stall counted as a route timeout");
	if (code == MCC_SIG_SOFT_DEADLINE && (aux & MCC_CLS_AUX_POLLER_PROGRESS))
		MCC_FUZZ_CHECK(c->cls == MCC_CLASS_ROUTE_TIMEOUT && c->scope <= MCC_SCOPE_ROUTE,
		               "deadline with poller progress is not a route timeout");
	if (code == MCC_SIG_SEGMENT_RPC_FAILED || code == MCC_SIG_CONTROL_RPC_FAILED)
		MCC_FUZZ_CHECK(!(c->flags & (MCC_CLS_F_HARD | MCC_CLS_F_PRESSURE |
		                             MCC_CLS_F_QUARANTINE)) &&
		                   c->cls != MCC_CLASS_CONGESTION,
		               "a control-plane RPC failure changes congestion state");
	if (code == MCC_SIG_POST_REJECTED)
		MCC_FUZZ_CHECK(!(c->flags & (MCC_CLS_F_HARD | MCC_CLS_F_QUARANTINE)),
		               "a post rejection fabricated failure evidence");
	if (code == MCC_SIG_CANCELLED || code == MCC_SIG_ENDPOINT_RECLAIMED)
		MCC_FUZZ_CHECK(!(c->flags & (MCC_CLS_F_HARD | MCC_CLS_F_QUARANTINE)),
		               "cancellation/reclamation created a root failure");
	if (code == MCC_SIG_CM_EVENT) {
		struct mcc_cls cm = mcc_classify(MCC_SRC_CM, (int32_t)aux, 0);
		MCC_FUZZ_CHECK(memcmp(&cm, c, sizeof(cm)) == 0,
		               "CM signal %u differs from the CM source", aux);
	}
	if (code <= 0 || code >= MCC_SIG_KIND_COUNT_)
		MCC_FUZZ_CHECK(c->cls == MCC_CLASS_NONE && !(c->flags & ~(uint16_t)MCC_CLS_F_DIAG),
		               "unknown signal %d changes state", code);
}

static void check_decision(int32_t code, const struct mcc_cls *c)
{
	MCC_FUZZ_CHECK(!(c->flags & (MCC_CLS_F_HARD | MCC_CLS_F_QUARANTINE)),
	               "decision %d counted as a failure", code);
	if (code == MCC_DEFER)
		MCC_FUZZ_CHECK(c->reason == MCC_REASON_BYTE_WINDOW, "DEFER reason %u", c->reason);
	if (code == MCC_AVOID)
		MCC_FUZZ_CHECK(c->reason == MCC_REASON_PATH_QUARANTINED, "AVOID reason %u",
		               c->reason);
}

static void check_projection(uint32_t reason)
{
	enum mcc_task_state s = mcc_reason_projection(reason);
	enum mcc_task_state want;

	switch (reason) {
	case MCC_REASON_NONE:
		want = MCC_TASK_NORMAL;
		break;
	case MCC_REASON_BYTE_WINDOW:
	case MCC_REASON_RECEIVER_PRESSURE:
	case MCC_REASON_CONGESTION_FEEDBACK:
	case MCC_REASON_ROUTE_TIMEOUT:
		want = MCC_TASK_CONGESTED;
		break;
	case MCC_REASON_PATH_QUARANTINED:
	case MCC_REASON_PROBE_FAILED:
	case MCC_REASON_NO_USABLE_PATH:
		want = MCC_TASK_LONG_UNAVAILABLE;
		break;
	default:
		want = MCC_TASK_UNKNOWN;
		break;
	}
	MCC_FUZZ_CHECK(s == want, "reason %u projects to %d, RFC caller table says %d", reason, s,
	               want);
	MCC_FUZZ_CHECK(mcc_reason_str(reason) && mcc_state_str(reason) && mcc_class_str(reason) &&
	                   mcc_scope_str(reason),
	               "a name function returned NULL for %u", reason);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mcc_fuzz_in in = { data, size };

	while (in.left) {
		uint8_t sb = mcc_fuzz_u8(&in);
		/* Mostly the defined sources, sometimes any byte. */
		uint32_t src = sb < 240 ? 1 + sb % 6 : sb;
		uint8_t cb = mcc_fuzz_u8(&in);
		int32_t code = cb < 200 ? (int32_t)(cb % 28) - 1 : (int32_t)mcc_fuzz_u32(&in);
		uint32_t aux = (mcc_fuzz_u8(&in) & 1) ? mcc_fuzz_u32(&in) : mcc_fuzz_u8(&in) % 16;
		struct mcc_cls a = mcc_classify((enum mcc_src)src, code, aux);
		struct mcc_cls b = mcc_classify((enum mcc_src)src, code, aux);

		MCC_FUZZ_CHECK(memcmp(&a, &b, sizeof(a)) == 0, "nondeterministic (%u, %d, %u)", src,
		               code, aux);
		check_shape(&a);
		switch (src) {
		case MCC_SRC_WC:
			check_wc(code, &a);
			/* aux is not an input of WC classification */
			b = mcc_classify(MCC_SRC_WC, code, aux ^ 0xffffffffu);
			MCC_FUZZ_CHECK(memcmp(&a, &b, sizeof(a)) == 0, "WC depends on aux");
			break;
		case MCC_SRC_ASYNC:
			check_async(code, &a);
			break;
		case MCC_SRC_CM:
			check_cm(code, &a);
			break;
		case MCC_SRC_SIGNAL:
			check_signal(code, aux, &a);
			break;
		case MCC_SRC_DECISION:
			check_decision(code, &a);
			break;
		case MCC_SRC_RELEASE:
			MCC_FUZZ_CHECK(!(a.flags & (MCC_CLS_F_HARD | MCC_CLS_F_QUARANTINE |
			                            MCC_CLS_F_PRESSURE)),
			               "release reason %d counted as a failure", code);
			break;
		default:
			MCC_FUZZ_CHECK(a.cls == MCC_CLASS_NONE &&
			                   !(a.flags & ~(uint16_t)MCC_CLS_F_DIAG),
			               "undefined source %u changes state", src);
			break;
		}
		check_projection(a.reason);
		check_projection((uint32_t)code);
	}
	return 0;
}
