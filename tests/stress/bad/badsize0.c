/* SPDX-License-Identifier: MIT */
/* badsize0.c - test-only module: a descriptor whose struct_size is 0 (the
 * loader must refuse it: smaller than the v1.0 member set). Otherwise
 * valid. */
#include "minimal.h"

MCC_POLICY_V1_DEFINE = {
	.abi_version = MCC_POLICY_ABI_V1,
	.struct_size = 0,
	.name = "badsize0",
	.description = "struct_size 0",
	.mode = MCC_MODE_ENFORCE,
	.caps = MCC_CAP_THREAD_SAFE,
	.init = minimal_init,
	.fini = minimal_fini,
};
