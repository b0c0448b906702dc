/* SPDX-License-Identifier: MIT */
/*
 * mcc_engine.h - the engine SDK of libmcc: the services every engine needs
 * around the policy of mcc_policy_v1.h, so an integration is call sites, not
 * a shim. Nothing here is engine-specific; C++ engines use mcc.hpp on top.
 *
 *   service              calls                                 thread
 *   ------------------   -----------------------------------   -------------------
 *   engine + instance    mcc_engine_open / _close              constructor
 *   clock                mcc_engine_now                        any
 *   lanes                mcc_engine_lane_open / _close / _get  worker construction
 *   tick driver          mcc_engine_tick_if_due, tick thread   poller / libmcc
 *   QoS admission        mcc_engine_try_acquire_qos, _qos      poster (lane)
 *   routes               mcc_engine_route_open / _lookup /     resolver, any
 *                        _put / _close / _renew
 *   async routing        mcc_engine_qp_add / _remove,          resolver / monitor
 *                        mcc_engine_cq_id, mcc_engine_async_event
 *   DEFER parking        mcc_engine_room_seq / _wait / _notify worker / poller
 *   pre-admission        mcc_engine_setup_failed               resolver
 *   batches              mcc_engine_batch_begin / _free        application
 *   devices              mcc_engine_device_open / _close       constructor
 *   live view            mcc_engine_stat_snapshot / _publish   any (slow path)
 *
 * Sequence in an engine:
 *   construction:  mcc_engine_open(&opts, &eng); ops = mcc_engine_ops(eng)
 *                  per worker: mcc_engine_lane_open(eng, role, &ref, &lane)
 *                  per device: mcc_engine_device_open(eng, &desc, &dev)
 *   resolution:    mcc_engine_route_open(eng, dev, key, len, incarnation, &d, &r)
 *                  mcc_engine_qp_add(eng, r, qp_num) for each of its QPs
 *   worker:        s = mcc_engine_room_seq(eng);
 *                  d = ops->try_acquire(lane, mcc_engine_route_cc(r),
 *                                       bytes, mcc_engine_route_generation(r), ...)
 *                  d == MCC_AVOID: mcc_engine_route_avoided(eng, r, &retry)
 *                  d == MCC_DEFER (or MCC_AVOID with no alternate rail):
 *                      leave it queued; when nothing else is postable:
 *                      mcc_engine_room_wait(eng, s, mcc_engine_retry_after_ns(eng))
 *   poller:        ops->on_completion(...) per WC; once per pass that settled
 *                  bytes: mcc_engine_room_notify(eng); the tick:
 *                  mcc_engine_tick_if_due(eng, mcc_engine_now(eng)) (POLL mode)
 *   monitor:       mcc_engine_async_event(eng, dev, &ev) before ibv_ack_async_event
 *   teardown:      mcc_engine_close(eng) (closes what is left, with a warning)
 *
 * Handles and misuse. Engines, lane references and routes are checked on
 * every use: a call with an engine that is closed (or was never opened)
 * returns -EBADF from every call that can fail; mcc_engine_close of such
 * a pointer logs an error and does nothing. The calls that take no lock
 * (mcc_engine_try_acquire_qos, _qos, _tick_if_due, _retry_after_ns,
 * _room_seq, _room_wait, _room_notify, _instance, _ops, _ctx) cannot look
 * the engine up: given one they can tell is not open they print
 * "mcc: fatal: <call>: ... is not an open engine" and abort(); after the
 * engine's memory is reused they may not tell (using an engine after its close is then undefined). Lane
 * references carry a generation (-ESTALE after close); routes follow the
 * reference rule below (-EBADF for a put or call too many). The policy's
 * own handles are the module's: the core answers a closed lane's
 * mcc_lane * with -EBADF (mcc_policy_v1.h, lane_close).
 *
 * Conventions: as mcc_policy_v1.h. Fallible calls return 0 (or a documented
 * non-negative value) or a negative errno; every error leaves the SDK's state
 * as it was ("loses nothing"). Pointers passed in are borrowed; keys are
 * copied. Every struct with a struct_size (the SDK's below, the loader's,
 * the policy's descriptions) is taken whole or refused: a struct_size below
 * the struct's first released size (its *_V1_0_SIZE) is -EINVAL and nothing
 * of it is read; a larger one (a later release) is read up to what this
 * library knows. Nothing here is on the policy's hot path except
 * mcc_engine_try_acquire_qos (two loads and one indirect call),
 * mcc_engine_tick_if_due (one atomic load when not due),
 * mcc_engine_room_seq (one atomic load) and mcc_engine_room_notify (one
 * atomic add and one load; a system call only when a worker is parked).
 */
#ifndef MCC_ENGINE_H
#define MCC_ENGINE_H

