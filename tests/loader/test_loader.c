/* SPDX-License-Identifier: MIT */
/*
 * test_loader.c - mcc_instance_acquire/release through the real loader:
 * loading the null module and test modules from generated ini files, every
 * refusal (broken descriptors, unsafe files and directories, missing and
 * non-ELF files, mode mismatch) ending in a usable "controller off"
 * instance with one clear error, the single policy authority (sharing,
 * reference counting, -EBUSY), and the host table handed to modules.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cu_driver.h"
#include "lt_util.h"
#include "mcc_loader.h"

static char dir[LT_PATH];
static char ini[LT_PATH];
static const char *moddir, *baddir;

static int suite_init(void)
{
	lt_clear_env();
	moddir = lt_module_dir();
	baddir = lt_bad_dir();
	if (!moddir || !baddir) {
		mcc_cu_skip(
		        "MCC_TEST_MODULE_DIR / MCC_TEST_BUILDDIR not set (run from make check)");
		return 0;
	}
	return lt_mkdtemp(dir, sizeof(dir)) == 0 ? 0 : -1;
}

static int suite_clean(void)
{
	lt_clear_env();
	lt_rmtree(dir);
	return 0;
}

/* Write `text` (a printf format) as a fresh ini file and acquire with it. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int
acquire_ini(struct lt_log *log, mcc_instance **inst, const char *fmt, ...)
{
	static int seq;
	struct mcc_loader_opts o;
	char text[8192], name[32];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	snprintf(name, sizeof(name), "l%d.ini", seq++);
	if (lt_write(dir, name, text, 0644, ini, sizeof(ini)) != 0)
		return -1000;
	lt_opts(&o, log, ini);
	return mcc_instance_acquire(&o, inst);
}

/* acquire_ini with [policy] mode, module and module_dir (from; NULL: none). */
static int acquire_module(struct lt_log *log, mcc_instance **inst, const char *mode,
                          const char *module, const char *from)
{
	if (!from)
		return acquire_ini(log, inst, "[policy]\nmode = %s\nmodule = %s\n", mode, module);
	return acquire_ini(log, inst, "[policy]\nmode = %s\nmodule = %s\nmodule_dir = %s\n", mode,
	                   module, from);
}

/* A copy of the null module's first `len` bytes as in/file (mode): its
 * path in out. */
static void copy_null(const char *in, const char *file, mode_t mode, size_t len, char *out,
                      size_t outlen)
{
	CU_ASSERT_FATAL((size_t)snprintf(out, outlen, "%s/%s", in, file) < outlen);
	CU_ASSERT_EQUAL_FATAL(lt_copy(lt_null_so(), out, mode, len), 0);
}

/* The file a callback lives in. */
static const char *where(const void *fn)
{
	Dl_info info;

	if (!dladdr(fn, &info) || !info.dli_fname)
		return "";
	return info.dli_fname;
}

static int ends_with(const char *s, const char *tail)
{
	size_t a = strlen(s), b = strlen(tail);

	return a >= b && strcmp(s + a - b, tail) == 0;
}

/* Nothing is loaded: another module loads and unloads cleanly. */
static void assert_nothing_loaded(void)
{
	struct lt_log log;
	mcc_instance *inst = NULL;
	int rc;

	lt_log_init(&log);
	rc = acquire_module(&log, &inst, "off", "baseline", baddir);
	if (rc != 0)
		fprintf(stderr, "assert_nothing_loaded: %d %s\n", rc, mcc_instance_error(inst));
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_STRING_EQUAL(mcc_instance_name(inst), "baseline");
	mcc_instance_release(inst);
	lt_log_fini(&log);
}

/* A refused acquire: rc, the usable off instance, one error logged and
 * returned by mcc_instance_error, nothing left loaded. */
static void expect_off(const char *what, int rc, int want_rc, mcc_instance *inst,
                       struct lt_log *log, const char *substr)
{
	const char *e = mcc_instance_error(inst);
	int ok = rc == want_rc && lt_is_usable_off(inst) && strstr(e, substr) != NULL &&
	         log->count[MCC_LOG_ERROR] == 1 && strcmp(log->last[MCC_LOG_ERROR], e) == 0 &&
	         mcc_instance_config(inst)->policy.mode == MCC_MODE_OFF;

	if (!ok)
		fprintf(stderr, "%s: rc %d (want %d), error '%s' (want '%s'), %d errors logged\n",
		        what, rc, want_rc, e, substr, log->count[MCC_LOG_ERROR]);
	CU_ASSERT_TRUE(ok);
	/* Releasing the static fallback is a no-op, however often. */
	mcc_instance_release(inst);
	mcc_instance_release(inst);
	CU_ASSERT_TRUE(lt_is_usable_off(inst));
	assert_nothing_loaded();
}

/* ------------------------------------------------------------ good loads */

static void test_null_module_loads_from_a_generated_ini(void)
{
	struct lt_log log;
	mcc_instance *inst = NULL;
	const struct mcc_config *c;
	int rc;

	lt_log_init(&log);
	rc = acquire_ini(&log, &inst,
	                 "[policy]\nmode = off\nmodule = null\nmodule_dir = %s\n"
	                 "[controller]\nmin_window_bytes = 65536\nepoch_us = 250\n",
	                 moddir);
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	CU_ASSERT_STRING_EQUAL(mcc_instance_error(inst), "");
	CU_ASSERT_STRING_EQUAL(mcc_instance_name(inst), "null");
	CU_ASSERT_EQUAL(mcc_instance_mode(inst), MCC_MODE_OFF);
	/* The file's own init; the slots it leaves NULL filled by libmcc. */
	CU_ASSERT_TRUE(ends_with(where((const void *)mcc_instance_ops(inst)->init),
	                         "/mcc-policy-null.so"));
	CU_ASSERT_FALSE(ends_with(where((const void *)mcc_instance_ops(inst)->try_acquire),
	                          "/mcc-policy-null.so"));
	c = mcc_instance_config(inst);
	CU_ASSERT_EQUAL(c->policy.min_window_bytes, 65536);
	CU_ASSERT_EQUAL(c->policy.epoch_us, 250);
	CU_ASSERT_STRING_EQUAL(c->module, "null");
	CU_ASSERT_TRUE(lt_is_usable_off(inst));
	CU_ASSERT_EQUAL(log.count[MCC_LOG_ERROR], 0);
	CU_ASSERT_TRUE(lt_log_has(&log, "policy 'null' (mode off) loaded from"));
	mcc_instance_release(inst);
	assert_nothing_loaded();
	lt_log_fini(&log);
}

