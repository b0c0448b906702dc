/* SPDX-License-Identifier: MIT */
/*
 * microbench.c - CPU cost of the controller's healthy-path pair, against the
 * two-domain atomic floor measured in the same process. A benchmark, never a
 * test: it reports, it does not judge.
 *
 * Arms (interleaved A B C ... A B C ..., start rotated per repeat):
 *   floor        a bare two-domain reservation: fetch_add on two cache-line-
 *                separated counters, each result tested against a bound, then
 *                fetch_sub both (floor.c)
 *   floor-add    the same four locked operations with no result used
 *   compile-out  the engine loop with MCC_HOOK compiled out (no call at all)
 *   off          hooks compiled in, controller mode off (the engine's branch)
 *   null/observe/aimd  hooks compiled in, calling the module loaded through the
 *                real loader (mcc_instance_acquire, ini in a temp dir,
 *                module_dir = the build tree's modules/.libs), settling with
 *                release(NOT_POSTED) ("rel") or on_completion(SUCCESS) ("wc")
 *   aimd-tick    aimd, with one tick() (control epoch) between the warm-up and
 *                the timed run, as the monitor thread would run it: a busy,
 *                healthy domain may then serve slices from per-lane credit
 *                (modules/core), where without a tick it admits exactly
 *   aimd-cong    aimd after two busy epochs with one RNR_RETRY_EXC_ERR each on
 *                the route (receiver pressure): the route CONGESTED, admitting
 *                exactly, its device HEALTHY in lane credit, every slice's
 *                task seeing the congestion (the common congested case)
 * Thread configurations: 1T; 2T on one device+route (shared domains, one lane
 * each); 2T on separate devices/routes. Contexts: tight loop, and "ctx" with
 * ~150 ns of simulated per-WR work (measured on this machine).
 * The clock is read only around whole runs; a 2T run reports its slower
 * thread. Every run re-acquires its instance and opens fresh domains/lanes,
 * then warms up with n/10 pairs before the timed n.
 *
 * Usage: microbench [-q] [-r RUNS] [-n PAIRS] [-c CTX_PAIRS] [-w WORK_NS]
 *                   [-m MODULE_DIR] [-o OUT.tsv] [-a ARM,...] [-t CFG,...]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define MB_MAX_RUNS 101
#define MB_THREADS 2

enum mb_kind { MB_FLOOR, MB_FLOOR_ADD, MB_OUT, MB_OFF, MB_VT };

struct mb_arm {
	const char *name;
	enum mb_kind kind;
	const char *mode;   /* ini mode */
	const char *module; /* expected module name */
	int settle;
	int tick; /* 1: one control epoch (tick) after the warm-up: credit mode;
	           * 2: a CONGESTED route on a device in credit mode (mb_congest) */
};

static const struct mb_arm mb_arms[] = {
	{"floor", MB_FLOOR, NULL, NULL, 0, 0},
	{"floor-add", MB_FLOOR_ADD, NULL, NULL, 0, 0},
	{"compile-out", MB_OUT, NULL, NULL, 0, 0},
	{"off", MB_OFF, "off", "null", 0, 0},
	{"null-rel", MB_VT, "off", "null", MCC_BENCH_RELEASE, 0},
	{"null-wc", MB_VT, "off", "null", MCC_BENCH_COMPLETE, 0},
	{"observe-rel", MB_VT, "observe", "observe", MCC_BENCH_RELEASE, 0},
	{"observe-wc", MB_VT, "observe", "observe", MCC_BENCH_COMPLETE, 0},
	{"aimd-rel", MB_VT, "enforce", "aimd", MCC_BENCH_RELEASE, 0},
	{"aimd-wc", MB_VT, "enforce", "aimd", MCC_BENCH_COMPLETE, 0},
	{"aimd-tick-rel", MB_VT, "enforce", "aimd", MCC_BENCH_RELEASE, 1},
	{"aimd-tick-wc", MB_VT, "enforce", "aimd", MCC_BENCH_COMPLETE, 1},
	{"aimd-cong-rel", MB_VT, "enforce", "aimd", MCC_BENCH_RELEASE, 2},
	{"aimd-cong-wc", MB_VT, "enforce", "aimd", MCC_BENCH_COMPLETE, 2},
};
#define MB_NARMS (sizeof(mb_arms) / sizeof(mb_arms[0]))

