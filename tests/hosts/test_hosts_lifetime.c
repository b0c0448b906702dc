/* SPDX-License-Identifier: MIT */
/*
 * test_hosts_lifetime.c - endpoint lifetime in the TE and TENT hosts
 * (issue 14): a poller that uses an endpoint after giving back its last
 * depth must hold it against the monitor, which frees a retired endpoint
 * once every depth is 0 and no reference is held.
 *
 * The race is made deterministic with a seam in the fabric ops (a wrapper
 * over the model's table, as the fabric tap does) under the threaded
 * executor: at the poller's use of the endpoint the seam blocks the
 * poller until the monitor thread has completed a whole pass (seen as two
 * more get_async_event calls), so the monitor's free, if it may happen,
 * has happened. A QP of that endpoint destroyed meanwhile is the bug
 * (under --enable-asan the poller's next access is also a
 * heap-use-after-free report). The wait is bounded (5 s) only so that a
 * monitor that never runs cannot hang the test; nothing asserts on time.
 *
 *   TE    one WR into a silent blackhole (no link event), no retry: its
 *         RETRY_EXC WC takes the poller into deleteEndpoint, which retires
 *         the endpoint and drops the route lock before resetting the QPs;
 *         the seam is that reset.
 *   TENT  one WR into a blackhole, then QP_FATAL: the monitor retires the
 *         endpoint, the WR flushes, the lane gives back the depth and,
 *         with no retry left, fails the task (the completion callback is
 *         the seam) before it resets the endpoint itself.
 */
#include "../../host_stubs/common/hostenv.h"
#include "../../host_stubs/fabric/model.h"
#include "../../host_stubs/sim/exec.h"
#include "../../host_stubs/te/te.h"
#include "../../host_stubs/tent/tent.h"
#include "../cu_driver.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MSG 4096u

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static struct {
	const struct mcc_fab_ops *inner;
	struct mcc_fab_ops ops;
	uint64_t async_calls;  /* monitor passes (each calls get_async_event) */
	int gating;            /* a poller is held in the seam */
	uint32_t destroyed;    /* QPs destroyed while it was held */
	int gate_reset;        /* TE: hold the first reset_qp */
	int gates;             /* seams entered */
	int monitor_ran;       /* the monitor completed a pass in every seam */
} g;

/* Hold the calling poller until the monitor completed a pass. */
static void seam(void)
{
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 5;
	pthread_mutex_lock(&g_mu);
	uint64_t start = g.async_calls;
	g.gating = 1;
	g.gates++;
	int rc = 0;
	while (g.async_calls < start + 2 && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&g_cv, &g_mu, &dl);
	g.monitor_ran &= g.async_calls >= start + 2;
	g.gating = 0;
	pthread_mutex_unlock(&g_mu);
}

static int w_get_async_event(mcc_fab_dev *dev, struct mcc_fab_async_event *ev)
{
	pthread_mutex_lock(&g_mu);
	g.async_calls++;
	pthread_cond_broadcast(&g_cv);
	pthread_mutex_unlock(&g_mu);
	return g.inner->get_async_event(dev, ev);
}

static int w_destroy_qp(mcc_fab_qp *qp)
{
	pthread_mutex_lock(&g_mu);
	g.destroyed += g.gating;
	pthread_mutex_unlock(&g_mu);
	return g.inner->destroy_qp(qp);
}

static int w_reset_qp(mcc_fab_qp *qp)
{
	pthread_mutex_lock(&g_mu);
	int gate = g.gate_reset;
	g.gate_reset = 0;
	pthread_mutex_unlock(&g_mu);
	if (gate)
		seam();
	pthread_mutex_lock(&g_mu);
	uint32_t gone = g.destroyed;
	pthread_mutex_unlock(&g_mu);
	if (gone) /* the endpoint was freed under the poller: do not touch the QP */
		return 0;
	return g.inner->reset_qp(qp);
}

struct world {
	int tent;
	struct mcc_host_pair p; /* node 0 writes to node 1 */
	te_engine *te;
	tent_engine *tn;
	uint64_t batch;
	mcc_actor *app;
	int phase; /* 0 submit, 1 wait posted (TENT: then QP_FATAL), 2 wait done */
	_Atomic int finished;
	int status;
};

static void on_done(void *arg, uint64_t batch, uint64_t task)
{
	struct world *w = arg;
	(void)batch;
	(void)task;
	if (w->tent) /* TENT: the lane is between its depth and its endpoint */
		seam();
	atomic_store(&w->finished, 1);
	mcc_exec_wake(w->app, mcc_exec_now(w->p.ex));
}

