/* SPDX-License-Identifier: MIT */
/* slice_on.c - the engine loop with the controller hooks compiled in. */
#define MCC_ENABLE_ADAPTIVE_CC 1
#define MCC_NO_LAYOUT_MARKER 1 /* ON and OFF loops share this benchmark on purpose */
#include "slice_loop.h"

#if !MCC_CC_COMPILED_IN
#error "slice_on.c must compile the hooks in"
#endif

uint64_t mcc_bench_on_tight_rel(struct mcc_bench_lane *l, uint64_t n)
{
	return mcc_bench_slice_loop(l, n, 0, MCC_BENCH_RELEASE);
}

uint64_t mcc_bench_on_tight_wc(struct mcc_bench_lane *l, uint64_t n)
{
	return mcc_bench_slice_loop(l, n, 0, MCC_BENCH_COMPLETE);
}

uint64_t mcc_bench_on_ctx_rel(struct mcc_bench_lane *l, uint64_t n)
{
	return mcc_bench_slice_loop(l, n, 1, MCC_BENCH_RELEASE);
}

uint64_t mcc_bench_on_ctx_wc(struct mcc_bench_lane *l, uint64_t n)
{
	return mcc_bench_slice_loop(l, n, 1, MCC_BENCH_COMPLETE);
}
