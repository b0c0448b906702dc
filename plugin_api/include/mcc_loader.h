/* SPDX-License-Identifier: MIT */
/*
 * mcc_loader.h - the host library (libmcc): what an engine (TE, TENT) links
 * to load the process's single congestion-control policy.
 *
 * Sequence in an engine:
 *   worker construction:  mcc_instance_acquire(&opts, &inst)   (always usable)
 *                          ops = mcc_instance_ops(inst); ctx = mcc_instance_ctx(inst)
 *                          ops->lane_open(ctx, ...), ops->device_open(ctx, ...)
 *   data path:             ops->try_acquire(lane, ...) ... (see mcc_policy_v1.h)
 *   teardown:              close lanes/routes/devices, mcc_instance_release(inst)
 *
 * Configuration precedence, lowest to highest:
 *   1. built-in defaults (mcc_config_defaults());
 *   2. the ini file: opts.ini_path, else $MC_ADAPTIVE_CC_CONFIG (the value
 *      "none": no file), else the installed SYSCONFDIR/mcc/mcc.ini when
 *      it exists (mcc.ini(5) names the path of an installation), else none;
 *   3. MC_ADAPTIVE_CC_* environment variables, one per RFC parameter.
 * The merged result is validated as a whole; any error leaves the controller
 * off (null module) and never yields a partially defaulted configuration.
 * A module of ABI 1.2 or later checks the keys of its own [module.<name>]
 * section (config_check) before its init(); a key it refuses is an error
 * like any other.
 * Path-like environment variables (MC_ADAPTIVE_CC_CONFIG,
 * MC_ADAPTIVE_CC_MODULE_DIR) are read with secure_getenv: ignored in setuid
 * processes.
 */
#ifndef MCC_LOADER_H
#define MCC_LOADER_H

#include "mcc_policy_v1.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Everything the loader knows after parsing: the RFC parameters given to the
 * module plus the loader's own choices. */
struct mcc_config {
	uint32_t struct_size;
	uint32_t reserved0;
	struct mcc_config_v1 policy;     /* what init() receives (module_get set by host) */
	char module[256];                /* short name or absolute path of the module */
	char module_dir[256];            /* where short names resolve */
	uint32_t tent_cc_plugin_enabled; /* [engine] tent_cc_plugin (PR #2489 slot) */
	uint32_t qos_enabled;            /* [engine] qos: allowed alongside */
};

/* Options for mcc_instance_acquire(). Zero-initialise, set struct_size to
 * sizeof(struct mcc_loader_opts). A struct_size below
 * MCC_LOADER_OPTS_V1_0_SIZE is refused whole (-EINVAL, controller off);
 * members a later release appends are read only when struct_size covers
 * them. */
struct mcc_loader_opts {
	uint32_t struct_size;
	uint32_t max_lanes;         /* 0: 64 */
	const char *engine;         /* "te" / "tent" */
	const char *ini_path;       /* NULL: $MC_ADAPTIVE_CC_CONFIG, else the installed file */
	uint64_t host_caps;         /* MCC_HOST_CAP_* */
	uint64_t (*now_ns)(void *); /* NULL: CLOCK_MONOTONIC */
	void *clock_arg;
	void (*log)(void *, int, const char *, ...); /* NULL: stderr, up to the level
	                                              * of $MC_ADAPTIVE_CC_LOG_LEVEL
	                                              * (error, warn, info, debug;
	                                              * default warn) */
	void *log_arg;
	const char *module_dir;     /* NULL: $MC_ADAPTIVE_CC_MODULE_DIR, else PKGLIBDIR (installed modules) */
	int ignore_env;             /* non-zero: do not read MC_ADAPTIVE_CC_* (tests) */
	int reserved0;
};
/* The size of struct mcc_loader_opts as first released (frozen). */
#define MCC_LOADER_OPTS_V1_0_SIZE 80u
#if UINTPTR_MAX == 0xffffffffffffffffu
MCC_STATIC_ASSERT(sizeof(struct mcc_loader_opts) >= MCC_LOADER_OPTS_V1_0_SIZE &&
                      offsetof(struct mcc_loader_opts, reserved0) + sizeof(int) ==
                          MCC_LOADER_OPTS_V1_0_SIZE,
                  "loader opts v1.0 size");
#endif

typedef struct mcc_instance mcc_instance;

/*
 * Acquire the process's policy instance. The first call parses the
 * configuration, loads the module with dlopen(RTLD_NOW | RTLD_LOCAL), checks
 * the descriptor (symbol, major, struct_size, name, capabilities), normalises
 * its vtable and runs init(). Later calls from other engines in the same
 * process share the same instance (reference counted) when they ask for the
 * same module with the same merged configuration: the same RFC parameters
 * and mode, [engine] keys and [module.*] keys (module_dir and the host
 * table may differ; the first engine's host table stays in use, with a
 * warning). A request for a different module, or for the same module with a
 * different configuration, is refused: -EBUSY, the null module (controller
 * off) for that engine, and mcc_instance_error() says which part differs;
 * the engine already holding the instance is not affected. A module that
 * implements another mode than the configuration sets is -EINVAL.
 *
 * Returns 0 on success or a negative errno. In every case *out is a usable
 * instance: on failure it is the built-in null module (controller off), and
 * mcc_instance_error() holds the one error message that was logged,
 * including file, line and key for configuration errors and the dlerror()
 * text for load errors.
 * Thread-safe (a process-wide mutex); call from engine construction only.
 */
int mcc_instance_acquire(const struct mcc_loader_opts *opts, mcc_instance **out);

