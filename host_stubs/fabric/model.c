/* SPDX-License-Identifier: MIT */
/*
 * model.c - in-process fabric model (see model.h). One lock serialises the
 * model; readiness callbacks (CQ notify, async notify, schedule) run with it
 * held and must only wake threads/actors.
 */
#include "model.h"

#include "../common/grow.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum ev_type {
	EV_TX_DONE = 1, /* sender port finished serialising its head unit */
	EV_SW_ARRIVE,   /* unit reached the switch */
	EV_EG_DONE,     /* switch egress finished serialising its head unit */
	EV_RX_ARRIVE,   /* unit reached the receiver NIC */
	EV_ACK,         /* ACK (or READ data) back at the requester */
	EV_NAK_ACCESS,  /* remote access error back at the requester */
	EV_RNR_NAK,     /* RNR NAK back at the requester */
	EV_RETX,        /* retransmit after an ACK timeout or the RNR timer */
	EV_ACK_TIMEOUT, /* ACK timer expired for a lost unit */
	EV_PAUSE,       /* PFC pause frame reached an ingress port's sender */
	EV_RESUME,
};

struct ev {
	uint64_t t;
	uint64_t seq;
	uint32_t type;
	uint32_t reserved0;
	void *obj;
};

struct port;

struct unit {
	struct unit *next;  /* port tx FIFO or egress queue */
	struct unit *qnext; /* QP send queue order */
	mcc_fab_qp *qp;
	uint64_t wr_id;
	int opcode;
	int status;         /* final WC status once done */
	uint32_t len;
	uint32_t lkey, rkey;
	uint32_t retries, rnr_retries;
	uint8_t done, dead, in_net, reserved0;
	uint64_t laddr, raddr;
	struct port *tx, *rx; /* data transmitter / receiver */
	uint64_t t_sent;
};

/* A FIFO of units linked by `next` (a port's transmit queue, a switch
 * egress). */
struct unitq {
	struct unit *head, *tail;
};

struct port {
	uint32_t node, dev, num; /* num 1-based */
	int link_up;             /* path through this link works */
	uint32_t loss_ppm;       /* silent loss on this link (per million units) */
	int active;              /* local port state */
	/* sender side */
	struct unitq txq;
	struct unit *tx_cur; /* being serialised */
	int paused;              /* number of egresses pausing us */
	uint64_t paused_since;
	/* switch egress towards this port */
	struct unitq egq;
	uint64_t eg_bytes, eg_peak;
	int eg_busy;
	struct port **pausing;   /* ingresses we paused */
	uint32_t npausing;
	size_t cappausing;
	/* receiver token bucket (slow receiver) */
	uint64_t rx_rate_bps, rx_burst, rx_tokens, rx_last;
	uint64_t rx_delivered; /* payload bytes received here (data receiver) */
	uint64_t tx_delivered; /* payload bytes sent from here and delivered */
};

struct mcc_fab_cq {
	struct mcc_fab_dev *dev;
	uint32_t id, cqe;
	struct mcc_fab_wc *ring;
	uint32_t head, count;
	int errored;
	void *cq_context;
	mcc_fab_notify_fn notify;
	void *notify_arg;
};

struct mcc_fab_qp {
	struct mcc_fab_dev *dev;
	mcc_fab_cq *cq;
	struct mcc_fab_qp_attr attr;
	uint32_t qpn;
	int state;      /* 0 reset, 1 rts, 2 err */
	int destroyed;
	struct port *lport, *rport;
	struct unit *sq, *sq_tail;
	uint32_t outstanding;
	void *qp_context;
	mcc_fab_qp *next_in_dev;
};

#define ASYNC_RING 256
struct mcc_fab_dev {
	struct mcc_fab_model *m;
	uint32_t node, idx;
	int opened, fatal;
	struct mcc_fab_async_event aq[ASYNC_RING];
	uint32_t ahead, acount;
	mcc_fab_notify_fn anotify;
	void *anotify_arg;
	mcc_fab_qp *qps;
	mcc_fab_cq *cqs[16];
	uint32_t ncq;
};

struct mr_ent {
	void *addr;
	size_t len;
	uint32_t node, dev, lkey, rkey;
	int live;
};

struct mcc_fab_model {
	pthread_mutex_t lock;
	struct mcc_fab_model_cfg cfg;
	uint64_t now, seq, announced;
	struct ev *heap;
	size_t nheap, capheap;
	struct port *ports;
	struct mcc_fab_dev *devs;
	struct mr_ent *mrs;
	size_t nmr, capmr;
	uint32_t next_qpn, next_cq, next_key;
	struct unit *freelist;
	uint64_t rng;
	mcc_fab_sched_fn sched;
	void *sched_arg;
	mcc_fab_clock_fn clock; /* the executor's time, read when a WR is posted */
	void *clock_arg;
	struct mcc_fab_model_stats st;
	uint64_t peak_since;
};

/* ------------------------------------------------------------------ helpers */

uint64_t mcc_fab_rnr_timer_ns(unsigned code)
{
	/* IBTA RNR NAK timer field, microseconds x100 (0 means 655.36 ms). */
	static const uint32_t tab_10ns[32] = {
	    65536, 1,    2,    3,    4,    6,    8,    12,   16,   24,   32,
	    48,    64,   96,   128,  192,  256,  384,  512,  768,  1024, 1536,
	    2048,  3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152};
	return (uint64_t)tab_10ns[code & 31] * 10000u; /* units of 10 us */
}

static uint64_t rng_next(struct mcc_fab_model *m)
{
	uint64_t x = m->rng;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return m->rng = x;
}

static struct port *port_at(struct mcc_fab_model *m, uint32_t node, uint32_t dev, uint32_t num)
{
	if (node >= m->cfg.nodes || dev >= m->cfg.devs_per_node || num < 1 ||
	    num > m->cfg.ports_per_dev)
		return NULL;
	return &m->ports[(node * m->cfg.devs_per_node + dev) * m->cfg.ports_per_dev + (num - 1)];
}

