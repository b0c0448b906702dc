/* SPDX-License-Identifier: MIT */
/*
 * e2e_host.c - one end-to-end arm of the benchmark: a closed-loop bulk
 * workload through the TE (or TENT) host stub on the fabric model, one
 * sender machine and one receiver machine. Built twice: e2e_host (hooks
 * compiled in; mode off/observe/enforce from an ini file) and
 * e2e_host_nocc (hooks compiled out: the compile-out arm). e2e.py runs each
 * arm as its own process, interleaved, and reads the child's rusage.
 *
 *   e2e_host [--msg BYTES] [--conc N] [--duration S] [--exec sim|threaded]
 *            [--mode off|observe|enforce] [--engine te|tent] [--devs D]
 *            [--seed N] [--module-dir DIR] [--link-gbps G]
 *
 * Prints one line "E2E key=value ...". Every transfer's payload is verified
 * against the source checksum at completion. leaked = permits the host still
 * holds after the drain (must be 0); inflight_end = bytes the domains still
 * count with the lanes open (byte credit cached by lanes counts there).
 * Exit status 3 when a payload, a transfer or a permit went missing.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../host_stubs/fabric/model.h"
#include "../../host_stubs/common/host_engine.h"
#include "mcc_hooks.h"

#define RNODE 1
#define E2E_MAX_SLOTS 256

struct e2e_slot {
	uint64_t batch;
	uint64_t t_submit;
	uint64_t expect;
	uint64_t t_done;
	int busy;
	_Atomic int done;
};

struct e2e {
	/* options */
	uint64_t msg;
	uint32_t conc, devs;
	double duration_s;
	int exec_kind, tent;
	const char *mode, *module_dir;
	uint64_t seed, link_bps;
	/* world: node 0 sends to node 1 (RNODE) */
	struct mcc_host_pair p;
	struct mcc_host_engine eng; /* eng.te or eng.tent */
	char ini[64];
	mcc_actor *app;
	/* workload */
	struct e2e_slot slots[E2E_MAX_SLOTS];
	uint32_t outstanding;
	uint64_t seq, end_ns;
	int draining;
	uint64_t bytes_ok, tasks_ok, tasks_failed, corrupt, submit_fail;
	uint64_t states[4];
	struct mcc_host_samples lat;
};

static void on_task_done(void *arg, uint64_t batch, uint64_t task)
{
	struct e2e *w = arg;
	(void)task;
	for (uint32_t i = 0; i < w->conc; i++)
		if (w->slots[i].busy && w->slots[i].batch == batch) {
			w->slots[i].t_done = mcc_exec_now(w->p.ex);
			atomic_store(&w->slots[i].done, 1);
			mcc_exec_wake(w->app, w->slots[i].t_done + 500);
			return;
		}
}

/* MCC_HOST_DONE / _FAILED / _PENDING; *cs = caller-visible congestion state */
static int eng_finish(struct e2e *w, uint64_t batch, int *cs)
{
	*cs = MCC_TASK_UNKNOWN;
	int st = mcc_host_eng_status(&w->eng, batch, NULL);
	mcc_host_eng_cstate(&w->eng, batch, cs);
	mcc_host_eng_free(&w->eng, batch); /* freeBatchID at once (tests/hosts/test_hosts_threaded) */
	return st < 0 ? MCC_HOST_PENDING : st;
}

/* The application: `conc` transfers outstanding, each verified. */
static uint64_t app_step(void *arg, uint64_t now)
{
	struct e2e *w = arg;
	for (uint32_t i = 0; i < w->conc; i++) {
		struct e2e_slot *sl = &w->slots[i];
		if (!sl->busy || !atomic_load(&sl->done))
			continue;
		int cs;
		int st = eng_finish(w, sl->batch, &cs);
		if (cs >= 0 && cs < 4)
			w->states[cs]++;
		if (st == MCC_HOST_DONE) {
			if (mcc_host_checksum(w->p.dst + (uint64_t)i * w->msg, w->msg) != sl->expect)
				w->corrupt += w->msg;
			else
				w->bytes_ok += w->msg;
			w->tasks_ok++;
			mcc_host_samples_add(&w->lat, sl->t_done - sl->t_submit);
		} else {
			w->tasks_failed++;
		}
		sl->busy = 0;
		atomic_store(&sl->done, 0);
		w->outstanding--;
	}
	if (w->draining || now >= w->end_ns)
		return MCC_EXEC_PARK;
	for (uint32_t i = 0; i < w->conc; i++) {
		struct e2e_slot *sl = &w->slots[i];
		if (sl->busy)
			continue;
		char *src = w->p.src + (uint64_t)i * w->msg;
		w->seq++;
		memcpy(src, &w->seq, sizeof(w->seq)); /* fresh content per transfer */
		memcpy(src + w->msg - sizeof(now), &now, sizeof(now));
		sl->expect = mcc_host_checksum(src, w->msg);
		sl->t_submit = now;
		sl->busy = 1;
		atomic_store(&sl->done, 0);
		const struct mcc_host_xfer x = {TE_OPCODE_WRITE, src, RNODE, (uint64_t)i * w->msg, w->msg, 0};
		if (mcc_host_eng_submit(&w->eng, &x, &sl->batch) != 0) {
			sl->busy = 0;
			w->submit_fail++;
			continue;
		}
		w->outstanding++;
	}
	return MCC_EXEC_PARK;
}

