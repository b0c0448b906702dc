/* SPDX-License-Identifier: MIT */
/*
 * policy.c - instance lifecycle (init/fini), device and route domains,
 * domain_stats. The vtable itself is assembled by MCC_CORE_DESCRIPTOR
 * (policy.h) in each thin module, bound to that module's mode.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "mcc_defaults.h"
#include "policy.h"

/* ------------------------------------------------------- [module.<name>] */

/* The keys of [module.<name>] of every module over the core (aimd, observe,
 * delay), one row each: config_check validates them (the host calls it
 * before init), params_from reads them. A number is decimal digits only. */
struct core_key {
	const char *name;
	size_t off; /* a uint32_t of struct mcc_params */
	uint32_t min, max;
};

static const struct core_key core_keys[] = {
	/* admissions per epoch before a domain caches lane credit (0: always) */
	{ "credit_min_admits", offsetof(struct mcc_params, credit_min_admits), 0, 1000000000u },
	/* the HIGH reserve of try_acquire_qos (modules/core/README.md, QoS classes) */
	{ "qos_reserve_slices", offsetof(struct mcc_params, qos_reserve_slices), 0, 64u },
	{ "qos_reserve_percent", offsetof(struct mcc_params, qos_reserve_percent), 0, 100u },
	{ "qos_hold_epochs", offsetof(struct mcc_params, qos_hold_epochs), 0, 1000000u },
};
#define CORE_KEYS (sizeof(core_keys) / sizeof(core_keys[0]))

static int core_key_parse(const struct core_key *k, const char *v, uint32_t *out, char *why,
                          size_t len)
{
	char *end = NULL;
	unsigned long long n;

	errno = 0;
	n = (*v >= '0' && *v <= '9') ? strtoull(v, &end, 10) : 0;
	if (!(*v >= '0' && *v <= '9') || errno || !end || *end != '\0') {
		snprintf(why, len, "'%.40s' is not a decimal integer (digits only, no sign or unit)",
		         v);
		return -EINVAL;
	}
	if (n < k->min || n > k->max) {
		snprintf(why, len, "%llu is out of range %u..%u", n, k->min, k->max);
		return -EINVAL;
	}
	*out = (uint32_t)n;
	return 0;
}

int mcc_core_config_check(const char *key, const char *value, char *why, size_t len)
{
	char tmp[8];
	uint32_t v;

	if (!why || !len) {
		why = tmp;
		len = sizeof(tmp);
	}
	why[0] = '\0';
	if (!key || !value)
		return -EINVAL;
	for (size_t i = 0; i < CORE_KEYS; i++)
		if (strcmp(key, core_keys[i].name) == 0)
			return core_key_parse(&core_keys[i], value, &v, why, len);
	snprintf(why, len, "keys: credit_min_admits, qos_reserve_slices, qos_reserve_percent, "
	                   "qos_hold_epochs");
	return -ENOENT;
}

/* The defaults of libmcc's key table (mcc_defaults.h), used for absent or
 * zero fields; the host has already validated the values it passes. */
