/* SPDX-License-Identifier: MIT */
/*
 * test_evidence.c - caller observability: minimal and detailed task queries,
 * projection rules, resolution, bounded retention, batch_free.
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stddef.h>
#include <string.h>

#include "classify.h"
#include "cu_driver.h"
#include "harness.h"

struct fix {
	struct th *h;
	mcc_device *d, *d2;
	mcc_route *r, *r2; /* r on d, r2 on d2 */
};

static struct fix fx(const struct mcc_config_v1 *cfg)
{
	static const struct th_rt rt[] = { { 0, 1, 1, 5 }, { 1, 2, 1, 6 } };
	struct th *h = th_world(cfg, 2, rt, 2, false);
	return (struct fix){ h, h->devs[0], h->devs[1], h->routes[0], h->routes[1] };
}

/* A window of one 64 KiB slice, held by a filler permit on r: any further
 * acquire on r (or another route of d) defers, refused by the device domain
 * first (every route's bytes count in it). */
static struct mcc_config_v1 one_slice(void)
{
	struct mcc_config_v1 c = th_cfg();
	c.min_window_bytes = c.max_window_bytes = 64 * KiB;
	return c;
}

/* The fixture on a one_slice() config (c NULL) or `c`, its window held by
 * *filler. */
static struct fix fx_full(const struct mcc_config_v1 *c, struct mcc_permit_v1 *filler)
{
	struct mcc_config_v1 one = one_slice();
	struct fix f = fx(c ? c : &one);
	*filler = (struct mcc_permit_v1)MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL_FATAL(th_acq(f.h, f.r, 64 * KiB, 1, 0, 0, 0, filler), MCC_ADMIT);
	return f;
}

static void defer(struct th *h, mcc_route *r, uint64_t b, uint64_t t, uint32_t attempt)
{
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq(h, r, 64 * KiB, 1, b, t, attempt, &p), MCC_DEFER);
}

static void avoid(struct th *h, mcc_route *r, uint64_t b, uint64_t t, uint32_t attempt)
{
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq(h, r, 4096, 1, b, t, attempt, &p), MCC_AVOID);
}

static void success(struct th *h, mcc_route *r, uint64_t b, uint64_t t, uint32_t attempt)
{
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq(h, r, 4096, h->gen, b, t, attempt, &p), MCC_ADMIT);
	th_wc(h, &p, IBV_WC_SUCCESS, 0);
}

/* fx_full's end: the filler completes, the harness is freed. */
static void fx_full_free(struct fix f, struct mcc_permit_v1 *filler)
{
	th_wc(f.h, filler, IBV_WC_SUCCESS, 0);
	th_free(f.h);
}

/* The fixture with r quarantined and task (batch, 1) AVOIDed on it: the
 * task reads LONG_UNAVAILABLE. */
static struct fix fx_avoided(uint64_t batch)
{
	struct fix f = fx(NULL);
	th_quarantine_route(f.h, f.r, 1);
	avoid(f.h, f.r, batch, 1, 0);
	CU_ASSERT_EQUAL(th_query(f.h, batch, 1, 0, NULL), MCC_TASK_LONG_UNAVAILABLE);
	return f;
}

static void test_query_no_evidence_is_unknown_unless_host_saw_success(void)
{
	struct fix f = fx(NULL);
	CU_ASSERT_EQUAL(th_query(f.h, 1, 1, 0, NULL), MCC_TASK_UNKNOWN);
	CU_ASSERT_EQUAL(th_query(f.h, 1, 1, MCC_TASKQ_FINISHED, NULL), MCC_TASK_UNKNOWN);
	CU_ASSERT_EQUAL(th_query(f.h, 1, 1, MCC_TASKQ_SEEN_SUCCESS, NULL), MCC_TASK_NORMAL);
	struct mcc_task_detail_v1 d;
	CU_ASSERT_EQUAL(th_query(f.h, 1, 1, MCC_TASKQ_SEEN_SUCCESS, &d), MCC_TASK_NORMAL);
	CU_ASSERT_EQUAL(d.state, MCC_TASK_NORMAL);
	/* no record of the task: the state is the host's fact, and only the
	 * reason (NO_RECORD) is observed */
	CU_ASSERT_EQUAL(d.observed, MCC_OBS_REASON);
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_NO_RECORD);
	CU_ASSERT_EQUAL(d.route_id, 0);
	/* plain successes leave no evidence behind (cheap success path) */
	success(f.h, f.r, 1, 2, 0);
	CU_ASSERT_EQUAL(th_query(f.h, 1, 2, 0, NULL), MCC_TASK_UNKNOWN);
	CU_ASSERT_EQUAL(th_query(f.h, 1, 2, MCC_TASKQ_SEEN_SUCCESS, NULL), MCC_TASK_NORMAL);
	th_free(f.h);
}

