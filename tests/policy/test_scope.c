/* SPDX-License-Identifier: MIT */
/*
 * test_scope.c - failure scope never widens beyond the RFC table, generation
 * fencing, and poller-stall suppression.
 */
#include <infiniband/verbs.h>
#include <stdbool.h>

#include "cu_driver.h"
#include "harness.h"

struct fix {
	struct th *h;
	mcc_device *d, *d2;
	mcc_route *r;      /* d, port 1, cq 5 */
	mcc_route *r_cq;   /* d, port 1, cq 6: same port, another CQ */
	mcc_route *r_port; /* d, port 2, cq 5: another port, same CQ id */
	mcc_route *o;      /* d2, same route id and peer as r */
};

static struct fix fx(void)
{
	static const struct th_rt rt[] = { { 0, 1, 1, 5 }, { 0, 2, 1, 6 }, { 0, 3, 2, 5 },
		                           { 1, 1, 1, 5 } };
	struct th *h = th_world(NULL, 2, rt, 4, true);
	return (struct fix){ h, h->devs[0], h->devs[1], h->routes[0], h->routes[1], h->routes[2],
		             h->routes[3] };
}

static bool healthy(struct th *h, mcc_route *r)
{
	struct mcc_domain_stats_v1 s = th_rs(h, r);
	return s.state == MCC_PATH_HEALTHY && s.hard_errors == 0 && s.window_bytes == 16 * MiB;
}

static bool dev_healthy(struct th *h, mcc_device *d)
{
	struct mcc_domain_stats_v1 s = th_ds(h, d);
	return s.state == MCC_PATH_HEALTHY && s.window_bytes == 16 * MiB && s.quarantines == 0;
}

enum { R = 1, R_CQ = 2, R_PORT = 4, O = 8 };

/* The scope evidence reached: the routes in `quarantined` (R, R_CQ,
 * R_PORT, O) and, when `dev`, device d are QUARANTINED; every other route
 * and device is untouched (HEALTHY at the max, no error counted). A failure
 * names the domain. */
static void check_scope(const struct fix *f, unsigned quarantined, bool dev)
{
	const struct {
		mcc_route *r;
		const char *name;
	} rt[] = { { f->r, "route r" }, { f->r_cq, "route r_cq" }, { f->r_port, "route r_port" },
		   { f->o, "route o" } };
	for (unsigned i = 0; i < 4; i++) {
		bool ok = quarantined & (1u << i) ? th_rstate(f->h, rt[i].r) == MCC_PATH_QUARANTINED
		                                  : healthy(f->h, rt[i].r);
		CU_assertImplementation(ok, __LINE__, rt[i].name, __FILE__, "", CU_FALSE);
	}
	CU_assertImplementation(dev ? th_dstate(f->h, f->d) == MCC_PATH_QUARANTINED
	                            : dev_healthy(f->h, f->d),
	                        __LINE__, "device d", __FILE__, "", CU_FALSE);
	CU_assertImplementation(dev_healthy(f->h, f->d2), __LINE__, "device d2", __FILE__, "",
	                        CU_FALSE);
}

static void errwc(struct th *h, mcc_route *r, int32_t st, uint32_t verr, uint32_t gen)
{
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq(h, r, 4096, gen, 0, 0, 0, &p), MCC_ADMIT);
	th_wc(h, &p, st, verr);
}

static void test_scope_route_evidence_stays_on_that_route(void)
{
	struct fix f = fx();
	for (int i = 0; i < 3; i++)
		errwc(f.h, f.r, IBV_WC_RETRY_EXC_ERR, 0, 1);
	th_tick(f.h);
	check_scope(&f, R, false);
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq_simple(f.h, f.r_cq, 4096, &p), MCC_ADMIT); /* same device */
	th_wc(f.h, &p, IBV_WC_SUCCESS, 0);
	th_free(f.h);
}

static void test_scope_port_evidence_only_on_routes_of_that_port(void)
{
	struct fix f = fx();
	th_async(f.h, IBV_EVENT_PORT_ERR, f.d, NULL, 1, 0, 0);
	check_scope(&f, R | R_CQ, false); /* not o: port 1 of another device */
	th_free(f.h);
}

