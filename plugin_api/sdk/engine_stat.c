/* SPDX-License-Identifier: MIT */
/*
 * engine_stat.c - the engine SDK's live view (mcc_engine.h, mcc_stat.h):
 * snapshots of the engine's devices and routes through the policy's
 * domain_stats, published to <dir>/mcc.<pid>.<engine> by the engine's
 * thread. Nothing here runs on a hot path.
 */
#define _GNU_SOURCE
#include "engine_internal.h"
#include "mcc_defaults.h"
#include "stat_file.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A publish may use at most 1/STAT_DUTY of its thread's time: with many
 * domains, or a module whose domain_stats is slow, the period stretches
 * instead. */
#define STAT_DUTY 10u

struct mcc_engine_stat {
	pthread_mutex_t mu; /* one publish at a time */
	struct mcc_stat_file *file;
	uint64_t period_ns;
	uint32_t interval_ms;
	int warned;       /* a failed publish was logged */
	/* the publishing thread */
	pthread_t thr;
	pthread_mutex_t thr_mu;
	pthread_cond_t thr_cv;
	int thr_on, thr_stop;
	char path[PATH_MAX];
	struct mcc_engine_stat *next; /* g_paths */
};

/* The files of this process's engines: two engines with one name get
 * "-2", "-3", ... so each has its own file. */
static pthread_mutex_t g_paths_mu = PTHREAD_MUTEX_INITIALIZER;
static struct mcc_engine_stat *g_paths;

/* The time of clock `c` in nanoseconds. */
static uint64_t clock_read_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void domain(mcc_engine *e, int kind, const void *dom, struct mcc_stat_domain *out)
{
	struct mcc_domain_stats_v1 ds;
	memset(&ds, 0, sizeof(ds));
	ds.struct_size = sizeof(ds);
	memset(out, 0, sizeof(*out));
	if (e->ops->domain_stats(e->ctx, kind, dom, &ds) != 0)
		return;
	out->valid = MCC_STAT_DOMAIN_VALID;
	out->state = ds.state;
	out->generation = ds.generation;
	out->hard_errors = ds.hard_errors;
	out->window_bytes = ds.window_bytes;
	out->inflight_bytes = ds.inflight_bytes;
	out->cooldown_ms = ds.cooldown_ms;
	out->admits = ds.admits;
	out->defers = ds.defers;
	out->avoids = ds.avoids;
	out->would_defer = ds.would_defer;
	out->would_avoid = ds.would_avoid;
	out->completed_bytes = ds.completed_bytes;
	out->completions = ds.completions;
	out->errors = ds.errors;
	out->stale_feedback = ds.stale_feedback;
	out->double_release = ds.double_release;
	out->quarantines = ds.quarantines;
	out->probes = ds.probes;
	out->window_cuts = ds.window_cuts;
	out->drain_us = ds.drain_us;
	out->rate_bps = ds.rate_bps;
	out->suppressed_deadlines = ds.suppressed_deadlines;
}

/* A route the engine opened itself, shown through
 * mcc_engine_stat_route_add (kv->p of e->xroutes, keyed by the handle). */
struct xroute {
	mcc_device *dev;
	uint64_t id;
	uint32_t key_len;
	char peer[128];
};

/* Under dv_mu: the index of `dev` among the registered devices, then the
 * `extra` ones (added when new and `add`); UINT32_MAX when unknown. */
static uint32_t dev_index(mcc_engine *e, mcc_device **extra, uint32_t *nx, mcc_device *dev,
                          int add)
{
	uint32_t k;
	for (k = 0; k < e->ndevs; k++)
		if (e->devs[k].dev == dev)
			return k;
	for (k = 0; k < *nx; k++)
		if (extra[k] == dev)
			return e->ndevs + k;
	if (!add)
		return UINT32_MAX;
	extra[(*nx)++] = dev;
	return e->ndevs + k;
}