static int ev_less(const struct ev *a, const struct ev *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void ev_push(struct mcc_fab_model *m, uint64_t t, uint32_t type, void *obj)
{
	struct ev *h = mcc_grow(m->heap, &m->capheap, m->nheap, sizeof(*h), 1024);
	if (!h)
		abort();
	m->heap = h;
	struct ev e = {t, m->seq++, type, 0, obj};
	size_t i = m->nheap++;
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!ev_less(&e, &m->heap[p]))
			break;
		m->heap[i] = m->heap[p];
		i = p;
	}
	m->heap[i] = e;
	if (t < m->announced) {
		m->announced = t;
		if (m->sched)
			m->sched(m->sched_arg, t);
	}
}

static struct ev ev_pop(struct mcc_fab_model *m)
{
	struct ev top = m->heap[0];
	struct ev last = m->heap[--m->nheap];
	size_t i = 0, n = m->nheap;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && ev_less(&m->heap[c + 1], &m->heap[c]))
			c++;
		if (!ev_less(&m->heap[c], &last))
			break;
		m->heap[i] = m->heap[c];
		i = c;
	}
	if (n)
		m->heap[i] = last;
	return top;
}

static struct unit *unit_alloc(struct mcc_fab_model *m)
{
	struct unit *u = m->freelist;
	if (u)
		m->freelist = u->next;
	else if (!(u = malloc(sizeof(*u))))
		abort();
	memset(u, 0, sizeof(*u));
	return u;
}

static void unit_free(struct mcc_fab_model *m, struct unit *u)
{
	u->next = m->freelist;
	m->freelist = u;
}

static uint64_t ser_ns(const struct port *p, uint64_t bytes, uint64_t bps)
{
	(void)p;
	return (bytes * 8ull * 1000000000ull + bps - 1) / bps;
}

uint64_t mcc_fab_model_base_rtt_ns(const struct mcc_fab_model_cfg *cfg)
{
	return 3 * cfg->prop_ns;
}

static uint64_t prop(struct mcc_fab_model *m)
{
	return m->cfg.prop_ns + (rng_next(m) & 31); /* a little jitter from the seed */
}

/* ------------------------------------------------------------ completions */

static void cq_push(struct mcc_fab_model *m, mcc_fab_cq *cq, const struct mcc_fab_wc *wc)
{
	if (cq->errored) {
		m->st.cqe_dropped++;
		return;
	}
	if (cq->count == cq->cqe) { /* overrun: the CQ goes to error */
		cq->errored = 1;
		m->st.cqe_dropped++;
		struct mcc_fab_dev *d = cq->dev;
		if (d->acount < ASYNC_RING) {
			struct mcc_fab_async_event *e = &d->aq[(d->ahead + d->acount++) % ASYNC_RING];
			memset(e, 0, sizeof(*e));
			e->event_type = IBV_EVENT_CQ_ERR;
			e->cq_id = cq->id;
			e->cq_context = cq->cq_context;
			if (d->anotify)
				d->anotify(d->anotify_arg);
		}
		return;
	}
	cq->ring[(cq->head + cq->count++) % cq->cqe] = *wc;
	if (cq->notify)
		cq->notify(cq->notify_arg);
}

static void emit_wc(struct mcc_fab_model *m, struct unit *u, int status)
{
	struct mcc_fab_wc wc = {0};
	wc.wr_id = u->wr_id;
	wc.status = status;
	wc.opcode = u->opcode == IBV_WR_RDMA_READ ? IBV_WC_RDMA_READ : IBV_WC_RDMA_WRITE;
	wc.vendor_err = status == IBV_WC_SUCCESS ? 0 : 0x80 + (uint32_t)status;
	wc.byte_len = status == IBV_WC_SUCCESS ? u->len : 0;
	wc.qp_num = u->qp->qpn;
	m->st.wrs_completed++;
	if (status == IBV_WC_WR_FLUSH_ERR)
		m->st.flushed++;
	else if (status != IBV_WC_SUCCESS)
		m->st.wc_errors++;
	u->qp->outstanding--;
	cq_push(m, u->qp->cq, &wc);
}

/* Deliver completions in send-queue order. */
static void qp_drain(struct mcc_fab_model *m, mcc_fab_qp *qp)
{
	while (qp->sq && qp->sq->done) {
		struct unit *u = qp->sq;
		qp->sq = u->qnext;
		if (!qp->sq)
			qp->sq_tail = NULL;
		emit_wc(m, u, u->status);
		if (u->in_net)
			u->dead = 1; /* the network still references it */
		else
			unit_free(m, u);
	}
}

/* QP to ERR: `culprit` (may be NULL) completes with `status`, every other
 * outstanding WR flushes, later posts flush at once. */
static void qp_error(struct mcc_fab_model *m, mcc_fab_qp *qp, struct unit *culprit, int status)
{
	qp->state = 2;
	if (culprit) {
		/* unlink culprit and report it first */
		struct unit **pp = &qp->sq, *prev = NULL;
		while (*pp && *pp != culprit) {
			prev = *pp;
			pp = &(*pp)->qnext;
		}
		if (*pp) {
			*pp = culprit->qnext;
			if (qp->sq_tail == culprit)
				qp->sq_tail = prev;
			emit_wc(m, culprit, status);
			if (culprit->in_net)
				culprit->dead = 1;
			else
				unit_free(m, culprit);
		}
	}
	for (struct unit *u = qp->sq; u; u = u->qnext) {
		u->done = 1;
		u->status = IBV_WC_WR_FLUSH_ERR;
	}
	qp_drain(m, qp);
}

static void async_push(struct mcc_fab_dev *d, int type, uint32_t port, mcc_fab_qp *qp,
                       mcc_fab_cq *cq)
{
	if (d->acount >= ASYNC_RING)
		return;
	struct mcc_fab_async_event *e = &d->aq[(d->ahead + d->acount++) % ASYNC_RING];
	memset(e, 0, sizeof(*e));
	e->event_type = type;
	e->port_num = port;
	if (qp) {
		e->qp_num = qp->qpn;
		e->qp_context = qp->qp_context;
	}
	if (cq) {
		e->cq_id = cq->id;
		e->cq_context = cq->cq_context;
	}
	if (d->anotify)
		d->anotify(d->anotify_arg);
}

