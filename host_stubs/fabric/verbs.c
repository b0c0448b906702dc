/* SPDX-License-Identifier: MIT */
/*
 * verbs.c - the libibverbs fabric backend (see verbs.h).
 *
 * Every fabric call is a thin shim over the matching verbs call; the only
 * state of our own is the (node, dev) -> device registry, the per-device MR
 * table (struct mcc_fab_mr has no slot for the ibv_mr), the passive QPs the
 * in-process handshake creates, and a per-QP FIFO of post times (RC
 * completes in send-queue order, errors and flushes included) so the trace
 * can report each WC's completion latency.
 */
#include "verbs.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define VB_PORT 1
#define VB_POLL_MAX 64
#define VB_POST_CHUNK 16
#define VB_RD_ATOMIC 16
#define VB_QPN_SLOTS 4096 /* open-addressing table qp_num -> QP (power of two) */

struct vb_mr {
	struct vb_mr *next;
	struct ibv_mr *mr;
};

struct mcc_fab_dev { /* registry entry of one (node, dev) */
	mcc_fab_verbs *v;
	uint32_t node, idx;
	char name[32];
	int refs; /* under v->mu */
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *pcq; /* CQ of the passive QPs (one-sided ops: no WCs) */
	union ibv_gid gid;
	int gid_index;
	enum ibv_mtu mtu;
	uint32_t num_ports, max_qp_wr, max_cqe;
	uint64_t link_rate_bps;
	struct vb_mr *mrs; /* under v->mu */
	mcc_fab_notify_fn anotify;
	void *anotify_arg;
};

struct mcc_fab_cq {
	struct mcc_fab_dev *d;
	struct ibv_cq *cq;
	uint32_t id;
	void *cq_context;
	mcc_fab_notify_fn notify;
	void *arg;
	_Atomic int64_t outstanding; /* posted, not yet polled */
};

struct mcc_fab_qp {
	struct mcc_fab_dev *d;
	struct mcc_fab_cq *cq;
	struct ibv_qp *qp;
	struct mcc_fab_qp_attr attr;
	void *qp_context;     /* the host's */
	int passive;          /* a responder created by connect_qp */
	uint32_t psn;         /* our sq_psn (fresh per connect) */
	struct mcc_fab_qp *peer;      /* passive responder we own, or NULL */
	struct mcc_fab_dev *rdev;     /* remote device (a reference while peer) */
	struct mcc_fab_qp *next;      /* registry list (v->mu) */
	int connected;
	/* post-time FIFO for WC latency (poster writes tail, poller reads head) */
	uint64_t *ts;
	uint32_t tscap;
	_Atomic uint32_t ts_head, ts_tail;
};

struct mcc_fab_verbs {
	struct mcc_fab_verbs_cfg cfg;
	pthread_mutex_t mu;
	struct mcc_fab_dev devs[MCC_FAB_VERBS_MAX_NODES][MCC_FAB_VERBS_MAX_DEVS];
	struct mcc_fab_qp *qps; /* every host-created QP (v->mu) */
	_Atomic(struct mcc_fab_qp *) by_qpn[VB_QPN_SLOTS];
	_Atomic uint32_t next_cq;
	uint64_t rng; /* v->mu */
	struct mcc_fab_verbs_trace trace;
	struct {
		_Atomic uint64_t wrs_posted, post_errors, wcs, wc_errors, async_events;
		_Atomic uint64_t qps_created, passive_qps, connects, reconnects, resets, destroys;
		_Atomic uint64_t bytes_posted;
	} st;
};

#define ST_ADD(v, f, n) atomic_fetch_add_explicit(&(v)->st.f, (n), memory_order_relaxed)

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void vb_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void vb_log(const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "verbs: %s\n", buf);
}

/* ----------------------------------------------------------------- config */

static uint32_t env_u32(const char *name, uint32_t def, uint32_t max)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return def;
	char *end = NULL;
	errno = 0;
	unsigned long x = strtoul(s, &end, 10);
	if (errno || !end || *end || x > max) {
		fprintf(stderr, "verbs: ignoring %s=%s (0..%u)\n", name, s, max);
		return def;
	}
	return (uint32_t)x;
}

int mcc_fab_verbs_cfg_devices(struct mcc_fab_verbs_cfg *cfg, const char *spec)
{
	uint32_t node = 0, dev = 0, per = 0;
	char name[32];
	size_t n = 0;
	if (!spec || !*spec)
		return -EINVAL;
	for (const char *p = spec;; p++) {
		if (*p == ',' || *p == ';' || *p == 0) {
			if (!n || node >= MCC_FAB_VERBS_MAX_NODES || dev >= MCC_FAB_VERBS_MAX_DEVS)
				return -EINVAL;
			name[n] = 0;
			memcpy(cfg->dev_name[node][dev], name, n + 1);
			dev++;
			n = 0;
			if (*p == ',')
				continue;
			if (per && dev != per)
				return -EINVAL; /* every node has the same number of rails */
			per = dev;
			node++;
			dev = 0;
			if (*p == 0)
				break;
			continue;
		}
		if (n + 1 >= sizeof(name))
			return -EINVAL;
		name[n++] = *p;
	}
	cfg->nodes = node;
	cfg->devs_per_node = per;
	return 0;
}