int mcc_engine_stat_snapshot(mcc_engine *e, struct mcc_stat_snapshot **out)
{
	if (out)
		*out = NULL;
	if (!e || !out)
		return -EINVAL;
	struct mcc__route_view *rv = NULL;
	int nr = mcc__engine_routes_view(e, &rv);
	if (nr < 0)
		return nr;
	struct mcc_stat_snapshot *s = NULL;
	mcc_device **extra = NULL;
	int rc = 0;
	pthread_mutex_lock(&e->dv_mu);
	uint32_t nd = e->ndevs, nxr = e->nxroutes, nx = 0, nroutes = (uint32_t)nr + nxr;
	/* the devices the routes name that the SDK does not know (an engine
	 * that opens devices itself): listed, unnamed, without counters */
	if (nroutes && !(extra = calloc(nroutes, sizeof(*extra)))) {
		rc = -ENOMEM;
		goto unlock;
	}
	for (int i = 0; i < nr; i++)
		dev_index(e, extra, &nx, rv[i].dev, 1);
	for (unsigned b = 0; b < MCC_ENG_BUCKETS; b++)
		for (struct mcc_eng_kv *kv = e->xroutes.bucket[b]; kv; kv = kv->next)
			dev_index(e, extra, &nx, ((struct xroute *)kv->p)->dev, 1);
	s = calloc(1, sizeof(*s) + (size_t)(nd + nx) * sizeof(*s->devices) +
	                      (size_t)nroutes * sizeof(*s->routes));
	if (!s) {
		rc = -ENOMEM;
		goto unlock;
	}
	s->devices = (struct mcc_stat_device *)(s + 1);
	s->routes = (struct mcc_stat_route *)(s->devices + nd + nx);
	/* under dv_mu: no device and no added route closes meanwhile */
	for (uint32_t k = 0; k < nd; k++) {
		struct mcc_stat_device *d = &s->devices[k];
		d->device_id = e->devs[k].device_id;
		d->named = 1;
		d->flags = e->devs[k].flags;
		d->link_rate_bps = e->devs[k].link_rate_bps;
		snprintf(d->name, sizeof(d->name), "%s", e->devs[k].name);
		domain(e, MCC_DOMAIN_DEVICE, e->devs[k].dev, &d->d);
	}
	for (uint32_t k = 0; k < nx; k++) {
		struct mcc_stat_device *d = &s->devices[nd + k];
		d->device_id = UINT32_MAX;
		snprintf(d->name, sizeof(d->name), "unnamed%u", k);
	}
	for (int i = 0; i < nr; i++) {
		struct mcc_stat_route *r = &s->routes[i];
		r->device = dev_index(e, extra, &nx, rv[i].dev, 0);
		r->route_id = rv[i].id;
		r->key_len = rv[i].key_len;
		memcpy(r->peer, rv[i].peer, sizeof(r->peer));
	}
	uint32_t j = (uint32_t)nr;
	for (unsigned b = 0; b < MCC_ENG_BUCKETS; b++)
		for (struct mcc_eng_kv *kv = e->xroutes.bucket[b]; kv; kv = kv->next, j++) {
			const struct xroute *x = kv->p;
			struct mcc_stat_route *r = &s->routes[j];
			r->device = dev_index(e, extra, &nx, x->dev, 0);
			r->route_id = x->id;
			r->key_len = x->key_len;
			memcpy(r->peer, x->peer, sizeof(r->peer));
			domain(e, MCC_DOMAIN_ROUTE, (const void *)(uintptr_t)kv->a, &r->d);
		}
unlock:
	pthread_mutex_unlock(&e->dv_mu);
	if (rc)
		goto out;
	/* the SDK's routes outside every SDK lock: each is referenced, so open */
	for (int i = 0; i < nr; i++)
		domain(e, MCC_DOMAIN_ROUTE, rv[i].cc, &s->routes[i].d);

	struct mcc_stat_header *h = &s->hdr;
	memcpy(h->magic, MCC_STAT_MAGIC, sizeof(h->magic));
	h->version_major = MCC_STAT_VERSION_MAJOR;
	h->version_minor = MCC_STAT_VERSION_MINOR;
	h->header_size = sizeof(*h);
	h->device_size = sizeof(struct mcc_stat_device);
	h->route_size = sizeof(struct mcc_stat_route);
	h->device_capacity = h->device_count = h->devices_open = nd + nx;
	h->route_capacity = h->route_count = h->routes_open = nroutes;
	h->file_size = sizeof(*h) + (uint64_t)h->device_capacity * h->device_size +
	               (uint64_t)h->route_capacity * h->route_size;
	h->pid = (uint64_t)getpid();
	h->publish_unix_ns = clock_read_ns(CLOCK_REALTIME);
	h->sdk_now_ns = mcc_engine_now(e);
	h->interval_ms = e->stat ? e->stat->interval_ms : 0;
	h->mode = (uint32_t)mcc_instance_mode(e->inst);
	h->policy_abi = e->ops->abi_version;
	h->lanes_open = atomic_load_explicit(&e->lanes_open, memory_order_relaxed);
	h->ticks = atomic_load_explicit(&e->hub->ticks, memory_order_relaxed);
	snprintf(h->engine, sizeof(h->engine), "%s", e->name);
	snprintf(h->module, sizeof(h->module), "%s", mcc_instance_name(e->inst));
	*out = s;
	s = NULL;
out:
	free(s);
	for (int i = 0; i < nr; i++)
		mcc_engine_route_put(rv[i].r);
	free(rv);
	free(extra);
	return rc;
}

