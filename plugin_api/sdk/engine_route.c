/* SPDX-License-Identifier: MIT */
/*
 * engine_route.c - the engine SDK's route registry (keys, ids, generations,
 * references), QP/CQ registration, async-event routing and set-up failure
 * signals (mcc_engine.h).
 */
#include "engine_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define RLX memory_order_relaxed
#define KEY_MAX 4096u

/*
 * The reference rule (mcc_engine.h): `refs` counts the references handed
 * to callers (each open and lookup), `qrefs` the SDK's own (registered QPs,
 * async events in delivery), so a put too many can never take one of the
 * SDK's; `open` says the key is published. The route is freed under rt_mu
 * once it is none of these; its memory then stays in the engine's grave
 * (magic DEAD) for the next MCC_ENG_ROUTE_GRAVE frees, so a put or call too
 * many reads DEAD.
 */
struct mcc_engine_route {
	_Atomic uint64_t magic; /* first: MCC_ROUTE_MAGIC_LIVE until freed */
	_Atomic uint32_t refs;  /* the callers' */
	_Atomic uint32_t qrefs; /* the SDK's: QP registrations, async snapshots */
	uint32_t open;          /* published under its key (rt_mu) */
	struct mcc_engine_route *all_next, *all_prev; /* e->all (rt_mu) */
	mcc_engine *e;
	mcc_route *cc;
	mcc_device *dev;        /* rt_mu */
	uint64_t id;
	uint64_t incarnation;   /* rt_mu */
	_Atomic uint32_t gen;
	uint32_t hash;
	_Atomic uint64_t avoided_ns; /* SDK time the policy was last asked (avoided) */
	uint64_t probe_q;       /* the quarantine count a probe generation was given for */
	struct mcc_engine_route *next; /* bucket chain (rt_mu) */
	char *path;             /* NUL-terminated copy of a text key, or NULL */
	size_t klen;
	unsigned char key[];
};

