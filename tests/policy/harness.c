/* SPDX-License-Identifier: MIT */
#include "harness.h"

#include <infiniband/verbs.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t th_clock(void *arg)
{
	return ((struct th *)arg)->now;
}

static void th_log(void *arg, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void th_log(void *arg, int level, const char *fmt, ...)
{
	struct th *h = arg;
	va_list ap;
	h->logs++;
	va_start(ap, fmt);
	vsnprintf(h->last_log, sizeof(h->last_log), fmt, ap);
	va_end(ap);
	if (getenv("MCC_TEST_VERBOSE")) {
		fprintf(stderr, "[log %d] ", level);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
}

void th_cfg_defaults(struct mcc_config_v1 *c)
{
	memset(c, 0, sizeof(*c));
	c->struct_size = sizeof(*c);
	c->mode = MCC_MODE_ENFORCE;
	c->min_window_bytes = 131072;
	c->max_window_bytes = 16777216;
	c->probe_window_bytes = 0;
	c->target_drain_us = 200;
	c->high_pressure_epochs = 2;
	c->low_pressure_epochs = 4;
	c->hard_error_threshold = 3;
	c->cooldown_ms = 1000;
	c->cooldown_max_ms = 30000;
	c->flap_window_ms = 60000;
	c->epoch_us = 1000;
	c->md_percent = 50;
	c->fast_recovery_epochs = 5;
	c->ai_bytes = 262144;
	c->probe_successes = 3;
	c->evidence_tasks = 65536;
	c->recorder_entries = 4096;
}

struct mcc_config_v1 th_cfg(void)
{
	struct mcc_config_v1 c;
	th_cfg_defaults(&c);
	return c;
}

struct th *th_new_lanes(const struct mcc_policy_v1 *ops, const struct mcc_config_v1 *cfg,
                        uint32_t max_lanes)
{
	struct th *h = calloc(1, sizeof(*h));
	if (!h)
		abort();
	h->ops = ops;
	h->now = 1000000000ull; /* 1 s: cooldown arithmetic never starts at 0 */
	h->gen = 1;
	if (cfg)
		h->cfg = *cfg;
	else
		th_cfg_defaults(&h->cfg);
	h->cfg.mode = ops->mode;
	h->host.abi_version = MCC_POLICY_ABI_V1;
	h->host.struct_size = sizeof(h->host);
	h->host.engine = "test";
	h->host.caps = MCC_HOST_CAP_ASYNC_EVENTS | MCC_HOST_CAP_CQ_IDENTITY |
	               MCC_HOST_CAP_POLLER_PROGRESS | MCC_HOST_CAP_COMPLETION_TS;
	h->host.now_ns = th_clock;
	h->host.clock_arg = h;
	h->host.log = th_log;
	h->host.log_arg = h;
	h->host.max_lanes = max_lanes;
	h->out.struct_size = sizeof(h->out);
	h->init_rc = ops->init(&h->host, &h->cfg, &h->out, &h->ctx);
	CU_ASSERT_EQUAL_FATAL(h->init_rc, 0);
	struct mcc_lane_desc_v1 ld = { sizeof(ld), 0, MCC_LANE_POST_POLL, 0 };
	CU_ASSERT_EQUAL_FATAL(ops->lane_open(h->ctx, &ld, &h->lane), 0);
	return h;
}

struct th *th_new(const struct mcc_policy_v1 *ops, const struct mcc_config_v1 *cfg)
{
	return th_new_lanes(ops, cfg, 4);
}

struct th *th_new_recorder(uint32_t entries)
{
	struct mcc_config_v1 c;
	th_cfg_defaults(&c);
	c.recorder_entries = entries;
	return th_new(&mcc_test_observe_v1, &c);
}

void th_free(struct th *h)
{
	if (!h)
		return;
	th_drain(h);
	for (int i = h->nroute - 1; i >= 0; i--)
		h->ops->route_close(h->ctx, h->routes[i]);
	for (int i = h->ndev - 1; i >= 0; i--)
		h->ops->device_close(h->ctx, h->devs[i]);
	if (h->lane)
		h->ops->lane_close(h->ctx, h->lane);
	h->ops->fini(h->ctx);
	free(h);
}

mcc_device *th_dev(struct th *h, uint32_t id)
{
	return th_dev_rate(h, id, 400000000000ull);
}

mcc_device *th_dev_rate(struct th *h, uint32_t id, uint64_t link_bps)
{
	return th_dev_named(h, id, "mlx5_t", link_bps, 0);
}

mcc_device *th_dev_named(struct th *h, uint32_t id, const char *name, uint64_t link_bps,
                         uint64_t flags)
{
	struct mcc_device_desc_v1 d = { sizeof(d), id, name, 2, 0, link_bps, flags };
	mcc_device *dv = NULL;
	CU_ASSERT_EQUAL_FATAL(h->ops->device_open(h->ctx, &d, &dv), 0);
	CU_ASSERT_FATAL(h->ndev < TH_MAX_DOMS);
	h->devs[h->ndev++] = dv;
	return dv;
}

mcc_route *th_route(struct th *h, mcc_device *dv, uint64_t route_id, uint32_t port, uint32_t cq,
                    uint32_t gen)
{
	char path[64];
	snprintf(path, sizeof(path), "10.0.0.%llu:12345@mlx5_%u", (unsigned long long)route_id,
	         port);
	struct mcc_route_desc_v1 d = { sizeof(d),      port, cq, gen, route_id, path, 1000 + route_id,
		                       h->base_rtt_ns };
	mcc_route *r = NULL;
	CU_ASSERT_EQUAL_FATAL(h->ops->route_open(h->ctx, dv, &d, &r), 0);
	CU_ASSERT_FATAL(h->nroute < TH_MAX_DOMS);
	h->routes[h->nroute++] = r;
	return r;
}

struct th *th_world(const struct mcc_config_v1 *cfg, int ndev, const struct th_rt *rt, int nrt,
                    bool warm)
{
	struct th *h = th_new(&mcc_test_aimd_v1, cfg);
	for (int i = 0; i < ndev; i++)
		th_dev(h, (uint32_t)i);
	for (int i = 0; i < nrt; i++) {
		CU_ASSERT_FATAL(rt[i].dev < (uint32_t)ndev);
		th_route(h, h->devs[rt[i].dev], rt[i].id, rt[i].port, rt[i].cq, 1);
	}
	for (int i = 0; warm && i < nrt; i++)
		th_warm(h, h->devs[rt[i].dev], h->routes[i]);
	return h;
}

static struct th_fix fix(const struct mcc_config_v1 *cfg, bool warm)
{
	static const struct th_rt one = { 0, 1, 1, 0 };
	struct th *h = th_world(cfg, 1, &one, 1, warm);
	return (struct th_fix){ h, h->devs[0], h->routes[0] };
}

struct th_fix th_fix(const struct mcc_config_v1 *cfg)
{
	return fix(cfg, true);
}

struct th_fix th_fix_cold(const struct mcc_config_v1 *cfg)
{
	return fix(cfg, false);
}

void th_log_quiet(void *arg, int level, const char *fmt, ...)
{
	(void)arg;
	(void)level;
	(void)fmt;
}

void th_tick(struct th *h)
{
	h->now += (uint64_t)h->cfg.epoch_us * 1000ull;
	h->ops->tick(h->ctx, h->now);
}

void th_ticks(struct th *h, int n)
{
	for (int i = 0; i < n; i++)
		th_tick(h);
}

void th_advance_ms(struct th *h, uint64_t ms)
{
	h->now += ms * 1000000ull;
}

int th_acq(struct th *h, mcc_route *r, uint64_t bytes, uint32_t gen, uint64_t batch,
           uint64_t task, uint32_t attempt, struct mcc_permit_v1 *p)
{
	struct mcc_task_ref_v1 t = { batch, task, attempt, 0 };
	return h->ops->try_acquire(h->lane, r, bytes, gen, &t, p);
}

int th_acq_simple(struct th *h, mcc_route *r, uint64_t bytes, struct mcc_permit_v1 *p)
{
	return th_acq(h, r, bytes, 1, 1, 1, 0, p);
}

void th_wc_gen(struct th *h, struct mcc_permit_v1 *p, int32_t status, uint32_t gen, uint64_t bytes)
{
	struct mcc_completion_v1 wc = { .struct_size = sizeof(wc), .wc_status = status,
		                        .generation = gen, .bytes = bytes };
	if (h->lat_ns) {
		wc.post_ns = h->now;
		wc.complete_ns = h->now + h->lat_ns;
	}
	h->ops->on_completion(h->lane, p, &wc);
}

void th_wc(struct th *h, struct mcc_permit_v1 *p, int32_t status, uint32_t vendor_err)
{
	struct mcc_completion_v1 wc = { .struct_size = sizeof(wc), .wc_status = status,
		                        .vendor_err = vendor_err, .generation = p->generation,
		                        .bytes = p->bytes };
	h->ops->on_completion(h->lane, p, &wc);
}

int th_rel(struct th *h, struct mcc_permit_v1 *p, uint64_t bytes, uint32_t reason)
{
	return h->ops->release(h->lane, p, bytes, reason);
}

struct mcc_domain_stats_v1 th_stats(const struct mcc_policy_v1 *ops, void *ctx, int kind,
                                    const void *dom)
{
	struct mcc_domain_stats_v1 s = { .struct_size = sizeof(s) };
	CU_ASSERT_EQUAL(ops->domain_stats(ctx, kind, dom, &s), 0);
	return s;
}

struct mcc_domain_stats_v1 th_rs(struct th *h, mcc_route *r)
{
	return th_stats(h->ops, h->ctx, MCC_DOMAIN_ROUTE, r);
}

struct mcc_domain_stats_v1 th_ds(struct th *h, mcc_device *d)
{
	return th_stats(h->ops, h->ctx, MCC_DOMAIN_DEVICE, d);
}

uint32_t th_rstate(struct th *h, mcc_route *r)
{
	return th_rs(h, r).state;
}

uint32_t th_dstate(struct th *h, mcc_device *d)
{
	return th_ds(h, d).state;
}

uint64_t th_rwin(struct th *h, mcc_route *r)
{
	return th_rs(h, r).window_bytes;
}

int th_query(struct th *h, uint64_t batch, uint64_t task, uint32_t flags,
             struct mcc_task_detail_v1 *d)
{
	struct mcc_task_ref_v1 t = { batch, task, 0, 0 };
	if (d)
		*d = (struct mcc_task_detail_v1){ .struct_size = sizeof(*d) };
	return h->ops->task_query(h->ctx, &t, flags, d);
}

void th_async(struct th *h, int32_t type, mcc_device *d, mcc_route *r, uint32_t port,
              uint32_t cq, uint32_t gen)
{
	struct mcc_async_event_v1 ev = { .struct_size = sizeof(ev), .event_type = type, .device = d,
		                         .route = r, .port_num = port, .cq_id = cq,
		                         .generation = gen, .now_ns = h->now };
	h->ops->on_async_event(h->ctx, &ev);
}

void th_sig(struct th *h, uint32_t kind, mcc_device *d, mcc_route *r, uint64_t batch,
            uint64_t task, uint32_t gen, int32_t raw, uint64_t v0, uint64_t v1)
{
	struct mcc_signal_v1 s = { .struct_size = sizeof(s), .kind = kind, .device = d, .route = r,
		                   .task = { .batch_id = batch, .task_id = task },
		                   .generation = gen, .raw = raw, .value0 = v0, .value1 = v1,
		                   .now_ns = h->now };
	h->ops->on_signal(h->ctx, &s);
}

void th_progress(struct th *h, mcc_device *d)
{
	h->ops->poller_progress(h->lane, d, 0);
}

unsigned th_live(const struct th *h)
{
	return h->fh - h->ft;
}

unsigned th_push(struct th *h, mcc_route *r, unsigned n, uint64_t slice, uint32_t gen)
{
	unsigned k = 0;
	for (; k < n && th_live(h) < TH_FIFO; k++) {
		struct mcc_permit_v1 *p = &h->fifo[h->fh % TH_FIFO];
		*p = (struct mcc_permit_v1)MCC_PERMIT_INIT;
		if (th_acq(h, r, slice, gen, 0, 0, 0, p) != MCC_ADMIT)
			break;
		h->fh++;
	}
	return k;
}

unsigned th_pop(struct th *h, unsigned n, int32_t status)
{
	unsigned k = 0;
	for (; k < n && th_live(h); k++) {
		struct mcc_permit_v1 *p = &h->fifo[h->ft++ % TH_FIFO];
		th_wc_gen(h, p, status, p->generation, 0);
	}
	return k;
}

void th_drain(struct th *h)
{
	th_pop(h, th_live(h), IBV_WC_SUCCESS);
}

void th_epoch(struct th *h, mcc_route *r, unsigned adm, unsigned cmp, uint64_t slice)
{
	th_push(h, r, adm, slice, h->gen);
	th_pop(h, cmp, IBV_WC_SUCCESS);
	th_tick(h);
}

void th_warm(struct th *h, mcc_device *d, mcc_route *r)
{
	int i = 0;
	for (; i < 16 && (th_rs(h, r).window_bytes < h->cfg.max_window_bytes ||
	                  th_ds(h, d).window_bytes < h->cfg.max_window_bytes);
	     i++) {
		/* a window's worth (observe mode admits beyond it) */
		uint64_t w = th_rs(h, r).window_bytes, dw = th_ds(h, d).window_bytes;
		th_push(h, r, (unsigned)((w < dw ? w : dw) / (64 * KiB)), 64 * KiB, h->gen);
		th_drain(h);
		th_tick(h);
	}
	if (!i)
		return; /* already at the max: nothing done */
	/* out of credit mode: an epoch without admissions leaves it, the lane
	 * hands its cached credit back on its next call, the next tick folds it */
	th_tick(h);
	th_push(h, r, 1, 64 * KiB, h->gen);
	th_drain(h);
	th_tick(h);
}

void th_calm(struct th *h, mcc_route *r, int epochs)
{
	for (int i = 0; i < epochs; i++) {
		th_push(h, r, 4, 64 * KiB, h->gen);
		th_drain(h);
		th_tick(h);
	}
}

void th_press(struct th *h, mcc_route *r, int epochs)
{
	/* 16 slices offered, 1 delivered per epoch: drain time ~ ms >> 200 us */
	for (int i = 0; i < epochs; i++)
		th_epoch(h, r, 16, 1, 64 * KiB);
}

void th_slices(struct th *h, mcc_route *r, unsigned n, uint32_t gen, int32_t status)
{
	for (unsigned i = 0; i < n; i++) {
		struct mcc_permit_v1 p = MCC_PERMIT_INIT;
		CU_ASSERT_EQUAL(th_acq(h, r, 4096, gen, 0, 0, 0, &p), MCC_ADMIT);
		th_wc(h, &p, status, 0);
	}
}

void th_quarantine_route(struct th *h, mcc_route *r, uint32_t gen)
{
	th_slices(h, r, h->cfg.hard_error_threshold, gen, IBV_WC_RETRY_EXC_ERR);
	th_tick(h);
	CU_ASSERT_EQUAL(th_rstate(h, r), MCC_PATH_QUARANTINED);
}

void th_cooldown(struct th *h, mcc_route *r)
{
	th_advance_ms(h, h->cfg.cooldown_ms);
	th_tick(h);
	CU_ASSERT_EQUAL_FATAL(th_rstate(h, r), MCC_PATH_PROBING);
}

void th_probing(struct th *h, mcc_route *r, uint32_t gen)
{
	th_quarantine_route(h, r, gen);
	th_cooldown(h, r);
}

void th_probe_pass(struct th *h, mcc_route *r, uint32_t gen)
{
	th_slices(h, r, h->cfg.probe_successes, gen, IBV_WC_SUCCESS);
	th_tick(h);
}
