/* SPDX-License-Identifier: MIT */
/*
 * test_hosts_threaded.c - batch lifetime in the TE and TENT hosts under the
 * threaded executor (real threads: poster, poller, monitor, application and
 * fabric run concurrently). The application frees every batch the moment it
 * sees the task finished, as freeBatchID / tent_free_batch allow, with
 * small (4 KiB, one slice) transfers so completions race the posting
 * thread. The hosts must not touch a slice, task or batch after the task is
 * finished: under AddressSanitizer (--enable-asan) any such access is a
 * heap-use-after-free report and fails the test. Without ASan the test
 * still checks that every finished batch frees at once and every payload
 * arrives. Timing-dependent by nature (it is a race detector), never flaky
 * when the lifetime is right: nothing here asserts on wall time.
 */
#include "../../host_stubs/common/host_engine.h"
#include "../../host_stubs/common/hostenv.h"
#include "../../host_stubs/fabric/model.h"
#include "../../host_stubs/sim/exec.h"
#include "../../host_stubs/te/te.h"
#include "../../host_stubs/tent/tent.h"
#include "../cu_driver.h"
#include "mcc_hooks.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SLOTS 16
#define MSG 4096u
#define RNODE 1

struct world {
	int tent;
	struct mcc_host_pair p; /* node 0 sends to node 1 (RNODE) */
	struct mcc_host_engine eng; /* eng.te or eng.tent */
	mcc_actor *app;
	uint64_t batch[SLOTS];
	uint64_t expect[SLOTS];
	int busy[SLOTS];
	uint64_t target, seq; /* transfers to run, submitted so far */
	_Atomic int draining;
	_Atomic uint32_t outstanding;
	uint64_t done, failed, corrupt, free_busy, submit_fail;
	char ini[64];
};

static void on_done(void *arg, uint64_t batch, uint64_t task)
{
	struct world *w = arg;
	(void)batch;
	(void)task;
	mcc_exec_wake(w->app, mcc_exec_now(w->p.ex));
}

/* 1 completed, 2 failed, 0 pending */
static int status_of(struct world *w, uint64_t b)
{
	if (!w->tent) {
		struct te_transfer_status st = { 0, 0 };
		te_get_transfer_status(w->eng.te, b, 0, &st);
		return st.status == TE_STATUS_COMPLETED ? 1 : st.status == TE_STATUS_FAILED ? 2 : 0;
	}
	tent_status_t st = { 0, 0 };
	tent_task_status(w->eng.tent, b, 0, &st);
	return st.status == TENT_STATUS_COMPLETED ? 1 : st.status == TENT_STATUS_FAILED ? 2 : 0;
}

static int submit(struct world *w, int i)
{
	char *src = w->p.src + (size_t)i * MSG;
	w->seq++;
	memcpy(src, &w->seq, sizeof(w->seq));
	w->expect[i] = mcc_host_checksum(src, MSG);
	if (!w->tent) {
		w->batch[i] = te_allocate_batch(w->eng.te, 1);
		struct te_request rq = { TE_OPCODE_WRITE, src, (int32_t)RNODE, (uint64_t)i * MSG, MSG };
		return te_submit(w->eng.te, w->batch[i], &rq, 1);
	}
	w->batch[i] = tent_allocate_batch(w->eng.tent, 1);
	tent_request_t rq;
	memset(&rq, 0, sizeof(rq));
	rq.opcode = TENT_OPCODE_WRITE;
	rq.source = src;
	rq.target_id = RNODE;
	rq.target_offset = (uint64_t)i * MSG;
	rq.length = MSG;
	return tent_submit(w->eng.tent, w->batch[i], &rq, 1);
}

/* The application: frees a batch as soon as its task is finished, then
 * reuses the slot at once. */