static void test_query_unsupported_transport_is_unknown(void)
{
	struct mcc_permit_v1 filler;
	struct fix f = fx_full(NULL, &filler);
	defer(f.h, f.r, 2, 1, 0);
	CU_ASSERT_EQUAL(th_query(f.h, 2, 1, 0, NULL), MCC_TASK_CONGESTED);
	struct mcc_task_detail_v1 d;
	CU_ASSERT_EQUAL(th_query(f.h, 2, 1, MCC_TASKQ_UNSUPPORTED | MCC_TASKQ_SEEN_SUCCESS, &d),
	                MCC_TASK_UNKNOWN);
	CU_ASSERT_EQUAL(d.observed, 0);
	struct mcc_task_ref_v1 t = { 2, 1, 0, 0 };
	CU_ASSERT_EQUAL(f.h->ops->task_query(f.h->ctx, NULL, 0, NULL), -EINVAL);
	CU_ASSERT_EQUAL(f.h->ops->task_query(f.h->ctx, &t, 0, NULL), MCC_TASK_CONGESTED);
	fx_full_free(f, &filler);
}

static void test_query_detail_fills_observed_fields_only(void)
{
	struct mcc_config_v1 c = one_slice();
	struct fix f = fx(&c);
	th_tick(f.h);
	uint64_t tick_ns = f.h->now;
	struct mcc_permit_v1 filler = MCC_PERMIT_INIT, p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 64 * KiB, 1, 0, 0, 0, &filler), MCC_ADMIT);
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 64 * KiB, 1, 3, 4, 2, &p), MCC_DEFER);
	struct mcc_task_detail_v1 d;
	CU_ASSERT_EQUAL(th_query(f.h, 3, 4, 0, &d), MCC_TASK_CONGESTED);
	CU_ASSERT_EQUAL(d.state, MCC_TASK_CONGESTED);
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_BYTE_WINDOW);
	CU_ASSERT_EQUAL(d.scope, MCC_SCOPE_DEVICE); /* the device window refused */
	CU_ASSERT_EQUAL(d.resolved, 0);
	CU_ASSERT_EQUAL(d.route_id, 1);
	CU_ASSERT_STRING_EQUAL(d.path, "10.0.0.1:12345@mlx5_1");
	CU_ASSERT_EQUAL(d.observed_ns, tick_ns); /* epoch time: no clock on the hot path */
	CU_ASSERT_EQUAL(d.attempt, 2);
	CU_ASSERT_EQUAL(d.generation, 1);
	CU_ASSERT_EQUAL(d.window_bytes, 64 * KiB);
	CU_ASSERT_EQUAL(d.inflight_bytes, 64 * KiB);
	CU_ASSERT_EQUAL(d.path_state, MCC_PATH_HEALTHY);
	uint32_t want = MCC_OBS_REASON | MCC_OBS_SCOPE | MCC_OBS_PATH | MCC_OBS_TIME |
	                MCC_OBS_GENERATION | MCC_OBS_WINDOW | MCC_OBS_INFLIGHT;
	CU_ASSERT_EQUAL(d.observed, want); /* no WC, no cooldown: unobserved */
	CU_ASSERT_EQUAL(d.struct_size, sizeof(d));
	/* a WC error observes the WC fields and its own timestamp */
	struct mcc_permit_v1 q = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq(f.h, f.r2, 4096, 1, 3, 5, 0, &q), MCC_ADMIT);
	struct mcc_completion_v1 wc = { sizeof(wc), IBV_WC_RNR_RETRY_EXC_ERR, 17, 1, 4096,
		                        f.h->now + 10, f.h->now + 20, 0, 0 };
	f.h->ops->on_completion(f.h->lane, &q, &wc);
	CU_ASSERT_EQUAL(th_query(f.h, 3, 5, 0, &d), MCC_TASK_CONGESTED);
	CU_ASSERT(d.observed & MCC_OBS_WC);
	CU_ASSERT_EQUAL(d.observed_ns, f.h->now + 20);
	CU_ASSERT_EQUAL(d.vendor_err, 17);
	CU_ASSERT_EQUAL(d.scope, MCC_SCOPE_QP);
	fx_full_free(f, &filler);
}

