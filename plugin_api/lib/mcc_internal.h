/* SPDX-License-Identifier: MIT */
/*
 * mcc_internal.h - libmcc private declarations. Never installed; included by
 * the library's own sources only.
 *
 * libmcc is built with -fvisibility=hidden: only the declarations of
 * mcc_loader.h (wrapped in a visibility push below) are exported, and the
 * link's symbol filter (-export-symbols-regex) enforces the same set.
 */
#ifndef MCC_INTERNAL_H
#define MCC_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* MCC_EXPORTED_BEGIN / _END go around the include of an installed header
 * whose declarations libmcc exports (everything else is hidden). */
#if defined(__GNUC__)
#define MCC_HIDDEN __attribute__((visibility("hidden")))
#define MCC_EXPORTED_BEGIN _Pragma("GCC visibility push(default)")
#define MCC_EXPORTED_END _Pragma("GCC visibility pop")
#else
#define MCC_HIDDEN
#define MCC_EXPORTED_BEGIN
#define MCC_EXPORTED_END
#endif

MCC_EXPORTED_BEGIN
#include "mcc_loader.h"
MCC_EXPORTED_END

/* A module short name, and a descriptor's name: [a-z0-9_-]{1,32}. (inih keeps
 * section names to 49 characters, so "module.<name>" must fit in that.) */
#define MCC_NAME_MAX 32
/* Bounds of the raw [module.<name>] store handed to modules. */
#define MCC_MODKEYS_MAX 64     /* keys over all module sections */
#define MCC_MODKEY_KEY_MAX 64  /* bytes, with the NUL */
#define MCC_MODKEY_VAL_MAX 200 /* bytes, with the NUL (inih lines are shorter) */
/* Length of an error or warning message, with the NUL. */
#define MCC_MSG_MAX 2048

struct mcc_modkey {
	char module[MCC_NAME_MAX + 1];
	char key[MCC_MODKEY_KEY_MAX];
	char value[MCC_MODKEY_VAL_MAX];
	int line;
};

/* A [module.<name>] section header: where a misspelt name is reported. */
struct mcc_modsec {
	char module[MCC_NAME_MAX + 1];
	int line; /* of its first header */
};
#define MCC_MODSECS_MAX 16 /* distinct [module.*] sections in a file */
/* [engine] stat and stat_interval_ms: libmcc's own settings (the SDK's
 * live view, mcc_stat.h), kept beside the module keys so that the installed
 * struct mcc_config keeps its size. */
#define MCC_STAT_VALUE_MAX 200 /* bytes of `stat`, with the NUL */
struct mcc_stat_keys {
	char stat[MCC_STAT_VALUE_MAX]; /* "off" (or ""), "on", or an absolute directory */
	uint32_t interval_ms;          /* publish period; 0: the default */
};

struct mcc_modkeys {
	unsigned count;
	struct mcc_modkey e[MCC_MODKEYS_MAX];
	unsigned nsec;
	struct mcc_modsec sec[MCC_MODSECS_MAX];
	char file[4096]; /* the ini file the keys come from ("" when none) */
	struct mcc_stat_keys stat; /* not a module key: see above */
	/* [engine] base_rtt_us (0: unset), libmcc's too: the SDK gives it to
	 * the routes a host opens without a figure (mcc_engine_base_rtt_ns);
	 * kept here, not in the public struct mcc_config, whose size a caller
	 * built against an older header fixes */
	uint32_t base_rtt_us;
};

/* The [engine] stat settings of an instance (NULL for the fallback). */
MCC_HIDDEN const struct mcc_stat_keys *mcc__instance_stat_keys(const mcc_instance *inst);
/* The [engine] base_rtt_us of an instance, us (0: unset, or the fallback). */
MCC_HIDDEN uint32_t mcc__instance_base_rtt_us(const mcc_instance *inst);

/* The built-in null policy (null_builtin.c): mode = off, the fallback, and
 * the filler of every callback a module leaves NULL. */
MCC_HIDDEN extern const struct mcc_policy_v1 mcc__null_builtin_v1;
/* The filler of an absent config_check (v1.0/v1.1 modules): accepts every
 * key, the module's section is not validated. */
MCC_HIDDEN int mcc__config_check_unvalidated(const char *key, const char *value, char *why,
                                             size_t len);

/* The default logger (no opts->log): "mcc: <level>: <message>" on stderr, one
 * write per message, at most the level MC_ADAPTIVE_CC_LOG_LEVEL names
 * (default warn). */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
MCC_HIDDEN void mcc__log_stderr(void *arg, int level, const char *fmt, ...);

/* enum mcc_log_level of a MC_ADAPTIVE_CC_LOG_LEVEL value, or -1 when it is
 * not one of error, warn, info, debug. */
MCC_HIDDEN int mcc__log_level_parse(const char *s);
#define MCC_LOG_LEVEL_DEFAULT MCC_LOG_WARN

/* 1 when `s` is a valid short name / descriptor name ([a-z0-9_-]{1,32}). */
MCC_HIDDEN int mcc__name_valid(const char *s);

/* "off", "observe", "enforce", or "invalid". */
MCC_HIDDEN const char *mcc__mode_name(uint32_t mode);

/*
 * mcc_config_load() with the [module.*] keys kept in `mk` (non-NULL) and the
 * warnings (unknown MC_ADAPTIVE_CC_* variables; not errors) written to
 * `warn` ("" when none). On error *cfg holds the defaults and `err` the one
 * message.
 */
MCC_HIDDEN int mcc__config_load(const char *ini_path, int ignore_env, struct mcc_config *cfg,
                                struct mcc_modkeys *mk, char *err, size_t errlen, char *warn,
                                size_t warnlen);

/* The host table's max_lanes of an instance: lane ids its policy takes. */
MCC_HIDDEN uint32_t mcc__instance_max_lanes(const mcc_instance *inst);

/* The raw value of [module.<module>] `key`, or NULL. */
MCC_HIDDEN const char *mcc__modkeys_get(const struct mcc_modkeys *mk, const char *module,
                                        const char *key);

/* mcc_config_v1.module_get of a configuration without a module store (the
 * defaults, mcc_config_load()): always NULL. */
MCC_HIDDEN const char *mcc__module_get_none(const struct mcc_config_v1 *cfg, const char *key);

/* Path-like environment variables: secure_getenv (NULL in setuid/setgid
 * processes). */
MCC_HIDDEN const char *mcc__secure_getenv(const char *name);

#endif /* MCC_INTERNAL_H */
