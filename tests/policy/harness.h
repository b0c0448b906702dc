/* SPDX-License-Identifier: MIT */
/*
 * harness.h - drives the aimd and observe descriptors directly (no loader):
 * an injected clock, a host table, a default config, helpers for domains,
 * permits, ticks, signals and queries.
 */
#ifndef MCC_TEST_POLICY_HARNESS_H
#define MCC_TEST_POLICY_HARNESS_H

#include <CUnit/CUnit.h>
#include <stdbool.h>
#include <stdint.h>

#include "mcc_policy_v1.h"

/* The module descriptors, linked into the test program from the module
 * sources (t_desc_aimd.c / t_desc_observe.c). */
extern const struct mcc_policy_v1 mcc_test_aimd_v1;
extern const struct mcc_policy_v1 mcc_test_observe_v1;

#define TH_FIFO 8192u
#define TH_MAX_DOMS 32
#define KiB 1024ull
#define MiB (1024ull * 1024ull)
#define EPOCH_NS 1000000ull /* default epoch_us = 1000 */

struct th {
	const struct mcc_policy_v1 *ops;
	void *ctx;
	struct mcc_host_v1 host;
	struct mcc_config_v1 cfg;
	struct mcc_init_out_v1 out;
	uint64_t now;
	int init_rc;
	mcc_lane *lane;
	mcc_device *devs[TH_MAX_DOMS];
	mcc_route *routes[TH_MAX_DOMS];
	int ndev, nroute;
	/* FIFO of live permits for the traffic helpers */
	struct mcc_permit_v1 fifo[TH_FIFO];
	unsigned fh, ft;
	uint64_t lat_ns; /* non-zero: completions carry post/complete stamps this far apart */
	uint64_t base_rtt_ns; /* th_route: the base RTT the host states (0: none) */
	uint32_t gen;    /* generation used by the traffic helpers (default 1) */
	unsigned logs;
	char last_log[512]; /* the module's last log line */
};

void th_cfg_defaults(struct mcc_config_v1 *cfg);
struct mcc_config_v1 th_cfg(void); /* the defaults, by value */
/* Create an instance of `ops` (NULL cfg: defaults), 4 lanes, lane 0 open. */
struct th *th_new(const struct mcc_policy_v1 *ops, const struct mcc_config_v1 *cfg);
struct th *th_new_lanes(const struct mcc_policy_v1 *ops, const struct mcc_config_v1 *cfg,
                        uint32_t max_lanes);
/* The observe module with a recorder of `entries` (defaults otherwise). */
struct th *th_new_recorder(uint32_t entries);
/* Settles the FIFO, closes routes, devices, the lane and the instance. */
void th_free(struct th *h);

mcc_device *th_dev(struct th *h, uint32_t id); /* link rate 400 Gb/s */
mcc_device *th_dev_rate(struct th *h, uint32_t id, uint64_t link_bps); /* 0: unknown */
mcc_device *th_dev_named(struct th *h, uint32_t id, const char *name, uint64_t link_bps,
                         uint64_t flags);
mcc_route *th_route(struct th *h, mcc_device *d, uint64_t route_id, uint32_t port, uint32_t cq,
                    uint32_t gen);

/* A route of th_world: on h->devs[dev], route `id`, `port`, `cq`, generation 1. */
struct th_rt {
	uint32_t dev;
	uint64_t id;
	uint32_t port, cq;
};
/* The aimd module (cfg NULL: the defaults) with devices 0..ndev-1
 * (h->devs) and the routes rt[0..nrt) (h->routes, in that order), each
 * warmed (th_warm) when `warm`. */
struct th *th_world(const struct mcc_config_v1 *cfg, int ndev, const struct th_rt *rt, int nrt,
                    bool warm);
/* Most tests' fixture: th_world with device 0 (d) and route 1 on it (r:
 * port 1, CQ 0), warmed (th_fix: windows at the max) or not (th_fix_cold:
 * at the min, where they start). */
struct th_fix {
	struct th *h;
	mcc_device *d;
	mcc_route *r;
};
struct th_fix th_fix(const struct mcc_config_v1 *cfg);
struct th_fix th_fix_cold(const struct mcc_config_v1 *cfg);

