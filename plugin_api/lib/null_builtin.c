/* SPDX-License-Identifier: MIT */
/*
 * null_builtin.c - libmcc's built-in null policy: the reference behaviour of
 * every callback of struct mcc_policy_v1, and the filler of the slots a
 * module leaves NULL.
 *
 * What it does: nothing, correctly. Every callback is the smallest behaviour
 * that honours the contract written in plugin_api/include/mcc_policy_v1.h:
 *
 *   - try_acquire always admits and fills the permit, and the permit keeps the
 *     exactly-once settle accounting (a second settle of the same bytes is
 *     answered -EALREADY), so a host driven by it exercises exactly the
 *     permit discipline it needs with a real policy;
 *   - task_query answers UNKNOWN with nothing observed (RFC: "controller-off
 *     mode ... return[s] UNKNOWN");
 *   - domain_stats reports an all-zero HEALTHY domain;
 *   - dump has no recorder: -EOPNOTSUPP;
 *   - config_check refuses every key: [module.null] takes none.
 *
 * Where it is used (plugin_api/lib/loader.c): the hidden descriptor
 * `mcc__null_builtin_v1` runs for mode = off, is handed out when loading
 * fails (controller off), and normalise() copies its callback into every
 * slot a loaded module leaves NULL. The shipped module file
 * mcc-policy-null.so (modules/null/null.c, the template for new modules)
 * defines only init and leaves the rest to this file. Because these
 * callbacks run beside other modules' callbacks, none ever dereferences a
 * handle (mcc_lane, mcc_device, mcc_route) or the context: they are opaque
 * tokens.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mcc_internal.h"

/*
 * The opaque handle types are defined by each module. The built-in keeps
 * no per-object state, so one static object of each type serves as every
 * handle it returns: opening allocates nothing and closing frees nothing. A
 * stateful module allocates a struct per open call instead (and frees it in
 * the matching close).
 */
struct mcc_lane {
	int unused;
};
struct mcc_device {
	int unused;
};
struct mcc_route {
	int unused;
};

static struct mcc_lane null_lane;
static struct mcc_device null_device;
static struct mcc_route null_route;

/* The module context. Stateless: init() hands out this token and allocates
 * nothing, so init cannot fail for lack of memory and fini has nothing to
 * free. */
static const char null_ctx_token = 0;

/* ------------------------------------------------------------ lifecycle */

static int null_init(const struct mcc_host_v1 *host, const struct mcc_config_v1 *cfg,
                     struct mcc_init_out_v1 *out, void **ctx)
{
	if (!host || !cfg || !out || !ctx)
		return -EINVAL;
	/* Every struct whole or refused (mcc_policy_v1.h, frozen sizes): a
	 * member a later minor appends is read only when struct_size covers it. */
	if (host->struct_size < MCC_HOST_V1_0_SIZE || cfg->struct_size < MCC_CONFIG_V1_0_SIZE ||
	    out->struct_size < MCC_INIT_OUT_V1_0_SIZE)
		return -EINVAL;
	/* Subscribe to nothing: no signals, no async events. */
	out->signal_mask = 0;
	out->want_async_events = 0;
	/* A real module allocates its context here, copies the parts of `cfg`
	 * it needs (the struct is borrowed) and keeps `host` (valid until fini
	 * returns) for logging and the clock. */
	*ctx = (void *)&null_ctx_token;
	return 0;
}

static void null_fini(void *ctx)
{
	(void)ctx; /* nothing was allocated */
}

/* ---------------------------------------------------------------- lanes */

static int null_lane_open(void *ctx, const struct mcc_lane_desc_v1 *desc, mcc_lane **lane)
{
	(void)ctx;
	if (!desc || !lane || desc->struct_size < MCC_LANE_DESC_V1_0_SIZE)
		return -EINVAL;
	*lane = &null_lane;
	return 0;
}

static void null_lane_close(void *ctx, mcc_lane *lane)
{
	(void)ctx;
	(void)lane; /* a module with credit caches returns them to the domains here */
}

/* -------------------------------------------------------------- domains */

static int null_device_open(void *ctx, const struct mcc_device_desc_v1 *desc, mcc_device **dev)
{
	(void)ctx;
	if (!desc || !dev || desc->struct_size < MCC_DEVICE_DESC_V1_0_SIZE)
		return -EINVAL;
	*dev = &null_device;
	return 0;
}

static void null_device_close(void *ctx, mcc_device *dev)
{
	(void)ctx;
	(void)dev;
}

static int null_route_open(void *ctx, mcc_device *dev, const struct mcc_route_desc_v1 *desc,
                           mcc_route **route)
{
	(void)ctx;
	if (!dev || !desc || !route || desc->struct_size < MCC_ROUTE_DESC_V1_0_SIZE)
		return -EINVAL;
	*route = &null_route;
	return 0;
}