void mcc_fab_verbs_cfg_defaults(struct mcc_fab_verbs_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->gid_index = -1;
	cfg->qp_timeout = 14;
	cfg->qp_retry_cnt = 6;
	cfg->poll_mode = MCC_FAB_VERBS_POLL_EVENT;
	const char *s = getenv("MCC_VERBS_DEVICES");
	if (s && *s && mcc_fab_verbs_cfg_devices(cfg, s) != 0)
		fprintf(stderr, "verbs: ignoring MCC_VERBS_DEVICES=%s\n", s);
	cfg->qp_timeout = env_u32("MCC_VERBS_IB_TIMEOUT", cfg->qp_timeout, 31);
	cfg->qp_retry_cnt = env_u32("MCC_VERBS_IB_RETRY_CNT", cfg->qp_retry_cnt, 7);
	s = getenv("MCC_VERBS_GID_INDEX");
	if (s && *s)
		cfg->gid_index = (int)env_u32("MCC_VERBS_GID_INDEX", 0, 255);
	s = getenv("MCC_VERBS_POLL");
	if (s && !strcmp(s, "spin"))
		cfg->poll_mode = MCC_FAB_VERBS_POLL_SPIN;
}

/* ----------------------------------------------------------------- names */

const char *mcc_fab_verbs_wc_status_name(int s)
{
	switch (s) {
#define C(x) \
	case x:  \
		return #x
		C(IBV_WC_SUCCESS);
		C(IBV_WC_LOC_LEN_ERR);
		C(IBV_WC_LOC_QP_OP_ERR);
		C(IBV_WC_LOC_EEC_OP_ERR);
		C(IBV_WC_LOC_PROT_ERR);
		C(IBV_WC_WR_FLUSH_ERR);
		C(IBV_WC_MW_BIND_ERR);
		C(IBV_WC_BAD_RESP_ERR);
		C(IBV_WC_LOC_ACCESS_ERR);
		C(IBV_WC_REM_INV_REQ_ERR);
		C(IBV_WC_REM_ACCESS_ERR);
		C(IBV_WC_REM_OP_ERR);
		C(IBV_WC_RETRY_EXC_ERR);
		C(IBV_WC_RNR_RETRY_EXC_ERR);
		C(IBV_WC_LOC_RDD_VIOL_ERR);
		C(IBV_WC_REM_INV_RD_REQ_ERR);
		C(IBV_WC_REM_ABORT_ERR);
		C(IBV_WC_INV_EECN_ERR);
		C(IBV_WC_INV_EEC_STATE_ERR);
		C(IBV_WC_FATAL_ERR);
		C(IBV_WC_RESP_TIMEOUT_ERR);
		C(IBV_WC_GENERAL_ERR);
	default:
		return "IBV_WC_UNKNOWN";
	}
}

const char *mcc_fab_verbs_event_name(int e)
{
	switch (e) {
		C(IBV_EVENT_CQ_ERR);
		C(IBV_EVENT_QP_FATAL);
		C(IBV_EVENT_QP_REQ_ERR);
		C(IBV_EVENT_QP_ACCESS_ERR);
		C(IBV_EVENT_COMM_EST);
		C(IBV_EVENT_SQ_DRAINED);
		C(IBV_EVENT_PATH_MIG);
		C(IBV_EVENT_PATH_MIG_ERR);
		C(IBV_EVENT_DEVICE_FATAL);
		C(IBV_EVENT_PORT_ACTIVE);
		C(IBV_EVENT_PORT_ERR);
		C(IBV_EVENT_LID_CHANGE);
		C(IBV_EVENT_PKEY_CHANGE);
		C(IBV_EVENT_SM_CHANGE);
		C(IBV_EVENT_SRQ_ERR);
		C(IBV_EVENT_SRQ_LIMIT_REACHED);
		C(IBV_EVENT_QP_LAST_WQE_REACHED);
		C(IBV_EVENT_CLIENT_REREGISTER);
		C(IBV_EVENT_GID_CHANGE);
		C(IBV_EVENT_WQ_FATAL);
#undef C
	default:
		return "IBV_EVENT_UNKNOWN";
	}
}

/* --------------------------------------------------------------- registry */

mcc_fab_verbs *mcc_fab_verbs_create(const struct mcc_fab_verbs_cfg *cfg)
{
	if (!cfg || !cfg->nodes || !cfg->devs_per_node || cfg->nodes > MCC_FAB_VERBS_MAX_NODES ||
	    cfg->devs_per_node > MCC_FAB_VERBS_MAX_DEVS)
		return NULL;
	mcc_fab_verbs *v = calloc(1, sizeof(*v));
	if (!v)
		return NULL;
	v->cfg = *cfg;
	pthread_mutex_init(&v->mu, NULL);
	v->rng = mono_ns() ^ ((uint64_t)getpid() << 32) ^ 0x2545f4914f6cdd1dull;
	for (uint32_t n = 0; n < cfg->nodes; n++)
		for (uint32_t d = 0; d < cfg->devs_per_node; d++) {
			struct mcc_fab_dev *x = &v->devs[n][d];
			x->v = v;
			x->node = n;
			x->idx = d;
			snprintf(x->name, sizeof(x->name), "%s", cfg->dev_name[n][d]);
		}
	return v;
}

