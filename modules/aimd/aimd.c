/* SPDX-License-Identifier: MIT */
/*
 * aimd.c - the enforce-mode policy module: byte-window admission on device
 * and route domains, AIMD with hysteresis and path quarantine, all from the
 * shared core (modules/core). This file is only the descriptor and its mode.
 */
#include "policy.h"

static int aimd_init(const struct mcc_host_v1 *host, const struct mcc_config_v1 *cfg,
                     struct mcc_init_out_v1 *out, void **ctx)
{
	return mcc_core_init(host, cfg, out, ctx, MCC_MODE_ENFORCE, &mcc_law_aimd);
}

MCC_POLICY_V1_DEFINE =
	MCC_CORE_DESCRIPTOR("aimd",
	                    "AIMD byte-window admission and path quarantine (enforce)",
	                    MCC_MODE_ENFORCE,
	                    MCC_CAP_ENFORCES | MCC_CAP_TASK_EVIDENCE | MCC_CAP_THREAD_SAFE,
	                    aimd_init);
