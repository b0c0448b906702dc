/* SPDX-License-Identifier: MIT */
/*
 * engine_internal.h - private to the engine SDK (engine.c, engine_route.c);
 * never installed. The public contract is mcc_engine.h.
 */
#ifndef MCC_ENGINE_INTERNAL_H
#define MCC_ENGINE_INTERNAL_H
/* C11 only (stdatomic); empty for the C++ standalone-header check. */
#if !defined(__cplusplus)

#include "mcc_internal.h"
MCC_EXPORTED_BEGIN
#include "mcc_engine.h"
MCC_EXPORTED_END

#include <pthread.h>
#include <stdatomic.h>

/* A small chained map keyed by two 64-bit words (slow paths only). */
#include "engine_map.h"

/* What the engines sharing one policy instance share: the tick claim and
 * the room sequence. One per instance, reference counted under the SDK's
 * process mutex. */
struct mcc_engine_hub {
	struct mcc_engine_hub *next;
	const mcc_instance *inst;
	unsigned refs;
	const struct mcc_policy_v1 *ops;
	void *ctx;
	uint64_t epoch_ns;
	_Alignas(64) _Atomic uint64_t due; /* UINT64_MAX: a tick is running */
	_Alignas(64) _Atomic uint32_t room_seq; /* the futex word */
	_Atomic uint32_t parked;
	_Atomic uint64_t ticks, wakes, waits;
};

struct mcc_engine_route;

/* Handle magics: an engine or route whose magic is not its LIVE value is
 * closed (DEAD) or not one of ours. */
#define MCC_ENG_MAGIC_LIVE 0x6d6363656e67314cull  /* "mccneg1L" */
#define MCC_ENG_MAGIC_DEAD 0x6d6363656e673144ull
#define MCC_ROUTE_MAGIC_LIVE 0x6d6363726f75314cull
#define MCC_ROUTE_MAGIC_DEAD 0x6d6363726f753144ull
/* Freed routes whose memory an engine keeps (magic DEAD) so a put or call
 * too many on them is answered -EBADF: the newest this many. */
#define MCC_ENG_ROUTE_GRAVE 64u

struct mcc_engine {
	_Atomic uint64_t magic; /* first: MCC_ENG_MAGIC_LIVE while open */
	struct mcc_engine *reg_next; /* the process's open engines (engine.c, g_mu) */
	mcc_instance *inst;
	const struct mcc_policy_v1 *ops;
	void *ctx;
	struct mcc_engine_hub *hub;
	uint64_t sig_mask;
	int want_async;
	int qos; /* [engine] qos = on: mcc_engine_try_acquire_qos passes the class */
	uint64_t base_rtt_ns; /* [engine] base_rtt_us, ns (0: unset) */
	void (*log)(void *, int, const char *, ...);
	void *log_arg;
	/* tick thread (MCC_ENGINE_TICK_THREAD) */
	int thr_on, thr_stop;
	pthread_t thr;
	pthread_mutex_t thr_mu;
	pthread_cond_t thr_cv;
	/* routes by key (engine_route.c); lock order: rt_mu, then as_mu */
	pthread_mutex_t rt_mu;
	struct mcc_engine_route *routes[MCC_ENG_BUCKETS];
	uint64_t next_route_id;
	uint64_t routes_open;
	/* every live route, published or not, so close reclaims them all
	 * (rt_mu); the last MCC_ENG_ROUTE_GRAVE freed ones, kept DEAD */
	struct mcc_engine_route *all;
	struct mcc_engine_route *grave[MCC_ENG_ROUTE_GRAVE];
	unsigned grave_next;
	/* (dev, qp_num) -> route (referenced), v = generation; (dev, cq_key) -> id */
	pthread_mutex_t as_mu;
	struct mcc_eng_map qps, cqs;
	uint32_t next_cq_id;
	/* live batch ids */
	pthread_mutex_t b_mu;
	struct mcc_eng_map batches;
	_Atomic uint32_t lanes_open;
	_Atomic uint64_t async_delivered, async_dropped, batch_double_free, batch_reused;
	/* devices of mcc_engine_device_open (engine_device.c); lock order:
	 * dv_mu, then the policy's own locks */
	pthread_mutex_t dv_mu;
	struct mcc_engine_dev *devs;
	uint32_t ndevs, cap_devs;
	/* routes of mcc_engine_stat_route_add (engine_stat.c), under dv_mu */
	struct mcc_eng_map xroutes;
	uint32_t nxroutes;
	/* the live view (engine_stat.c) */
	char name[32];               /* the loader opts' engine name, sanitised */
	struct mcc_engine_stat *stat; /* NULL: stat = off (or its file failed) */
};

/* A device of mcc_engine_device_open. */
struct mcc_engine_dev {
	mcc_device *dev;
	uint32_t device_id;
	uint64_t flags, link_rate_bps;
	char name[64];
};

/* engine_route.c: drop every route, QP and CQ of `e` (engine close). */
MCC_HIDDEN void mcc__engine_routes_fini(mcc_engine *e);

/* engine_route.c: every published route of `e`, each referenced (the
 * caller puts it), with what the live view shows of it. Returns the count
 * (0: *out NULL) or -ENOMEM. */
struct mcc__route_view {
	mcc_engine_route *r;
	mcc_route *cc;
	mcc_device *dev;
	uint64_t id;
	uint32_t key_len;
	char peer[128];
};
MCC_HIDDEN int mcc__engine_routes_view(mcc_engine *e, struct mcc__route_view **out);
/* engine_route.c: a key as the live view shows it (text, else 0x hex; cut
 * with "..."), NUL-terminated in buf. */
MCC_HIDDEN void mcc__route_key_text(const void *key, size_t klen, char *buf, size_t len);

/* engine_device.c: close every device left open (engine close). */
MCC_HIDDEN void mcc__engine_devices_fini(mcc_engine *e);

/* engine_stat.c: the live view's file and its publishing thread. open:
 * after the instance is acquired (nothing when stat = off; a failure is a
 * warning); close: stops the thread and removes the file, before routes
 * and devices are torn down. */
MCC_HIDDEN void mcc__engine_stat_open(mcc_engine *e);
MCC_HIDDEN void mcc__engine_stat_close(mcc_engine *e);
/* engine_stat.c: forget the routes of mcc_engine_stat_route_add (close). */
MCC_HIDDEN void mcc__engine_stat_routes_fini(mcc_engine *e);
/* engine.c: 1 when `e` is an open engine of the process (looked up by
 * address, never dereferenced otherwise); the slow-path calls answer
 * -EBADF when it is not. */
MCC_HIDDEN int mcc__engine_live(const mcc_engine *e);
/* engine.c: a lock-free call on something that is not an open engine:
 * print what and abort (mcc_engine.h documents it). */
MCC_HIDDEN _Noreturn void mcc__engine_misuse(const char *call, const void *e);

static inline void mcc__engine_check_fast(const mcc_engine *e, const char *call)
{
	if (__builtin_expect(!e || atomic_load_explicit(&((mcc_engine *)e)->magic,
	                                                memory_order_relaxed) != MCC_ENG_MAGIC_LIVE,
	                     0))
		mcc__engine_misuse(call, e);
}

#define MCC_ENG_LOG(e, level, ...) ((e)->log((e)->log_arg, (level), __VA_ARGS__))

#endif /* !__cplusplus */

#endif /* MCC_ENGINE_INTERNAL_H */
