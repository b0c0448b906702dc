/* SPDX-License-Identifier: MIT */
/*
 * test_scale.c - the control plane at cluster scale (modules/core/README.md
 * "Scale"): routes opened, found and closed in O(1) by a hash of their key,
 * registry names freed with their routes (kept while evidence names them),
 * domain_stats of one domain without a walk of the others.
 */
#include <CUnit/CUnit.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "cu_driver.h"
#include "harness.h"

static struct mcc_core *core_of(struct th *h)
{
	return h->ctx;
}

static mcc_route *open_route(struct th *h, mcc_device *dv, uint64_t id, const char *path)
{
	struct mcc_route_desc_v1 d = { sizeof(d), 1, 0, 1, id, path, 1000 + id };
	mcc_route *r = NULL;
	CU_ASSERT_EQUAL_FATAL(h->ops->route_open(h->ctx, dv, &d, &r), 0);
	return r;
}

/* Thousands of routes: every re-open of an open key finds the same handle,
 * a closed key opens a new one, and closing everything leaves no registry
 * name and no route in the table. */
static void test_many_routes_open_find_close(void)
{
	enum { N = 20000 };
	struct th *h = th_new(&mcc_test_aimd_v1, NULL);
	mcc_device *d0 = th_dev(h, 0), *d1 = th_dev(h, 1);
	mcc_route **r = calloc(2 * N, sizeof(*r));
	CU_ASSERT_FATAL(r != NULL);
	char path[64];
	for (uint64_t i = 0; i < N; i++) {
		snprintf(path, sizeof(path), "peer%llu", (unsigned long long)i);
		r[i] = open_route(h, d0, i, path);
		r[N + i] = open_route(h, d1, i, path); /* the same id on another device */
		CU_ASSERT_PTR_NOT_EQUAL(r[i], r[N + i]);
	}
	CU_ASSERT_EQUAL(core_of(h)->nroutes, 2 * N);
	CU_ASSERT_EQUAL(core_of(h)->reg_live, 2 * N);
	CU_ASSERT_EQUAL(((struct mcc_device *)d0)->nroutes, N);
	for (uint64_t i = 0; i < N; i += 97) /* open again: the same handle */
		CU_ASSERT_PTR_EQUAL(open_route(h, d0, i, NULL), r[i]);
	for (uint64_t i = 0; i < N; i += 97)
		h->ops->route_close(h->ctx, r[i]); /* drops the second open only */
	CU_ASSERT_EQUAL(core_of(h)->nroutes, 2 * N);
	for (uint64_t i = 0; i < 2 * N; i++)
		h->ops->route_close(h->ctx, r[i]);
	CU_ASSERT_EQUAL(core_of(h)->nroutes, 0);
	CU_ASSERT_EQUAL(core_of(h)->reg_live, 0);
	CU_ASSERT_EQUAL(((struct mcc_device *)d0)->nroutes, 0);
	CU_ASSERT_PTR_NULL(((struct mcc_device *)d0)->routes);
	/* a closed key opens a fresh handle and a fresh name */
	mcc_route *again = open_route(h, d0, 5, "again");
	CU_ASSERT_EQUAL(core_of(h)->reg_live, 1);
	CU_ASSERT_EQUAL(core_of(h)->nreg <= 2 * N, 1); /* names were reused, not leaked */
	h->ops->route_close(h->ctx, again);
	free(r);
	th_free(h);
}

/* A rebind moves the route to its new device's table key and list: it is
 * found there, counted there, and gone from the old device. */
static void test_rebind_moves_the_key(void)
{
	struct th *h = th_new(&mcc_test_aimd_v1, NULL);
	mcc_device *d0 = th_dev(h, 0), *d1 = th_dev(h, 1);
	mcc_route *r = open_route(h, d0, 7, "p7");
	CU_ASSERT_EQUAL(h->ops->route_rebind(h->ctx, r, d1, 2, 0), 0);
	CU_ASSERT_EQUAL(((struct mcc_device *)d0)->nroutes, 0);
	CU_ASSERT_EQUAL(((struct mcc_device *)d1)->nroutes, 1);
	CU_ASSERT_PTR_EQUAL(open_route(h, d1, 7, NULL), r);
	mcc_route *other = open_route(h, d0, 7, "p7 on d0"); /* a new route */
	CU_ASSERT_PTR_NOT_EQUAL(other, r);
	h->ops->route_close(h->ctx, other);
	h->ops->route_close(h->ctx, r);
	h->ops->route_close(h->ctx, r);
	CU_ASSERT_EQUAL(core_of(h)->nroutes, 0);
	th_free(h);
}