struct mb_cfg {
	const char *name;
	unsigned nthreads;
	unsigned ndev;
	int shared;
};

static const struct mb_cfg mb_cfgs[] = {
	{"1T", 1, 1, 1},
	{"2T-shared", 2, 1, 1},
	{"2T-private", 2, 2, 0},
};
#define MB_NCFGS (sizeof(mb_cfgs) / sizeof(mb_cfgs[0]))
static const char *const mb_ctx_names[] = {"tight", "ctx"};

/* ----------------------------------------------------------- worker threads */

struct mb_job {
	mcc_bench_run_fn fn;
	uint64_t n;
	unsigned active; /* workers taking part */
	int quit;
};

static struct {
	pthread_barrier_t start, done;
	struct mb_job job;
	struct mcc_bench_lane *lanes[MB_THREADS];
	int cpu[MB_THREADS];
	int cpu_now[MB_THREADS];
	double ns[MB_THREADS];
	uint64_t posted[MB_THREADS];
} mb;

static double mb_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int mb_pinning = 1;

static void mb_pin(int cpu)
{
	cpu_set_t set;
	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0)
		mb_pinning = 0;
}

static void *mb_worker(void *arg)
{
	unsigned k = (unsigned)(uintptr_t)arg;
	mb.cpu_now[k] = -1;
	for (;;) {
		pthread_barrier_wait(&mb.start);
		if (mb.job.quit)
			return NULL;
		if (k < mb.job.active) {
			if (mb.cpu[k] != mb.cpu_now[k]) {
				mb_pin(mb.cpu[k]);
				mb.cpu_now[k] = mb.cpu[k];
			}
			double t0 = mb_now();
			mb.posted[k] = mb.job.fn(mb.lanes[k], mb.job.n);
			mb.ns[k] = mb_now() - t0;
		}
		pthread_barrier_wait(&mb.done);
	}
}

/* Run fn on `active` workers at once; returns the slower worker's ns/pair. */
static double mb_run(mcc_bench_run_fn fn, uint64_t n, unsigned active)
{
	mb.job.fn = fn;
	mb.job.n = n;
	mb.job.active = active;
	pthread_barrier_wait(&mb.start);
	pthread_barrier_wait(&mb.done);
	double worst = 0;
	for (unsigned k = 0; k < active; k++)
		if (mb.ns[k] > worst)
			worst = mb.ns[k];
	return worst / (double)n;
}

/* -------------------------------------------------------------- statistics */

static int mb_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

struct mb_stat {
	double med, min, max;
};

static struct mb_stat mb_stats(const double *v, unsigned n)
{
	double s[MB_MAX_RUNS];
	struct mb_stat r = {0, 0, 0};
	if (n == 0)
		return r;
	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), mb_cmp);
	r.min = s[0];
	r.max = s[n - 1];
	r.med = (n & 1) ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	return r;
}

/* ------------------------------------------------------------------- main */

static struct mcc_bench_lane mb_lane_store[MB_THREADS];
static struct mcc_bench_floor mb_floor_store[MB_THREADS];
static double mb_res[MB_NCFGS][2][MB_NARMS][MB_MAX_RUNS];
static int mb_avail[MB_NARMS];
static int mb_arm_on[MB_NARMS];
static int mb_cfg_on[MB_NCFGS];
static uint64_t mb_anomalies;

static mcc_bench_run_fn mb_fn(const struct mb_arm *a, int ctx)
{
	switch (a->kind) {
	case MB_FLOOR:
		return ctx ? mcc_bench_floor_ctx : mcc_bench_floor_tight;
	case MB_FLOOR_ADD:
		return ctx ? mcc_bench_floor_add_ctx : mcc_bench_floor_add_tight;
	case MB_OUT:
		return ctx ? mcc_bench_out_ctx : mcc_bench_out_tight;
	case MB_OFF:
		return ctx ? mcc_bench_on_ctx_rel : mcc_bench_on_tight_rel;
	case MB_VT:
	default:
		if (a->settle == MCC_BENCH_COMPLETE)
			return ctx ? mcc_bench_on_ctx_wc : mcc_bench_on_tight_wc;
		return ctx ? mcc_bench_on_ctx_rel : mcc_bench_on_tight_rel;
	}
}

