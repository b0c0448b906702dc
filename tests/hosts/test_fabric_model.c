/* SPDX-License-Identifier: MIT */
/*
 * test_fabric_model.c - the fabric model's timing: a work request starts
 * when it is posted, also after the model stood still (no events, its
 * executor actor parked) for longer than the WR takes.
 */
#include "../../host_stubs/fabric/model.h"
#include "../cu_driver.h"

#include <stdlib.h>

#define LEN 65536u

static uint64_t g_clock;

static uint64_t test_clock(void *arg)
{
	(void)arg;
	return g_clock;
}

struct side {
	mcc_fab_dev *dev;
	mcc_fab_cq *cq;
	mcc_fab_qp *qp;
	struct mcc_fab_mr mr;
	unsigned char *buf;
};

static void side_open(const struct mcc_fab_handle *h, uint32_t node, struct side *s)
{
	const struct mcc_fab_ops *o = h->ops;
	s->dev = o->open_device(h->fab, node, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s->dev);
	s->cq = o->create_cq(s->dev, 64, NULL, NULL, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s->cq);
	s->buf = calloc(1, LEN);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s->buf);
	CU_ASSERT_EQUAL_FATAL(o->reg_mr(s->dev, s->buf, LEN, &s->mr), 0);
	struct mcc_fab_qp_attr a = { .port_num = 1, .max_send_wr = 16, .timeout = 14,
		                     .retry_cnt = 7, .rnr_retry = 7, .min_rnr_timer = 12 };
	s->qp = o->create_qp(s->dev, s->cq, &a, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s->qp);
}

static void side_close(const struct mcc_fab_handle *h, struct side *s)
{
	const struct mcc_fab_ops *o = h->ops;
	o->destroy_qp(s->qp);
	o->dereg_mr(&s->mr);
	o->destroy_cq(s->cq);
	o->close_device(s->dev);
	free(s->buf);
}

/* Post one WRITE at g_clock and step the model (as its executor actor
 * would: at each event time it announces) until the WC is polled; returns
 * the WR's latency, post to WC. */
static uint64_t write_latency(mcc_fab_model *m, const struct mcc_fab_handle *h, struct side *a,
                              const struct side *b)
{
	const struct mcc_fab_ops *o = h->ops;
	struct mcc_fab_send_wr wr = { .wr_id = 1, .opcode = IBV_WR_RDMA_WRITE,
		                      .local_addr = (uint64_t)(uintptr_t)a->buf, .length = LEN,
		                      .lkey = a->mr.lkey,
		                      .remote_addr = (uint64_t)(uintptr_t)b->buf, .rkey = b->mr.rkey };
	struct mcc_fab_send_wr *bad = NULL;
	const uint64_t posted = g_clock;
	CU_ASSERT_EQUAL_FATAL(o->post_send(a->qp, &wr, &bad), 0);
	struct mcc_fab_wc wc = { 0 };
	/* the executor steps the model at the post's own time first */
	uint64_t next = mcc_fab_model_advance(m, g_clock);
	int polled = 0;
	for (int i = 0; i < 10000 && !(polled = o->poll_cq(a->cq, 1, &wc)); i++) {
		CU_ASSERT_NOT_EQUAL_FATAL(next, MCC_FAB_NEVER);
		g_clock = next;
		next = mcc_fab_model_advance(m, g_clock);
	}
	CU_ASSERT_EQUAL_FATAL(polled, 1);
	CU_ASSERT_EQUAL(wc.status, IBV_WC_SUCCESS);
	return g_clock - posted;
}

static void test_post_after_idle_starts_at_post(void)
{
	struct mcc_fab_model_cfg cfg;
	mcc_fab_model_cfg_defaults(&cfg);
	cfg.nodes = 2;
	cfg.devs_per_node = 1;
	cfg.ports_per_dev = 1;
	mcc_fab_model *m = mcc_fab_model_create(&cfg);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	mcc_fab_model_set_clock(m, test_clock, NULL);
	struct mcc_fab_handle h = mcc_fab_model_handle(m);
	struct side a, b;
	side_open(&h, 0, &a);
	side_open(&h, 1, &b);
	struct mcc_fab_addr ra, rb;
	CU_ASSERT_EQUAL_FATAL(h.ops->local_addr(a.qp, &ra), 0);
	CU_ASSERT_EQUAL_FATAL(h.ops->local_addr(b.qp, &rb), 0);
	CU_ASSERT_EQUAL_FATAL(h.ops->connect_qp(a.qp, &rb), 0);
	CU_ASSERT_EQUAL_FATAL(h.ops->connect_qp(b.qp, &ra), 0);

	g_clock = 1000;
	uint64_t first = write_latency(m, &h, &a, &b);
	/* 64 KiB at 25 Gb/s is about 21 us on the wire, twice (sender port,
	 * switch egress), plus three propagation delays */
	uint64_t wire = (uint64_t)LEN * 8 * 1000000000ull / cfg.link_bps;
	CU_ASSERT(first >= wire);
	/* 10 ms with nothing to do: the model's time stays at its last event;
	 * the next WR must not be on the wire before it was posted */
	g_clock += 10000000;
	uint64_t again = write_latency(m, &h, &a, &b);
	CU_ASSERT(again >= wire);
	CU_ASSERT(again + 200 >= first && again <= first + 200); /* per-hop jitter */

	side_close(&h, &a);
	side_close(&h, &b);
	mcc_fab_model_destroy(m);
}

MCC_CU_SUITE(t_init_fabric_model_tests, "fabric_model", NULL, NULL,
             test_post_after_idle_starts_at_post)

MCC_CU_MAIN(t_init_fabric_model_tests)
