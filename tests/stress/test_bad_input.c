/* SPDX-License-Identifier: MIT */
/*
 * test_bad_input.c - module loading and configuration under attack: inputs
 * the loader's own tests (tests/loader/) do not cover. Every case asserts
 *   - a clear error: mcc_instance_acquire() fails with a negative errno and
 *     mcc_instance_error() names the culprit (file, key or module);
 *   - the controller is off: mcc_instance_mode() == MCC_MODE_OFF;
 *   - the engine still works: the fallback (null) vtable admits a slice,
 *     settles it once and answers a second settle with -EALREADY.
 * Inputs that could block or spin (a FIFO, /dev/zero as the ini file) run
 * in a child process under a watchdog, so a hang is a failure, not a stuck
 * `make check`.
 *
 * Needs MCC_TEST_MODULE_DIR (the built modules) and MCC_TEST_BUILDDIR (for
 * the test-only modules in tests/stress/bad/.libs).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cu_driver.h"
#include "mcc_loader.h"

#define BI_WATCHDOG_S 20 /* only a hang detector; never a timing assertion */

static char bi_tmp[64]; /* this program's private 0700 scratch directory */
static char bi_lastlog[1024];
static unsigned bi_nlogs;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void bi_log(void *arg, int level, const char *fmt, ...)
{
	va_list ap;

	(void)arg;
	(void)level;
	va_start(ap, fmt);
	vsnprintf(bi_lastlog, sizeof(bi_lastlog), fmt, ap);
	va_end(ap);
	bi_nlogs++;
}

static const char *bi_env(const char *name, const char *dflt)
{
	const char *v = getenv(name);

	return v && *v ? v : dflt;
}

static const char *bi_moddir(void)
{
	return bi_env("MCC_TEST_MODULE_DIR", "modules/.libs");
}

static void bi_baddir(char *out, size_t len)
{
	snprintf(out, len, "%s/tests/stress/bad/.libs", bi_env("MCC_TEST_BUILDDIR", "."));
}

/* --------------------------------------------------------------- files */

static int bi_rm_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void bi_mkdir(const char *path, mode_t mode)
{
	CU_ASSERT_FATAL(mkdir(path, 0700) == 0 || errno == EEXIST);
	CU_ASSERT_FATAL(chmod(path, mode) == 0); /* exact mode, whatever the umask */
}

/* A fresh subdirectory of the scratch directory. */
static void bi_subdir(char *out, size_t len, const char *name, mode_t mode)
{
	snprintf(out, len, "%s/%s", bi_tmp, name);
	nftw(out, bi_rm_cb, 8, FTW_DEPTH | FTW_PHYS);
	bi_mkdir(out, mode);
}

static void bi_write(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	const char *p = data;

	CU_ASSERT_FATAL(fd >= 0);
	while (len) {
		ssize_t n = write(fd, p, len);
		CU_ASSERT_FATAL(n > 0);
		p += n;
		len -= (size_t)n;
	}
	CU_ASSERT_FATAL(close(fd) == 0);
}

static void bi_write_str(const char *path, const char *s)
{
	bi_write(path, s, strlen(s));
}

/* Copy `len` bytes (0: all) of `from` to `to`. */
static int bi_copy(const char *from, const char *to, size_t len, mode_t mode)
{
	FILE *in = fopen(from, "rb");
	FILE *out;
	char buf[65536];
	size_t n, total = 0;

	if (!in)
		return -1;
	out = fopen(to, "wb");
	if (!out) {
		fclose(in);
		return -1;
	}
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0) {
		if (len && total + n > len)
			n = len - total;
		fwrite(buf, 1, n, out);
		total += n;
		if (len && total >= len)
			break;
	}
	fclose(in);
	fclose(out);
	return chmod(to, mode);
}

/* ------------------------------------------------------------ acquire */

struct bi_case {
	const char *ini_path;   /* NULL: none */
	const char *module_dir; /* opts.module_dir; NULL: the configuration's */
	int use_env;            /* read MC_ADAPTIVE_CC_* */
};