static void params_from(struct mcc_params *p, const struct mcc_config_v1 *cfg)
{
	*p = (struct mcc_params){
		.min_window = MCC_DEFAULT_MIN_WINDOW_BYTES,
		.max_window = MCC_DEFAULT_MAX_WINDOW_BYTES,
		.probe_window = 0,
		.ai_bytes = MCC_DEFAULT_AI_BYTES,
		.target_drain_us = MCC_DEFAULT_TARGET_DRAIN_US,
		.high_epochs = MCC_DEFAULT_HIGH_PRESSURE_EPOCHS,
		.low_epochs = MCC_DEFAULT_LOW_PRESSURE_EPOCHS,
		.hard_threshold = MCC_DEFAULT_HARD_ERROR_THRESHOLD,
		.cooldown_ms = MCC_DEFAULT_COOLDOWN_MS,
		.cooldown_max_ms = MCC_DEFAULT_COOLDOWN_MAX_MS,
		.flap_window_ms = MCC_DEFAULT_FLAP_WINDOW_MS,
		.epoch_us = MCC_DEFAULT_EPOCH_US,
		.md_percent = MCC_DEFAULT_MD_PERCENT,
		.fr_epochs = MCC_DEFAULT_FAST_RECOVERY_EPOCHS,
		.probe_successes = MCC_DEFAULT_PROBE_SUCCESSES,
		.evidence_tasks = MCC_DEFAULT_EVIDENCE_TASKS,
		.recorder_entries = MCC_DEFAULT_RECORDER_ENTRIES,
		.credit_min_admits = MCC_CREDIT_MIN_ADMITS,
		.qos_reserve_slices = MCC_QOS_RESERVE_SLICES,
		.qos_reserve_percent = MCC_QOS_RESERVE_PERCENT,
		.qos_hold_epochs = MCC_QOS_HOLD_EPOCHS,
	};
	if (!cfg)
		return;
	size_t sz = cfg->struct_size;
#define TAKE(field, member)                                                       \
	do {                                                                      \
		if (MCC_HAS_MEMBER(struct mcc_config_v1, sz, member) && cfg->member) \
			p->field = cfg->member;                                   \
	} while (0)
	TAKE(min_window, min_window_bytes);
	TAKE(max_window, max_window_bytes);
	TAKE(probe_window, probe_window_bytes);
	TAKE(ai_bytes, ai_bytes);
	TAKE(target_drain_us, target_drain_us);
	TAKE(high_epochs, high_pressure_epochs);
	TAKE(low_epochs, low_pressure_epochs);
	TAKE(hard_threshold, hard_error_threshold);
	TAKE(cooldown_ms, cooldown_ms);
	TAKE(cooldown_max_ms, cooldown_max_ms);
	TAKE(flap_window_ms, flap_window_ms);
	TAKE(epoch_us, epoch_us);
	TAKE(md_percent, md_percent);
	TAKE(fr_epochs, fast_recovery_epochs);
	TAKE(probe_successes, probe_successes);
	TAKE(evidence_tasks, evidence_tasks);
	TAKE(recorder_entries, recorder_entries);
#undef TAKE
	/* module-private keys ([module.<name>] in the ini), checked by
	 * config_check; a host older than ABI 1.2 does not call it, and a value
	 * the table refuses then keeps its default */
	if (MCC_HAS_MEMBER(struct mcc_config_v1, sz, module_get) && cfg->module_get) {
		for (size_t i = 0; i < CORE_KEYS; i++) {
			const char *v = cfg->module_get(cfg, core_keys[i].name);
			char why[96];
			uint32_t n;

			if (v && core_key_parse(&core_keys[i], v, &n, why, sizeof(why)) == 0)
				memcpy((char *)p + core_keys[i].off, &n, sizeof(n));
		}
	}
	/* defensive clamps (never widen what the host validated) */
	if (p->max_window < p->min_window)
		p->max_window = p->min_window;
	if (p->probe_window > p->min_window)
		p->probe_window = p->min_window;
	if (p->md_percent >= 100)
		p->md_percent = 99;
	if (p->cooldown_max_ms < p->cooldown_ms)
		p->cooldown_max_ms = p->cooldown_ms;
}

/* ------------------------------------------------------------------ init */