/* ------------------------------------------------------------------ network */

static void unitq_push(struct unitq *q, struct unit *u)
{
	u->next = NULL;
	if (q->tail)
		q->tail->next = u;
	else
		q->head = u;
	q->tail = u;
}

static struct unit *unitq_pop(struct unitq *q)
{
	struct unit *u = q->head;
	q->head = u->next;
	if (!q->head)
		q->tail = NULL;
	u->next = NULL;
	return u;
}

static void port_kick(struct mcc_fab_model *m, struct port *p)
{
	while (!p->tx_cur && !p->paused && p->txq.head) {
		struct unit *u = unitq_pop(&p->txq);
		if (u->dead) { /* flushed while queued */
			unit_free(m, u);
			continue;
		}
		p->tx_cur = u;
		u->t_sent = m->now;
		ev_push(m, m->now + ser_ns(p, u->len, m->cfg.link_bps), EV_TX_DONE, p);
	}
}

static void tx_enqueue(struct mcc_fab_model *m, struct unit *u)
{
	struct port *p = u->tx;
	u->in_net = 1;
	unitq_push(&p->txq, u);
	port_kick(m, p);
}

static void eg_kick(struct mcc_fab_model *m, struct port *e)
{
	if (e->eg_busy || !e->egq.head)
		return;
	e->eg_busy = 1;
	ev_push(m, m->now + ser_ns(e, e->egq.head->len, m->cfg.link_bps), EV_EG_DONE, e);
}

static void pause_ingress(struct mcc_fab_model *m, struct port *e, struct port *in)
{
	for (uint32_t i = 0; i < e->npausing; i++)
		if (e->pausing[i] == in)
			return;
	struct port **a = mcc_grow(e->pausing, &e->cappausing, e->npausing, sizeof(*a), 8);
	if (!a)
		abort();
	e->pausing = a;
	e->pausing[e->npausing++] = in;
	m->st.pause_events++;
	ev_push(m, m->now + m->cfg.prop_ns, EV_PAUSE, in);
}

/* Silent loss on a link (mcc_fab_fault_loss): the seeded generator is
 * drawn only while a loss is set, so runs without one are unchanged. */
static int link_drops(struct mcc_fab_model *m, const struct port *p)
{
	return p->loss_ppm && rng_next(m) % 1000000u < p->loss_ppm;
}

static void unit_lost(struct mcc_fab_model *m, struct unit *u)
{
	m->st.wrs_lost++;
	u->in_net = 0;
	if (u->dead) {
		unit_free(m, u);
		return;
	}
	uint64_t to = mcc_fab_ack_timeout_ns(u->qp->attr.timeout);
	uint64_t at = u->t_sent + to;
	ev_push(m, at > m->now ? at : m->now + 1, EV_ACK_TIMEOUT, u);
	u->in_net = 1; /* the timer holds it */
}

static struct mr_ent *mr_find_rkey(struct mcc_fab_model *m, uint32_t node, uint32_t rkey,
                                   uint64_t addr, uint32_t len)
{
	for (size_t i = 0; i < m->nmr; i++) {
		struct mr_ent *r = &m->mrs[i];
		if (r->live && r->node == node && r->rkey == rkey && addr >= (uintptr_t)r->addr &&
		    addr + len <= (uintptr_t)r->addr + r->len)
			return r;
	}
	return NULL;
}

static void rx_arrive(struct mcc_fab_model *m, struct unit *u)
{
	u->in_net = 0;
	if (u->dead) {
		unit_free(m, u);
		return;
	}
	/* the remote (responder) side: the rx port for a WRITE, tx for a READ */
	struct port *remote = u->opcode == IBV_WR_RDMA_READ ? u->tx : u->rx;
	struct port *rcv = u->rx;
	if (rcv->rx_rate_bps) { /* slow receiver: token bucket of receive resources */
		uint64_t add = (m->now - rcv->rx_last) * rcv->rx_rate_bps / 8000000000ull;
		rcv->rx_tokens = rcv->rx_tokens + add > rcv->rx_burst ? rcv->rx_burst : rcv->rx_tokens + add;
		rcv->rx_last = m->now;
		if (rcv->rx_tokens < u->len) {
			m->st.rnr_naks++;
			u->in_net = 1;
			ev_push(m, m->now + prop(m), EV_RNR_NAK, u);
			return;
		}
		rcv->rx_tokens -= u->len;
	}
	if (!mr_find_rkey(m, remote->node, u->rkey, u->raddr, u->len)) {
		u->in_net = 1;
		ev_push(m, m->now + prop(m), EV_NAK_ACCESS, u);
		return;
	}
	if (m->cfg.move_payload) {
		if (u->opcode == IBV_WR_RDMA_READ)
			memcpy((void *)(uintptr_t)u->laddr, (const void *)(uintptr_t)u->raddr, u->len);
		else
			memcpy((void *)(uintptr_t)u->raddr, (const void *)(uintptr_t)u->laddr, u->len);
	}
	m->st.bytes_delivered += u->len;
	rcv->rx_delivered += u->len;
	if (u->tx)
		u->tx->tx_delivered += u->len;
	u->in_net = 1;
	if (u->opcode == IBV_WR_RDMA_READ)
		ev_push(m, m->now, EV_ACK, u);
	else
		ev_push(m, m->now + prop(m), EV_ACK, u);
}

/* An answer about unit u reaches its sender (ACK, NAK, a timer): u is out
 * of the network; one flushed meanwhile is freed. */
