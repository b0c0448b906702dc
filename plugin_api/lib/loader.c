/* SPDX-License-Identifier: MIT */
/*
 * loader.c - the process-wide policy instance: one module per process,
 * shared by every engine (TE, TENT) in it, reference counted.
 *
 * State machine (all under `lock`):
 *
 *   empty --acquire ok--> loaded(refs = 1) --acquire, same module--> refs + 1
 *     ^                        |  \--acquire, other module--> -EBUSY + fallback
 *     +--release, refs == 0----+      (fini() then dlclose() at refs == 0)
 *
 * Every failure (configuration, resolution, permissions, dlopen, dlsym,
 * version, size, name, mode, init) leaves the instance state
 * unchanged, logs exactly one error through the caller's log callback, and
 * hands out `fallback`: a static instance of the built-in null module (mode
 * off) whose release is a no-op. The engine always gets a usable vtable.
 *
 * Module resolution: mode = off without `module` runs the built-in null
 * module and opens no file (rollback to off never depends on the file
 * system); module = none does the same explicitly. Otherwise a short name
 * <n> (mode off -> null, observe -> observe, enforce -> aimd, or [policy]
 * module = <n>) resolves to <module_dir>/mcc-policy-<n>.so, where module_dir
 * is opts->module_dir, else the configuration's (ini < MC_ADAPTIVE_CC_MODULE_DIR,
 * read with secure_getenv), else $(pkglibdir); an absolute path is used as
 * given. Two requests name the same module when they resolve to the same
 * real path.
 *
 * Safe loading: the real path of the file (symlinks resolved) and
 * its directory must not be writable by others, both must be owned by root
 * or the effective user, the file must be a regular file whose ELF program
 * headers fit in it (dlopen of a truncated file dies of SIGBUS); it is
 * checked through descriptors opened on that directory, loaded by its real
 * path with dlopen(RTLD_NOW | RTLD_LOCAL), and refused if it was replaced
 * between the check and the load. A module's ELF constructors would still
 * run inside dlopen(), before any check of the descriptor: the ABI forbids
 * them (the shipped modules have none; tests/loader/exports.sh checks it),
 * and only files that passed the permission checks are ever opened.
 *
 * Locking: acquire/release take a process-wide mutex; a module's init() and
 * fini() run under it, so they must not call back into mcc_instance_acquire
 * or mcc_instance_release. The accessors take no lock.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mcc_internal.h"

#define DEFAULT_MAX_LANES 64
#define BUILTIN_IDENT "builtin:null"

typedef void (*mcc_log_fn)(void *, int, const char *, ...);
typedef uint64_t (*mcc_clock_fn)(void *);

struct mcc_instance {
	const struct mcc_policy_v1 *ops; /* &table, or the built-in descriptor */
	void *ctx;                       /* from init() */
	unsigned refs;                   /* engines holding it (not for the fallback) */
	int is_fallback;
	void *dl;                        /* dlopen handle, NULL for the built-in */
	struct mcc_policy_v1 table;      /* normalised copy: every slot non-NULL */
	const struct mcc_policy_v1 *desc; /* the module's own descriptor (loaded file) */
	struct mcc_host_v1 host;         /* handed to init(), valid until fini() */
	struct mcc_config cfg;           /* merged configuration; cfg.policy to init() */
	struct mcc_init_out_v1 init_out; /* the module's subscriptions */
	struct mcc_modkeys *mk;          /* [module.*] keys, served by module_get */
	char engine[32];                 /* host.engine */
	char name[MCC_NAME_MAX + 1];     /* the descriptor's name */
	char ident[PATH_MAX];            /* real path of the module, or BUILTIN_IDENT */
	char error[MCC_MSG_MAX];         /* "" unless this is the fallback after an error */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct mcc_instance *loaded; /* the process's instance, or NULL */

/* The static built-in null instance handed out on every failure. `ops` is
 * valid from the start; the rest is set once by fallback_prepare(). Its
 * `error` holds the message of the most recent failed acquire (written under
 * `lock`): read it right after the acquire that returned the fallback. */
static struct mcc_instance fallback = {
	.ops = &mcc__null_builtin_v1,
	.is_fallback = 1,
	.name = "null",
	.ident = BUILTIN_IDENT,
};
static pthread_once_t fallback_once = PTHREAD_ONCE_INIT;

/* Bounded message formatting: a message longer than its buffer is cut, by
 * design (vsnprintf keeps -Wformat-truncation quiet about that). */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void
msgf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

/* ------------------------------------------------------ host callbacks */