static int null_route_rebind(void *ctx, mcc_route *route, mcc_device *dev, uint32_t port_num,
                             uint32_t cq_id)
{
	(void)ctx;
	(void)port_num;
	(void)cq_id;
	return (route && dev) ? 0 : -EINVAL;
}

static void null_route_close(void *ctx, mcc_route *route)
{
	(void)ctx;
	(void)route;
}

/* ------------------------------------------------------------- hot path */

/*
 * Settle up to `bytes` of a permit. Returns 0, or -EALREADY when fewer bytes
 * were live than asked for (then only the live bytes are settled). The last
 * settled byte kills the permit. A module with domains would also return the
 * bytes to the route and device windows and count the excess in
 * mcc_domain_stats_v1.double_release.
 */
static int null_settle(struct mcc_permit_v1 *permit, uint64_t bytes)
{
	uint64_t live = (permit->flags & MCC_PERMIT_F_LIVE) ? permit->bytes : 0;
	int rc = 0;

	if (bytes > live) {
		bytes = live;
		rc = -EALREADY;
	}
	permit->bytes = live - bytes;
	if (permit->bytes == 0)
		permit->flags &= ~(uint32_t)MCC_PERMIT_F_LIVE;
	return rc;
}

static int null_try_acquire(mcc_lane *lane, mcc_route *route, uint64_t bytes, uint32_t generation,
                            const struct mcc_task_ref_v1 *task, struct mcc_permit_v1 *permit)
{
	(void)lane; /* per-thread state would live behind it */
	/* -EINVAL tells the host to post without a permit. A permit still
	 * holding bytes must be settled before it is reused. */
	if (!route || !permit || bytes == 0 || permit->struct_size < MCC_PERMIT_V1_SIZE ||
	    (permit->flags & MCC_PERMIT_F_LIVE))
		return -EINVAL;
	permit->flags = MCC_PERMIT_F_LIVE;
	permit->route = route;
	permit->device = NULL; /* the null route does not know its device */
	permit->bytes = bytes;
	permit->generation = generation;
	permit->reason = MCC_REASON_NONE;
	permit->module16 = 0;
	permit->module64 = 0;
	if (task) {
		/* field by field, never one wider load: hosts fill the task
		 * reference field by field just before this call, and a load
		 * spanning several of those stores cannot be forwarded from the
		 * store buffer (a stall of ~15 cycles on x86, measured: the pair
		 * 0.30x -> 0.24x of the floor in tests/bench); relaxed atomic
		 * loads are never merged by the compiler */
		permit->task.batch_id = __atomic_load_n(&task->batch_id, __ATOMIC_RELAXED);
		permit->task.task_id = __atomic_load_n(&task->task_id, __ATOMIC_RELAXED);
		permit->task.attempt = __atomic_load_n(&task->attempt, __ATOMIC_RELAXED);
		permit->task.reserved0 = 0;
	} else {
		memset(&permit->task, 0, sizeof(permit->task));
	}
	return MCC_ADMIT;
}

/* One window-less class: every class is admitted alike; an unknown class is
 * bad input. */
static int null_try_acquire_qos(mcc_lane *lane, mcc_route *route, uint64_t bytes,
                                uint32_t generation, const struct mcc_task_ref_v1 *task,
                                uint32_t qos_class, struct mcc_permit_v1 *permit)
{
	if (qos_class >= MCC_QOS_CLASS_COUNT_)
		return -EINVAL;
	return null_try_acquire(lane, route, bytes, generation, task, permit);
}

static int null_release(mcc_lane *lane, struct mcc_permit_v1 *permit, uint64_t bytes, uint32_t reason)
{
	(void)lane;
	(void)reason; /* a policy would count releases per enum mcc_release_reason */
	if (!permit || permit->struct_size < MCC_PERMIT_V1_SIZE)
		return -EINVAL;
	return null_settle(permit, bytes);
}

static void null_on_completion(mcc_lane *lane, struct mcc_permit_v1 *permit,
                               const struct mcc_completion_v1 *wc)
{
	(void)lane;
	if (!permit || !wc || permit->struct_size < MCC_PERMIT_V1_SIZE ||
	    wc->struct_size < MCC_COMPLETION_V1_0_SIZE)
		return;
	/* A policy classifies wc->wc_status here (RFC WC matrix) and feeds the
	 * route's counters; feedback from an older generation only settles.
	 * wc->bytes == 0 settles everything the permit still holds. */
	(void)null_settle(permit, wc->bytes ? wc->bytes : permit->bytes);
}