static uint32_t key_hash(const void *key, size_t n)
{
	const unsigned char *p = key;
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

/* Under rt_mu: the link holding key, or the NULL link at its chain's end. */
static struct mcc_engine_route **route_find(mcc_engine *e, const void *key, size_t klen,
                                            uint32_t h)
{
	struct mcc_engine_route **pp = &e->routes[h % MCC_ENG_BUCKETS];
	while (*pp && ((*pp)->hash != h || (*pp)->klen != klen || memcmp((*pp)->key, key, klen)))
		pp = &(*pp)->next;
	return pp;
}

static void route_get(struct mcc_engine_route *r)
{
	atomic_fetch_add_explicit(&r->refs, 1, RLX);
}

static int route_live(const struct mcc_engine_route *r)
{
	return r && atomic_load_explicit(&((struct mcc_engine_route *)r)->magic, memory_order_acquire) ==
	                MCC_ROUTE_MAGIC_LIVE;
}

/* Under rt_mu: the route is neither published nor referenced: close the
 * policy's route, forget it, keep its memory DEAD in the grave. */
static void route_free(mcc_engine *e, struct mcc_engine_route *r)
{
	if (r->all_prev)
		r->all_prev->all_next = r->all_next;
	else
		e->all = r->all_next;
	if (r->all_next)
		r->all_next->all_prev = r->all_prev;
	r->all_next = r->all_prev = NULL;
	e->ops->route_close(e->ctx, r->cc);
	r->cc = NULL;
	free(r->path);
	r->path = NULL;
	atomic_store_explicit(&r->magic, MCC_ROUTE_MAGIC_DEAD, memory_order_release);
	struct mcc_engine_route **g = &e->grave[e->grave_next++ % MCC_ENG_ROUTE_GRAVE];
	free(*g); /* the oldest freed route leaves the grave */
	*g = r;
}

/* Under rt_mu: nothing holds r any more. */
static int route_unheld(struct mcc_engine_route *r)
{
	return !r->open && atomic_load_explicit(&r->refs, memory_order_acquire) == 0 &&
	       atomic_load_explicit(&r->qrefs, memory_order_acquire) == 0;
}

/* A count dropped to 0: free the route if nothing else holds it. */
static void route_last_put(mcc_engine *e, struct mcc_engine_route *r)
{
	pthread_mutex_lock(&e->rt_mu);
	if (route_live(r) && route_unheld(r))
		route_free(e, r);
	pthread_mutex_unlock(&e->rt_mu);
}

/* Drop one of the SDK's own references. */
static void route_qunref(struct mcc_engine_route *r)
{
	if (atomic_fetch_sub_explicit(&r->qrefs, 1, memory_order_acq_rel) == 1)
		route_last_put(r->e, r);
}

/* Drop one reference; -EBADF (nothing changes) when none is held. */
static int route_unref(struct mcc_engine_route *r, const char *call)
{
	if (!route_live(r))
		return -EBADF;
	uint32_t n = atomic_load_explicit(&r->refs, RLX);
	do {
		if (n == 0) {
			MCC_ENG_LOG(r->e, MCC_LOG_ERROR,
			            "%s: route %llu holds no reference (one put too many); ignored", call,
			            (unsigned long long)r->id);
			return -EBADF;
		}
	} while (!atomic_compare_exchange_weak_explicit(&r->refs, &n, n - 1, memory_order_acq_rel,
	                                                RLX));
	if (n == 1)
		route_last_put(r->e, r);
	return 0;
}

int mcc_engine_route_put(struct mcc_engine_route *r)
{
	if (!r)
		return 0;
	return route_unref(r, "mcc_engine_route_put");
}

static void signal_rebuilt(mcc_engine *e, struct mcc_engine_route *r, uint32_t gen)
{
	if (!(e->sig_mask & (1ull << MCC_SIG_ENDPOINT_REBUILT)))
		return;
	struct mcc_signal_v1 sig;
	memset(&sig, 0, sizeof(sig));
	sig.struct_size = sizeof(sig);
	sig.kind = MCC_SIG_ENDPOINT_REBUILT;
	sig.device = r->dev;
	sig.route = r->cc;
	sig.generation = gen;
	sig.now_ns = mcc_engine_now(e);
	e->ops->on_signal(e->ctx, &sig);
}

/* Under rt_mu: a new incarnation of an open route. */
static uint32_t route_bump(mcc_engine *e, struct mcc_engine_route *r, uint64_t incarnation)
{
	uint32_t gen = atomic_load_explicit(&r->gen, RLX) + 1;
	if (gen == 0) /* 0 means "none yet" in the ABI */
		gen = 1;
	atomic_store_explicit(&r->gen, gen, memory_order_release);
	r->incarnation = incarnation;
	signal_rebuilt(e, r, gen);
	return gen;
}

static int text_key(const unsigned char *k, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (k[i] < 0x20 || k[i] > 0x7e)
			return 0;
	return 1;
}

int mcc_engine_route_open(mcc_engine *e, mcc_device *dev, const void *key, size_t klen,
                          uint64_t incarnation, const struct mcc_route_desc_v1 *desc,
                          mcc_engine_route **out)
{
	if (out)
		*out = NULL;
	if (!e || !dev || !key || !out || klen == 0 || klen > KEY_MAX ||
	    (desc && desc->struct_size < MCC_ROUTE_DESC_V1_0_SIZE))
		return -EINVAL;
	if (!mcc__engine_live(e))
		return -EBADF;
	struct mcc_route_desc_v1 d;
	memset(&d, 0, sizeof(d));
	if (desc)
		memcpy(&d, desc, desc->struct_size < sizeof(d) ? desc->struct_size : sizeof(d));
	d.struct_size = sizeof(d);
	uint32_t h = key_hash(key, klen);
	int rc;
	pthread_mutex_lock(&e->rt_mu);
	struct mcc_engine_route **slot = route_find(e, key, klen, h);
	struct mcc_engine_route *r = *slot;
	if (r) { /* known key: same incarnation, new incarnation, or new device */
		if (r->dev != dev) {
			rc = e->ops->route_rebind(e->ctx, r->cc, dev, d.port_num, d.cq_id);
			if (rc) {
				pthread_mutex_unlock(&e->rt_mu);
				return rc;
			}
			r->dev = dev;
		}
		rc = MCC_ENGINE_ROUTE_SAME;
		if (incarnation != r->incarnation) {
			route_bump(e, r, incarnation);
			rc = MCC_ENGINE_ROUTE_RENEWED;
		}
		route_get(r);
		pthread_mutex_unlock(&e->rt_mu);
		*out = r;
		return rc;
	}
	r = calloc(1, sizeof(*r) + klen);
	if (!r) {
		pthread_mutex_unlock(&e->rt_mu);
		return -ENOMEM;
	}
	memcpy(r->key, key, klen);
	r->klen = klen;
	r->hash = h;
	r->e = e;
	r->dev = dev;
	r->incarnation = incarnation;
	r->id = e->next_route_id;
	atomic_init(&r->gen, 1);
	atomic_init(&r->refs, 1); /* the caller's (the key holds none: `open`) */
	if (!d.peer_path && text_key(key, klen)) {
		r->path = malloc(klen + 1);
		if (r->path) {
			memcpy(r->path, key, klen);
			r->path[klen] = '\0';
			d.peer_path = r->path;
		}
	}
	d.route_id = r->id;
	d.generation = 1;
	if (!d.base_rtt_ns) /* the host's own figure first, else its operator's */
		d.base_rtt_ns = e->base_rtt_ns;
	rc = e->ops->route_open(e->ctx, dev, &d, &r->cc);
	if (rc) {
		pthread_mutex_unlock(&e->rt_mu);
		free(r->path);
		free(r);
		return rc;
	}
	e->next_route_id++;
	r->open = 1;
	r->next = *slot;
	*slot = r;
	r->all_next = e->all;
	if (e->all)
		e->all->all_prev = r;
	e->all = r;
	atomic_store_explicit(&r->magic, MCC_ROUTE_MAGIC_LIVE, memory_order_release);
	e->routes_open++;
	pthread_mutex_unlock(&e->rt_mu);
	*out = r;
	return MCC_ENGINE_ROUTE_NEW;
}

int mcc_engine_route_lookup(mcc_engine *e, const void *key, size_t klen, mcc_engine_route **out)
{
	if (out)
		*out = NULL;
	if (!e || !key || !out || klen == 0 || klen > KEY_MAX)
		return -EINVAL;
	if (!mcc__engine_live(e))
		return -EBADF;
	pthread_mutex_lock(&e->rt_mu);
	struct mcc_engine_route *r = *route_find(e, key, klen, key_hash(key, klen));
	if (r)
		route_get(r);
	pthread_mutex_unlock(&e->rt_mu);
	*out = r;
	return r ? 0 : -ENOENT;
}

/* Under rt_mu: drop the QP registrations of r (of all routes: r NULL) and
 * their references; the caller frees what is left unreferenced. */
static void qps_drop(mcc_engine *e, struct mcc_engine_route *r)
{
	pthread_mutex_lock(&e->as_mu);
	for (unsigned i = 0; i < MCC_ENG_BUCKETS; i++) {
		struct mcc_eng_kv **pp = &e->qps.bucket[i];
		while (*pp) {
			if (r && (*pp)->p != r) {
				pp = &(*pp)->next;
				continue;
			}
			struct mcc_engine_route *q = (*pp)->p;
			mcc__eng_map_erase(pp);
			atomic_fetch_sub_explicit(&q->qrefs, 1, memory_order_acq_rel);
		}
	}
	pthread_mutex_unlock(&e->as_mu);
}

int mcc_engine_route_close(mcc_engine *e, const void *key, size_t klen)
{
	if (!e || !key || klen == 0 || klen > KEY_MAX)
		return -EINVAL;
	if (!mcc__engine_live(e))
		return -EBADF;
	pthread_mutex_lock(&e->rt_mu);
	struct mcc_engine_route **slot = route_find(e, key, klen, key_hash(key, klen));
	struct mcc_engine_route *r = *slot;
	if (!r) {
		pthread_mutex_unlock(&e->rt_mu);
		return -ENOENT;
	}
	*slot = r->next;
	r->next = NULL;
	r->open = 0;
	e->routes_open--;
	qps_drop(e, r);
	if (route_unheld(r))
		route_free(e, r); /* nobody holds it: the policy's route closes now */
	pthread_mutex_unlock(&e->rt_mu);
	return 0;
}

int64_t mcc_engine_route_renew(mcc_engine *e, mcc_engine_route *r, uint64_t incarnation)
{
	if (!e || !r)
		return -EINVAL;
	if (!mcc__engine_live(e) || !route_live(r))
		return -EBADF;
	if (r->e != e)
		return -EINVAL;
	pthread_mutex_lock(&e->rt_mu);
	int64_t rc = !route_live(r) ? -EBADF : r->open ? (int64_t)route_bump(e, r, incarnation)
	                                              : -ESTALE;
	pthread_mutex_unlock(&e->rt_mu);
	return rc;
}

int mcc_engine_route_avoided(mcc_engine *e, mcc_engine_route *r, uint64_t *retry_ns)
{
	if (retry_ns)
		*retry_ns = 0;
	if (!e || !r)
		return -EINVAL;
	if (!mcc__engine_live(e) || !route_live(r))
		return -EBADF;
	if (r->e != e)
		return -EINVAL;
	uint64_t epoch = e->hub->epoch_ns, now = mcc_engine_now(e), wait = epoch;
	struct mcc_domain_stats_v1 st;
	memset(&st, 0, sizeof(st));
	st.struct_size = sizeof(st);
	int rc = 0;
	pthread_mutex_lock(&e->rt_mu);
	uint64_t last = atomic_load_explicit(&r->avoided_ns, RLX);
	if (!route_live(r)) {
		rc = -EBADF;
	} else if (!r->open) {
		rc = -ESTALE;
	} else if (last && now - last < epoch) {
		/* asked this epoch already: the answer has not changed */
	} else {
		atomic_store_explicit(&r->avoided_ns, now, RLX);
		if (e->ops->domain_stats(e->ctx, MCC_DOMAIN_ROUTE, r->cc, &st) != 0) {
			/* a policy without statistics: nothing to learn */
		} else if (st.state == MCC_PATH_PROBING && st.inflight_bytes == 0 &&
		           st.quarantines != r->probe_q) {
			/* the cooldown is over and the engine gave no new generation:
			 * the probe's, on the same incarnation */
			r->probe_q = st.quarantines;
			route_bump(e, r, r->incarnation);
			wait = 0;
			rc = 1;
		} else if (st.state == MCC_PATH_QUARANTINED && st.cooldown_ms) {
			wait = st.cooldown_ms * 1000000ull;
		}
	}
	pthread_mutex_unlock(&e->rt_mu);
	if (rc == 1)
		MCC_ENG_LOG(e, MCC_LOG_INFO,
		            "route %llu (%s): cooldown over, generation %u for the policy's probe",
		            (unsigned long long)r->id, r->path ? r->path : "binary key",
		            atomic_load_explicit(&r->gen, RLX));
	if (retry_ns && rc >= 0)
		*retry_ns = wait;
	return rc;
}

mcc_route *mcc_engine_route_cc(const mcc_engine_route *r)
{
	return route_live(r) ? r->cc : NULL;
}

uint32_t mcc_engine_route_generation(const mcc_engine_route *r)
{
	return route_live(r) ? atomic_load_explicit(&((mcc_engine_route *)r)->gen,
	                                            memory_order_acquire)
	                     : 0;
}

uint64_t mcc_engine_route_id(const mcc_engine_route *r)
{
	return route_live(r) ? r->id : 0;
}

/* Engine close: every route still published or referenced is reclaimed
 * (its policy route closed, its memory freed), each reported once; then the
 * grave is emptied. Route pointers die with their engine. */
void mcc__engine_routes_fini(mcc_engine *e)
{
	pthread_mutex_lock(&e->rt_mu);
	qps_drop(e, NULL);
	pthread_mutex_lock(&e->as_mu);
	mcc__eng_map_clear(&e->cqs);
	pthread_mutex_unlock(&e->as_mu);
	for (unsigned i = 0; i < MCC_ENG_BUCKETS; i++)
		e->routes[i] = NULL;
	e->routes_open = 0;
	while (e->all) {
		struct mcc_engine_route *r = e->all;
		uint32_t refs = atomic_load_explicit(&r->refs, RLX);
		if (r->open && refs)
			MCC_ENG_LOG(e, MCC_LOG_WARN,
			            "engine close: route %llu (%s) was still open, with %u references "
			            "not put; reclaimed",
			            (unsigned long long)r->id, r->path ? r->path : "binary key", refs);
		else if (r->open)
			MCC_ENG_LOG(e, MCC_LOG_WARN,
			            "engine close: route %llu (%s) was still open; closed",
			            (unsigned long long)r->id, r->path ? r->path : "binary key");
		else
			MCC_ENG_LOG(e, MCC_LOG_WARN,
			            "engine close: route %llu (%s) was closed but %u references were "
			            "never put; reclaimed",
			            (unsigned long long)r->id, r->path ? r->path : "binary key", refs);
		r->open = 0;
		atomic_store_explicit(&r->refs, 0, RLX);
		atomic_store_explicit(&r->qrefs, 0, RLX);
		route_free(e, r);
	}
	for (unsigned i = 0; i < MCC_ENG_ROUTE_GRAVE; i++) {
		free(e->grave[i]);
		e->grave[i] = NULL;
	}
	pthread_mutex_unlock(&e->rt_mu);
}

/* ----------------------------------------------------------- async routing */

int mcc_engine_qp_add(mcc_engine *e, mcc_engine_route *r, uint32_t qp_num)
{
	if (!e || !r)
		return -EINVAL;
	if (!mcc__engine_live(e) || !route_live(r))
		return -EBADF;
	if (r->e != e)
		return -EINVAL;
	int rc = 0;
	pthread_mutex_lock(&e->rt_mu);
	if (!route_live(r)) {
		rc = -EBADF;
	} else if (!r->open) {
		rc = -ESTALE;
	} else {
		uint64_t a = (uint64_t)(uintptr_t)r->dev;
		pthread_mutex_lock(&e->as_mu);
		struct mcc_eng_kv **slot = mcc__eng_map_find(&e->qps, a, qp_num);
		struct mcc_eng_kv *kv = NULL;
		if (*slot)
			rc = -EEXIST;
		else if (!(kv = mcc__eng_map_insert(slot, a, qp_num)))
			rc = -ENOMEM;
		if (kv) {
			kv->p = r;
			kv->v = atomic_load_explicit(&r->gen, RLX);
			atomic_fetch_add_explicit(&r->qrefs, 1, RLX);
		}
		pthread_mutex_unlock(&e->as_mu);
	}
	pthread_mutex_unlock(&e->rt_mu);
	return rc;
}

int mcc_engine_qp_remove(mcc_engine *e, mcc_device *dev, uint32_t qp_num)
{
	if (!e || !dev)
		return -EINVAL;
	if (!mcc__engine_live(e))
		return -EBADF;
	pthread_mutex_lock(&e->as_mu);
	struct mcc_eng_kv **slot = mcc__eng_map_find(&e->qps, (uint64_t)(uintptr_t)dev, qp_num);
	struct mcc_engine_route *r = *slot ? (*slot)->p : NULL;
	if (r)
		mcc__eng_map_erase(slot);
	pthread_mutex_unlock(&e->as_mu);
	if (!r)
		return -ENOENT;
	route_qunref(r);
	return 0;
}

uint32_t mcc_engine_cq_id(mcc_engine *e, mcc_device *dev, uint64_t cq_key)
{
	if (!e || !dev || !mcc__engine_live(e))
		return 0;
	pthread_mutex_lock(&e->as_mu);
	struct mcc_eng_kv **slot = mcc__eng_map_find(&e->cqs, (uint64_t)(uintptr_t)dev, cq_key);
	struct mcc_eng_kv *kv = *slot;
	if (!kv && (kv = mcc__eng_map_insert(slot, (uint64_t)(uintptr_t)dev, cq_key)) != NULL)
		kv->v = e->next_cq_id++;
	uint32_t id = kv ? (uint32_t)kv->v : 0;
	pthread_mutex_unlock(&e->as_mu);
	return id;
}

int mcc_engine_cq_remove(mcc_engine *e, mcc_device *dev, uint64_t cq_key)
{
	if (!e || !dev)
		return -EINVAL;
	if (!mcc__engine_live(e))
		return -EBADF;
	pthread_mutex_lock(&e->as_mu);
	struct mcc_eng_kv **slot = mcc__eng_map_find(&e->cqs, (uint64_t)(uintptr_t)dev, cq_key);
	int rc = *slot ? 0 : -ENOENT;
	if (*slot)
		mcc__eng_map_erase(slot);
	pthread_mutex_unlock(&e->as_mu);
	return rc;
}

int mcc_engine_async_event(mcc_engine *e, mcc_device *dev, const struct mcc_engine_async *in)
{
	if (!e || !dev || !in || in->struct_size < MCC_ENGINE_ASYNC_V1_0_SIZE ||
	    in->element > MCC_ENGINE_EL_CQ)
		return -EINVAL;
	if (!mcc__engine_live(e))
		return -EBADF;
	struct mcc_async_event_v1 ev;
	memset(&ev, 0, sizeof(ev));
	ev.struct_size = sizeof(ev);
	ev.event_type = in->event_type;
	ev.device = dev;
	ev.port_num = in->port_num;
	struct mcc_engine_route *r = NULL;
	if (in->element == MCC_ENGINE_EL_QP || in->element == MCC_ENGINE_EL_CQ) {
		/* the snapshot: taken under the mutex that QP/CQ removal takes */
		uint64_t b = in->element == MCC_ENGINE_EL_QP ? in->qp_num : in->cq_key;
		struct mcc_eng_map *m = in->element == MCC_ENGINE_EL_QP ? &e->qps : &e->cqs;
		pthread_mutex_lock(&e->as_mu);
		struct mcc_eng_kv *kv = *mcc__eng_map_find(m, (uint64_t)(uintptr_t)dev, b);
		if (kv && in->element == MCC_ENGINE_EL_QP) {
			r = kv->p;
			atomic_fetch_add_explicit(&r->qrefs, 1, RLX);
			ev.route = r->cc;
			ev.qp_num = in->qp_num;
			ev.generation = (uint32_t)kv->v;
		} else if (kv) {
			ev.cq_id = (uint32_t)kv->v;
		}
		pthread_mutex_unlock(&e->as_mu);
		if (!kv) {
			atomic_fetch_add_explicit(&e->async_dropped, 1, RLX);
			return -ENOENT;
		}
	}
	int delivered = 0;
	if (e->want_async) {
		ev.now_ns = mcc_engine_now(e);
		e->ops->on_async_event(e->ctx, &ev);
		atomic_fetch_add_explicit(&e->async_delivered, 1, RLX);
		delivered = 1;
	}
	if (r)
		route_qunref(r);
	return delivered;
}

/* --------------------------------------------------------- set-up failures */

int mcc_engine_setup_failed(mcc_engine *e, mcc_device *dev, mcc_engine_route *r, uint32_t stage,
                            int error, const struct mcc_task_ref_v1 *task)
{
	if (!e)
		return -EINVAL;
	if (!mcc__engine_live(e) || (r && (!route_live(r) || r->e != e)))
		return -EBADF;
	int err = error < 0 ? -error : error;
	struct mcc_signal_v1 sig;
	memset(&sig, 0, sizeof(sig));
	sig.struct_size = sizeof(sig);
	switch (stage) {
	case MCC_ENGINE_SETUP_CONNECT:
	case MCC_ENGINE_SETUP_HANDSHAKE:
		if (err == ETIMEDOUT || err == EHOSTUNREACH || err == ENETUNREACH ||
		    err == ECONNREFUSED || err == ECONNRESET) {
			sig.kind = MCC_SIG_CM_EVENT;
			sig.raw = MCC_RDMA_CM_EVENT_UNREACHABLE;
		} else {
			sig.kind = MCC_SIG_CONTROL_RPC_FAILED;
		}
		break;
	case MCC_ENGINE_SETUP_SEGMENT_DESC:
		sig.kind = MCC_SIG_SEGMENT_RPC_FAILED;
		break;
	default:
		return -EINVAL;
	}
	if (!(e->sig_mask & (1ull << sig.kind)))
		return 0;
	sig.device = dev;
	if (r) {
		sig.route = r->cc;
		sig.generation = mcc_engine_route_generation(r);
		if (!sig.device) {
			pthread_mutex_lock(&e->rt_mu);
			sig.device = r->dev;
			pthread_mutex_unlock(&e->rt_mu);
		}
	}
	if (task)
		sig.task = *task;
	sig.error = error;
	sig.now_ns = mcc_engine_now(e);
	e->ops->on_signal(e->ctx, &sig);
	return (int)sig.kind;
}

/* ------------------------------------------------------------- live view */

/* The key as the live view shows it: text as is, other keys as hex
 * (0x...); cut to fit with "..." at the end. */
void mcc__route_key_text(const void *key, size_t klen, char *buf, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *k = key;
	int text = text_key(k, klen);
	size_t need = text ? klen : 2 + 2 * klen, n = 0;

	for (size_t i = 0; n + 1 < len && i < klen; i++) {
		if (text) {
			buf[n++] = (char)k[i];
			continue;
		}
		if (i == 0) {
			buf[n++] = '0';
			buf[n++] = 'x';
		}
		buf[n++] = hex[k[i] >> 4];
		if (n + 1 < len)
			buf[n++] = hex[k[i] & 15];
	}
	buf[n < len ? n : len - 1] = '\0';
	if (need >= len && len > 4)
		memcpy(buf + len - 4, "...", 4);
}

int mcc__engine_routes_view(mcc_engine *e, struct mcc__route_view **out)
{
	*out = NULL;
	pthread_mutex_lock(&e->rt_mu);
	size_t n = e->routes_open, i = 0;
	struct mcc__route_view *v = n ? calloc(n, sizeof(*v)) : NULL;
	if (n && !v) {
		pthread_mutex_unlock(&e->rt_mu);
		return -ENOMEM;
	}
	for (unsigned b = 0; b < MCC_ENG_BUCKETS && i < n; b++)
		for (struct mcc_engine_route *r = e->routes[b]; r && i < n; r = r->next, i++) {
			route_get(r);
			v[i].r = r;
			v[i].cc = r->cc;
			v[i].dev = r->dev;
			v[i].id = r->id;
			v[i].key_len = (uint32_t)r->klen;
			mcc__route_key_text(r->key, r->klen, v[i].peer, sizeof(v[i].peer));
		}
	pthread_mutex_unlock(&e->rt_mu);
	*out = v;
	return (int)i;
}