#include "mcc_loader.h"
#include "mcc_stat.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ engine */

typedef struct mcc_engine mcc_engine;

/* Tick drivers (mcc_engine_opts.tick). */
enum mcc_engine_tick {
	/* Default: a libmcc-owned thread per engine wakes every epoch_us of real
	 * time and calls mcc_engine_tick_if_due. Ticks go on while every poller
	 * idles and every worker is parked (a cooldown then still expires).
	 * In mode off there is nothing to tick and no thread is started. */
	MCC_ENGINE_TICK_THREAD = 0,
	/* No thread: the engine's pollers (or monitor) call
	 * mcc_engine_tick_if_due on every pass. Ticks stop while nobody calls. */
	MCC_ENGINE_TICK_POLL = 1,
};

/* The process-wide bound on open lanes (the core module's own cap). Lane ids
 * are the lowest free ones, so the policy's per-lane scans stay as short as
 * the number of lanes actually open. */
#define MCC_ENGINE_LANES_MAX 1024u

/* A clock step backwards smaller than this is absorbed by holding time still
 * until the engine clock catches up; a larger one (an NTP step of
 * CLOCK_REALTIME) re-anchors the SDK clock at the value it had. */
#define MCC_ENGINE_CLOCK_SLACK_NS 50000000ull

/* Options for mcc_engine_open(). Zero-initialise, set struct_size to
 * sizeof(struct mcc_engine_opts) (at least MCC_ENGINE_OPTS_V1_0_SIZE). */
struct mcc_engine_opts {
	uint32_t struct_size;
	uint32_t tick; /* enum mcc_engine_tick */
	/* How to load the policy (NULL: all defaults). Its now_ns/clock_arg are
	 * ignored (set below), and max_lanes 0 means MCC_ENGINE_LANES_MAX. */
	const struct mcc_loader_opts *loader;
	/* The engine's clock in ns: CLOCK_REALTIME, a TSC converted to ns,
	 * anything that mostly moves forward (NULL: CLOCK_MONOTONIC). The SDK
	 * turns it into the monotonic clock the policy needs (see
	 * mcc_engine_now). One clock per process: the first engine open while no
	 * other is open installs it; a later engine naming another clock gets the
	 * installed one and a warning. fn and arg stay valid until the last
	 * engine of the process is closed. fn is called from any thread (the
	 * engine's posting and polling threads, its monitor, the live view's
	 * publisher): it must be safe to call concurrently. */
	uint64_t (*now_ns)(void *clock_arg);
	void *clock_arg;
};

/*
 * mcc_engine_open - acquire the process's policy instance (mcc_instance_acquire
 * with the SDK's clock and lane bound) and the SDK services around it.
 * Outputs: *out. Returns 0, or the loader's negative errno with *out still a
 *   usable engine whose policy is the built-in null module (controller off;
 *   the one message is mcc_instance_error(mcc_engine_instance(*out))).
 * Thread: engine construction; thread-safe.
 * Errors: -EINVAL (NULL out, opts->struct_size below
 *   MCC_ENGINE_OPTS_V1_0_SIZE, unknown tick), -ENOMEM, -EAGAIN (the tick
 *   thread could not start): *out is NULL and nothing is held. A loader
 *   struct_size below MCC_LOADER_OPTS_V1_0_SIZE is the loader's -EINVAL
 *   (controller off, with its message).
 */
int mcc_engine_open(const struct mcc_engine_opts *opts, mcc_engine **out);

/*
 * mcc_engine_close - stop the engine's tick thread, close its lanes and
 * reclaim its routes still open or referenced (each logged as a warning:
 * nothing is leaked, and every route pointer of the engine is gone after
 * it), drop its batches, release the instance. The engine has settled
 * every permit and quiesced its threads. NULL is a no-op; a pointer that
 * is not an open engine (closed twice) is logged and ignored.
 * Thread: engine teardown. Errors: none.
 */
void mcc_engine_close(mcc_engine *e);

/* The instance, its normalised vtable and its context (valid until close).
 * Thread: any. Errors: none (e an open engine; see "Handles and misuse"). */
mcc_instance *mcc_engine_instance(const mcc_engine *e);
const struct mcc_policy_v1 *mcc_engine_ops(const mcc_engine *e);
void *mcc_engine_ctx(const mcc_engine *e);

/*
 * mcc_engine_now - the SDK clock (ns): the engine clock plus an offset,
 * never decreasing across all threads of the process. A step back of at
 * most MCC_ENGINE_CLOCK_SLACK_NS holds time still; a larger one shifts the
 * offset so time goes on from where it was (counted in
 * mcc_engine_stats.clock_steps_back). Forward steps pass through. It is the
 * now_ns of the policy's host table.
 * Thread: any; lock-free except on a large step back (a mutex).
 * Errors: none.
 */