static void test_mode_off_runs_the_builtin_without_any_file(void)
{
	struct lt_log log;
	struct mcc_loader_opts o;
	mcc_instance *inst = NULL;

	lt_log_init(&log);
	lt_opts(&o, &log, NULL);
	o.module_dir = "/nonexistent/mcc";
	CU_ASSERT_EQUAL_FATAL(mcc_instance_acquire(&o, &inst), 0);
	CU_ASSERT_STRING_EQUAL(mcc_instance_error(inst), "");
	CU_ASSERT_STRING_EQUAL(mcc_instance_name(inst), "null");
	CU_ASSERT_FALSE(ends_with(where((const void *)mcc_instance_ops(inst)->init),
	                          "/mcc-policy-null.so"));
	CU_ASSERT_TRUE(lt_is_usable_off(inst));
	mcc_instance_release(inst);

	/* module = none: the same, explicitly. */
	CU_ASSERT_EQUAL(acquire_module(&log, &inst, "off", "none", NULL), 0);
	CU_ASSERT_TRUE(lt_is_usable_off(inst));
	mcc_instance_release(inst);
	CU_ASSERT_EQUAL(log.count[MCC_LOG_ERROR], 0);
	assert_nothing_loaded();
	lt_log_fini(&log);
}

static void test_absolute_module_path_loads(void)
{
	struct lt_log log;
	mcc_instance *inst = NULL;
	char sub[LT_PATH + 16], so[LT_PATH + 64];

	lt_log_init(&log);
	snprintf(sub, sizeof(sub), "%s/abs", dir);
	CU_ASSERT_EQUAL_FATAL(mkdir(sub, 0755), 0);
	copy_null(sub, "any-name.so", 0755, SIZE_MAX, so, sizeof(so));
	CU_ASSERT_EQUAL(acquire_module(&log, &inst, "off", so, NULL), 0);
	CU_ASSERT_STRING_EQUAL(mcc_instance_name(inst), "null");
	CU_ASSERT_TRUE(lt_is_usable_off(inst));
	mcc_instance_release(inst);
	assert_nothing_loaded();
	lt_log_fini(&log);
}

/* Capabilities are optional: MCC_CAP_THREAD_SAFE is implied by ABI v1, and a
 * module declaring no capability at all (caps = 0) loads. */
static void test_module_without_capabilities_loads(void)
{
	struct lt_log log;
	mcc_instance *inst = NULL;

	lt_log_init(&log);
	CU_ASSERT_EQUAL(acquire_module(&log, &inst, "off", "nocap", baddir), 0);
	CU_ASSERT_STRING_EQUAL(mcc_instance_name(inst), "nocap");
	CU_ASSERT_STRING_EQUAL(mcc_instance_error(inst), "");
	CU_ASSERT_EQUAL(log.count[MCC_LOG_ERROR], 0);
	CU_ASSERT_EQUAL(mcc_instance_mode(inst), MCC_MODE_OFF);
	mcc_instance_release(inst);
	assert_nothing_loaded();
	lt_log_fini(&log);
}

/* ------------------------------------------------ broken test modules */

struct bad_module {
	const char *id;
	int rc;
	const char *message;
};

static const struct bad_module bad_modules[] = {
	{ "nosym", -EPROTO, "no 'mcc_policy_v1' symbol: not an mcc policy module" },
	{ "badmajor", -EPROTO, "ABI version 2.0, this host implements major 1" },
	{ "small", -EPROTO,
	  "descriptor struct_size 100 is smaller than the v1.0 descriptor (200 bytes)" },
	{ "noname", -EPROTO, "descriptor name is NULL" },
	{ "badname", -EPROTO, "descriptor name 'Bad/Name' is invalid" },
	{ "noinit", -EPROTO, "descriptor has no init()" },
	{ "badmode", -EPROTO, "descriptor declares an invalid mode 7" },
	{ "initfail", -ENOMEM, "init() failed: Cannot allocate memory (-12)" },
	{ "unresolved", -ENOEXEC, "undefined symbol: mcc_test_undefined_function" },
};

static void test_broken_modules_leave_the_controller_off(void)
{
	for (size_t i = 0; i < sizeof(bad_modules) / sizeof(bad_modules[0]); i++) {
		const struct bad_module *b = &bad_modules[i];
		struct lt_log log;
		mcc_instance *inst = NULL;
		char want[256];
		int rc;

		lt_log_init(&log);
		rc = acquire_module(&log, &inst, "off", b->id, baddir);
		snprintf(want, sizeof(want), "module '%s': ", b->id);
		CU_ASSERT_EQUAL(strncmp(mcc_instance_error(inst), want, strlen(want)), 0);
		expect_off(b->id, rc, b->rc, inst, &log, b->message);
		if (strcmp(b->id, "initfail") == 0)
			CU_ASSERT_TRUE(lt_log_has(&log, "initfail: init refuses (test module)"));
		lt_log_fini(&log);
	}
}

/* ------------------------------------------------------- unsafe files */

static void make_dir(const char *name, mode_t mode, char *out, size_t len)
{
	CU_ASSERT_FATAL((size_t)snprintf(out, len, "%s/%s", dir, name) < len);
	CU_ASSERT_EQUAL_FATAL(mkdir(out, 0700), 0);
	CU_ASSERT_EQUAL_FATAL(chmod(out, mode), 0);
}

/* Acquiring `module` (from: its directory, NULL: none) in `mode` is
 * refused (expect_off). */
static void refused(const char *what, const char *mode, const char *module, const char *from,
                    int want_rc, const char *message)
{
	struct lt_log log;
	mcc_instance *inst = NULL;

	lt_log_init(&log);
	int rc = acquire_module(&log, &inst, mode, module, from);
	expect_off(what, rc, want_rc, inst, &log, message);
	lt_log_fini(&log);
}

static void load_from(const char *what, const char *module, const char *from, int want_rc,
                      const char *message)
{
	refused(what, "off", module, from, want_rc, message);
}

/* The null module in a directory `name` of mode dmode, its file of mode
 * fmode, one of them writable by others: refused, the message naming it
 * by its real path and mode. The directory's path in sub. */
static void world_writable(const char *name, mode_t dmode, mode_t fmode, char *sub, size_t len)
{
	char so[LT_PATH + 64], real[LT_PATH + 64], want[LT_PATH + 128];
	int open_dir = (dmode & S_IWOTH) != 0;

	make_dir(name, dmode, sub, len);
	copy_null(sub, "mcc-policy-null.so", fmode, SIZE_MAX, so, sizeof(so));
	CU_ASSERT_PTR_NOT_NULL_FATAL(realpath(open_dir ? sub : so, real));
	snprintf(want, sizeof(want), "%s %s is writable by others (mode %04o)",
	         open_dir ? "directory" : "module file", real, (unsigned)(open_dir ? dmode : fmode));
	load_from(open_dir ? "world-writable directory" : "world-writable file", "null", sub, -EPERM,
	          want);
}

static void test_world_writable_module_file_is_refused(void)
{
	char sub[LT_PATH];

	world_writable("wwfile", 0755, 0757, sub, sizeof(sub));
}

static void test_world_writable_module_directory_is_refused(void)
{
	char sub[LT_PATH];

	world_writable("wwdir", 0777, 0755, sub, sizeof(sub));
	/* Sticky (like /tmp) does not help: others can still add files. */
	CU_ASSERT_EQUAL(chmod(sub, 01777), 0);
	load_from("sticky world-writable directory", "null", sub, -EPERM, "writable by others");
}

