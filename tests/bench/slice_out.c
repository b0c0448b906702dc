/* SPDX-License-Identifier: MIT */
/* slice_out.c - the same engine loop with the controller hooks compiled out. */
#undef MCC_ENABLE_ADAPTIVE_CC
#define MCC_NO_LAYOUT_MARKER 1 /* ON and OFF loops share this benchmark on purpose */
#include "slice_loop.h"

#if MCC_CC_COMPILED_IN
#error "slice_out.c must compile the hooks out"
#endif

uint64_t mcc_bench_out_tight(struct mcc_bench_lane *l, uint64_t n)
{
	return mcc_bench_slice_loop(l, n, 0, MCC_BENCH_RELEASE);
}

uint64_t mcc_bench_out_ctx(struct mcc_bench_lane *l, uint64_t n)
{
	return mcc_bench_slice_loop(l, n, 1, MCC_BENCH_RELEASE);
}