static int all_idle(void *arg)
{
	struct e2e *w = arg;
	return w->draining && w->outstanding == 0;
}


static double wall_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *const state_names[] = {"HEALTHY", "CONGESTED", "SUSPECT", "QUARANTINED",
                                          "PROBING"};

static void usage(void)
{
	fprintf(stderr, "usage: e2e_host [--msg BYTES] [--conc N] [--duration S] [--exec sim|threaded]\n"
	                "                [--mode off|observe|enforce] [--engine te|tent] [--devs D]\n"
	                "                [--seed N] [--module-dir DIR] [--link-gbps G]\n");
}

static int parse(struct e2e *w, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!v)
			return -1;
		i++;
		if (!strcmp(a, "--msg"))
			w->msg = strtoull(v, NULL, 0);
		else if (!strcmp(a, "--conc"))
			w->conc = (uint32_t)strtoul(v, NULL, 0);
		else if (!strcmp(a, "--duration"))
			w->duration_s = strtod(v, NULL);
		else if (!strcmp(a, "--exec"))
			w->exec_kind = !strcmp(v, "threaded") ? MCC_EXEC_THREADED : MCC_EXEC_SIM;
		else if (!strcmp(a, "--mode"))
			w->mode = v;
		else if (!strcmp(a, "--engine"))
			w->tent = !strcmp(v, "tent");
		else if (!strcmp(a, "--devs"))
			w->devs = (uint32_t)strtoul(v, NULL, 0);
		else if (!strcmp(a, "--seed"))
			w->seed = strtoull(v, NULL, 0);
		else if (!strcmp(a, "--module-dir"))
			w->module_dir = v;
		else if (!strcmp(a, "--link-gbps"))
			w->link_bps = (uint64_t)(strtod(v, NULL) * 1e9);
		else
			return -1;
	}
	if (w->msg < 64 || w->conc < 1 || w->conc > E2E_MAX_SLOTS || w->devs < 1 ||
	    w->devs > MCC_FAB_MAX_DEVS || w->duration_s <= 0)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	static struct e2e w;
	int rc = 1;
	w.msg = 1u << 20;
	w.conc = 8;
	w.devs = 2;
	w.duration_s = 0.2;
	w.exec_kind = MCC_EXEC_SIM;
	w.mode = "off";
	w.seed = 1;
	if (parse(&w, argc, argv) != 0) {
		usage();
		return 2;
	}
	double cpu_start = mcc_host_cpu_ms();
	struct mcc_fab_model_cfg mcfg;
	mcc_fab_model_cfg_defaults(&mcfg);
	mcfg.devs_per_node = w.devs;
	mcfg.seed = w.seed;
	if (w.link_bps)
		mcfg.link_bps = w.link_bps;
	if (mcc_host_pair_init(&w.p, (enum mcc_exec_kind)w.exec_kind, w.seed, &mcfg,
	                       (size_t)w.conc * w.msg) != 0)
		return 1;
	if (MCC_CC_COMPILED_IN) {
		strcpy(w.ini, "/tmp/mcc-e2e-XXXXXX");
		if (mcc_host_policy_ini(w.ini, w.mode, w.module_dir, NULL, NULL, 0) != 0)
			return 1;
	}
	w.p.env.cc_ini_path = MCC_CC_COMPILED_IN ? w.ini : NULL;
	w.p.env.cc_module_dir = w.module_dir;
	w.p.env.cc_ignore_env = 1;
	struct mcc_host_eng_cfg ec;
	mcc_host_eng_cfg_defaults(&ec, w.tent, 0);
	if (mcc_host_eng_create(&w.eng, &ec, &w.p.env, on_task_done, &w) != 0)
		goto out;
	uint64_t x = w.seed * 31 + 1; /* pseudo-random payload */
	for (size_t k = 0; k + 8 <= w.p.len; k += 8) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		memcpy(w.p.src + k, &x, 8);
	}
	mcc_host_eng_register(&w.eng, w.p.src, w.p.len);
	w.end_ns = (uint64_t)(w.duration_s * 1e9);
	w.app = mcc_exec_add(w.p.ex, "app", app_step, &w, 1000);

	/* measured: the run and its drain */
	double cpu0 = mcc_host_cpu_ms(), wall0 = wall_s();
	mcc_exec_run(w.p.ex, w.end_ns, NULL, NULL);
	uint64_t t_end = mcc_exec_now(w.p.ex);
	w.draining = 1;
	mcc_exec_wake(w.app, t_end);
	mcc_exec_run(w.p.ex, t_end + 40000000000ull, all_idle, &w);
	if (mcc_exec_kind(w.p.ex) == MCC_EXEC_THREADED) /* threads joined: reap */
		app_step(&w, mcc_exec_now(w.p.ex));
	uint64_t t_fin = mcc_exec_now(w.p.ex);
	double run_cpu = mcc_host_cpu_ms() - cpu0, run_wall = wall_s() - wall0;

	/* results */
	struct mcc_fab_model_stats ms;
	mcc_fab_model_stats(w.p.model, &ms);
	struct mcc_host_eng_stats es;
	mcc_host_eng_stats(&w.eng, &es);
	const uint64_t defers = es.defers, avoids = es.avoids, admits = es.admits, vcpu = es.vcpu;
	const int64_t leaked = es.permits_live;
	const char *cc = mcc_host_eng_cc_mode(&w.eng);
	/* controller state in force: each device domain and its route to the
	 * receiver's NIC of the same index (absent when compiled out / off) */
	char states[128] = "";
	uint64_t win_min = UINT64_MAX, quar = 0, cuts = 0, inflight = 0;
	uint32_t nctx = mcc_host_eng_nctx(&w.eng);
	for (uint32_t c = 0; c < nctx; c++)
		for (int r = -1; r < (int)w.devs; r++) {
			struct mcc_domain_stats_v1 st;
			int e = mcc_host_eng_dstats(&w.eng, c, r < 0 ? -1 : (int)RNODE, r < 0 ? 0 : r, &st);
			if (e != 0)
				continue;
			inflight += st.inflight_bytes; /* includes credit cached by open lanes */
			quar += st.quarantines;
			cuts += st.window_cuts;
			if (r >= 0 && st.window_bytes && st.window_bytes < win_min)
				win_min = st.window_bytes;
			if (r >= 0) {
				size_t l = strlen(states);
				snprintf(states + l, sizeof(states) - l, "%s%u.%d:%s", l ? "," : "", c, r,
				         st.state < 5 ? state_names[st.state] : "?");
			}
		}
	mcc_host_samples_sort(&w.lat);
	double model_s = (double)t_fin / 1e9; /* run + drain: every verified byte */
	printf("E2E arm=%s cc=%s engine=%s exec=%s msg=%" PRIu64 " conc=%u devs=%u dur=%.6f "
	       "t_end_s=%.6f t_fin_s=%.6f wall_s=%.6f run_cpu_ms=%.3f setup_cpu_ms=%.3f vcpu_ms=%.3f "
	       "bytes_ok=%" PRIu64 " tasks_ok=%" PRIu64 " tasks_failed=%" PRIu64 " submit_fail=%" PRIu64
	       " corrupt=%" PRIu64 " lost=%" PRIu64 " goodput_gbps=%.6f p50_us=%.3f p99_us=%.3f "
	       "p999_us=%.3f qpeak=%" PRIu64 " pause_ms=%.3f defers=%" PRIu64 " avoids=%" PRIu64
	       " admits=%" PRIu64 " leaked=%" PRId64 " inflight_end=%" PRIu64 " quarantines=%" PRIu64 " window_cuts=%" PRIu64
	       " route_window_min=%" PRIu64 " s_normal=%" PRIu64 " s_congested=%" PRIu64
	       " s_unavail=%" PRIu64 " s_unknown=%" PRIu64 " wc_errors=%" PRIu64 " states=%s\n",
	       MCC_CC_COMPILED_IN ? w.mode : "compile-out", cc, w.eng.te ? "te" : "tent",
	       w.exec_kind == MCC_EXEC_SIM ? "sim" : "threaded", w.msg, w.conc, w.devs, w.duration_s,
	       (double)t_end / 1e9, (double)t_fin / 1e9, run_wall, run_cpu, cpu0 - cpu_start, (double)vcpu / 1e6,
	       w.bytes_ok, w.tasks_ok, w.tasks_failed, w.submit_fail, w.corrupt,
	       (uint64_t)w.outstanding * w.msg, model_s > 0 ? (double)w.bytes_ok * 8 / model_s / 1e9 : 0,
	       mcc_host_samples_pct_us(&w.lat, 0.5), mcc_host_samples_pct_us(&w.lat, 0.99),
	       mcc_host_samples_pct_us(&w.lat, 0.999),
	       ms.queue_peak_bytes, (double)ms.pause_ns / 1e6, defers, avoids, admits, leaked, inflight, quar,
	       cuts, win_min == UINT64_MAX ? 0 : win_min, w.states[0], w.states[1], w.states[2],
	       w.states[3], ms.wc_errors, states[0] ? states : "-");
	fflush(stdout);
	rc = (w.corrupt || w.outstanding || leaked) ? 3 : 0;
out:
	mcc_host_eng_destroy(&w.eng);
	mcc_host_pair_fini(&w.p);
	if (w.ini[0])
		unlink(w.ini);
	mcc_host_samples_free(&w.lat);
	return rc;
}