int mcc_core_init(const struct mcc_host_v1 *host, const struct mcc_config_v1 *cfg,
                  struct mcc_init_out_v1 *out, void **ctx, enum mcc_mode mode,
                  const struct mcc_law *law)
{
	if (!host || !ctx || !law || !law->start || !law->epoch)
		return -EINVAL;
	if (MCC_ABI_MAJOR(host->abi_version) != 1)
		return -EPROTO;
	/* every struct whole or refused: nothing is read past a short one */
	if (host->struct_size < MCC_HOST_V1_0_SIZE || !host->now_ns ||
	    (cfg && cfg->struct_size < MCC_CONFIG_V1_0_SIZE) ||
	    (out && out->struct_size < MCC_INIT_OUT_V1_0_SIZE))
		return -EINVAL;
	struct mcc_core *core = aligned_alloc(MCC_LINE, (sizeof(*core) + MCC_LINE - 1) &
	                                                    ~(size_t)(MCC_LINE - 1));
	if (!core)
		return -ENOMEM;
	memset(core, 0, sizeof(*core));
	core->host = host;
	core->mode = mode;
	core->law = law;
	params_from(&core->p, cfg);
	uint32_t lanes = MCC_HAS_MEMBER(struct mcc_host_v1, host->struct_size, max_lanes)
	                     ? host->max_lanes
	                     : 0;
	if (!lanes)
		lanes = MCC_MAX_LANES_DEFAULT;
	core->max_lanes = lanes < MCC_MAX_LANES_CAP ? lanes : MCC_MAX_LANES_CAP;
	core->lanes = calloc(core->max_lanes, sizeof(*core->lanes));
	core->lane_mem = calloc(core->max_lanes, sizeof(*core->lane_mem));
	core->scan_seq = calloc(core->max_lanes, sizeof(*core->scan_seq));
	core->dl = calloc(MCC_DEADLINES_MAX, sizeof(*core->dl));
	/* every domain a lane can name: its slots and both sides of its pairs */
	core->touched_cap = core->max_lanes * (MCC_LANE_SLOTS + 2 * MCC_LANE_PEND);
	core->touched = calloc(core->touched_cap, sizeof(*core->touched));
	if (mode == MCC_MODE_OBSERVE)
		core->rec = mcc_rec_create(core->p.recorder_entries);
	if (!core->lanes || !core->lane_mem || !core->scan_seq || !core->dl || !core->touched ||
	    (mode == MCC_MODE_OBSERVE && !core->rec) || mcc_ev_init(core) != 0 ||
	    pthread_mutex_init(&core->lock, NULL) != 0) {
		mcc_ev_fini(core);
		mcc_rec_destroy(core->rec);
		free(core->touched);
		free(core->dl);
		free(core->scan_seq);
		free(core->lane_mem);
		free(core->lanes);
		free(core);
		return -ENOMEM;
	}
	atomic_init(&core->epoch_no, 1);
	atomic_init(&core->now_ns, host->now_ns(host->clock_arg));
	if (out && MCC_HAS_MEMBER(struct mcc_init_out_v1, out->struct_size, signal_mask))
		out->signal_mask = ((1ull << MCC_SIG_KIND_COUNT_) - 1) & ~1ull;
	if (out && MCC_HAS_MEMBER(struct mcc_init_out_v1, out->struct_size, want_async_events))
		out->want_async_events = 1;
	*ctx = core;
	mcc_log(core, MCC_LOG_INFO,
	        "%s mode, window [%llu, %llu], drain target %u us, threshold %u, "
	        "cooldown %u..%u ms, %u lanes",
	        mode == MCC_MODE_OBSERVE ? "observe" : "enforce",
	        (unsigned long long)core->p.min_window, (unsigned long long)core->p.max_window,
	        core->p.target_drain_us, core->p.hard_threshold, core->p.cooldown_ms,
	        core->p.cooldown_max_ms, core->max_lanes);
	return 0;
}

void mcc_core_fini(void *ctx)
{
	struct mcc_core *core = ctx;
	if (!core)
		return;
	for (uint32_t i = 0; i < core->max_lanes; i++)
		if (core->lane_mem[i]) { /* open (its ring lives) or closed */
			if (!atomic_load_explicit(&core->lane_mem[i]->closed, RLX)) {
				mcc_ev_ring_fini(&core->lane_mem[i]->ring);
				mcc_spill_fini(&core->lane_mem[i]->spill);
			}
			free(core->lane_mem[i]);
		}
	struct mcc_dom *lists[3] = { core->devices, core->routes, core->zombies };
	for (int l = 0; l < 3; l++)
		for (struct mcc_dom *d = lists[l], *n; d; d = n) {
			n = d->next;
			mcc_dom_free(d);
		}
	mcc_ev_fini(core);
	mcc_rec_destroy(core->rec);
	for (uint32_t i = 0; i < core->nreg; i++)
		free(core->reg[i].path);
	free(core->reg);
	free(core->reg_bkt);
	free(core->rtab);
	free(core->tq);
	free(core->touched);
	free(core->dl);
	free(core->scan_seq);
	free(core->lane_mem);
	free(core->lanes);
	pthread_mutex_destroy(&core->lock);
	free(core);
}

