/* SPDX-License-Identifier: MIT */
/*
 * spy.c - a test policy module (enforce) that counts every callback the
 * engine hosts make and checks byte settlement, with a programmable
 * admission decision. Test-only: also exports mcc_spy (the counters).
 */
#include "../test_module.h"
#include "spy.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

__attribute__((visibility("default"))) struct mcc_spy mcc_spy;

struct mcc_device {
	int id;
};
struct mcc_route {
	int avoid;
	struct mcc_device *dev;
};
struct mcc_lane {
	int id;
};

static int s_init(const struct mcc_host_v1 *h, const struct mcc_config_v1 *c,
                  struct mcc_init_out_v1 *o, void **ctx)
{
	(void)c;
	o->signal_mask = ~atomic_load(&mcc_spy.sig_unsubscribed);
	o->want_async_events = !atomic_load(&mcc_spy.no_async);
	atomic_store(&mcc_spy.max_lanes, h->max_lanes);
	*ctx = &mcc_spy;
	return 0;
}
static void s_fini(void *ctx)
{
	(void)ctx;
}
static int s_lane_open(void *ctx, const struct mcc_lane_desc_v1 *d, mcc_lane **l)
{
	(void)ctx;
	*l = calloc(1, sizeof(**l));
	(*l)->id = (int)d->lane_id;
	atomic_fetch_add(&mcc_spy.lane_open, 1);
	if (d->lane_id >= atomic_load(&mcc_spy.max_lanes))
		atomic_fetch_add(&mcc_spy.lane_over, 1);
	return 0;
}
static void s_lane_close(void *ctx, mcc_lane *l)
{
	(void)ctx;
	free(l);
}
static int s_dev_open(void *ctx, const struct mcc_device_desc_v1 *d, mcc_device **dev)
{
	(void)ctx;
	*dev = calloc(1, sizeof(**dev));
	(*dev)->id = (int)d->device_id;
	atomic_fetch_add(&mcc_spy.device_open, 1);
	return 0;
}
static void s_dev_close(void *ctx, mcc_device *d)
{
	(void)ctx;
	free(d);
}
static int s_route_open(void *ctx, mcc_device *dev, const struct mcc_route_desc_v1 *d, mcc_route **r)
{
	(void)ctx;
	*r = calloc(1, sizeof(**r));
	(*r)->dev = dev;
	size_t n = strlen(d->peer_path), k = strlen(mcc_spy.avoid_suffix);
	(*r)->avoid = k && n >= k && !strcmp(d->peer_path + n - k, mcc_spy.avoid_suffix);
	atomic_store(&mcc_spy.last_base_rtt_ns,
	             MCC_HAS_MEMBER(struct mcc_route_desc_v1, d->struct_size, base_rtt_ns)
	                     ? d->base_rtt_ns
	                     : 0);
	atomic_fetch_add(&mcc_spy.route_open, 1);
	return 0;
}
static int s_route_rebind(void *ctx, mcc_route *r, mcc_device *dev, uint32_t port, uint32_t cq)
{
	(void)ctx;
	(void)port;
	(void)cq;
	r->dev = dev;
	atomic_fetch_add(&mcc_spy.route_rebind, 1);
	return 0;
}
static void s_route_close(void *ctx, mcc_route *r)
{
	(void)ctx;
	free(r);
}
static int s_try_acquire(mcc_lane *l, mcc_route *r, uint64_t bytes, uint32_t gen,
                         const struct mcc_task_ref_v1 *t, struct mcc_permit_v1 *p)
{
	(void)l;
	(void)t;
	atomic_fetch_add(&mcc_spy.acquire, 1);
	uint64_t df = atomic_load(&mcc_spy.defer_first);
	if (df && atomic_fetch_sub(&mcc_spy.defer_first, 1) > 0) {
		atomic_fetch_add(&mcc_spy.defer, 1);
		p->reason = MCC_REASON_BYTE_WINDOW;
		return MCC_DEFER;
	}
	if (r->avoid) {
		atomic_fetch_add(&mcc_spy.avoid, 1);
		p->reason = MCC_REASON_PATH_QUARANTINED;
		return MCC_AVOID;
	}
	p->flags = MCC_PERMIT_F_LIVE;
	p->route = r;
	p->device = r->dev;
	p->bytes = bytes;
	p->generation = gen;
	atomic_store(&mcc_spy.last_generation, gen);
	atomic_fetch_add(&mcc_spy.live_bytes, (int64_t)bytes);
	atomic_fetch_add(&mcc_spy.admit, 1);
	return MCC_ADMIT;
}
static int s_try_acquire_qos(mcc_lane *l, mcc_route *r, uint64_t bytes, uint32_t gen,
                             const struct mcc_task_ref_v1 *t, uint32_t cls,
                             struct mcc_permit_v1 *p)
{
	if (cls >= MCC_QOS_CLASS_COUNT_)
		return -EINVAL;
	atomic_fetch_add(&mcc_spy.qos_acquire[cls], 1);
	uint64_t need = atomic_load(&mcc_spy.defer_low_until_high);
	if (cls == MCC_QOS_LOW && atomic_load(&mcc_spy.qos_admit[MCC_QOS_HIGH]) < need) {
		atomic_fetch_add(&mcc_spy.acquire, 1);
		atomic_fetch_add(&mcc_spy.defer, 1);
		if (atomic_load(&mcc_spy.qos_admit[MCC_QOS_HIGH]))
			atomic_fetch_add(&mcc_spy.low_deferred_after_high, 1);
		p->reason = MCC_REASON_BYTE_WINDOW;
		return MCC_DEFER;
	}
	int rc = s_try_acquire(l, r, bytes, gen, t, p);
	if (rc == MCC_ADMIT)
		atomic_fetch_add(&mcc_spy.qos_admit[cls], 1);
	return rc;
}
static int settle(struct mcc_permit_v1 *p, uint64_t bytes)
{
	if (!(p->flags & MCC_PERMIT_F_LIVE) || bytes > p->bytes) {
		atomic_fetch_add(&mcc_spy.over_settle, 1);
		return -EALREADY;
	}
	p->bytes -= bytes;
	atomic_fetch_sub(&mcc_spy.live_bytes, (int64_t)bytes);
	if (!p->bytes)
		p->flags &= ~MCC_PERMIT_F_LIVE;
	return 0;
}
static int s_release(mcc_lane *l, struct mcc_permit_v1 *p, uint64_t bytes, uint32_t reason)
{
	(void)l;
	(void)reason;
	atomic_fetch_add(&mcc_spy.release, 1);
	return settle(p, bytes);
}
static void s_completion(mcc_lane *l, struct mcc_permit_v1 *p, const struct mcc_completion_v1 *wc)
{
	(void)l;
	atomic_fetch_add(&mcc_spy.completion, 1);
	atomic_fetch_add(&mcc_spy.wc_status[wc->wc_status & 31], 1);
	settle(p, wc->bytes);
}
static void s_progress(mcc_lane *l, mcc_device *d, uint32_t n)
{
	(void)l;
	(void)d;
	(void)n;
	atomic_fetch_add(&mcc_spy.progress, 1);
}
static void s_async(void *ctx, const struct mcc_async_event_v1 *ev)
{
	(void)ctx;
	atomic_fetch_add(&mcc_spy.async, 1);
	atomic_fetch_add(&mcc_spy.async_type[ev->event_type & 31], 1);
	if (atomic_load(&mcc_spy.no_async))
		atomic_fetch_add(&mcc_spy.async_unwanted, 1);
}
static void s_signal(void *ctx, const struct mcc_signal_v1 *s)
{
	(void)ctx;
	atomic_fetch_add(&mcc_spy.signal, 1);
	if (s->kind < MCC_SIG_KIND_COUNT_)
		atomic_fetch_add(&mcc_spy.sig_kind[s->kind], 1);
	if (s->kind < 64 && (atomic_load(&mcc_spy.sig_unsubscribed) & (1ull << s->kind)))
		atomic_fetch_add(&mcc_spy.sig_unwanted, 1);
}
static void s_tick(void *ctx, uint64_t now)
{
	(void)ctx;
	(void)now;
	atomic_fetch_add(&mcc_spy.tick, 1);
}
static int s_task_query(void *ctx, const struct mcc_task_ref_v1 *t, uint32_t f,
                        struct mcc_task_detail_v1 *o)
{
	(void)ctx;
	(void)t;
	(void)f;
	(void)o;
	atomic_fetch_add(&mcc_spy.task_query, 1);
	return MCC_TASK_NORMAL;
}
static void s_batch_free(void *ctx, uint64_t b)
{
	(void)ctx;
	(void)b;
	atomic_fetch_add(&mcc_spy.batch_free, 1);
}

MCC_POLICY_V1_DEFINE = {
    MCC_TEST_MODULE_HEAD(sizeof(struct mcc_policy_v1), "spy", "test spy",
                         MCC_CAP_ENFORCES | MCC_CAP_THREAD_SAFE),
    .init = s_init,
    .fini = s_fini,
    .lane_open = s_lane_open,
    .lane_close = s_lane_close,
    .device_open = s_dev_open,
    .device_close = s_dev_close,
    .route_open = s_route_open,
    .route_rebind = s_route_rebind,
    .route_close = s_route_close,
    .try_acquire = s_try_acquire,
    .release = s_release,
    .on_completion = s_completion,
    .poller_progress = s_progress,
    .on_async_event = s_async,
    .on_signal = s_signal,
    .tick = s_tick,
    .task_query = s_task_query,
    .batch_free = s_batch_free,
    .try_acquire_qos = s_try_acquire_qos,
};