static uint64_t default_now_ns(void *arg)
{
	struct timespec ts;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

int mcc__log_level_parse(const char *s)
{
	static const char *const names[] = { "error", "warn", "info", "debug" };

	for (int i = 0; s && i < 4; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -1;
}

/* The default logger: "mcc: <level>: <message>" on stderr, one write per
 * message, levels above MC_ADAPTIVE_CC_LOG_LEVEL (default warn) dropped. The
 * variable is read at each message: logging is never on a hot path, and a
 * value the configuration refused reads as the default. */
void mcc__log_stderr(void *arg, int level, const char *fmt, ...)
{
	static const char *const names[] = { "error", "warning", "info", "debug" };
	char line[MCC_MSG_MAX + 64];
	int max = mcc__log_level_parse(getenv("MC_ADAPTIVE_CC_LOG_LEVEL"));
	va_list ap;
	int n;

	(void)arg;
	if (level > (max < 0 ? MCC_LOG_LEVEL_DEFAULT : max))
		return;
	n = snprintf(line, sizeof(line), "mcc: %s: ",
	             level >= 0 && level <= MCC_LOG_DEBUG ? names[level] : "error");
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	strcat(line, "\n");
	fputs(line, stderr);
}

#define default_log mcc__log_stderr

static const char *module_get_inst(const struct mcc_config_v1 *cfg, const char *key)
{
	const struct mcc_instance *inst = cfg ? cfg->module_arg : NULL;

	return inst ? mcc__modkeys_get(inst->mk, inst->name, key) : NULL;
}

static void fill_host(struct mcc_instance *inst, const struct mcc_loader_opts *o)
{
	snprintf(inst->engine, sizeof(inst->engine), "%s", o->engine ? o->engine : "unknown");
	memset(&inst->host, 0, sizeof(inst->host));
	inst->host.abi_version = MCC_POLICY_ABI_V1;
	inst->host.struct_size = sizeof(inst->host);
	inst->host.engine = inst->engine;
	inst->host.caps = o->host_caps;
	inst->host.now_ns = o->now_ns ? o->now_ns : default_now_ns;
	inst->host.clock_arg = o->now_ns ? o->clock_arg : NULL;
	inst->host.log = o->log ? o->log : default_log;
	inst->host.log_arg = o->log ? o->log_arg : NULL;
	inst->host.max_lanes = o->max_lanes ? o->max_lanes : DEFAULT_MAX_LANES;
}

static void fallback_prepare(void)
{
	struct mcc_loader_opts o;
	struct mcc_init_out_v1 io;
	void *ctx = NULL;

	memset(&o, 0, sizeof(o));
	memset(&io, 0, sizeof(io));
	io.struct_size = sizeof(io);
	mcc_config_defaults(&fallback.cfg);
	fill_host(&fallback, &o);
	/* The null module's init allocates nothing and cannot fail. */
	if (mcc__null_builtin_v1.init(&fallback.host, &fallback.cfg.policy, &io, &ctx) == 0)
		fallback.ctx = ctx;
	fallback.init_out = io;
}

/* --------------------------------------------------------- validation */

typedef int (*mcc_acquire_fn)(mcc_lane *, mcc_route *, uint64_t, uint32_t,
                              const struct mcc_task_ref_v1 *, struct mcc_permit_v1 *);

/* try_acquire_qos of a module that has a try_acquire but no
 * try_acquire_qos (one built before ABI 1.2): that try_acquire, the class
 * checked and otherwise ignored. libmcc holds at most one loaded module per
 * process (`loaded`, below), so its try_acquire is a process-wide value:
 * set by normalise() under `lock` before the instance is handed out, read
 * here without a lock. */
static _Atomic(mcc_acquire_fn) qos_compat_target;

static int qos_compat(mcc_lane *lane, mcc_route *route, uint64_t bytes, uint32_t generation,
                      const struct mcc_task_ref_v1 *task, uint32_t qos_class,
                      struct mcc_permit_v1 *permit)
{
	if (qos_class >= MCC_QOS_CLASS_COUNT_)
		return -EINVAL;
	return atomic_load_explicit(&qos_compat_target, memory_order_relaxed)(
	    lane, route, bytes, generation, task, permit);
}

/* Normalise a descriptor: copy what the module has (at most our v1 size; a
 * later minor's tail is ignored), then fill every NULL or absent slot with
 * the built-in null policy's callback (null_builtin.c), so the fast path
 * never tests for NULL. A missing try_acquire_qos beside the module's own
 * try_acquire becomes qos_compat (above); a missing config_check, the
 * "not validated" answer (below). */
static void normalise(struct mcc_policy_v1 *t, const struct mcc_policy_v1 *desc)
{
	const struct mcc_policy_v1 *nul = &mcc__null_builtin_v1;
	size_t n = desc->struct_size < sizeof(*t) ? desc->struct_size : sizeof(*t);

	memset(t, 0, sizeof(*t));
	memcpy(t, desc, n);
	t->struct_size = sizeof(*t);
	if (!t->try_acquire_qos && t->try_acquire) {
		atomic_store_explicit(&qos_compat_target, t->try_acquire, memory_order_relaxed);
		t->try_acquire_qos = qos_compat;
	}
#define FILL(m)                                                                                    \
	do {                                                                                       \
		if (!t->m)                                                                         \
			t->m = nul->m;                                                             \
	} while (0)
	FILL(init);
	FILL(fini);
	FILL(lane_open);
	FILL(lane_close);
	FILL(device_open);
	FILL(device_close);
	FILL(route_open);
	FILL(route_rebind);
	FILL(route_close);
	FILL(try_acquire);
	FILL(release);
	FILL(on_completion);
	FILL(poller_progress);
	FILL(on_async_event);
	FILL(on_signal);
	FILL(tick);
	FILL(task_query);
	FILL(batch_free);
	FILL(domain_stats);
	FILL(dump);
	FILL(try_acquire_qos);
#undef FILL
	/* v1.2: without config_check the host does not validate the module's
	 * section (the null policy's would refuse every key). */
	if (!t->config_check)
		t->config_check = mcc__config_check_unvalidated;
}
/* A member appended to struct mcc_policy_v1 needs its line in normalise(). */
_Static_assert(sizeof(struct mcc_policy_v1) ==
                   offsetof(struct mcc_policy_v1, try_acquire_qos) +
                       sizeof(((struct mcc_policy_v1 *)0)->try_acquire_qos),
               "normalise() must fill every callback of struct mcc_policy_v1");

/* Copy a module-supplied string for a message (it may be anything). */
static const char *quote(const char *s, char *buf, size_t len)
{
	size_t i;

	for (i = 0; s[i] && i + 4 < len && i < 40; i++)
		buf[i] = ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e) ? '?' : s[i];
	if (s[i] && i + 4 <= len) {
		memcpy(buf + i, "...", 3);
		i += 3;
	}
	buf[i] = '\0';
	return buf;
}

/* Check a descriptor against this host. `want` is the short name
 * the file was found by, or NULL for an absolute path. */
static int check_descriptor(const struct mcc_policy_v1 *d, const char *want, char *why, size_t len)
{
	char q[48];

	if (MCC_ABI_MAJOR(d->abi_version) != MCC_ABI_MAJOR(MCC_POLICY_ABI_V1)) {
		msgf(why, len, "ABI version %u.%u, this host implements major %u",
		     MCC_ABI_MAJOR(d->abi_version), MCC_ABI_MINOR(d->abi_version),
		     MCC_ABI_MAJOR(MCC_POLICY_ABI_V1));
		return -EPROTO;
	}
	/* Against the frozen v1.0 size, never sizeof() of this header: a module
	 * built against an older minor keeps loading after members are appended
	 * (normalise() copies what it has and fills the rest). */
	if (d->struct_size < MCC_POLICY_V1_0_SIZE) {
		msgf(why, len,
		     "descriptor struct_size %u is smaller than the v1.0 descriptor (%u bytes)",
		     d->struct_size, MCC_POLICY_V1_0_SIZE);
		return -EPROTO;
	}
	if (!d->name) {
		msgf(why, len, "descriptor name is NULL");
		return -EPROTO;
	}
	if (!mcc__name_valid(d->name)) {
		msgf(why, len,
		     "descriptor name '%s' is invalid (expected [a-z0-9_-], at most %d characters)",
		     quote(d->name, q, sizeof(q)), MCC_NAME_MAX);
		return -EPROTO;
	}
	if (want && strcmp(d->name, want) != 0) {
		msgf(why, len, "the file of module '%s' declares the name '%s'", want, d->name);
		return -EPROTO;
	}
	/* caps is not checked: every bit is optional, and MCC_CAP_THREAD_SAFE is
	 * implied by ABI v1 (the loader neither requires nor reads it). */
	if (!d->init) {
		msgf(why, len, "descriptor has no init()");
		return -EPROTO;
	}
	if (d->mode > MCC_MODE_ENFORCE) {
		msgf(why, len, "descriptor declares an invalid mode %u", d->mode);
		return -EPROTO;
	}
	return 0;
}

/* Refuse a file or directory others may change: writable by others, or owned
 * by someone else than root and the effective user. */
static int check_owner_mode(const struct stat *st, const char *what, const char *path, char *why,
                            size_t len)
{
	uid_t euid = geteuid();

	if (st->st_mode & S_IWOTH) {
		msgf(why, len,
		     "%s %s is writable by others (mode %04o): refusing to load (chmod o-w)", what,
		     path, (unsigned)(st->st_mode & 07777));
		return -EPERM;
	}
	if (st->st_uid != 0 && st->st_uid != euid) {
		msgf(why, len, "%s %s is owned by uid %u, neither root nor the effective user (%u)",
		     what, path, (unsigned)st->st_uid, (unsigned)euid);
		return -EPERM;
	}
	return 0;
}

/*
 * A minimal ELF sanity check before dlopen(): glibc maps the segments the
 * program headers describe, and touching a segment that lies beyond the end
 * of a truncated file raises SIGBUS inside dlopen() - a crash, not an error.
 * Everything else (architecture, class, dependencies, symbols) is left to
 * dlopen(), which reports it through dlerror().
 */
static int check_elf(int fd, const struct stat *st, const char *path, char *why, size_t len)
{
	const unsigned char native = sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32;
	uint64_t size = (uint64_t)st->st_size, end;
	ElfW(Ehdr) eh;
	ElfW(Phdr) ph;

	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
		msgf(why, len, "%s is not an ELF shared object", path);
		return -ENOEXEC;
	}
	if (eh.e_ident[EI_CLASS] != native)
		return 0; /* dlopen explains the wrong class */
	if (eh.e_type != ET_DYN) {
		msgf(why, len, "%s is not an ELF shared object (ELF type %u)", path,
		     (unsigned)eh.e_type);
		return -ENOEXEC;
	}
	end = (uint64_t)eh.e_phoff + (uint64_t)eh.e_phnum * eh.e_phentsize;
	if (eh.e_phentsize != sizeof(ph) || eh.e_phnum == 0 || end > size) {
		msgf(why, len, "%s is truncated or corrupt: bad ELF program headers", path);
		return -ENOEXEC;
	}
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * sizeof(ph))) !=
		    (ssize_t)sizeof(ph)) {
			msgf(why, len, "%s: cannot read the ELF program headers", path);
			return -ENOEXEC;
		}
		if (ph.p_type != PT_LOAD && ph.p_type != PT_DYNAMIC)
			continue;
		if (ph.p_offset > size || ph.p_filesz > size - ph.p_offset) {
			msgf(why, len,
			     "%s is truncated: a segment ends at byte %llu of a %llu-byte file",
			     path,
			     (unsigned long long)ph.p_offset + (unsigned long long)ph.p_filesz,
			     (unsigned long long)size);
			return -ENOEXEC;
		}
	}
	return 0;
}

