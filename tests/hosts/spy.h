/* SPDX-License-Identifier: MIT */
/* spy.h - the counters the spy policy module (spy.c) exports as mcc_spy; the
 * test programs find the symbol with dlsym and read and program it. */
#ifndef MCC_TEST_SPY_H
#define MCC_TEST_SPY_H
#include "mcc_policy_v1.h"

#include <stdatomic.h>

struct mcc_spy {
	_Atomic uint64_t acquire, admit, defer, avoid, release, completion, progress, async, signal,
	    tick, task_query, batch_free, route_open, route_rebind, device_open, lane_open;
	_Atomic int64_t live_bytes;
	_Atomic uint64_t over_settle;
	_Atomic uint64_t sig_kind[MCC_SIG_KIND_COUNT_];
	_Atomic uint64_t async_type[32];
	_Atomic uint64_t wc_status[32];
	/* programmable: DEFER the first `defer_first` acquires; AVOID every
	 * route whose peer path ends with avoid_suffix */
	_Atomic uint64_t defer_first;
	char avoid_suffix[16];
	_Atomic uint32_t last_generation;
	_Atomic uint64_t last_base_rtt_ns; /* route_open: the base RTT the host stated */
	/* programmable subscriptions: signal kinds NOT subscribed, and no
	 * async events; what the host declared and lane ids beyond it */
	_Atomic uint64_t sig_unsubscribed;
	_Atomic int no_async;
	_Atomic uint32_t max_lanes;
	_Atomic uint64_t lane_over;
	_Atomic uint64_t sig_unwanted; /* delivered although not subscribed */
	_Atomic uint64_t async_unwanted;
	/* try_acquire_qos (ABI 1.2): calls and admissions per class; DEFER
	 * every LOW slice until `defer_low_until_high` HIGH slices were
	 * admitted (a deferred LOW slice must not hold a HIGH one back) */
	_Atomic uint64_t qos_acquire[MCC_QOS_CLASS_COUNT_], qos_admit[MCC_QOS_CLASS_COUNT_];
	_Atomic uint64_t defer_low_until_high;
	_Atomic uint64_t low_deferred_after_high; /* LOW refusals once HIGH was admitted */
};
#endif
