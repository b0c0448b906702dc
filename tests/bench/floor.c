/* SPDX-License-Identifier: MIT */
/*
 * floor.c - the physical floor of any controller that reserves a slice in two
 * shared domains: fetch_add on the device counter and on the route counter
 * (each alone on its cache line), then fetch_sub on both. Four locked
 * read-modify-writes per pair, no window check, nothing else.
 */
#include <stdatomic.h>

#include "bench.h"

static inline __attribute__((always_inline)) uint64_t
mcc_bench_floor_loop(struct mcc_bench_lane *l, uint64_t n, const int ctx)
{
	struct mcc_bench_floor *f = l->floor;
	uint64_t x = l->sink;
	for (uint64_t i = 0; i < n; i++) {
		atomic_fetch_add_explicit(&f->dev.inflight, MCC_BENCH_SLICE, memory_order_acq_rel);
		atomic_fetch_add_explicit(&f->route.inflight, MCC_BENCH_SLICE, memory_order_acq_rel);
		if (ctx)
			x = mcc_bench_work(l, x, i);
		else
			__asm__ volatile("" ::: "memory");
		atomic_fetch_sub_explicit(&f->dev.inflight, MCC_BENCH_SLICE, memory_order_release);
		atomic_fetch_sub_explicit(&f->route.inflight, MCC_BENCH_SLICE, memory_order_release);
	}
	l->sink = x;
	return n;
}

uint64_t mcc_bench_floor_tight(struct mcc_bench_lane *l, uint64_t n)
{
	return mcc_bench_floor_loop(l, n, 0);
}

uint64_t mcc_bench_floor_ctx(struct mcc_bench_lane *l, uint64_t n)
{
	return mcc_bench_floor_loop(l, n, 1);
}
