/* SPDX-License-Identifier: MIT */
/*
 * observe.c - the observe-mode policy module: the shared core computes the
 * same decisions as enforce but always admits (MCC_PERMIT_F_OBSERVED marks
 * what enforce would have refused), counts would_defer/would_avoid and keeps
 * a lock-free recorder of normalised signals and transitions (dump()).
 */
#include "policy.h"

static int observe_init(const struct mcc_host_v1 *host, const struct mcc_config_v1 *cfg,
                        struct mcc_init_out_v1 *out, void **ctx)
{
	return mcc_core_init(host, cfg, out, ctx, MCC_MODE_OBSERVE, &mcc_law_aimd);
}

MCC_POLICY_V1_DEFINE =
	MCC_CORE_DESCRIPTOR("observe",
	                    "record signals and compute AIMD decisions, never defer or avoid",
	                    MCC_MODE_OBSERVE,
	                    MCC_CAP_RECORDS | MCC_CAP_TASK_EVIDENCE | MCC_CAP_THREAD_SAFE,
	                    observe_init);