/* For tests that build their own host: a log that drops everything, and
 * a domain's stats through ops (the call must succeed). */
void th_log_quiet(void *arg, int level, const char *fmt, ...);
struct mcc_domain_stats_v1 th_stats(const struct mcc_policy_v1 *ops, void *ctx, int kind,
                                    const void *dom);

void th_tick(struct th *h); /* advance one epoch and tick */
void th_ticks(struct th *h, int n);
void th_advance_ms(struct th *h, uint64_t ms); /* advance time, no tick */

int th_acq(struct th *h, mcc_route *r, uint64_t bytes, uint32_t gen, uint64_t batch,
           uint64_t task, uint32_t attempt, struct mcc_permit_v1 *p);
int th_acq_simple(struct th *h, mcc_route *r, uint64_t bytes, struct mcc_permit_v1 *p);
void th_wc(struct th *h, struct mcc_permit_v1 *p, int32_t status, uint32_t vendor_err);
void th_wc_gen(struct th *h, struct mcc_permit_v1 *p, int32_t status, uint32_t gen, uint64_t bytes);
int th_rel(struct th *h, struct mcc_permit_v1 *p, uint64_t bytes, uint32_t reason);

struct mcc_domain_stats_v1 th_rs(struct th *h, mcc_route *r);
struct mcc_domain_stats_v1 th_ds(struct th *h, mcc_device *d);
uint32_t th_rstate(struct th *h, mcc_route *r);
uint32_t th_dstate(struct th *h, mcc_device *d);
uint64_t th_rwin(struct th *h, mcc_route *r);

int th_query(struct th *h, uint64_t batch, uint64_t task, uint32_t flags,
             struct mcc_task_detail_v1 *d);

void th_async(struct th *h, int32_t type, mcc_device *d, mcc_route *r, uint32_t port,
              uint32_t cq, uint32_t gen);
void th_sig(struct th *h, uint32_t kind, mcc_device *d, mcc_route *r, uint64_t batch,
            uint64_t task, uint32_t gen, int32_t raw, uint64_t v0, uint64_t v1);
void th_progress(struct th *h, mcc_device *d);

/* Traffic: admit up to n slices into the FIFO (returns how many), complete
 * the n oldest with `status`, settle everything. */
unsigned th_push(struct th *h, mcc_route *r, unsigned n, uint64_t slice, uint32_t gen);
unsigned th_pop(struct th *h, unsigned n, int32_t status);
void th_drain(struct th *h);
unsigned th_live(const struct th *h);
/* One epoch: push `adm` slices, complete `cmp` oldest, tick. */
void th_epoch(struct th *h, mcc_route *r, unsigned adm, unsigned cmp, uint64_t slice);
/* Epochs of healthy, low-pressure traffic (everything completes). */
void th_calm(struct th *h, mcc_route *r, int epochs);
/* Windows start at min_window_bytes and slow start (issue 11): clean epochs
 * that fill r's window until r and d reach max_window_bytes (at most 16),
 * with a learned base of ~0 (everything completes within the epoch), in
 * 64 KiB slices, then two quiet epochs that leave no lane credit cached
 * (nothing at all if both already are at the max). For tests of mechanics written for windows that started at
 * the max. Counters include the warm-up. */
void th_warm(struct th *h, mcc_device *d, mcc_route *r);
/* Epochs of high pressure (deep queue, slow delivery). */
void th_press(struct th *h, mcc_route *r, int epochs);
/* n slices of 4 KiB on r at generation gen, each admitted and completed
 * with `status` (no tick). */
void th_slices(struct th *h, mcc_route *r, unsigned n, uint32_t gen, int32_t status);
/* Drive a route from HEALTHY into QUARANTINED with route timeouts. */
void th_quarantine_route(struct th *h, mcc_route *r, uint32_t gen);
/* A QUARANTINED route waits out its first cooldown (cooldown_ms): PROBING. */
void th_cooldown(struct th *h, mcc_route *r);
/* th_quarantine_route, then th_cooldown. */
void th_probing(struct th *h, mcc_route *r, uint32_t gen);
/* A PROBING route passes its probe: probe_successes slices at generation
 * gen succeed, then a tick. */
void th_probe_pass(struct th *h, mcc_route *r, uint32_t gen);

#endif
