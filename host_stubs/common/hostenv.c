/* SPDX-License-Identifier: MIT */
/* hostenv.c - helpers shared by the engine stubs (no hook dependency). */
#include "hostenv.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

uint64_t mcc_host_checksum(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n, w;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		memcpy(&w, b + i, 8);
		h = (h ^ w) * 0x100000001b3ull;
		h ^= h >> 29;
	}
	for (; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h ^ (h >> 32);
}


void mcc_host_detail_unknown(struct mcc_task_detail_v1 *d)
{
	uint32_t sz = d->struct_size;
	memset(d, 0, sz < sizeof(*d) ? sz : sizeof(*d));
	d->struct_size = sz;
	d->state = MCC_TASK_UNKNOWN;
}

void mcc_host_completion(struct mcc_completion_v1 *c, const struct mcc_fab_wc *wc,
                         uint32_t generation, uint64_t bytes, uint64_t post_ns, uint64_t now)
{
	memset(c, 0, sizeof(*c));
	c->struct_size = sizeof(*c);
	c->wc_status = wc->status;
	c->vendor_err = wc->vendor_err;
	c->generation = generation;
	c->bytes = bytes;
	c->post_ns = post_ns;
	c->complete_ns = now > post_ns ? now : post_ns;
	c->qp_num = wc->qp_num;
	c->opcode = (uint32_t)wc->opcode;
}

int mcc_host_task_query(const struct mcc_policy_v1 *ops, void *ctx, uint64_t batch_id,
                        uint64_t task_id, uint32_t facts, struct mcc_task_detail_v1 *d)
{
	struct mcc_task_ref_v1 ref = {batch_id, task_id, 0, 0};
	int rc = ops->task_query(ctx, &ref, facts, d);
	if (rc < 0) {
		d->state = MCC_TASK_UNKNOWN;
		return rc == -ENOENT ? 0 : rc;
	}
	d->state = (uint32_t)rc;
	return 0;
}

uint64_t mcc_host_fab_step(mcc_fab_model *m, mcc_exec *ex, uint64_t now)
{
	const uint64_t poll_ns = 200000;
	uint64_t next = mcc_fab_model_advance(m, now);
	if (mcc_exec_kind(ex) == MCC_EXEC_THREADED) /* real time: poll the model */
		return next == MCC_FAB_NEVER || next > now + poll_ns ? now + poll_ns : next;
	return next == MCC_FAB_NEVER ? MCC_EXEC_PARK : next;
}

void mcc_host_seg_desc(struct mcc_seg_desc *out, mcc_fab_model *m, uint32_t node, uint32_t ndev,
                       const void *base, uint64_t len)
{
	memset(out, 0, sizeof(*out));
	out->node = node;
	out->ndev = ndev;
	out->nports = 1;
	out->base = (uint64_t)(uintptr_t)base;
	out->length = len;
	for (uint32_t d = 0; d < ndev && d < sizeof(out->rkey) / sizeof(out->rkey[0]); d++)
		out->rkey[d] = mcc_fab_model_lookup_rkey(m, node, d, base);
}

static uint64_t fab_actor_step(void *arg, uint64_t now)
{
	struct mcc_host_fab_actor *f = arg;
	return mcc_host_fab_step(f->model, f->ex, now);
}

static void fab_actor_sched(void *arg, uint64_t at)
{
	struct mcc_host_fab_actor *f = arg;
	mcc_exec_wake(f->actor, at);
}

void mcc_host_fab_actor_add(struct mcc_host_fab_actor *f, mcc_fab_model *m, mcc_exec *ex)
{
	f->model = m;
	f->ex = ex;
	f->actor = mcc_exec_add(ex, "fabric", fab_actor_step, f, MCC_EXEC_PARK);
	mcc_fab_model_set_sched(m, fab_actor_sched, f);
}

/* ------------------------------------------------------- two-node world */

static int pair_segment(void *arg, uint32_t seg, struct mcc_seg_desc *out)
{
	struct mcc_host_pair *p = arg;
	if (seg != 1)
		return -ENOENT;
	mcc_host_seg_desc(out, p->model, 1, p->devs, p->dst, p->len);
	return 0;
}