static void test_query_most_severe_unresolved_state_wins(void)
{
	struct mcc_permit_v1 filler;
	struct fix f = fx_full(NULL, &filler);
	/* slice A of task (4,1) deferred on r; slice B avoided on a quarantined r2 */
	defer(f.h, f.r, 4, 1, 0);
	th_async(f.h, IBV_EVENT_QP_FATAL, f.d2, f.r2, 1, 6, 1);
	th_async(f.h, IBV_EVENT_QP_FATAL, f.d2, f.r2, 1, 6, 1);
	th_async(f.h, IBV_EVENT_QP_FATAL, f.d2, f.r2, 1, 6, 1);
	avoid(f.h, f.r2, 4, 1, 0);
	struct mcc_task_detail_v1 d;
	CU_ASSERT_EQUAL(th_query(f.h, 4, 1, 0, &d), MCC_TASK_LONG_UNAVAILABLE);
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_PATH_QUARANTINED);
	CU_ASSERT_EQUAL(d.route_id, 2);
	/* r2 recovers through its probe: the long unavailability resolves, the
	 * deferral on r is still unresolved */
	th_cooldown(f.h, f.r2);
	th_probe_pass(f.h, f.r2, 2);
	CU_ASSERT(th_rstate(f.h, f.r2) <= MCC_PATH_CONGESTED); /* recovered */
	CU_ASSERT_EQUAL(th_query(f.h, 4, 1, 0, &d), MCC_TASK_CONGESTED);
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_BYTE_WINDOW);
	/* and a later success resolves the rest */
	th_wc(f.h, &filler, IBV_WC_SUCCESS, 0);
	success(f.h, f.r, 4, 1, 0);
	CU_ASSERT_EQUAL(th_query(f.h, 4, 1, 0, &d), MCC_TASK_NORMAL);
	CU_ASSERT_EQUAL(d.resolved, 1);
	th_free(f.h);
}

static void test_query_path_recovery_clears_blocking_evidence(void)
{
	struct fix f = fx_avoided(5);
	th_cooldown(f.h, f.r);
	th_probe_pass(f.h, f.r, 2);
	struct mcc_task_detail_v1 d;
	/* resolved; the task itself has not completed anything yet */
	CU_ASSERT_EQUAL(th_query(f.h, 5, 1, 0, &d), MCC_TASK_UNKNOWN);
	CU_ASSERT_EQUAL(d.resolved, 1);
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_PATH_QUARANTINED);
	CU_ASSERT_EQUAL(th_query(f.h, 5, 1, MCC_TASKQ_SEEN_SUCCESS, NULL), MCC_TASK_NORMAL);
	th_free(f.h);
}

static void test_query_new_successful_attempt_clears_old_evidence(void)
{
	struct fix f = fx_avoided(6);
	success(f.h, f.r2, 6, 1, 1); /* retried on another rail */
	CU_ASSERT_EQUAL(th_query(f.h, 6, 1, 0, NULL), MCC_TASK_NORMAL);
	th_free(f.h);
}

/* A success of an older attempt, completing after newer evidence: an error
 * completion of the newer attempt (slice-bound) stays unresolved; LONG_
 * UNAVAILABLE does not, since a slice of the task completed after it (the
 * task has a usable path: LONG_UNAVAILABLE means it has none now). */
static void test_query_success_of_older_attempt_keeps_newer_evidence(void)
{
	struct fix f = fx(NULL);
	struct mcc_permit_v1 old = MCC_PERMIT_INIT, p = MCC_PERMIT_INIT;
	struct mcc_task_detail_v1 d;
	CU_ASSERT_EQUAL(th_acq(f.h, f.r2, 4096, 1, 7, 1, 0, &old), MCC_ADMIT);
	CU_ASSERT_EQUAL(th_acq(f.h, f.r2, 4096, 1, 7, 1, 2, &p), MCC_ADMIT); /* attempt 2 */
	th_wc(f.h, &p, IBV_WC_RETRY_EXC_ERR, 0);
	th_wc(f.h, &old, IBV_WC_SUCCESS, 0); /* attempt 0 completes late */
	CU_ASSERT_EQUAL(th_query(f.h, 7, 1, 0, &d), MCC_TASK_CONGESTED);
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_ROUTE_TIMEOUT);
	CU_ASSERT_EQUAL(d.resolved, 0);
	/* LONG_UNAVAILABLE of attempt 2, then the late success of attempt 0 */
	CU_ASSERT_EQUAL(th_acq(f.h, f.r2, 4096, 1, 8, 1, 0, &old), MCC_ADMIT);
	th_quarantine_route(f.h, f.r, 1);
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 4096, 1, 8, 1, 2, &p), MCC_AVOID);
	CU_ASSERT_EQUAL(th_query(f.h, 8, 1, 0, NULL), MCC_TASK_LONG_UNAVAILABLE);
	th_wc(f.h, &old, IBV_WC_SUCCESS, 0);
	CU_ASSERT_EQUAL(th_query(f.h, 8, 1, 0, &d), MCC_TASK_NORMAL);
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_PATH_QUARANTINED);
	CU_ASSERT_EQUAL(d.resolved, 1);
	th_free(f.h);
}