uint64_t mcc_engine_now(const mcc_engine *e);

/* ----------------------------------------------------------------- devices */

/*
 * mcc_engine_device_flags - the MCC_DEVICE_F_* facts (mcc_policy_v1.h) of
 * the RDMA device `name` as the kernel describes it under `sysfs_root`
 * (NULL: "/sys"), for struct mcc_device_desc_v1.flags. A software transport
 * (rdma_rxe, siw) is registered as a virtual device: it has
 * class/infiniband/<name> but no "device" link to a bus device, which a PCI
 * HCA has. A name the kernel does not know (a model, a test), an empty
 * name or one that is not a plain file name gives 0: a hardware HCA.
 * Thread: any, slow path (it reads the file system; call it at device
 * open). Errors: none.
 */
uint64_t mcc_engine_device_flags(const char *sysfs_root, const char *name);

/*
 * mcc_engine_device_open - the policy's device_open, with the device known
 * to the SDK under desc->name (copied), so the live view (mcc_stat.h, `mcc
 * stat`) names it and shows its domain. An engine that calls the policy's
 * device_open itself still works: its routes are shown under an unnamed
 * device, without that device's counters.
 * Outputs: *out.
 * Thread: engine construction (the policy's device_open rule); thread-safe.
 * Errors: -EINVAL (NULL argument, desc->struct_size short of `name`),
 *   -ENOMEM, the policy's device_open error (nothing is recorded).
 */
int mcc_engine_device_open(mcc_engine *e, const struct mcc_device_desc_v1 *desc,
                           mcc_device **out);

/*
 * mcc_engine_device_close - forget a device of mcc_engine_device_open and
 * call the policy's device_close (after the engine closed its routes). It
 * waits for a publish of the live view that is reading the device.
 * mcc_engine_close closes the devices still open, each with a warning.
 * Thread: engine teardown; thread-safe.
 * Errors: -ENOENT (not opened by mcc_engine_device_open of this engine, or
 *   already closed: nothing happens), -EINVAL.
 */
int mcc_engine_device_close(mcc_engine *e, mcc_device *dev);

/* ------------------------------------------------------------------- lanes */

/* A lane reference: generation << 32 | (lane id + 1); 0 is never valid. A
 * reference stops working when its lane closes, even if the id is reused. */
typedef uint64_t mcc_lane_ref;

/*
 * mcc_engine_lane_open - take the lowest free process-wide lane id and open
 * the policy's lane on it (role: enum mcc_lane_role).
 * Outputs: *ref and *lane (the handle for the hot-path calls).
 * Thread: worker construction; thread-safe.
 * Errors: -ENOSPC (MCC_ENGINE_LANES_MAX lanes open in the process, or
 *   the lowest free id is not below the max_lanes the policy instance was
 *   loaded with: mcc_loader_opts.max_lanes of the engine that loaded it;
 *   logged with both numbers), -EINVAL (NULL argument), -EBADF (not an
 *   open engine), the policy's lane_open error (the id is returned to the
 *   registry).
 */
int mcc_engine_lane_open(mcc_engine *e, uint32_t role, mcc_lane_ref *ref, mcc_lane **lane);

/*
 * mcc_engine_lane_close - close the policy lane (its cached credit returns
 * to the domains) and free the id.
 * Thread: worker teardown; thread-safe.
 * Errors: -ESTALE (already closed, or never opened: nothing happens),
 *   -EPERM (a lane of another engine: nothing happens), -EBADF (not an
 *   open engine).
 */
int mcc_engine_lane_close(mcc_engine *e, mcc_lane_ref ref);

/* The lane of `ref`, or NULL when it is closed or belongs to another
 * engine. Thread: any; takes the registry mutex (not for the hot path:
 * keep the mcc_lane * of lane_open there). Errors: NULL. */
mcc_lane *mcc_engine_lane_get(mcc_engine *e, mcc_lane_ref ref);

/* ------------------------------------------------------------- tick driver */

/*
 * mcc_engine_tick_if_due - call the policy's tick(now_ns) if an epoch
 * (config epoch_us) has passed since the last tick of this instance by any
 * engine or thread. Exactly one caller claims each epoch; the tick never
 * runs concurrently with itself; parked workers are woken after it.
 * now_ns: mcc_engine_now() (or a time read from it earlier in the pass).
 * Returns 1 when this call ticked, 0 otherwise.
 * Thread: any; one atomic load when not due, one compare-and-swap to claim.
 * Errors: none.
 */
int mcc_engine_tick_if_due(mcc_engine *e, uint64_t now_ns);

/* ------------------------------------------------- class-aware admission */

