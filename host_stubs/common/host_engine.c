/* SPDX-License-Identifier: MIT */
/* host_engine.c - one interface over the TE-like and TENT-like stubs. */
#include "host_engine.h"

#include <errno.h>
#include <string.h>

void mcc_host_eng_cfg_defaults(struct mcc_host_eng_cfg *c, int is_tent, uint32_t node)
{
	memset(c, 0, sizeof(*c));
	c->is_tent = is_tent;
	te_config_defaults(&c->te);
	tent_config_defaults(&c->tent);
	c->te.node = c->tent.node = node;
}

void mcc_host_eng_cfg_ib(struct mcc_host_eng_cfg *c, int timeout, int retry_cnt, int rnr_retry)
{
	if (timeout >= 0)
		c->te.ib_timeout = c->tent.ib_timeout = (uint8_t)timeout;
	if (retry_cnt >= 0)
		c->te.ib_retry_cnt = c->tent.ib_retry_cnt = (uint8_t)retry_cnt;
	if (rnr_retry >= 0)
		c->te.ib_rnr_retry = c->tent.ib_rnr_retry = (uint8_t)rnr_retry;
}

int mcc_host_eng_create(struct mcc_host_engine *h, const struct mcc_host_eng_cfg *c,
                        const struct mcc_host_env *env,
                        void (*done)(void *arg, uint64_t batch, uint64_t task), void *arg)
{
	memset(h, 0, sizeof(*h));
	if (!c->is_tent) {
		h->te = te_engine_create(&c->te, env);
		if (h->te)
			te_set_task_notify(h->te, done, arg);
	} else {
		h->tent = tent_engine_create(&c->tent, env);
		if (h->tent)
			tent_set_task_notify(h->tent, done, arg);
	}
	return h->te || h->tent ? 0 : -ENOMEM;
}

int mcc_host_eng_register(const struct mcc_host_engine *h, void *addr, size_t len)
{
	return h->te ? te_register_memory(h->te, addr, len) : tent_register_memory(h->tent, addr, len);
}

void mcc_host_eng_destroy(struct mcc_host_engine *h)
{
	if (h->te)
		te_engine_destroy(h->te);
	if (h->tent)
		tent_engine_destroy(h->tent);
	memset(h, 0, sizeof(*h));
}

int mcc_host_eng_submit(const struct mcc_host_engine *h, const struct mcc_host_xfer *x,
                        uint64_t *batch)
{
	if (h->te) {
		*batch = te_allocate_batch(h->te, 1);
		if (*batch == TE_INVALID_BATCH)
			return -ENOMEM;
		struct te_request rq = {x->opcode, x->src, (int32_t)x->seg, x->off, x->len};
		return te_submit(h->te, *batch, &rq, 1);
	}
	*batch = tent_allocate_batch(h->tent, 1);
	if (!*batch)
		return -ENOMEM;
	tent_request_t rq = {.opcode = x->opcode,
	                     .source = x->src,
	                     .target_id = x->seg,
	                     .target_offset = x->off,
	                     .length = x->len,
	                     .priority = x->tent_prio};
	return tent_submit(h->tent, *batch, &rq, 1);
}

int mcc_host_eng_status(const struct mcc_host_engine *h, uint64_t batch, uint64_t *transferred)
{
	int rc, st;
	uint64_t moved;
	if (h->te) {
		struct te_transfer_status ts = {0, 0};
		rc = te_get_transfer_status(h->te, batch, 0, &ts);
		st = ts.status == TE_STATUS_COMPLETED ? MCC_HOST_DONE
		     : ts.status == TE_STATUS_FAILED  ? MCC_HOST_FAILED
		                                      : MCC_HOST_PENDING;
		moved = ts.transferred_bytes;
	} else {
		tent_status_t ts = {0, 0};
		rc = tent_task_status(h->tent, batch, 0, &ts);
		st = ts.status == TENT_STATUS_COMPLETED ? MCC_HOST_DONE
		     : ts.status == TENT_STATUS_FAILED  ? MCC_HOST_FAILED
		                                        : MCC_HOST_PENDING;
		moved = ts.transferred_bytes;
	}
	if (transferred)
		*transferred = rc ? 0 : moved;
	return rc ? (rc < 0 ? rc : -EINVAL) : st;
}

int mcc_host_eng_cstate(const struct mcc_host_engine *h, uint64_t batch, int *state)
{
	return h->te ? te_get_task_congestion_state(h->te, batch, 0, state)
	             : tent_get_task_congestion_state(h->tent, batch, 0, state);
}

int mcc_host_eng_detail(const struct mcc_host_engine *h, uint64_t batch,
                        struct mcc_task_detail_v1 *d)
{
	memset(d, 0, sizeof(*d));
	d->struct_size = sizeof(*d);
	int rc = h->te ? te_get_task_congestion_detail(h->te, batch, 0, d)
	               : tent_get_task_congestion_detail(h->tent, batch, 0, d);
	if (rc)
		d->state = MCC_TASK_UNKNOWN;
	return rc;
}

int mcc_host_eng_free(const struct mcc_host_engine *h, uint64_t batch)
{
	return h->te ? te_free_batch(h->te, batch) : tent_free_batch(h->tent, batch);
}

int mcc_host_eng_dstats(const struct mcc_host_engine *h, uint32_t ctx, int seg, int dev,
                        struct mcc_domain_stats_v1 *out)
{
	memset(out, 0, sizeof(*out));
	out->struct_size = sizeof(*out);
	return h->te ? te_domain_stats(h->te, ctx, seg, dev, out)
	             : tent_domain_stats(h->tent, ctx, seg, dev, out);
}

uint32_t mcc_host_eng_nctx(const struct mcc_host_engine *h)
{
	return h->te ? te_num_contexts(h->te) : tent_num_devices(h->tent);
}

void mcc_host_eng_stall(const struct mcc_host_engine *h, uint32_t ctx, uint64_t dur_ns)
{
	if (h->te)
		te_inject_poller_stall(h->te, ctx, dur_ns);
	else
		tent_inject_poller_stall(h->tent, ctx, dur_ns);
}

#define HOST_ENG_STATS(t)                                                                  \
	((struct mcc_host_eng_stats){(t).defers, (t).avoids, (t).admits, (t).rail_pauses,       \
	                             (t).wc_errors, (t).flushes, (t).cpu_virtual_ns,            \
	                             (t).permits_live, (t).slices_posted, (t).handoffs,         \
	                             (t).slices_retried, 0})

void mcc_host_eng_stats(const struct mcc_host_engine *h, struct mcc_host_eng_stats *o)
{
	if (h->te) {
		struct te_stats t;
		te_get_stats(h->te, &t);
		*o = HOST_ENG_STATS(t);
		o->no_usable_path = t.no_usable_path;
	} else {
		struct tent_stats t;
		tent_get_stats(h->tent, &t);
		*o = HOST_ENG_STATS(t);
	}
}

const char *mcc_host_eng_cc_mode(const struct mcc_host_engine *h)
{
	return h->te ? te_cc_mode(h->te) : tent_cc_mode(h->tent);
}
