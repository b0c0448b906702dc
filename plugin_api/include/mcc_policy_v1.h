/* SPDX-License-Identifier: MIT */
/*
 * mcc_policy_v1.h - the congestion-control policy module ABI, major version 1.
 *
 * THIS HEADER IS THE SPECIFICATION. It is frozen once released: members are
 * only ever appended (bumping the minor), never reordered, retyped or removed.
 * A breaking change is a new header mcc_policy_v2.h and a new symbol.
 *
 * A policy module is a shared object that exports exactly one data symbol,
 *
 *     const struct mcc_policy_v1 mcc_policy_v1;
 *
 * (use MCC_POLICY_V1_DEFINE below) and nothing else. Nothing of the module
 * runs at dlopen time: no constructors. The host (libmcc, see mcc_loader.h)
 * checks the descriptor (name, major, struct_size and a non-NULL init are
 * required; every capability bit is optional), fills every other NULL or
 * absent callback with the built-in null policy's, and calls init(). After
 * that the engine calls the module at the points of the RFC "Shared
 * low-overhead RDMA congestion control for TE and TENT" (Mooncake #4162):
 *
 *   engine point                         callback            thread
 *   ----------------------------------   -----------------   -----------------
 *   worker construction                  init, lane_open     constructor
 *   context / device created             device_open         constructor/monitor
 *   endpoint to a remote NIC resolved    route_open          poster/submitter
 *   local-NIC handoff                    route_rebind        poster/monitor
 *   just before ibv_post_send            try_acquire         poster (lane)
 *     ... of a slice with a QoS class    try_acquire_qos     poster (lane)
 *   WR not handed to hardware            release             poster (lane)
 *   ibv_poll_cq returned a WC            on_completion       poller (lane)
 *   teardown with no WC to come          release             owner of teardown
 *   each poll pass                       poller_progress     poller (lane)
 *   ibv_get_async_event                  on_async_event      monitor
 *   non-WC signals (RFC third matrix)    on_signal           the signal's owner
 *   control epoch                        tick                monitor
 *   caller status query                  task_query          application
 *   freeBatchID / tent_free_batch        batch_free          application
 *   diagnostics                          domain_stats, dump  any
 *   [module.<name>] keys (v1.2)          config_check        any, before init
 *
 * Conventions for every callback:
 *   - Errors: fallible callbacks return 0 or a negative errno (-EINVAL,
 *     -ENOMEM, -ENOENT, -EALREADY, -EOPNOTSUPP, -EPROTO for ABI mismatch).
 *     Only init() failing disables the module; any other error affects only
 *     that call, and the host falls back to its own default for it.
 *   - Ownership: every pointer passed in is borrowed for the duration of the
 *     call; a module copies what it keeps (strings included). Handles the
 *     module returns (mcc_lane, mcc_device, mcc_route, ctx) are owned by the
 *     module and stay valid until the matching close/fini. Nothing is freed
 *     across the boundary.
 *   - Blocking: no callback may block, sleep or wait for I/O. The hot-path
 *     callbacks (try_acquire, release, on_completion, poller_progress) take no
 *     lock, make no system call, read no clock, allocate nothing and log
 *     nothing; they reach per-thread state through the explicit lane handle,
 *     never through thread-local storage.
 *   - Concurrency: callbacks taking an mcc_lane are called by one thread at a
 *     time per lane (the host serialises a lane), and concurrently across
 *     lanes. All other callbacks may be called concurrently with each other
 *     and with lane callbacks, from any host thread; the module synchronises
 *     them (slow paths may lock).
 *   - Modules log only through the host's log callback, never to stdout/err.
 */
#ifndef MCC_POLICY_V1_H
#define MCC_POLICY_V1_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- versions */

/* abi_version packs major << 16 | minor. */
#define MCC_ABI(major, minor) ((((uint32_t)(major)) << 16) | ((uint32_t)(minor) & 0xffffu))
#define MCC_ABI_MAJOR(v) ((uint32_t)(v) >> 16)
#define MCC_ABI_MINOR(v) ((uint32_t)(v) & 0xffffu)
#define MCC_POLICY_ABI_V1 MCC_ABI(1, 3)

/* The one exported symbol of a v1 module. */
#define MCC_POLICY_V1_SYMBOL "mcc_policy_v1"

/* True when a struct received with size `size` contains member `m` of `type`:
 * a member beyond the producer's struct_size is absent. */
#define MCC_HAS_MEMBER(type, size, m) \
	((size_t)(size) >= offsetof(type, m) + sizeof(((type *)0)->m))

/* ------------------------------------------------------------ opaque handles */

/* Defined by each module; the host only ever holds pointers. */
typedef struct mcc_lane mcc_lane;     /* per engine worker thread (lane) */
typedef struct mcc_device mcc_device; /* device domain: one local RDMA device */
typedef struct mcc_route mcc_route;   /* route domain: local device -> remote NIC path */

/* ------------------------------------------------------------------- enums */

/* What the module runs as; the RFC's MC_ADAPTIVE_CC_MODE. */
enum mcc_mode {
	MCC_MODE_OFF = 0,     /* bypass policy and admission state (null module) */
	MCC_MODE_OBSERVE = 1, /* record and compute, never defer or avoid */
	MCC_MODE_ENFORCE = 2, /* apply byte admission and path quarantine */
};

/* try_acquire() result (its return value when >= 0). */
enum mcc_decision {
	MCC_ADMIT = 0, /* post now; the permit holds the reservation */
	MCC_DEFER = 1, /* do not post; leave the slice in its transport queue */
	MCC_AVOID = 2, /* do not post on this route; use the existing alternate
	                * rail/transport; not a new hardware failure. When no
	                * route of the local device to that peer is usable
	                * (each avoided, or paused by the engine itself), the
	                * engine hands the slice to another local device before
	                * it fails the slice; it never charges the slice's
	                * error-retry budget for an AVOID */
};

/*
 * QoS classes (v1.2): the priority of the work a slice belongs to, as the
 * engine's own QoS orders it (TENT's Request::priority: 0 HIGH, 1 MEDIUM,
 * 2 LOW). Passed to try_acquire_qos.
 *
 * `[engine] qos = on` (mcc.ini(5)) is the engine's statement that it runs
 * QoS ordering beside the policy. What it changes: the engine keeps its
 * priority queues (which queued slices it offers first, and promotion of
 * work that waited too long), and its admission calls carry each slice's
 * class: try_acquire_qos instead of try_acquire (mcc_engine.h:
 * mcc_engine_try_acquire_qos). A class-aware module then serves the
 * classes in order within one window: when the window is short it admits
 * HIGH first, holding back a reserve for HIGH while HIGH work is active and
 * admitting LOW only below the rest of the window; with no HIGH work it
 * lends the whole window to the other classes (work-conserving). With
 * `qos = off` (the default) the engine calls try_acquire and every slice
 * is one class, as before v1.2.
 *
 * The RFC's single authority stays whole with it: the policy is still the
 * only admission authority over the bytes a host posts. QoS orders and
 * labels work, and never admits bytes of its own: there is no second
 * window and no path around try_acquire_qos, whose answer is final for
 * every class; a refused slice stays in its engine's queue for its class
 * (queue owner keeps denied work), and `[engine] tent_cc_plugin` (a second
 * controller) stays rejected beside a mode other than off. A module built
 * before v1.2 has no try_acquire_qos: libmcc calls its try_acquire, the
 * class ignored.
 */
