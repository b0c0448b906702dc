/* SPDX-License-Identifier: MIT */
/*
 * null.c - the null policy module (controller off), and the template a module
 * author copies.
 *
 * A module is one exported descriptor. It names itself, declares its mode and
 * optional capabilities, and implements the callbacks it needs; every callback
 * left NULL is filled by libmcc with the built-in null behaviour
 * (plugin_api/lib/null_builtin.c: admit everything, settle each byte once, report
 * UNKNOWN and HEALTHY). Only init() is required. This module implements
 * nothing else, so through the loader it behaves exactly as the built-in.
 *
 * Writing a new module from this file (checklist in modules/null/README.md):
 *   - copy modules/null/ to modules/<name>/; set .name (= <name> of the file
 *     mcc-policy-<name>.so, [a-z0-9_-], at most 32 characters), .mode, .caps;
 *   - add the callbacks you need, each `static`, with the Thread: and
 *     Errors: contract of plugin_api/include/mcc_policy_v1.h; set up in init(), tear
 *     down in fini(), never in a constructor;
 *   - keep the hot path (try_acquire, release, on_completion,
 *     poller_progress) free of locks, system calls, allocation, clock reads
 *     and logging; log only through host->log.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>

#include "mcc_policy_v1.h"

/* The context handed to every callback. A real module allocates its state in
 * init() (copying what it keeps of the borrowed `cfg`) and frees it in fini(). */
static const char null_ctx_token;

static int null_init(const struct mcc_host_v1 *host, const struct mcc_config_v1 *cfg,
                     struct mcc_init_out_v1 *out, void **ctx)
{
	if (!host || !cfg || !out || !ctx)
		return -EINVAL;
	/* Every struct whole or refused (mcc_policy_v1.h, frozen sizes). */
	if (host->struct_size < MCC_HOST_V1_0_SIZE || cfg->struct_size < MCC_CONFIG_V1_0_SIZE ||
	    out->struct_size < MCC_INIT_OUT_V1_0_SIZE)
		return -EINVAL;
	/* Subscribe to nothing. */
	out->signal_mask = 0;
	out->want_async_events = 0;
	*ctx = (void *)&null_ctx_token;
	return 0;
}

/* ABI 1.2: the keys of [module.null], checked before init() and by
 * `mcc check`. A module with keys looks each up in its own table and
 * checks the value; this one takes none. */
static int null_config_check(const char *key, const char *value, char *why, size_t len)
{
	(void)key;
	(void)value;
	if (why && len)
		snprintf(why, len, "the null module takes no keys");
	return -ENOENT;
}

/* The one exported symbol, const data: loading the module runs no code. */
MCC_POLICY_V1_DEFINE = {
	.abi_version = MCC_POLICY_ABI_V1,
	.struct_size = sizeof(struct mcc_policy_v1),
	.name = "null",
	.description = "controller off: admits everything, records nothing",
	.mode = MCC_MODE_OFF,
	.caps = 0, /* no optional capability (MCC_CAP_*) */
	.init = null_init,
	.config_check = null_config_check,
	/* Every other callback NULL: libmcc fills it with the built-in's. */
};