/*
 * mcc_engine_try_acquire_qos - the admission call of an engine whose work
 * has QoS classes (TENT's request priorities; enum mcc_qos_class in
 * mcc_policy_v1.h, which says what `[engine] qos = on` changes). With
 * qos = on in the instance's configuration it calls the policy's
 * try_acquire_qos with `qos_class`; with qos = off it calls try_acquire and
 * the class is not looked at, so an engine can pass its classes always and
 * leave the choice to the configuration. Arguments, results and permit are
 * try_acquire's (mcc_policy_v1.h).
 * Thread: the lane's thread (HOT PATH: one load and one indirect call, no
 * lock). Errors: the policy's (-EINVAL, also for a class above
 * MCC_QOS_LOW with qos = on).
 */
int mcc_engine_try_acquire_qos(const mcc_engine *e, mcc_lane *lane, mcc_route *route,
                               uint64_t bytes, uint32_t generation,
                               const struct mcc_task_ref_v1 *task, uint32_t qos_class,
                               struct mcc_permit_v1 *permit);

/* 1 when the instance's configuration has `[engine] qos = on`, else 0.
 * Thread: any. Errors: none. */
int mcc_engine_qos(const mcc_engine *e);

/* The fabric's base round trip, ns, as the instance's configuration states
 * it (`[engine] base_rtt_us`; 0: not stated). mcc_engine_route_open gives
 * it to a route whose descriptor has none (base_rtt_ns 0); a host that
 * opens routes through the policy's route_open itself passes it there.
 * Thread: any. Errors: none. */
uint64_t mcc_engine_base_rtt_ns(const mcc_engine *e);

/* The retry-after hint for a refused slice: one epoch in ns (the window and
 * the path states change at most once per tick). Thread: any. */
uint64_t mcc_engine_retry_after_ns(const mcc_engine *e);

/* ------------------------------------------------------------------ routes */

typedef struct mcc_engine_route mcc_engine_route;

/* mcc_engine_route_open() non-negative results. */
enum mcc_engine_route_open_result {
	MCC_ENGINE_ROUTE_NEW = 0,     /* first open of the key: generation 1 */
	MCC_ENGINE_ROUTE_SAME = 1,    /* key open with this incarnation: reference */
	MCC_ENGINE_ROUTE_RENEWED = 2, /* new incarnation: generation bumped */
};

/*
 * mcc_engine_route_open - resolve the route of the engine's own path key
 * (bytes, e.g. TE's peer_nic_path string without its NUL) on device `dev`.
 * `incarnation` names the endpoint/QP set now serving the key (an endpoint
 * pointer, a QP number, a counter: any value that changes when the engine
 * replaces or rebuilds the endpoint). The SDK assigns route ids (from 1) and
 * generations, so engines without generations get correct fencing: a new
 * incarnation bumps the generation and delivers MCC_SIG_ENDPOINT_REBUILT (if
 * subscribed); a different `dev` rebinds the route (route_rebind).
 * `desc`: port_num, cq_id, remote_id, peer_path (NULL: the key, when it is
 * text) of the policy's route_open; route_id and generation are ignored;
 * may be NULL; a struct_size below MCC_ROUTE_DESC_V1_0_SIZE is -EINVAL.
 * Outputs: *out holds one reference (the reference rule below).
 * Returns enum mcc_engine_route_open_result.
 * Thread: any; takes the route mutex (slow path).
 * Errors: -EINVAL (NULL e/dev/key/out, klen 0 or > 4096, short desc), -ENOMEM, the
 *   policy's route_open or route_rebind error (nothing changes).
 */
int mcc_engine_route_open(mcc_engine *e, mcc_device *dev, const void *key, size_t klen,
                          uint64_t incarnation, const struct mcc_route_desc_v1 *desc,
                          mcc_engine_route **out);

/*
 * THE REFERENCE RULE for routes, the one place it is stated:
 *  - every mcc_engine_route_open and mcc_engine_route_lookup that succeeds
 *    (NEW, SAME, RENEWED or 0) hands the caller one reference, the first
 *    open's included; each is given back with one mcc_engine_route_put;
 *  - mcc_engine_route_close unpublishes the key and gives back no
 *    reference;
 *  - a route (with its policy route) lives while its key is published or
 *    a reference is held; the put or close that leaves it neither closes
 *    the policy's route and frees it, so a poller holding a route never
 *    sees it freed under it;
 *  - mcc_engine_close reclaims every route still published or referenced
 *    and logs each (an open without its put leaks nothing past the
 *    engine's close);
 *  - a put beyond the references held returns -EBADF and changes nothing
 *    (logged); so do the calls below given a freed route (the accessors
 *    answer NULL or 0), as long as the engine keeps its memory: while the
 *    route is published, and for the engine's 64 most recently freed
 *    routes. Later, and after mcc_engine_close, the pointer is gone.
 */

