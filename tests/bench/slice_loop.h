/* SPDX-License-Identifier: MIT */
/*
 * slice_loop.h - the engine's per-slice loop, written once with the hook
 * macros of mcc_hooks.h. Included by slice_on.c (MCC_ENABLE_ADAPTIVE_CC=1)
 * and slice_out.c (switch off): with the switch off, MCC_HOOK(...) is empty
 * and the loop is the engine's loop body alone, with no call at all.
 */
#ifndef MCC_BENCH_SLICE_LOOP_H
#define MCC_BENCH_SLICE_LOOP_H

#include "mcc_hooks.h"
#include "bench.h"

/* Loop body: in an engine, try_acquire sits just before ibv_post_send and
 * the settling call runs when the WC is polled (or the WR is not posted).
 * `ctx` (work or not) and `settle` are compile-time constants at each use,
 * so every generated loop is straight-line. */
static inline __attribute__((always_inline)) uint64_t
mcc_bench_slice_loop(struct mcc_bench_lane *l, uint64_t n, const int ctx, const int settle)
{
	uint64_t posted = 0, x = l->sink;
	MCC_HOOK(const struct mcc_policy_v1 *ops = l->ops; mcc_lane *lane = l->lane;
	         mcc_route *route = l->route; struct mcc_permit_v1 *permit = &l->permit;
	         struct mcc_task_ref_v1 task = {1, 0, 0, 0};
	         struct mcc_completion_v1 wc = {sizeof(struct mcc_completion_v1), 0 /* IBV_WC_SUCCESS */,
	                                        0, l->generation, MCC_BENCH_SLICE, 0, 0, 1,
	                                        0 /* IBV_WC_SEND */};)
	(void)settle;
	for (uint64_t i = 0; i < n; i++) {
		MCC_HOOK(int admitted = 0; if (l->cc_on) {
			task.task_id = i >> 4; /* 16 slices per task: a 1 MiB transfer */
			int d = ops->try_acquire(lane, route, MCC_BENCH_SLICE, l->generation, &task,
			                         permit);
			if (d == MCC_ADMIT)
				admitted = 1;
			else {
				l->refused++;
				if (d > 0)
					continue; /* DEFER/AVOID: leave it queued */
			}
		})
		if (ctx)
			x = mcc_bench_work(l, x, i);
		else
			__asm__ volatile("" ::: "memory");
		posted++;
		MCC_HOOK(if (admitted) {
			if (settle == MCC_BENCH_COMPLETE)
				ops->on_completion(lane, permit, &wc);
			else
				ops->release(lane, permit, MCC_BENCH_SLICE, MCC_REL_NOT_POSTED);
		})
	}
	l->sink = x;
	return posted;
}

#endif /* MCC_BENCH_SLICE_LOOP_H */