static uint64_t app_step(void *arg, uint64_t now)
{
	struct world *w = arg;
	if (w->phase == 0) {
		if (!w->tent) {
			w->batch = te_allocate_batch(w->te, 1);
			struct te_request rq = {TE_OPCODE_WRITE, w->p.src, 1, 0, MSG};
			CU_ASSERT_EQUAL(te_submit(w->te, w->batch, &rq, 1), 0);
		} else {
			w->batch = tent_allocate_batch(w->tn, 1);
			tent_request_t rq = {
			        .opcode = TENT_OPCODE_WRITE, .source = w->p.src, .target_id = 1, .length = MSG};
			CU_ASSERT_EQUAL(tent_submit(w->tn, w->batch, &rq, 1), 0);
		}
		w->phase = 1;
	}
	if (w->phase == 1 && w->tent) {
		struct tent_stats st;
		tent_get_stats(w->tn, &st);
		if (!st.slices_posted)
			return now + 100000;
		mcc_fab_fault_qp_fatal(w->p.model, 0, 0, 1, 0);
		w->phase = 2;
	}
	return atomic_load(&w->finished) ? MCC_EXEC_PARK : now + 1000000;
}

static int finished(void *arg)
{
	struct world *w = arg;
	return atomic_load(&w->finished);
}

static void run_world(int tent)
{
	struct world *w = calloc(1, sizeof(*w));
	CU_ASSERT_PTR_NOT_NULL_FATAL(w);
	w->tent = tent;
	struct mcc_fab_model_cfg mcfg;
	mcc_fab_model_cfg_defaults(&mcfg);
	mcfg.devs_per_node = 1;
	CU_ASSERT_EQUAL_FATAL(mcc_host_pair_init(&w->p, MCC_EXEC_THREADED, 1, &mcfg, MSG), 0);
	/* the seam over the model's ops */
	g.inner = w->p.env.fab.ops;
	g.ops = *g.inner;
	g.ops.get_async_event = w_get_async_event;
	g.ops.destroy_qp = w_destroy_qp;
	g.ops.reset_qp = w_reset_qp;
	g.destroyed = 0;
	g.gates = 0;
	g.monitor_ran = 1;
	g.gate_reset = !tent;
	w->p.env.fab.ops = &g.ops;
	w->p.env.cc_ignore_env = 1; /* no ini: the controller is off */
	/* the silent blackhole: the peer's link drops everything, no event */
	mcc_fab_fault_link(w->p.model, 1, 0, 1, 0);
	if (!tent) {
		struct te_config c;
		te_config_defaults(&c);
		c.node = 0;
		c.retry_cnt = 1;    /* the first error fails the slice */
		c.ib_timeout = 4;   /* 65 us ACK timeout ... */
		c.ib_retry_cnt = 0; /* ... and no retransmission: RETRY_EXC at once */
		w->te = te_engine_create(&c, &w->p.env);
		CU_ASSERT_PTR_NOT_NULL_FATAL(w->te);
		te_set_task_notify(w->te, on_done, w);
		te_register_memory(w->te, w->p.src, MSG);
	} else {
		struct tent_config c;
		tent_config_defaults(&c);
		c.node = 0;
		c.num_lanes = 1;
		c.max_retry_count = 1; /* the flushed WR fails its slice */
		c.ib_timeout = 24;     /* no RETRY_EXC before the QP_FATAL */
		w->tn = tent_engine_create(&c, &w->p.env);
		CU_ASSERT_PTR_NOT_NULL_FATAL(w->tn);
		tent_set_task_notify(w->tn, on_done, w);
		tent_register_memory(w->tn, w->p.src, MSG);
	}
	w->app = mcc_exec_add(w->p.ex, "app", app_step, w, 1000);
	mcc_exec_run(w->p.ex, 60000000000ull, finished, w);

	printf("(%s: seams %d, monitor pass in each %d, QPs destroyed under the poller %u) ",
	       tent ? "tent" : "te", g.gates, g.monitor_ran, g.destroyed);
	CU_ASSERT(atomic_load(&w->finished));
	CU_ASSERT_EQUAL(g.gates, 1);
	CU_ASSERT(g.monitor_ran); /* the monitor had its chance */
	CU_ASSERT_EQUAL(g.destroyed, 0);
	if (!tent) {
		struct te_transfer_status st = {0, 0};
		te_get_transfer_status(w->te, w->batch, 0, &st);
		CU_ASSERT_EQUAL(st.status, TE_STATUS_FAILED); /* no retry: it fails */
		CU_ASSERT_EQUAL(te_free_batch(w->te, w->batch), 0);
		te_engine_destroy(w->te);
	} else {
		tent_status_t st = {0, 0};
		tent_task_status(w->tn, w->batch, 0, &st);
		CU_ASSERT_EQUAL(st.status, TENT_STATUS_FAILED);
		CU_ASSERT_EQUAL(tent_free_batch(w->tn, w->batch), 0);
		tent_engine_destroy(w->tn);
	}
	mcc_host_pair_fini(&w->p);
	free(w);
}

static void test_te_poller_holds_endpoint_across_delete(void)
{
	run_world(0);
}

static void test_tent_lane_holds_endpoint_across_reset(void)
{
	run_world(1);
}

MCC_CU_SUITE(t_init_hosts_lifetime_tests, "hosts_lifetime", NULL, NULL,
             test_te_poller_holds_endpoint_across_delete,
             test_tent_lane_holds_endpoint_across_reset)

MCC_CU_MAIN(t_init_hosts_lifetime_tests)
