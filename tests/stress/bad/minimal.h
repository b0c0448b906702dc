/* SPDX-License-Identifier: MIT */
/* minimal.h - the smallest valid init/fini of the test-only modules, so each
 * bad module differs from a loadable one in exactly the defect it tests. */
#ifndef MCC_TEST_BAD_MINIMAL_H
#define MCC_TEST_BAD_MINIMAL_H
#include "mcc_policy_v1.h"

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
#endif