enum mcc_qos_class {
	MCC_QOS_HIGH = 0,
	MCC_QOS_MEDIUM = 1,
	MCC_QOS_LOW = 2,
	MCC_QOS_CLASS_COUNT_ = 3
};

/* Internal path (domain) states of the RFC's state machine. */
enum mcc_path_state {
	MCC_PATH_HEALTHY = 0,
	MCC_PATH_CONGESTED = 1,
	MCC_PATH_SUSPECT = 2,
	MCC_PATH_QUARANTINED = 3,
	MCC_PATH_PROBING = 4,
};

/* Caller-visible task states (RFC "Caller Observability"). */
enum mcc_task_state {
	MCC_TASK_NORMAL = 0,
	MCC_TASK_CONGESTED = 1,
	MCC_TASK_LONG_UNAVAILABLE = 2,
	MCC_TASK_UNKNOWN = 3,
};

/* Normalised signal classes (RFC WC matrix). */
enum mcc_class {
	MCC_CLASS_NONE = 0, /* no direct failure (e.g. PORT_ACTIVE, unknown async event) */
	MCC_CLASS_SUCCESS = 1,
	MCC_CLASS_CONGESTION = 2,
	MCC_CLASS_RECEIVER_PRESSURE = 3,
	MCC_CLASS_ROUTE_TIMEOUT = 4,
	MCC_CLASS_LOCAL_CONFIGURATION = 5,
	MCC_CLASS_REMOTE_METADATA = 6,
	MCC_CLASS_DERIVED_FLUSH = 7,
	MCC_CLASS_FATAL = 8,
	MCC_CLASS_RECOVERY_HINT = 9, /* non-failure event: refresh, then require a probe */
};

/* Failure scopes (RFC "Failure Scope"), ordered narrow to wide. */
enum mcc_scope {
	MCC_SCOPE_NONE = 0,
	MCC_SCOPE_OPERATION = 1,
	MCC_SCOPE_QP = 2,
	MCC_SCOPE_CQ = 3,
	MCC_SCOPE_ROUTE = 4,
	MCC_SCOPE_PORT = 5,
	MCC_SCOPE_DEVICE = 6,
};

/* Evidence reasons recorded on tasks and reported by the detailed query. */
enum mcc_reason {
	MCC_REASON_NONE = 0,
	MCC_REASON_BYTE_WINDOW = 1,         /* -> CONGESTED */
	MCC_REASON_RECEIVER_PRESSURE = 2,   /* -> CONGESTED */
	MCC_REASON_CONGESTION_FEEDBACK = 3, /* -> CONGESTED */
	MCC_REASON_ROUTE_TIMEOUT = 4,       /* -> CONGESTED (before quarantine) */
	MCC_REASON_PATH_QUARANTINED = 5,    /* -> LONG_UNAVAILABLE */
	MCC_REASON_PROBE_FAILED = 6,        /* -> LONG_UNAVAILABLE */
	MCC_REASON_NO_USABLE_PATH = 7,      /* -> LONG_UNAVAILABLE */
	MCC_REASON_LOCAL_CONFIGURATION = 8, /* -> UNKNOWN */
	MCC_REASON_REMOTE_METADATA = 9,     /* -> UNKNOWN */
	MCC_REASON_DERIVED_FLUSH = 10,      /* -> UNKNOWN */
	MCC_REASON_FATAL = 11,              /* -> UNKNOWN without path evidence */
	MCC_REASON_GENERATION_CHANGED = 12, /* -> UNKNOWN */
	MCC_REASON_POLLER_STALL = 13,       /* diagnostic only -> UNKNOWN */
	MCC_REASON_CANCELLED = 14,          /* -> UNKNOWN */
	MCC_REASON_CONTROL_PLANE = 15,      /* RPC failure, no congestion change -> UNKNOWN */
	MCC_REASON_NO_RECORD = 16,          /* task_query only: the module holds no record of
	                                     * the (batch, task): see task_query */
	MCC_REASON_COUNT_ = 17
};

/* release() reasons: why reserved bytes come back without a WC. */
enum mcc_release_reason {
	MCC_REL_NOT_POSTED = 0,         /* static limit (QP/CQ depth) left it queued */
	MCC_REL_POST_REJECTED = 1,      /* ibv_post_send refused the WR (bad_wr) */
	MCC_REL_GENERATION_CHANGED = 2, /* endpoint replaced between acquire and post */
	MCC_REL_CANCELLED = 3,          /* explicit cancellation of an unposted slice */
	MCC_REL_RECLAIMED = 4,          /* posted, but the QP was torn down and no WC
	                                 * will ever arrive for it */
};

/* Non-WC signals (RFC "Non-WC and Control-Plane Handling Matrix"). */
enum mcc_signal_kind {
	MCC_SIG_POST_REJECTED = 1,     /* sync ibv_post_send error; `error` = errno */
	MCC_SIG_SOFT_DEADLINE = 2,     /* software completion deadline expired */
	MCC_SIG_ENDPOINT_REBUILT = 3,  /* new endpoint generation on `route` */
	MCC_SIG_METADATA_STALE = 4,    /* stale metadata/rkey/address/permission */
	MCC_SIG_SEGMENT_RPC_FAILED = 5,/* read-only GetSegmentDesc RPC failed */
	MCC_SIG_CONTROL_RPC_FAILED = 6,/* mutating notification/control RPC failed */
	MCC_SIG_CANCELLED = 7,         /* explicit cancellation of a task */
	MCC_SIG_ENDPOINT_RECLAIMED = 8,/* QP teardown / old-endpoint reclamation */
	MCC_SIG_NO_USABLE_PATH = 9,    /* all RDMA rails to the peer unavailable */
	MCC_SIG_CM_EVENT = 10,         /* rdma_cm event; `raw` = enum rdma_cm_event_type */
	MCC_SIG_BACKLOG = 11,          /* host queue depth: `value0` queued bytes */
	MCC_SIG_DEVICE_TELEMETRY = 12, /* `value0` posted bytes, `value1` completed
	                                * bytes (cumulative), TENT DeviceSelector */
	MCC_SIG_KIND_COUNT_ = 13
};

/* rdma_cm event numbers the RFC names (enum rdma_cm_event_type of librdmacm;
 * repeated here so classification needs no librdmacm dependency). */
#define MCC_RDMA_CM_EVENT_UNREACHABLE 7
#define MCC_RDMA_CM_EVENT_DISCONNECTED 10
#define MCC_RDMA_CM_EVENT_DEVICE_REMOVAL 11

