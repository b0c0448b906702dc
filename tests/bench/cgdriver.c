/* SPDX-License-Identifier: MIT */
/*
 * cgdriver.c - performs N healthy-path pairs of one arm, single-threaded, for
 * instruction counting under valgrind --tool=callgrind. Counting is confined
 * to mcc_bench_cg_measured() (--toggle-collect), and cgcount.sh subtracts a
 * run of N from a run of 2N, so setup, loading and one-time effects cancel.
 * Instructions, never time.
 *
 * Usage: cgdriver ARM N [MODULE_DIR]
 *   ARM: floor floor-add compile-out off null-rel null-wc observe-rel observe-wc
 *        aimd-rel aimd-wc aimd-tick-rel aimd-tick-wc (after one tick())
 *        aimd-cong-rel aimd-cong-wc (a CONGESTED route, mcc_bench_rnr)
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

struct cg_arm {
	const char *name;
	mcc_bench_run_fn fn;
	const char *mode;
	const char *module;
	int cc_on;
	int tick;
};

static const struct cg_arm cg_arms[] = {
	{"floor", mcc_bench_floor_tight, NULL, NULL, 0, 0},
	{"floor-add", mcc_bench_floor_add_tight, NULL, NULL, 0, 0},
	{"compile-out", mcc_bench_out_tight, NULL, NULL, 0, 0},
	{"off", mcc_bench_on_tight_rel, "off", "null", 0, 0},
	{"null-rel", mcc_bench_on_tight_rel, "off", "null", 1, 0},
	{"null-wc", mcc_bench_on_tight_wc, "off", "null", 1, 0},
	{"observe-rel", mcc_bench_on_tight_rel, "observe", "observe", 1, 0},
	{"observe-wc", mcc_bench_on_tight_wc, "observe", "observe", 1, 0},
	{"aimd-rel", mcc_bench_on_tight_rel, "enforce", "aimd", 1, 0},
	{"aimd-wc", mcc_bench_on_tight_wc, "enforce", "aimd", 1, 0},
	{"aimd-tick-rel", mcc_bench_on_tight_rel, "enforce", "aimd", 1, 1},
	{"aimd-tick-wc", mcc_bench_on_tight_wc, "enforce", "aimd", 1, 1},
	{"aimd-cong-rel", mcc_bench_on_tight_rel, "enforce", "aimd", 1, 2},
	{"aimd-cong-wc", mcc_bench_on_tight_wc, "enforce", "aimd", 1, 2},
};

/* The only function callgrind counts (and everything it calls). */
uint64_t mcc_bench_cg_measured(mcc_bench_run_fn fn, struct mcc_bench_lane *l, uint64_t n);
__attribute__((noinline)) uint64_t mcc_bench_cg_measured(mcc_bench_run_fn fn,
                                                         struct mcc_bench_lane *l, uint64_t n)
{
	return fn(l, n);
}

static struct mcc_bench_lane cg_lane;
static struct mcc_bench_floor cg_floor;

int main(int argc, char **argv)
{
	const struct cg_arm *a = NULL;
	const char *module_dir = argc > 3 ? argv[3] : getenv("MCC_TEST_MODULE_DIR");
	struct mcc_bench_inst b;
	char err[512];

	if (argc < 3) {
		fprintf(stderr, "usage: cgdriver ARM N [MODULE_DIR]\n");
		return 2;
	}
	for (size_t i = 0; i < sizeof(cg_arms) / sizeof(cg_arms[0]); i++)
		if (strcmp(cg_arms[i].name, argv[1]) == 0)
			a = &cg_arms[i];
	uint64_t n = strtoull(argv[2], NULL, 10);
	if (!a || n == 0) {
		fprintf(stderr, "cgdriver: unknown arm '%s' or bad N\n", argv[1]);
		return 2;
	}
	struct mcc_permit_v1 init = MCC_PERMIT_INIT;
	cg_lane.permit = init;
	cg_lane.generation = 1;
	cg_lane.floor = &cg_floor;
	cg_floor.bound = MCC_BENCH_FLOOR_BOUND;
	if (a->mode) {
		char dir[] = "/tmp/mcc-cg-XXXXXX";
		if (!module_dir) {
			fprintf(stderr, "cgdriver: no module dir\n");
			return 2;
		}
		if (!mkdtemp(dir) || mcc_bench_write_inis(dir, module_dir) < 0) {
			perror("cgdriver: temp ini");
			return 1;
		}
		int rc = mcc_bench_inst_open(&b, dir, module_dir, a->mode, a->module, 1, 1, err,
		                             sizeof(err));
		char ini[4200];
		static const char *const m[] = {"off", "observe", "enforce"};
		for (int i = 0; i < 3; i++) {
			snprintf(ini, sizeof(ini), "%s/mcc-%s.ini", dir, m[i]);
			unlink(ini);
		}
		rmdir(dir);
		if (rc < 0) {
			fprintf(stderr, "cgdriver: %s: %s\n", a->name, err);
			return 1;
		}
		mcc_bench_lane_bind(&cg_lane, &b, 0, 0, a->cc_on);
		if (a->tick) /* the bulk steady state first (windows grown) */
			mcc_bench_warm(&b, &cg_lane);
		/* busy epochs, then a tick each: credit mode if the policy uses it
		 * (tick 1), a CONGESTED route (tick 2: an RNR completion per epoch) */
		for (int e = 0; e < a->tick; e++) {
			struct timespec ts;
			a->fn(&cg_lane, 1000);
			if (a->tick == 2)
				mcc_bench_rnr(&cg_lane);
			clock_gettime(CLOCK_MONOTONIC, &ts);
			b.ops->tick(b.ctx, (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec);
		}
		if (a->tick)
			a->fn(&cg_lane, 1000);
		if (a->tick == 2 && mcc_bench_route_state(&b, &cg_lane) != MCC_PATH_CONGESTED) {
			fprintf(stderr, "cgdriver: %s: the route is not CONGESTED\n", a->name);
			return 3;
		}
	}
	uint64_t posted = mcc_bench_cg_measured(a->fn, &cg_lane, n);
	uint64_t left = 0;
	if (a->mode)
		mcc_bench_inst_close(&b, &left);
	printf("cgdriver: %s n=%" PRIu64 " posted=%" PRIu64 " refused=%" PRIu64 " inflight=%" PRIu64
	       "\n",
	       a->name, n, posted, cg_lane.refused, left);
	return (cg_lane.refused || left || posted != n) ? 3 : 0;
}