/* dlopen inst->ident (a real path) after the safety checks, find and check
 * the descriptor and normalise it into inst->table. */
static int load_file(struct mcc_instance *inst, const char *want, char *why, size_t len)
{
	const struct mcc_policy_v1 *desc;
	char dir[PATH_MAX], ebuf[128];
	const char *base, *err;
	struct stat dst, fst, again;
	int dfd = -1, fd = -1, rc, e;
	char *slash;

	snprintf(dir, sizeof(dir), "%s", inst->ident);
	slash = strrchr(dir, '/');
	if (!slash) {
		msgf(why, len, "%s is not an absolute path", inst->ident);
		return -EINVAL;
	}
	base = inst->ident + (slash - dir) + 1;
	if (slash == dir)
		slash[1] = '\0'; /* the root directory */
	else
		*slash = '\0';

	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fstat(dfd, &dst) != 0) {
		e = errno;
		msgf(why, len, "cannot open directory %s: %s", dir,
		     strerror_r(e, ebuf, sizeof(ebuf)));
		rc = -e;
		goto out;
	}
	rc = check_owner_mode(&dst, "directory", dir, why, len);
	if (rc)
		goto out;
	fd = openat(dfd, base, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0 || fstat(fd, &fst) != 0) {
		e = errno;
		msgf(why, len, "cannot open %s: %s", inst->ident,
		     strerror_r(e, ebuf, sizeof(ebuf)));
		rc = -e;
		goto out;
	}
	if (!S_ISREG(fst.st_mode)) {
		msgf(why, len, "%s is not a regular file", inst->ident);
		rc = -EINVAL;
		goto out;
	}
	rc = check_owner_mode(&fst, "module file", inst->ident, why, len);
	if (rc)
		goto out;
	rc = check_elf(fd, &fst, inst->ident, why, len);
	if (rc)
		goto out;

	dlerror();
	inst->dl = dlopen(inst->ident, RTLD_NOW | RTLD_LOCAL);
	if (!inst->dl) {
		err = dlerror();
		msgf(why, len, "dlopen failed: %s", err ? err : "unknown error");
		rc = -ENOEXEC;
		goto out;
	}
	/* The file checked above must be the file loaded. */
	if (stat(inst->ident, &again) != 0 || again.st_dev != fst.st_dev ||
	    again.st_ino != fst.st_ino) {
		msgf(why, len, "%s was replaced while being loaded", inst->ident);
		rc = -EPERM;
		goto out;
	}
	dlerror();
	desc = dlsym(inst->dl, MCC_POLICY_V1_SYMBOL);
	if (!desc) {
		err = dlerror();
		msgf(why, len, "no '%s' symbol: not an mcc policy module (%s)",
		     MCC_POLICY_V1_SYMBOL, err ? err : "symbol is NULL");
		rc = -EPROTO;
		goto out;
	}
	rc = check_descriptor(desc, want, why, len);
	if (rc)
		goto out;
	normalise(&inst->table, desc);
	inst->ops = &inst->table;
	inst->desc = desc;
	snprintf(inst->name, sizeof(inst->name), "%s", desc->name);