static void test_symlink_into_a_world_writable_directory_is_refused(void)
{
	char safe[LT_PATH], open_dir[LT_PATH], target[LT_PATH + 64], link[LT_PATH + 64];
	char real[LT_PATH + 64], want[LT_PATH + 128];

	make_dir("linkdir", 0755, safe, sizeof(safe));
	make_dir("linktarget", 0777, open_dir, sizeof(open_dir));
	copy_null(open_dir, "real.so", 0755, SIZE_MAX, target, sizeof(target));
	snprintf(link, sizeof(link), "%s/mcc-policy-null.so", safe);
	CU_ASSERT_EQUAL_FATAL(symlink(target, link), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(realpath(open_dir, real));
	snprintf(want, sizeof(want), "directory %s is writable by others", real);
	load_from("symlink into a world-writable directory", "null", safe, -EPERM, want);
}

static void test_missing_module_file_is_reported(void)
{
	char sub[LT_PATH], want[LT_PATH + 128];

	make_dir("empty", 0755, sub, sizeof(sub));
	snprintf(want, sizeof(want), "%s/mcc-policy-aimd.so: not found", sub);
	load_from("missing file", "aimd", sub, -ENOENT, want);
}

static void test_non_elf_and_truncated_files_are_refused(void)
{
	char sub[LT_PATH], path[LT_PATH + 64];

	make_dir("junk", 0755, sub, sizeof(sub));
	CU_ASSERT_EQUAL_FATAL(
	        lt_write(sub, "mcc-policy-junk.so", "not an ELF file\n", 0644, path, sizeof(path)),
	        0);
	load_from("non-ELF file", "junk", sub, -ENOEXEC, "is not an ELF shared object");
	/* Truncated: dlopen() itself would die of SIGBUS mapping the missing
	 * segments; the loader checks the program headers first. */
	copy_null(sub, "mcc-policy-trunc.so", 0755, 1000, path, sizeof(path));
	load_from("truncated ELF file", "trunc", sub, -ENOEXEC, "is truncated");
	copy_null(sub, "mcc-policy-hdr.so", 0755, 40, path, sizeof(path));
	load_from("ELF header only", "hdr", sub, -ENOEXEC, "is not an ELF shared object");
	copy_null(sub, "mcc-policy-empty.so", 0755, 0, path, sizeof(path));
	load_from("empty file", "empty", sub, -ENOEXEC, "is not an ELF shared object");
	/* ELF, but not a shared object: the null module marked ET_REL. */
	copy_null(sub, "mcc-policy-reloc.so", 0755, SIZE_MAX, path, sizeof(path));
	{
		const unsigned char et_rel[2] = { 1, 0 }; /* e_type, little-endian */
		int fd = open(path, O_WRONLY);

		CU_ASSERT_FATAL(fd >= 0);
		CU_ASSERT_EQUAL(pwrite(fd, et_rel, 2, 16), 2);
		close(fd);
	}
	load_from("relocatable ELF", "reloc", sub, -ENOEXEC, "(ELF type 1)");
}

static void test_directory_named_like_a_module_is_refused(void)
{
	char sub[LT_PATH], d[LT_PATH + 64];

	make_dir("dirmod", 0755, sub, sizeof(sub));
	snprintf(d, sizeof(d), "%s/mcc-policy-dirmod.so", sub);
	CU_ASSERT_EQUAL_FATAL(mkdir(d, 0755), 0);
	load_from("directory as module", "dirmod", sub, -EINVAL, "is not a regular file");
}

/* One unprivileged ownership case: load module `null` from `moddir_` and
 * expect `want_rc` with `message` in the error. 0, or 1 (printed why). */
struct owner_case {
	const char *ini_dir;   /* writable by the child */
	const char *moddir_;
	const char *copy_from; /* non-NULL: copy it to moddir_ first (the child's file) */
	int want_rc;
	const char *message; /* "" when loading succeeds */
};

static int owner_check(void *arg)
{
	const struct owner_case *oc = arg;
	struct lt_log log;
	struct mcc_loader_opts o;
	mcc_instance *inst = NULL;
	char text[LT_PATH + 128], path[LT_PATH];
	int rc, ok;

	snprintf(path, sizeof(path), "%s/mcc-policy-null.so", oc->moddir_);
	if (oc->copy_from && lt_copy(oc->copy_from, path, 0755, SIZE_MAX)) {
		printf("\n    cannot copy %s to %s", oc->copy_from, path);
		return 1;
	}
	snprintf(text, sizeof(text), "[policy]\nmode = off\nmodule = null\nmodule_dir = %s\n",
	         oc->moddir_);
	if (lt_write(oc->ini_dir, "owner.ini", text, 0644, path, sizeof(path))) {
		printf("\n    cannot write %s/owner.ini", oc->ini_dir);
		return 1;
	}
	lt_log_init(&log);
	lt_opts(&o, &log, path);
	rc = mcc_instance_acquire(&o, &inst);
	ok = rc == oc->want_rc && strstr(mcc_instance_error(inst), oc->message) &&
	     (rc != 0 || (mcc_instance_error(inst)[0] == '\0' &&
	                  strcmp(mcc_instance_name(inst), "null") == 0));
	if (!ok)
		printf("\n    module dir %s as uid %u: rc %d (want %d), \"%s\"", oc->moddir_,
		       (unsigned)geteuid(), rc, oc->want_rc, mcc_instance_error(inst));
	mcc_instance_release(inst);
	lt_log_fini(&log);
	return !ok;
}

/* The owner rule: a module file and its directory are owned by root or the
 * effective user. Root checks it directly (only root can give a file away)
 * and again as an unprivileged user (fork + setuid nobody), for whom a root
 * file is fine, its own file is fine and a third user's file is refused. A
 * non-root run can only check its own file: the refusal needs root. */
static void test_module_owned_by_another_user_is_refused(void)
{
	char sub[LT_PATH], so[LT_PATH + 64], own[LT_PATH], other[LT_PATH];
	int root = geteuid() == 0;

	if (root) {
		make_dir("owner", 0755, sub, sizeof(sub));
		copy_null(sub, "mcc-policy-null.so", 0755, SIZE_MAX, so, sizeof(so));
		CU_ASSERT_EQUAL_FATAL(chown(so, 12345, 12345), 0);
		load_from("file of another user", "null", sub, -EPERM,
		          "is owned by uid 12345, neither root nor the effective user");
		CU_ASSERT_EQUAL_FATAL(chown(so, 0, 0), 0);
		CU_ASSERT_EQUAL_FATAL(chown(sub, 12345, 12345), 0);
		load_from("directory of another user", "null", sub, -EPERM,
		          "is owned by uid 12345, neither root nor the effective user");
	} else {
		printf("\n    not root: the refusal of a third user's file is not checked "
		       "(only root can give a file away)");
	}
	/* unprivileged: own[] is the child's directory, other[] holds the
	 * runner's (root's) file, later given to a third user */
	CU_ASSERT_EQUAL_FATAL(lt_mkdtemp(own, sizeof(own)), 0);
	CU_ASSERT_EQUAL_FATAL(lt_mkdtemp(other, sizeof(other)), 0);
	CU_ASSERT_EQUAL_FATAL(chmod(other, 0755), 0);
	copy_null(other, "mcc-policy-null.so", 0755, SIZE_MAX, so, sizeof(so));
	struct owner_case own_ok = { own, own, so, 0, "" };
	CU_ASSERT_EQUAL(lt_run_unprivileged(owner_check, &own_ok, own), 0);
	if (root) {
		struct owner_case root_ok = { own, other, NULL, 0, "" };
		CU_ASSERT_EQUAL(lt_run_unprivileged(owner_check, &root_ok, own), 0);
		CU_ASSERT_EQUAL_FATAL(chown(so, 12345, 12345), 0);
		struct owner_case third = { own, other, NULL, -EPERM,
			                    "is owned by uid 12345, neither root nor the effective "
			                    "user" };
		CU_ASSERT_EQUAL(lt_run_unprivileged(owner_check, &third, own), 0);
	}
	lt_rmtree(own);
	lt_rmtree(other);
}

static void test_file_declaring_another_name_is_refused(void)
{
	char sub[LT_PATH], so[LT_PATH + 64];

	make_dir("renamed", 0755, sub, sizeof(sub));
	copy_null(sub, "mcc-policy-other.so", 0755, SIZE_MAX, so, sizeof(so));
	load_from("renamed module", "other", sub, -EPROTO,
	          "the file of module 'other' declares the name 'null'");
}

/* ---------------------------------------------------------------- modes */

static void test_module_mode_must_equal_configured_mode(void)
{
	refused("null as enforce", "enforce", "null", moddir, -EINVAL,
	        "the module implements mode off, but the configuration sets mode = enforce");
	refused("none as observe", "observe", "none", NULL, -EINVAL,
	        "module 'none' (built-in null): the module implements mode off, but the "
	        "configuration sets mode = observe");
}

static void test_config_errors_leave_the_controller_off(void)
{
	struct lt_log log;
	struct mcc_config c;
	mcc_instance *inst = NULL;
	char err[2048];
	int rc;

	lt_log_init(&log);
	rc = acquire_ini(&log, &inst,
	                 "[policy]\nmode = observe\n[controller]\nmin_window_bytes = 0\n");
	/* The same message as mcc_config_load gives for the file. */
	CU_ASSERT_EQUAL(mcc_config_load(ini, 1, &c, err, sizeof(err)), -EINVAL);
	expect_off("config error", rc, -EINVAL, inst, &log, err);
	lt_log_fini(&log);
}

static void test_tent_plugin_beside_enforce_leaves_the_controller_off(void)
{
	struct lt_log log;
	mcc_instance *inst = NULL;
	int rc;

	lt_log_init(&log);
	rc = acquire_ini(
	        &log, &inst,
	        "[policy]\nmode = enforce\nmodule_dir = %s\n[engine]\ntent_cc_plugin = aimd\n",
	        moddir);
	expect_off("tent plugin + enforce", rc, -EINVAL, inst, &log,
	           "second congestion controller");
	lt_log_fini(&log);
}

static void test_qos_is_allowed_beside_a_policy(void)
{
	struct lt_log log;
	mcc_instance *inst = NULL;

	lt_log_init(&log);
	CU_ASSERT_EQUAL(acquire_ini(&log, &inst,
	                            "[policy]\nmode = observe\nmodule = partial\nmodule_dir = %s\n"
	                            "[engine]\nqos = on\n",
	                            baddir),
	                0);
	CU_ASSERT_EQUAL(mcc_instance_mode(inst), MCC_MODE_OBSERVE);
	CU_ASSERT_EQUAL(mcc_instance_config(inst)->qos_enabled, 1);
	mcc_instance_release(inst);
	assert_nothing_loaded();
	lt_log_fini(&log);
}

/* A module built before ABI 1.2 has a try_acquire and no try_acquire_qos:
 * the normalised table's try_acquire_qos is its try_acquire, class ignored
 * (an unknown class is still -EINVAL); a module with neither gets the null
 * module's. */
static void test_pre_qos_module_gets_its_own_acquire_for_every_class(void)
{
	struct lt_log log;
	mcc_instance *inst = NULL;

	lt_log_init(&log);
	CU_ASSERT_EQUAL_FATAL(acquire_ini(&log, &inst,
	                                  "[policy]\nmode = off\nmodule = preqos\nmodule_dir = %s\n"
	                                  "[engine]\nqos = on\n",
	                                  baddir),
	                      0);
	const struct mcc_policy_v1 *ops = mcc_instance_ops(inst);
	CU_ASSERT_PTR_NOT_NULL_FATAL(ops->try_acquire_qos);
	for (uint32_t c = 0; c < MCC_QOS_CLASS_COUNT_; c++) {
		struct mcc_permit_v1 p = MCC_PERMIT_INIT;
		CU_ASSERT_EQUAL(ops->try_acquire_qos(NULL, NULL, 4096, 1, NULL, c, &p), MCC_DEFER);
		CU_ASSERT_EQUAL(p.module64, 0x5150);
	}
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(ops->try_acquire_qos(NULL, NULL, 4096, 1, NULL, MCC_QOS_CLASS_COUNT_, &p),
	                -EINVAL);
	CU_ASSERT_EQUAL(p.module64, 0);
	mcc_instance_release(inst);
	assert_nothing_loaded();

	/* neither slot: the null module's (admits; an unknown class is -EINVAL) */
	CU_ASSERT_EQUAL_FATAL(acquire_ini(&log, &inst,
	                                  "[policy]\nmode = off\nmodule = baseline\nmodule_dir = %s\n",
	                                  baddir),
	                      0);
	ops = mcc_instance_ops(inst);
	mcc_route *tok = (mcc_route *)(uintptr_t)&log;
	CU_ASSERT_EQUAL(ops->try_acquire_qos(NULL, tok, 4096, 1, NULL, MCC_QOS_LOW, &p), MCC_ADMIT);
	CU_ASSERT_EQUAL(ops->release(NULL, &p, 4096, MCC_REL_NOT_POSTED), 0);
	struct mcc_permit_v1 q = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(ops->try_acquire_qos(NULL, tok, 4096, 1, NULL, 7, &q), -EINVAL);
	mcc_instance_release(inst);
	assert_nothing_loaded();
	lt_log_fini(&log);
}

/* ------------------------------------------------- single authority */

static void test_same_module_is_shared_and_reference_counted(void)
{
	struct lt_log log;
	mcc_instance *a = NULL, *b = NULL, *c = NULL;
	int rc;

	lt_log_init(&log);
	CU_ASSERT_EQUAL_FATAL(acquire_module(&log, &a, "off", "null", moddir), 0);
	/* The same file through an absolute path is the same module. */
	CU_ASSERT_EQUAL_FATAL(acquire_module(&log, &b, "off", lt_null_so(), NULL), 0);
	CU_ASSERT_PTR_EQUAL(a, b);
	CU_ASSERT_EQUAL(log.count[MCC_LOG_WARN], 0);

	/* One release: still loaded, so another module is refused. */
	mcc_instance_release(a);
	rc = acquire_module(&log, &c, "off", "baseline", baddir);
	CU_ASSERT_EQUAL(rc, -EBUSY);
	CU_ASSERT_TRUE(lt_is_usable_off(c));
	CU_ASSERT_PTR_NOT_EQUAL(c, a);
	CU_ASSERT_PTR_NOT_NULL(
	        strstr(mcc_instance_error(c),
	               "module 'baseline': policy 'null' (mode off) is already loaded"));
	CU_ASSERT_PTR_NOT_NULL(strstr(mcc_instance_error(c), "one policy authority per process"));
	CU_ASSERT_EQUAL(log.count[MCC_LOG_ERROR], 1);
	/* The loaded instance is untouched by the refusal. */
	CU_ASSERT_TRUE(lt_is_usable_off(b));
	CU_ASSERT_STRING_EQUAL(mcc_instance_error(b), "");

	mcc_instance_release(b);
	assert_nothing_loaded();
	lt_log_fini(&log);
}

static void test_shared_module_with_another_mode_is_refused(void)
{
	struct lt_log log;
	mcc_instance *a = NULL, *b = NULL;
	int rc;

	lt_log_init(&log);
	CU_ASSERT_EQUAL_FATAL(acquire_module(&log, &a, "off", "null", moddir), 0);
	rc = acquire_module(&log, &b, "observe", "null", moddir);
	CU_ASSERT_EQUAL(rc, -EINVAL);
	CU_ASSERT_PTR_NOT_EQUAL(a, b);
	CU_ASSERT_PTR_NOT_NULL(strstr(mcc_instance_error(b), "implements mode off"));
	mcc_instance_release(b);
	mcc_instance_release(a);
	assert_nothing_loaded();
	lt_log_fini(&log);
}

/* Issue 11: the same module with another configuration is refused, with
 * the reason in mcc_instance_error() and the return code, never silently
 * run under the first engine's configuration. */
static void check_config_refused(struct lt_log *log, mcc_instance *a, int errors, int rc,
                                 mcc_instance *b, const char *part)
{
	CU_ASSERT_EQUAL(rc, -EBUSY);
	CU_ASSERT_PTR_NOT_EQUAL(a, b);
	CU_ASSERT_TRUE(lt_is_usable_off(b));
	CU_ASSERT_PTR_NOT_NULL(strstr(mcc_instance_error(b), "with a configuration that differs"));
	CU_ASSERT_PTR_NOT_NULL(strstr(mcc_instance_error(b), part));
	CU_ASSERT_PTR_NOT_NULL(strstr(mcc_instance_error(b), "controller off"));
	CU_ASSERT_EQUAL(log->count[MCC_LOG_ERROR], errors + 1);
	mcc_instance_release(b); /* the fallback: a no-op */
	/* the loaded instance is untouched by the refusal */
	CU_ASSERT_STRING_EQUAL(mcc_instance_error(a), "");
	CU_ASSERT_EQUAL(mcc_instance_config(a)->policy.md_percent, 50);
}

#define expect_config_refused(log, a, text, part)                                        \
	do {                                                                              \
		mcc_instance *b_ = NULL;                                                  \
		int e_ = (log)->count[MCC_LOG_ERROR];                                     \
		int rc_ = acquire_ini((log), &b_, text, moddir);                          \
		check_config_refused((log), (a), e_, rc_, b_, (part));                    \
	} while (0)

static void test_shared_module_with_another_config_is_refused(void)
{
	struct lt_log log;
	mcc_instance *a = NULL, *b = NULL;

	lt_log_init(&log);
	CU_ASSERT_EQUAL_FATAL(acquire_ini(&log, &a,
	                                  "[policy]\nmode = enforce\nmodule = aimd\n"
	                                  "module_dir = %s\n[module.aimd]\ncredit_min_admits = 1\n",
	                                  moddir),
	                      0);
	expect_config_refused(&log, a,
	                      "[policy]\nmode = enforce\nmodule = aimd\nmodule_dir = %s\n"
	                      "[module.aimd]\ncredit_min_admits = 1\n"
	                      "[controller]\nmd_percent = 20\n",
	                      "[policy]/[controller] settings");
	expect_config_refused(&log, a,
	                      "[policy]\nmode = enforce\nmodule = aimd\nmodule_dir = %s\n"
	                      "[module.aimd]\ncredit_min_admits = 1\n[engine]\nqos = on\n",
	                      "[engine] settings");
	expect_config_refused(&log, a,
	                      "[policy]\nmode = enforce\nmodule = aimd\nmodule_dir = %s\n"
	                      "[module.aimd]\ncredit_min_admits = 2\n",
	                      "[module.*] keys");
	expect_config_refused(&log, a,
	                      "[policy]\nmode = enforce\nmodule = aimd\nmodule_dir = %s\n",
	                      "[module.*] keys");
	/* the same configuration, spelled differently, is shared */
	CU_ASSERT_EQUAL(acquire_ini(&log, &b,
	                            "[module.aimd]\ncredit_min_admits = 1\n"
	                            "[controller]\nmd_percent = 50\n"
	                            "[policy]\nmodule_dir = %s\nmodule = aimd\nmode = enforce\n",
	                            moddir),
	                0);
	CU_ASSERT_PTR_EQUAL(a, b);
	CU_ASSERT_EQUAL(log.count[MCC_LOG_WARN], 0);
	mcc_instance_release(a);
	mcc_instance_release(b);
	mcc_instance_release(b); /* one too many: ignored */
	assert_nothing_loaded();
	lt_log_fini(&log);
}

static void test_shared_instance_keeps_the_first_host_table(void)
{
	struct lt_log log;
	struct mcc_loader_opts o;
	mcc_instance *a = NULL, *b = NULL;
	char text[LT_PATH + 128];

	lt_log_init(&log);
	snprintf(text, sizeof(text), "[policy]\nmode = off\nmodule = null\nmodule_dir = %s\n",
	         moddir);
	CU_ASSERT_EQUAL_FATAL(lt_write(dir, "host2.ini", text, 0644, ini, sizeof(ini)), 0);
	lt_opts(&o, &log, ini);
	CU_ASSERT_EQUAL_FATAL(mcc_instance_acquire(&o, &a), 0);
	o.engine = "tent";
	o.max_lanes = 1000;
	o.host_caps = MCC_HOST_CAP_DEVICE_TELEMETRY;
	CU_ASSERT_EQUAL_FATAL(mcc_instance_acquire(&o, &b), 0);
	CU_ASSERT_PTR_EQUAL(a, b);
	CU_ASSERT_EQUAL(log.count[MCC_LOG_WARN], 1);
	CU_ASSERT_TRUE(lt_log_has(&log,
	                          "engine 'tent' shares policy 'null': the host table of "
	                          "engine 'te' (clock, log, max_lanes 64, caps 0x0) stays in use"));
	mcc_instance_release(b);
	mcc_instance_release(a);
	assert_nothing_loaded();
	lt_log_fini(&log);
}

struct racer {
	pthread_t thread;
	const char *ini;
	mcc_instance *inst;
	int rc;
};

static void *race_acquire(void *arg)
{
	struct racer *r = arg;
	struct mcc_loader_opts o;

	lt_opts(&o, NULL, r->ini);
	o.log = NULL;
	r->rc = mcc_instance_acquire(&o, &r->inst);
	return NULL;
}

static void test_concurrent_acquires_share_one_instance(void)
{
	struct racer r[8];
	char path[LT_PATH + 16], text[LT_PATH + 128];

	snprintf(text, sizeof(text),
	         "[policy]\nmode = observe\nmodule = partial\nmodule_dir = %s\n", baddir);
	CU_ASSERT_EQUAL_FATAL(lt_write(dir, "race.ini", text, 0644, path, sizeof(path)), 0);
	for (int i = 0; i < 8; i++) {
		r[i].ini = path;
		r[i].inst = NULL;
		CU_ASSERT_EQUAL_FATAL(pthread_create(&r[i].thread, NULL, race_acquire, &r[i]), 0);
	}
	for (int i = 0; i < 8; i++)
		pthread_join(r[i].thread, NULL);
	for (int i = 0; i < 8; i++) {
		CU_ASSERT_EQUAL(r[i].rc, 0);
		CU_ASSERT_PTR_EQUAL(r[i].inst, r[0].inst);
	}
	CU_ASSERT_STRING_EQUAL(mcc_instance_name(r[0].inst), "partial");
	for (int i = 0; i < 8; i++)
		mcc_instance_release(r[i].inst);
	assert_nothing_loaded();
}

/* ------------------------------------------------------- host table */

static uint64_t fake_clock(void *arg)
{
	return *(const uint64_t *)arg;
}

static void test_module_receives_host_table_and_its_own_keys(void)
{
	static const uint64_t now = 123456789;
	struct lt_log log;
	struct mcc_loader_opts o;
	const struct mcc_policy_v1 *ops;
	const struct mcc_config *c;
	mcc_instance *inst = NULL, *again = NULL;
	char text[LT_PATH + 256], want[256];

	lt_log_init(&log);
	snprintf(text, sizeof(text),
	         "[policy]\nmode = observe\nmodule = partial\nmodule_dir = %s\n"
	         "[controller]\nmin_window_bytes = 65536\n"
	         "[module.partial]\ngreeting = hello world\n"
	         "[module.other]\nsecret = not for partial\n",
	         baddir);
	CU_ASSERT_EQUAL_FATAL(lt_write(dir, "host.ini", text, 0644, ini, sizeof(ini)), 0);
	lt_opts(&o, &log, ini);
	o.engine = "tent";
	o.host_caps = MCC_HOST_CAP_ASYNC_EVENTS | MCC_HOST_CAP_POLLER_PROGRESS;
	o.now_ns = fake_clock;
	o.clock_arg = (void *)&now;
	CU_ASSERT_EQUAL_FATAL(mcc_instance_acquire(&o, &inst), 0);
	snprintf(want, sizeof(want),
	         "partial: init engine=tent caps=0x5 max_lanes=64 now=123456789 abi=0x%x "
	         "size=%zu min_window=65536 greeting=hello world secret=(null)",
	         (unsigned)MCC_POLICY_ABI_V1, sizeof(struct mcc_host_v1));
	CU_ASSERT_TRUE(lt_log_has(&log, want));
	if (!lt_log_has(&log, want))
		fprintf(stderr, "log:\n%s\nwanted: %s\n", log.all, want);

	/* A later minor's descriptor, partly filled: every slot is usable. */
	ops = mcc_instance_ops(inst);
	CU_ASSERT_EQUAL(mcc_instance_mode(inst), MCC_MODE_OBSERVE);
	CU_ASSERT_EQUAL(ops->struct_size, sizeof(struct mcc_policy_v1));
	CU_ASSERT_EQUAL(MCC_ABI_MINOR(ops->abi_version), 7);
	CU_ASSERT_TRUE(ends_with(where((const void *)ops->tick), "/mcc-policy-partial.so"));
	CU_ASSERT_FALSE(ends_with(where((const void *)ops->try_acquire), "/mcc-policy-partial.so"));
	{
		const void *const slots[] = {
			(const void *)ops->init,
			(const void *)ops->fini,
			(const void *)ops->lane_open,
			(const void *)ops->lane_close,
			(const void *)ops->device_open,
			(const void *)ops->device_close,
			(const void *)ops->route_open,
			(const void *)ops->route_rebind,
			(const void *)ops->route_close,
			(const void *)ops->try_acquire,
			(const void *)ops->release,
			(const void *)ops->on_completion,
			(const void *)ops->poller_progress,
			(const void *)ops->on_async_event,
			(const void *)ops->on_signal,
			(const void *)ops->tick,
			(const void *)ops->task_query,
			(const void *)ops->batch_free,
			(const void *)ops->domain_stats,
			(const void *)ops->dump,
		};
		for (size_t i = 0; i < sizeof(slots) / sizeof(slots[0]); i++)
			CU_ASSERT_PTR_NOT_NULL(slots[i]);
	}
	CU_ASSERT_EQUAL(ops->dump(mcc_instance_ctx(inst), 1), -EOPNOTSUPP);

	/* module_get serves [module.partial] only, for the instance's life. */
	c = mcc_instance_config(inst);
	CU_ASSERT_STRING_EQUAL(c->policy.module_get(&c->policy, "greeting"), "hello world");
	CU_ASSERT_PTR_NULL(c->policy.module_get(&c->policy, "secret"));
	CU_ASSERT_PTR_NULL(c->policy.module_get(&c->policy, "missing"));

	/* fini runs at the last release only. */
	CU_ASSERT_EQUAL_FATAL(mcc_instance_acquire(&o, &again), 0);
	CU_ASSERT_PTR_EQUAL(inst, again);
	mcc_instance_release(again);
	CU_ASSERT_FALSE(lt_log_has(&log, "partial: fini"));
	mcc_instance_release(inst);
	CU_ASSERT_TRUE(lt_log_has(&log, "partial: fini"));
	assert_nothing_loaded();
	lt_log_fini(&log);
}

/* ------------------------------------------------------- environment */

/* ABI 1.2: the module checks its own [module.<name>] keys before init();
 * a key it refuses leaves the controller off, like a bad [controller]
 * value. The sections of other modules are not the engine's business. */
static void test_module_section_is_checked_before_init(void)
{
	struct lt_log log;
	mcc_instance *inst = NULL;
	char want[LT_PATH + 128];
	int rc;

	lt_log_init(&log);
	rc = acquire_ini(&log, &inst,
	                 "[policy]\nmode = enforce\nmodule_dir = %s\n"
	                 "[module.aimd]\ncredit_min_admits = 12x\n",
	                 moddir);
	snprintf(want, sizeof(want),
	         "%s:5: credit_min_admits: '12x' is not a decimal integer (digits only, no sign "
	         "or unit)",
	         ini);
	expect_off("bad value", rc, -EINVAL, inst, &log, want);
	lt_log_fini(&log);

	lt_log_init(&log);
	rc = acquire_ini(&log, &inst,
	                 "[policy]\nmode = observe\nmodule_dir = %s\n"
	                 "[module.observe]\ncredit_min_admits = 8\ncredit = 1\n",
	                 moddir);
	snprintf(want, sizeof(want),
	         "%s:6: credit: unknown key in [module.observe] (keys: credit_min_admits, qos_reserve_slices, qos_reserve_percent, qos_hold_epochs)", ini);
	expect_off("unknown key", rc, -EINVAL, inst, &log, want);
	lt_log_fini(&log);

	/* The built-in null policy takes no key either. */
	lt_log_init(&log);
	rc = acquire_ini(&log, &inst, "[policy]\nmode = off\n[module.null]\nk = 1\n");
	expect_off("null key", rc, -EINVAL, inst, &log,
	           "k: unknown key in [module.null] (the null module takes no keys)");
	lt_log_fini(&log);

	/* Valid keys load; another module's section (even a wrong one) is left
	 * to `mcc check`. */
	lt_log_init(&log);
	rc = acquire_ini(&log, &inst,
	                 "[policy]\nmode = enforce\nmodule = delay\nmodule_dir = %s\n"
	                 "[module.delay]\ncredit_min_admits = 0\n[module.aimd]\nbogus = 1\n",
	                 moddir);
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_STRING_EQUAL(mcc_instance_name(inst), "delay");
	CU_ASSERT_EQUAL(log.count[MCC_LOG_ERROR], 0);
	mcc_instance_release(inst);
	lt_log_fini(&log);

	/* A module built against v1.0 has no config_check: its keys reach
	 * init() unvalidated, as before. */
	lt_log_init(&log);
	rc = acquire_ini(&log, &inst,
	                 "[policy]\nmode = off\nmodule = baseline\nmodule_dir = %s\n"
	                 "[module.baseline]\nanything = goes\n",
	                 baddir);
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_STRING_EQUAL(mcc_instance_name(inst), "baseline");
	mcc_instance_release(inst);
	lt_log_fini(&log);
	assert_nothing_loaded();
}

/* mcc_config_check_modules(): every section by its module, as `mcc check`
 * runs it. */
static void test_every_module_section_is_checked(void)
{
	char err[4096], warn[4096], want[LT_PATH + 256];

	lt_clear_env();
	CU_ASSERT_EQUAL_FATAL(lt_write(dir, "all.ini",
	                               "[policy]\nmode = off\n[module.aimd]\ncredit_min_admits = 1\n"
	                               "[module.observe]\ncredit_min_admits = 2\n"
	                               "[module.delay]\ncredit_min_admits = 3\n",
	                               0644, ini, sizeof(ini)),
	                      0);
	CU_ASSERT_EQUAL(mcc_config_check_modules(ini, 1, moddir, err, sizeof(err), warn,
	                                         sizeof(warn)),
	                0);
	CU_ASSERT_STRING_EQUAL(err, "");
	CU_ASSERT_STRING_EQUAL(warn, "");

	CU_ASSERT_EQUAL_FATAL(lt_write(dir, "typo.ini",
	                               "[policy]\nmode = off\n[module.aimd]\ncredit_min_admits = 1\n"
	                               "[module.aimb]\ncredit_min_admits = 2\n",
	                               0644, ini, sizeof(ini)),
	                      0);
	CU_ASSERT_EQUAL(mcc_config_check_modules(ini, 1, moddir, err, sizeof(err), NULL, 0),
	                -ENOENT);
	snprintf(want, sizeof(want),
	         "%s:5: [module.aimb]: no module 'aimb' (%s/mcc-policy-aimb.so: not found): a "
	         "misspelt section name?",
	         ini, moddir);
	CU_ASSERT_STRING_EQUAL(err, want);

	/* The module_dir of the configuration, and a module refused by the
	 * loader for the section's name. */
	CU_ASSERT_EQUAL_FATAL(lt_write(dir, "dir.ini", "[module.noinit]\nx = 1\n", 0644, ini,
	                               sizeof(ini)),
	                      0);
	CU_ASSERT_EQUAL(mcc_config_check_modules(ini, 1, baddir, err, sizeof(err), NULL, 0),
	                -EINVAL);
	snprintf(want, sizeof(want),
	         "%s:1: [module.noinit]: module 'noinit': descriptor has no init()", ini);
	CU_ASSERT_STRING_EQUAL(err, want);

	/* Configuration errors come first, and module_dir must be absolute. */
	CU_ASSERT_EQUAL_FATAL(lt_write(dir, "cfg.ini", "[policy]\nmode = of\n", 0644, ini,
	                               sizeof(ini)),
	                      0);
	CU_ASSERT_EQUAL(mcc_config_check_modules(ini, 1, NULL, err, sizeof(err), NULL, 0), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, ":2: mode: invalid value 'of'"));
	CU_ASSERT_EQUAL(mcc_config_check_modules(ini, 1, "rel", err, sizeof(err), NULL, 0),
	                -EINVAL);
	CU_ASSERT_STRING_EQUAL(err, "module directory 'rel' is not an absolute path");
	assert_nothing_loaded();
}

