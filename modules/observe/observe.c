/* SPDX-License-Identifier: MIT */
/*
 * observe.c - the observe-mode policy module: the shared core computes the
 * same decisions as enforce but always admits (MCC_PERMIT_F_OBSERVED marks
 * what enforce would have refused), counts would_defer/would_avoid and keeps
 * a lock-free recorder of normalised signals and transitions (dump()).
 */
#include "policy.h"

MCC_CORE_MODULE(observe, "observe",
                "record signals and compute AIMD decisions, never defer or avoid",
                MCC_MODE_OBSERVE, MCC_CAP_RECORDS | MCC_CAP_TASK_EVIDENCE | MCC_CAP_THREAD_SAFE,
                mcc_law_aimd);