int mcc_host_pair_init(struct mcc_host_pair *p, enum mcc_exec_kind kind, uint64_t seed,
                       const struct mcc_fab_model_cfg *mcfg, size_t len)
{
	struct mcc_fab_model_cfg c;
	if (mcfg)
		c = *mcfg;
	else
		mcc_fab_model_cfg_defaults(&c);
	c.nodes = 2;
	memset(p, 0, sizeof(*p));
	p->ex = mcc_exec_create(kind, seed);
	p->model = mcc_fab_model_create(&c);
	p->len = len;
	p->devs = c.devs_per_node;
	p->src = calloc(1, len);
	p->dst = calloc(1, len);
	if (!p->ex || !p->model || !p->src || !p->dst)
		return -ENOMEM;
	struct mcc_fab_handle h = mcc_fab_model_handle(p->model);
	for (uint32_t d = 0; d < p->devs; d++) { /* passive memory on each NIC */
		struct mcc_fab_mr mr;
		mcc_fab_dev *dv = h.ops->open_device(h.fab, 1, d);
		h.ops->reg_mr(dv, p->dst, len, &mr);
		h.ops->close_device(dv);
	}
	p->env.ex = p->ex;
	p->env.fab = h;
	p->env.get_segment = pair_segment;
	p->env.seg_arg = p;
	mcc_host_fab_actor_add(&p->fab, p->model, p->ex);
	return 0;
}

void mcc_host_pair_fini(struct mcc_host_pair *p)
{
	mcc_fab_model_destroy(p->model);
	mcc_exec_destroy(p->ex);
	free(p->src);
	free(p->dst);
	memset(p, 0, sizeof(*p));
}

/* ------------------------------------------------------------ fabric tap */

#define TAP_ERRS 4096

struct tap_dev {
	const mcc_fab_dev *dev;
	uint32_t node, idx;
};

struct tap_qp {
	const mcc_fab_qp *qp;
	const mcc_fab_cq *cq;
	uint32_t qpn, node, dev, rdev, gen;
};

struct tap_err {
	uint64_t t;
	uint32_t node, dev, rdev, gen;
};

struct mcc_host_fab_tap {
	struct mcc_fab_ops ops; /* what the tapped handle hands out */
	const struct mcc_fab_ops *real;
	mcc_exec *ex;
	pthread_mutex_t mu;
	struct tap_dev *devs;
	struct tap_qp *qps;
	size_t ndev, capdev, nqp, capqp, nerr;
	struct tap_err err[TAP_ERRS]; /* further hard errors are not recorded */
};

static pthread_mutex_t tap_mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(mcc_host_fab_tap *) tap_on;

static mcc_host_fab_tap *tap_get(void)
{
	return atomic_load_explicit(&tap_on, memory_order_acquire);
}

/* grow *arr (elements of size sz) to hold one more; 0 or -ENOMEM */
static int tap_room(void **arr, size_t *cap, size_t n, size_t sz)
{
	if (n < *cap)
		return 0;
	size_t nc = *cap ? *cap * 2 : 64;
	void *p = realloc(*arr, nc * sz);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = nc;
	return 0;
}

static mcc_fab_dev *tap_open_device(mcc_fab *fab, uint32_t node, uint32_t idx)
{
	mcc_host_fab_tap *t = tap_get();
	mcc_fab_dev *d = t->real->open_device(fab, node, idx);
	if (!d)
		return NULL;
	pthread_mutex_lock(&t->mu);
	if (tap_room((void **)&t->devs, &t->capdev, t->ndev, sizeof(*t->devs)) == 0)
		t->devs[t->ndev++] = (struct tap_dev){d, node, idx};
	pthread_mutex_unlock(&t->mu);
	return d;
}

static void tap_close_device(mcc_fab_dev *d)
{
	mcc_host_fab_tap *t = tap_get();
	pthread_mutex_lock(&t->mu);
	for (size_t i = t->ndev; i-- > 0;)
		if (t->devs[i].dev == d) {
			t->devs[i] = t->devs[--t->ndev];
			break;
		}
	pthread_mutex_unlock(&t->mu);
	t->real->close_device(d);
}

static mcc_fab_qp *tap_create_qp(mcc_fab_dev *d, mcc_fab_cq *cq, const struct mcc_fab_qp_attr *a,
                                 void *ctx)
{
	mcc_host_fab_tap *t = tap_get();
	mcc_fab_qp *qp = t->real->create_qp(d, cq, a, ctx);
	if (!qp)
		return NULL;
	struct tap_qp e = {qp, cq, t->real->qp_num(qp), UINT32_MAX, UINT32_MAX, UINT32_MAX,
	                   a ? a->generation : 0};
	pthread_mutex_lock(&t->mu);
	for (size_t i = t->ndev; i-- > 0;)
		if (t->devs[i].dev == d) {
			e.node = t->devs[i].node;
			e.dev = t->devs[i].idx;
			break;
		}
	if (tap_room((void **)&t->qps, &t->capqp, t->nqp, sizeof(*t->qps)) == 0)
		t->qps[t->nqp++] = e;
	pthread_mutex_unlock(&t->mu);
	return qp;
}