/* The default logger: warn and above unless MC_ADAPTIVE_CC_LOG_LEVEL says
 * otherwise, one "mcc: <level>: " prefix. */
static void test_default_logger_level(void)
{
	struct mcc_loader_opts o;
	mcc_instance *inst = NULL;
	char path[LT_PATH + 32], text[4096];
	int saved, fd;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/stderr.txt", dir);
	for (int pass = 0; pass < 2; pass++) {
		lt_clear_env();
		if (pass)
			setenv("MC_ADAPTIVE_CC_LOG_LEVEL", "info", 1);
		setenv("MC_ADAPTIVE_CC_EPOCH_MS", "1", 1); /* a warning */
		fflush(stderr);
		saved = dup(2);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		CU_ASSERT_FATAL(saved >= 0 && fd >= 0);
		dup2(fd, 2);
		close(fd);
		memset(&o, 0, sizeof(o));
		o.struct_size = sizeof(o);
		o.engine = "te";
		CU_ASSERT_EQUAL(mcc_instance_acquire(&o, &inst), 0);
		mcc_instance_release(inst);
		fflush(stderr);
		dup2(saved, 2);
		close(saved);
		fd = open(path, O_RDONLY);
		n = fd >= 0 ? read(fd, text, sizeof(text) - 1) : -1;
		if (fd >= 0)
			close(fd);
		text[n > 0 ? n : 0] = '\0';
		CU_ASSERT_PTR_NOT_NULL(strstr(text, "mcc: warning: MC_ADAPTIVE_CC_EPOCH_MS: unknown "
		                                    "variable, ignored (did you mean "
		                                    "MC_ADAPTIVE_CC_EPOCH_US?)\n"));
		if (pass) {
			CU_ASSERT_PTR_NOT_NULL(strstr(text, "mcc: info: policy 'null' (mode off)"));
		} else {
			CU_ASSERT_PTR_NULL(strstr(text, "mcc: info:"));
		}
		CU_ASSERT_PTR_NULL(strstr(text, "mcc: warning: mcc:"));
	}
	lt_clear_env();
}