static void fill_tasks(struct th *h, mcc_route *r, uint64_t first, uint64_t n)
{
	for (uint64_t t = first; t < first + n; t++)
		defer(h, r, 8, t, 0);
}

/* fx_full with room for 4 tasks' evidence, all taken: tasks 1-4 of batch
 * 8 deferred on r. */
static struct fix fx_bounded(struct mcc_permit_v1 *filler)
{
	struct mcc_config_v1 c = one_slice();
	c.evidence_tasks = 4;
	struct fix f = fx_full(&c, filler);
	fill_tasks(f.h, f.r, 1, 4);
	return f;
}

static void test_evidence_bounded_evicts_oldest_resolved_first(void)
{
	struct mcc_permit_v1 filler;
	struct fix f = fx_bounded(&filler);
	success(f.h, f.r2, 8, 3, 0); /* resolve task 3 */
	success(f.h, f.r2, 8, 2, 0); /* then task 2 */
	CU_ASSERT_EQUAL(th_query(f.h, 8, 3, 0, NULL), MCC_TASK_NORMAL);
	fill_tasks(f.h, f.r, 5, 1); /* full: evicts the oldest resolved (3) */
	CU_ASSERT_EQUAL(th_query(f.h, 8, 3, 0, NULL), MCC_TASK_UNKNOWN); /* gone */
	CU_ASSERT_EQUAL(th_query(f.h, 8, 2, 0, NULL), MCC_TASK_NORMAL);
	CU_ASSERT_EQUAL(th_query(f.h, 8, 1, 0, NULL), MCC_TASK_CONGESTED);
	CU_ASSERT_EQUAL(th_query(f.h, 8, 4, 0, NULL), MCC_TASK_CONGESTED);
	CU_ASSERT_EQUAL(th_query(f.h, 8, 5, 0, NULL), MCC_TASK_CONGESTED);
	fx_full_free(f, &filler);
}

static void test_evidence_bounded_evicts_oldest_when_none_resolved(void)
{
	struct mcc_permit_v1 filler;
	struct fix f = fx_bounded(&filler);
	th_tick(f.h); /* applied in order */
	fill_tasks(f.h, f.r, 5, 2);
	CU_ASSERT_EQUAL(th_query(f.h, 8, 1, 0, NULL), MCC_TASK_UNKNOWN);
	CU_ASSERT_EQUAL(th_query(f.h, 8, 2, 0, NULL), MCC_TASK_UNKNOWN);
	for (uint64_t t = 3; t <= 6; t++)
		CU_ASSERT_EQUAL(th_query(f.h, 8, t, 0, NULL), MCC_TASK_CONGESTED);
	fx_full_free(f, &filler);
}

static void test_batch_free_drops_the_batch_evidence_only(void)
{
	struct mcc_permit_v1 filler;
	struct fix f = fx_full(NULL, &filler);
	for (uint64_t t = 1; t <= 50; t++) {
		defer(f.h, f.r, 100, t, 0);
		defer(f.h, f.r, 200, t, 0);
	}
	f.h->ops->batch_free(f.h->ctx, 100);
	for (uint64_t t = 1; t <= 50; t++) {
		CU_ASSERT_EQUAL(th_query(f.h, 100, t, 0, NULL), MCC_TASK_UNKNOWN);
		CU_ASSERT_EQUAL(th_query(f.h, 200, t, 0, NULL), MCC_TASK_CONGESTED);
	}
	f.h->ops->batch_free(f.h->ctx, 200);
	f.h->ops->batch_free(f.h->ctx, 999); /* unknown batch: nothing */
	CU_ASSERT_EQUAL(th_query(f.h, 200, 7, 0, NULL), MCC_TASK_UNKNOWN);
	/* a freed table refills */
	defer(f.h, f.r, 100, 1, 0);
	CU_ASSERT_EQUAL(th_query(f.h, 100, 1, 0, NULL), MCC_TASK_CONGESTED);
	fx_full_free(f, &filler);
}

/* A detail shorter than its v1.0 size is refused whole (nothing written);
 * a larger one (a later minor) keeps its tail. */