static void answer(struct mcc_fab_model *m, uint32_t type, struct unit *u)
{
	u->in_net = 0;
	if (u->dead) {
		unit_free(m, u);
		return;
	}
	switch (type) {
	case EV_ACK:
		u->done = 1;
		u->status = IBV_WC_SUCCESS;
		qp_drain(m, u->qp);
		break;
	case EV_NAK_ACCESS:
		qp_error(m, u->qp, u, IBV_WC_REM_ACCESS_ERR);
		break;
	case EV_RNR_NAK:
		u->rnr_retries++;
		if (u->qp->attr.rnr_retry != 7 && u->rnr_retries > u->qp->attr.rnr_retry) {
			qp_error(m, u->qp, u, IBV_WC_RNR_RETRY_EXC_ERR);
			break;
		}
		u->in_net = 1;
		ev_push(m, m->now + mcc_fab_rnr_timer_ns(u->qp->attr.min_rnr_timer), EV_RETX, u);
		break;
	case EV_ACK_TIMEOUT:
		u->retries++;
		if (u->retries > u->qp->attr.retry_cnt) {
			qp_error(m, u->qp, u, IBV_WC_RETRY_EXC_ERR);
			break;
		}
		tx_enqueue(m, u);
		break;
	default: /* EV_RETX */
		tx_enqueue(m, u);
		break;
	}
}

static void process(struct mcc_fab_model *m, const struct ev *e)
{
	struct port *p;
	struct unit *u;
	m->st.events++;
	switch (e->type) {
	case EV_TX_DONE:
		p = e->obj;
		u = p->tx_cur;
		p->tx_cur = NULL;
		ev_push(m, m->now + prop(m), EV_SW_ARRIVE, u);
		port_kick(m, p);
		break;
	case EV_SW_ARRIVE: {
		u = e->obj;
		if (u->dead) {
			u->in_net = 0;
			unit_free(m, u);
			break;
		}
		if (!u->tx->link_up || !u->rx->link_up || link_drops(m, u->tx) || link_drops(m, u->rx) ||
		    (m->cfg.rail_optimised && u->tx->dev != u->rx->dev)) {
			unit_lost(m, u);
			break;
		}
		struct port *eg = u->rx;
		unitq_push(&eg->egq, u);
		eg->eg_bytes += u->len;
		if (eg->eg_bytes > eg->eg_peak)
			eg->eg_peak = eg->eg_bytes;
		if (eg->eg_bytes > m->st.queue_peak_bytes)
			m->st.queue_peak_bytes = eg->eg_bytes;
		if (eg->eg_bytes > m->peak_since)
			m->peak_since = eg->eg_bytes;
		if (eg->eg_bytes > m->cfg.xoff_bytes)
			pause_ingress(m, eg, u->tx);
		eg_kick(m, eg);
		break;
	}
	case EV_EG_DONE:
		p = e->obj;
		u = unitq_pop(&p->egq);
		p->eg_bytes -= u->len;
		p->eg_busy = 0;
		if (p->eg_bytes <= m->cfg.xon_bytes && p->npausing) {
			for (uint32_t i = 0; i < p->npausing; i++)
				ev_push(m, m->now + m->cfg.prop_ns, EV_RESUME, p->pausing[i]);
			p->npausing = 0;
		}
		if (!p->link_up)
			unit_lost(m, u);
		else
			ev_push(m, m->now + prop(m), EV_RX_ARRIVE, u);
		eg_kick(m, p);
		break;
	case EV_RX_ARRIVE:
		rx_arrive(m, e->obj);
		break;
	case EV_ACK:
	case EV_NAK_ACCESS:
	case EV_RNR_NAK:
	case EV_ACK_TIMEOUT:
	case EV_RETX:
		answer(m, e->type, e->obj);
		break;
	case EV_PAUSE:
		p = e->obj;
		if (p->paused++ == 0)
			p->paused_since = m->now;
		break;
	case EV_RESUME:
		p = e->obj;
		if (p->paused > 0 && --p->paused == 0) {
			m->st.pause_ns += m->now - p->paused_since;
			port_kick(m, p);
		}
		break;
	}
}

static uint64_t advance_locked(struct mcc_fab_model *m, uint64_t now)
{
	while (m->nheap && m->heap[0].t <= now) {
		struct ev e = ev_pop(m);
		if (e.t > m->now)
			m->now = e.t;
		process(m, &e);
	}
	if (now > m->now)
		m->now = now;
	m->announced = m->nheap ? m->heap[0].t : MCC_FAB_NEVER;
	return m->announced;
}

uint64_t mcc_fab_model_advance(mcc_fab_model *m, uint64_t now)
{
	pthread_mutex_lock(&m->lock);
	uint64_t next = advance_locked(m, now);
	pthread_mutex_unlock(&m->lock);
	return next;
}

uint64_t mcc_fab_model_now(mcc_fab_model *m)
{
	pthread_mutex_lock(&m->lock);
	uint64_t t = m->now;
	pthread_mutex_unlock(&m->lock);
	return t;
}

void mcc_fab_model_set_sched(mcc_fab_model *m, mcc_fab_sched_fn fn, void *arg)
{
	pthread_mutex_lock(&m->lock);
	m->sched = fn;
	m->sched_arg = arg;
	m->announced = MCC_FAB_NEVER;
	if (fn && m->nheap) {
		m->announced = m->heap[0].t;
		fn(arg, m->announced);
	}
	pthread_mutex_unlock(&m->lock);
}

void mcc_fab_model_set_clock(mcc_fab_model *m, mcc_fab_clock_fn fn, void *arg)
{
	pthread_mutex_lock(&m->lock);
	m->clock = fn;
	m->clock_arg = arg;
	pthread_mutex_unlock(&m->lock);
}

/* --------------------------------------------------------------- backend ops */

static int m_num_devices(mcc_fab *fab, uint32_t node)
{
	struct mcc_fab_model *m = (struct mcc_fab_model *)fab;
	return node < m->cfg.nodes ? (int)m->cfg.devs_per_node : 0;
}

static mcc_fab_dev *m_open_device(mcc_fab *fab, uint32_t node, uint32_t dev)
{
	struct mcc_fab_model *m = (struct mcc_fab_model *)fab;
	if (node >= m->cfg.nodes || dev >= m->cfg.devs_per_node)
		return NULL;
	struct mcc_fab_dev *d = &m->devs[node * m->cfg.devs_per_node + dev];
	pthread_mutex_lock(&m->lock);
	d->opened++;
	pthread_mutex_unlock(&m->lock);
	return d;
}