static void test_scope_cq_evidence_only_on_routes_with_that_cq(void)
{
	struct fix f = fx();
	th_async(f.h, IBV_EVENT_CQ_ERR, f.d, NULL, 0, 5, 0);
	check_scope(&f, R | R_PORT, false); /* r_port: cq 5 too; not o: cq id 5 of another device */
	th_free(f.h);
}

static void test_scope_device_evidence_stays_local_never_remote(void)
{
	struct fix f = fx();
	th_async(f.h, IBV_EVENT_DEVICE_FATAL, f.d, NULL, 0, 0, 0);
	/* the peer (same route id, same remote) through d2 is untouched */
	check_scope(&f, R | R_CQ | R_PORT, true);
	/* a route opened on the isolated device avoids too */
	mcc_route *late = th_route(f.h, f.d, 9, 1, 9, 1);
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq_simple(f.h, late, 4096, &p), MCC_AVOID);
	CU_ASSERT_EQUAL(th_acq_simple(f.h, f.o, 4096, &p), MCC_ADMIT);
	th_wc(f.h, &p, IBV_WC_SUCCESS, 0);
	th_free(f.h);
}

static void test_scope_vendor_err_never_widens(void)
{
	struct fix f = fx();
	int32_t st[] = { IBV_WC_RETRY_EXC_ERR, IBV_WC_GENERAL_ERR, IBV_WC_FATAL_ERR };
	for (int i = 0; i < 3; i++)
		errwc(f.h, f.r, st[i], 0x8100u + (uint32_t)i, 1);
	for (int i = 0; i < 10; i++) {
		errwc(f.h, f.r_cq, IBV_WC_LOC_PROT_ERR, 0xffffffffu, 1);
		errwc(f.h, f.r_cq, IBV_WC_REM_ACCESS_ERR, 0x12345u, 1);
		errwc(f.h, f.r_cq, IBV_WC_WR_FLUSH_ERR, 0x81u, 1);
	}
	th_tick(f.h);
	check_scope(&f, R, false); /* r by its own threshold */
	th_free(f.h);
}

static void test_generation_stale_completion_settles_accounting_only(void)
{
	struct fix f = fx();
	struct mcc_permit_v1 p[5];
	for (int i = 0; i < 5; i++) {
		p[i] = (struct mcc_permit_v1)MCC_PERMIT_INIT;
		CU_ASSERT_EQUAL(th_acq(f.h, f.r, 8192, 1, 0, 0, 0, &p[i]), MCC_ADMIT);
	}
	th_sig(f.h, MCC_SIG_ENDPOINT_REBUILT, NULL, f.r, 0, 0, 2, 0, 0, 0);
	for (int i = 0; i < 5; i++)
		th_wc(f.h, &p[i], i == 4 ? IBV_WC_RNR_RETRY_EXC_ERR : IBV_WC_RETRY_EXC_ERR, 0);
	th_ticks(f.h, 2);
	struct mcc_domain_stats_v1 s = th_rs(f.h, f.r);
	CU_ASSERT_EQUAL(s.stale_feedback, 5);
	CU_ASSERT_EQUAL(s.inflight_bytes, 0); /* accounting settled */
	CU_ASSERT_EQUAL(s.state, MCC_PATH_HEALTHY);
	CU_ASSERT_EQUAL(s.hard_errors, 0);
	CU_ASSERT_EQUAL(s.window_bytes, 16 * MiB);
	th_free(f.h);
}

static void test_generation_stale_feedback_cannot_overwrite_newer_task_evidence(void)
{
	struct fix f = fx();
	struct mcc_permit_v1 old = MCC_PERMIT_INIT, cur = MCC_PERMIT_INIT, old2 = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 8192, 1, 30, 1, 0, &old), MCC_ADMIT);
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 8192, 1, 30, 1, 0, &old2), MCC_ADMIT);
	/* the replacement attempt on generation 2 times out */
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 8192, 2, 30, 1, 1, &cur), MCC_ADMIT);
	th_wc(f.h, &cur, IBV_WC_RETRY_EXC_ERR, 0);
	/* late feedback of the first attempt: a local error and a success */
	th_wc(f.h, &old, IBV_WC_LOC_LEN_ERR, 0);
	th_wc(f.h, &old2, IBV_WC_SUCCESS, 0);
	th_tick(f.h);
	struct mcc_task_detail_v1 d;
	CU_ASSERT_EQUAL(th_query(f.h, 30, 1, 0, &d), MCC_TASK_CONGESTED);
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_ROUTE_TIMEOUT);
	CU_ASSERT_EQUAL(d.generation, 2);
	CU_ASSERT_EQUAL(d.attempt, 1);
	CU_ASSERT_EQUAL(d.resolved, 0);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).stale_feedback, 2);
	th_free(f.h);
}