static void null_poller_progress(mcc_lane *lane, mcc_device *dev, uint32_t ncqe)
{
	(void)lane;
	(void)dev;
	(void)ncqe;
}

/* ---------------------------------------------------------- slow paths */

static void null_on_async_event(void *ctx, const struct mcc_async_event_v1 *ev)
{
	(void)ctx;
	(void)ev; /* no scope to isolate: nothing is admitted differently */
}

static void null_on_signal(void *ctx, const struct mcc_signal_v1 *sig)
{
	(void)ctx;
	(void)sig; /* never delivered: init subscribed to no signal */
}

static void null_tick(void *ctx, uint64_t now_ns)
{
	(void)ctx;
	(void)now_ns; /* no policy to update */
}

/* ------------------------------------------------------- observability */

/* Zero the members of a caller-sized struct (at least its v1.0 size) after
 * its leading struct_size, never writing beyond the smaller of its
 * struct_size and our own sizeof: an earlier minor's struct ends before
 * ours, a later minor's tail belongs to the caller. */
static void null_zero_tail(void *out, size_t our_size)
{
	uint32_t theirs;
	memcpy(&theirs, out, sizeof(theirs));
	size_t n = theirs < our_size ? theirs : our_size;
	memset((char *)out + sizeof(uint32_t), 0, n - sizeof(uint32_t));
}

static int null_task_query(void *ctx, const struct mcc_task_ref_v1 *task, uint32_t host_flags,
                           struct mcc_task_detail_v1 *out)
{
	(void)ctx;
	(void)host_flags;
	if (!task || (out && out->struct_size < MCC_TASK_DETAIL_V1_0_SIZE))
		return -EINVAL;
	if (out) {
		/* Every field unobserved (observed = 0): the controller is off. */
		null_zero_tail(out, sizeof(*out));
		out->state = MCC_TASK_UNKNOWN;
	}
	return MCC_TASK_UNKNOWN;
}

static void null_batch_free(void *ctx, uint64_t batch_id)
{
	(void)ctx;
	(void)batch_id; /* no evidence retained */
}

static int null_domain_stats(void *ctx, int kind, const void *domain, struct mcc_domain_stats_v1 *out)
{
	(void)ctx;
	if ((kind != MCC_DOMAIN_DEVICE && kind != MCC_DOMAIN_ROUTE) || !domain || !out ||
	    out->struct_size < MCC_DOMAIN_STATS_V1_0_SIZE)
		return -EINVAL;
	null_zero_tail(out, sizeof(*out));
	out->state = MCC_PATH_HEALTHY;
	return 0;
}

static int null_dump(void *ctx, int fd)
{
	(void)ctx;
	(void)fd;
	return -EOPNOTSUPP; /* no recorder */
}

/* ----------------------------------------------------------- descriptor */

/* Hidden (mcc_internal.h): it must never shadow a loaded module's symbol. */
/* v1.2: the null policy takes no [module.null] key. */
static int null_config_check(const char *key, const char *value, char *why, size_t len)
{
	(void)key;
	(void)value;
	if (why && len)
		snprintf(why, len, "the null module takes no keys");
	return -ENOENT;
}

/* The filler of an absent config_check (a module built against v1.0 or
 * v1.1): such a module's keys are not validated by the host, every key is
 * handed to its init() as before. */
int mcc__config_check_unvalidated(const char *key, const char *value, char *why, size_t len)
{
	(void)key;
	(void)value;
	(void)why;
	(void)len;
	return 0;
}

const struct mcc_policy_v1 mcc__null_builtin_v1 = {
	.abi_version = MCC_POLICY_ABI_V1,
	.struct_size = sizeof(struct mcc_policy_v1),
	.name = "null",
	.description = "controller off: admits everything, records nothing",
	.mode = MCC_MODE_OFF,
	.caps = 0, /* no optional capability */
	.init = null_init,
	.fini = null_fini,
	.lane_open = null_lane_open,
	.lane_close = null_lane_close,
	.device_open = null_device_open,
	.device_close = null_device_close,
	.route_open = null_route_open,
	.route_rebind = null_route_rebind,
	.route_close = null_route_close,
	.try_acquire = null_try_acquire,
	.release = null_release,
	.on_completion = null_on_completion,
	.poller_progress = null_poller_progress,
	.on_async_event = null_on_async_event,
	.on_signal = null_on_signal,
	.tick = null_tick,
	.task_query = null_task_query,
	.batch_free = null_batch_free,
	.domain_stats = null_domain_stats,
	.dump = null_dump,
	.config_check = null_config_check,
	.try_acquire_qos = null_try_acquire_qos,
};