/* Module capabilities (mcc_policy_v1.caps). */
#define MCC_CAP_ENFORCES (1ull << 0)      /* may return DEFER/AVOID */
#define MCC_CAP_RECORDS (1ull << 1)       /* keeps a signal recorder (dump) */
#define MCC_CAP_TASK_EVIDENCE (1ull << 2) /* answers task_query from evidence */
#define MCC_CAP_THREAD_SAFE (1ull << 3)   /* implied by ABI v1 (every module honours
                                           * the concurrency contract above); the
                                           * loader neither requires nor reads it */

/* Host capabilities (mcc_host_v1.caps): what the engine can feed. */
#define MCC_HOST_CAP_ASYNC_EVENTS (1ull << 0)
#define MCC_HOST_CAP_CQ_IDENTITY (1ull << 1)
#define MCC_HOST_CAP_POLLER_PROGRESS (1ull << 2)
#define MCC_HOST_CAP_DEVICE_TELEMETRY (1ull << 3)
#define MCC_HOST_CAP_RDMA_CM (1ull << 4)
#define MCC_HOST_CAP_COMPLETION_TS (1ull << 5) /* completions carry timestamps */

/* Log levels of mcc_host_v1.log. */
enum mcc_log_level { MCC_LOG_ERROR = 0, MCC_LOG_WARN = 1, MCC_LOG_INFO = 2, MCC_LOG_DEBUG = 3 };

/* ------------------------------------------------------------- host table */

/* Given to init(); valid until fini() returns (the host keeps it alive). */
struct mcc_host_v1 {
	uint32_t abi_version; /* MCC_POLICY_ABI_V1 as the host knows it */
	uint32_t struct_size; /* sizeof(struct mcc_host_v1) of the host */
	const char *engine;   /* "te", "tent", or another engine's name */
	uint64_t caps;        /* MCC_HOST_CAP_* */
	/* Monotonic clock in ns; the only clock a module may read, and only off
	 * the hot path. Tests inject a virtual clock here. Never NULL. */
	uint64_t (*now_ns)(void *clock_arg);
	void *clock_arg;
	/* printf-style logging; thread-safe; never NULL. */
	void (*log)(void *log_arg, int level, const char *fmt, ...)
#if defined(__GNUC__)
	    __attribute__((format(printf, 3, 4)))
#endif
	    ;
	void *log_arg;
	uint32_t max_lanes; /* upper bound on lane_open() calls */
	uint32_t reserved0;
};

/* ------------------------------------------------------------ configuration */

/* The validated configuration (RFC "Configuration"), parsed by the host from
 * the ini file and MC_ADAPTIVE_CC_* environment variables. Every value is
 * already range-checked. Borrowed for the duration of init(); copy it. */
struct mcc_config_v1 {
	uint32_t struct_size;
	uint32_t mode; /* enum mcc_mode */
	uint64_t min_window_bytes;
	uint64_t max_window_bytes;
	uint64_t probe_window_bytes; /* 0: not set, probe admits one slice */
	uint32_t target_drain_us;
	uint32_t high_pressure_epochs;
	uint32_t low_pressure_epochs;
	uint32_t hard_error_threshold;
	uint32_t cooldown_ms;
	uint32_t cooldown_max_ms;     /* flap damping cap */
	uint32_t flap_window_ms;      /* repeated quarantine within this doubles cooldown */
	uint32_t epoch_us;            /* expected tick period */
	uint32_t md_percent;          /* multiplicative decrease: new = old * md / 100 */
	uint32_t fast_recovery_epochs;/* epochs halving the gap to the pre-cut window */
	uint64_t ai_bytes;            /* additive increase per low-pressure epoch (aimd:
	                               * at most half the window, less as queueing
	                               * nears target_drain_us / 2) */
	uint32_t probe_successes;     /* clean probe completions needed to recover */
	uint32_t evidence_tasks;      /* bound on tasks with retained evidence */
	uint32_t recorder_entries;    /* observe: ring size (power of two) */
	uint32_t reserved0;
	/* The module's own ini section [module.<name>]: returns the raw value of
	 * `key` or NULL. Strings are valid only during init(). */
	const char *(*module_get)(const struct mcc_config_v1 *cfg, const char *key);
	const void *module_arg; /* host-private, used by module_get */
};

/* init() output: what the module wants from the host. */
struct mcc_init_out_v1 {
	uint32_t struct_size; /* set by the host */
	uint32_t reserved0;
	uint64_t signal_mask; /* bit (1 << enum mcc_signal_kind) per wanted signal */
	uint64_t want_async_events; /* non-zero: feed on_async_event */
};

/* -------------------------------------------------------- domain identity */

struct mcc_device_desc_v1 {
	uint32_t struct_size;
	uint32_t device_id;     /* host index (TE context index, TENT NicID) */
	const char *name;       /* the kernel's name, e.g. "mlx5_0"; copied */
	uint32_t num_ports;
	uint32_t reserved0;
	uint64_t link_rate_bps; /* 0 when unknown */
	/* v1.1: what the host states about the device, MCC_DEVICE_F_* bits.
	 * Absent (a v1.0 host): 0, a hardware HCA. A module never probes the
	 * system for these facts; mcc_engine_device_flags() (mcc_engine.h)
	 * finds them in sysfs for a host that runs on real devices. */
	uint64_t flags;
};

/* The device is a software transport (rdma_rxe, siw): the host's CPUs run
 * the transport, so its send queue is the host's own serialisation and a
 * policy must not read that backlog as network queueing. */
#define MCC_DEVICE_F_SOFTWARE (1ull << 0)

struct mcc_route_desc_v1 {
	uint32_t struct_size;
	uint32_t port_num;      /* local port the route's QPs use (1-based) */
	uint32_t cq_id;         /* host id of the CQ the route's QPs complete on */
	uint32_t generation;    /* current endpoint generation (0 = none yet) */
	uint64_t route_id;      /* host id, echoed in evidence and stats */
	const char *peer_path;  /* TE peer_nic_path "host:port@nic"; copied */
	uint64_t remote_id;     /* remote machine / segment id */
	/* v1.3: the path's round-trip time without queueing, as the host knows
	 * it: from its topology or its operator ([engine] base_rtt_us), or
	 * measured before the path carried traffic. 0: unknown (a v1.0-v1.2
	 * host). A module may measure queueing beyond it where it cannot tell
	 * propagation from a standing queue by itself (a device's drain time on
	 * a long path). Values above one second read as one second. */
	uint64_t base_rtt_ns;
};

/* --------------------------------------------------------------- hot path */

/* Identity of the logical task a slice belongs to. */
struct mcc_task_ref_v1 {
	uint64_t batch_id;
	uint64_t task_id;
	uint32_t attempt; /* host retry count of the slice */
	uint32_t reserved0;
};

/* Permit flags. */
#define MCC_PERMIT_F_LIVE (1u << 0)     /* holds a reservation (set by try_acquire) */
#define MCC_PERMIT_F_PROBE (1u << 1)    /* admitted as the bounded PROBING probe */
#define MCC_PERMIT_F_OBSERVED (1u << 2) /* observe mode: would have been refused */
#define MCC_PERMIT_F_MODULE0 (1u << 8)  /* bits 8..15 private to the module */