/* Drop one reference; at zero: fini() then dlclose(). The caller has closed
 * its lanes, routes and devices and quiesced its threads. */
void mcc_instance_release(mcc_instance *inst);

/* The normalised vtable: every callback non-NULL. Valid until release. */
const struct mcc_policy_v1 *mcc_instance_ops(const mcc_instance *inst);
void *mcc_instance_ctx(const mcc_instance *inst);
enum mcc_mode mcc_instance_mode(const mcc_instance *inst);
const char *mcc_instance_name(const mcc_instance *inst);
/* "" when the last acquire succeeded. */
const char *mcc_instance_error(const mcc_instance *inst);
/* The merged configuration in force (defaults when off by error). */
const struct mcc_config *mcc_instance_config(const mcc_instance *inst);
/* What the module asked for in init() (struct mcc_init_out_v1): the signal
 * kinds it subscribes to, bit (1 << enum mcc_signal_kind) each, and whether
 * it wants on_async_event. A host sends only subscribed signals (and async
 * events only when wanted). 0 for the null module and the built-in fallback. */
uint64_t mcc_instance_signal_mask(const mcc_instance *inst);
int mcc_instance_wants_async_events(const mcc_instance *inst);

/* Configuration helpers (also used by tests and tools). */
void mcc_config_defaults(struct mcc_config *cfg);
/* Parse `ini_path` (NULL: the file an engine would read, see above; with
 * ignore_env, none) and, unless ignore_env, the environment, on top of the
 * defaults, and validate. 0 or negative errno; errbuf receives
 * "file:line: key: reason". */
int mcc_config_load(const char *ini_path, int ignore_env, struct mcc_config *cfg, char *errbuf,
                    size_t errlen);
/* Where a setting's effective value came from (mcc_config_explain()). */
enum mcc_config_source {
	MCC_CONFIG_SRC_DEFAULT = 0, /* the built-in default */
	MCC_CONFIG_SRC_FILE = 1,    /* the ini file, at `line` */
	MCC_CONFIG_SRC_ENV = 2,     /* the setting's MC_ADAPTIVE_CC_* variable */
};

#define MCC_CONFIG_KEYS_MAX 64

struct mcc_config_origin {
	const char *section; /* "policy", "controller" or "engine" (static string) */
	const char *key;     /* the ini key, e.g. "min_window_bytes" (static) */
	const char *env;     /* its variable, e.g. "MC_ADAPTIVE_CC_MIN_WINDOW_BYTES" (static) */
	int source;          /* enum mcc_config_source */
	int line;            /* MCC_CONFIG_SRC_FILE: line number in the file; else 0 */
	char value[256];     /* effective value as the ini file spells it; "" = unset */
};

/* What mcc_config_explain() fills. Set struct_size = sizeof(struct
 * mcc_config_provenance) before the call; everything else is output. */
struct mcc_config_provenance {
	uint32_t struct_size;
	uint32_t count;      /* entries of origin[]: every key of the key table */
	char file[4096];     /* the ini file read ("" when none) */
	int file_from_env;   /* 1: `file` came from $MC_ADAPTIVE_CC_CONFIG; 2: it is
	                      * the installed default, read without the variable */
	int reserved0;
	char warning[2048];  /* what an engine would log as warnings, one a line
	                      * (unknown MC_ADAPTIVE_CC_* variables, a file with
	                      * no setting); "" when none */
	struct mcc_config_origin origin[MCC_CONFIG_KEYS_MAX];
};

/* mcc_config_load() (the same parser, environment and validation an engine's
 * mcc_instance_acquire() runs) that also says, on success, where every
 * [policy], [controller] and [engine] setting came from: default, file line
 * or environment variable, one origin per key in the order of the key table
 * (plugin_api/lib/config.c). Same return value and errbuf as mcc_config_load();
 * on error ex->count is 0. Used by the `mcc check` command. */
int mcc_config_explain(const char *ini_path, int ignore_env, struct mcc_config *cfg,
                       struct mcc_config_provenance *ex, char *errbuf, size_t errlen);
/*
 * Every [module.<name>] section of the configuration that mcc_config_load()
 * reads with the same arguments, checked by its module (ABI 1.2
 * config_check): the module the configuration selects answers for its own
 * section, every other section's module is found by its short name in
 * `module_dir` (NULL: the configuration's) and loaded with the loader's
 * safety checks, without init(). Returns 0 when every key is accepted, else
 * a negative errno and errbuf receives one message: the configuration's own
 * error, "file:line: key: reason" for a refused key, or "file:line:
 * [module.<name>]: no module '<name>' ..." for a section no module answers
 * to (a misspelt name). A module built before ABI 1.2 (no config_check) is
 * not validated: `warn` (may be NULL) receives a line saying so. Used by
 * `mcc check`; an engine checks only its own module's section.
 */
int mcc_config_check_modules(const char *ini_path, int ignore_env, const char *module_dir,
                             char *errbuf, size_t errlen, char *warn, size_t warnlen);
/* The module file a config resolves to. */
int mcc_config_module_path(const struct mcc_config *cfg, char *path, size_t len);

/* The version of the libmcc this process runs with, "MAJOR.MINOR.PATCH"
 * (static; it may differ from the version an engine was built against).
 * The policy ABI it implements: mcc_instance_ops(NULL)->abi_version. */
const char *mcc_version(void);

const char *mcc_strerror(int err);
const char *mcc_task_state_name(int state);
const char *mcc_path_state_name(int state);
const char *mcc_reason_name(int reason);

#ifdef __cplusplus
}
#endif
#endif /* MCC_LOADER_H */