/* --------------------------------------------------------------- domains */

static void *dom_alloc(size_t size)
{
	size = (size + MCC_LINE - 1) & ~(size_t)(MCC_LINE - 1);
	struct mcc_dom *d = aligned_alloc(MCC_LINE, size);
	if (d)
		memset(d, 0, size);
	return d;
}

/* Closed domain: freed now, or by a tick once no lane names it. */
static void dom_retire(struct mcc_core *core, struct mcc_dom **list, struct mcc_dom *d)
{
	mcc_dom_list_del(list, d);
	mcc_dom_forget(core, d);
	d->closed = true;
	if (mcc_dom_unreferenced(core, d))
		mcc_dom_free(d);
	else
		mcc_dom_list_add(&core->zombies, d);
}

int mcc_core_device_open(void *ctx, const struct mcc_device_desc_v1 *desc, mcc_device **out)
{
	struct mcc_core *core = ctx;
	if (!core || !desc || !out || desc->struct_size < MCC_DEVICE_DESC_V1_0_SIZE)
		return -EINVAL;
	struct mcc_device *dv = dom_alloc(sizeof(*dv));
	if (!dv)
		return -ENOMEM;
	dv->device_id = desc->device_id;
	dv->num_ports = desc->num_ports;
	dv->link_rate_bps = desc->link_rate_bps;
	if (desc->name) {
		strncpy(dv->name, desc->name, sizeof(dv->name) - 1);
		dv->name[sizeof(dv->name) - 1] = '\0';
	}
	if (MCC_HAS_MEMBER(struct mcc_device_desc_v1, desc->struct_size, flags))
		dv->software = (desc->flags & MCC_DEVICE_F_SOFTWARE) != 0;
	if (dv->software)
		mcc_log(core, MCC_LOG_INFO,
		        "device %s is a software transport: its queueing counts only "
		        "while its delivery rate has collapsed",
		        dv->name);
	pthread_mutex_lock(&core->lock);
	mcc_dom_init(core, &dv->d, MCC_DOM_DEVICE, core->next_dev++);
	mcc_ctl_publish(core, &dv->d, MCC_PATH_HEALTHY, false);
	mcc_ctl_start(core, &dv->d, core->p.min_window); /* a new sender: bounded first burst */
	mcc_dom_list_add(&core->devices, &dv->d);
	pthread_mutex_unlock(&core->lock);
	*out = dv;
	return 0;
}

void mcc_core_device_close(void *ctx, mcc_device *dv)
{
	struct mcc_core *core = ctx;
	if (!core || !dv)
		return;
	pthread_mutex_lock(&core->lock);
	for (uint32_t i = 0; i < core->ndl; i++)
		if (core->dl[i].dev == dv)
			core->dl[i].dev = NULL;
	if (dv->close_pending) {
		mcc_log(core, MCC_LOG_ERROR, "device_close: device %s closed twice; ignored", dv->name);
	} else if (dv->nroutes) {
		/* a contract breach (routes close first): the routes still
		 * point at the device, so it lives until the last of them
		 * closes (dev_unlink) and takes no new route meanwhile */
		mcc_log(core, MCC_LOG_ERROR,
		        "device_close: device %s has %u open routes (close them first): "
		        "freed when the last one closes",
		        dv->name, dv->nroutes);
		dv->close_pending = true;
	} else {
		dom_retire(core, &core->devices, &dv->d);
	}
	pthread_mutex_unlock(&core->lock);
}