void mcc_fab_verbs_destroy(mcc_fab_verbs *v)
{
	if (!v)
		return;
	for (uint32_t n = 0; n < v->cfg.nodes; n++)
		for (uint32_t d = 0; d < v->cfg.devs_per_node; d++)
			if (v->devs[n][d].refs)
				vb_log("%s still open at destroy (%d references)", v->devs[n][d].name,
				       v->devs[n][d].refs);
	pthread_mutex_destroy(&v->mu);
	free(v);
}

void mcc_fab_verbs_set_trace(mcc_fab_verbs *v, const struct mcc_fab_verbs_trace *t)
{
	if (t)
		v->trace = *t;
	else
		memset(&v->trace, 0, sizeof(v->trace));
}

void mcc_fab_verbs_stats(mcc_fab_verbs *v, struct mcc_fab_verbs_stats *o)
{
#define LD(f) o->f = atomic_load(&v->st.f)
	LD(wrs_posted);
	LD(post_errors);
	LD(wcs);
	LD(wc_errors);
	LD(async_events);
	LD(qps_created);
	LD(passive_qps);
	LD(connects);
	LD(reconnects);
	LD(resets);
	LD(destroys);
	LD(bytes_posted);
#undef LD
}

const char *mcc_fab_verbs_dev_name(const mcc_fab_verbs *v, uint32_t node, uint32_t dev)
{
	if (node >= v->cfg.nodes || dev >= v->cfg.devs_per_node)
		return NULL;
	return v->devs[node][dev].name;
}

uint64_t mcc_fab_verbs_dev_outstanding(mcc_fab_verbs *v, uint32_t node, uint32_t dev)
{
	uint64_t n = 0;
	pthread_mutex_lock(&v->mu);
	for (struct mcc_fab_qp *q = v->qps; q; q = q->next)
		if (q->d->node == node && q->d->idx == dev)
			n += atomic_load(&q->ts_tail) - atomic_load(&q->ts_head);
	pthread_mutex_unlock(&v->mu);
	return n;
}

static uint32_t next_psn(mcc_fab_verbs *v) /* v->mu held */
{
	uint64_t x = v->rng;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	v->rng = x;
	return (uint32_t)(x & 0xffffff);
}

static uint64_t port_rate_bps(const struct ibv_port_attr *pa)
{
	static const struct {
		uint8_t code;
		uint64_t mbps;
	} speed[] = {{1, 2500}, {2, 5000}, {4, 10000}, {8, 10000}, {16, 14000},
	             {32, 25000}, {64, 50000}, {128, 100000}};
	uint64_t lanes = pa->active_width == 1    ? 1
	                 : pa->active_width == 2  ? 4
	                 : pa->active_width == 4  ? 8
	                 : pa->active_width == 8  ? 12
	                 : pa->active_width == 16 ? 2
	                                          : 1;
	for (size_t i = 0; i < sizeof(speed) / sizeof(speed[0]); i++)
		if (speed[i].code == pa->active_speed)
			return lanes * speed[i].mbps * 1000000ull;
	return 0;
}

