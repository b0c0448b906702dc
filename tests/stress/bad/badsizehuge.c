/* SPDX-License-Identifier: MIT */
/* badsizehuge.c - test-only module: a 200-byte descriptor claiming
 * struct_size 0xffffffff (minor 0). A loader that trusted the size would
 * copy 4 GiB from the symbol; it must copy at most its own sizeof (the ABI's
 * "a later minor's tail is ignored") or refuse. Otherwise valid. */
#include "minimal.h"

MCC_POLICY_V1_DEFINE = {
	.abi_version = MCC_POLICY_ABI_V1,
	.struct_size = 0xffffffffu,
	.name = "badsizehuge",
	.description = "struct_size 0xffffffff",
	.mode = MCC_MODE_ENFORCE,
	.caps = MCC_CAP_THREAD_SAFE,
	.init = minimal_init,
	.fini = minimal_fini,
};
