/* SPDX-License-Identifier: MIT */
/*
 * floor.c - the physical floor of any controller that reserves a slice in two
 * shared domains (each counter alone on its cache line):
 *
 *   floor      a bare two-domain atomic reservation: fetch_add on the device
 *              counter, test the value it returned against the bound (or an
 *              empty domain), the same on the route counter, then fetch_sub
 *              on both. Four locked read-modify-writes, two of them returning
 *              their value (`lock xadd`): the cheapest reservation that can
 *              refuse (the "xadd variant" of a reservation).
 *   floor-add  the four locked operations alone, no result used (`lock add`
 *              x4): a counter, not a reservation; the lower bound of the
 *              lower bound, reported beside it.
 *
 * The refusal branch is never taken here (the bound is far above one slice).
 */
#include <stdatomic.h>

#include "bench.h"

static inline __attribute__((always_inline)) int
mcc_bench_floor_take(struct mcc_bench_floor_dom *d, uint64_t bound)
{
	uint64_t old = atomic_fetch_add_explicit(&d->inflight, MCC_BENCH_SLICE, memory_order_acq_rel);
	if (__builtin_expect(old + MCC_BENCH_SLICE <= bound || old == 0, 1))
		return 1;
	atomic_fetch_sub_explicit(&d->inflight, MCC_BENCH_SLICE, memory_order_release);
	return 0;
}

static inline __attribute__((always_inline)) uint64_t
mcc_bench_floor_loop(struct mcc_bench_lane *l, uint64_t n, const int ctx, const int check)
{
	struct mcc_bench_floor *f = l->floor;
	uint64_t x = l->sink;
	for (uint64_t i = 0; i < n; i++) {
		if (check) {
			uint64_t bound = f->bound;
			if (!mcc_bench_floor_take(&f->dev, bound)) {
				l->refused++;
				continue;
			}
			if (!mcc_bench_floor_take(&f->route, bound)) {
				atomic_fetch_sub_explicit(&f->dev.inflight, MCC_BENCH_SLICE,
				                          memory_order_release);
				l->refused++;
				continue;
			}
		} else {
			atomic_fetch_add_explicit(&f->dev.inflight, MCC_BENCH_SLICE,
			                          memory_order_acq_rel);
			atomic_fetch_add_explicit(&f->route.inflight, MCC_BENCH_SLICE,
			                          memory_order_acq_rel);
		}
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
	return mcc_bench_floor_loop(l, n, 0, 1);
}

uint64_t mcc_bench_floor_ctx(struct mcc_bench_lane *l, uint64_t n)
{
	return mcc_bench_floor_loop(l, n, 1, 1);
}

uint64_t mcc_bench_floor_add_tight(struct mcc_bench_lane *l, uint64_t n)
{
	return mcc_bench_floor_loop(l, n, 0, 0);
}

uint64_t mcc_bench_floor_add_ctx(struct mcc_bench_lane *l, uint64_t n)
{
	return mcc_bench_floor_loop(l, n, 1, 0);
}