/* ------------------------------------------------------------ route table */

static uint32_t rtab_hash(const struct mcc_core *core, const struct mcc_device *dv,
                          uint64_t route_id)
{
	uint64_t h = (route_id ^ (uint64_t)(uintptr_t)dv * 0x9E3779B97F4A7C15ull) *
	             0xff51afd7ed558ccdull;
	return (uint32_t)(h >> 32) & core->rtab_mask;
}

static struct mcc_route *rtab_find(const struct mcc_core *core, const struct mcc_device *dv,
                                   uint64_t route_id)
{
	if (!core->rtab)
		return NULL;
	for (struct mcc_route *r = core->rtab[rtab_hash(core, dv, route_id)]; r; r = r->hnext)
		if (atomic_load_explicit(&r->dev, RLX) == dv && r->route_id == route_id)
			return r;
	return NULL;
}

static void rtab_link(struct mcc_core *core, struct mcc_route *r)
{
	struct mcc_route **b =
	    &core->rtab[rtab_hash(core, atomic_load_explicit(&r->dev, RLX), r->route_id)];
	r->hnext = *b;
	*b = r;
}

static void rtab_unlink(struct mcc_core *core, struct mcc_route *r)
{
	struct mcc_route **p =
	    &core->rtab[rtab_hash(core, atomic_load_explicit(&r->dev, RLX), r->route_id)];
	while (*p && *p != r)
		p = &(*p)->hnext;
	if (*p)
		*p = r->hnext;
	r->hnext = NULL;
}

/* Room for one more route: the table doubles when it holds as many routes as
 * buckets (a mean chain below one), so lookups stay O(1). */
static int rtab_reserve(struct mcc_core *core)
{
	if (core->rtab && core->nroutes < core->rtab_mask + 1)
		return 0;
	uint32_t n = core->rtab ? (core->rtab_mask + 1) * 2 : 256;
	struct mcc_route **t = calloc(n, sizeof(*t));
	if (!t)
		return core->rtab ? 0 : -ENOMEM; /* longer chains, still correct */
	struct mcc_route **old = core->rtab;
	uint32_t on = old ? core->rtab_mask + 1 : 0;
	core->rtab = t;
	core->rtab_mask = n - 1;
	for (uint32_t i = 0; i < on; i++)
		for (struct mcc_route *r = old[i], *nx; r; r = nx) {
			nx = r->hnext;
			rtab_link(core, r);
		}
	free(old);
	return 0;
}

/* The device's list of its routes, newest (highest idx) first: the order of
 * the core's route list, which scoped quarantines walked before. */
static void dev_link(struct mcc_device *dv, struct mcc_route *r)
{
	struct mcc_route **p = &dv->routes, *prev = NULL;
	while (*p && (*p)->d.idx > r->d.idx) {
		prev = *p;
		p = &(*p)->dnext;
	}
	r->dnext = *p;
	r->dprev = prev;
	if (*p)
		(*p)->dprev = r;
	*p = r;
	dv->nroutes++;
}

static void dev_unlink(struct mcc_core *core, struct mcc_device *dv, struct mcc_route *r)
{
	if (r->dprev)
		r->dprev->dnext = r->dnext;
	else
		dv->routes = r->dnext;
	if (r->dnext)
		r->dnext->dprev = r->dprev;
	r->dnext = r->dprev = NULL;
	if (--dv->nroutes == 0 && dv->close_pending)
		dom_retire(core, &core->devices, &dv->d);
}

