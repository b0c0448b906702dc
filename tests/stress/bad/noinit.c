/* SPDX-License-Identifier: MIT */
/* noinit.c - test-only module: a valid header whose every callback is NULL,
 * init() included. libmcc refuses a descriptor without init(). */
#include "mcc_policy_v1.h"

MCC_POLICY_V1_DEFINE = {
	.abi_version = MCC_POLICY_ABI_V1,
	.struct_size = sizeof(struct mcc_policy_v1),
	.name = "noinit",
	.description = "every callback NULL",
	.mode = MCC_MODE_ENFORCE,
	.caps = MCC_CAP_THREAD_SAFE,
};