out:
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	if (rc && inst->dl) {
		dlclose(inst->dl);
		inst->dl = NULL;
	}
	return rc;
}

/* ---------------------------------------------------------- resolution */

/* Decide what to load: the built-in (ident BUILTIN_IDENT, *want NULL) or a
 * file (inst->ident = its real path; *want = the short name or NULL). */
static int resolve(struct mcc_instance *inst, const struct mcc_loader_opts *o, const char **want,
                   char *label, size_t label_len, char *why, size_t len)
{
	static const char *const by_mode[] = { "null", "observe", "aimd" };
	const struct mcc_config *cfg = &inst->cfg;
	const char *m = cfg->module, *dir;
	char path[PATH_MAX], ebuf[128];
	int n, e;

	*want = NULL;
	if ((!*m && cfg->policy.mode == MCC_MODE_OFF) || strcmp(m, "none") == 0) {
		msgf(label, label_len, "module '%s' (built-in null)", *m ? m : "null");
		snprintf(inst->ident, sizeof(inst->ident), "%s", BUILTIN_IDENT);
		return 0;
	}
	if (!*m)
		m = by_mode[cfg->policy.mode < 3 ? cfg->policy.mode : 0];
	if (m[0] == '/') {
		msgf(label, label_len, "module %s", m);
		n = snprintf(path, sizeof(path), "%s", m);
	} else {
		dir = o->module_dir ? o->module_dir : cfg->module_dir;
		msgf(label, label_len, "module '%s'", m);
		if (dir[0] != '/') {
			msgf(why, len, "module directory '%s' is not an absolute path", dir);
			return -EINVAL;
		}
		*want = m;
		n = snprintf(path, sizeof(path), "%s/mcc-policy-%s.so", dir, m);
	}
	if (n < 0 || (size_t)n >= sizeof(path)) {
		msgf(why, len, "module path too long");
		return -ENAMETOOLONG;
	}
	if (!realpath(path, inst->ident)) {
		e = errno;
		if (e == ENOENT)
			msgf(why, len,
			     "%s: not found (check [policy] module_dir / "
			     "MC_ADAPTIVE_CC_MODULE_DIR)",
			     path);
		else
			msgf(why, len, "%s: %s", path, strerror_r(e, ebuf, sizeof(ebuf)));
		return -e;
	}
	return 0;
}

