/* SPDX-License-Identifier: MIT */
/* lt_util.h - helpers shared by the tests/loader programs: temporary
 * directories and files, the test environment, and a capturing logger. */
#ifndef MCC_LT_UTIL_H
#define MCC_LT_UTIL_H

#include <pthread.h>
#include <stddef.h>
#include <sys/types.h>

#include "mcc_loader.h"

#define LT_PATH 4096
#define LT_LOG_MSG 2048

/* Create a fresh private directory under $TMPDIR (or /tmp); 0 or -errno. */
int lt_mkdtemp(char *out, size_t len);
/* Remove a directory tree made by the tests (restores write permission). */
void lt_rmtree(const char *dir);
/* Write `text` to dir/name with `mode`; the path goes to `path`. 0 or -errno. */
int lt_write(const char *dir, const char *name, const char *text, mode_t mode, char *path,
             size_t len);
/* Write `len` bytes (NULs allowed) to dir/name with `mode`. */
int lt_write_bytes(const char *dir, const char *name, const void *data, size_t len, mode_t mode,
                   char *path, size_t plen);
/* Copy at most `limit` bytes of `src` to `dst` (created with `mode`). */
int lt_copy(const char *src, const char *dst, mode_t mode, size_t limit);

/* $MCC_TEST_MODULE_DIR (modules/.libs), NULL if unset. */
const char *lt_module_dir(void);
/* $MCC_TEST_BUILDDIR/tests/loader/bad/.libs, NULL if unset. */
const char *lt_bad_dir(void);
/* $MCC_TEST_MODULE_DIR/mcc-policy-null.so. */
const char *lt_null_so(void);
/* Unset every MC_ADAPTIVE_CC_* variable, then set MC_ADAPTIVE_CC_CONFIG=none
 * (a test never reads the machine's installed configuration). */
void lt_clear_env(void);

/* A logger that keeps what it is given (thread-safe). */
struct lt_log {
	pthread_mutex_t mu;
	int count[4];             /* per enum mcc_log_level */
	char last[4][LT_LOG_MSG]; /* last message per level */
	char all[32768];          /* every message, one per line */
};
void lt_log_init(struct lt_log *log);
void lt_log_fini(struct lt_log *log);
void lt_log_fn(void *arg, int level, const char *fmt, ...)
#if defined(__GNUC__)
        __attribute__((format(printf, 3, 4)))
#endif
        ;
int lt_log_has(struct lt_log *log, const char *needle);

/* The fixture of an engine SDK suite. lt_suite_open clears the environment
 * (lt_clear_env), skips the program when the modules are not built
 * (lt_module_dir unset), makes a fresh temporary directory into `dir`
 * (`len` bytes), writes dir/enforce.ini ("[policy] mode = enforce") with its
 * path into `ini_enforce` (LT_PATH bytes) and starts `log`: 0, or -errno.
 * lt_suite_close removes the directory, stops the log and returns 0. */
int lt_suite_open(char *dir, size_t len, struct lt_log *log, char *ini_enforce);
int lt_suite_close(const char *dir, struct lt_log *log);

/* Options for mcc_instance_acquire with the capturing logger, the given ini
 * file and the environment ignored. */
void lt_opts(struct mcc_loader_opts *o, struct lt_log *log, const char *ini);

/* Run fn(arg) in a forked child that, when started as root, first drops
 * every privilege (supplementary groups, gid, uid) to the unprivileged
 * user `nobody` (65534 when the name is unknown), so a check that root
 * would bypass is exercised as root too. `dir` (may be NULL) is handed to
 * that user first (chown), so the child can create files in it. Returns
 * fn's result (0: passed; the child prints why it failed), or -1 when the
 * child could not run or drop privileges (the reason is printed). */
int lt_run_unprivileged(int (*fn)(void *), void *arg, const char *dir);

/* True when the fallback semantics hold: mode off, name null, and the
 * vtable admits and settles (double release -EALREADY). */
int lt_is_usable_off(const mcc_instance *inst);
#endif