/* A caller-owned admission permit. The host embeds one per slice (or per
 * post call), initialises it once with MCC_PERMIT_INIT, and passes it to
 * try_acquire(), then to exactly one settling path for every reserved byte:
 * release() for bytes not handed to hardware (or reclaimed without a WC),
 * on_completion() for bytes that were posted. The module writes it; the host
 * only reads `bytes`, `generation` and `reason`. No allocation is involved.
 * After the last byte is settled the permit is dead (F_LIVE clear) and may be
 * reused for the next try_acquire. Settling more bytes than are live is
 * detected, counted in the domain stats, and ignored. A refused try_acquire
 * (MCC_DEFER, MCC_AVOID) leaves the permit dead and naming no domain: every
 * member is 0 but struct_size and reason, whatever it held before; settling
 * it is ignored and, with no domain to count it in, counted nowhere.
 *
 * Hand-off across lanes: a permit is admitted on the posting lane and may be
 * settled on another (the poller's, or the monitor's at teardown). The
 * module reads and writes its members with plain loads and stores, so the
 * host must order the two: everything try_acquire() wrote happens-before the
 * settle call. Posting the WR and polling its WC give that order on verbs
 * providers (the write barrier before the doorbell, the read barrier after a
 * valid CQE), even when the WC is polled before ibv_post_send() returns, as
 * long as the host does not touch the permit after posting; a host that hands
 * a permit over otherwise (a queue, a teardown sweep) does it through its own
 * lock or a release/acquire pair. At most one thread
 * settles a permit at a time; a settle racing another on the same permit is
 * a host bug (not detected).
 *
 * Size: 72 bytes, fixed for major 1 (MCC_PERMIT_V1_SIZE; hosts allocate it,
 * so it can never grow). What the bytes buy: route and device (16) let the
 * poller settle on the domains the bytes were reserved in with no lookup,
 * even after a route_rebind; bytes (8) allow partial settles (a WR list
 * posted in part); generation (4) fences late feedback of an old endpoint;
 * task (24) ties each completion to its slice's task and attempt, so the
 * evidence of task_query resolves per slice with no host call; flags,
 * reason and struct_size (10) carry the exactly-once state and the refusal
 * reason; module16/module64 (10) are a module's own per-permit state (the
 * shipped modules leave them 0). A host whose per-slice record has no room
 * keeps permits beside it, in a table keyed by the slice
 * (plugin_api/adapters/mooncake does). */
struct mcc_permit_v1 {
	uint32_t struct_size; /* sizeof(struct mcc_permit_v1), set by MCC_PERMIT_INIT */
	uint32_t flags;       /* MCC_PERMIT_F_* */
	mcc_route *route;     /* admitted route (module-owned handle) */
	mcc_device *device;   /* admitted device */
	uint64_t bytes;       /* reserved and not yet settled */
	uint32_t generation;  /* endpoint generation the permit was admitted on */
	uint16_t reason;      /* enum mcc_reason of the last DEFER/AVOID, else 0 */
	uint16_t module16;    /* module-private */
	struct mcc_task_ref_v1 task;
	uint64_t module64;    /* module-private */
};
#define MCC_PERMIT_INIT { sizeof(struct mcc_permit_v1), 0, 0, 0, 0, 0, 0, 0, { 0, 0, 0, 0 }, 0 }

/* One work completion as polled (RFC WC matrix input). */
struct mcc_completion_v1 {
	uint32_t struct_size;
	int32_t wc_status;   /* raw enum ibv_wc_status, unknown values allowed */
	uint32_t vendor_err; /* diagnostic only; never widens scope */
	uint32_t generation; /* endpoint generation captured at post */
	uint64_t bytes;      /* bytes of the permit this WC settles; 0: all it holds */
	uint64_t post_ns;    /* host clock at post (0 = not sampled) */
	uint64_t complete_ns;/* host clock at poll (0 = not sampled) */
	uint32_t qp_num;
	uint32_t opcode;     /* raw enum ibv_wc_opcode */
};

/* One async event as read by ibv_get_async_event (RFC async matrix input). */
struct mcc_async_event_v1 {
	uint32_t struct_size;
	int32_t event_type;  /* raw enum ibv_event_type, unknown values allowed */
	mcc_device *device;  /* device the event was read from (never NULL) */
	mcc_route *route;    /* QP/WQ/SRQ/path events: route owning the object, or NULL */
	uint32_t port_num;   /* port events */
	uint32_t cq_id;      /* CQ events */
	uint32_t qp_num;     /* QP events */
	uint32_t generation; /* generation of the object the event names */
	uint64_t now_ns;
};

/* One non-WC signal (RFC third matrix input). */
struct mcc_signal_v1 {
	uint32_t struct_size;
	uint32_t kind;       /* enum mcc_signal_kind */
	mcc_device *device;  /* or NULL */
	mcc_route *route;    /* or NULL */
	struct mcc_task_ref_v1 task; /* batch_id == 0 && task_id == 0: no task */
	uint32_t generation;
	int32_t error;       /* errno or engine status, when relevant */
	int32_t raw;         /* MCC_SIG_CM_EVENT: rdma_cm event type */
	uint32_t reserved0;
	uint64_t value0;
	uint64_t value1;
	uint64_t now_ns;
};

/* ------------------------------------------------------------ observability */

/* task_query() host facts (what the engine already knows of the task). */
#define MCC_TASKQ_SEEN_SUCCESS (1u << 0) /* at least one slice completed OK */
#define MCC_TASKQ_FINISHED (1u << 1)     /* no slice outstanding */
#define MCC_TASKQ_UNSUPPORTED (1u << 2)  /* task not on an RDMA transport */
#define MCC_TASKQ_FAILED (1u << 3)       /* a slice ended in a terminal error (the
                                          * host failed the task) */

/* Fields of mcc_task_detail_v1 that were observed (the rest are unobserved). */
#define MCC_OBS_REASON (1u << 0)
#define MCC_OBS_SCOPE (1u << 1)
#define MCC_OBS_PATH (1u << 2)
#define MCC_OBS_TIME (1u << 3)
#define MCC_OBS_GENERATION (1u << 4)
#define MCC_OBS_WINDOW (1u << 5)
#define MCC_OBS_INFLIGHT (1u << 6)
#define MCC_OBS_COOLDOWN (1u << 7)
#define MCC_OBS_WC (1u << 8)

#define MCC_PATH_NAME_MAX 96

/* The detailed query (RFC "Caller Observability"). */
struct mcc_task_detail_v1 {
	uint32_t struct_size; /* set by the caller */
	uint32_t state;       /* enum mcc_task_state, same as the minimal query */
	uint32_t observed;    /* MCC_OBS_* valid fields; others are unobserved */
	uint32_t reason;      /* enum mcc_reason, most recent relevant */
	uint32_t scope;       /* enum mcc_scope */
	uint32_t resolved;    /* 1: the reason was resolved by a later success */
	uint64_t route_id;    /* affected path */
	char path[MCC_PATH_NAME_MAX]; /* affected path name, NUL-terminated */
	uint64_t observed_ns; /* host clock when observed */
	uint32_t attempt;
	uint32_t generation;
	uint64_t window_bytes;   /* at observation */
	uint64_t inflight_bytes; /* at observation */
	uint64_t cooldown_ms;    /* remaining quarantine cooldown at observation */
	int32_t wc_status;       /* raw WC status when the evidence was a WC */
	uint32_t vendor_err;
	uint32_t path_state;     /* enum mcc_path_state at observation */
	uint32_t reserved0;
};

