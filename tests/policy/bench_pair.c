/* SPDX-License-Identifier: MIT */
/*
 * bench_pair.c - fast-path microbenchmark (not a test): ns per
 * try_acquire + release pair (ADMIT, then release all bytes) through the
 * aimd descriptor, against a bare two-domain atomic reservation (fetch_add on
 * two cache-line-separated counters, then fetch_sub on both) in the same run.
 * One thread, median of repeated runs.
 *
 *   bench_pair [-n pairs] [-r repeats] [-b slice_bytes] [-l max_lanes] [-s module.so]
 *
 * Without -s the descriptor linked into this program is used (the module
 * sources); with -s the module is dlopen'ed like the loader does.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mcc_policy_v1.h"

extern const struct mcc_policy_v1 mcc_test_aimd_v1;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t host_clock(void *arg)
{
	(void)arg;
	return now_ns();
}

static void host_log(void *arg, int level, const char *fmt, ...)
{
	(void)arg;
	(void)level;
	(void)fmt;
}

/* ------------------------------------------------------------ the floor */

struct floor_dom {
	alignas(64) _Atomic int64_t inflight;
	alignas(64) int64_t pad;
};

static struct floor_dom fdev, froute;

static void floor_pair(uint64_t bytes)
{
	atomic_fetch_add_explicit(&fdev.inflight, (int64_t)bytes, memory_order_relaxed);
	atomic_fetch_add_explicit(&froute.inflight, (int64_t)bytes, memory_order_relaxed);
	atomic_fetch_sub_explicit(&fdev.inflight, (int64_t)bytes, memory_order_relaxed);
	atomic_fetch_sub_explicit(&froute.inflight, (int64_t)bytes, memory_order_relaxed);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void *nop_thread(void *arg)
{
	return arg;
}

int main(int argc, char **argv)
{
	long n = 10000000, reps = 21;
	uint64_t bytes = 65536;
	uint32_t lanes = 64;
	const char *so = NULL;
	int opt;
	while ((opt = getopt(argc, argv, "n:r:b:l:s:")) != -1) {
		switch (opt) {
		case 'n':
			n = atol(optarg);
			break;
		case 'r':
			reps = atol(optarg);
			break;
		case 'b':
			bytes = strtoull(optarg, NULL, 0);
			break;
		case 'l':
			lanes = (uint32_t)atol(optarg);
			break;
		case 's':
			so = optarg;
			break;
		default:
			fprintf(stderr, "usage: %s [-n pairs] [-r repeats] [-b bytes] [-l lanes] [-s so]\n",
			        argv[0]);
			return 2;
		}
	}
	if (n <= 0 || reps <= 0 || reps > 1000)
		return 2;

	/* glibc multi-threaded mode, as in the engines (and in ccfloor) */
	pthread_t t;
	pthread_create(&t, NULL, nop_thread, NULL);
	pthread_join(t, NULL);
	cpu_set_t cs;
	CPU_ZERO(&cs);
	CPU_SET((int)(sysconf(_SC_NPROCESSORS_ONLN) - 1), &cs);
	sched_setaffinity(0, sizeof(cs), &cs);

	const struct mcc_policy_v1 *ops = &mcc_test_aimd_v1;
	if (so) {
		void *dl = dlopen(so, RTLD_NOW | RTLD_LOCAL);
		ops = dl ? dlsym(dl, MCC_POLICY_V1_SYMBOL) : NULL;
		if (!ops) {
			fprintf(stderr, "cannot load %s: %s\n", so, dlerror());
			return 1;
		}
	}
	/* keep the compiler from devirtualising the calls */
	const struct mcc_policy_v1 *volatile vops = ops;
	ops = vops;

	struct mcc_host_v1 host = { MCC_POLICY_ABI_V1, sizeof(host), "bench", 0, host_clock, NULL,
		                    host_log, NULL, lanes, 0 };
	struct mcc_config_v1 cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.struct_size = sizeof(cfg);
	cfg.mode = MCC_MODE_ENFORCE; /* all other fields: module defaults */
	struct mcc_init_out_v1 out = { sizeof(out), 0, 0, 0 };
	void *ctx;
	if (ops->init(&host, &cfg, &out, &ctx) != 0)
		return 1;
	struct mcc_lane_desc_v1 ld = { sizeof(ld), 0, MCC_LANE_POST_POLL, 0 };
	mcc_lane *lane;
	struct mcc_device_desc_v1 dd = { sizeof(dd), 0, "mlx5_0", 1, 0, 0, 0 };
	mcc_device *dev;
	struct mcc_route_desc_v1 rd = { sizeof(rd), 1, 0, 1, 1, "peer:1@mlx5_0", 1, 0 };
	mcc_route *route;
	if (ops->lane_open(ctx, &ld, &lane) || ops->device_open(ctx, &dd, &dev) ||
	    ops->route_open(ctx, dev, &rd, &route))
		return 1;
	struct mcc_task_ref_v1 task = { 1, 1, 0, 0 };
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;

	/* warm up and let two epochs see traffic (credit mode needs a busy
	 * epoch; a real monitor ticks every epoch_us) */
	for (int e = 0; e < 3; e++) {
		for (long i = 0; i < 100000; i++) {
			if (ops->try_acquire(lane, route, bytes, 1, &task, &p) != MCC_ADMIT)
				return 1;
			ops->release(lane, &p, bytes, MCC_REL_NOT_POSTED);
		}
		ops->tick(ctx, now_ns());
	}

	double *vf = calloc((size_t)reps, sizeof(double)), *vp = calloc((size_t)reps, sizeof(double));
	double *vc = calloc((size_t)reps, sizeof(double));
	struct mcc_completion_v1 wc = { sizeof(wc), 0, 0, 1, bytes, 0, 0, 0, 0 };
	long refused = 0;
	for (long r = 0; r < reps; r++) {
		uint64_t t0 = now_ns();
		for (long i = 0; i < n; i++) {
			floor_pair(bytes);
			__asm__ __volatile__("" ::: "memory");
		}
		uint64_t t1 = now_ns();
		for (long i = 0; i < n; i++) {
			if (ops->try_acquire(lane, route, bytes, 1, &task, &p) != MCC_ADMIT)
				refused++;
			ops->release(lane, &p, bytes, MCC_REL_NOT_POSTED);
		}
		uint64_t t2 = now_ns();
		for (long i = 0; i < n; i++) {
			if (ops->try_acquire(lane, route, bytes, 1, &task, &p) != MCC_ADMIT)
				refused++;
			ops->on_completion(lane, &p, &wc);
		}
		uint64_t t3 = now_ns();
		vf[r] = (double)(t1 - t0) / (double)n;
		vp[r] = (double)(t2 - t1) / (double)n;
		vc[r] = (double)(t3 - t2) / (double)n;
	}
	double mf = median(vf, (int)reps), mp = median(vp, (int)reps), mc = median(vc, (int)reps);
	printf("bench_pair: %ld pairs x %ld repeats, slice %llu B, max_lanes %u, %s\n", n, reps,
	       (unsigned long long)bytes, lanes, so ? so : "linked descriptor");
	printf("  floor (2x fetch_add + 2x fetch_sub, two lines): %6.2f ns/pair  [min %.2f max %.2f]\n",
	       mf, vf[0], vf[reps - 1]);
	printf("  aimd try_acquire + release:                     %6.2f ns/pair  [min %.2f max %.2f]\n",
	       mp, vp[0], vp[reps - 1]);
	printf("  aimd try_acquire + on_completion(SUCCESS):      %6.2f ns/pair  [min %.2f max %.2f]\n",
	       mc, vc[0], vc[reps - 1]);
	printf("  ratio acquire+release / floor: %.3f   acquire+completion / floor: %.3f\n", mp / mf,
	       mc / mf);
	if (refused)
		printf("  WARNING: %ld refusals\n", refused);
	ops->route_close(ctx, route);
	ops->device_close(ctx, dev);
	ops->lane_close(ctx, lane);
	ops->fini(ctx);
	free(vf);
	free(vp);
	free(vc);
	return refused ? 1 : 0;
}
