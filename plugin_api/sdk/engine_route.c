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

struct mcc_engine_route {
	_Atomic uint32_t refs;
	uint32_t open;          /* published under its key (rt_mu) */
	mcc_engine *e;
	mcc_route *cc;
	mcc_device *dev;        /* rt_mu */
	uint64_t id;
	uint64_t incarnation;   /* rt_mu */
	_Atomic uint32_t gen;
	uint32_t hash;
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

void mcc_engine_route_put(struct mcc_engine_route *r)
{
	if (!r || atomic_fetch_sub_explicit(&r->refs, 1, memory_order_acq_rel) != 1)
		return;
	r->e->ops->route_close(r->e->ctx, r->cc);
	free(r->path);
	free(r);
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
	atomic_init(&r->refs, 2); /* the key's and the caller's */
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
	pthread_mutex_lock(&e->rt_mu);
	struct mcc_engine_route *r = *route_find(e, key, klen, key_hash(key, klen));
	if (r)
		route_get(r);
	pthread_mutex_unlock(&e->rt_mu);
	*out = r;
	return r ? 0 : -ENOENT;
}

/* Under rt_mu, with every route still published: drop the QP registrations
 * of r (of all routes: r NULL) and their references, never the last (the
 * key holds one). */
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
			atomic_fetch_sub_explicit(&q->refs, 1, memory_order_acq_rel);
		}
	}
	pthread_mutex_unlock(&e->as_mu);
}

int mcc_engine_route_close(mcc_engine *e, const void *key, size_t klen)
{
	if (!e || !key || klen == 0 || klen > KEY_MAX)
		return -EINVAL;
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
	pthread_mutex_unlock(&e->rt_mu);
	mcc_engine_route_put(r);
	return 0;
}

int64_t mcc_engine_route_renew(mcc_engine *e, mcc_engine_route *r, uint64_t incarnation)
{
	if (!e || !r || r->e != e)
		return -EINVAL;
	pthread_mutex_lock(&e->rt_mu);
	int64_t rc = r->open ? (int64_t)route_bump(e, r, incarnation) : -ESTALE;
	pthread_mutex_unlock(&e->rt_mu);
	return rc;
}

mcc_route *mcc_engine_route_cc(const mcc_engine_route *r)
{
	return r->cc;
}

uint32_t mcc_engine_route_generation(const mcc_engine_route *r)
{
	return atomic_load_explicit(&((mcc_engine_route *)r)->gen, memory_order_acquire);
}

uint64_t mcc_engine_route_id(const mcc_engine_route *r)
{
	return r->id;
}

void mcc__engine_routes_fini(mcc_engine *e)
{
	pthread_mutex_lock(&e->rt_mu);
	qps_drop(e, NULL);
	pthread_mutex_lock(&e->as_mu);
	for (unsigned i = 0; i < MCC_ENG_BUCKETS; i++)
		while (e->cqs.bucket[i])
			mcc__eng_map_erase(&e->cqs.bucket[i]);
	pthread_mutex_unlock(&e->as_mu);
	struct mcc_engine_route *list = NULL;
	for (unsigned i = 0; i < MCC_ENG_BUCKETS; i++)
		while (e->routes[i]) {
			struct mcc_engine_route *r = e->routes[i];
			e->routes[i] = r->next;
			r->open = 0;
			r->next = list;
			list = r;
		}
	e->routes_open = 0;
	pthread_mutex_unlock(&e->rt_mu);
	while (list) {
		struct mcc_engine_route *r = list;
		list = r->next;
		uint32_t refs = atomic_load_explicit(&r->refs, RLX);
		if (refs > 1)
			MCC_ENG_LOG(e, MCC_LOG_ERROR,
			            "engine close: route %llu still has %u references; left open "
			            "(the policy's fini frees it)",
			            (unsigned long long)r->id, refs - 1);
		else
			MCC_ENG_LOG(e, MCC_LOG_WARN, "engine close: route %llu was still open; closed",
			            (unsigned long long)r->id);
		mcc_engine_route_put(r);
	}
}

/* ----------------------------------------------------------- async routing */

int mcc_engine_qp_add(mcc_engine *e, mcc_engine_route *r, uint32_t qp_num)
{
	if (!e || !r || r->e != e)
		return -EINVAL;
	int rc = 0;
	pthread_mutex_lock(&e->rt_mu);
	if (!r->open) {
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
			route_get(r);
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
	pthread_mutex_lock(&e->as_mu);
	struct mcc_eng_kv **slot = mcc__eng_map_find(&e->qps, (uint64_t)(uintptr_t)dev, qp_num);
	struct mcc_engine_route *r = *slot ? (*slot)->p : NULL;
	if (r)
		mcc__eng_map_erase(slot);
	pthread_mutex_unlock(&e->as_mu);
	if (!r)
		return -ENOENT;
	mcc_engine_route_put(r);
	return 0;
}

uint32_t mcc_engine_cq_id(mcc_engine *e, mcc_device *dev, uint64_t cq_key)
{
	if (!e || !dev)
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
			route_get(r);
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
	mcc_engine_route_put(r);
	return delivered;
}

/* --------------------------------------------------------- set-up failures */

int mcc_engine_setup_failed(mcc_engine *e, mcc_device *dev, mcc_engine_route *r, uint32_t stage,
                            int error, const struct mcc_task_ref_v1 *task)
{
	if (!e)
		return -EINVAL;
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