/*
 * mcc_engine_route_lookup - the open route of `key`, with one reference.
 * Thread: any; route mutex. Errors: -ENOENT (unknown or closed key),
 * -EINVAL (NULL argument), -EBADF (not an open engine).
 */
int mcc_engine_route_lookup(mcc_engine *e, const void *key, size_t klen, mcc_engine_route **out);

/* Give back one reference (NULL: no-op). Returns 0, or -EBADF when r holds
 * no reference (a put too many, or a freed route: nothing changes).
 * Thread: any; lock-free unless it is the last. */
int mcc_engine_route_put(mcc_engine_route *r);

/*
 * mcc_engine_route_close - unpublish `key` (later lookups get -ENOENT) and
 * unregister its QPs; the references held stay valid (the rule above).
 * The engine closes a route after settling every permit on it.
 * Thread: any; route mutex. Errors: -ENOENT (unknown or already closed key:
 * nothing happens), -EINVAL, -EBADF (not an open engine).
 */
int mcc_engine_route_close(mcc_engine *e, const void *key, size_t klen);

/*
 * mcc_engine_route_renew - report a new incarnation without re-resolving:
 * generation + 1 and MCC_SIG_ENDPOINT_REBUILT (if subscribed). Returns the
 * new generation (> 0).
 * Thread: any; route mutex. Errors: -ESTALE (the route was closed: nothing
 * happens), -EINVAL, -EBADF (a freed route, or not an open engine).
 */
int64_t mcc_engine_route_renew(mcc_engine *e, mcc_engine_route *r, uint64_t incarnation);

/*
 * mcc_engine_route_avoided - the engine's one duty after try_acquire
 * answered MCC_AVOID on route r (with or without an alternate rail). The
 * policy probes a quarantined route only on a new generation (RFC: a
 * bounded probe on a new generation), and an engine that does not rebuild
 * the endpoint would never give it one. So the SDK gives it: once the
 * route's cooldown is over (the policy says PROBING) and nothing is in
 * flight on it, the SDK renews the route's generation itself, once per
 * quarantine (mcc_engine_route_renew with the same incarnation), and the
 * next try_acquire on mcc_engine_route_generation(r) is the bounded probe.
 * The policy is asked at most once per epoch per route; between, the call
 * is a clock read and an atomic load.
 * Outputs: *retry_ns (may be NULL): when to try the route again; 0 after a
 *   renewal, the cooldown left while quarantined, else one epoch.
 * Returns 1 (renewed: retry the route now), 0 (nothing to do yet).
 * Thread: any (a worker, after a refusal: not the admission fast path).
 * Errors: -ESTALE (r closed), -EINVAL (NULL, another engine's route),
 *   -EBADF (a freed route, or not an open engine).
 */
int mcc_engine_route_avoided(mcc_engine *e, mcc_engine_route *r, uint64_t *retry_ns);

/* Accessors of a referenced route (a freed one: NULL / 0).
 * Thread: any; lock-free. */
mcc_route *mcc_engine_route_cc(const mcc_engine_route *r);        /* policy handle */
uint32_t mcc_engine_route_generation(const mcc_engine_route *r); /* current */
uint64_t mcc_engine_route_id(const mcc_engine_route *r);

/* ----------------------------------------------------------- async routing */

/*
 * mcc_engine_qp_add - QP `qp_num` of device `dev` serves route `r` (at the
 * route's current generation, which async events for it will carry).
 * mcc_engine_qp_remove - the QP is being destroyed; events that name it
 * afterwards are no-ops. Call it before ibv_destroy_qp.
 * Thread: any; async mutex. Errors: -EEXIST (qp_num already registered on
 * dev), -ENOENT (remove: not registered), -ESTALE (add: r closed),
 * -EBADF (add: r freed; not an open engine), -ENOMEM, -EINVAL.
 */
int mcc_engine_qp_add(mcc_engine *e, mcc_engine_route *r, uint32_t qp_num);
int mcc_engine_qp_remove(mcc_engine *e, mcc_device *dev, uint32_t qp_num);

/*
 * mcc_engine_cq_id - a stable id (from 1) for the engine's CQ handle
 * `cq_key` on `dev` (e.g. the struct ibv_cq pointer), for engines that
 * cannot name CQ ids; assigned on first use. mcc_engine_cq_remove forgets
 * it before the CQ is destroyed.
 * Thread: any; async mutex. Errors: 0 on -ENOMEM (never a valid id);
 * remove: -ENOENT.
 */
uint32_t mcc_engine_cq_id(mcc_engine *e, mcc_device *dev, uint64_t cq_key);
int mcc_engine_cq_remove(mcc_engine *e, mcc_device *dev, uint64_t cq_key);