static void test_query_respects_caller_struct_size(void)
{
	struct mcc_permit_v1 filler;
	struct fix f = fx_full(NULL, &filler);
	defer(f.h, f.r, 9, 1, 0);
	struct mcc_task_detail_v1 d;
	memset(&d, 0xAA, sizeof(d));
	d.struct_size = (uint32_t)offsetof(struct mcc_task_detail_v1, scope);
	struct mcc_task_ref_v1 t = { 9, 1, 0, 0 };
	CU_ASSERT_EQUAL(f.h->ops->task_query(f.h->ctx, &t, 0, &d), -EINVAL);
	CU_ASSERT_EQUAL(d.state, 0xAAAAAAAAu); /* refused: untouched */
	CU_ASSERT_EQUAL(d.scope, 0xAAAAAAAAu);
	CU_ASSERT_EQUAL(d.route_id, 0xAAAAAAAAAAAAAAAAull);
	struct {
		struct mcc_task_detail_v1 d;
		unsigned char tail[8]; /* a later minor's members */
	} big;
	memset(&big, 0xAA, sizeof(big));
	big.d.struct_size = sizeof(big);
	CU_ASSERT_EQUAL(f.h->ops->task_query(f.h->ctx, &t, 0, &big.d), MCC_TASK_CONGESTED);
	CU_ASSERT_EQUAL(big.d.state, MCC_TASK_CONGESTED);
	CU_ASSERT_EQUAL(big.d.reason, MCC_REASON_BYTE_WINDOW);
	CU_ASSERT_EQUAL(big.d.struct_size, sizeof(big));
	CU_ASSERT_EQUAL(big.tail[0], 0xAA); /* not this library's: untouched */
	CU_ASSERT_EQUAL(big.tail[7], 0xAA);
	fx_full_free(f, &filler);
}

static void test_query_is_a_pure_read(void)
{
	struct mcc_permit_v1 filler;
	struct fix f = fx_full(NULL, &filler);
	th_async(f.h, IBV_EVENT_QP_FATAL, f.d2, f.r2, 1, 6, 1);
	defer(f.h, f.r, 10, 1, 0);
	struct mcc_domain_stats_v1 a = th_rs(f.h, f.r), a2 = th_rs(f.h, f.r2);
	for (int i = 0; i < 100; i++) {
		struct mcc_task_detail_v1 d;
		CU_ASSERT_EQUAL(th_query(f.h, 10, 1, 0, &d), MCC_TASK_CONGESTED);
		th_query(f.h, 10, 2, MCC_TASKQ_SEEN_SUCCESS, NULL);
	}
	struct mcc_domain_stats_v1 b = th_rs(f.h, f.r), b2 = th_rs(f.h, f.r2);
	CU_ASSERT_EQUAL(memcmp(&a, &b, sizeof(a)), 0);
	CU_ASSERT_EQUAL(memcmp(&a2, &b2, sizeof(a2)), 0); /* SUSPECT stays, nothing probed */
	fx_full_free(f, &filler);
}

static void test_suspect_or_probing_alone_does_not_change_task_state(void)
{
	struct fix f = fx(NULL);
	success(f.h, f.r, 11, 1, 0);
	th_tick(f.h); /* the route delivered (its first hard error does not quarantine it) */
	th_async(f.h, IBV_EVENT_QP_FATAL, f.d, f.r, 1, 5, 1); /* route SUSPECT */
	CU_ASSERT_EQUAL(th_query(f.h, 11, 1, MCC_TASKQ_SEEN_SUCCESS, NULL), MCC_TASK_NORMAL);
	success(f.h, f.r, 11, 2, 0); /* not blocked: no evidence for the task */
	CU_ASSERT_EQUAL(th_query(f.h, 11, 2, MCC_TASKQ_SEEN_SUCCESS, NULL), MCC_TASK_NORMAL);
	th_free(f.h);
}

static void test_evidence_defer_storm_is_recorded_once_per_epoch(void)
{
	struct mcc_permit_v1 filler;
	struct fix f = fx_full(NULL, &filler);
	for (int i = 0; i < 100000; i++) /* far beyond one lane ring */
		defer(f.h, f.r, 12, (uint64_t)(i % 8), 0);
	for (uint64_t t = 0; t < 8; t++)
		CU_ASSERT_EQUAL(th_query(f.h, 12, t, 0, NULL), MCC_TASK_CONGESTED);
	CU_ASSERT_EQUAL(th_ds(f.h, f.d).defers, 100000);
	th_wc(f.h, &filler, IBV_WC_SUCCESS, 0);
	/* resolution still works after the storm */
	for (uint64_t t = 0; t < 8; t++) {
		success(f.h, f.r, 12, t, 0);
		CU_ASSERT_EQUAL(th_query(f.h, 12, t, 0, NULL), MCC_TASK_NORMAL);
	}
	th_free(f.h);
}

