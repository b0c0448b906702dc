/* SPDX-License-Identifier: MIT */
/* tent_demo.c - a two-machine world for bindings and smoke tests. */
#include "../fabric/model.h"
#include "tent.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct tent_demo {
	mcc_exec *ex;
	mcc_fab_model *m;
	mcc_actor *fab;
	struct mcc_host_env env;
	tent_engine *e;
	char *src, *dst;
	size_t len;
	struct mcc_fab_mr mr;
};

static int demo_seg(void *arg, uint32_t seg, struct mcc_seg_desc *out)
{
	struct tent_demo *d = arg;
	if (seg != 1)
		return -ENOENT;
	memset(out, 0, sizeof(*out));
	out->node = 1;
	out->ndev = 1;
	out->nports = 1;
	out->base = (uint64_t)(uintptr_t)d->dst;
	out->length = d->len;
	out->rkey[0] = mcc_fab_model_lookup_rkey(d->m, 1, 0, d->dst);
	return 0;
}

static void demo_sched(void *arg, uint64_t at)
{
	struct tent_demo *d = arg;
	mcc_exec_wake(d->fab, at);
}

static uint64_t demo_fab(void *arg, uint64_t now)
{
	struct tent_demo *d = arg;
	uint64_t n = mcc_fab_model_advance(d->m, now);
	return n == MCC_FAB_NEVER ? MCC_EXEC_PARK : n;
}

tent_demo *tent_demo_create(const char *cc_config, const char *cc_plugin_dir)
{
	struct tent_demo *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	struct mcc_fab_model_cfg mc;
	mcc_fab_model_cfg_defaults(&mc);
	mc.nodes = 2;
	mc.devs_per_node = 1;
	d->ex = mcc_exec_create(MCC_EXEC_SIM, 1);
	d->m = mcc_fab_model_create(&mc);
	d->len = 16u << 20;
	d->src = malloc(d->len);
	d->dst = calloc(1, d->len);
	if (!d->ex || !d->m || !d->src || !d->dst) {
		tent_demo_destroy(d);
		return NULL;
	}
	for (size_t i = 0; i < d->len; i++)
		d->src[i] = (char)(i * 7 + 3);
	struct mcc_fab_handle h = mcc_fab_model_handle(d->m);
	mcc_fab_dev *rd = h.ops->open_device(h.fab, 1, 0);
	h.ops->reg_mr(rd, d->dst, d->len, &d->mr);
	h.ops->close_device(rd);
	d->fab = mcc_exec_add(d->ex, "fabric", demo_fab, d, MCC_EXEC_PARK);
	mcc_fab_model_set_sched(d->m, demo_sched, d);
	d->env.ex = d->ex;
	d->env.fab = h;
	d->env.get_segment = demo_seg;
	d->env.seg_arg = d;
	d->env.cc_ignore_env = 0;
	struct tent_config c;
	tent_config_defaults(&c);
	c.node = 0;
	c.num_lanes = 2;
	c.cc_config = cc_config;
	c.cc_plugin_dir = cc_plugin_dir;
	d->e = tent_engine_create(&c, &d->env);
	if (!d->e) {
		tent_demo_destroy(d);
		return NULL;
	}
	tent_register_memory(d->e, d->src, d->len);
	return d;
}

static uint64_t g_batch;
static int done_fn(void *arg)
{
	struct tent_demo *d = arg;
	tent_status_t st;
	return tent_task_status(d->e, g_batch, 0, &st) == 0 && st.status != TENT_STATUS_PENDING;
}

uint64_t tent_demo_transfer(tent_demo *d, uint64_t bytes)
{
	if (!d || !bytes || bytes > d->len)
		return 0;
	uint64_t b = tent_allocate_batch(d->e, 1);
	tent_request_t rq;
	memset(&rq, 0, sizeof(rq));
	rq.opcode = TENT_OPCODE_WRITE;
	rq.source = d->src;
	rq.target_id = 1;
	rq.length = bytes;
	rq.priority = TENT_PRIO_MEDIUM;
	if (!b || tent_submit(d->e, b, &rq, 1) != 0)
		return 0;
	g_batch = b;
	mcc_exec_run(d->ex, mcc_exec_now(d->ex) + 10000000000ull, done_fn, d);
	return memcmp(d->src, d->dst, bytes) == 0 ? b : 0;
}

tent_engine *tent_demo_engine(tent_demo *d)
{
	return d ? d->e : NULL;
}

void tent_demo_destroy(tent_demo *d)
{
	if (!d)
		return;
	tent_engine_destroy(d->e);
	mcc_fab_model_destroy(d->m);
	mcc_exec_destroy(d->ex);
	free(d->src);
	free(d->dst);
	free(d);
}
