/* SPDX-License-Identifier: MIT */
/* initonly.c - test-only module: init() and fini() only; every other
 * callback is NULL and the host fills it from the built-in null module. */
#include "minimal.h"

MCC_POLICY_V1_DEFINE = {
	.abi_version = MCC_POLICY_ABI_V1,
	.struct_size = sizeof(struct mcc_policy_v1),
	.name = "initonly",
	.description = "init/fini only",
	.mode = MCC_MODE_ENFORCE,
	.caps = MCC_CAP_THREAD_SAFE,
	.init = minimal_init,
	.fini = minimal_fini,
};