/* A lane skips the success check of a task it just checked while no
 * evidence was raised anywhere since; evidence raised for that task after
 * its success is resolved by its next success all the same. */
static void test_evidence_raised_after_a_success_is_resolved_by_the_next(void)
{
	struct mcc_permit_v1 filler;
	struct fix f = fx_full(NULL, &filler);
	defer(f.h, f.r, 20, 2, 0); /* another task's evidence: successes are checked */
	success(f.h, f.r2, 20, 1, 0);
	success(f.h, f.r2, 20, 1, 0); /* nothing new: skipped */
	CU_ASSERT_EQUAL(th_query(f.h, 20, 1, 0, NULL), MCC_TASK_UNKNOWN); /* no evidence */
	defer(f.h, f.r, 20, 1, 0);
	CU_ASSERT_EQUAL(th_query(f.h, 20, 1, 0, NULL), MCC_TASK_CONGESTED);
	success(f.h, f.r2, 20, 1, 0);
	CU_ASSERT_EQUAL(th_query(f.h, 20, 1, 0, NULL), MCC_TASK_NORMAL);
	defer(f.h, f.r, 20, 1, 0); /* again, the same epoch (lane dedupe reset) */
	CU_ASSERT_EQUAL(th_query(f.h, 20, 1, 0, NULL), MCC_TASK_CONGESTED);
	success(f.h, f.r2, 20, 1, 0);
	CU_ASSERT_EQUAL(th_query(f.h, 20, 1, 0, NULL), MCC_TASK_NORMAL);
	CU_ASSERT_EQUAL(th_query(f.h, 20, 2, 0, NULL), MCC_TASK_CONGESTED);
	fx_full_free(f, &filler);
}

/* Issue 11: a freed, evicted or never-seen (batch, task) is told apart from
 * a task with evidence: reason NO_RECORD, nothing else observed, the state
 * from the host's facts alone. */
static void test_query_freed_or_unknown_task_reads_no_record(void)
{
	struct mcc_config_v1 c = one_slice();
	struct fix f = fx(&c);
	struct mcc_task_detail_v1 d;
	/* healthy system (no evidence anywhere): the lock-free answer */
	CU_ASSERT_EQUAL(th_query(f.h, 30, 1, 0, &d), MCC_TASK_UNKNOWN);
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_NO_RECORD);
	CU_ASSERT_EQUAL(d.observed, MCC_OBS_REASON);
	struct mcc_permit_v1 filler = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 64 * KiB, 1, 0, 0, 0, &filler), MCC_ADMIT);
	defer(f.h, f.r, 30, 1, 0);
	defer(f.h, f.r, 31, 1, 0);
	th_wc(f.h, &filler, IBV_WC_SUCCESS, 0);
	success(f.h, f.r, 31, 1, 0); /* live, evidence resolved */
	CU_ASSERT_EQUAL(th_query(f.h, 30, 1, 0, &d), MCC_TASK_CONGESTED);
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_BYTE_WINDOW);
	CU_ASSERT_EQUAL(th_query(f.h, 31, 1, 0, &d), MCC_TASK_NORMAL);
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_BYTE_WINDOW);
	CU_ASSERT_EQUAL(d.resolved, 1);
	f.h->ops->batch_free(f.h->ctx, 30);
	/* freed: no record, whatever the host's facts */
	memset(&d, 0xAA, sizeof(d));
	d.struct_size = sizeof(d);
	CU_ASSERT_EQUAL(th_query(f.h, 30, 1, 0, &d), MCC_TASK_UNKNOWN);
	CU_ASSERT_EQUAL(d.state, MCC_TASK_UNKNOWN);
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_NO_RECORD);
	CU_ASSERT_EQUAL(d.observed, MCC_OBS_REASON);
	CU_ASSERT_EQUAL(d.resolved, 0);
	CU_ASSERT_EQUAL(d.route_id, 0);
	CU_ASSERT_EQUAL(d.path[0], '\0');
	CU_ASSERT_EQUAL(th_query(f.h, 30, 1, MCC_TASKQ_SEEN_SUCCESS, &d), MCC_TASK_NORMAL);
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_NO_RECORD);
	CU_ASSERT_EQUAL(th_query(f.h, 30, 1, MCC_TASKQ_SEEN_SUCCESS | MCC_TASKQ_FAILED, &d),
	                MCC_TASK_UNKNOWN);
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_NO_RECORD);
	/* never seen, with evidence elsewhere (the locked path) */
	CU_ASSERT_EQUAL(th_query(f.h, 999, 7, 0, &d), MCC_TASK_UNKNOWN);
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_NO_RECORD);
	CU_ASSERT_EQUAL(d.observed, MCC_OBS_REASON);
	CU_ASSERT_EQUAL(mcc_reason_projection(MCC_REASON_NO_RECORD), MCC_TASK_UNKNOWN);
	/* new evidence for a freed batch is recorded again */
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 64 * KiB, 1, 0, 0, 0, &filler), MCC_ADMIT);
	defer(f.h, f.r, 30, 1, 0);
	CU_ASSERT_EQUAL(th_query(f.h, 30, 1, 0, &d), MCC_TASK_CONGESTED);
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_BYTE_WINDOW);
	fx_full_free(f, &filler);
}