static void m_close_device(mcc_fab_dev *d)
{
	pthread_mutex_lock(&d->m->lock);
	d->opened--;
	d->anotify = NULL;
	pthread_mutex_unlock(&d->m->lock);
}

static int m_query_device(mcc_fab_dev *d, struct mcc_fab_device_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->name[0] = 'm';
	a->name[1] = 'l';
	a->name[2] = 'x';
	a->name[3] = '5';
	a->name[4] = '_';
	a->name[5] = (char)('0' + d->idx % 10);
	a->node = d->node;
	a->dev = d->idx;
	a->num_ports = d->m->cfg.ports_per_dev;
	a->max_qp_wr = d->m->cfg.max_qp_wr;
	a->max_cqe = d->m->cfg.max_cqe;
	a->link_rate_bps = d->m->cfg.link_bps;
	return 0;
}

static int m_query_port(mcc_fab_dev *d, uint32_t num, int *state)
{
	struct port *p = port_at(d->m, d->node, d->idx, num);
	if (!p)
		return -EINVAL;
	pthread_mutex_lock(&d->m->lock);
	*state = (p->active && !d->fatal) ? MCC_FAB_PORT_ACTIVE : MCC_FAB_PORT_DOWN;
	pthread_mutex_unlock(&d->m->lock);
	return 0;
}

static void m_set_async_notify(mcc_fab_dev *d, mcc_fab_notify_fn fn, void *arg)
{
	pthread_mutex_lock(&d->m->lock);
	d->anotify = fn;
	d->anotify_arg = arg;
	pthread_mutex_unlock(&d->m->lock);
}

static mcc_fab_cq *m_create_cq(mcc_fab_dev *d, uint32_t cqe, void *ctx, mcc_fab_notify_fn fn,
                               void *arg)
{
	struct mcc_fab_model *m = d->m;
	if (cqe == 0 || cqe > m->cfg.max_cqe || d->ncq >= 16)
		return NULL;
	mcc_fab_cq *cq = calloc(1, sizeof(*cq));
	if (!cq || !(cq->ring = calloc(cqe, sizeof(*cq->ring)))) {
		free(cq);
		return NULL;
	}
	pthread_mutex_lock(&m->lock);
	cq->dev = d;
	cq->id = ++m->next_cq;
	cq->cqe = cqe;
	cq->cq_context = ctx;
	cq->notify = fn;
	cq->notify_arg = arg;
	d->cqs[d->ncq++] = cq;
	pthread_mutex_unlock(&m->lock);
	return cq;
}

static void m_destroy_cq(mcc_fab_cq *cq)
{
	struct mcc_fab_dev *d = cq->dev;
	pthread_mutex_lock(&d->m->lock);
	for (uint32_t i = 0; i < d->ncq; i++)
		if (d->cqs[i] == cq) {
			d->cqs[i] = d->cqs[--d->ncq];
			break;
		}
	pthread_mutex_unlock(&d->m->lock);
	free(cq->ring);
	free(cq);
}

static uint32_t m_cq_id(const mcc_fab_cq *cq)
{
	return cq->id;
}

static int m_reg_mr(mcc_fab_dev *d, void *addr, size_t len, struct mcc_fab_mr *out)
{
	struct mcc_fab_model *m = d->m;
	pthread_mutex_lock(&m->lock);
	struct mr_ent *a = mcc_grow(m->mrs, &m->capmr, m->nmr, sizeof(*a), 32);
	if (!a) {
		pthread_mutex_unlock(&m->lock);
		return -ENOMEM;
	}
	m->mrs = a;
	struct mr_ent *r = &m->mrs[m->nmr++];
	r->addr = addr;
	r->len = len;
	r->node = d->node;
	r->dev = d->idx;
	r->lkey = ++m->next_key;
	r->rkey = 0x10000u + m->next_key;
	r->live = 1;
	out->addr = addr;
	out->length = len;
	out->lkey = r->lkey;
	out->rkey = r->rkey;
	out->dev = d;
	pthread_mutex_unlock(&m->lock);
	return 0;
}

static int m_dereg_mr(struct mcc_fab_mr *mr)
{
	struct mcc_fab_model *m = mr->dev->m;
	pthread_mutex_lock(&m->lock);
	for (size_t i = 0; i < m->nmr; i++)
		if (m->mrs[i].live && m->mrs[i].lkey == mr->lkey)
			m->mrs[i].live = 0;
	pthread_mutex_unlock(&m->lock);
	return 0;
}

static mcc_fab_qp *m_create_qp(mcc_fab_dev *d, mcc_fab_cq *cq, const struct mcc_fab_qp_attr *attr,
                               void *ctx)
{
	struct mcc_fab_model *m = d->m;
	struct port *lp = port_at(m, d->node, d->idx, attr->port_num);
	if (!lp || !cq || attr->max_send_wr == 0 || attr->max_send_wr > m->cfg.max_qp_wr)
		return NULL;
	mcc_fab_qp *qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	pthread_mutex_lock(&m->lock);
	qp->dev = d;
	qp->cq = cq;
	qp->attr = *attr;
	qp->qpn = ++m->next_qpn;
	qp->lport = lp;
	qp->qp_context = ctx;
	qp->next_in_dev = d->qps;
	d->qps = qp;
	pthread_mutex_unlock(&m->lock);
	return qp;
}

static int m_connect_qp(mcc_fab_qp *qp, const struct mcc_fab_addr *r)
{
	struct mcc_fab_model *m = qp->dev->m;
	struct port *rp = port_at(m, r->node, r->dev, r->port);
	if (!rp)
		return -EINVAL;
	pthread_mutex_lock(&m->lock);
	qp->rport = rp;
	qp->state = qp->dev->fatal ? 2 : 1;
	pthread_mutex_unlock(&m->lock);
	return 0;
}

static int m_reset_qp(mcc_fab_qp *qp)
{
	struct mcc_fab_model *m = qp->dev->m;
	pthread_mutex_lock(&m->lock);
	qp_error(m, qp, NULL, 0);
	pthread_mutex_unlock(&m->lock);
	return 0;
}

