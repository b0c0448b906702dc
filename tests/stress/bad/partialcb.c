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

#include "../../test_module.h"

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

/* A handle: a 1-byte allocation counted in *open_count (NULL: out of memory). */
static void *handle_open(int *open_count)
{
	void *h = malloc(1);
	if (h)
		(*open_count)++;
	return h;
}

static void handle_close(int *open_count, void *h)
{
	free(h);
	(*open_count)--;
}

static int partial_lane_open(void *ctx, const struct mcc_lane_desc_v1 *desc, mcc_lane **lane)
{
	(void)desc;
	*lane = handle_open(&((struct partial_ctx *)ctx)->lanes);
	return *lane ? 0 : -ENOMEM;
}

static void partial_lane_close(void *ctx, mcc_lane *lane)
{
	handle_close(&((struct partial_ctx *)ctx)->lanes, lane);
}

static int partial_device_open(void *ctx, const struct mcc_device_desc_v1 *desc, mcc_device **dev)
{
	(void)desc;
	*dev = handle_open(&((struct partial_ctx *)ctx)->devices);
	return *dev ? 0 : -ENOMEM;
}

static void partial_device_close(void *ctx, mcc_device *dev)
{
	handle_close(&((struct partial_ctx *)ctx)->devices, dev);
}

static int partial_route_open(void *ctx, mcc_device *dev, const struct mcc_route_desc_v1 *desc,
                              mcc_route **route)
{
	(void)dev;
	(void)desc;
	*route = handle_open(&((struct partial_ctx *)ctx)->routes);
	return *route ? 0 : -ENOMEM;
}

static void partial_route_close(void *ctx, mcc_route *route)
{
	handle_close(&((struct partial_ctx *)ctx)->routes, route);
}

MCC_POLICY_V1_DEFINE = {
	MCC_TEST_MODULE_HEAD(sizeof(struct mcc_policy_v1), "partialcb",
	                     "lifecycle only; data path from the null module", MCC_CAP_THREAD_SAFE),
	.init = partial_init,
	.fini = partial_fini,
	.lane_open = partial_lane_open,
	.lane_close = partial_lane_close,
	.device_open = partial_device_open,
	.device_close = partial_device_close,
	.route_open = partial_route_open,
	.route_close = partial_route_close,
};