/* Read-only statistics snapshot of one domain. */
struct mcc_domain_stats_v1 {
	uint32_t struct_size;
	uint32_t state;         /* enum mcc_path_state */
	uint64_t window_bytes;
	uint64_t inflight_bytes;/* reserved in the domain, incl. cached lane credit */
	uint32_t generation;
	uint32_t hard_errors;   /* current count toward the threshold */
	uint64_t cooldown_ms;   /* remaining, 0 when not quarantined */
	uint64_t admits;
	uint64_t defers;
	uint64_t avoids;
	uint64_t would_defer;   /* observe mode */
	uint64_t would_avoid;   /* observe mode */
	uint64_t completed_bytes;
	uint64_t completions;
	uint64_t errors;        /* non-success completions */
	uint64_t stale_feedback;/* settled only, older generation */
	uint64_t double_release;/* settle attempts beyond the live bytes */
	uint64_t quarantines;
	uint64_t probes;
	uint64_t window_cuts;   /* decreases on pressure (a cut; a pace begun or
	                         * lowered); a calm epoch's smaller window (the
	                         * aimd law's pull) is not one */
	uint64_t drain_us;      /* last epoch's drain-time estimate */
	uint64_t rate_bps;      /* measured delivery rate (bytes/s) */
	uint64_t suppressed_deadlines; /* deadlines dropped for poller stall */
	/* v1.2 (try_acquire_qos). The bytes of the window held back for HIGH
	 * now (0 while no HIGH work is active), and the slices of each class
	 * (enum mcc_qos_class) this domain refused (observe: would have
	 * refused), the window and the reserve alike. */
	uint64_t qos_reserve_bytes;
	uint64_t qos_refused[MCC_QOS_CLASS_COUNT_];
};

/* domain_stats() selector. */
enum mcc_domain_kind { MCC_DOMAIN_DEVICE = 0, MCC_DOMAIN_ROUTE = 1 };

/* Lane roles (informative; the module may size credit caches by role). */
enum mcc_lane_role {
	MCC_LANE_POST = 1,
	MCC_LANE_POLL = 2,
	MCC_LANE_POST_POLL = 3,
	MCC_LANE_MONITOR = 4,
};

struct mcc_lane_desc_v1 {
	uint32_t struct_size;
	uint32_t lane_id; /* 0 .. host->max_lanes-1, unique */
	uint32_t role;    /* enum mcc_lane_role */
	uint32_t reserved0;
};

/* ------------------------------------------------------------- descriptor */

struct mcc_policy_v1 {
	uint32_t abi_version; /* MCC_POLICY_ABI_V1 (major must equal 1) */
	uint32_t struct_size; /* sizeof(struct mcc_policy_v1) of the module */
	const char *name;     /* short unique name, e.g. "aimd"; non-NULL */
	const char *description;
	uint32_t mode;        /* enum mcc_mode the module implements */
	uint32_t reserved0;
	uint64_t caps;        /* MCC_CAP_* */

	/*
	 * init - create the module instance.
	 * Inputs: host table and validated config (borrowed; host table stays
	 *   valid until fini returns). out->struct_size set by the host.
	 * Outputs: *ctx = module context; *out filled (signal subscriptions).
	 * Thread: engine constructor; called once per load, never concurrently.
	 * Errors: 0 or negative errno; on error *ctx is ignored, the module is
	 *   unloaded and the controller stays off (null module).
	 */
	int (*init)(const struct mcc_host_v1 *host, const struct mcc_config_v1 *cfg,
	            struct mcc_init_out_v1 *out, void **ctx);

	/*
	 * fini - destroy the instance. Called after every lane, route and device
	 * was closed and the host quiesced its threads. Frees all module memory.
	 * Thread: the last engine's mcc_instance_release, under the loader's
	 * lock; never concurrently with any other callback.
	 * Errors: none (void); it cannot fail.
	 */
	void (*fini)(void *ctx);

	/*
	 * lane_open / lane_close - per-worker-thread context (a "lane"): the
	 * host's poster, poller, or post+poll thread. Hot-path calls take it so a
	 * module keeps per-thread state (credit caches, counters) without TLS.
	 * lane_close returns any cached byte credit to the shared domains.
	 * Thread: lane_open: the worker's constructor; lane_close: the worker's
	 * teardown, after the lane's last hot-path call. Both may run
	 * concurrently with other lanes and with slow-path callbacks.
	 * Errors: lane_open 0 / -errno (-EINVAL, -ENOMEM); lane_close none
	 * (void; it cannot fail, and a NULL lane is ignored).
	 * A lane handle used after its lane_close is a host error. The shipped
	 * modules (modules/core) keep the lane's memory until fini and detect
	 * it: try_acquire and release return -EBADF (nothing reserved or
	 * settled), on_completion and poller_progress ignore it, a second
	 * lane_close does nothing; once the lane id is opened again the old
	 * handle is that lane's.
	 */
	int (*lane_open)(void *ctx, const struct mcc_lane_desc_v1 *desc, mcc_lane **lane);
	void (*lane_close)(void *ctx, mcc_lane *lane);

	/*
	 * device_open / device_close - the device domain of one local RDMA
	 * device (TE: one per worker context; TENT: one per NicID). Close only
	 * after all routes on it are closed and all its permits settled (the
	 * aimd and observe modules survive a device closed first: they log an
	 * error, refuse new routes on it and free it with its last route).
	 * Thread: any, slow path (engine constructor, monitor, teardown).
	 * Errors: device_open 0 / -errno (-EINVAL, -ENOMEM); device_close none
	 * (void; it cannot fail, and a NULL device is ignored).
	 */
	int (*device_open)(void *ctx, const struct mcc_device_desc_v1 *desc, mcc_device **dev);
	void (*device_close)(void *ctx, mcc_device *dev);

	/*
	 * route_open / route_close - the route domain (local device, remote NIC
	 * path). Opening a route already known by (device, route_id) is allowed
	 * and returns a fresh handle only if none is open. route_close only after
	 * every permit on it is settled.
	 * route_rebind - local-NIC handoff: the route now uses `dev` and
	 * `port_num` (a new device domain); state and window of the route stay,
	 * live permits keep settling against the device they were admitted on.
	 * Thread: any, slow path.
	 * Errors: route_open and route_rebind 0 / -errno (-EINVAL, -ENOMEM);
	 * route_close none (void; it cannot fail, a NULL route is ignored, and
	 * each close drops one open of a handle route_open returned twice).
	 */
	int (*route_open)(void *ctx, mcc_device *dev, const struct mcc_route_desc_v1 *desc,
	                  mcc_route **route);
	int (*route_rebind)(void *ctx, mcc_route *route, mcc_device *dev, uint32_t port_num,
	                    uint32_t cq_id);
	void (*route_close)(void *ctx, mcc_route *route);