static int m_destroy_qp(mcc_fab_qp *qp)
{
	struct mcc_fab_model *m = qp->dev->m;
	pthread_mutex_lock(&m->lock);
	/* destroy without a prior flush: outstanding WRs vanish (no WC) */
	for (struct unit *u = qp->sq, *n; u; u = n) {
		n = u->qnext;
		if (u->in_net)
			u->dead = 1;
		else
			unit_free(m, u);
	}
	qp->sq = qp->sq_tail = NULL;
	for (mcc_fab_qp **pp = &qp->dev->qps; *pp; pp = &(*pp)->next_in_dev)
		if (*pp == qp) {
			*pp = qp->next_in_dev;
			break;
		}
	/* units marked dead keep a pointer to the qp only for ->qp checks made
	 * after the dead test, so freeing is safe */
	pthread_mutex_unlock(&m->lock);
	free(qp);
	return 0;
}

static uint32_t m_qp_num(const mcc_fab_qp *qp)
{
	return qp->qpn;
}

static int m_local_addr(const mcc_fab_qp *qp, struct mcc_fab_addr *out)
{
	out->node = qp->lport->node;
	out->dev = qp->lport->dev;
	out->port = qp->lport->num;
	out->qp_num = qp->qpn;
	return 0;
}

static int m_post_send(mcc_fab_qp *qp, struct mcc_fab_send_wr *wr, struct mcc_fab_send_wr **bad)
{
	struct mcc_fab_model *m = qp->dev->m;
	int rc = 0;
	pthread_mutex_lock(&m->lock);
	/* a WR starts when it is posted: the model's time may have stood still
	 * since its last event (its executor actor parks while it has none),
	 * and a WR put on an idle port at that stale time would be on the wire
	 * before it was posted */
	if (m->clock)
		advance_locked(m, m->clock(m->clock_arg));
	for (; wr; wr = wr->next) {
		if (qp->dev->fatal) {
			rc = EIO;
			break;
		}
		if (qp->state == 0 || !qp->rport ||
		    (wr->opcode != IBV_WR_RDMA_WRITE && wr->opcode != IBV_WR_RDMA_READ) || !wr->length) {
			rc = EINVAL;
			break;
		}
		if (qp->outstanding >= qp->attr.max_send_wr) {
			rc = ENOMEM;
			break;
		}
		struct unit *u = unit_alloc(m);
		u->qp = qp;
		u->wr_id = wr->wr_id;
		u->opcode = wr->opcode;
		u->len = wr->length;
		u->lkey = wr->lkey;
		u->rkey = wr->rkey;
		u->laddr = wr->local_addr;
		u->raddr = wr->remote_addr;
		if (wr->opcode == IBV_WR_RDMA_READ) {
			u->tx = qp->rport;
			u->rx = qp->lport;
		} else {
			u->tx = qp->lport;
			u->rx = qp->rport;
		}
		if (qp->sq_tail)
			qp->sq_tail->qnext = u;
		else
			qp->sq = u;
		qp->sq_tail = u;
		qp->outstanding++;
		m->st.wrs_posted++;
		if (qp->state == 2) { /* QP in ERR: the WR flushes at once */
			u->done = 1;
			u->status = IBV_WC_WR_FLUSH_ERR;
			qp_drain(m, qp);
			continue;
		}
		if (!qp->lport->active) { /* local port down */
			qp_error(m, qp, u, IBV_WC_LOC_QP_OP_ERR);
			continue;
		}
		tx_enqueue(m, u);
	}
	if (rc && bad)
		*bad = wr;
	pthread_mutex_unlock(&m->lock);
	return rc;
}

static int m_poll_cq(mcc_fab_cq *cq, int n, struct mcc_fab_wc *wc)
{
	struct mcc_fab_model *m = cq->dev->m;
	int k = 0;
	pthread_mutex_lock(&m->lock);
	while (k < n && cq->count) {
		wc[k++] = cq->ring[cq->head];
		cq->head = (cq->head + 1) % cq->cqe;
		cq->count--;
	}
	pthread_mutex_unlock(&m->lock);
	return k;
}

static int m_get_async_event(mcc_fab_dev *d, struct mcc_fab_async_event *ev)
{
	int rc = -EAGAIN;
	pthread_mutex_lock(&d->m->lock);
	if (d->acount) {
		*ev = d->aq[d->ahead];
		d->ahead = (d->ahead + 1) % ASYNC_RING;
		d->acount--;
		rc = 0;
	}
	pthread_mutex_unlock(&d->m->lock);
	return rc;
}

static void m_ack_async_event(struct mcc_fab_async_event *ev)
{
	(void)ev;
}

static const struct mcc_fab_ops model_ops = {
    .name = "model",
    .num_devices = m_num_devices,
    .open_device = m_open_device,
    .close_device = m_close_device,
    .query_device = m_query_device,
    .query_port = m_query_port,
    .set_async_notify = m_set_async_notify,
    .create_cq = m_create_cq,
    .destroy_cq = m_destroy_cq,
    .cq_id = m_cq_id,
    .reg_mr = m_reg_mr,
    .dereg_mr = m_dereg_mr,
    .create_qp = m_create_qp,
    .connect_qp = m_connect_qp,
    .reset_qp = m_reset_qp,
    .destroy_qp = m_destroy_qp,
    .qp_num = m_qp_num,
    .local_addr = m_local_addr,
    .post_send = m_post_send,
    .poll_cq = m_poll_cq,
    .get_async_event = m_get_async_event,
    .ack_async_event = m_ack_async_event,
};

/* ------------------------------------------------------------ construction */

void mcc_fab_model_cfg_defaults(struct mcc_fab_model_cfg *c)
{
	static const struct mcc_fab_model_cfg defaults = {
	    .nodes = 2,
	    .devs_per_node = 2,
	    .ports_per_dev = 1,
	    .link_bps = 25000000000ull,
	    .prop_ns = 1000,
	    .switch_buf_bytes = 4u << 20,
	    .seed = 1,
	    .max_qp_wr = 256,
	    .max_cqe = 4096,
	    .move_payload = 1,
	};
	*c = defaults;
}

