/* SPDX-License-Identifier: MIT */
/* The aimd module's descriptor under a test name, built from the core and the
 * AIMD law as modules/aimd/aimd.c builds it (the shipped module has no test
 * hook; tests/policy/test_loader_policy.c loads the shipped .so itself). */
#include "policy.h"

static int aimd_init(const struct mcc_host_v1 *host, const struct mcc_config_v1 *cfg,
                     struct mcc_init_out_v1 *out, void **ctx)
{
	return mcc_core_init(host, cfg, out, ctx, MCC_MODE_ENFORCE, &mcc_law_aimd);
}

const struct mcc_policy_v1 mcc_test_aimd_v1 =
	MCC_CORE_DESCRIPTOR("aimd", "aimd (test build)", MCC_MODE_ENFORCE,
	                    MCC_CAP_ENFORCES | MCC_CAP_TASK_EVIDENCE | MCC_CAP_THREAD_SAFE, aimd_init);
