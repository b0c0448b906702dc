/* SPDX-License-Identifier: MIT */
/*
 * classify.h - normalised failure classification (RFC "Completion/WC",
 * "Async Event" and "Non-WC and Control-Plane" matrices).
 *
 * mcc_classify() is a PURE function: no side effects, no global state other
 * than constant tables, same output for the same input. Everything that maps
 * a raw signal to (class, scope, task reason, controller action) lives here,
 * so the tables can be tested row by row without a module instance.
 */
#ifndef MCC_CORE_CLASSIFY_H
#define MCC_CORE_CLASSIFY_H

#include <stdint.h>

#include "mcc_policy_v1.h"

/* Where a raw code comes from. */
enum mcc_src {
	MCC_SRC_WC = 1,       /* code: enum ibv_wc_status */
	MCC_SRC_ASYNC = 2,    /* code: enum ibv_event_type */
	MCC_SRC_CM = 3,       /* code: enum rdma_cm_event_type */
	MCC_SRC_SIGNAL = 4,   /* code: enum mcc_signal_kind; aux: see below */
	MCC_SRC_DECISION = 5, /* code: enum mcc_decision (DEFER / AVOID) */
	MCC_SRC_RELEASE = 6,  /* code: enum mcc_release_reason */
};

/* aux for MCC_SRC_SIGNAL / MCC_SIG_SOFT_DEADLINE: the device's poller made
 * progress in the epoch of the deadline. For MCC_SIG_CM_EVENT, aux is the
 * rdma_cm event type (mcc_signal_v1.raw). */
#define MCC_CLS_AUX_POLLER_PROGRESS 1u

/* Controller actions (mcc_cls.flags). */
#define MCC_CLS_F_KNOWN (1u << 0)      /* an explicit table row, not the fallback */
#define MCC_CLS_F_HARD (1u << 1)       /* one QP/route hard error toward the threshold */
#define MCC_CLS_F_PRESSURE (1u << 2)   /* receiver pressure: a high-pressure epoch (route only) */
#define MCC_CLS_F_QUARANTINE (1u << 3) /* fatal evidence: quarantine the whole scope now */
#define MCC_CLS_F_HINT (1u << 4)       /* recovery hint: no state change; recovery still
                                        * requires a new-generation probe */
#define MCC_CLS_F_DIAG (1u << 5)       /* diagnostic only: recorded, never counted */
#define MCC_CLS_F_TELEMETRY (1u << 6)  /* backlog / delivery telemetry */
#define MCC_CLS_F_GENERATION (1u << 7) /* announces a new endpoint generation */
#define MCC_CLS_F_ESCALATE (1u << 8)   /* escalates only if the refreshed generation
                                        * still times out (remote metadata) */

struct mcc_cls {
	uint8_t cls;    /* enum mcc_class */
	uint8_t scope;  /* enum mcc_scope: the widest scope the evidence may affect */
	uint8_t reason; /* enum mcc_reason recorded on the task; NONE: no task evidence */
	uint8_t reserved0;
	uint16_t flags; /* MCC_CLS_F_* */
	uint16_t reserved1;
};

/* The one classification function (pure). Unknown WC statuses fail closed
 * (FATAL/QP, hard error, flags without KNOWN); unknown async events, cm
 * events and signals change nothing (NONE, flags without KNOWN). */
struct mcc_cls mcc_classify(enum mcc_src src, int32_t code, uint32_t aux);

static inline struct mcc_cls mcc_classify_wc(int32_t wc_status)
{
	return mcc_classify(MCC_SRC_WC, wc_status, 0);
}

static inline struct mcc_cls mcc_classify_async(int32_t event_type)
{
	return mcc_classify(MCC_SRC_ASYNC, event_type, 0);
}

/* Task-state class a reason projects to (RFC "Caller Observability"):
 * MCC_TASK_CONGESTED, MCC_TASK_LONG_UNAVAILABLE or MCC_TASK_UNKNOWN;
 * MCC_TASK_NORMAL for MCC_REASON_NONE. Pure. */
enum mcc_task_state mcc_reason_projection(uint32_t reason);

/* Short lower-case names used by the recorder's JSON lines. Pure. */
const char *mcc_class_str(uint32_t cls);
const char *mcc_scope_str(uint32_t scope);
const char *mcc_state_str(uint32_t state);
const char *mcc_reason_str(uint32_t reason);

#endif /* MCC_CORE_CLASSIFY_H */
