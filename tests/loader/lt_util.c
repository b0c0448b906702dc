/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include "lt_util.h"

#include "cu_driver.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int lt_mkdtemp(char *out, size_t len)
{
	const char *tmp = getenv("TMPDIR");

	if (!tmp || !*tmp)
		tmp = "/tmp";
	if ((size_t)snprintf(out, len, "%s/mcc-loader-XXXXXX", tmp) >= len)
		return -ENAMETOOLONG;
	return mkdtemp(out) ? 0 : -errno;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		return rmdir(path) == 0 ? 0 : 0;
	return unlink(path) == 0 ? 0 : 0;
}

static int unlock_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)ftw;
	if (flag == FTW_D)
		chmod(path, (st->st_mode & 07777) | S_IRWXU);
	return 0;
}

void lt_rmtree(const char *dir)
{
	if (!dir || !*dir)
		return;
	nftw(dir, unlock_one, 16, FTW_PHYS);
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int lt_write_bytes(const char *dir, const char *name, const void *data, size_t len, mode_t mode,
                   char *path, size_t plen)
{
	int fd;

	if ((size_t)snprintf(path, plen, "%s/%s", dir, name) >= plen)
		return -ENAMETOOLONG;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (write(fd, data, len) != (ssize_t)len || fchmod(fd, mode) != 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return close(fd) == 0 ? 0 : -errno;
}

int lt_write(const char *dir, const char *name, const char *text, mode_t mode, char *path,
             size_t len)
{
	return lt_write_bytes(dir, name, text, strlen(text), mode, path, len);
}

int lt_copy(const char *src, const char *dst, mode_t mode, size_t limit)
{
	char buf[65536];
	size_t done = 0;
	ssize_t n;
	int in, out, rc = 0;

	in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (out < 0) {
		rc = -errno;
		close(in);
		return rc;
	}
	while (done < limit && (n = read(in, buf, sizeof(buf))) > 0) {
		size_t want = (size_t)n < limit - done ? (size_t)n : limit - done;
		if (write(out, buf, want) != (ssize_t)want) {
			rc = -EIO;
			break;
		}
		done += want;
	}
	if (fchmod(out, mode) != 0 && !rc)
		rc = -errno;
	close(in);
	close(out);
	return rc;
}

const char *lt_module_dir(void)
{
	const char *d = getenv("MCC_TEST_MODULE_DIR");

	return d && *d ? d : NULL;
}

const char *lt_bad_dir(void)
{
	static char path[LT_PATH];
	const char *b = getenv("MCC_TEST_BUILDDIR");

	if (!b || !*b)
		return NULL;
	snprintf(path, sizeof(path), "%s/tests/loader/bad/.libs", b);
	return path;
}

const char *lt_null_so(void)
{
	static char path[LT_PATH];
	const char *d = lt_module_dir();

	if (!d)
		return NULL;
	snprintf(path, sizeof(path), "%s/mcc-policy-null.so", d);
	return path;
}

void lt_clear_env(void)
{
	char name[256];

	for (;;) {
		char **e;
		for (e = environ; e && *e; e++)
			if (strncmp(*e, "MC_ADAPTIVE_CC_", 15) == 0)
				break;
		if (!e || !*e)
			break;
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(*e, "="), *e);
		unsetenv(name);
	}
	/* Never the installed configuration of the machine the test runs on. */
	setenv("MC_ADAPTIVE_CC_CONFIG", "none", 1);
}

void lt_log_init(struct lt_log *log)
{
	memset(log, 0, sizeof(*log));
	pthread_mutex_init(&log->mu, NULL);
}

void lt_log_fini(struct lt_log *log)
{
	pthread_mutex_destroy(&log->mu);
}

int lt_suite_open(char *dir, size_t len, struct lt_log *log, char *ini_enforce)
{
	lt_clear_env();
	if (!lt_module_dir())
		mcc_cu_skip("MCC_TEST_MODULE_DIR not set (run from make check)");
	int rc = lt_mkdtemp(dir, len);
	if (rc == 0)
		rc = lt_write(dir, "enforce.ini", "[policy]\nmode = enforce\n", 0600, ini_enforce,
		              LT_PATH);
	if (rc == 0)
		lt_log_init(log);
	return rc;
}

int lt_suite_close(const char *dir, struct lt_log *log)
{
	lt_rmtree(dir);
	lt_log_fini(log);
	return 0;
}

void lt_log_fn(void *arg, int level, const char *fmt, ...)
{
	struct lt_log *log = arg;
	char msg[LT_LOG_MSG];
	size_t used;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (level < 0 || level > 3)
		level = 0;
	pthread_mutex_lock(&log->mu);
	log->count[level]++;
	memcpy(log->last[level], msg, sizeof(msg));
	used = strlen(log->all);
	if (used + strlen(msg) + 8 > sizeof(log->all)) {
		/* full: keep the newer half (a suite's later checks look for
		 * messages its earlier, chattier tests would have crowded out) */
		const char *keep = strchr(log->all + used / 2, '\n');
		size_t off = keep ? (size_t)(keep + 1 - log->all) : used;
		memmove(log->all, log->all + off, used - off + 1);
		used -= off;
	}
	snprintf(log->all + used, sizeof(log->all) - used, "%d: %s\n", level, msg);
	pthread_mutex_unlock(&log->mu);
}

int lt_log_has(struct lt_log *log, const char *needle)
{
	int found;

	pthread_mutex_lock(&log->mu);
	found = strstr(log->all, needle) != NULL;
	pthread_mutex_unlock(&log->mu);
	return found;
}

void lt_opts(struct mcc_loader_opts *o, struct lt_log *log, const char *ini)
{
	memset(o, 0, sizeof(*o));
	o->struct_size = sizeof(*o);
	o->engine = "te";
	o->ini_path = ini;
	o->log = log ? lt_log_fn : NULL;
	o->log_arg = log;
	o->ignore_env = 1;
}

int lt_is_usable_off(const mcc_instance *inst)
{
	const struct mcc_policy_v1 *ops = mcc_instance_ops(inst);
	void *ctx = mcc_instance_ctx(inst);
	struct mcc_permit_v1 permit = MCC_PERMIT_INIT;
	struct mcc_device_desc_v1 dd = { sizeof(dd), 0, "mlx5_0", 1, 0, 0, 0 };
	struct mcc_route_desc_v1 rd = { sizeof(rd), 1, 0, 1, 7, "host:1@mlx5_0", 9, 0 };
	struct mcc_lane_desc_v1 ld = { sizeof(ld), 0, MCC_LANE_POST_POLL, 0 };
	mcc_lane *lane = NULL;
	mcc_device *dev = NULL;
	mcc_route *route = NULL;
	int ok;

	if (!ops || mcc_instance_mode(inst) != MCC_MODE_OFF ||
	    strcmp(mcc_instance_name(inst), "null") != 0)
		return 0;
	ok = ops->lane_open(ctx, &ld, &lane) == 0 && ops->device_open(ctx, &dd, &dev) == 0 &&
	     ops->route_open(ctx, dev, &rd, &route) == 0 &&
	     ops->try_acquire(lane, route, 65536, 1, NULL, &permit) == MCC_ADMIT &&
	     (permit.flags & MCC_PERMIT_F_LIVE) && permit.bytes == 65536 &&
	     ops->release(lane, &permit, 65536, MCC_REL_NOT_POSTED) == 0 &&
	     ops->release(lane, &permit, 65536, MCC_REL_NOT_POSTED) == -EALREADY;
	if (route)
		ops->route_close(ctx, route);
	if (dev)
		ops->device_close(ctx, dev);
	if (lane)
		ops->lane_close(ctx, lane);
	return ok;
}

int lt_run_unprivileged(int (*fn)(void *), void *arg, const char *dir)
{
	const struct passwd *pw = getpwnam("nobody");
	uid_t uid = pw ? pw->pw_uid : 65534;
	gid_t gid = pw ? pw->pw_gid : 65534;
	int root = geteuid() == 0, status;
	pid_t pid;

	if (root && dir && chown(dir, uid, gid) != 0) {
		printf("\n    lt_run_unprivileged: chown %s: %s", dir, strerror(errno));
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		printf("\n    lt_run_unprivileged: fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		if (root && (setgroups(0, NULL) != 0 || setgid(gid) != 0 || setuid(uid) != 0 ||
		             geteuid() == 0 || setuid(0) == 0)) {
			printf("\n    lt_run_unprivileged: cannot drop root privileges to uid %u",
			       (unsigned)uid);
			fflush(NULL);
			_exit(255);
		}
		int rc = fn(arg);
		fflush(NULL);
		_exit(rc == 0 ? 0 : 1);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (!WIFEXITED(status)) {
		printf("\n    lt_run_unprivileged: child killed by signal %d", WTERMSIG(status));
		return -1;
	}
	return WEXITSTATUS(status) == 255 ? -1 : WEXITSTATUS(status);
}