/* The IPv4-mapped RoCE v2 GID of the port (what rxe uses for IPv4). */
static int find_gid(struct ibv_context *ctx, int tbl_len)
{
	static const uint8_t v4[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	int fallback = -1;
	for (int i = 0; i < tbl_len && i < 256; i++) {
		struct ibv_gid_entry e;
		if (ibv_query_gid_ex(ctx, VB_PORT, (uint32_t)i, &e, 0))
			continue;
		if (memcmp(e.gid.raw, v4, sizeof(v4)))
			continue;
		if (e.gid_type == IBV_GID_TYPE_ROCE_V2)
			return i;
		if (fallback < 0)
			fallback = i;
	}
	return fallback;
}

static int dev_open_locked(mcc_fab_verbs *v, struct mcc_fab_dev *x)
{
	if (x->refs++)
		return 0;
	int n = 0, rc = -ENODEV;
	struct ibv_device **list = ibv_get_device_list(&n);
	for (int i = 0; list && i < n && !x->ctx; i++)
		if (!strcmp(ibv_get_device_name(list[i]), x->name))
			x->ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	if (!x->ctx) {
		vb_log("cannot open device %s (node %d)", x->name, (int)x->node);
		goto fail;
	}
	/* non-blocking async_fd: the monitor thread polls it */
	int fl = fcntl(x->ctx->async_fd, F_GETFL);
	if (fl < 0 || fcntl(x->ctx->async_fd, F_SETFL, fl | O_NONBLOCK) < 0)
		goto fail;
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	if (ibv_query_device(x->ctx, &da) || ibv_query_port(x->ctx, VB_PORT, &pa))
		goto fail;
	x->num_ports = da.phys_port_cnt;
	x->max_qp_wr = (uint32_t)da.max_qp_wr;
	x->max_cqe = (uint32_t)da.max_cqe;
	x->mtu = pa.active_mtu;
	x->link_rate_bps = port_rate_bps(&pa);
	x->gid_index = v->cfg.gid_index >= 0 ? v->cfg.gid_index : find_gid(x->ctx, pa.gid_tbl_len);
	if (x->gid_index < 0 || ibv_query_gid(x->ctx, VB_PORT, x->gid_index, &x->gid)) {
		vb_log("%s: no IPv4 RoCE v2 GID (is an address configured?)", x->name);
		goto fail;
	}
	x->pd = ibv_alloc_pd(x->ctx);
	x->pcq = x->pd ? ibv_create_cq(x->ctx, 16, NULL, NULL, 0) : NULL;
	if (!x->pcq)
		goto fail;
	return 0;
fail:
	rc = errno ? -errno : rc;
	if (x->pcq)
		ibv_destroy_cq(x->pcq);
	if (x->pd)
		ibv_dealloc_pd(x->pd);
	if (x->ctx)
		ibv_close_device(x->ctx);
	x->pcq = NULL;
	x->pd = NULL;
	x->ctx = NULL;
	x->refs = 0;
	return rc < 0 ? rc : -ENODEV;
}

static void dev_close_locked(struct mcc_fab_dev *x)
{
	if (!x->refs || --x->refs)
		return;
	while (x->mrs) { /* leaked registrations: release them with the PD */
		struct vb_mr *m = x->mrs;
		x->mrs = m->next;
		ibv_dereg_mr(m->mr);
		free(m);
	}
	if (ibv_destroy_cq(x->pcq) || ibv_dealloc_pd(x->pd))
		vb_log("%s: resources still in use at close", x->name);
	ibv_close_device(x->ctx);
	x->pcq = NULL;
	x->pd = NULL;
	x->ctx = NULL;
}

static struct mcc_fab_dev *dev_at(mcc_fab_verbs *v, uint32_t node, uint32_t dev)
{
	if (node >= v->cfg.nodes || dev >= v->cfg.devs_per_node)
		return NULL;
	return &v->devs[node][dev];
}

/* qp_num -> QP (host QPs only; for the latency FIFO): open addressing with
 * tombstones, lock-free for the poller */
#define QPN_TOMB ((struct mcc_fab_qp *)(uintptr_t)1)

static void qpn_put(mcc_fab_verbs *v, struct mcc_fab_qp *q)
{
	uint32_t h = q->qp->qp_num * 0x9e3779b1u;
	for (uint32_t k = 0; k < VB_QPN_SLOTS; k++) {
		uint32_t i = (h + k) & (VB_QPN_SLOTS - 1);
		struct mcc_fab_qp *exp = atomic_load(&v->by_qpn[i]);
		if ((exp == NULL || exp == QPN_TOMB) &&
		    atomic_compare_exchange_strong(&v->by_qpn[i], &exp, q))
			return;
	}
}

static void qpn_del(mcc_fab_verbs *v, struct mcc_fab_qp *q)
{
	uint32_t h = q->qp->qp_num * 0x9e3779b1u;
	for (uint32_t k = 0; k < VB_QPN_SLOTS; k++) {
		uint32_t i = (h + k) & (VB_QPN_SLOTS - 1);
		struct mcc_fab_qp *exp = q;
		if (atomic_compare_exchange_strong(&v->by_qpn[i], &exp, QPN_TOMB) || !exp)
			return;
	}
}

static struct mcc_fab_qp *qpn_get(mcc_fab_verbs *v, uint32_t qpn, const struct mcc_fab_dev *d)
{
	uint32_t h = qpn * 0x9e3779b1u;
	for (uint32_t k = 0; k < VB_QPN_SLOTS; k++) {
		struct mcc_fab_qp *q = atomic_load(&v->by_qpn[(h + k) & (VB_QPN_SLOTS - 1)]);
		if (!q)
			return NULL;
		if (q != QPN_TOMB && q->qp->qp_num == qpn && q->d == d)
			return q;
	}
	return NULL;
}

/* ------------------------------------------------------------ device ops */

static int v_num_devices(mcc_fab *fab, uint32_t node)
{
	mcc_fab_verbs *v = (mcc_fab_verbs *)fab;
	return node < v->cfg.nodes ? (int)v->cfg.devs_per_node : 0;
}

static mcc_fab_dev *v_open_device(mcc_fab *fab, uint32_t node, uint32_t dev)
{
	mcc_fab_verbs *v = (mcc_fab_verbs *)fab;
	struct mcc_fab_dev *x = dev_at(v, node, dev);
	if (!x)
		return NULL;
	pthread_mutex_lock(&v->mu);
	int rc = dev_open_locked(v, x);
	pthread_mutex_unlock(&v->mu);
	return rc == 0 ? x : NULL;
}

static void v_close_device(mcc_fab_dev *x)
{
	if (!x)
		return;
	pthread_mutex_lock(&x->v->mu);
	x->anotify = NULL;
	dev_close_locked(x);
	pthread_mutex_unlock(&x->v->mu);
}

static int v_query_device(mcc_fab_dev *x, struct mcc_fab_device_attr *a)
{
	memset(a, 0, sizeof(*a));
	snprintf(a->name, sizeof(a->name), "%s", x->name);
	a->node = x->node;
	a->dev = x->idx;
	a->num_ports = x->num_ports;
	a->max_qp_wr = x->max_qp_wr;
	a->max_cqe = x->max_cqe;
	a->link_rate_bps = x->link_rate_bps;
	return 0;
}

static int v_query_port(mcc_fab_dev *x, uint32_t port, int *state)
{
	struct ibv_port_attr pa;
	int rc = ibv_query_port(x->ctx, (uint8_t)port, &pa);
	if (rc)
		return -rc;
	*state = (int)pa.state; /* enum ibv_port_state: DOWN 1 .. ACTIVE 4 */
	return 0;
}

static void v_set_async_notify(mcc_fab_dev *x, mcc_fab_notify_fn fn, void *arg)
{
	/* kept for completeness: without a thread of our own nothing watches the
	 * async_fd; the host's monitor reads it every pass */
	x->anotify = fn;
	x->anotify_arg = arg;
}

/* ---------------------------------------------------------------- CQs */

static mcc_fab_cq *v_create_cq(mcc_fab_dev *x, uint32_t cqe, void *ctx, mcc_fab_notify_fn fn,
                               void *arg)
{
	struct mcc_fab_cq *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->d = x;
	c->cq_context = ctx;
	c->notify = fn;
	c->arg = arg;
	c->id = atomic_fetch_add(&x->v->next_cq, 1) + 1;
	c->cq = ibv_create_cq(x->ctx, (int)(cqe ? cqe : 1), c, NULL, 0);
	if (!c->cq) {
		vb_log("%s: ibv_create_cq failed (errno %d)", x->name, errno);
		free(c);
		return NULL;
	}
	return c;
}

static void v_destroy_cq(mcc_fab_cq *c)
{
	if (!c)
		return;
	if (ibv_destroy_cq(c->cq))
		vb_log("%s: ibv_destroy_cq failed (errno %d)", c->d->name, errno);
	free(c);
}

static uint32_t v_cq_id(const mcc_fab_cq *c)
{
	return c->id;
}

/* ---------------------------------------------------------------- MRs */

static int v_reg_mr(mcc_fab_dev *x, void *addr, size_t len, struct mcc_fab_mr *out)
{
	struct vb_mr *m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->mr = ibv_reg_mr(x->pd, addr, len,
	                   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!m->mr) {
		int e = errno ? errno : EIO;
		free(m);
		return -e;
	}
	pthread_mutex_lock(&x->v->mu);
	m->next = x->mrs;
	x->mrs = m;
	pthread_mutex_unlock(&x->v->mu);
	out->addr = addr;
	out->length = len;
	out->lkey = m->mr->lkey;
	out->rkey = m->mr->rkey;
	out->dev = x;
	return 0;
}

static int v_dereg_mr(struct mcc_fab_mr *mr)
{
	struct mcc_fab_dev *x = mr->dev;
	struct vb_mr *m = NULL;
	if (!x)
		return -EINVAL;
	pthread_mutex_lock(&x->v->mu);
	for (struct vb_mr **pp = &x->mrs; *pp; pp = &(*pp)->next)
		if ((*pp)->mr->lkey == mr->lkey) {
			m = *pp;
			*pp = m->next;
			break;
		}
	pthread_mutex_unlock(&x->v->mu);
	if (!m)
		return -ENOENT;
	int rc = ibv_dereg_mr(m->mr);
	free(m);
	mr->dev = NULL;
	return -rc;
}

/* ---------------------------------------------------------------- QPs */

static struct ibv_qp *qp_new(struct mcc_fab_dev *x, struct ibv_cq *cq, uint32_t depth, void *ctx)
{
	struct ibv_qp_init_attr ia = {
	    .qp_context = ctx,
	    .send_cq = cq,
	    .recv_cq = cq,
	    .cap = {.max_send_wr = depth, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1},
	    .qp_type = IBV_QPT_RC,
	    .sq_sig_all = 1,
	};
	return ibv_create_qp(x->pd, &ia);
}

static mcc_fab_qp *v_create_qp(mcc_fab_dev *x, mcc_fab_cq *cq, const struct mcc_fab_qp_attr *attr,
                               void *qp_context)
{
	mcc_fab_verbs *v = x->v;
	if (!cq || !attr || !attr->max_send_wr)
		return NULL;
	struct mcc_fab_qp *q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	q->d = x;
	q->cq = cq;
	q->attr = *attr;
	q->qp_context = qp_context;
	q->tscap = attr->max_send_wr + 1;
	q->ts = calloc(q->tscap, sizeof(*q->ts));
	q->qp = q->ts ? qp_new(x, cq->cq, attr->max_send_wr, q) : NULL;
	if (!q->qp) {
		vb_log("%s: ibv_create_qp failed (errno %d)", x->name, errno);
		free(q->ts);
		free(q);
		return NULL;
	}
	pthread_mutex_lock(&v->mu);
	q->psn = next_psn(v);
	q->next = v->qps;
	v->qps = q;
	pthread_mutex_unlock(&v->mu);
	qpn_put(v, q);
	ST_ADD(v, qps_created, 1);
	return q;
}

static int modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask, const char *what,
                  const char *dev)
{
	int rc = ibv_modify_qp(qp, a, mask);
	if (rc)
		fprintf(stderr, "verbs: %s: modify_qp %s failed: %s\n", dev, what, strerror(rc));
	return rc;
}