/* What an async event names (mcc_engine_async.element). */
enum mcc_engine_element {
	MCC_ENGINE_EL_DEVICE = 0,
	MCC_ENGINE_EL_PORT = 1,
	MCC_ENGINE_EL_QP = 2,
	MCC_ENGINE_EL_CQ = 3,
};

/* An async event reduced to plain values, copied out of struct
 * ibv_async_event before ibv_ack_async_event (no pointer is kept). */
struct mcc_engine_async {
	uint32_t struct_size;
	int32_t event_type; /* raw enum ibv_event_type */
	uint32_t element;   /* enum mcc_engine_element */
	uint32_t port_num;  /* EL_PORT */
	uint32_t qp_num;    /* EL_QP: element.qp->qp_num */
	uint32_t reserved0;
	uint64_t cq_key;    /* EL_CQ: as given to mcc_engine_cq_id */
};

/*
 * mcc_engine_async_event - route one async event to the policy: the SDK
 * snapshots the QP's route (holding a reference for the call), its
 * generation and the CQ id under the async mutex, then calls
 * on_async_event. It may be called before the engine acks the event and
 * concurrently with QP teardown: an event for a QP (or CQ) that is not
 * registered (already torn down, or never added) is a no-op returning
 * -ENOENT, never a use-after-free.
 * Returns 1 delivered, 0 not delivered because the policy does not want
 * async events.
 * Thread: the monitor (any). Errors: -ENOENT (see above; counted in
 *   async_dropped), -EINVAL (NULL, struct_size below
 *   MCC_ENGINE_ASYNC_V1_0_SIZE, unknown element).
 */
int mcc_engine_async_event(mcc_engine *e, mcc_device *dev, const struct mcc_engine_async *ev);

/* ----------------------------------------------------------- DEFER parking */

/*
 * Parking: a worker whose slices were all refused (DEFER, or AVOID with no
 * alternate) sleeps until room may be back instead of spinning:
 *
 *   uint32_t s = mcc_engine_room_seq(e);       before the try_acquire pass
 *   ... every queued slice refused ...
 *   mcc_engine_room_wait(e, s, mcc_engine_retry_after_ns(e));
 *
 * The sequence is bumped by mcc_engine_room_notify, which the engine calls
 * after settling bytes (release or on_completion; once per poll pass is
 * enough), and by every tick (windows and path states change there). A
 * bump between room_seq and room_wait makes the wait return at once, so no
 * wake-up is lost. The sequence is per policy instance: every engine
 * sharing the instance shares it.
 */

/* Thread: any; one atomic load. Errors: none. */
uint32_t mcc_engine_room_seq(const mcc_engine *e);

/*
 * mcc_engine_room_wait - sleep while the sequence still reads `seq`, at most
 * timeout_ns of real (CLOCK_MONOTONIC) time; 0: do not sleep.
 * Returns 0 when the sequence moved (room may be back: retry).
 * Thread: a worker; a futex wait (Linux). Errors: -ETIMEDOUT (retry the
 * refused slices once: the hint is the retry-after time), -EINTR (a signal
 * or a spurious wake-up: retry or wait again).
 */
int mcc_engine_room_wait(mcc_engine *e, uint32_t seq, uint64_t timeout_ns);

/*
 * mcc_engine_room_notify - room may be back: bump the sequence and wake the
 * parked workers. One atomic add and one atomic load; a futex wake (system
 * call) only when a worker is parked.
 * Thread: any (the poller or a releasing poster). Errors: none.
 */
void mcc_engine_room_notify(mcc_engine *e);

/*
 * AVOID without an alternate. MCC_AVOID means "not on this route now, use the
 * existing alternate rail": it reserves nothing and is no new hardware
 * failure. An engine whose admission point has no alternate rail (TE's
 * RdmaEndPoint::submitPostSend) treats AVOID as DEFER there: the slice stays
 * queued and the worker parks as above; the engine's next pass over its
 * queues may then hand the group back to its own selection for another path
 * (the Mooncake adapter's reroute(), INTEGRATION.md sites 9-11). It must not
 * fail the slice and must not post it: the route is quarantined. Every
 * AVOID is followed by mcc_engine_route_avoided(e, r, &retry): once the
 * cooldown has expired (a tick then wakes the parked worker), it gives the
 * route the new generation the policy's bounded probe needs, so the next
 * try_acquire is that probe and the route recovers by itself; the engine
 * need not rebuild anything (an engine that does rebuild reports the new
 * incarnation as usual, and the SDK then adds nothing). When every route
 * to the peer answers AVOID, the engine reports MCC_SIG_NO_USABLE_PATH
 * once, so task queries read LONG_UNAVAILABLE.
 */
#define MCC_ENGINE_DECISION_NO_ALTERNATE(d) ((d) == MCC_AVOID ? MCC_DEFER : (d))