static void test_generation_stale_async_event_and_signal_ignored(void)
{
	struct fix f = fx();
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 4096, 3, 0, 0, 0, &p), MCC_ADMIT); /* raises to 3 */
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).generation, 3);
	th_async(f.h, IBV_EVENT_QP_FATAL, f.d, f.r, 1, 5, 2); /* replaced QP */
	th_sig(f.h, MCC_SIG_CM_EVENT, f.d, f.r, 31, 1, 2, MCC_RDMA_CM_EVENT_DISCONNECTED, 0, 0);
	CU_ASSERT(healthy(f.h, f.r));
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).stale_feedback, 2);
	CU_ASSERT_EQUAL(th_query(f.h, 31, 1, 0, NULL), MCC_TASK_UNKNOWN);
	th_async(f.h, IBV_EVENT_QP_FATAL, f.d, f.r, 1, 5, 3); /* the current QP */
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_SUSPECT);
	th_wc(f.h, &p, IBV_WC_SUCCESS, 0);
	th_free(f.h);
}

static void test_poller_stall_suppresses_deadline_only_for_that_device(void)
{
	struct fix f = fx();
	th_progress(f.h, f.d2); /* only d2's poller runs this epoch */
	th_sig(f.h, MCC_SIG_SOFT_DEADLINE, f.d, f.r, 32, 1, 1, 0, 0, 0);
	th_sig(f.h, MCC_SIG_SOFT_DEADLINE, f.d2, f.o, 32, 2, 1, 0, 0, 0);
	th_tick(f.h);
	CU_ASSERT(healthy(f.h, f.r));
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).suppressed_deadlines, 1);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.o), MCC_PATH_SUSPECT);
	CU_ASSERT_EQUAL(th_rs(f.h, f.o).suppressed_deadlines, 0);
	/* the device is derived from the route when the signal names none */
	th_sig(f.h, MCC_SIG_SOFT_DEADLINE, NULL, f.r, 32, 3, 1, 0, 0, 0);
	th_progress(f.h, f.d);
	th_tick(f.h);
	CU_ASSERT_EQUAL(th_rstate(f.h, f.r), MCC_PATH_SUSPECT);
	th_free(f.h);
}

static void test_try_acquire_raises_route_generation(void)
{
	struct fix f = fx();
	struct mcc_permit_v1 p = MCC_PERMIT_INIT, q = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 4096, 7, 0, 0, 0, &p), MCC_ADMIT);
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).generation, 7);
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 4096, 5, 0, 0, 0, &q), MCC_ADMIT); /* old: accounting */
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).generation, 7);
	th_wc(f.h, &q, IBV_WC_RETRY_EXC_ERR, 0);
	th_wc(f.h, &p, IBV_WC_SUCCESS, 0);
	th_tick(f.h);
	CU_ASSERT(healthy(f.h, f.r));
	CU_ASSERT_EQUAL(th_rs(f.h, f.r).stale_feedback, 1);
	th_free(f.h);
}

MCC_CU_SUITE(t_init_scope_tests, "policy_scope", NULL, NULL,
             test_scope_route_evidence_stays_on_that_route,
             test_scope_port_evidence_only_on_routes_of_that_port,
             test_scope_cq_evidence_only_on_routes_with_that_cq,
             test_scope_device_evidence_stays_local_never_remote,
             test_scope_vendor_err_never_widens,
             test_generation_stale_completion_settles_accounting_only,
             test_generation_stale_feedback_cannot_overwrite_newer_task_evidence,
             test_generation_stale_async_event_and_signal_ignored,
             test_poller_stall_suppresses_deadline_only_for_that_device,
             test_try_acquire_raises_route_generation)

MCC_CU_MAIN(t_init_scope_tests)