static int tap_connect_qp(mcc_fab_qp *qp, const struct mcc_fab_addr *remote)
{
	mcc_host_fab_tap *t = tap_get();
	pthread_mutex_lock(&t->mu);
	for (size_t i = t->nqp; i-- > 0;)
		if (t->qps[i].qp == qp) {
			t->qps[i].rdev = remote->dev;
			break;
		}
	pthread_mutex_unlock(&t->mu);
	return t->real->connect_qp(qp, remote);
}

static int tap_destroy_qp(mcc_fab_qp *qp)
{
	mcc_host_fab_tap *t = tap_get();
	pthread_mutex_lock(&t->mu);
	for (size_t i = t->nqp; i-- > 0;)
		if (t->qps[i].qp == qp) {
			t->qps[i] = t->qps[--t->nqp];
			break;
		}
	pthread_mutex_unlock(&t->mu);
	return t->real->destroy_qp(qp);
}

static int tap_hard(int status)
{
	return status == IBV_WC_RETRY_EXC_ERR || status == IBV_WC_RESP_TIMEOUT_ERR ||
	       status == IBV_WC_FATAL_ERR || status == IBV_WC_GENERAL_ERR;
}

static int tap_poll_cq(mcc_fab_cq *cq, int n, struct mcc_fab_wc *wc)
{
	mcc_host_fab_tap *t = tap_get();
	int k = t->real->poll_cq(cq, n, wc);
	for (int i = 0; i < k; i++) {
		if (!tap_hard(wc[i].status))
			continue;
		uint64_t now = mcc_exec_now(t->ex);
		pthread_mutex_lock(&t->mu);
		for (size_t j = t->nqp; j-- > 0;)
			if (t->qps[j].cq == cq && t->qps[j].qpn == wc[i].qp_num) {
				const struct tap_qp *q = &t->qps[j];
				if (t->nerr < TAP_ERRS)
					t->err[t->nerr++] = (struct tap_err){now, q->node, q->dev, q->rdev, q->gen};
				break;
			}
		pthread_mutex_unlock(&t->mu);
	}
	return k;
}

mcc_host_fab_tap *mcc_host_fab_tap_create(struct mcc_fab_handle *h, mcc_exec *ex)
{
	mcc_host_fab_tap *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	pthread_mutex_lock(&tap_mu);
	if (tap_get()) {
		pthread_mutex_unlock(&tap_mu);
		free(t);
		return NULL;
	}
	pthread_mutex_init(&t->mu, NULL);
	t->real = h->ops;
	t->ex = ex;
	t->ops = *h->ops;
	t->ops.open_device = tap_open_device;
	t->ops.close_device = tap_close_device;
	t->ops.create_qp = tap_create_qp;
	t->ops.connect_qp = tap_connect_qp;
	t->ops.destroy_qp = tap_destroy_qp;
	t->ops.poll_cq = tap_poll_cq;
	atomic_store_explicit(&tap_on, t, memory_order_release);
	pthread_mutex_unlock(&tap_mu);
	h->ops = &t->ops;
	return t;
}

void mcc_host_fab_tap_destroy(mcc_host_fab_tap *t)
{
	if (!t)
		return;
	pthread_mutex_lock(&tap_mu);
	if (tap_get() == t)
		atomic_store_explicit(&tap_on, NULL, memory_order_release);
	pthread_mutex_unlock(&tap_mu);
	pthread_mutex_destroy(&t->mu);
	free(t->devs);
	free(t->qps);
	free(t);
}

uint32_t mcc_host_fab_tap_failed_gen(mcc_host_fab_tap *t, uint32_t node, uint32_t dev,
                                     uint32_t rdev, uint64_t until_ns, uint32_t *count)
{
	uint32_t gen = 0, n = 0;
	if (t) {
		pthread_mutex_lock(&t->mu);
		for (size_t i = 0; i < t->nerr; i++) {
			const struct tap_err *x = &t->err[i];
			if (x->node != node || x->dev != dev || x->rdev != rdev || x->t > until_ns)
				continue;
			n++;
			if (x->gen > gen)
				gen = x->gen;
		}
		pthread_mutex_unlock(&t->mu);
	}
	if (count)
		*count = n;
	return gen;
}