static void test_environment_module_dir_and_unknown_variables(void)
{
	struct lt_log log;
	struct mcc_loader_opts o;
	mcc_instance *inst = NULL;

	lt_log_init(&log);
	lt_clear_env();
	setenv("MC_ADAPTIVE_CC_MODULE", "null", 1);
	setenv("MC_ADAPTIVE_CC_MODULE_DIR", moddir, 1);
	setenv("MC_ADAPTIVE_CC_BOGUS_KNOB", "1", 1);
	lt_opts(&o, &log, NULL);
	o.ignore_env = 0;
	CU_ASSERT_EQUAL(mcc_instance_acquire(&o, &inst), 0);
	CU_ASSERT_TRUE(ends_with(where((const void *)mcc_instance_ops(inst)->init),
	                         "/mcc-policy-null.so"));
	CU_ASSERT_EQUAL(log.count[MCC_LOG_WARN], 1);
	CU_ASSERT_TRUE(lt_log_has(&log, "MC_ADAPTIVE_CC_BOGUS_KNOB: unknown variable, ignored"));
	mcc_instance_release(inst);

	/* ignore_env: none of it is read (mode off: the built-in). */
	lt_log_fini(&log);
	lt_log_init(&log);
	o.ignore_env = 1;
	CU_ASSERT_EQUAL(mcc_instance_acquire(&o, &inst), 0);
	CU_ASSERT_FALSE(ends_with(where((const void *)mcc_instance_ops(inst)->init),
	                          "/mcc-policy-null.so"));
	CU_ASSERT_EQUAL(log.count[MCC_LOG_WARN], 0);
	mcc_instance_release(inst);
	lt_clear_env();
	assert_nothing_loaded();
	lt_log_fini(&log);
}

