/* SPDX-License-Identifier: MIT */
/* minimal.h - the smallest valid init/fini of the test-only modules, so each
 * bad module differs from a loadable one in exactly the defect it tests;
 * MINIMAL_MODULE is a whole descriptor around them. */
#ifndef MCC_TEST_BAD_MINIMAL_H
#define MCC_TEST_BAD_MINIMAL_H
#include "../../test_module.h"

static char minimal_ctx;

static int minimal_init(const struct mcc_host_v1 *host, const struct mcc_config_v1 *cfg,
                        struct mcc_init_out_v1 *out, void **ctx)
{
	(void)host;
	(void)cfg;
	(void)out;
	*ctx = &minimal_ctx;
	return 0;
}

static void minimal_fini(void *ctx)
{
	(void)ctx;
}

#define MINIMAL_MODULE(size, module_name, text)                                                    \
	MCC_POLICY_V1_DEFINE = {                                                                   \
		MCC_TEST_MODULE_HEAD(size, module_name, text, MCC_CAP_THREAD_SAFE),                \
		.init = minimal_init,                                                              \
		.fini = minimal_fini,                                                              \
	}
#endif