/* DEFER and AVOID of one slice, then a success of another slice of the same
 * attempt: the task has a usable path, so the AVOID (LONG_UNAVAILABLE: no
 * usable path now) is resolved by it, as the DEFER is. (Issue 11 had the
 * AVOID wait for the slice's own newer attempt; a task whose other slices
 * completed then read LONG_UNAVAILABLE while it progressed.) */
static void test_query_avoid_resolved_by_any_later_success(void)
{
	struct mcc_permit_v1 filler, p = MCC_PERMIT_INIT;
	struct fix f = fx_full(NULL, &filler);
	th_quarantine_route(f.h, f.r2, 1);
	defer(f.h, f.r, 40, 1, 0);                                       /* slice A */
	avoid(f.h, f.r2, 40, 1, 0); /* slice A */
	th_wc(f.h, &filler, IBV_WC_SUCCESS, 0);
	struct mcc_task_detail_v1 d;
	CU_ASSERT_EQUAL(th_query(f.h, 40, 1, 0, &d), MCC_TASK_LONG_UNAVAILABLE);
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_PATH_QUARANTINED);
	CU_ASSERT_EQUAL(d.route_id, 2);
	CU_ASSERT_EQUAL(d.resolved, 0);
	success(f.h, f.r, 40, 1, 0); /* slice B, same attempt */
	CU_ASSERT_EQUAL(th_query(f.h, 40, 1, 0, &d), MCC_TASK_NORMAL);
	CU_ASSERT_EQUAL(d.resolved, 1);
	/* a later AVOID of the slice is evidence again */
	CU_ASSERT_EQUAL(th_acq(f.h, f.r2, 4096, 1, 40, 1, 1, &p), MCC_AVOID);
	CU_ASSERT_EQUAL(th_query(f.h, 40, 1, MCC_TASKQ_SEEN_SUCCESS, NULL),
	                MCC_TASK_LONG_UNAVAILABLE);
	th_free(f.h);
}

/* An error completion ends one slice's attempt: a success of the same
 * attempt is another slice's and resolves nothing; the retry does. A
 * deferral (no error) is resolved by any success of the task. */
static void test_query_error_completion_resolved_only_by_a_retry(void)
{
	struct fix f = fx(NULL);
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	struct mcc_task_detail_v1 d;
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 4096, 1, 41, 1, 0, &p), MCC_ADMIT);
	th_wc(f.h, &p, IBV_WC_RETRY_EXC_ERR, 0); /* route timeout: CONGESTED */
	CU_ASSERT_EQUAL(th_query(f.h, 41, 1, 0, &d), MCC_TASK_CONGESTED);
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_ROUTE_TIMEOUT);
	success(f.h, f.r2, 41, 1, 0); /* another slice */
	CU_ASSERT_EQUAL(th_query(f.h, 41, 1, MCC_TASKQ_SEEN_SUCCESS, &d), MCC_TASK_CONGESTED);
	CU_ASSERT_EQUAL(d.resolved, 0);
	success(f.h, f.r2, 41, 1, 1); /* the retry */
	CU_ASSERT_EQUAL(th_query(f.h, 41, 1, 0, &d), MCC_TASK_NORMAL);
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_ROUTE_TIMEOUT);
	CU_ASSERT_EQUAL(d.resolved, 1);
	/* a flush (UNKNOWN) of attempt 2 is not resolved by attempt 2 either */
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 4096, 1, 41, 2, 2, &p), MCC_ADMIT);
	th_wc(f.h, &p, IBV_WC_WR_FLUSH_ERR, 0);
	success(f.h, f.r2, 41, 2, 2);
	CU_ASSERT_EQUAL(th_query(f.h, 41, 2, MCC_TASKQ_SEEN_SUCCESS, NULL), MCC_TASK_UNKNOWN);
	success(f.h, f.r2, 41, 2, 3);
	CU_ASSERT_EQUAL(th_query(f.h, 41, 2, 0, NULL), MCC_TASK_NORMAL);
	th_free(f.h);
}