/* RESET -> INIT -> RTR -> RTS of `q` towards (rd, dest_qpn, rq_psn). */
static int qp_rts(struct mcc_fab_qp *q, const struct mcc_fab_dev *rd, uint32_t dest_qpn,
                  uint32_t rq_psn, const struct mcc_fab_qp_attr *at)
{
	struct mcc_fab_dev *x = q->d;
	mcc_fab_verbs *v = x->v;
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RESET;
	if (modify(q->qp, &a, IBV_QP_STATE, "RESET", x->name))
		return -EIO;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = VB_PORT;
	a.pkey_index = 0;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	if (modify(q->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
	           "INIT", x->name))
		return -EIO;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = x->mtu < rd->mtu ? x->mtu : rd->mtu;
	a.dest_qp_num = dest_qpn;
	a.rq_psn = rq_psn;
	a.max_dest_rd_atomic = VB_RD_ATOMIC;
	a.min_rnr_timer = at->min_rnr_timer ? at->min_rnr_timer : 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = rd->gid;
	a.ah_attr.grh.sgid_index = (uint8_t)x->gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = VB_PORT;
	if (modify(q->qp, &a,
	           IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
	               IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
	           "RTR", x->name))
		return -EIO;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = v->cfg.qp_timeout == MCC_FAB_VERBS_KEEP ? at->timeout : (uint8_t)v->cfg.qp_timeout;
	a.retry_cnt =
	    v->cfg.qp_retry_cnt == MCC_FAB_VERBS_KEEP ? at->retry_cnt : (uint8_t)v->cfg.qp_retry_cnt;
	a.rnr_retry = at->rnr_retry;
	a.sq_psn = q->psn;
	a.max_rd_atomic = VB_RD_ATOMIC;
	if (modify(q->qp, &a,
	           IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
	               IBV_QP_MAX_QP_RD_ATOMIC,
	           "RTS", x->name))
		return -EIO;
	return 0;
}