/*
 * DEFER near the floor: a route DEFERred while its own window is at most
 * twice min_window_bytes and too full for the refused slice, or while its
 * device's window is at most twice min_window_bytes, is held there by the
 * policy (its completions read as queueing: congestion, or gray loss that
 * retransmits without error WCs), not merely full. A route near its floor
 * that had room was refused by its device and is not held itself: held, it
 * would carry nothing, complete nothing and never regrow. An engine that
 * has a sibling route to the same peer (another NIC) which has not been
 * DEFERred for an epoch, is not paused and not avoided may move the slices
 * queued on the held route there, without charging their retry budget and
 * a bounded number of times per slice; they come back by themselves once
 * the route's window has regrown. Move them to a path the engine would
 * choose itself: the TE host stub does this through the adapter's rule
 * (reroute(): another NIC of the peer from the same local device, else
 * another local device when the device itself is held, and another NIC of
 * the peer after all when no other local device can take them: a device
 * held only because its one busy route met a faulty peer NIC is not the
 * fault), TENT to another local device's own rail (its cross-rail pairs
 * share a NIC with the held path and, in the model, spread a QP flush's
 * errors until every rail was paused). Under 25 % gray loss on one
 * of two rails, 99.6-99.9 % of the bytes then arrive on the healthy rail
 * (TE kept 52 % on the lossy one without it; TENT, seed 6, everything) and
 * half again after the loss, at 1.2-1.4x the goodput of off.
 */

/* ------------------------------------------------- before admission: set-up */

/* Failures that happen before any slice reaches try_acquire. */
enum mcc_engine_setup_stage {
	MCC_ENGINE_SETUP_CONNECT = 1,      /* QP connection (modify to RTR/RTS, rdma_cm) */
	MCC_ENGINE_SETUP_HANDSHAKE = 2,    /* endpoint handshake RPC with the peer */
	MCC_ENGINE_SETUP_SEGMENT_DESC = 3, /* segment-descriptor (metadata) fetch */
};

/*
 * mcc_engine_setup_failed - tell the policy a connection set-up, handshake
 * or segment-descriptor fetch failed (error: negative or positive errno).
 * mcc_policy_v1.h has no dedicated signal kinds for the first two, so the
 * closest existing ones are used:
 *   CONNECT/HANDSHAKE with -ETIMEDOUT, -EHOSTUNREACH, -ENETUNREACH,
 *     -ECONNREFUSED, -ECONNRESET: MCC_SIG_CM_EVENT with raw
 *     MCC_RDMA_CM_EVENT_UNREACHABLE (route evidence: the peer is not
 *     reachable on this rail; `r` should be non-NULL);
 *   CONNECT/HANDSHAKE with any other error: MCC_SIG_CONTROL_RPC_FAILED
 *     (diagnostic, no window change);
 *   SEGMENT_DESC: MCC_SIG_SEGMENT_RPC_FAILED (diagnostic).
 * dev and r may be NULL; task may be NULL.
 * Returns the enum mcc_signal_kind delivered (> 0), or 0 when the policy
 * does not subscribe to it.
 * Thread: any. Errors: -EINVAL (unknown stage).
 */
int mcc_engine_setup_failed(mcc_engine *e, mcc_device *dev, mcc_engine_route *r, uint32_t stage,
                            int error, const struct mcc_task_ref_v1 *task);

/* ----------------------------------------------------------------- batches */

/*
 * mcc_engine_batch_begin / mcc_engine_batch_free - batch lifetime for
 * engines whose batch ids are recycled (TE: a freed pointer). begin when the
 * id is allocated; free when the application frees it (the policy's
 * batch_free drops the batch's evidence).
 * begin: 0, or -EEXIST when the id is still live because its previous free
 *   was missed: the old batch's evidence is dropped first, so none of it
 *   attaches to the new batch, and the id is live again.
 * free: 0, or -ENOENT when the id is not live (freed twice, or never
 *   begun): nothing is forwarded, so a live batch's evidence is kept.
 * Thread: application; batch mutex. Errors: as above, -ENOMEM (begin).
 */
int mcc_engine_batch_begin(mcc_engine *e, uint64_t batch_id);
int mcc_engine_batch_free(mcc_engine *e, uint64_t batch_id);

/* ------------------------------------------------------------------- stats */

struct mcc_engine_stats {
	uint32_t struct_size;      /* set by the caller */
	uint32_t lanes_open;       /* this engine's */
	uint64_t routes_open;      /* this engine's published keys */
	uint64_t ticks;            /* instance: ticks run (all engines) */
	uint64_t room_wakes;       /* instance: futex wakes issued (syscalls) */
	uint64_t room_waits;       /* instance: futex waits entered */
	uint64_t clock_steps_back; /* process: large steps back re-anchored */
	uint64_t clock_held;       /* process: small steps back held */
	uint64_t async_delivered;  /* this engine's */
	uint64_t async_dropped;    /* this engine's: QP/CQ not registered */
	uint64_t batch_double_free;/* this engine's: batch_free of a non-live id */
	uint64_t batch_reused;     /* this engine's: begin of a still-live id */
};