mcc_fab_model *mcc_fab_model_create(const struct mcc_fab_model_cfg *cfg)
{
	struct mcc_fab_model_cfg c = *cfg;
	if (!c.nodes || c.nodes > MCC_FAB_MAX_NODES || !c.devs_per_node ||
	    c.devs_per_node > MCC_FAB_MAX_DEVS || !c.ports_per_dev || c.ports_per_dev > MCC_FAB_MAX_PORTS ||
	    !c.link_bps)
		return NULL;
	if (!c.xoff_bytes)
		c.xoff_bytes = c.switch_buf_bytes > (2u << 20) ? c.switch_buf_bytes - (1u << 20)
		                                               : c.switch_buf_bytes / 2;
	if (!c.xon_bytes)
		c.xon_bytes = c.xoff_bytes / 2;
	struct mcc_fab_model *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	size_t nd = (size_t)c.nodes * c.devs_per_node;
	m->ports = calloc(nd * c.ports_per_dev, sizeof(*m->ports));
	m->devs = calloc(nd, sizeof(*m->devs));
	if (!m->ports || !m->devs) {
		free(m->ports);
		free(m->devs);
		free(m);
		return NULL;
	}
	pthread_mutex_init(&m->lock, NULL);
	m->cfg = c;
	m->rng = c.seed ? c.seed * 0x9e3779b97f4a7c15ull : 0x1234567ull;
	m->announced = MCC_FAB_NEVER;
	for (uint32_t n = 0; n < c.nodes; n++)
		for (uint32_t d = 0; d < c.devs_per_node; d++) {
			struct mcc_fab_dev *dv = &m->devs[n * c.devs_per_node + d];
			dv->m = m;
			dv->node = n;
			dv->idx = d;
			for (uint32_t p = 1; p <= c.ports_per_dev; p++) {
				struct port *pt = port_at(m, n, d, p);
				pt->node = n;
				pt->dev = d;
				pt->num = p;
				pt->link_up = 1;
				pt->active = 1;
			}
		}
	return m;
}

/* Frees a list of units linked by `next`. */
static void units_free(struct unit *u)
{
	for (struct unit *n; u; u = n) {
		n = u->next;
		free(u);
	}
}