static int v_connect_qp(mcc_fab_qp *q, const struct mcc_fab_addr *r)
{
	mcc_fab_verbs *v = q->d->v;
	struct mcc_fab_dev *rd = dev_at(v, r->node, r->dev);
	if (!rd || r->port != VB_PORT)
		return -EINVAL;
	int rc = 0, again = q->connected;
	pthread_mutex_lock(&v->mu);
	struct mcc_fab_qp *peer = NULL;
	if (r->qp_num) {
		/* an active peer QP of another host in this process */
		for (struct mcc_fab_qp *x = v->qps; x && !peer; x = x->next)
			if (x->d == rd && x->qp->qp_num == r->qp_num)
				peer = x;
		if (!peer) {
			pthread_mutex_unlock(&v->mu);
			return -ENOENT;
		}
	} else if (!q->peer || q->rdev != rd) {
		/* the passive side of the handshake, created on the remote device */
		if (q->peer) {
			ibv_destroy_qp(q->peer->qp);
			free(q->peer);
			q->peer = NULL;
			dev_close_locked(q->rdev);
			q->rdev = NULL;
		}
		struct mcc_fab_qp *p = calloc(1, sizeof(*p));
		if (!p || dev_open_locked(v, rd) != 0) {
			free(p);
			pthread_mutex_unlock(&v->mu);
			return -ENOMEM;
		}
		p->d = rd;
		p->passive = 1;
		p->attr = q->attr;
		p->qp = qp_new(rd, rd->pcq, 1, p);
		if (!p->qp) {
			vb_log("%s: passive ibv_create_qp failed (errno %d)", rd->name, errno);
			free(p);
			dev_close_locked(rd);
			pthread_mutex_unlock(&v->mu);
			return -EIO;
		}
		q->peer = p;
		q->rdev = rd;
		ST_ADD(v, passive_qps, 1);
	}
	/* fresh PSNs: ours at creation and on every reconnect (an active peer
	 * reads it when it connects), the passive responder's every time */
	if (again)
		q->psn = next_psn(v);
	if (!r->qp_num)
		q->peer->psn = next_psn(v);
	struct mcc_fab_qp *other = r->qp_num ? peer : q->peer;
	uint32_t other_psn = other->psn, other_qpn = other->qp->qp_num;
	pthread_mutex_unlock(&v->mu);

	if (!r->qp_num)
		rc = qp_rts(q->peer, q->d, q->qp->qp_num, q->psn, &q->attr);
	if (!rc)
		rc = qp_rts(q, rd, other_qpn, other_psn, &q->attr);
	/* a reconnect starts a new send queue: forget old post times */
	atomic_store(&q->ts_head, atomic_load(&q->ts_tail));
	q->connected = rc == 0;
	ST_ADD(v, connects, 1);
	if (again)
		ST_ADD(v, reconnects, 1);
	return rc;
}

static int v_reset_qp(mcc_fab_qp *q)
{
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_ERR; /* outstanding WRs flush to the CQ */
	ST_ADD(q->d->v, resets, 1);
	return -modify(q->qp, &a, IBV_QP_STATE, "ERR", q->d->name);
}

static int v_destroy_qp(mcc_fab_qp *q)
{
	if (!q)
		return -EINVAL;
	mcc_fab_verbs *v = q->d->v;
	qpn_del(v, q);
	pthread_mutex_lock(&v->mu);
	for (struct mcc_fab_qp **pp = &v->qps; *pp; pp = &(*pp)->next)
		if (*pp == q) {
			*pp = q->next;
			break;
		}
	pthread_mutex_unlock(&v->mu);
	int rc = ibv_destroy_qp(q->qp);
	if (rc)
		vb_log("%s: ibv_destroy_qp failed (%d)", q->d->name, rc);
	if (q->peer) {
		if (ibv_destroy_qp(q->peer->qp))
			vb_log("%s: passive ibv_destroy_qp failed (errno %d)", q->rdev->name, errno);
		free(q->peer);
		pthread_mutex_lock(&v->mu);
		dev_close_locked(q->rdev);
		pthread_mutex_unlock(&v->mu);
	}
	ST_ADD(v, destroys, 1);
	free(q->ts);
	free(q);
	return -rc;
}

static uint32_t v_qp_num(const mcc_fab_qp *q)
{
	return q->qp->qp_num;
}

