/* SPDX-License-Identifier: MIT */
/*
 * bench.h - shared pieces of the controller microbenchmark (microbench.c) and
 * the instruction-count driver (cgdriver.c). Benchmarks, not tests: nothing
 * here asserts on time.
 *
 * One "pair" is what an engine does per slice on the healthy path: the
 * admission hook just before ibv_post_send, then one settling call for the
 * slice's bytes (release(NOT_POSTED) or on_completion(SUCCESS)). The loops
 * that perform pairs live in separate translation units:
 *   slice_on.c   the engine loop with the hooks compiled in (MCC_HOOK on);
 *   slice_out.c  the same loop with the hooks compiled out (MCC_HOOK off);
 *   floor.c      the physical floor: a bare two-domain atomic reservation
 *                (and the four locked operations alone, "floor-add").
 * so that the compiled-in and compiled-out arms run in one process (the
 * mcc_hooks.h layout marker is suppressed for exactly these objects).
 */
#ifndef MCC_BENCH_H
#define MCC_BENCH_H

#include <stdint.h>

#include "mcc_loader.h"

#define MCC_BENCH_SLICE (64u * 1024u) /* bytes per slice, as TE/TENT */
#define MCC_BENCH_WQES 64u            /* ring of simulated 64-byte WQEs */
#define MCC_BENCH_CACHELINE 64

/* One domain of the floor: a byte counter alone on its cache line. */
struct mcc_bench_floor_dom {
	_Alignas(MCC_BENCH_CACHELINE) _Atomic uint64_t inflight;
	char pad[MCC_BENCH_CACHELINE - sizeof(uint64_t)];
};

/* The floor's two domains (device, route), on separate cache lines. */
struct mcc_bench_floor {
	struct mcc_bench_floor_dom dev;
	struct mcc_bench_floor_dom route;
	uint64_t bound; /* the reservation's bound (MCC_BENCH_FLOOR_BOUND) */
};

/* Far above one slice: the floor's refusal branch is never taken. */
#define MCC_BENCH_FLOOR_BOUND (1ull << 40)

enum mcc_bench_settle {
	MCC_BENCH_RELEASE = 0,  /* release(all bytes, MCC_REL_NOT_POSTED) */
	MCC_BENCH_COMPLETE = 1, /* on_completion(SUCCESS): the real path */
};

/* What one engine worker thread (one lane) holds. Identical layout in every
 * translation unit (the ON/OFF switch changes the loops, not this struct). */
struct mcc_bench_lane {
	_Alignas(MCC_BENCH_CACHELINE) const struct mcc_policy_v1 *ops;
	mcc_lane *lane;
	mcc_route *route;
	struct mcc_bench_floor *floor;
	uint32_t generation;
	int cc_on;           /* the engine's runtime switch: mode != off */
	uint32_t work_iters; /* in-context work per slice (LCG steps) */
	uint32_t reserved0;
	uint64_t refused;    /* try_acquire results other than ADMIT */
	uint64_t sink;       /* keeps the simulated work alive */
	struct mcc_permit_v1 permit;
	_Alignas(MCC_BENCH_CACHELINE) uint64_t wqe[MCC_BENCH_WQES][8];
};

/* A loop performing n pairs on one lane; returns the slices posted. */
typedef uint64_t (*mcc_bench_run_fn)(struct mcc_bench_lane *l, uint64_t n);

/* ~150 ns of per-WR engine work in context (measured on this machine): a dependent
 * multiply-add chain of work_iters steps, then a 64-byte "WQE" write. */
static inline uint64_t mcc_bench_work(struct mcc_bench_lane *l, uint64_t x, uint64_t i)
{
	uint32_t k = l->work_iters;
	for (uint32_t j = 0; j < k; j++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	uint64_t *w = l->wqe[i & (MCC_BENCH_WQES - 1)];
	w[0] = x;
	w[1] = i;
	w[2] = MCC_BENCH_SLICE;
	w[3] = x ^ i;
	return x;
}

/* slice_on.c: hooks compiled in. tight = no work; ctx = with work. */
uint64_t mcc_bench_on_tight_rel(struct mcc_bench_lane *l, uint64_t n);
uint64_t mcc_bench_on_tight_wc(struct mcc_bench_lane *l, uint64_t n);
uint64_t mcc_bench_on_ctx_rel(struct mcc_bench_lane *l, uint64_t n);
uint64_t mcc_bench_on_ctx_wc(struct mcc_bench_lane *l, uint64_t n);
/* slice_out.c: hooks compiled out. */
uint64_t mcc_bench_out_tight(struct mcc_bench_lane *l, uint64_t n);
uint64_t mcc_bench_out_ctx(struct mcc_bench_lane *l, uint64_t n);
/* floor.c: fetch_add on both domains (each result tested against the
 * bound), then fetch_sub on both; floor_add: the same without the test. */
uint64_t mcc_bench_floor_tight(struct mcc_bench_lane *l, uint64_t n);
uint64_t mcc_bench_floor_ctx(struct mcc_bench_lane *l, uint64_t n);
uint64_t mcc_bench_floor_add_tight(struct mcc_bench_lane *l, uint64_t n);
uint64_t mcc_bench_floor_add_ctx(struct mcc_bench_lane *l, uint64_t n);

/* bench_setup.c: a controller instance loaded through the real loader from
 * an ini file written to a temporary directory. */
struct mcc_bench_inst {
	mcc_instance *inst;
	const struct mcc_policy_v1 *ops;
	void *ctx;
	mcc_device *dev[2];
	mcc_route *route[2];
	mcc_lane *lane[2];
	unsigned ndev;
	unsigned nlanes;
};

/* Writes <dir>/mcc-<mode>.ini for off, observe and enforce. 0 or -errno. */
int mcc_bench_write_inis(const char *dir, const char *module_dir);
/* Acquire the instance for `mode` ("off", "observe", "enforce"), open
 * `ndev` devices with one route each and `nlanes` lanes. Fails (-EPROTO)
 * when the loader fell back to another module than `want_name`. */
int mcc_bench_inst_open(struct mcc_bench_inst *b, const char *dir, const char *module_dir,
                        const char *mode, const char *want_name, unsigned ndev, unsigned nlanes,
                        char *err, size_t errlen);
/* Grow the lane's route and device windows as a bulk engine's are (fill,
 * tick, complete, tick) until they stop growing; returns the route window. */
uint64_t mcc_bench_warm(const struct mcc_bench_inst *b, struct mcc_bench_lane *l);
/* Sum of inflight bytes over every open domain (after lanes closed). */
void mcc_bench_inst_close(struct mcc_bench_inst *b, uint64_t *leftover_inflight);
/* Point lane `l` at the instance (lane k, route r). */
void mcc_bench_lane_bind(struct mcc_bench_lane *l, const struct mcc_bench_inst *b, unsigned k,
                         unsigned r, int cc_on);
/* One RNR_RETRY_EXC_ERR completion on the route of lane `l` (receiver
 * pressure: that route only, RFC WC matrix). Two busy epochs with one each
 * make the route CONGESTED (default high_pressure_epochs): it admits
 * exactly, its device stays HEALTHY in lane credit (the aimd-cong arms). */
void mcc_bench_rnr(struct mcc_bench_lane *l);
/* The route state of lane `l` (enum mcc_path_state), UINT32_MAX on error. */
uint32_t mcc_bench_route_state(const struct mcc_bench_inst *b, const struct mcc_bench_lane *l);

#endif /* MCC_BENCH_H */