static void mb_lanes_reset(const struct mb_cfg *c, uint32_t work_iters)
{
	for (unsigned k = 0; k < MB_THREADS; k++) {
		struct mcc_bench_lane *l = &mb_lane_store[k];
		struct mcc_permit_v1 init = MCC_PERMIT_INIT;
		l->ops = NULL;
		l->lane = NULL;
		l->route = NULL;
		l->cc_on = 0;
		l->generation = 1;
		l->refused = 0;
		l->permit = init;
		l->work_iters = work_iters;
		l->floor = &mb_floor_store[c->shared ? 0 : k];
		l->floor->bound = MCC_BENCH_FLOOR_BOUND;
		mb.lanes[k] = l;
	}
}

/* A CONGESTED route on a device in lane credit (mcc_bench_rnr). */
static void mb_congest(const struct mb_cfg *c, const char *arm, struct mcc_bench_inst *b,
                       mcc_bench_run_fn fn, uint64_t warm)
{
	for (int e = 0; e < 2; e++) {
		mb_run(fn, warm, c->nthreads);
		for (unsigned k = 0; k < c->nthreads; k++)
			mcc_bench_rnr(&mb_lane_store[k]);
		b->ops->tick(b->ctx, (uint64_t)mb_now());
	}
	for (unsigned k = 0; k < c->nthreads; k++) {
		uint32_t st = mcc_bench_route_state(b, &mb_lane_store[k]);
		if (st != MCC_PATH_CONGESTED) {
			fprintf(stderr, "microbench: ANOMALY %s %s: route state %u, not CONGESTED\n",
			        c->name, arm, st);
			mb_anomalies++;
		}
	}
}

/* One timed run of one arm: fresh instance, warm-up, timed n. */
static int mb_one(const struct mb_cfg *c, const struct mb_arm *a, int ctx, uint64_t n,
                  uint32_t work_iters, const char *dir, const char *module_dir, double *out)
{
	struct mcc_bench_inst b;
	char err[512];
	int have = 0;

	mb_lanes_reset(c, work_iters);
	if (a->kind == MB_OFF || a->kind == MB_VT) {
		int rc = mcc_bench_inst_open(&b, dir, module_dir, a->mode, a->module, c->ndev,
		                             c->nthreads, err, sizeof(err));
		if (rc < 0) {
			fprintf(stderr, "microbench: %s: %s\n", a->name, err);
			return rc;
		}
		have = 1;
		for (unsigned k = 0; k < c->nthreads; k++)
			mcc_bench_lane_bind(&mb_lane_store[k], &b, k, c->shared ? 0 : k,
			                    a->kind == MB_VT);
	}
	mcc_bench_run_fn fn = mb_fn(a, ctx);
	if (a->tick) /* the bulk steady state first (windows grown) */
		for (unsigned k = 0; k < c->nthreads; k++)
			mcc_bench_warm(&b, &mb_lane_store[k]);
	mb_run(fn, n / 10 + 1, c->nthreads);
	if (a->tick == 1) { /* a busy epoch ends: the policy may switch to lane credit */
		b.ops->tick(b.ctx, (uint64_t)mb_now());
		mb_run(fn, n / 10 + 1, c->nthreads);
	} else if (a->tick == 2) {
		mb_congest(c, a->name, &b, fn, n / 10 + 1);
		mb_run(fn, n / 10 + 1, c->nthreads);
	}
	*out = mb_run(fn, n, c->nthreads);
	for (unsigned k = 0; k < c->nthreads; k++)
		if (mb_lane_store[k].refused) {
			fprintf(stderr, "microbench: ANOMALY %s %s %s: %" PRIu64 " refusals\n", c->name,
			        mb_ctx_names[ctx], a->name, mb_lane_store[k].refused);
			mb_anomalies++;
		}
	if (have) {
		uint64_t left = 0;
		mcc_bench_inst_close(&b, &left);
		if (left) {
			fprintf(stderr, "microbench: ANOMALY %s %s %s: %" PRIu64 " bytes in flight\n",
			        c->name, mb_ctx_names[ctx], a->name, left);
			mb_anomalies++;
		}
	}
	for (unsigned k = 0; k < MB_THREADS; k++) {
		uint64_t inflight = atomic_load(&mb_floor_store[k].dev.inflight) +
		                    atomic_load(&mb_floor_store[k].route.inflight);
		if (inflight) {
			fprintf(stderr, "microbench: ANOMALY floor counters not zero\n");
			mb_anomalies++;
		}
	}
	return 0;
}