static int v_local_addr(const mcc_fab_qp *q, struct mcc_fab_addr *out)
{
	out->node = q->d->node;
	out->dev = q->d->idx;
	out->port = VB_PORT;
	out->qp_num = q->qp->qp_num;
	return 0;
}

/* ------------------------------------------------------------ data path */

static int v_post_send(mcc_fab_qp *q, struct mcc_fab_send_wr *wr, struct mcc_fab_send_wr **bad)
{
	mcc_fab_verbs *v = q->d->v;
	int tracked = v->trace.wc != NULL;
	int rc = 0;
	uint64_t posted = 0, bytes = 0;
	while (wr && !rc) {
		struct ibv_send_wr w[VB_POST_CHUNK], *ibad = NULL;
		struct ibv_sge sg[VB_POST_CHUNK];
		struct mcc_fab_send_wr *src[VB_POST_CHUNK];
		int n = 0;
		for (; wr && n < VB_POST_CHUNK; wr = wr->next, n++) {
			if (wr->opcode != IBV_WR_RDMA_WRITE && wr->opcode != IBV_WR_RDMA_READ) {
				rc = EINVAL;
				break;
			}
			src[n] = wr;
			sg[n].addr = wr->local_addr;
			sg[n].length = wr->length;
			sg[n].lkey = wr->lkey;
			memset(&w[n], 0, sizeof(w[n]));
			w[n].wr_id = wr->wr_id;
			w[n].sg_list = &sg[n];
			w[n].num_sge = 1;
			w[n].opcode = (enum ibv_wr_opcode)wr->opcode;
			w[n].send_flags = IBV_SEND_SIGNALED;
			w[n].wr.rdma.remote_addr = wr->remote_addr;
			w[n].wr.rdma.rkey = wr->rkey;
			w[n].next = NULL;
			if (n)
				w[n - 1].next = &w[n];
		}
		if (!n) {
			if (bad)
				*bad = wr;
			break;
		}
		/* post times first (the WC can be polled before ibv_post_send
		 * returns); rolled back below for what was not posted */
		uint32_t tail = atomic_load_explicit(&q->ts_tail, memory_order_relaxed);
		if (tracked) {
			uint64_t t = mono_ns();
			for (int i = 0; i < n; i++)
				q->ts[(tail + (uint32_t)i) % q->tscap] = t;
			atomic_store_explicit(&q->ts_tail, tail + (uint32_t)n, memory_order_release);
		}
		atomic_fetch_add(&q->cq->outstanding, n);
		int prc = ibv_post_send(q->qp, w, &ibad);
		int ok = n;
		if (prc) {
			ok = ibad ? (int)(ibad - w) : 0;
			if (ok < 0 || ok > n)
				ok = 0;
			atomic_fetch_sub(&q->cq->outstanding, n - ok);
			if (tracked)
				atomic_store_explicit(&q->ts_tail, tail + (uint32_t)ok, memory_order_release);
			if (bad)
				*bad = src[ok];
			rc = prc;
			ST_ADD(v, post_errors, 1);
		} else if (rc && bad) {
			*bad = wr; /* the unsupported WR that stopped the chunk */
		}
		for (int i = 0; i < ok; i++)
			bytes += src[i]->length;
		posted += (uint64_t)ok;
	}
	if (posted) {
		ST_ADD(v, wrs_posted, posted);
		ST_ADD(v, bytes_posted, bytes);
		if (q->cq->notify) /* a completion will come: wake the poller */
			q->cq->notify(q->cq->arg);
	}
	return rc;
}

static int v_poll_cq(mcc_fab_cq *c, int n, struct mcc_fab_wc *out)
{
	mcc_fab_verbs *v = c->d->v;
	struct ibv_wc wc[VB_POLL_MAX];
	if (n > VB_POLL_MAX)
		n = VB_POLL_MAX;
	if (n <= 0)
		return 0;
	int k = ibv_poll_cq(c->cq, n, wc);
	if (k < 0)
		return -EIO;
	uint64_t now = (k && v->trace.wc) ? mono_ns() : 0;
	uint64_t errs = 0;
	for (int i = 0; i < k; i++) {
		struct mcc_fab_wc *o = &out[i];
		o->wr_id = wc[i].wr_id;
		o->status = (int)wc[i].status;
		o->opcode = (int)wc[i].opcode;
		o->vendor_err = wc[i].vendor_err;
		o->byte_len = wc[i].byte_len;
		o->qp_num = wc[i].qp_num;
		o->reserved0 = 0;
		errs += wc[i].status != IBV_WC_SUCCESS;
		if (v->trace.wc) {
			uint64_t lat = 0;
			struct mcc_fab_qp *q = qpn_get(v, wc[i].qp_num, c->d);
			if (q) {
				uint32_t h = atomic_load_explicit(&q->ts_head, memory_order_relaxed);
				if (h != atomic_load_explicit(&q->ts_tail, memory_order_acquire)) {
					uint64_t t = q->ts[h % q->tscap];
					lat = now > t ? now - t : 0;
					atomic_store_explicit(&q->ts_head, h + 1, memory_order_relaxed);
				}
			}
			v->trace.wc(v->trace.arg, c->d->node, c->d->idx, o, lat);
		}
	}
	if (k) {
		atomic_fetch_sub(&c->outstanding, k);
		ST_ADD(v, wcs, (uint64_t)k);
		if (errs)
			ST_ADD(v, wc_errors, errs);
	}
	/* spin mode: keep the poller polling while WRs are in flight */
	if (v->cfg.poll_mode == MCC_FAB_VERBS_POLL_SPIN && c->notify &&
	    atomic_load_explicit(&c->outstanding, memory_order_relaxed) > 0)
		c->notify(c->arg);
	return k;
}