static int bi_acquire(const struct bi_case *bc, mcc_instance **inst)
{
	struct mcc_loader_opts o;

	memset(&o, 0, sizeof(o));
	o.struct_size = sizeof(o);
	o.engine = "te";
	o.ini_path = bc->ini_path;
	o.module_dir = bc->module_dir; /* NULL: the configuration's (it overrides) */
	o.ignore_env = !bc->use_env;
	o.log = bi_log;
	bi_lastlog[0] = 0;
	bi_nlogs = 0;
	*inst = NULL;
	return mcc_instance_acquire(&o, inst);
}

/* The engine keeps working on the fallback vtable: admit, settle once,
 * the second settle is a detected double release. Returns 0 when it does. */
static int bi_fallback_works(mcc_instance *inst)
{
	const struct mcc_policy_v1 *ops = mcc_instance_ops(inst);
	void *ctx = mcc_instance_ctx(inst);
	struct mcc_lane_desc_v1 ld = { sizeof(ld), 0, MCC_LANE_POST_POLL, 0 };
	struct mcc_device_desc_v1 dd = { sizeof(dd), 0, "mlx5_0", 1, 0, 0, 0 };
	struct mcc_route_desc_v1 rd = { sizeof(rd), 1, 0, 1, 7, "10.0.0.1:1@mlx5_0", 1, 0 };
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	struct mcc_task_ref_v1 t = { 1, 1, 0, 0 };
	struct mcc_completion_v1 wc = { sizeof(wc), 0, 0, 1, 65536, 0, 0, 0, 0 };
	mcc_lane *lane = NULL;
	mcc_device *dev = NULL;
	mcc_route *route = NULL;
	int ok = 1;

	if (!ops || !ops->try_acquire || !ops->release || !ops->on_completion)
		return -1;
	if (ops->lane_open(ctx, &ld, &lane) != 0 || ops->device_open(ctx, &dd, &dev) != 0 ||
	    ops->route_open(ctx, dev, &rd, &route) != 0)
		return -1;
	ok &= ops->try_acquire(lane, route, 65536, 1, &t, &p) == MCC_ADMIT;
	ok &= p.bytes == 65536 && (p.flags & MCC_PERMIT_F_LIVE);
	ops->on_completion(lane, &p, &wc);
	ok &= p.bytes == 0;
	ok &= ops->release(lane, &p, 65536, MCC_REL_RECLAIMED) == -EALREADY;
	ok &= ops->task_query(ctx, &t, 0, NULL) >= 0;
	ops->route_close(ctx, route);
	ops->device_close(ctx, dev);
	ops->lane_close(ctx, lane);
	return ok ? 0 : -1;
}

/* Expect: error naming every `needles` string (NULL-terminated list),
 * controller off, engine working. */
static void bi_expect_off_v(const struct bi_case *bc, const char *const *needles)
{
	mcc_instance *inst = NULL;
	int rc = bi_acquire(bc, &inst);
	const char *err;

	CU_ASSERT(rc < 0);
	CU_ASSERT_FATAL(inst != NULL);
	err = mcc_instance_error(inst);
	CU_ASSERT_FATAL(err != NULL);
	printf("\n    rc %d: \"%s\"", rc, err);
	CU_ASSERT(err[0] != 0);
	CU_ASSERT(mcc_instance_mode(inst) == MCC_MODE_OFF);
	for (const char *const *n = needles; n && *n; n++) {
		if (!strstr(err, *n)) {
			printf("\n    missing \"%s\" in the message", *n);
			CU_FAIL("the error message does not name the culprit");
		}
	}
	CU_ASSERT(bi_fallback_works(inst) == 0);
	mcc_instance_release(inst);
}

#define bi_expect_off(bc, ...)                                                   \
	do {                                                                     \
		const char *const bi_needles_[] = { __VA_ARGS__, NULL };        \
		bi_expect_off_v((bc), bi_needles_);                              \
	} while (0)

/* The positive control of a module test: the same layout loads. */
static void bi_expect_loaded(const struct bi_case *bc, enum mcc_mode mode)
{
	mcc_instance *inst = NULL;
	int rc = bi_acquire(bc, &inst);

	if (rc != 0)
		printf("\n    control load failed: %d \"%s\"", rc,
		       inst ? mcc_instance_error(inst) : "");
	CU_ASSERT(rc == 0);
	CU_ASSERT_FATAL(inst != NULL);
	CU_ASSERT(mcc_instance_mode(inst) == mode);
	mcc_instance_release(inst);
}

