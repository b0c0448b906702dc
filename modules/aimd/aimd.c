/* SPDX-License-Identifier: MIT */
/*
 * aimd.c - the enforce-mode policy module: byte-window admission on device
 * and route domains, AIMD with hysteresis and path quarantine, all from the
 * shared core (modules/core). This file is only the descriptor and its mode.
 */
#include "policy.h"

MCC_CORE_MODULE(aimd, "aimd",
                "AIMD byte-window admission and path quarantine (enforce)",
                MCC_MODE_ENFORCE, MCC_CAP_ENFORCES | MCC_CAP_TASK_EVIDENCE | MCC_CAP_THREAD_SAFE,
                mcc_law_aimd);