/* Read one async event (non-blocking) and ack it at once: the flattened
 * record holds no verbs pointer that would need the event alive, and an
 * early ack never holds up ibv_destroy_qp / ibv_destroy_cq. */
static int v_get_async_event(mcc_fab_dev *x, struct mcc_fab_async_event *ev)
{
	struct ibv_async_event raw;
	if (!x->ctx)
		return -EAGAIN;
	if (ibv_get_async_event(x->ctx, &raw))
		return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? -EAGAIN : -errno;
	memset(ev, 0, sizeof(*ev));
	ev->event_type = (int)raw.event_type;
	switch (raw.event_type) {
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED: {
		struct mcc_fab_qp *q = raw.element.qp ? raw.element.qp->qp_context : NULL;
		ev->qp_num = raw.element.qp ? raw.element.qp->qp_num : 0;
		ev->qp_context = q && !q->passive ? q->qp_context : NULL;
		ev->port_num = VB_PORT;
		break;
	}
	case IBV_EVENT_CQ_ERR: {
		struct mcc_fab_cq *c = raw.element.cq ? raw.element.cq->cq_context : NULL;
		ev->cq_id = c ? c->id : 0;
		ev->cq_context = c ? c->cq_context : NULL;
		break;
	}
	case IBV_EVENT_PORT_ACTIVE:
	case IBV_EVENT_PORT_ERR:
	case IBV_EVENT_LID_CHANGE:
	case IBV_EVENT_PKEY_CHANGE:
	case IBV_EVENT_SM_CHANGE:
	case IBV_EVENT_CLIENT_REREGISTER:
	case IBV_EVENT_GID_CHANGE:
		ev->port_num = (uint32_t)raw.element.port_num;
		break;
	default:
		break;
	}
	ibv_ack_async_event(&raw);
	ST_ADD(x->v, async_events, 1);
	if (x->v->trace.async)
		x->v->trace.async(x->v->trace.arg, x->node, x->idx, ev);
	return 0;
}

static void v_ack_async_event(struct mcc_fab_async_event *ev)
{
	(void)ev; /* acked when read (see v_get_async_event) */
}

int mcc_fab_verbs_drain_async(mcc_fab_verbs *v, uint32_t node, uint32_t dev)
{
	struct mcc_fab_dev *x = dev_at(v, node, dev);
	struct mcc_fab_async_event ev;
	int n = 0;
	if (!x || !x->refs)
		return 0;
	while (v_get_async_event(x, &ev) == 0)
		n++;
	return n;
}

void mcc_fab_verbs_dump(mcc_fab_verbs *v, FILE *f)
{
	static const char *const st[] = {"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"};
	pthread_mutex_lock(&v->mu);
	for (struct mcc_fab_qp *q = v->qps; q; q = q->next) {
		struct ibv_qp_attr a;
		struct ibv_qp_init_attr ia;
		int qs = ibv_query_qp(q->qp, &a, IBV_QP_STATE, &ia) ? -1 : (int)a.qp_state;
		int ps = -1;
		if (q->peer && !ibv_query_qp(q->peer->qp, &a, IBV_QP_STATE, &ia))
			ps = (int)a.qp_state;
		fprintf(f,
		        "verbs: qp %s/%u state=%s outstanding=%u gen=%u peer=%s/%u peer_state=%s "
		        "cq_outstanding=%lld\n",
		        q->d->name, q->qp->qp_num, qs >= 0 && qs <= 6 ? st[qs] : "?",
		        atomic_load(&q->ts_tail) - atomic_load(&q->ts_head), q->attr.generation,
		        q->peer ? q->rdev->name : "-", q->peer ? q->peer->qp->qp_num : 0,
		        ps >= 0 && ps <= 6 ? st[ps] : "-",
		        (long long)atomic_load(&q->cq->outstanding));
	}
	pthread_mutex_unlock(&v->mu);
}

static const struct mcc_fab_ops verbs_ops = {
    .name = "verbs",
    .num_devices = v_num_devices,
    .open_device = v_open_device,
    .close_device = v_close_device,
    .query_device = v_query_device,
    .query_port = v_query_port,
    .set_async_notify = v_set_async_notify,
    .create_cq = v_create_cq,
    .destroy_cq = v_destroy_cq,
    .cq_id = v_cq_id,
    .reg_mr = v_reg_mr,
    .dereg_mr = v_dereg_mr,
    .create_qp = v_create_qp,
    .connect_qp = v_connect_qp,
    .reset_qp = v_reset_qp,
    .destroy_qp = v_destroy_qp,
    .qp_num = v_qp_num,
    .local_addr = v_local_addr,
    .post_send = v_post_send,
    .poll_cq = v_poll_cq,
    .get_async_event = v_get_async_event,
    .ack_async_event = v_ack_async_event,
};

struct mcc_fab_handle mcc_fab_verbs_handle(mcc_fab_verbs *v)
{
	struct mcc_fab_handle h = {&verbs_ops, (mcc_fab *)v};
	return h;
}
