/* SPDX-License-Identifier: MIT */
/* tent_demo.c - a two-machine world for bindings and smoke tests. */
#include "../fabric/model.h"
#include "tent.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct tent_demo {
	struct mcc_host_pair p; /* node 0 runs the engine */
	tent_engine *e;
};

tent_demo *tent_demo_create(const char *cc_config, const char *cc_plugin_dir)
{
	struct tent_demo *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	struct mcc_fab_model_cfg mc;
	mcc_fab_model_cfg_defaults(&mc);
	mc.devs_per_node = 1;
	if (mcc_host_pair_init(&d->p, MCC_EXEC_SIM, 1, &mc, 16u << 20) != 0) {
		tent_demo_destroy(d);
		return NULL;
	}
	for (size_t i = 0; i < d->p.len; i++)
		d->p.src[i] = (char)(i * 7 + 3);
	struct tent_config c;
	tent_config_defaults(&c);
	c.node = 0;
	c.num_lanes = 2;
	c.cc_config = cc_config;
	c.cc_plugin_dir = cc_plugin_dir;
	d->e = tent_engine_create(&c, &d->p.env);
	if (!d->e) {
		tent_demo_destroy(d);
		return NULL;
	}
	tent_register_memory(d->e, d->p.src, d->p.len);
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
	if (!d || !bytes || bytes > d->p.len)
		return 0;
	uint64_t b = tent_allocate_batch(d->e, 1);
	tent_request_t rq;
	memset(&rq, 0, sizeof(rq));
	rq.opcode = TENT_OPCODE_WRITE;
	rq.source = d->p.src;
	rq.target_id = 1;
	rq.length = bytes;
	rq.priority = TENT_PRIO_MEDIUM;
	if (!b || tent_submit(d->e, b, &rq, 1) != 0)
		return 0;
	g_batch = b;
	mcc_exec_run(d->p.ex, mcc_exec_now(d->p.ex) + 10000000000ull, done_fn, d);
	return memcmp(d->p.src, d->p.dst, bytes) == 0 ? b : 0;
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
	mcc_host_pair_fini(&d->p);
	free(d);
}