	/*
	 * try_acquire - HOT PATH. Admission immediately before ibv_post_send for
	 * `bytes` (one complete slice, never split) on `route` and its device,
	 * for the endpoint generation `generation`.
	 * Returns MCC_ADMIT (permit live with `bytes` reserved in both domains),
	 * MCC_DEFER or MCC_AVOID (nothing reserved; the permit holds only
	 * permit->reason, which says why: struct mcc_permit_v1), or a negative
	 * errno (-EINVAL: bad handle/zero bytes, the permit untouched; treat as
	 * ADMIT-less pass-through: the host posts without a permit).
	 * A failed second-domain reservation rolls back the first. An empty
	 * domain admits one slice larger than its window, except a route the
	 * policy paces (below its minimum window under sustained congestion),
	 * which admits a slice only once its pace has earned the bytes: its
	 * MCC_DEFER has the usual retry-after of one epoch. Observe mode always
	 * returns MCC_ADMIT and sets MCC_PERMIT_F_OBSERVED when enforce would not.
	 * Thread: the lane's thread.
	 * Errors: -EINVAL (above); a refusal is a decision, not an error.
	 */
	int (*try_acquire)(mcc_lane *lane, mcc_route *route, uint64_t bytes, uint32_t generation,
	                   const struct mcc_task_ref_v1 *task, struct mcc_permit_v1 *permit);

	/*
	 * release - HOT PATH. Return `bytes` of a live permit without a WC:
	 * unposted bytes (whole or partial post, post rejection, generation
	 * change, cancellation) or posted bytes reclaimed by teardown with no WC
	 * to come. Returns 0, or -EALREADY when the permit had fewer live bytes
	 * than `bytes` (a double release: counted, only the live bytes return).
	 * Thread: the lane's thread.
	 * Errors: -EALREADY (above), -EINVAL (NULL permit, or a struct_size
	 * below MCC_PERMIT_V1_SIZE: nothing settled).
	 */
	int (*release)(mcc_lane *lane, struct mcc_permit_v1 *permit, uint64_t bytes, uint32_t reason);

	/*
	 * on_completion - HOT PATH. A polled WC for (part of) a live permit:
	 * settles wc->bytes of it and feeds the classification. Feedback whose
	 * generation is older than the route's current one settles accounting
	 * only. Thread: the poller lane (may differ from the posting lane).
	 * Errors: none (void); a NULL permit or wc, a permit shorter than
	 * MCC_PERMIT_V1_SIZE or a wc shorter than MCC_COMPLETION_V1_0_SIZE is
	 * ignored.
	 */
	void (*on_completion)(mcc_lane *lane, struct mcc_permit_v1 *permit,
	                      const struct mcc_completion_v1 *wc);

	/*
	 * poller_progress - HOT PATH (once per poll pass, not per WC): the
	 * poller of `dev` made a pass and reaped `ncqe` WCs. Used to tell a
	 * stalled poller from a network timeout. Thread: the poller lane.
	 * Errors: none (void); a NULL device is ignored.
	 */
	void (*poller_progress)(mcc_lane *lane, mcc_device *dev, uint32_t ncqe);

	/*
	 * on_async_event - an ibv_get_async_event record, after the engine's own
	 * handling. Scope never widens beyond the RFC table. Thread: monitor.
	 * Errors: none (void); a NULL event is ignored.
	 */
	void (*on_async_event)(void *ctx, const struct mcc_async_event_v1 *ev);

	/*
	 * on_signal - a non-WC signal; only kinds in init's signal_mask are
	 * delivered. Thread: whichever engine thread owns the signal.
	 * Errors: none (void); a NULL signal is ignored.
	 */
	void (*on_signal)(void *ctx, const struct mcc_signal_v1 *sig);

	/*
	 * tick - one control epoch at host time `now_ns` (monotonic). All policy
	 * updates (AIMD, state transitions, cooldowns) happen here.
	 * Thread: monitor, roughly every cfg->epoch_us; never concurrently with
	 * itself. Errors: none (void).
	 */
	void (*tick)(void *ctx, uint64_t now_ns);

	/*
	 * task_query - minimal and detailed query for (batch_id, task_id).
	 * `host_flags` are MCC_TASKQ_* facts. Fills *out when non-NULL
	 * (out->struct_size set by the caller, at least
	 * MCC_TASK_DETAIL_V1_0_SIZE; members beyond it are not written) and
	 * returns the enum mcc_task_state (>= 0), or a negative errno.
	 * Never polls, posts, probes or reads NIC state. Valid until
	 * batch_free(batch_id). Thread: application threads, concurrently with
	 * everything. Errors: -EINVAL (task NULL, or out shorter than its v1.0
	 * size: nothing written); nothing else fails.
	 *
	 * The state (RFC "Caller Observability"), first rule that applies:
	 *  1. MCC_TASKQ_UNSUPPORTED: UNKNOWN, nothing observed.
	 *  2. MCC_TASKQ_FAILED: never NORMAL (nor CONGESTED): LONG_UNAVAILABLE
	 *     while unresolved LONG_UNAVAILABLE evidence remains, else UNKNOWN.
	 *  3. The most severe unresolved evidence of the task wins:
	 *     LONG_UNAVAILABLE, then CONGESTED, then UNKNOWN.
	 *  4. Nothing unresolved: NORMAL when a success of the task was seen,
	 *     by the module or by the host (MCC_TASKQ_SEEN_SUCCESS), else
	 *     UNKNOWN. Successes leave no record unless they may resolve
	 *     evidence (the fast path stays free), so a host that wants its
	 *     clean tasks to read NORMAL passes MCC_TASKQ_SEEN_SUCCESS; without
	 *     it a task with only successes reads UNKNOWN.
	 * Resolution is per slice as far as the task reference tells slices
	 * apart (it carries the slice's attempt, no slice index):
	 *  - CONGESTED evidence that did not come from an error completion (a
	 *    window deferral, congestion feedback, a soft-deadline route
	 *    timeout) is resolved by any later success of the task whose
	 *    attempt is not older: the task's traffic flows again;
	 *  - LONG_UNAVAILABLE evidence (an AVOID, a quarantine, a failed probe,
	 *    no usable path) says the task has no usable path now: any later
	 *    success of the task, whatever its attempt, resolves it (a slice
	 *    completed, so the task has a path: its slices moved), as does the
	 *    recovery of the path it was observed on; a slice still without a
	 *    path records it again at its next refusal;
	 *  - every other item (an error completion, a refused or reclaimed
	 *    post) belongs to one slice's attempt, and a success of the same
	 *    attempt may be another slice's: only a later success with a newer
	 *    attempt resolves it (the re-dispatched slice: a host raises
	 *    `attempt` when it re-dispatches an AVOIDed or failed slice), or the
	 *    recovery of the path it was observed on (CONGESTED items only);
	 *  - late feedback of an older endpoint generation never overwrites
	 *    newer evidence.
	 * No record: a (batch, task) the module never recorded evidence for,
	 * whose batch was freed, or whose entry was evicted (evidence_tasks
	 * bound) has no record; the state then comes from the host's facts
	 * alone (rules 1, 2 and 4) and the detail says so: reason
	 * MCC_REASON_NO_RECORD with only MCC_OBS_REASON observed. A live task
	 * that has met no anomaly has no record either: without host facts it
	 * cannot be told from an unknown one, and both read UNKNOWN.
	 */
	int (*task_query)(void *ctx, const struct mcc_task_ref_v1 *task, uint32_t host_flags,
	                  struct mcc_task_detail_v1 *out);