/* ------------------------------------------------- module sections */

typedef int (*config_check_fn)(const char *, const char *, char *, size_t);

/* A module's reason, made printable: one line, no control characters. */
static void tidy(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = (*s == '\n' || *s == '\r') ? ' ' : '?';
}

/* Every key of [module.<module>] through the module's config_check, in file
 * order. 0, or -EINVAL with "file:line: key: reason" for the first key it
 * refuses. */
static int check_module_keys(const struct mcc_modkeys *mk, const char *module,
                             config_check_fn check, char *msg, size_t len)
{
	for (unsigned i = 0; i < mk->count; i++) {
		const struct mcc_modkey *e = &mk->e[i];
		char why[512];
		int rc;

		if (strcmp(e->module, module) != 0)
			continue;
		why[0] = '\0';
		rc = check(e->key, e->value, why, sizeof(why));
		if (rc == 0)
			continue;
		why[sizeof(why) - 1] = '\0';
		tidy(why);
		if (rc == -ENOENT)
			msgf(msg, len, "%s:%d: %s: unknown key in [module.%s]%s%s%s", mk->file,
			     e->line, e->key, module, why[0] ? " (" : "", why, why[0] ? ")" : "");
		else if (rc == -EINVAL && why[0])
			msgf(msg, len, "%s:%d: %s: %s", mk->file, e->line, e->key, why);
		else if (rc == -EINVAL)
			msgf(msg, len, "%s:%d: %s: value refused by module '%s'", mk->file, e->line,
			     e->key, module);
		else
			msgf(msg, len, "%s:%d: %s: config_check of module '%s' failed (%d)%s%s",
			     mk->file, e->line, e->key, module, rc, why[0] ? ": " : "", why);
		return -EINVAL;
	}
	return 0;
}

/* The config_check of a descriptor as the module wrote it (NULL: absent,
 * a v1.0/v1.1 module, or left NULL). */
static config_check_fn own_config_check(const struct mcc_policy_v1 *d)
{
	return MCC_HAS_MEMBER(struct mcc_policy_v1, d->struct_size, config_check)
	               ? d->config_check
	               : NULL;
}