static int mb_in_list(const char *list, const char *name)
{
	if (!list)
		return 1;
	size_t len = strlen(name);
	for (const char *p = list; *p;) {
		const char *e = strchr(p, ',');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		if (l == len && strncmp(p, name, len) == 0)
			return 1;
		/* a bare module name selects both of its settle variants */
		if (l < len && strncmp(p, name, l) == 0 && name[l] == '-' &&
		    (strcmp(name + l, "-rel") == 0 || strcmp(name + l, "-wc") == 0))
			return 1;
		p = e ? e + 1 : p + l;
	}
	return 0;
}

static int mb_find(const char *name)
{
	for (unsigned i = 0; i < MB_NARMS; i++)
		if (strcmp(mb_arms[i].name, name) == 0)
			return (int)i;
	return -1;
}

static void mb_usage(void)
{
	fprintf(stderr, "usage: microbench [-q] [-r RUNS] [-n PAIRS] [-c CTX_PAIRS] [-w WORK_NS]\n"
	                "                  [-m MODULE_DIR] [-o OUT.tsv] [-a ARM,...] [-t CFG,...]\n");
}

int main(int argc, char **argv)
{
	unsigned runs = 15;
	uint64_t n_tight = 400000, n_ctx = 100000;
	double work_ns = 150;
	const char *module_dir = getenv("MCC_TEST_MODULE_DIR");
	const char *out_path = NULL, *arm_list = NULL, *cfg_list = NULL;
	int opt;

	while ((opt = getopt(argc, argv, "qr:n:c:w:m:o:a:t:h")) != -1) {
		switch (opt) {
		case 'q':
			runs = 7;
			n_tight = 100000;
			n_ctx = 25000;
			break;
		case 'r':
			runs = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'n':
			n_tight = strtoull(optarg, NULL, 10);
			break;
		case 'c':
			n_ctx = strtoull(optarg, NULL, 10);
			break;
		case 'w':
			work_ns = strtod(optarg, NULL);
			break;
		case 'm':
			module_dir = optarg;
			break;
		case 'o':
			out_path = optarg;
			break;
		case 'a':
			arm_list = optarg;
			break;
		case 't':
			cfg_list = optarg;
			break;
		default:
			mb_usage();
			return 2;
		}
	}
	if (runs < 1 || runs > MB_MAX_RUNS || n_tight < 1 || n_ctx < 1 || work_ns < 0) {
		mb_usage();
		return 2;
	}

	/* CPUs we may use: the first two of our affinity mask. */
	cpu_set_t allowed;
	int cpus[MB_THREADS] = {-1, -1}, ncpu = 0;
	if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0)
		for (int i = 0; i < CPU_SETSIZE && ncpu < MB_THREADS; i++)
			if (CPU_ISSET(i, &allowed))
				cpus[ncpu++] = i;

	char dir[] = "/tmp/mcc-bench-XXXXXX";
	if (!mkdtemp(dir)) {
		perror("microbench: mkdtemp");
		return 1;
	}
	if (module_dir && mcc_bench_write_inis(dir, module_dir) < 0) {
		perror("microbench: writing ini files");
		return 1;
	}

	/* Which arms can run: each module must load as itself. */
	for (unsigned i = 0; i < MB_NARMS; i++) {
		const struct mb_arm *a = &mb_arms[i];
		mb_arm_on[i] = mb_in_list(arm_list, a->name);
		mb_avail[i] = 1;
		if (a->mode) {
			struct mcc_bench_inst b;
			char err[512];
			if (!module_dir) {
				fprintf(stderr, "microbench: %s skipped: no module dir (-m or "
				                "MCC_TEST_MODULE_DIR)\n", a->name);
				mb_avail[i] = 0;
			} else if (mcc_bench_inst_open(&b, dir, module_dir, a->mode, a->module, 1, 1,
			                               err, sizeof(err)) < 0) {
				fprintf(stderr, "microbench: %s unavailable: %s\n", a->name, err);
				mb_avail[i] = 0;
			} else {
				mcc_bench_inst_close(&b, NULL);
			}
		}
	}
	for (unsigned c = 0; c < MB_NCFGS; c++)
		mb_cfg_on[c] = mb_in_list(cfg_list, mb_cfgs[c].name);

	pthread_barrier_init(&mb.start, NULL, MB_THREADS + 1);
	pthread_barrier_init(&mb.done, NULL, MB_THREADS + 1);
	pthread_t th[MB_THREADS];
	for (unsigned k = 0; k < MB_THREADS; k++)
		if (pthread_create(&th[k], NULL, mb_worker, (void *)(uintptr_t)k) != 0) {
			perror("microbench: pthread_create");
			return 1;
		}

	/* Calibrate the in-context work on the 1T CPU. */
	const struct mb_cfg *c1 = &mb_cfgs[0];
	mb.cpu[0] = ncpu > 1 ? cpus[1] : cpus[0];
	mb.cpu[1] = cpus[0];
	uint32_t probe_iters = 100, work_iters = 0;
	double best = 1e30;
	mb_lanes_reset(c1, probe_iters);
	for (int i = 0; i < 5; i++) {
		double ns = mb_run(mcc_bench_out_ctx, 100000, 1);
		if (ns < best)
			best = ns;
	}
	if (work_ns > 0)
		work_iters = (uint32_t)(probe_iters * work_ns / best + 0.5);

	FILE *out = NULL;
	if (out_path && !(out = fopen(out_path, "w"))) {
		perror(out_path);
		return 1;
	}

	printf("microbench: runs=%u pairs tight=%" PRIu64 " ctx=%" PRIu64
	       " slice=%u B; work %u steps (~%.0f ns target, %.3f ns/step); CPUs %d,%d; "
	       "pinning %s\n",
	       runs, n_tight, n_ctx, MCC_BENCH_SLICE, work_iters, work_ns, best / probe_iters,
	       cpus[0], cpus[1], mb_pinning ? "yes" : "no");
	if (out) {
		fprintf(out, "meta\truns\t%u\nmeta\tpairs_tight\t%" PRIu64 "\nmeta\tpairs_ctx\t%" PRIu64
		             "\nmeta\tslice_bytes\t%u\nmeta\twork_steps\t%u\nmeta\twork_target_ns\t%.0f\n"
		             "meta\tcpus\t%d,%d\n",
		        runs, n_tight, n_ctx, MCC_BENCH_SLICE, work_iters, work_ns, cpus[0], cpus[1]);
	}

	double t_start = mb_now();
	for (unsigned ci = 0; ci < MB_NCFGS; ci++) {
		const struct mb_cfg *c = &mb_cfgs[ci];
		if (!mb_cfg_on[ci])
			continue;
		if (c->nthreads == 1) {
			mb.cpu[0] = ncpu > 1 ? cpus[1] : cpus[0];
		} else {
			mb.cpu[0] = cpus[0];
			mb.cpu[1] = ncpu > 1 ? cpus[1] : cpus[0];
		}
		for (int ctx = 0; ctx < 2; ctx++) {
			uint64_t n = ctx ? n_ctx : n_tight;
			for (unsigned r = 0; r < runs; r++) {
				for (unsigned j = 0; j < MB_NARMS; j++) {
					unsigned i = (j + r) % MB_NARMS; /* rotate the start */
					if (!mb_arm_on[i] || !mb_avail[i])
						continue;
					double ns = 0;
					if (mb_one(c, &mb_arms[i], ctx, n, ctx ? work_iters : 0, dir,
					           module_dir, &ns) < 0) {
						mb_avail[i] = 0;
						continue;
					}
					mb_res[ci][ctx][i][r] = ns;
					if (out)
						fprintf(out, "raw\t%s\t%s\t%s\t%u\t%.4f\n", c->name,
						        mb_ctx_names[ctx], mb_arms[i].name, r, ns);
				}
			}
		}
	}
	double elapsed = (mb_now() - t_start) / 1e9;

	/* Summary: per arm, then paired ratios and differences per repeat. */
	int fl = mb_find("floor"), fa = mb_find("floor-add"), co = mb_find("compile-out");
	for (unsigned ci = 0; ci < MB_NCFGS; ci++) {
		if (!mb_cfg_on[ci])
			continue;
		for (int ctx = 0; ctx < 2; ctx++) {
			printf("\n%s %s (ns per pair; median [min..max] of %u runs)\n", mb_cfgs[ci].name,
			       mb_ctx_names[ctx], runs);
			for (unsigned i = 0; i < MB_NARMS; i++) {
				if (!mb_arm_on[i] || !mb_avail[i])
					continue;
				struct mb_stat s = mb_stats(mb_res[ci][ctx][i], runs);
				printf("  %-12s %9.3f [%.3f..%.3f]", mb_arms[i].name, s.med, s.min, s.max);
				if (out)
					fprintf(out, "sum\t%s\t%s\t%s\t%.4f\t%.4f\t%.4f\t%u\n",
					        mb_cfgs[ci].name, mb_ctx_names[ctx], mb_arms[i].name, s.med,
					        s.min, s.max, runs);
				double v[MB_MAX_RUNS];
				for (int b = 0; b < 2; b++) {
					int ref = b ? fa : fl;
					if ((int)i == fl || (int)i == fa || !mb_arm_on[ref] || !mb_avail[ref])
						continue;
					for (unsigned r = 0; r < runs; r++)
						v[r] = mb_res[ci][ctx][i][r] / mb_res[ci][ctx][ref][r];
					struct mb_stat q = mb_stats(v, runs);
					printf("   x %s %6.3f [%.3f..%.3f]", mb_arms[ref].name, q.med, q.min,
					       q.max);
					if (out)
						fprintf(out, "ratio\t%s\t%s\t%s/%s\t%.4f\t%.4f\t%.4f\t%u\n",
						        mb_cfgs[ci].name, mb_ctx_names[ctx], mb_arms[i].name,
						        mb_arms[ref].name, q.med, q.min, q.max, runs);
				}
				if ((int)i != co && (int)i != fl && (int)i != fa && mb_arm_on[co] && mb_avail[co]) {
					for (unsigned r = 0; r < runs; r++)
						v[r] = mb_res[ci][ctx][i][r] - mb_res[ci][ctx][co][r];
					struct mb_stat q = mb_stats(v, runs);
					printf("   - compile-out %+8.3f ns [%+.3f..%+.3f]", q.med, q.min, q.max);
					if (out)
						fprintf(out, "diff\t%s\t%s\t%s-compile-out\t%.4f\t%.4f\t%.4f\t%u\n",
						        mb_cfgs[ci].name, mb_ctx_names[ctx], mb_arms[i].name,
						        q.med, q.min, q.max, runs);
				}
				putchar('\n');
			}
		}
	}
	printf("\nmicrobench: %.1f s, %" PRIu64 " anomalies\n", elapsed, mb_anomalies);
	if (out) {
		fprintf(out, "meta\telapsed_s\t%.1f\nmeta\tanomalies\t%" PRIu64 "\nmeta\tpinning\t%s\n",
		        elapsed, mb_anomalies, mb_pinning ? "yes" : "no");
		fclose(out);
	}

	mb.job.quit = 1;
	pthread_barrier_wait(&mb.start);
	for (unsigned k = 0; k < MB_THREADS; k++)
		pthread_join(th[k], NULL);
	char ini[4200];
	for (unsigned i = 0; i < 3; i++) {
		static const char *const m[] = {"off", "observe", "enforce"};
		snprintf(ini, sizeof(ini), "%s/mcc-%s.ini", dir, m[i]);
		unlink(ini);
	}
	rmdir(dir);
	return mb_anomalies ? 3 : 0;
}