	/*
	 * batch_free - drop all evidence of a batch: its tasks read as having no
	 * record (task_query) until new evidence names them.
	 * Thread: application threads, concurrently with everything.
	 * Errors: none (void); an unknown or already freed batch is a no-op.
	 */
	void (*batch_free)(void *ctx, uint64_t batch_id);

	/*
	 * domain_stats - read-only snapshot of a device (kind MCC_DOMAIN_DEVICE,
	 * `domain` is an mcc_device *) or route domain. Fills *out up to
	 * out->struct_size (at least MCC_DOMAIN_STATS_V1_0_SIZE).
	 * Thread: any, concurrently with everything.
	 * Errors: 0 / -EINVAL (NULL domain or out, out shorter than its v1.0
	 * size, unknown kind).
	 */
	int (*domain_stats)(void *ctx, int kind, const void *domain, struct mcc_domain_stats_v1 *out);

	/*
	 * dump - write the module's recorder (observe: JSON lines of normalised
	 * signals and transitions) to file descriptor `fd`. Returns the number of
	 * records written or a negative errno.
	 * Thread: any; not on a hot path (it makes system calls).
	 * Errors: -EOPNOTSUPP without a recorder, -EBADF (fd < 0), or the
	 * -errno of a failed write.
	 */
	int (*dump)(void *ctx, int fd);

	/*
	 * config_check - v1.2, optional. Validate one key of the module's own
	 * ini section [module.<name>], with no instance: the host calls it
	 * once per key of that section, in file order - an engine before the
	 * module's init(), and `mcc check` for every [module.*] section of
	 * the file (it loads each module named there without running init()).
	 * Inputs: `key` and its raw `value` as the file spells them (borrowed,
	 *   NUL-terminated; a key of at most 63 bytes, a value of at most 195).
	 * Outputs: why[0..len): a one-line reason, NUL-terminated, when the key
	 *   is refused (the host prefixes file, line and key). For an unknown
	 *   key, naming the keys the module takes helps the user.
	 * Returns 0: a key of the module with a valid value; -ENOENT: not a
	 *   key of this module; -EINVAL: a key of the module with a value it
	 *   refuses. A refused key is a configuration error: the controller
	 *   stays off (the null module), as for a bad [controller] value.
	 * Thread: any, slow path; it may run before any init(), after fini()
	 *   and concurrently with itself and with a live instance: it reads
	 *   nothing but its arguments and constant tables.
	 * Absent (a module built against v1.0 or v1.1) or NULL: the host does
	 *   not validate the section (`mcc check` says so) and the module reads
	 *   its keys through cfg->module_get in init(), as before.
	 */
	int (*config_check)(const char *key, const char *value, char *why, size_t len);

	/*
	 * try_acquire_qos - HOT PATH (v1.2). try_acquire for a slice of QoS
	 * class `qos_class` (enum mcc_qos_class): the same contract, results
	 * and permit, and the window is shared in class order: while HIGH work
	 * is active on a domain the module may keep part of its window for
	 * HIGH and refuse (MCC_DEFER, reason BYTE_WINDOW) a MEDIUM or LOW slice
	 * that would eat into it; it never refuses HIGH for a lower class's
	 * sake, and with no HIGH work (or an empty domain) a lower class gets
	 * the whole window. Observe mode admits and sets MCC_PERMIT_F_OBSERVED
	 * when enforce would not. Refusals are counted per class in the domain
	 * stats (qos_refused). The engine calls it when `[engine] qos = on`
	 * (the enum's comment above). A module without it (struct_size below
	 * this member, or NULL) gets libmcc's: its try_acquire, class ignored.
	 * Thread: the lane's thread.
	 * Errors: as try_acquire, and -EINVAL for a class above MCC_QOS_LOW
	 * (the permit untouched).
	 */
	int (*try_acquire_qos)(mcc_lane *lane, mcc_route *route, uint64_t bytes, uint32_t generation,
	                       const struct mcc_task_ref_v1 *task, uint32_t qos_class,
	                       struct mcc_permit_v1 *permit);
};

/* Define the module's descriptor. Use exactly once per module, at file scope:
 *     MCC_POLICY_V1_DEFINE = { .abi_version = MCC_POLICY_ABI_V1, ... };      */
#if defined(__GNUC__)
#define MCC_EXPORT __attribute__((visibility("default")))
#else
#define MCC_EXPORT
#endif
#define MCC_POLICY_V1_DEFINE MCC_EXPORT const struct mcc_policy_v1 mcc_policy_v1

/* ------------------------------------------------------------ frozen sizes */

/* The size of every struct that crosses the boundary, frozen per minor
 * version. A receiver checks a peer's struct_size against the size of the
 * minor that introduced the struct, never against sizeof() of its own header
 * (a v1.0 producer must keep working with a v1.1 consumer), and reads a
 * member appended by a later minor only when MCC_HAS_MEMBER() says the
 * producer's struct_size covers it. Members are only ever appended; a minor
 * that appends one adds its own MCC_*_V1_<minor>_SIZE line here.
 * A struct whose struct_size is below its V1_0 size is refused whole, never
 * read or written in part: a callback returning int returns -EINVAL, a void
 * callback ignores it as it ignores NULL, and init() fails with -EINVAL for
 * a short host table, configuration or init output.
 * The permit is the exception: hosts allocate it and the module writes all
 * of it, so it never grows within major 1 (MCC_PERMIT_INIT sets struct_size
 * to MCC_PERMIT_V1_SIZE; try_acquire rejects a smaller one with -EINVAL). */