static uint64_t app_step(void *arg, uint64_t now)
{
	struct world *w = arg;
	for (int i = 0; i < SLOTS; i++) {
		if (!w->busy[i])
			continue;
		int st = status_of(w, w->batch[i]);
		if (!st)
			continue;
		int state = MCC_TASK_UNKNOWN;
		if (!w->tent)
			te_get_task_congestion_state(w->eng.te, w->batch[i], 0, &state);
		else
			tent_get_task_congestion_state(w->eng.tent, w->batch[i], 0, &state);
		int rc = w->tent ? tent_free_batch(w->eng.tent, w->batch[i]) : te_free_batch(w->eng.te, w->batch[i]);
		if (rc != 0)
			w->free_busy++; /* a finished task must free at once */
		if (st == 1) {
			w->done++;
			if (mcc_host_checksum(w->p.dst + (size_t)i * MSG, MSG) != w->expect[i])
				w->corrupt++;
		} else {
			w->failed++;
		}
		w->busy[i] = 0;
		atomic_fetch_sub(&w->outstanding, 1);
	}
	if (w->seq >= w->target)
		atomic_store(&w->draining, 1);
	if (atomic_load(&w->draining))
		return atomic_load(&w->outstanding) ? now + 20000 : MCC_EXEC_PARK;
	for (int i = 0; i < SLOTS && w->seq < w->target; i++) {
		if (w->busy[i])
			continue;
		if (submit(w, i) != 0) {
			w->submit_fail++;
			continue;
		}
		w->busy[i] = 1;
		atomic_fetch_add(&w->outstanding, 1);
	}
	return now + 20000; /* and woken by every task completion */
}

static int idle(void *arg)
{
	struct world *w = arg;
	return atomic_load(&w->draining) && atomic_load(&w->outstanding) == 0;
}

/* Runs `transfers` 4 KiB transfers (a count, not a time: the machine's
 * speed changes how long it takes, never what is checked). */
static void run_world(int tent, const char *mode, uint64_t transfers)
{
	const char *mdir = getenv("MCC_TEST_MODULE_DIR");
	struct world *w = calloc(1, sizeof(*w));
	CU_ASSERT_PTR_NOT_NULL_FATAL(w);
	w->tent = tent;
	strcpy(w->ini, "/tmp/mcc-thr-XXXXXX");
	int fd = mkstemp(w->ini);
	CU_ASSERT_FATAL(fd >= 0);
	FILE *f = fdopen(fd, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fprintf(f, "[policy]\nmode = %s\n", mode);
	if (mdir)
		fprintf(f, "module_dir = %s\n", mdir);
	fclose(f);

	CU_ASSERT_EQUAL_FATAL(
	    mcc_host_pair_init(&w->p, MCC_EXEC_THREADED, 1, NULL, (size_t)SLOTS * MSG), 0);
	w->p.env.cc_ini_path = w->ini;
	w->p.env.cc_ignore_env = 1;
	struct mcc_host_eng_cfg c;
	mcc_host_eng_cfg_defaults(&c, tent, 0);
	CU_ASSERT_EQUAL_FATAL(mcc_host_eng_create(&w->eng, &c, &w->p.env, on_done, w), 0);
	mcc_host_eng_register(&w->eng, w->p.src, w->p.len);
	w->target = transfers;
	w->app = mcc_exec_add(w->p.ex, "app", app_step, w, 1000);
	/* until every transfer was submitted and reaped (the bound only keeps a
	 * broken host from hanging the test) */
	mcc_exec_run(w->p.ex, 600000000000ull, idle, w);
	app_step(w, mcc_exec_now(w->p.ex)); /* threads joined: reap the last ones */

	printf("(%s %s: %llu transfers, %llu failed) ", tent ? "tent" : "te", mode,
	       (unsigned long long)w->done, (unsigned long long)w->failed);
	CU_ASSERT_EQUAL(w->done, transfers);
	CU_ASSERT_EQUAL(w->failed, 0);
	CU_ASSERT_EQUAL(w->corrupt, 0);
	CU_ASSERT_EQUAL(w->free_busy, 0); /* finished means freeable */
	CU_ASSERT_EQUAL(w->submit_fail, 0);
	CU_ASSERT_EQUAL(atomic_load(&w->outstanding), 0);

	mcc_host_eng_destroy(&w->eng);
	mcc_host_pair_fini(&w->p);
	unlink(w->ini);
	free(w);
}

static void test_te_threaded_batches_freed_at_completion_are_never_touched(void)
{
	run_world(0, "enforce", 10000);
	run_world(0, "off", 5000);
}

static void test_tent_threaded_batches_freed_at_completion_are_never_touched(void)
{
	run_world(1, "enforce", 4000);
	run_world(1, "off", 2000);
}

MCC_CU_SUITE(t_init_hosts_threaded_tests, "hosts_threaded", NULL, NULL,
             test_te_threaded_batches_freed_at_completion_are_never_touched,
             test_tent_threaded_batches_freed_at_completion_are_never_touched)

MCC_CU_MAIN(t_init_hosts_threaded_tests)