static void test_opts_module_dir_overrides_the_config(void)
{
	struct lt_log log;
	struct mcc_loader_opts o;
	mcc_instance *inst = NULL;
	char text[256];

	lt_log_init(&log);
	snprintf(text, sizeof(text), "[policy]\nmodule = null\nmodule_dir = /nonexistent\n");
	CU_ASSERT_EQUAL_FATAL(lt_write(dir, "dir.ini", text, 0644, ini, sizeof(ini)), 0);
	lt_opts(&o, &log, ini);
	o.module_dir = moddir;
	CU_ASSERT_EQUAL(mcc_instance_acquire(&o, &inst), 0);
	CU_ASSERT_STRING_EQUAL(mcc_instance_name(inst), "null");
	mcc_instance_release(inst);

	o.module_dir = "relative/dir";
	CU_ASSERT_EQUAL(mcc_instance_acquire(&o, &inst), -EINVAL);
	CU_ASSERT_TRUE(lt_is_usable_off(inst));
	CU_ASSERT_PTR_NOT_NULL(strstr(mcc_instance_error(inst), "is not an absolute path"));
	assert_nothing_loaded();
	lt_log_fini(&log);
}

/* ------------------------------------------------------------ API edges */

static void test_acquire_argument_errors(void)
{
	struct mcc_loader_opts o;
	mcc_instance *inst = NULL;
	int saved, fd;
	char path[LT_PATH + 32], buf[512] = "";
	ssize_t n;

	CU_ASSERT_EQUAL(mcc_instance_acquire(NULL, NULL), -EINVAL);

	/* opts == NULL: defaults plus environment (cleared): mode off. */
	lt_clear_env();
	CU_ASSERT_EQUAL(mcc_instance_acquire(NULL, &inst), 0);
	CU_ASSERT_TRUE(lt_is_usable_off(inst));
	mcc_instance_release(inst);

	/* struct_size 0: refused, through the default stderr logger. */
	snprintf(path, sizeof(path), "%s/stderr.txt", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CU_ASSERT_FATAL(fd >= 0);
	fflush(stderr);
	saved = dup(2);
	dup2(fd, 2);
	memset(&o, 0, sizeof(o));
	CU_ASSERT_EQUAL(mcc_instance_acquire(&o, &inst), -EINVAL);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	close(fd);
	CU_ASSERT_TRUE(n > 0);
	CU_ASSERT_PTR_NOT_NULL(
	        strstr(buf, "mcc: error: mcc_instance_acquire: opts->struct_size 0 is smaller than "
	                    "struct mcc_loader_opts (80 bytes)"));
	CU_ASSERT_TRUE(lt_is_usable_off(inst));

	/* Accessors and release accept NULL. */
	mcc_instance_release(NULL);
	CU_ASSERT_PTR_NOT_NULL(mcc_instance_ops(NULL));
	CU_ASSERT_EQUAL(mcc_instance_mode(NULL), MCC_MODE_OFF);
	CU_ASSERT_STRING_EQUAL(mcc_instance_name(NULL), "null");
	CU_ASSERT_PTR_NOT_NULL(mcc_instance_config(NULL));
	assert_nothing_loaded();
}

MCC_CU_SUITE(t_init_loader_tests, "loader", suite_init, suite_clean,
             test_null_module_loads_from_a_generated_ini,
             test_mode_off_runs_the_builtin_without_any_file,
             test_absolute_module_path_loads,
             test_module_without_capabilities_loads,
             test_broken_modules_leave_the_controller_off,
             test_world_writable_module_file_is_refused,
             test_world_writable_module_directory_is_refused,
             test_symlink_into_a_world_writable_directory_is_refused,
             test_missing_module_file_is_reported,
             test_non_elf_and_truncated_files_are_refused,
             test_directory_named_like_a_module_is_refused,
             test_module_owned_by_another_user_is_refused,
             test_file_declaring_another_name_is_refused,
             test_module_mode_must_equal_configured_mode,
             test_config_errors_leave_the_controller_off,
             test_tent_plugin_beside_enforce_leaves_the_controller_off,
             test_qos_is_allowed_beside_a_policy,
             test_pre_qos_module_gets_its_own_acquire_for_every_class,
             test_same_module_is_shared_and_reference_counted,
             test_shared_module_with_another_mode_is_refused,
             test_shared_module_with_another_config_is_refused,
             test_shared_instance_keeps_the_first_host_table,
             test_concurrent_acquires_share_one_instance,
             test_module_receives_host_table_and_its_own_keys,
             test_module_section_is_checked_before_init,
             test_every_module_section_is_checked,
             test_default_logger_level,
             test_environment_module_dir_and_unknown_variables,
             test_opts_module_dir_overrides_the_config,
             test_acquire_argument_errors)

MCC_CU_MAIN(t_init_loader_tests)