void mcc_fab_model_destroy(mcc_fab_model *m)
{
	if (!m)
		return;
	/* units referenced by the heap or queues */
	size_t np = (size_t)m->cfg.nodes * m->cfg.devs_per_node * m->cfg.ports_per_dev;
	for (size_t i = 0; i < m->nheap; i++) {
		uint32_t t = m->heap[i].type;
		if (t != EV_TX_DONE && t != EV_EG_DONE && t != EV_PAUSE && t != EV_RESUME)
			free(m->heap[i].obj);
	}
	for (size_t i = 0; i < np; i++) {
		struct port *p = &m->ports[i];
		units_free(p->txq.head);
		free(p->tx_cur);
		units_free(p->egq.head);
		free(p->pausing);
	}
	size_t nd = (size_t)m->cfg.nodes * m->cfg.devs_per_node;
	for (size_t i = 0; i < nd; i++)
		for (mcc_fab_qp *q = m->devs[i].qps; q; q = q->next_in_dev)
			for (struct unit *u = q->sq, *n; u; u = n) {
				n = u->qnext;
				if (!u->in_net)
					free(u);
			}
	units_free(m->freelist);
	free(m->heap);
	free(m->mrs);
	free(m->ports);
	free(m->devs);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

struct mcc_fab_handle mcc_fab_model_handle(mcc_fab_model *m)
{
	struct mcc_fab_handle h = {&model_ops, (mcc_fab *)m};
	return h;
}

void mcc_fab_model_stats(mcc_fab_model *m, struct mcc_fab_model_stats *out)
{
	pthread_mutex_lock(&m->lock);
	*out = m->st;
	/* include pauses still running */
	size_t np = (size_t)m->cfg.nodes * m->cfg.devs_per_node * m->cfg.ports_per_dev;
	for (size_t i = 0; i < np; i++)
		if (m->ports[i].paused)
			out->pause_ns += m->now - m->ports[i].paused_since;
	pthread_mutex_unlock(&m->lock);
}

/* A port's egress queue (rx 0) or delivered bytes (rx 1), read under the
 * lock; 0 for no such port. */
static uint64_t port_bytes(mcc_fab_model *m, uint32_t node, uint32_t dev, uint32_t port, int rx)
{
	struct port *p = port_at(m, node, dev, port);
	pthread_mutex_lock(&m->lock);
	uint64_t b = !p ? 0 : rx ? p->rx_delivered : p->eg_bytes;
	pthread_mutex_unlock(&m->lock);
	return b;
}

uint64_t mcc_fab_model_queue_bytes(mcc_fab_model *m, uint32_t node, uint32_t dev, uint32_t port)
{
	return port_bytes(m, node, dev, port, 0);
}

uint64_t mcc_fab_model_rx_bytes(mcc_fab_model *m, uint32_t node, uint32_t dev, uint32_t port)
{
	return port_bytes(m, node, dev, port, 1);
}

uint64_t mcc_fab_model_tx_bytes(mcc_fab_model *m, uint32_t node, uint32_t dev, uint32_t port)
{
	struct port *p = port_at(m, node, dev, port);
	pthread_mutex_lock(&m->lock);
	uint64_t b = p ? p->tx_delivered : 0;
	pthread_mutex_unlock(&m->lock);
	return b;
}

uint64_t mcc_fab_model_queue_peak_reset(mcc_fab_model *m)
{
	pthread_mutex_lock(&m->lock);
	uint64_t b = m->peak_since;
	m->peak_since = 0;
	pthread_mutex_unlock(&m->lock);
	return b;
}

/* -------------------------------------------------------------------- faults */

static struct mcc_fab_dev *dev_at(struct mcc_fab_model *m, uint32_t node, uint32_t dev)
{
	if (node >= m->cfg.nodes || dev >= m->cfg.devs_per_node)
		return NULL;
	return &m->devs[node * m->cfg.devs_per_node + dev];
}

void mcc_fab_fault_link(mcc_fab_model *m, uint32_t node, uint32_t dev, uint32_t port, int up)
{
	struct port *p = port_at(m, node, dev, port);
	if (!p)
		return;
	pthread_mutex_lock(&m->lock);
	p->link_up = up;
	pthread_mutex_unlock(&m->lock);
}

void mcc_fab_fault_loss(mcc_fab_model *m, uint32_t node, uint32_t dev, uint32_t port,
                        uint32_t ppm)
{
	struct port *p = port_at(m, node, dev, port);
	if (!p)
		return;
	pthread_mutex_lock(&m->lock);
	p->loss_ppm = ppm > 1000000u ? 1000000u : ppm;
	pthread_mutex_unlock(&m->lock);
}

void mcc_fab_fault_port(mcc_fab_model *m, uint32_t node, uint32_t dev, uint32_t port, int up)
{
	struct port *p = port_at(m, node, dev, port);
	struct mcc_fab_dev *d = dev_at(m, node, dev);
	if (!p || !d)
		return;
	pthread_mutex_lock(&m->lock);
	p->active = up;
	p->link_up = up;
	if (!up)
		for (mcc_fab_qp *q = d->qps; q; q = q->next_in_dev)
			if (q->lport == p && q->state == 1)
				qp_error(m, q, q->sq, IBV_WC_LOC_QP_OP_ERR);
	async_push(d, up ? IBV_EVENT_PORT_ACTIVE : IBV_EVENT_PORT_ERR, port, NULL, NULL);
	pthread_mutex_unlock(&m->lock);
}

/* Device (node, dev) with the model locked, or NULL (not locked). */
static struct mcc_fab_dev *dev_lock(struct mcc_fab_model *m, uint32_t node, uint32_t dev)
{
	struct mcc_fab_dev *d = dev_at(m, node, dev);
	if (d)
		pthread_mutex_lock(&m->lock);
	return d;
}

void mcc_fab_fault_cq(mcc_fab_model *m, uint32_t node, uint32_t dev)
{
	struct mcc_fab_dev *d = dev_lock(m, node, dev);
	if (!d)
		return;
	for (uint32_t i = 0; i < d->ncq; i++) {
		d->cqs[i]->errored = 1;
		async_push(d, IBV_EVENT_CQ_ERR, 0, NULL, d->cqs[i]);
	}
	pthread_mutex_unlock(&m->lock);
}

/* A QP event on the first connected QP of (node, dev) to (pn, pd); a
 * fatal one also errors the QP. */
static void fault_qp(struct mcc_fab_model *m, uint32_t node, uint32_t dev, uint32_t pn,
                     uint32_t pd, int32_t event)
{
	struct mcc_fab_dev *d = dev_lock(m, node, dev);
	if (!d)
		return;
	for (mcc_fab_qp *q = d->qps; q; q = q->next_in_dev)
		if (q->state == 1 && q->rport && q->rport->node == pn && q->rport->dev == pd) {
			async_push(d, event, q->lport->num, q, NULL);
			if (event == IBV_EVENT_QP_FATAL)
				qp_error(m, q, NULL, 0);
			break;
		}
	pthread_mutex_unlock(&m->lock);
}

void mcc_fab_fault_qp_fatal(mcc_fab_model *m, uint32_t node, uint32_t dev, uint32_t pn, uint32_t pd)
{
	fault_qp(m, node, dev, pn, pd, IBV_EVENT_QP_FATAL);
}

void mcc_fab_fault_path_mig(mcc_fab_model *m, uint32_t node, uint32_t dev, uint32_t pn, uint32_t pd)
{
	fault_qp(m, node, dev, pn, pd, IBV_EVENT_PATH_MIG_ERR);
}

void mcc_fab_fault_device(mcc_fab_model *m, uint32_t node, uint32_t dev)
{
	struct mcc_fab_dev *d = dev_lock(m, node, dev);
	if (!d)
		return;
	d->fatal = 1;
	for (mcc_fab_qp *q = d->qps; q; q = q->next_in_dev)
		if (q->state != 0)
			qp_error(m, q, NULL, 0);
	async_push(d, IBV_EVENT_DEVICE_FATAL, 0, NULL, NULL);
	pthread_mutex_unlock(&m->lock);
}

void mcc_fab_fault_rekey(mcc_fab_model *m, uint32_t node)
{
	pthread_mutex_lock(&m->lock);
	for (size_t i = 0; i < m->nmr; i++)
		if (m->mrs[i].live && m->mrs[i].node == node)
			m->mrs[i].rkey += 0x1000000u;
	pthread_mutex_unlock(&m->lock);
}

void mcc_fab_fault_slow_receiver(mcc_fab_model *m, uint32_t node, uint32_t dev, uint64_t rate,
                                 uint64_t burst)
{
	pthread_mutex_lock(&m->lock);
	for (uint32_t p = 1; p <= m->cfg.ports_per_dev; p++) {
		struct port *pt = port_at(m, node, dev, p);
		if (!pt)
			continue;
		pt->rx_rate_bps = rate;
		pt->rx_burst = burst;
		pt->rx_tokens = burst;
		pt->rx_last = m->now;
	}
	pthread_mutex_unlock(&m->lock);
}

uint32_t mcc_fab_model_lookup_rkey(mcc_fab_model *m, uint32_t node, uint32_t dev, const void *addr)
{
	uint32_t k = 0;
	pthread_mutex_lock(&m->lock);
	for (size_t i = 0; i < m->nmr; i++) {
		struct mr_ent *r = &m->mrs[i];
		if (r->live && r->node == node && r->dev == dev && (const char *)addr >= (char *)r->addr &&
		    (const char *)addr < (char *)r->addr + r->len)
			k = r->rkey;
	}
	pthread_mutex_unlock(&m->lock);
	return k;
}