int mcc_config_check_modules(const char *ini_path, int ignore_env, const char *module_dir,
                             char *errbuf, size_t errlen, char *warn, size_t warnlen)
{
	struct mcc_instance *probe = NULL, *conf = NULL;
	struct mcc_loader_opts o;
	struct mcc_modkeys *mk = NULL;
	char msg[MCC_MSG_MAX], why[MCC_MSG_MAX], label[PATH_MAX + 64], path[PATH_MAX];
	const char *want;
	int rc;

	if (errbuf && errlen)
		errbuf[0] = '\0';
	if (warn && warnlen)
		warn[0] = '\0';
	msg[0] = '\0';
	if (module_dir && module_dir[0] != '/') {
		msgf(msg, sizeof(msg), "module directory '%s' is not an absolute path", module_dir);
		rc = -EINVAL;
		goto out;
	}
	probe = calloc(1, sizeof(*probe));
	conf = calloc(1, sizeof(*conf));
	mk = calloc(1, sizeof(*mk));
	if (!probe || !conf || !mk) {
		msgf(msg, sizeof(msg), "mcc_config_check_modules: out of memory");
		rc = -ENOMEM;
		goto out;
	}
	rc = mcc__config_load(ini_path, ignore_env, &conf->cfg, mk, msg, sizeof(msg), NULL, 0);
	if (rc)
		goto out;
	memset(&o, 0, sizeof(o));
	o.module_dir = module_dir;
	if (!module_dir)
		module_dir = conf->cfg.module_dir;

	/* The module the configuration selects answers for its own name (an
	 * absolute `module =` path included); if it cannot be loaded, the
	 * loader says why when it is acquired. */
	want = NULL;
	if (resolve(conf, &o, &want, label, sizeof(label), why, sizeof(why)) == 0) {
		if (strcmp(conf->ident, BUILTIN_IDENT) == 0) {
			conf->ops = &mcc__null_builtin_v1;
			snprintf(conf->name, sizeof(conf->name), "%s", mcc__null_builtin_v1.name);
		} else if (load_file(conf, want, why, sizeof(why)) != 0) {
			conf->ops = NULL;
		}
	}

	for (unsigned s = 0; s < mk->nsec && rc == 0; s++) {
		const struct mcc_modsec *sec = &mk->sec[s];
		const struct mcc_policy_v1 *d;
		config_check_fn check;
		struct stat st;
		int n;

		if (conf->ops && strcmp(conf->name, sec->module) == 0) {
			d = conf->ops == &conf->table ? conf->desc : conf->ops;
		} else if (!conf->ops && want && strcmp(want, sec->module) == 0) {
			continue; /* the selected module does not load: acquiring it says why */
		} else {
			n = snprintf(path, sizeof(path), "%s/mcc-policy-%s.so", module_dir,
			             sec->module);
			if (strcmp(sec->module, mcc__null_builtin_v1.name) == 0 &&
			    (size_t)n < sizeof(path) && stat(path, &st) != 0) {
				d = &mcc__null_builtin_v1; /* no file: the built-in's rule */
			} else if ((size_t)n >= sizeof(path) || !realpath(path, probe->ident)) {
				msgf(msg, sizeof(msg),
				     "%s:%d: [module.%s]: no module '%s' (%s: %s): a misspelt "
				     "section name?",
				     mk->file, sec->line, sec->module, sec->module, path,
				     (size_t)n >= sizeof(path) ? "path too long" : "not found");
				rc = -ENOENT;
				break;
			} else if (load_file(probe, sec->module, why, sizeof(why)) != 0) {
				msgf(msg, sizeof(msg), "%s:%d: [module.%s]: module '%s': %s", mk->file,
				     sec->line, sec->module, sec->module, why);
				rc = -EINVAL;
				break;
			} else {
				d = probe->desc;
			}
		}
		check = own_config_check(d);
		if (check)
			rc = check_module_keys(mk, sec->module, check, msg, sizeof(msg));
		else if (warn && warnlen)
			snprintf(warn + strnlen(warn, warnlen), warnlen - strnlen(warn, warnlen),
			         "%s%s:%d: [module.%s]: not validated: module '%s' has ABI %u.%u "
			         "(config_check came with 1.2)",
			         warn[0] ? "\n" : "", mk->file, sec->line, sec->module, sec->module,
			         MCC_ABI_MAJOR(d->abi_version), MCC_ABI_MINOR(d->abi_version));
		if (probe->dl) {
			dlclose(probe->dl);
			probe->dl = NULL;
		}
	}
out:
	if (conf && conf->dl)
		dlclose(conf->dl);
	if (probe && probe->dl)
		dlclose(probe->dl);
	free(mk);
	free(conf);
	free(probe);
	if (rc && errbuf && errlen)
		snprintf(errbuf, errlen, "%s", msg);
	return rc;
}

/* ------------------------------------------------------------- acquire */

static void instance_free(struct mcc_instance *inst)
{
	if (!inst || inst == &fallback)
		return;
	if (inst->dl)
		dlclose(inst->dl);
	free(inst->mk);
	free(inst);
}

/* Same merged settings? (The module is the same: the real path matched.) */
/* Which part of two merged configurations differs (NULL: none): the RFC
 * parameters, the [engine] keys, or the [module.*] keys (names, values). */
static const char *config_diff(const struct mcc_config *a, const struct mcc_modkeys *amk,
                               const struct mcc_config *b, const struct mcc_modkeys *bmk)
{
	size_t from = offsetof(struct mcc_config_v1, mode);
	size_t to = offsetof(struct mcc_config_v1, reserved0);

	if (memcmp((const char *)&a->policy + from, (const char *)&b->policy + from, to - from))
		return "[policy]/[controller] settings";
	if (a->tent_cc_plugin_enabled != b->tent_cc_plugin_enabled ||
	    a->qos_enabled != b->qos_enabled || strcmp(amk->stat.stat, bmk->stat.stat) ||
	    amk->stat.interval_ms != bmk->stat.interval_ms)
		return "[engine] settings";
	if (amk->count != bmk->count)
		return "[module.*] keys";
	for (unsigned i = 0; i < amk->count; i++)
		if (strcmp(amk->e[i].module, bmk->e[i].module) ||
		    strcmp(amk->e[i].key, bmk->e[i].key) || strcmp(amk->e[i].value, bmk->e[i].value))
			return "[module.*] keys";
	return NULL;
}