/* Issue 14: a task the host failed reads LONG_UNAVAILABLE or UNKNOWN, never
 * NORMAL (nor CONGESTED), whatever was resolved. */
static void test_query_failed_task_never_reads_normal(void)
{
	struct fix f = fx(NULL);
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	struct mcc_task_detail_v1 d;
	const uint32_t done = MCC_TASKQ_SEEN_SUCCESS | MCC_TASKQ_FINISHED | MCC_TASKQ_FAILED;
	/* error, then successes resolve it: NORMAL unless the host failed it */
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 4096, 1, 42, 1, 0, &p), MCC_ADMIT);
	th_wc(f.h, &p, IBV_WC_GENERAL_ERR, 0);
	success(f.h, f.r2, 42, 1, 1);
	CU_ASSERT_EQUAL(th_query(f.h, 42, 1, MCC_TASKQ_SEEN_SUCCESS, NULL), MCC_TASK_NORMAL);
	CU_ASSERT_EQUAL(th_query(f.h, 42, 1, done, &d), MCC_TASK_UNKNOWN);
	CU_ASSERT_EQUAL(d.state, MCC_TASK_UNKNOWN);
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_FATAL); /* the cause, resolved */
	/* unresolved route timeout (CONGESTED): a failed task reads UNKNOWN */
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 4096, 1, 42, 2, 5, &p), MCC_ADMIT);
	th_wc(f.h, &p, IBV_WC_RETRY_EXC_ERR, 0);
	CU_ASSERT_EQUAL(th_query(f.h, 42, 2, 0, NULL), MCC_TASK_CONGESTED);
	CU_ASSERT_EQUAL(th_query(f.h, 42, 2, done, &d), MCC_TASK_UNKNOWN);
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_ROUTE_TIMEOUT);
	CU_ASSERT_EQUAL(d.resolved, 0);
	/* unresolved long unavailability stays LONG_UNAVAILABLE */
	th_quarantine_route(f.h, f.r, 1);
	CU_ASSERT_EQUAL(th_acq(f.h, f.r, 4096, 1, 42, 3, 0, &p), MCC_AVOID);
	CU_ASSERT_EQUAL(th_query(f.h, 42, 3, done, &d), MCC_TASK_LONG_UNAVAILABLE);
	CU_ASSERT_EQUAL(d.reason, MCC_REASON_PATH_QUARANTINED);
	/* only successes, no evidence: NORMAL unless failed */
	success(f.h, f.r2, 42, 4, 0);
	CU_ASSERT_EQUAL(th_query(f.h, 42, 4, MCC_TASKQ_SEEN_SUCCESS, NULL), MCC_TASK_NORMAL);
	CU_ASSERT_EQUAL(th_query(f.h, 42, 4, done, NULL), MCC_TASK_UNKNOWN);
	th_free(f.h);
}

MCC_CU_SUITE(t_init_evidence_tests, "policy_evidence", NULL, NULL,
             test_query_no_evidence_is_unknown_unless_host_saw_success,
             test_query_unsupported_transport_is_unknown,
             test_query_detail_fills_observed_fields_only,
             test_query_most_severe_unresolved_state_wins,
             test_query_path_recovery_clears_blocking_evidence,
             test_query_new_successful_attempt_clears_old_evidence,
             test_query_success_of_older_attempt_keeps_newer_evidence,
             test_evidence_bounded_evicts_oldest_resolved_first,
             test_evidence_bounded_evicts_oldest_when_none_resolved,
             test_batch_free_drops_the_batch_evidence_only,
             test_query_respects_caller_struct_size,
             test_query_is_a_pure_read,
             test_suspect_or_probing_alone_does_not_change_task_state,
             test_evidence_defer_storm_is_recorded_once_per_epoch,
             test_evidence_raised_after_a_success_is_resolved_by_the_next,
             test_query_freed_or_unknown_task_reads_no_record,
             test_query_avoid_resolved_by_any_later_success,
             test_query_error_completion_resolved_only_by_a_retry,
             test_query_failed_task_never_reads_normal)

MCC_CU_MAIN(t_init_evidence_tests)
