/* SPDX-License-Identifier: MIT */
/* hostenv.c - helpers shared by the engine stubs (no hook dependency). */
#include "hostenv.h"

#include "grow.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

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

/* ------------------------------------------------- embedders' measures */

void mcc_host_samples_add(struct mcc_host_samples *s, uint64_t x)
{
	uint64_t *v = mcc_grow(s->v, &s->cap, s->n, sizeof(*v), 1024);
	if (!v)
		return;
	s->v = v;
	s->v[s->n++] = x;
}

void mcc_host_samples_merge(struct mcc_host_samples *s, const struct mcc_host_samples *from)
{
	if (!from->n)
		return;
	uint64_t *v = realloc(s->v, (s->n + from->n) * sizeof(*v));
	if (!v)
		return;
	memcpy(v + s->n, from->v, from->n * sizeof(*v));
	s->v = v;
	s->n += from->n;
	s->cap = s->n;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

void mcc_host_samples_sort(struct mcc_host_samples *s)
{
	if (s->n)
		qsort(s->v, s->n, sizeof(*s->v), cmp_u64);
}

double mcc_host_samples_pct_us(const struct mcc_host_samples *s, double p)
{
	if (!s->n)
		return 0;
	size_t i = (size_t)ceil(p * (double)s->n);
	i = i ? i - 1 : 0;
	if (i >= s->n)
		i = s->n - 1;
	return (double)s->v[i] / 1000.0;
}

void mcc_host_samples_free(struct mcc_host_samples *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

double mcc_host_cpu_ms(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec * 1e3 + (double)ru.ru_utime.tv_usec / 1e3 +
	       (double)ru.ru_stime.tv_sec * 1e3 + (double)ru.ru_stime.tv_usec / 1e3;
}

int mcc_host_policy_ini(char *path, const char *mode, const char *module_dir, const char *module,
                        const char *const *extra, size_t nextra)
{
	int fd = mkstemp(path);
	if (fd < 0)
		return -errno;
	FILE *f = fdopen(fd, "w");
	if (!f) {
		int e = errno;
		close(fd);
		return -e;
	}
	fprintf(f, "[policy]\nmode = %s\n", mode ? mode : "off");
	if (module_dir)
		fprintf(f, "module_dir = %s\n", module_dir);
	if (module)
		fprintf(f, "module = %s\n", module);
	for (size_t i = 0; i < nextra; i++)
		if (extra[i])
			fprintf(f, "%s\n", extra[i]);
	return fclose(f) == 0 ? 0 : -EIO;
}

/* ------------------------------------------------------ caller queries */

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

int mcc_host_task_detail(int cc_on, const struct mcc_policy_v1 *ops, void *ctx, uint64_t batch_id,
                         uint64_t task_id, uint32_t facts, struct mcc_task_detail_v1 *d)
{
	if (cc_on)
		return mcc_host_task_query(ops, ctx, batch_id, task_id, facts, d);
	mcc_host_detail_unknown(d); /* controller off: no evidence */
	return 0;
}

struct mcc_task_detail_v1 *mcc_host_detail_init(struct mcc_task_detail_v1 *d)
{
	memset(d, 0, sizeof(*d));
	d->struct_size = sizeof(*d);
	return d;
}

int mcc_host_task_state(int rc, const struct mcc_task_detail_v1 *d, int *state)
{
	*state = rc == 0 ? (int)d->state : MCC_TASK_UNKNOWN;
	return rc;
}

const char *mcc_host_mode_name(int mode)
{
	switch (mode) {
	case MCC_MODE_OBSERVE:
		return "observe";
	case MCC_MODE_ENFORCE:
		return "enforce";
	default:
		return "off";
	}
}

void mcc_host_signal(struct mcc_signal_v1 *sig, uint32_t kind, mcc_device *dev, mcc_route *route,
                     uint32_t generation, int32_t error, uint64_t v0, uint64_t v1, uint64_t now)
{
	*sig = (struct mcc_signal_v1){
	        .struct_size = sizeof(*sig),
	        .kind = kind,
	        .device = dev,
	        .route = route,
	        .generation = generation,
	        .error = error,
	        .value0 = v0,
	        .value1 = v1,
	        .now_ns = now,
	};
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
	mcc_fab_model_set_clock(m, mcc_exec_clock, ex);
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

/* The entry of device d / queue pair qp, newest first, or NULL; under t->mu. */
static struct tap_dev *tap_dev_of(mcc_host_fab_tap *t, const mcc_fab_dev *d)
{
	for (size_t i = t->ndev; i-- > 0;)
		if (t->devs[i].dev == d)
			return &t->devs[i];
	return NULL;
}

static struct tap_qp *tap_qp_of(mcc_host_fab_tap *t, const mcc_fab_qp *qp)
{
	for (size_t i = t->nqp; i-- > 0;)
		if (t->qps[i].qp == qp)
			return &t->qps[i];
	return NULL;
}

static mcc_fab_dev *tap_open_device(mcc_fab *fab, uint32_t node, uint32_t idx)
{
	mcc_host_fab_tap *t = tap_get();
	mcc_fab_dev *d = t->real->open_device(fab, node, idx);
	if (!d)
		return NULL;
	pthread_mutex_lock(&t->mu);
	struct tap_dev *devs = mcc_grow(t->devs, &t->capdev, t->ndev, sizeof(*devs), 64);
	if (devs) {
		t->devs = devs;
		t->devs[t->ndev++] = (struct tap_dev){d, node, idx};
	}
	pthread_mutex_unlock(&t->mu);
	return d;
}

static void tap_close_device(mcc_fab_dev *d)
{
	mcc_host_fab_tap *t = tap_get();
	pthread_mutex_lock(&t->mu);
	struct tap_dev *e = tap_dev_of(t, d);
	if (e)
		*e = t->devs[--t->ndev];
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
	const struct tap_dev *on = tap_dev_of(t, d);
	if (on) {
		e.node = on->node;
		e.dev = on->idx;
	}
	struct tap_qp *qps = mcc_grow(t->qps, &t->capqp, t->nqp, sizeof(*qps), 64);
	if (qps) {
		t->qps = qps;
		t->qps[t->nqp++] = e;
	}
	pthread_mutex_unlock(&t->mu);
	return qp;
}

static int tap_connect_qp(mcc_fab_qp *qp, const struct mcc_fab_addr *remote)
{
	mcc_host_fab_tap *t = tap_get();
	pthread_mutex_lock(&t->mu);
	struct tap_qp *q = tap_qp_of(t, qp);
	if (q)
		q->rdev = remote->dev;
	pthread_mutex_unlock(&t->mu);
	return t->real->connect_qp(qp, remote);
}

static int tap_destroy_qp(mcc_fab_qp *qp)
{
	mcc_host_fab_tap *t = tap_get();
	pthread_mutex_lock(&t->mu);
	struct tap_qp *q = tap_qp_of(t, qp);
	if (q)
		*q = t->qps[--t->nqp];
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