int mcc_instance_acquire(const struct mcc_loader_opts *opts, mcc_instance **out)
{
	struct mcc_loader_opts o;
	struct mcc_instance *inst = NULL;
	struct mcc_init_out_v1 io;
	char msg[MCC_MSG_MAX], why[MCC_MSG_MAX], warn[MCC_MSG_MAX], label[PATH_MAX + 64], ebuf[128];
	mcc_log_fn log_fn;
	void *larg, *ctx;
	const char *want;
	int rc, locked = 0;

	if (!out)
		return -EINVAL;
	pthread_once(&fallback_once, fallback_prepare);
	*out = &fallback;
	msg[0] = warn[0] = '\0';

	memset(&o, 0, sizeof(o));
	log_fn = default_log;
	larg = NULL;
	if (opts && opts->struct_size < MCC_LOADER_OPTS_V1_0_SIZE) {
		/* Accepted only whole: a shorter struct is never copied in part
		 * (half a pointer), and its callbacks are not trusted. */
		msgf(msg, sizeof(msg),
		     "mcc_instance_acquire: opts->struct_size %u is smaller than struct "
		     "mcc_loader_opts (%u bytes): set it to sizeof(struct mcc_loader_opts)",
		     opts->struct_size, MCC_LOADER_OPTS_V1_0_SIZE);
		rc = -EINVAL;
		goto fail;
	}
	if (opts)
		memcpy(&o, opts, opts->struct_size < sizeof(o) ? opts->struct_size : sizeof(o));
	o.struct_size = sizeof(o);
	log_fn = o.log ? o.log : default_log;
	larg = o.log ? o.log_arg : NULL;
	if (o.module_dir && o.module_dir[0] != '/') {
		msgf(msg, sizeof(msg),
		     "mcc_instance_acquire: opts->module_dir '%s' is not an "
		     "absolute path",
		     o.module_dir);
		rc = -EINVAL;
		goto fail;
	}

	inst = calloc(1, sizeof(*inst));
	if (inst)
		inst->mk = calloc(1, sizeof(*inst->mk));
	if (!inst || !inst->mk) {
		msgf(msg, sizeof(msg), "mcc_instance_acquire: out of memory");
		rc = -ENOMEM;
		goto fail;
	}

	/* 1. Configuration: defaults < ini < environment, validated. */
	rc = mcc__config_load(o.ini_path, o.ignore_env, &inst->cfg, inst->mk, msg, sizeof(msg),
	                      warn, sizeof(warn));
	for (char *w = warn, *nl; w && *w; w = nl ? nl + 1 : NULL) {
		nl = strchr(w, '\n');
		log_fn(larg, MCC_LOG_WARN, "%.*s", (int)(nl ? nl - w : (long)strlen(w)), w);
	}
	if (rc)
		goto fail;

	/* 2. Which module. */
	rc = resolve(inst, &o, &want, label, sizeof(label), why, sizeof(why));
	if (rc) {
		msgf(msg, sizeof(msg), "%s: %s", label, why);
		goto fail;
	}

	pthread_mutex_lock(&lock);
	locked = 1;

	/* 3. One policy authority per process. */
	if (loaded) {
		if (strcmp(loaded->ident, inst->ident) != 0) {
			msgf(msg, sizeof(msg),
			     "%s: policy '%s' (mode %s) is already loaded in this process by "
			     "engine "
			     "'%s'; refusing to load a second policy beside it (one policy "
			     "authority "
			     "per process); this engine runs with the controller off",
			     label, loaded->name, mcc__mode_name(loaded->ops->mode),
			     loaded->engine);
			rc = -EBUSY;
			goto fail;
		}
		if (loaded->ops->mode != inst->cfg.policy.mode) {
			msgf(msg, sizeof(msg),
			     "%s: the module implements mode %s, but the configuration sets mode = "
			     "%s",
			     label, mcc__mode_name(loaded->ops->mode),
			     mcc__mode_name(inst->cfg.policy.mode));
			rc = -EINVAL;
			goto fail;
		}
		/* One configuration per process: the module was initialised with
		 * the first engine's, and silently running another engine under
		 * it would hide the difference. */
		const char *diff = config_diff(&loaded->cfg, loaded->mk, &inst->cfg, inst->mk);
		if (diff) {
			msgf(msg, sizeof(msg),
			     "%s: engine '%s' asks for policy '%s' with a configuration that "
			     "differs (%s) from the one engine '%s' loaded it with; refusing to "
			     "share it (one configuration per process); this engine runs with "
			     "the controller off",
			     label, o.engine ? o.engine : "unknown", loaded->name, diff,
			     loaded->engine);
			rc = -EBUSY;
			goto fail;
		}
		loaded->refs++;
		*out = loaded;
		/* The host table was fixed by the first engine's init(). */
		if ((o.log && (o.log != loaded->host.log || o.log_arg != loaded->host.log_arg)) ||
		    (o.now_ns &&
		     (o.now_ns != loaded->host.now_ns || o.clock_arg != loaded->host.clock_arg)) ||
		    (o.max_lanes && o.max_lanes > loaded->host.max_lanes) ||
		    (o.host_caps & ~loaded->host.caps))
			log_fn(larg, MCC_LOG_WARN,
			       "engine '%s' shares policy '%s': the host table of engine '%s' "
			       "(clock, "
			       "log, max_lanes %u, caps 0x%llx) stays in use until the last "
			       "release",
			       o.engine ? o.engine : "unknown", loaded->name, loaded->engine,
			       loaded->host.max_lanes, (unsigned long long)loaded->host.caps);
		pthread_mutex_unlock(&lock);
		instance_free(inst);
		return 0;
	}

	/* 4. Load and check. */
	if (strcmp(inst->ident, BUILTIN_IDENT) == 0) {
		inst->ops = &mcc__null_builtin_v1;
		snprintf(inst->name, sizeof(inst->name), "%s", mcc__null_builtin_v1.name);
	} else {
		rc = load_file(inst, want, why, sizeof(why));
		if (rc) {
			msgf(msg, sizeof(msg), "%s: %s", label, why);
			goto fail;
		}
	}
	if (inst->ops->mode != inst->cfg.policy.mode) {
		msgf(msg, sizeof(msg),
		     "%s: the module implements mode %s, but the configuration sets mode = %s",
		     label, mcc__mode_name(inst->ops->mode), mcc__mode_name(inst->cfg.policy.mode));
		rc = -EINVAL;
		goto fail;
	}

	/* 5. The module's own section, checked by the module (v1.2). */
	rc = check_module_keys(inst->mk, inst->name, inst->ops->config_check, msg, sizeof(msg));
	if (rc)
		goto fail;

	/* 6. Host table, configuration view, init(). */
	fill_host(inst, &o);
	inst->cfg.policy.module_get = module_get_inst;
	inst->cfg.policy.module_arg = inst;
	if (!inst->cfg.module[0]) /* chosen by the mode: record which */
		msgf(inst->cfg.module, sizeof(inst->cfg.module), "%s", want ? want : inst->name);
	memset(&io, 0, sizeof(io));
	io.struct_size = sizeof(io);
	ctx = NULL;
	rc = inst->ops->init(&inst->host, &inst->cfg.policy, &io, &ctx);
	if (rc != 0) {
		msgf(msg, sizeof(msg), "%s: init() failed: %s (%d)", label,
		     rc < 0 ? strerror_r(-rc, ebuf, sizeof(ebuf)) : "not a negative errno", rc);
		rc = rc < 0 ? rc : -EPROTO;
		goto fail;
	}
	inst->ctx = ctx;
	inst->init_out = io;
	inst->refs = 1;
	loaded = inst;
	pthread_mutex_unlock(&lock);
	*out = inst;
	log_fn(larg, MCC_LOG_INFO, "policy '%s' (mode %s) loaded from %s for engine '%s'",
	       inst->name, mcc__mode_name(inst->ops->mode),
	       strcmp(inst->ident, BUILTIN_IDENT) == 0 ? "the built-in null module" : inst->ident,
	       inst->engine);
	return 0;

fail:
	if (!locked)
		pthread_mutex_lock(&lock);
	snprintf(fallback.error, sizeof(fallback.error), "%s", msg);
	pthread_mutex_unlock(&lock);
	instance_free(inst);
	/* Exactly one error, through the caller's logger. */
	log_fn(larg, MCC_LOG_ERROR, "%s", msg);
	*out = &fallback;
	return rc < 0 ? rc : -EINVAL;
}

