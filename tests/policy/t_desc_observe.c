/* SPDX-License-Identifier: MIT */
/* The observe module's descriptor under a test name, built from the core and
 * the AIMD law as modules/observe/observe.c builds it. */
#include "policy.h"

static int observe_init(const struct mcc_host_v1 *host, const struct mcc_config_v1 *cfg,
                        struct mcc_init_out_v1 *out, void **ctx)
{
	return mcc_core_init(host, cfg, out, ctx, MCC_MODE_OBSERVE, &mcc_law_aimd);
}

const struct mcc_policy_v1 mcc_test_observe_v1 =
	MCC_CORE_DESCRIPTOR("observe", "observe (test build)", MCC_MODE_OBSERVE,
	                    MCC_CAP_RECORDS | MCC_CAP_TASK_EVIDENCE | MCC_CAP_THREAD_SAFE,
	                    observe_init);