int mcc_engine_stat_route_add(mcc_engine *e, mcc_device *dev, mcc_route *route, const void *key,
                              size_t klen, uint64_t route_id)
{
	if (!e || !route || !key || klen == 0)
		return -EINVAL;
	char peer[128];
	mcc__route_key_text(key, klen, peer, sizeof(peer));
	pthread_mutex_lock(&e->dv_mu);
	struct mcc_eng_kv **slot = mcc__eng_map_find(&e->xroutes, (uint64_t)(uintptr_t)route, 0);
	struct mcc_eng_kv *kv = *slot;
	struct xroute *x = kv ? kv->p : calloc(1, sizeof(*x));
	if (x && !kv && !(kv = mcc__eng_map_insert(slot, (uint64_t)(uintptr_t)route, 0))) {
		free(x);
		x = NULL;
	}
	if (!x) {
		pthread_mutex_unlock(&e->dv_mu);
		return -ENOMEM;
	}
	if (!kv->p)
		e->nxroutes++;
	kv->p = x;
	x->dev = dev;
	x->id = route_id;
	x->key_len = klen > UINT32_MAX ? UINT32_MAX : (uint32_t)klen;
	memcpy(x->peer, peer, sizeof(x->peer));
	pthread_mutex_unlock(&e->dv_mu);
	return 0;
}

int mcc_engine_stat_route_remove(mcc_engine *e, mcc_route *route)
{
	if (!e || !route)
		return -EINVAL;
	pthread_mutex_lock(&e->dv_mu);
	struct mcc_eng_kv **slot = mcc__eng_map_find(&e->xroutes, (uint64_t)(uintptr_t)route, 0);
	int rc = -ENOENT;
	if (*slot) {
		free((*slot)->p);
		mcc__eng_map_erase(slot);
		e->nxroutes--;
		rc = 0;
	}
	pthread_mutex_unlock(&e->dv_mu);
	return rc;
}

/* Engine close: forget the added routes (the engine closed them). */
void mcc__engine_stat_routes_fini(mcc_engine *e)
{
	pthread_mutex_lock(&e->dv_mu);
	for (unsigned b = 0; b < MCC_ENG_BUCKETS; b++)
		for (struct mcc_eng_kv *kv = e->xroutes.bucket[b]; kv; kv = kv->next)
			free(kv->p);
	mcc__eng_map_clear(&e->xroutes);
	e->nxroutes = 0;
	pthread_mutex_unlock(&e->dv_mu);
}

/* Under st->mu. */
static int publish_locked(mcc_engine *e, struct mcc_engine_stat *st)
{
	struct mcc_stat_snapshot *s;
	char err[PATH_MAX + 256];
	int rc = mcc_engine_stat_snapshot(e, &s);
	if (rc == 0) {
		rc = mcc__stat_file_publish(&st->file, s, err, sizeof(err));
		mcc_stat_free(s);
	} else {
		snprintf(err, sizeof(err), "%s: snapshot: %s", st->path, mcc_strerror(rc));
	}
	if (rc == 0) {
		st->warned = 0;
	} else if (!st->warned) {
		st->warned = 1; /* once until a publish succeeds again */
		MCC_ENG_LOG(e, MCC_LOG_WARN, "live view: %s (the engine goes on)", err);
	}
	return rc;
}

int mcc_engine_stat_publish(mcc_engine *e)
{
	if (!e)
		return -EINVAL;
	struct mcc_engine_stat *st = e->stat;
	if (!st)
		return -EOPNOTSUPP;
	pthread_mutex_lock(&st->mu);
	int rc = publish_locked(e, st);
	pthread_mutex_unlock(&st->mu);
	return rc;
}

const char *mcc_engine_stat_path(const mcc_engine *e)
{
	return e && e->stat ? e->stat->path : "";
}

/* The publishing thread: every period, stretched so that publishing takes
 * at most 1/STAT_DUTY of the time; stops at close. */