void mcc_instance_release(mcc_instance *inst)
{
	if (!inst || inst == &fallback)
		return; /* the fallback is static: nothing to drop */
	pthread_mutex_lock(&lock);
	if (inst != loaded || inst->refs == 0) {
		/* Not the live instance: a release too many. Ignore it. */
		pthread_mutex_unlock(&lock);
		return;
	}
	if (--inst->refs > 0) {
		pthread_mutex_unlock(&lock);
		return;
	}
	loaded = NULL;
	/* fini() then dlclose(), under the lock: a concurrent acquire of another
	 * module waits until this one is gone. */
	inst->ops->fini(inst->ctx);
	pthread_mutex_unlock(&lock);
	instance_free(inst);
}

/* ----------------------------------------------------------- accessors */

static const struct mcc_instance *get(const mcc_instance *inst)
{
	if (inst)
		return inst;
	pthread_once(&fallback_once, fallback_prepare);
	return &fallback;
}

const struct mcc_policy_v1 *mcc_instance_ops(const mcc_instance *inst)
{
	return get(inst)->ops;
}

void *mcc_instance_ctx(const mcc_instance *inst)
{
	return get(inst)->ctx;
}

enum mcc_mode mcc_instance_mode(const mcc_instance *inst)
{
	return (enum mcc_mode)get(inst)->ops->mode;
}

const char *mcc_instance_name(const mcc_instance *inst)
{
	return get(inst)->name;
}

const char *mcc_instance_error(const mcc_instance *inst)
{
	return get(inst)->error;
}

uint32_t mcc__instance_max_lanes(const mcc_instance *inst)
{
	return get(inst)->host.max_lanes;
}

const struct mcc_config *mcc_instance_config(const mcc_instance *inst)
{
	return &get(inst)->cfg;
}

uint64_t mcc_instance_signal_mask(const mcc_instance *inst)
{
	const struct mcc_instance *i = get(inst);
	return i->is_fallback ? 0 : i->init_out.signal_mask;
}

int mcc_instance_wants_async_events(const mcc_instance *inst)
{
	const struct mcc_instance *i = get(inst);
	return !i->is_fallback && i->init_out.want_async_events != 0;
}

const struct mcc_stat_keys *mcc__instance_stat_keys(const mcc_instance *inst)
{
	const struct mcc_instance *i = get(inst);
	return i->is_fallback || !i->mk ? NULL : &i->mk->stat;
}

uint32_t mcc__instance_base_rtt_us(const mcc_instance *inst)
{
	const struct mcc_instance *i = get(inst);
	return i->is_fallback || !i->mk ? 0 : i->mk->base_rtt_us;
}