/* A route's name outlives the route while evidence names it: a task's
 * evidence still reports the path after the route is closed; freeing the
 * task's batch frees the name. */
static void test_name_lives_while_evidence_names_it(void)
{
	struct th *h = th_new(&mcc_test_aimd_v1, NULL);
	mcc_device *d = th_dev(h, 0);
	mcc_route *r = open_route(h, d, 3, "10.1.1.1@mlx5_0");
	th_tick(h);
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq(h, r, 64 * KiB, 1, 9, 1, 0, &p), MCC_ADMIT);
	th_wc(h, &p, IBV_WC_RETRY_EXC_ERR, 0); /* evidence on the task, naming the path */
	h->ops->route_close(h->ctx, r);
	CU_ASSERT_EQUAL(core_of(h)->reg_live, 1); /* kept for the evidence */
	struct mcc_task_detail_v1 q;
	th_query(h, 9, 1, MCC_TASKQ_FAILED, &q);
	CU_ASSERT_STRING_EQUAL(q.path, "10.1.1.1@mlx5_0");
	h->ops->batch_free(h->ctx, 9);
	CU_ASSERT_EQUAL(core_of(h)->reg_live, 0); /* the last holder let go */
	/* the freed entry serves the next route; the old task is gone */
	mcc_route *r2 = open_route(h, d, 4, "other");
	CU_ASSERT_EQUAL(th_query(h, 9, 1, 0, &q), MCC_TASK_UNKNOWN);
	CU_ASSERT_EQUAL(q.reason, MCC_REASON_NO_RECORD);
	h->ops->route_close(h->ctx, r2);
	th_free(h);
}

/* domain_stats of one domain adds only its own lane slots, pending pairs
 * and folded totals: with many other routes busy it reports exactly its
 * own admissions and completions. */
static void test_stats_of_one_domain_are_its_own(void)
{
	struct th *h = th_new(&mcc_test_aimd_v1, NULL);
	mcc_device *d = th_dev(h, 0);
	enum { N = 200 };
	mcc_route *r[N];
	for (int i = 0; i < N; i++)
		r[i] = open_route(h, d, (uint64_t)i, NULL);
	th_tick(h);
	for (int i = 0; i < N; i++) { /* route i: i + 1 pairs */
		for (int k = 0; k <= i; k++) {
			struct mcc_permit_v1 p = MCC_PERMIT_INIT;
			CU_ASSERT_EQUAL_FATAL(th_acq_simple(h, r[i], 4096, &p), MCC_ADMIT);
			if (k & 1)
				th_rel(h, &p, 4096, MCC_REL_NOT_POSTED);
			else
				th_wc(h, &p, IBV_WC_SUCCESS, 0);
		}
	}
	uint64_t admits = 0;
	for (int i = 0; i < N; i++) {
		struct mcc_domain_stats_v1 s = th_rs(h, r[i]);
		CU_ASSERT_EQUAL(s.admits, (uint64_t)i + 1);
		CU_ASSERT_EQUAL(s.completions, (uint64_t)i / 2 + 1);
		CU_ASSERT_EQUAL(s.completed_bytes, ((uint64_t)i / 2 + 1) * 4096);
		CU_ASSERT_EQUAL(s.inflight_bytes, 0);
		admits += s.admits;
	}
	CU_ASSERT_EQUAL(th_ds(h, d).admits, admits);
	th_tick(h); /* the same after a tick */
	CU_ASSERT_EQUAL(th_rs(h, r[N - 1]).admits, N);
	CU_ASSERT_EQUAL(th_ds(h, d).admits, admits);
	for (int i = 0; i < N; i++)
		h->ops->route_close(h->ctx, r[i]);
	th_free(h);
}

MCC_CU_SUITE(t_scale_tests, "policy_scale", NULL, NULL, test_many_routes_open_find_close,
             test_rebind_moves_the_key, test_name_lives_while_evidence_names_it,
             test_stats_of_one_domain_are_its_own)

MCC_CU_MAIN(t_scale_tests)