static void *stat_main(void *arg)
{
	mcc_engine *e = arg;
	struct mcc_engine_stat *st = e->stat;
	uint64_t wait = st->period_ns;
	pthread_mutex_lock(&st->thr_mu);
	while (!st->thr_stop) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		uint64_t ns = (uint64_t)ts.tv_nsec + wait;
		ts.tv_sec += (time_t)(ns / 1000000000u);
		ts.tv_nsec = (long)(ns % 1000000000u);
		pthread_cond_timedwait(&st->thr_cv, &st->thr_mu, &ts);
		if (st->thr_stop)
			break;
		pthread_mutex_unlock(&st->thr_mu);
		uint64_t t0 = clock_read_ns(CLOCK_MONOTONIC);
		mcc_engine_stat_publish(e);
		uint64_t took = clock_read_ns(CLOCK_MONOTONIC) - t0;
		wait = took * STAT_DUTY > st->period_ns ? took * STAT_DUTY : st->period_ns;
		pthread_mutex_lock(&st->thr_mu);
	}
	pthread_mutex_unlock(&st->thr_mu);
	return NULL;
}

/* Under g_paths_mu: is `path` another engine's of this process? */
static int path_taken(const char *path)
{
	for (struct mcc_engine_stat *p = g_paths; p; p = p->next)
		if (strcmp(p->path, path) == 0)
			return 1;
	return 0;
}

/* Forget st's path, remove its file, free it. */
static void stat_free(struct mcc_engine_stat *st)
{
	pthread_mutex_lock(&g_paths_mu);
	for (struct mcc_engine_stat **pp = &g_paths; *pp; pp = &(*pp)->next)
		if (*pp == st) {
			*pp = st->next;
			break;
		}
	pthread_mutex_unlock(&g_paths_mu);
	mcc__stat_file_close(st->file, 1);
	pthread_mutex_destroy(&st->mu);
	pthread_mutex_destroy(&st->thr_mu);
	pthread_cond_destroy(&st->thr_cv);
	free(st);
}

void mcc__engine_stat_close(mcc_engine *e)
{
	struct mcc_engine_stat *st = e->stat;
	if (!st)
		return;
	if (st->thr_on) {
		pthread_mutex_lock(&st->thr_mu);
		st->thr_stop = 1;
		pthread_cond_signal(&st->thr_cv);
		pthread_mutex_unlock(&st->thr_mu);
		pthread_join(st->thr, NULL);
	}
	e->stat = NULL; /* the engine's threads are quiesced: nobody publishes */
	stat_free(st);
}

void mcc__engine_stat_open(mcc_engine *e)
{
	const struct mcc_stat_keys *k = mcc__instance_stat_keys(e->inst);
	if (!k || !k->stat[0] || strcmp(k->stat, "off") == 0)
		return;
	const char *dir = strcmp(k->stat, "on") == 0 ? MCC_STAT_DIR_DEFAULT : k->stat;
	struct mcc_engine_stat *st = calloc(1, sizeof(*st));
	if (!st) {
		MCC_ENG_LOG(e, MCC_LOG_WARN, "live view: out of memory; not published");
		return;
	}
	pthread_mutex_init(&st->mu, NULL);
	pthread_mutex_init(&st->thr_mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&st->thr_cv, &ca);
	pthread_condattr_destroy(&ca);
	st->interval_ms = k->interval_ms ? k->interval_ms : MCC_DEFAULT_STAT_INTERVAL_MS;
	st->period_ns = (uint64_t)st->interval_ms * 1000000u;
	pthread_mutex_lock(&g_paths_mu);
	for (unsigned n = 1; n < 1000; n++) {
		if (n == 1)
			snprintf(st->path, sizeof(st->path), "%s/mcc.%ld.%s", dir, (long)getpid(), e->name);
		else
			snprintf(st->path, sizeof(st->path), "%s/mcc.%ld.%s-%u", dir, (long)getpid(),
			         e->name, n);
		if (!path_taken(st->path))
			break;
	}
	st->next = g_paths;
	g_paths = st;
	pthread_mutex_unlock(&g_paths_mu);

	char err[PATH_MAX + 256];
	int rc = mcc__stat_file_create(st->path, e->ndevs, 0, &st->file, err, sizeof(err));
	e->stat = st;
	if (rc == 0)
		rc = mcc_engine_stat_publish(e); /* the file appears complete, or not at all */
	else
		MCC_ENG_LOG(e, MCC_LOG_WARN, "live view: %s; not published", err);
	if (rc != 0) {
		e->stat = NULL;
		stat_free(st);
		return;
	}
	if (pthread_create(&st->thr, NULL, stat_main, e) != 0) {
		MCC_ENG_LOG(e, MCC_LOG_WARN, "live view: %s: no thread to publish; not published",
		            st->path);
		e->stat = NULL;
		stat_free(st);
		return;
	}
	st->thr_on = 1;
	MCC_ENG_LOG(e, MCC_LOG_INFO, "live view: %s every %u ms (mcc stat %ld)", st->path,
	            st->interval_ms, (long)getpid());
}