#define MCC_POLICY_V1_0_SIZE 200u     /* struct mcc_policy_v1 (module descriptor) */
#define MCC_POLICY_V1_2_SIZE 216u     /* v1.2: config_check, try_acquire_qos */
#define MCC_HOST_V1_0_SIZE 64u        /* struct mcc_host_v1 */
#define MCC_CONFIG_V1_0_SIZE 112u     /* struct mcc_config_v1 */
#define MCC_INIT_OUT_V1_0_SIZE 24u    /* struct mcc_init_out_v1 */
#define MCC_DEVICE_DESC_V1_0_SIZE 32u /* struct mcc_device_desc_v1 */
#define MCC_DEVICE_DESC_V1_1_SIZE 40u /* v1.1: flags */
#define MCC_ROUTE_DESC_V1_0_SIZE 40u  /* struct mcc_route_desc_v1 */
#define MCC_ROUTE_DESC_V1_3_SIZE 48u  /* v1.3: base_rtt_ns */
#define MCC_LANE_DESC_V1_0_SIZE 16u   /* struct mcc_lane_desc_v1 */
#define MCC_COMPLETION_V1_0_SIZE 48u  /* struct mcc_completion_v1 */
#define MCC_ASYNC_EVENT_V1_0_SIZE 48u /* struct mcc_async_event_v1 */
#define MCC_SIGNAL_V1_0_SIZE 88u      /* struct mcc_signal_v1 */
#define MCC_TASK_DETAIL_V1_0_SIZE 184u /* struct mcc_task_detail_v1 */
#define MCC_DOMAIN_STATS_V1_0_SIZE 168u /* struct mcc_domain_stats_v1 */
#define MCC_DOMAIN_STATS_V1_2_SIZE 200u /* v1.2: qos_reserve_bytes, qos_refused */
#define MCC_PERMIT_V1_SIZE 72u        /* struct mcc_permit_v1: never grows in major 1 */

/* ------------------------------------------------------------ frozen layout */
#if defined(__cplusplus)
#define MCC_STATIC_ASSERT static_assert
#else
#define MCC_STATIC_ASSERT _Static_assert
#endif
#if UINTPTR_MAX == 0xffffffffffffffffu
MCC_STATIC_ASSERT(offsetof(struct mcc_policy_v1, abi_version) == 0, "abi_version first");
MCC_STATIC_ASSERT(offsetof(struct mcc_policy_v1, struct_size) == 4, "struct_size second");
MCC_STATIC_ASSERT(offsetof(struct mcc_policy_v1, name) == 8, "v1 layout");
MCC_STATIC_ASSERT(offsetof(struct mcc_policy_v1, caps) == 32, "v1 layout");
MCC_STATIC_ASSERT(offsetof(struct mcc_policy_v1, init) == 40, "v1 layout");
MCC_STATIC_ASSERT(offsetof(struct mcc_policy_v1, try_acquire) == 112, "v1 layout");
MCC_STATIC_ASSERT(offsetof(struct mcc_policy_v1, tick) == 160, "v1 layout");
MCC_STATIC_ASSERT(offsetof(struct mcc_policy_v1, dump) == 192, "v1 layout");
/* Each minor's size ends at the last member it introduced (never sizeof(),
 * which grows with the next minor). */
MCC_STATIC_ASSERT(offsetof(struct mcc_policy_v1, dump) + sizeof(void (*)(void)) ==
                      MCC_POLICY_V1_0_SIZE, "v1.0 size");
MCC_STATIC_ASSERT(offsetof(struct mcc_policy_v1, config_check) == MCC_POLICY_V1_0_SIZE,
                  "v1.2 config_check");
MCC_STATIC_ASSERT(offsetof(struct mcc_policy_v1, try_acquire_qos) + sizeof(void (*)(void)) ==
                      MCC_POLICY_V1_2_SIZE, "v1.2 size");
MCC_STATIC_ASSERT(sizeof(struct mcc_permit_v1) == MCC_PERMIT_V1_SIZE, "permit size");
MCC_STATIC_ASSERT(offsetof(struct mcc_permit_v1, bytes) == 24, "permit layout");
MCC_STATIC_ASSERT(offsetof(struct mcc_permit_v1, task) == 40, "permit layout");
MCC_STATIC_ASSERT(sizeof(struct mcc_completion_v1) == MCC_COMPLETION_V1_0_SIZE, "completion size");
MCC_STATIC_ASSERT(sizeof(struct mcc_async_event_v1) == MCC_ASYNC_EVENT_V1_0_SIZE, "async size");
MCC_STATIC_ASSERT(sizeof(struct mcc_signal_v1) == MCC_SIGNAL_V1_0_SIZE, "signal size");
MCC_STATIC_ASSERT(sizeof(struct mcc_task_ref_v1) == 24, "task ref size");
MCC_STATIC_ASSERT(sizeof(struct mcc_task_detail_v1) == MCC_TASK_DETAIL_V1_0_SIZE, "detail size");
MCC_STATIC_ASSERT(offsetof(struct mcc_domain_stats_v1, qos_reserve_bytes) ==
                      MCC_DOMAIN_STATS_V1_0_SIZE, "stats v1.0");
MCC_STATIC_ASSERT(sizeof(struct mcc_domain_stats_v1) == MCC_DOMAIN_STATS_V1_2_SIZE, "stats size");
MCC_STATIC_ASSERT(sizeof(struct mcc_host_v1) == MCC_HOST_V1_0_SIZE, "host table size");
MCC_STATIC_ASSERT(sizeof(struct mcc_config_v1) == MCC_CONFIG_V1_0_SIZE, "config size");
MCC_STATIC_ASSERT(offsetof(struct mcc_device_desc_v1, flags) == MCC_DEVICE_DESC_V1_0_SIZE, "dev desc v1.0");
MCC_STATIC_ASSERT(sizeof(struct mcc_device_desc_v1) == MCC_DEVICE_DESC_V1_1_SIZE, "dev desc size");
MCC_STATIC_ASSERT(offsetof(struct mcc_route_desc_v1, base_rtt_ns) == MCC_ROUTE_DESC_V1_0_SIZE,
                  "route desc v1.0");
MCC_STATIC_ASSERT(sizeof(struct mcc_route_desc_v1) == MCC_ROUTE_DESC_V1_3_SIZE, "route desc size");
MCC_STATIC_ASSERT(sizeof(struct mcc_init_out_v1) == MCC_INIT_OUT_V1_0_SIZE, "init out size");
MCC_STATIC_ASSERT(sizeof(struct mcc_lane_desc_v1) == MCC_LANE_DESC_V1_0_SIZE, "lane desc size");
#endif

/* ------------------------------------------------------- unversioned names */

/*
 * Ten of the v1 structs were first published without their _v1 suffix.
 * Those spellings stay valid for the whole of major 1: each is a macro for
 * the _v1 name, so `struct mcc_permit` and `struct mcc_permit_v1` are one
 * type and old sources compile unchanged (tests/loader/headers.sh). New code
 * uses the _v1 names. Define MCC_NO_UNVERSIONED_NAMES
 * before including this header to keep the old spellings out of your
 * namespace.
 */
#ifndef MCC_NO_UNVERSIONED_NAMES
#define mcc_device_desc mcc_device_desc_v1
#define mcc_route_desc mcc_route_desc_v1
#define mcc_lane_desc mcc_lane_desc_v1
#define mcc_task_ref mcc_task_ref_v1
#define mcc_permit mcc_permit_v1
#define mcc_completion mcc_completion_v1
#define mcc_async_event mcc_async_event_v1
#define mcc_signal mcc_signal_v1
#define mcc_task_detail mcc_task_detail_v1
#define mcc_domain_stats mcc_domain_stats_v1
#endif

#ifdef __cplusplus
}
#endif
#endif /* MCC_POLICY_V1_H */