/* Write `ini` (binary-safe, `len` bytes) and expect it refused. */
static void bi_ini_off_v(const void *ini, size_t len, const char *const *needles)
{
	char path[128];
	struct bi_case bc = { path, NULL, 0 };

	snprintf(path, sizeof(path), "%s/bad.ini", bi_tmp);
	bi_write(path, ini, len);
	bi_expect_off_v(&bc, needles);
	unlink(path);
}

#define bi_ini_off(str, ...)                                                     \
	do {                                                                     \
		const char *const bi_needles_[] = { __VA_ARGS__, NULL };        \
		bi_ini_off_v((str), strlen(str), bi_needles_);                   \
	} while (0)

/* Run a case in a child under a watchdog: for inputs that could block. */
static void bi_expect_off_forked(const struct bi_case *bc)
{
	pid_t pid;
	int status = 0;

	fflush(NULL);
	pid = fork();
	CU_ASSERT_FATAL(pid >= 0);
	if (pid == 0) {
		mcc_instance *inst = NULL;
		int rc;

		alarm(BI_WATCHDOG_S);
		rc = bi_acquire(bc, &inst);
		if (rc >= 0 || !inst || !mcc_instance_error(inst)[0] ||
		    mcc_instance_mode(inst) != MCC_MODE_OFF || bi_fallback_works(inst) != 0)
			_exit(1);
		printf("\n    rc %d: \"%s\"", rc, mcc_instance_error(inst));
		fflush(stdout);
		mcc_instance_release(inst);
		_exit(0);
	}
	CU_ASSERT_FATAL(waitpid(pid, &status, 0) == pid);
	if (WIFSIGNALED(status))
		printf("\n    child killed by signal %d%s", WTERMSIG(status),
		       WTERMSIG(status) == SIGALRM ? " (watchdog: the loader blocked)" : "");
	CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* ------------------------------------------------------------- modules */

static void test_truncated_elf_module_is_refused(void)
{
	char dir[128], so[192], src[4096], ini[256], text[512];
	struct bi_case bc = { ini, NULL, 0 };

	bi_subdir(dir, sizeof(dir), "trunc", 0755);
	snprintf(src, sizeof(src), "%s/mcc-policy-null.so", bi_moddir());
	snprintf(so, sizeof(so), "%s/mcc-policy-null.so", dir);
	CU_ASSERT_FATAL(bi_copy(src, so, 200, 0644) == 0);
	snprintf(ini, sizeof(ini), "%s/mcc.ini", dir);
	snprintf(text, sizeof(text), "[policy]\nmode = off\nmodule = %s\n", so);
	bi_write_str(ini, text);
	bi_expect_off(&bc, "mcc-policy-null.so");
	/* The same module dir by short name. */
	snprintf(text, sizeof(text), "[policy]\nmode = off\nmodule = null\nmodule_dir = %s\n",
	         dir);
	bi_write_str(ini, text);
	bi_expect_off(&bc, "mcc-policy-null.so");
}

static void bi_bad_module(const char *name, enum mcc_mode mode, int expect_loaded)
{
	char bad[4096], ini[128], text[4400];
	struct bi_case bc = { ini, bad, 0 };

	bi_baddir(bad, sizeof(bad));
	snprintf(ini, sizeof(ini), "%s/mod.ini", bi_tmp);
	snprintf(text, sizeof(text), "[policy]\nmode = %s\nmodule = %s\nmodule_dir = %s\n",
	         mode == MCC_MODE_ENFORCE ? "enforce" : "observe", name, bad);
	bi_write_str(ini, text);
	if (expect_loaded)
		bi_expect_loaded(&bc, mode);
	else
		bi_expect_off(&bc, name);
	unlink(ini);
}

static void test_descriptor_struct_size_zero_is_refused(void)
{
	bi_bad_module("badsize0", MCC_MODE_ENFORCE, 0);
}

/* struct_size 0xffffffff on a descriptor of this header's size. The ABI's growth rule
 * (a later minor's tail is ignored) makes a larger size legal, and libmcc
 * accepts it (BAD_INPUTS.md row 7) without trusting the size: it copies only
 * its own table (an over-read of the symbol would fault or be reported by
 * ASan/valgrind) and the normalised table says its own size. One outcome
 * only: a refusal here is a change of the documented behaviour. */
static void test_descriptor_struct_size_huge_is_never_trusted(void)
{
	char bad[4096], ini[128], text[4400];
	struct bi_case bc = { ini, bad, 0 };
	mcc_instance *inst = NULL;
	int rc;

	bi_baddir(bad, sizeof(bad));
	snprintf(ini, sizeof(ini), "%s/mod.ini", bi_tmp);
	snprintf(text, sizeof(text),
	         "[policy]\nmode = enforce\nmodule = badsizehuge\nmodule_dir = %s\n", bad);
	bi_write_str(ini, text);
	rc = bi_acquire(&bc, &inst);
	CU_ASSERT_FATAL(inst != NULL);
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_STRING_EQUAL(mcc_instance_error(inst), "");
	CU_ASSERT_STRING_EQUAL(mcc_instance_name(inst), "badsizehuge");
	CU_ASSERT(mcc_instance_mode(inst) == MCC_MODE_ENFORCE);
	CU_ASSERT(mcc_instance_ops(inst)->struct_size == sizeof(struct mcc_policy_v1));
	CU_ASSERT(bi_fallback_works(inst) == 0);
	mcc_instance_release(inst);
	unlink(ini);
}

static void test_module_without_init_is_refused(void)
{
	bi_bad_module("noinit", MCC_MODE_ENFORCE, 0);
}

/* init()/fini() only: every other slot comes from the null module. */
static void test_module_with_init_only_runs_on_null_fill(void)
{
	char bad[4096], ini[128], text[4400];
	struct bi_case bc = { ini, bad, 0 };
	mcc_instance *inst = NULL;
	const struct mcc_policy_v1 *ops;
	int rc;

	bi_baddir(bad, sizeof(bad));
	snprintf(ini, sizeof(ini), "%s/mod.ini", bi_tmp);
	snprintf(text, sizeof(text),
	         "[policy]\nmode = enforce\nmodule = initonly\nmodule_dir = %s\n", bad);
	bi_write_str(ini, text);
	rc = bi_acquire(&bc, &inst);
	if (rc != 0)
		printf("\n    %d \"%s\"", rc, inst ? mcc_instance_error(inst) : "");
	CU_ASSERT(rc == 0);
	CU_ASSERT_FATAL(inst != NULL);
	CU_ASSERT(mcc_instance_mode(inst) == MCC_MODE_ENFORCE);
	ops = mcc_instance_ops(inst);
	CU_ASSERT_FATAL(ops != NULL);
	/* Every slot normalised: the hot path never checks for NULL. */
	CU_ASSERT(ops->init && ops->fini && ops->lane_open && ops->lane_close && ops->device_open &&
	          ops->device_close && ops->route_open && ops->route_rebind && ops->route_close &&
	          ops->try_acquire && ops->release && ops->on_completion && ops->poller_progress &&
	          ops->on_async_event && ops->on_signal && ops->tick && ops->task_query &&
	          ops->batch_free && ops->domain_stats && ops->dump);
	CU_ASSERT(bi_fallback_works(inst) == 0);
	mcc_instance_release(inst);
	unlink(ini);
}

static void test_module_with_partial_callbacks_null_fill_never_derefs_handles(void)
{
	char bad[4096], ini[128], text[4400];
	struct bi_case bc = { ini, bad, 0 };
	mcc_instance *inst = NULL;
	const struct mcc_policy_v1 *ops;
	void *ctx;
	struct mcc_domain_stats_v1 st = { .struct_size = sizeof(st) };
	int rc;

	bi_baddir(bad, sizeof(bad));
	snprintf(ini, sizeof(ini), "%s/mod.ini", bi_tmp);
	snprintf(text, sizeof(text),
	         "[policy]\nmode = enforce\nmodule = partialcb\nmodule_dir = %s\n", bad);
	bi_write_str(ini, text);
	rc = bi_acquire(&bc, &inst);
	CU_ASSERT(rc == 0);
	CU_ASSERT_FATAL(inst != NULL);
	/* The module's 1-byte handles go to the null data path (ASan watches). */
	CU_ASSERT(bi_fallback_works(inst) == 0);
	ops = mcc_instance_ops(inst);
	ctx = mcc_instance_ctx(inst);
	{
		struct mcc_lane_desc_v1 ld = { sizeof(ld), 0, MCC_LANE_POST_POLL, 0 };
		struct mcc_device_desc_v1 dd = { sizeof(dd), 0, "mlx5_0", 1, 0, 0, 0 };
		struct mcc_route_desc_v1 rd = { sizeof(rd), 1, 0, 1, 7, "p", 1, 0 };
		struct mcc_async_event_v1 ev = { .struct_size = sizeof(ev), .event_type = 10 };
		struct mcc_signal_v1 sig = { .struct_size = sizeof(sig), .kind = MCC_SIG_BACKLOG };
		mcc_lane *lane;
		mcc_device *dev;
		mcc_route *route;

		CU_ASSERT_FATAL(ops->lane_open(ctx, &ld, &lane) == 0);
		CU_ASSERT_FATAL(ops->device_open(ctx, &dd, &dev) == 0);
		CU_ASSERT_FATAL(ops->route_open(ctx, dev, &rd, &route) == 0);
		CU_ASSERT(ops->domain_stats(ctx, MCC_DOMAIN_ROUTE, route, &st) == 0);
		CU_ASSERT(ops->route_rebind(ctx, route, dev, 1, 0) == 0);
		ops->poller_progress(lane, dev, 3);
		ev.device = dev;
		ev.route = route;
		ops->on_async_event(ctx, &ev);
		sig.device = dev;
		sig.route = route;
		ops->on_signal(ctx, &sig);
		ops->tick(ctx, 1000);
		ops->batch_free(ctx, 1);
		ops->route_close(ctx, route);
		ops->device_close(ctx, dev);
		ops->lane_close(ctx, lane);
	}
	mcc_instance_release(inst);
	unlink(ini);
}

/* module_dir holds a symlink whose target lives in a world-writable
 * directory: whoever can write there controls the code we would load. */
static void test_symlink_to_module_in_world_writable_dir_is_refused(void)
{
	char ww[128], safe[128], src[4096], target[192], link[192];
	char ini[192], text[512];
	struct bi_case bc = { ini, NULL, 0 };

	bi_subdir(ww, sizeof(ww), "ww", 0777);
	bi_subdir(safe, sizeof(safe), "safe", 0755);
	snprintf(src, sizeof(src), "%s/mcc-policy-null.so", bi_moddir());
	snprintf(target, sizeof(target), "%s/mcc-policy-null.so", ww);
	CU_ASSERT_FATAL(bi_copy(src, target, 0, 0644) == 0);
	snprintf(link, sizeof(link), "%s/mcc-policy-null.so", safe);
	CU_ASSERT_FATAL(symlink(target, link) == 0);
	snprintf(ini, sizeof(ini), "%s/mcc.ini", safe);
	snprintf(text, sizeof(text), "[policy]\nmode = off\nmodule = null\nmodule_dir = %s\n",
	         safe);
	bi_write_str(ini, text);
	bi_expect_off(&bc, ww, "writable by others");
	/* By absolute path of the symlink, too. */
	snprintf(text, sizeof(text), "[policy]\nmode = off\nmodule = %s\n", link);
	bi_write_str(ini, text);
	bi_expect_off(&bc, ww, "writable by others");
	/* Control: the same symlink to a copy in a safe directory loads. */
	CU_ASSERT_FATAL(chmod(ww, 0755) == 0);
	snprintf(text, sizeof(text), "[policy]\nmode = off\nmodule = null\nmodule_dir = %s\n",
	         safe);
	bi_write_str(ini, text);
	bi_expect_loaded(&bc, MCC_MODE_OFF);
}

/* The configured module_dir is world-writable but holds only a symlink to
 * a good module in a safe directory. libmcc checks the real path (symlinks
 * resolved) and its directory, so this loads the checked file; refusing the
 * writable module_dir itself would also be acceptable. Either way the
 * outcome is clear: loaded from the safe real path, or refused naming the
 * directory. (Replacing the symlink with a file makes it refused: the
 * file's own directory is then the writable one.) */
static void test_symlink_in_world_writable_dir_loads_only_a_checked_target(void)
{
	char ww[128], src[4096], link[192], ini[192], text[512];
	struct bi_case bc = { ini, NULL, 0 };
	mcc_instance *inst = NULL;
	int rc;

	bi_subdir(ww, sizeof(ww), "wwlink", 0777);
	snprintf(src, sizeof(src), "%s/mcc-policy-null.so", bi_moddir());
	if (src[0] != '/') {
		char cwd[2048];
		CU_ASSERT_FATAL(getcwd(cwd, sizeof(cwd)) != NULL);
		snprintf(src, sizeof(src), "%s/%s/mcc-policy-null.so", cwd, bi_moddir());
	}
	snprintf(link, sizeof(link), "%s/mcc-policy-null.so", ww);
	CU_ASSERT_FATAL(symlink(src, link) == 0);
	snprintf(ini, sizeof(ini), "%s/link.ini", bi_tmp);
	snprintf(text, sizeof(text), "[policy]\nmode = off\nmodule = null\nmodule_dir = %s\n",
	         ww);
	bi_write_str(ini, text);
	rc = bi_acquire(&bc, &inst);
	CU_ASSERT_FATAL(inst != NULL);
	printf("\n    rc %d: \"%s\"", rc, mcc_instance_error(inst));
	CU_ASSERT(mcc_instance_mode(inst) == MCC_MODE_OFF);
	if (rc == 0) {
		CU_ASSERT_STRING_EQUAL(mcc_instance_name(inst), "null");
		CU_ASSERT_STRING_EQUAL(mcc_instance_error(inst), "");
	} else {
		CU_ASSERT(strstr(mcc_instance_error(inst), ww) != NULL);
		CU_ASSERT(bi_fallback_works(inst) == 0);
	}
	mcc_instance_release(inst);
	/* A regular file in the writable directory: always refused. */
	CU_ASSERT_FATAL(unlink(link) == 0);
	CU_ASSERT_FATAL(bi_copy(src, link, 0, 0644) == 0);
	bi_expect_off(&bc, ww);
}

/* ------------------------------------------------------------ ini files */

static void test_ini_10mb_line_is_refused(void)
{
	static const char head[] = "[controller]\nmin_window_bytes = ";
	size_t n = 10u << 20;
	char *buf = malloc(sizeof(head) + n + 1);

	CU_ASSERT_FATAL(buf != NULL);
	memcpy(buf, head, sizeof(head) - 1);
	memset(buf + sizeof(head) - 1, '7', n);
	buf[sizeof(head) - 1 + n] = '\n';
	{
		static const char *const needles[] = { "bad.ini", NULL };
		bi_ini_off_v(buf, sizeof(head) + n, needles);
	}
	/* A 10 MB comment line is no better. */
	buf[0] = ';';
	memset(buf + 1, 'c', sizeof(head) - 2 + n);
	{
		static const char *const needles[] = { "bad.ini", NULL };
		bi_ini_off_v(buf, sizeof(head) + n, needles);
	}
	free(buf);
}

/* inih (r55, no realloc) reads lines in 200-byte pieces: the remainder of
 * an overlong line would be parsed as a line of its own, so a value, or even
 * a comment, could smuggle in a key. Each smuggled line here is valid on its
 * own (the file would load), so only a loader that refuses the overlong line
 * passes. */
static void test_ini_overlong_line_cannot_smuggle_a_key(void)
{
	char ini[1024], pad[256];

	memset(pad, 'a', sizeof(pad));
	/* A value whose 200th byte starts "module = null". */
	snprintf(ini, sizeof(ini), "[policy]\nmode = off\nmodule_dir = /%.*smodule = null\n",
	         199 - (int)strlen("module_dir = /"), pad);
	bi_ini_off(ini, "bad.ini");
	/* A comment whose tail becomes a key. */
	snprintf(ini, sizeof(ini), "[policy]\n;%.*smodule = null\nmode = off\n", 198, pad);
	bi_ini_off(ini, "bad.ini");
}

static void test_ini_embedded_nul_is_refused(void)
{
	static const char v1[] = "[controller]\nmin_window_bytes = 1\0" "31072\n";
	static const char v2[] = "[policy]\nmode = enforce\0garbage\n";
	static const char v3[] = "[controller]\0\nmin_window_bytes = 131072\n";
	/* A NUL as the first byte of a line hides the whole line. */
	static const char v4[] = "[policy]\nmode = off\n\0mode = enforce\n";
	/* A NUL in a last line without a newline. */
	static const char v5[] = "[policy]\nmode = off\0 junk";
	static const char *const needles[] = { "bad.ini", NULL };

	bi_ini_off_v(v1, sizeof(v1) - 1, needles);
	bi_ini_off_v(v2, sizeof(v2) - 1, needles);
	bi_ini_off_v(v3, sizeof(v3) - 1, needles);
	bi_ini_off_v(v4, sizeof(v4) - 1, needles);
	bi_ini_off_v(v5, sizeof(v5) - 1, needles);
}

static void test_ini_duplicate_key_is_refused(void)
{
	bi_ini_off("[controller]\nmin_window_bytes = 131072\nmin_window_bytes = 262144\n",
	           "min_window_bytes");
	/* The same section twice: the key is still a duplicate. */
	bi_ini_off("[policy]\nmode = off\n[controller]\ncooldown_ms = 5\n[policy]\nmode = enforce\n",
	           "mode");
}

static void test_ini_number_with_trailing_garbage_is_refused(void)
{
	bi_ini_off("[controller]\nmin_window_bytes = 131072kb\n", "min_window_bytes");
	bi_ini_off("[controller]\nmax_window_bytes = 16777216 16\n", "max_window_bytes");
	bi_ini_off("[controller]\ncooldown_ms = 10ms\n", "cooldown_ms");
	bi_ini_off("[controller]\nepoch_us = 0x400\n", "epoch_us");
	bi_ini_off("[controller]\ntarget_drain_us = 2e2\n", "target_drain_us");
	bi_ini_off("[controller]\nhard_error_threshold = 3.0\n", "hard_error_threshold");
}

static void test_ini_number_beyond_64_bits_is_refused(void)
{
	bi_ini_off("[controller]\nmax_window_bytes = 18446744073709551616\n", "max_window_bytes");
	bi_ini_off("[controller]\nmax_window_bytes = 99999999999999999999999999999999\n",
	           "max_window_bytes");
	/* strtoull() accepts "-1" as ULLONG_MAX without an error. */
	bi_ini_off("[controller]\nmin_window_bytes = -1\n", "min_window_bytes");
	/* A 32-bit parameter one past its range. */
	bi_ini_off("[controller]\ncooldown_ms = 4294967296\n", "cooldown_ms");
}

static void test_ini_empty_value_is_refused(void)
{
	bi_ini_off("[controller]\nmin_window_bytes =\n", "min_window_bytes");
	bi_ini_off("[policy]\nmode = \n", "mode");
}

static void test_ini_missing_file_is_refused(void)
{
	char path[128];
	struct bi_case bc = { path, NULL, 0 };

	snprintf(path, sizeof(path), "%s/does-not-exist.ini", bi_tmp);
	bi_expect_off(&bc, "does-not-exist.ini");
}

static void test_ini_path_that_is_a_directory_is_refused(void)
{
	char dir[128];
	struct bi_case bc = { dir, NULL, 0 };

	bi_subdir(dir, sizeof(dir), "ini-is-a-dir", 0755);
	bi_expect_off(&bc, "ini-is-a-dir");
}

static void test_ini_path_that_is_a_fifo_does_not_block(void)
{
	char path[128];
	struct bi_case bc = { path, NULL, 0 };

	snprintf(path, sizeof(path), "%s/fifo.ini", bi_tmp);
	unlink(path);
	CU_ASSERT_FATAL(mkfifo(path, 0600) == 0);
	bi_expect_off_forked(&bc);
	unlink(path);
}

static void test_ini_path_dev_zero_does_not_spin(void)
{
	struct bi_case bc = { "/dev/zero", NULL, 0 };

	bi_expect_off_forked(&bc);
}

static void test_ini_binary_garbage_is_refused(void)
{
	static const unsigned char junk[] = { 0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0xff, 0xfe, '\n',
		                              '[', 0xc3, 0x28, ']', '\n', '=', '=', '\n' };
	static const char *const needles[] = { "bad.ini", NULL };

	bi_ini_off_v(junk, sizeof(junk), needles);
}

/* ---------------------------------------------------------- environment */

static void test_env_number_with_garbage_is_refused(void)
{
	struct bi_case bc = { NULL, NULL, 1 };

	setenv("MC_ADAPTIVE_CC_MIN_WINDOW_BYTES", "131072 ", 1);
	bi_expect_off(&bc, "MC_ADAPTIVE_CC_MIN_WINDOW_BYTES");
	setenv("MC_ADAPTIVE_CC_MIN_WINDOW_BYTES", "99999999999999999999999", 1);
	bi_expect_off(&bc, "MC_ADAPTIVE_CC_MIN_WINDOW_BYTES");
	unsetenv("MC_ADAPTIVE_CC_MIN_WINDOW_BYTES");
	setenv("MC_ADAPTIVE_CC_MODE", "enforce;rm -rf /", 1);
	bi_expect_off(&bc, "MC_ADAPTIVE_CC_MODE");
	unsetenv("MC_ADAPTIVE_CC_MODE");
}

static void test_env_config_path_that_is_a_directory_is_refused(void)
{
	struct bi_case bc = { NULL, NULL, 1 };
	char dir[128];

	bi_subdir(dir, sizeof(dir), "envcfg-dir", 0755);
	setenv("MC_ADAPTIVE_CC_CONFIG", dir, 1);
	bi_expect_off(&bc, "envcfg-dir");
	setenv("MC_ADAPTIVE_CC_CONFIG", "none", 1);
}

/* ---------------------------------------------------------------- suite */

static int bi_suite_init(void)
{
	snprintf(bi_tmp, sizeof(bi_tmp), "/tmp/mcc-bad-input.XXXXXX");
	if (!mkdtemp(bi_tmp))
		return -1;
	/* Never inherit a configuration from the caller's environment, nor
	 * read the machine's installed one. */
	setenv("MC_ADAPTIVE_CC_CONFIG", "none", 1);
	unsetenv("MC_ADAPTIVE_CC_MODE");
	unsetenv("MC_ADAPTIVE_CC_MODULE");
	unsetenv("MC_ADAPTIVE_CC_MODULE_DIR");
	return 0;
}

static int bi_suite_clean(void)
{
	if (bi_tmp[0])
		nftw(bi_tmp, bi_rm_cb, 8, FTW_DEPTH | FTW_PHYS);
	return 0;
}

MCC_CU_SUITE(t_init_bad_input_tests, "bad_input", bi_suite_init, bi_suite_clean,
             test_truncated_elf_module_is_refused,
             test_descriptor_struct_size_zero_is_refused,
             test_descriptor_struct_size_huge_is_never_trusted,
             test_module_without_init_is_refused,
             test_module_with_init_only_runs_on_null_fill,
             test_module_with_partial_callbacks_null_fill_never_derefs_handles,
             test_symlink_to_module_in_world_writable_dir_is_refused,
             test_symlink_in_world_writable_dir_loads_only_a_checked_target,
             test_ini_10mb_line_is_refused,
             test_ini_overlong_line_cannot_smuggle_a_key,
             test_ini_embedded_nul_is_refused,
             test_ini_duplicate_key_is_refused,
             test_ini_number_with_trailing_garbage_is_refused,
             test_ini_number_beyond_64_bits_is_refused,
             test_ini_empty_value_is_refused,
             test_ini_missing_file_is_refused,
             test_ini_path_that_is_a_directory_is_refused,
             test_ini_path_that_is_a_fifo_does_not_block,
             test_ini_path_dev_zero_does_not_spin,
             test_ini_binary_garbage_is_refused,
             test_env_number_with_garbage_is_refused,
             test_env_config_path_that_is_a_directory_is_refused)

MCC_CU_MAIN(t_init_bad_input_tests)