int mcc_core_route_open(void *ctx, mcc_device *dv, const struct mcc_route_desc_v1 *desc,
                        mcc_route **out)
{
	struct mcc_core *core = ctx;
	if (!core || !dv || !desc || !out || desc->struct_size < MCC_ROUTE_DESC_V1_0_SIZE)
		return -EINVAL;
	const char *path = ""; /* none given: the name is cleared */
	if (MCC_HAS_MEMBER(struct mcc_route_desc_v1, desc->struct_size, peer_path) && desc->peer_path)
		path = desc->peer_path;
	pthread_mutex_lock(&core->lock);
	if (dv->close_pending) { /* closed, kept for its routes only */
		pthread_mutex_unlock(&core->lock);
		return -EINVAL;
	}
	struct mcc_route *o = rtab_find(core, dv, desc->route_id);
	if (o) {
		o->refs++; /* already open: the same handle */
		pthread_mutex_unlock(&core->lock);
		*out = o;
		return 0;
	}
	struct mcc_route *r = rtab_reserve(core) == 0 ? dom_alloc(sizeof(*r)) : NULL;
	if (!r) {
		pthread_mutex_unlock(&core->lock);
		return -ENOMEM;
	}
	atomic_init(&r->dev, dv);
	r->port_num = desc->port_num;
	r->cq_id = desc->cq_id;
	r->route_id = desc->route_id;
	if (MCC_HAS_MEMBER(struct mcc_route_desc_v1, desc->struct_size, remote_id))
		r->remote_id = desc->remote_id;
	r->refs = 1;
	atomic_init(&r->d.generation, desc->generation);
	/* A route starts at an equal share of its device's window: the device
	 * window bounds what the NIC injects, and a device that has grown has
	 * proven it. A route at the minimum on a busy NIC waits behind its
	 * siblings' work requests, which reads as queueing it cannot drain
	 * (a QP rebuilt after a fatal error stayed CONGESTED at the minimum). */
	uint64_t share = atomic_load_explicit(&dv->d.window, RLX) / ((uint64_t)dv->nroutes + 1);
	r->name_idx = mcc_reg_get(core, dv->device_id, r->route_id, path);
	mcc_dom_init(core, &r->d, MCC_DOM_ROUTE, core->next_idx++);
	if (MCC_HAS_MEMBER(struct mcc_route_desc_v1, desc->struct_size, base_rtt_ns))
		r->d.sbase_us = desc->base_rtt_ns >= MCC_SBASE_MAX_NS
		                        ? MCC_SBASE_MAX_NS / 1000
		                        : (uint32_t)(desc->base_rtt_ns / 1000);
	core->sbase_seen |= r->d.sbase_us != 0;
	mcc_ctl_publish(core, &r->d, MCC_PATH_HEALTHY, false);
	mcc_ctl_start(core, &r->d, share);
	mcc_dom_list_add(&core->routes, &r->d);
	rtab_link(core, r);
	dev_link(dv, r);
	core->nroutes++;
	pthread_mutex_unlock(&core->lock);
	*out = r;
	return 0;
}

int mcc_core_route_rebind(void *ctx, mcc_route *r, mcc_device *dv, uint32_t port_num,
                          uint32_t cq_id)
{
	struct mcc_core *core = ctx;
	if (!core || !r || !dv)
		return -EINVAL;
	pthread_mutex_lock(&core->lock);
	if (dv->close_pending) {
		pthread_mutex_unlock(&core->lock);
		return -EINVAL;
	}
	/* state and window stay; live permits settle on their own device */
	struct mcc_device *old = atomic_load_explicit(&r->dev, RLX);
	if (old != dv) {
		rtab_unlink(core, r);
		dev_unlink(core, old, r);
		atomic_store_explicit(&r->dev, dv, REL);
		rtab_link(core, r);
		dev_link(dv, r);
	}
	r->port_num = port_num;
	r->cq_id = cq_id;
	pthread_mutex_unlock(&core->lock);
	return 0;
}

void mcc_core_route_close(void *ctx, mcc_route *r)
{
	struct mcc_core *core = ctx;
	if (!core || !r)
		return;
	pthread_mutex_lock(&core->lock);
	if (--r->refs > 0) {
		pthread_mutex_unlock(&core->lock);
		return;
	}
	uint32_t k = 0;
	for (uint32_t i = 0; i < core->ndl; i++)
		if (core->dl[i].route != r)
			core->dl[k++] = core->dl[i];
	core->ndl = k;
	/* records still in the lanes' rings may name the route's path: they
	 * take their references before the route drops its own */
	mcc_ev_drain(core);
	mcc_reg_put(core, r->name_idx);
	rtab_unlink(core, r);
	dev_unlink(core, atomic_load_explicit(&r->dev, RLX), r);
	core->nroutes--;
	dom_retire(core, &core->routes, &r->d);
	pthread_mutex_unlock(&core->lock);
}

