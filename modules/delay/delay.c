/* SPDX-License-Identifier: MIT */
/*
 * delay.c - the enforce-mode module with the delay-target law (law_delay.c)
 * over the shared core: `[policy] mode = enforce`, `module = delay`.
 */
#include "policy.h"

extern const struct mcc_law mcc_law_delay;

static int delay_init(const struct mcc_host_v1 *host, const struct mcc_config_v1 *cfg,
                      struct mcc_init_out_v1 *out, void **ctx)
{
	return mcc_core_init(host, cfg, out, ctx, MCC_MODE_ENFORCE, &mcc_law_delay);
}

MCC_POLICY_V1_DEFINE = MCC_CORE_DESCRIPTOR(
	"delay", "delay-target windows (Swift-like) and path quarantine (enforce)",
	MCC_MODE_ENFORCE, MCC_CAP_ENFORCES | MCC_CAP_TASK_EVIDENCE | MCC_CAP_THREAD_SAFE,
	delay_init);
