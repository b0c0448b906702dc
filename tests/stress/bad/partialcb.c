/* SPDX-License-Identifier: MIT */
/*
 * partialcb.c - test-only module: implements the lifecycle (init, fini,
 * lane/device/route open and close) with its own tiny handles but leaves
 * every data-path callback NULL. The host fills those slots from the null
 * module, which then receives this module's handles: it must never
 * dereference them (the handles here are 1-byte allocations, so ASan
 * reports any such access).
 */
#include <errno.h>
#include <stdlib.h>

#include "mcc_policy_v1.h"

struct partial_ctx {
	int lanes, devices, routes; /* open counts, checked at fini */
};

static int partial_init(const struct mcc_host_v1 *host, const struct mcc_config_v1 *cfg,
                        struct mcc_init_out_v1 *out, void **ctx)
{
	(void)host;
	(void)cfg;
	(void)out;
	*ctx = calloc(1, sizeof(struct partial_ctx));
	return *ctx ? 0 : -ENOMEM;
}

static void partial_fini(void *ctx)
{
	struct partial_ctx *c = ctx;

	/* Leaving something open is the host's bug: make it visible (leak). */
	if (c->lanes || c->devices || c->routes)
		return;
	free(c);
}

static int partial_lane_open(void *ctx, const struct mcc_lane_desc *desc, mcc_lane **lane)
{
	(void)desc;
	*lane = malloc(1);
	if (!*lane)
		return -ENOMEM;
	((struct partial_ctx *)ctx)->lanes++;
	return 0;
}

static void partial_lane_close(void *ctx, mcc_lane *lane)
{
	free(lane);
	((struct partial_ctx *)ctx)->lanes--;
}

static int partial_device_open(void *ctx, const struct mcc_device_desc *desc, mcc_device **dev)
{
	(void)desc;
	*dev = malloc(1);
	if (!*dev)
		return -ENOMEM;
	((struct partial_ctx *)ctx)->devices++;
	return 0;
}

static void partial_device_close(void *ctx, mcc_device *dev)
{
	free(dev);
	((struct partial_ctx *)ctx)->devices--;
}

static int partial_route_open(void *ctx, mcc_device *dev, const struct mcc_route_desc *desc,
                              mcc_route **route)
{
	(void)dev;
	(void)desc;
	*route = malloc(1);
	if (!*route)
		return -ENOMEM;
	((struct partial_ctx *)ctx)->routes++;
	return 0;
}

static void partial_route_close(void *ctx, mcc_route *route)
{
	free(route);
	((struct partial_ctx *)ctx)->routes--;
}

MCC_POLICY_V1_DEFINE = {
	.abi_version = MCC_POLICY_ABI_V1,
	.struct_size = sizeof(struct mcc_policy_v1),
	.name = "partialcb",
	.description = "lifecycle only; data path from the null module",
	.mode = MCC_MODE_ENFORCE,
	.caps = MCC_CAP_THREAD_SAFE,
	.init = partial_init,
	.fini = partial_fini,
	.lane_open = partial_lane_open,
	.lane_close = partial_lane_close,
	.device_open = partial_device_open,
	.device_close = partial_device_close,
	.route_open = partial_route_open,
	.route_close = partial_route_close,
};