/* ------------------------------------------------------------- statistics */

int mcc_core_domain_stats(void *ctx, int kind, const void *domain, struct mcc_domain_stats_v1 *out)
{
	struct mcc_core *core = ctx;
	if (!core || !domain || !out || out->struct_size < MCC_DOMAIN_STATS_V1_0_SIZE ||
	    (kind != MCC_DOMAIN_DEVICE && kind != MCC_DOMAIN_ROUTE))
		return -EINVAL;
	const struct mcc_dom *d = domain; /* first member of mcc_device / mcc_route */
	if (d->kind != (kind == MCC_DOMAIN_DEVICE ? (uint32_t)MCC_DOM_DEVICE : (uint32_t)MCC_DOM_ROUTE))
		return -EINVAL;
	struct mcc_domain_stats_v1 s;
	memset(&s, 0, sizeof(s));
	pthread_mutex_lock(&core->lock);
	uint64_t now = mcc_core_now(core);
	s.state = mcc_ctl_state(atomic_load_explicit(&d->ctl, RLX));
	s.window_bytes = atomic_load_explicit(&d->window, RLX);
	/* in-flight as admission sees it: stale credit that idle lanes still
	 * hold after a mode change or cut (tick's snapshot) no longer counts */
	{
		int64_t raw = atomic_load_explicit(&d->inflight, RLX);
		uint64_t st = atomic_load_explicit(&d->stale_est, RLX);
		uint64_t rt = atomic_load_explicit(&d->stale_returned, RLX);
		uint64_t sub = st > rt ? st : rt;
		s.inflight_bytes = raw > 0 && (uint64_t)raw > sub ? (uint64_t)raw - sub : 0;
	}
	s.generation = atomic_load_explicit(&d->generation, RLX);
	s.hard_errors = d->cs.hard_errors;
	s.cooldown_ms = mcc_ctl_cooldown_left_ms(d, now);
	struct mcc_counters t;
	mcc_spill_drain(core);
	mcc_dom_sum(core, d, &t, NULL, NULL); /* O(lanes), not a scan of every domain */
	s.admits = t.admits;
	s.completed_bytes = t.completed_bytes;
	s.completions = t.completions;
	s.defers = atomic_load_explicit(&d->defers, RLX);
	s.avoids = atomic_load_explicit(&d->avoids, RLX);
	s.would_defer = atomic_load_explicit(&d->would_defer, RLX);
	s.would_avoid = atomic_load_explicit(&d->would_avoid, RLX);
	s.errors = atomic_load_explicit(&d->errors, RLX);
	s.stale_feedback = atomic_load_explicit(&d->stale_feedback, RLX);
	s.double_release = atomic_load_explicit(&d->double_release, RLX);
	s.quarantines = d->cs.quarantines;
	s.probes = atomic_load_explicit(&d->probes, RLX);
	s.window_cuts = d->cs.window_cuts;
	s.drain_us = d->cs.drain_us;
	s.rate_bps = d->cs.rate;
	s.suppressed_deadlines = atomic_load_explicit(&d->suppressed, RLX);
	s.qos_reserve_bytes = mcc_qos_reserve(core, d);
	for (int c = 0; c < MCC_QOS_CLASS_COUNT_; c++)
		s.qos_refused[c] = atomic_load_explicit(&d->qos_refused[c], RLX);
	pthread_mutex_unlock(&core->lock);
	s.struct_size = out->struct_size;
	memcpy(out, &s, out->struct_size < sizeof(s) ? out->struct_size : sizeof(s));
	return 0;
}
