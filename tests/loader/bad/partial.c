/* SPDX-License-Identifier: MIT */
/*
 * partial.c - a valid test-only module that
 *   - comes from a later minor of ABI v1 (abi 1.7, a descriptor larger than
 *     the host's: the tail must be ignored);
 *   - implements only init, fini and tick (every other slot is NULL and must
 *     be filled by the loader from the null module);
 *   - reports what the host gave it through host->log, so the tests can see
 *     the host table (engine, caps, max_lanes, clock) and its private key
 *     [module.partial] greeting, and see when fini runs.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "mcc_policy_v1.h"

struct partial_ctx {
	const struct mcc_host_v1 *host; /* valid until fini returns */
};

static int partial_init(const struct mcc_host_v1 *host, const struct mcc_config_v1 *cfg,
                        struct mcc_init_out_v1 *out, void **ctx)
{
	const char *greeting = cfg->module_get(cfg, "greeting");
	const char *foreign = cfg->module_get(cfg, "secret");
	struct partial_ctx *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	p->host = host;
	out->signal_mask = 1ull << MCC_SIG_BACKLOG;
	host->log(host->log_arg, MCC_LOG_INFO,
	          "partial: init engine=%s caps=0x%" PRIx64 " max_lanes=%u now=%" PRIu64
	          " abi=0x%x size=%u min_window=%" PRIu64 " greeting=%s secret=%s",
	          host->engine, host->caps, host->max_lanes, host->now_ns(host->clock_arg),
	          host->abi_version, host->struct_size, cfg->min_window_bytes,
	          greeting ? greeting : "(null)", foreign ? foreign : "(null)");
	*ctx = p;
	return 0;
}

static void partial_fini(void *ctx)
{
	struct partial_ctx *p = ctx;

	p->host->log(p->host->log_arg, MCC_LOG_INFO, "partial: fini");
	free(p);
}

static void partial_tick(void *ctx, uint64_t now_ns)
{
	(void)ctx;
	(void)now_ns;
}

/* A descriptor of a later minor: v1.0 followed by members this host does not
 * know. */
struct partial_v1_7 {
	struct mcc_policy_v1 v1_0;
	void (*future_callback)(void *ctx);
	uint64_t future_word;
};

static void partial_future(void *ctx)
{
	(void)ctx;
	abort(); /* the host must never call what it does not know */
}

MCC_EXPORT const struct partial_v1_7 mcc_policy_v1 = {
	.v1_0 = {
		.abi_version = MCC_ABI(1, 7),
		.struct_size = sizeof(struct partial_v1_7),
		.name = "partial",
		.description = "test-only module with a partial vtable from ABI 1.7",
		.mode = MCC_MODE_OBSERVE,
		.caps = MCC_CAP_THREAD_SAFE | MCC_CAP_RECORDS,
		.init = partial_init,
		.fini = partial_fini,
		.tick = partial_tick,
	},
	.future_callback = partial_future,
	.future_word = UINT64_MAX,
};
