/* SPDX-License-Identifier: MIT */
/*
 * delay.c - the enforce-mode module with the delay-target law (law_delay.c)
 * over the shared core: `[policy] mode = enforce`, `module = delay`.
 */
#include "policy.h"

extern const struct mcc_law mcc_law_delay;

MCC_CORE_MODULE(delay, "delay",
                "delay-target windows (Swift-like) and path quarantine (enforce)",
                MCC_MODE_ENFORCE, MCC_CAP_ENFORCES | MCC_CAP_TASK_EVIDENCE | MCC_CAP_THREAD_SAFE,
                mcc_law_delay);