/* Fill *out up to out->struct_size (at least MCC_ENGINE_STATS_V1_0_SIZE).
 * Thread: any. Errors: -EINVAL (NULL, short struct: nothing written). */
int mcc_engine_get_stats(const mcc_engine *e, struct mcc_engine_stats *out);

/* ------------------------------------------------------------ frozen sizes */

/* The sizes of the SDK's structs as first released; members are only ever
 * appended (as in mcc_policy_v1.h). */
#define MCC_ENGINE_OPTS_V1_0_SIZE 32u  /* struct mcc_engine_opts */
#define MCC_ENGINE_ASYNC_V1_0_SIZE 32u /* struct mcc_engine_async */
#define MCC_ENGINE_STATS_V1_0_SIZE 88u /* struct mcc_engine_stats */
#if UINTPTR_MAX == 0xffffffffffffffffu
MCC_STATIC_ASSERT(offsetof(struct mcc_engine_opts, clock_arg) + sizeof(void *) ==
                      MCC_ENGINE_OPTS_V1_0_SIZE, "engine opts v1.0 size");
MCC_STATIC_ASSERT(offsetof(struct mcc_engine_async, cq_key) + sizeof(uint64_t) ==
                      MCC_ENGINE_ASYNC_V1_0_SIZE, "engine async v1.0 size");
MCC_STATIC_ASSERT(offsetof(struct mcc_engine_stats, batch_reused) + sizeof(uint64_t) ==
                      MCC_ENGINE_STATS_V1_0_SIZE, "engine stats v1.0 size");
#endif
/* --------------------------------------------------------------- live view */

/*
 * The live view (mcc_stat.h): with `[engine] stat = on` (or a directory)
 * the engine publishes a snapshot of every device of
 * mcc_engine_device_open and every open route (state, window, in-flight,
 * cuts, quarantines, from the policy's domain_stats) to
 * <dir>/mcc.<pid>.<engine> every stat_interval_ms from a thread of its own
 * (never the tick or a data-path thread; the period stretches so that
 * publishing takes at most a tenth of that thread's time). `mcc stat`
 * prints it. The file is removed at close. A file that cannot be created
 * or written is logged once as a warning; the engine works on without it.
 */

/*
 * mcc_engine_stat_snapshot - the same snapshot, in process, whatever `stat`
 * says (an adapter's "list routes" call): the engine's devices, then its
 * routes, each with the policy's domain_stats, and the header's engine,
 * module, mode and counts; `publish` is 0.
 * Outputs: *out (free with mcc_stat_free).
 * Thread: any; not a hot path: it takes the device and route mutexes
 *   briefly, allocates, and calls domain_stats once per domain.
 * Errors: -EINVAL (NULL argument), -ENOMEM.
 */
int mcc_engine_stat_snapshot(mcc_engine *e, struct mcc_stat_snapshot **out);

/*
 * mcc_engine_stat_publish - publish now (besides the periodic publishes): a
 * test, or an engine that wants the file current at a point it chooses.
 * Thread: any; slow path (as above, plus stores into the file).
 * Errors: -EOPNOTSUPP (stat = off, or the file could not be created at
 *   open), -EINVAL, -ENOMEM, the file's errno (logged once).
 */
int mcc_engine_stat_publish(mcc_engine *e);

/* The file the engine publishes to; "" when it publishes none. Valid until
 * close. Thread: any. */
const char *mcc_engine_stat_path(const mcc_engine *e);

/*
 * mcc_engine_stat_route_add - show in the live view a route the engine
 * opened with the policy's route_open itself (not mcc_engine_route_open,
 * whose routes are shown already): on device `dev`, under its key (copied;
 * text as is, else in hex) and the engine's own route id. Adding the same
 * handle again updates device, key and id (after a route_rebind).
 * mcc_engine_stat_route_remove - the route leaves the view; call it before
 * the policy's route_close (it waits for a publish reading the route).
 * mcc_engine_close forgets the routes still added.
 * Thread: the engine's route set-up and teardown; thread-safe.
 * Errors: -EINVAL (NULL e, route or key; klen 0), -ENOMEM; remove:
 *   -ENOENT (not added, or removed already).
 */
int mcc_engine_stat_route_add(mcc_engine *e, mcc_device *dev, mcc_route *route, const void *key,
                              size_t klen, uint64_t route_id);
int mcc_engine_stat_route_remove(mcc_engine *e, mcc_route *route);

#ifdef __cplusplus
}
#endif
#endif /* MCC_ENGINE_H */
