/* SPDX-License-Identifier: MIT */
/*
 * mcc.c - the operator command, installed with libmcc (man page: mcc(1)).
 *
 *   mcc check [INI]     validate INI (else the file an engine reads:
 *                       $MC_ADAPTIVE_CC_CONFIG, else the installed
 *                       mcc.ini) plus the MC_ADAPTIVE_CC_* environment,
 *                       have every [module.*] section checked by its
 *                       module, then load the module it selects, as an
 *                       engine would; print the effective configuration
 *                       with the origin of every value.
 *   mcc modules [DIR]   list the modules in DIR (else the module directory
 *                       the configuration resolves to) and whether the
 *                       loader accepts each, with its reason if not.
 *   mcc version         the versions of the command, of the libmcc it runs
 *                       with and of the policy ABI that libmcc implements.
 *   mcc stat [--prometheus] [PID | FILE | DIR]
 *                       print the live view running engines publish
 *                       ([engine] stat = on): mcc_stat.c.
 *
 * Only the public API of mcc_loader.h is used: the configuration comes from
 * mcc_config_explain() (the parser and validation of mcc_instance_acquire())
 * and every module is judged by mcc_instance_acquire() itself, so the
 * command can never accept what an engine refuses, or the reverse.
 *
 * Exit status: 0 valid / every module accepted; 1 invalid configuration,
 * a warning an engine would log (an unknown MC_ADAPTIVE_CC_* variable, a
 * file with no setting), a module refused; 2 usage or system error.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "mcc_loader.h"
#include "mcc_tool.h"

#ifndef MCC_SYSCONFDIR
#error "MCC_SYSCONFDIR must be defined (Makefile.am AM_CPPFLAGS)"
#endif

#define EXIT_INVALID 1
#define EXIT_USAGE 2

static const char *const mode_names[] = { "off", "observe", "enforce" };

static void usage(FILE *f)
{
	fputs("usage: mcc check [INI]\n"
	      "       mcc modules [DIR]\n"
	      "       mcc version\n"
	      "       mcc stat [--prometheus] [PID | FILE | DIR]\n"
	      "       mcc --help | --version\n"
	      "See mcc(1), mcc.ini(5) and mcc_policy_v1(7).\n",
	      f);
}

/* The loader's messages go to mcc_instance_error(); nothing is printed. */
static void quiet_log(void *arg, int level, const char *fmt, ...)
{
	(void)arg;
	(void)level;
	(void)fmt;
}

/* Loader options for one of the command's own loads: as engine `engine`,
 * from `ini`, its log discarded. */
static void quiet_opts(struct mcc_loader_opts *o, const char *engine, const char *ini)
{
	memset(o, 0, sizeof(*o));
	o->struct_size = sizeof(*o);
	o->engine = engine;
	o->ini_path = ini;
	o->log = quiet_log;
}

/* Print each line of `text` to stderr as "mcc: <tag>: <line>"; the number
 * of lines. */
static int print_lines(const char *tag, const char *text)
{
	int n = 0;

	for (const char *l = text, *nl; l && *l; l = nl ? nl + 1 : NULL, n++) {
		nl = strchr(l, '\n');
		fprintf(stderr, "mcc: %s: %.*s\n", tag, (int)(nl ? nl - l : (long)strlen(l)), l);
	}
	return n;
}

static const char *mode_name(enum mcc_mode m)
{
	return (unsigned)m < sizeof(mode_names) / sizeof(mode_names[0]) ? mode_names[m]
	                                                                 : "invalid";
}

/* ---------------------------------------------------------------- check */

static void print_origin(const struct mcc_config_provenance *ex, const struct mcc_config_origin *o)
{
	char src[4200], line[600];

	if (o->source == MCC_CONFIG_SRC_FILE)
		snprintf(src, sizeof(src), "%s:%d", ex->file, o->line);
	else if (o->source == MCC_CONFIG_SRC_ENV)
		snprintf(src, sizeof(src), "%s", o->env);
	else
		snprintf(src, sizeof(src), "default");
	/* An unset value is printed as a comment, so the output stays a valid
	 * ini file. */
	if (o->value[0])
		snprintf(line, sizeof(line), "%s = %s", o->key, o->value);
	else
		snprintf(line, sizeof(line), "; %s = (unset)", o->key);
	printf("%-40s ; %s\n", line, src);
}

static int cmd_check(const char *ini)
{
	static struct mcc_config_provenance ex; /* 40 KiB: not on the stack */
	struct mcc_loader_opts o;
	struct mcc_config cfg;
	mcc_instance *inst;
	const char *section = "", *env = getenv("MC_ADAPTIVE_CC_CONFIG");
	char err[4096], notes[4096], from[4200];
	int rc, warnings;

	ex.struct_size = sizeof(ex);
	rc = mcc_config_explain(ini, 0, &cfg, &ex, err, sizeof(err));
	warnings = print_lines("warning", ex.warning);
	if (rc != 0) {
		fprintf(stderr, "%s\n", err);
		return EXIT_INVALID;
	}
	/* The configuration is valid: load the module it selects, exactly as an
	 * engine's constructor does (same configuration, same checks of the
	 * module and of its own section, init()). */
	quiet_opts(&o, "mcc-check", ini);
	rc = mcc_instance_acquire(&o, &inst);
	if (rc != 0) {
		fprintf(stderr, "%s\n", mcc_instance_error(inst));
		return EXIT_INVALID;
	}
	/* Then every other [module.*] section, by the module it names (ABI 1.2
	 * config_check): what an engine of another mode would refuse, and a
	 * section no module answers to. */
	rc = mcc_config_check_modules(ini, 0, NULL, err, sizeof(err), notes, sizeof(notes));
	if (rc != 0) {
		mcc_instance_release(inst);
		fprintf(stderr, "%s\n", err);
		return EXIT_INVALID;
	}
	print_lines("note", notes);

	if (ex.file[0])
		snprintf(from, sizeof(from), "%s%s", ex.file,
		         ex.file_from_env == 1   ? ", from MC_ADAPTIVE_CC_CONFIG"
		         : ex.file_from_env == 2 ? ", the installed default"
		                                 : "");
	else if (!ini && env && strcmp(env, "none") == 0)
		snprintf(from, sizeof(from), "no ini file: MC_ADAPTIVE_CC_CONFIG=none");
	else
		snprintf(from, sizeof(from), "no ini file: %s/mcc/mcc.ini does not exist",
		         MCC_SYSCONFDIR);
	if (warnings)
		printf("; mcc check: valid, with %d warning%s on stderr (%s, MC_ADAPTIVE_CC_* "
		       "environment applied)\n",
		       warnings, warnings > 1 ? "s" : "", from);
	else
		printf("; mcc check: valid (%s, MC_ADAPTIVE_CC_* environment applied)\n", from);
	printf("; module: %s, mode %s, ABI %u.%u\n", mcc_instance_name(inst),
	       mode_name(mcc_instance_mode(inst)),
	       MCC_ABI_MAJOR(mcc_instance_ops(inst)->abi_version),
	       MCC_ABI_MINOR(mcc_instance_ops(inst)->abi_version));
	mcc_instance_release(inst);
	for (unsigned i = 0; i < ex.count; i++) {
		if (strcmp(section, ex.origin[i].section) != 0) {
			section = ex.origin[i].section;
			printf("[%s]\n", section);
		}
		print_origin(&ex, &ex.origin[i]);
	}
	/* What an engine only warns about fails the check: a script runs
	 * `mcc check && restart`. */
	return warnings ? EXIT_INVALID : 0;
}

/* -------------------------------------------------------------- modules */

struct verdict {
	int ok;
	char name[64];
	char abi[16];
	char mode[16];
	char why[4096];
};

/* Acquire `module` (a short name, an absolute path or "" for the built-in)
 * with `mode` from `dir`, through a private ini file. */
static int try_load(const char *tmpdir, const char *dir, const char *module, const char *mode,
                    struct verdict *v)
{
	struct mcc_loader_opts o;
	const struct mcc_policy_v1 *ops;
	mcc_instance *inst;
	char ini[PATH_MAX];
	FILE *f;
	int rc, fd;

	/* 0600 whatever the umask: the loader refuses a file others can write. */
	snprintf(ini, sizeof(ini), "%s/probe.ini", tmpdir);
	fd = open(ini, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		rc = -errno;
		if (fd >= 0)
			close(fd);
		return rc;
	}
	fprintf(f, "[policy]\nmode = %s\n", mode);
	if (*module)
		fprintf(f, "module = %s\n", module);
	if (fclose(f) != 0)
		return -EIO;

	quiet_opts(&o, "mcc-modules", ini);
	o.module_dir = dir;
	o.ignore_env = 1;
	rc = mcc_instance_acquire(&o, &inst);
	v->ok = rc == 0;
	if (rc == 0) {
		ops = mcc_instance_ops(inst);
		snprintf(v->name, sizeof(v->name), "%s", mcc_instance_name(inst));
		snprintf(v->abi, sizeof(v->abi), "%u.%u", MCC_ABI_MAJOR(ops->abi_version),
		         MCC_ABI_MINOR(ops->abi_version));
		snprintf(v->mode, sizeof(v->mode), "%s", mode_name(mcc_instance_mode(inst)));
		v->why[0] = '\0';
	} else {
		snprintf(v->why, sizeof(v->why), "%s", mcc_instance_error(inst));
	}
	mcc_instance_release(inst);
	return 0;
}

/*
 * The loader checks the file and the descriptor before it compares the
 * module's mode with the configured one, so a first load in any mode either
 * succeeds, fails for the file itself, or says which mode the module
 * implements; a second load in that mode gives the final verdict (init()
 * included).
 */
static int judge(const char *tmpdir, const char *dir, const char *module, struct verdict *v)
{
	static const char tag[] = "the module implements mode ";
	const char *p;
	int rc;

	rc = try_load(tmpdir, dir, module, "off", v);
	if (rc || v->ok)
		return rc;
	p = strstr(v->why, tag);
	if (!p)
		return 0;
	p += sizeof(tag) - 1;
	for (unsigned m = 1; m < sizeof(mode_names) / sizeof(mode_names[0]); m++) {
		size_t n = strlen(mode_names[m]);

		if (strncmp(p, mode_names[m], n) == 0 && p[n] == ',') {
			rc = try_load(tmpdir, dir, module, mode_names[m], v);
			if (!v->ok) /* init() refused: the mode is known all the same */
				snprintf(v->mode, sizeof(v->mode), "%s", mode_names[m]);
			return rc;
		}
	}
	return 0;
}

/* Every name an operator may have meant as a module file, in any case
 * (mcc-policy-<name>.so; an upper-case spelling is listed and refused, not
 * skipped). */
static int is_module_file(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return strncasecmp(d->d_name, "mcc-policy-", 11) == 0 && n > 14 &&
	       strcasecmp(d->d_name + n - 3, ".so") == 0;
}

static int valid_short_name(const char *s, size_t n)
{
	if (n == 0 || n > 32)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '_' || s[i] == '-'))
			return 0;
	return 1;
}

static void print_verdict(const char *label, const struct verdict *v, const char *note)
{
	char row[sizeof(v->why) + 128];
	size_t n;

	snprintf(row, sizeof(row), "%-16s %-5s %-8s %-4s %s", v->ok ? v->name : label,
	         v->ok ? v->abi : "-", v->mode[0] ? v->mode : "-", v->ok ? "yes" : "no",
	         v->ok ? note : v->why);
	n = strlen(row);
	while (n > 0 && row[n - 1] == ' ')
		row[--n] = '\0';
	puts(row);
}

static int cmd_modules(const char *dir_arg)
{
	char dir[PATH_MAX], tmpdir[PATH_MAX], module[PATH_MAX + 300], label[64], err[4096];
	const char *tmp = getenv("TMPDIR");
	struct dirent **list = NULL;
	struct mcc_config cfg;
	struct verdict v;
	int n, refused = 0, rc = 0;

	if (dir_arg) {
		if (!realpath(dir_arg, dir)) {
			fprintf(stderr, "mcc modules: %s: %s\n", dir_arg, strerror(errno));
			return EXIT_USAGE;
		}
	} else {
		/* The directory an engine would search: defaults < ini < environment. */
		if (mcc_config_load(NULL, 0, &cfg, err, sizeof(err)) != 0) {
			fprintf(stderr, "%s\n", err);
			return EXIT_INVALID;
		}
		snprintf(dir, sizeof(dir), "%s", cfg.module_dir);
	}
	n = scandir(dir, &list, is_module_file, alphasort);
	if (n < 0) {
		fprintf(stderr, "mcc modules: %s: %s\n", dir, strerror(errno));
		return EXIT_USAGE;
	}
	snprintf(tmpdir, sizeof(tmpdir), "%s/mcc-modules-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(tmpdir)) {
		fprintf(stderr, "mcc modules: cannot create a scratch directory: %s\n",
		        strerror(errno));
		rc = EXIT_USAGE;
		goto out;
	}

	printf("; modules in %s\n", dir);
	printf("%-16s %-5s %-8s %-4s %s\n", "NAME", "ABI", "MODE", "OK", "REASON");
	memset(&v, 0, sizeof(v));
	if (judge(tmpdir, dir, "", &v) == 0)
		print_verdict("null", &v, "(built-in: mode = off without module, or module = none)");
	for (int i = 0; i < n; i++) {
		const char *base = list[i]->d_name + 11;
		size_t len = strlen(base) - 3;

		snprintf(label, sizeof(label), "%.*s", (int)(len < 63 ? len : 63), base);
		memset(&v, 0, sizeof(v));
		/* A name no short name reaches (upper case, a character outside
		 * [a-z0-9_-], too long): an engine never loads it from the
		 * directory. Said, not skipped. */
		if (strncmp(list[i]->d_name, "mcc-policy-", 11) != 0 ||
		    strcmp(list[i]->d_name + strlen(list[i]->d_name) - 3, ".so") != 0 ||
		    !valid_short_name(base, len)) {
			snprintf(v.why, sizeof(v.why),
			         "%s: no short name loads this file (a module file is "
			         "mcc-policy-<name>.so, <name> of [a-z0-9_-], at most 32 "
			         "characters): rename it, or name its absolute path in "
			         "[policy] module",
			         list[i]->d_name);
			refused++;
			print_verdict(label, &v, "");
			continue;
		}
		/* By short name, as a module_dir search does (the name the file
		 * declares is checked). */
		snprintf(module, sizeof(module), "%.*s", (int)len, base);
		if (judge(tmpdir, dir, module, &v) != 0) {
			fprintf(stderr, "mcc modules: cannot write %s/probe.ini\n", tmpdir);
			rc = EXIT_USAGE;
			break;
		}
		if (!v.ok)
			refused++;
		print_verdict(label, &v, "");
	}
	snprintf(module, sizeof(module), "%s/probe.ini", tmpdir);
	unlink(module);
	rmdir(tmpdir);
	if (!rc && refused)
		rc = EXIT_INVALID;
out:
	for (int i = 0; i < n; i++)
		free(list[i]);
	free(list);
	return rc;
}

/* The command's version, the version of the libmcc it runs with (which
 * may be another than it was built with), and the policy ABI that libmcc
 * implements (its built-in null policy declares it). */
static int cmd_version(void)
{
	uint32_t abi = mcc_instance_ops(NULL)->abi_version;

	printf("mcc %s\nlibmcc %s\npolicy ABI %u.%u\n", PACKAGE_VERSION, mcc_version(),
	       MCC_ABI_MAJOR(abi), MCC_ABI_MINOR(abi));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		usage(stdout);
		return 0;
	}
	if (argc == 2 && (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0))
		return cmd_version();
	if (argc >= 2 && argc <= 3 && strcmp(argv[1], "check") == 0)
		return cmd_check(argc == 3 ? argv[2] : NULL);
	if (argc >= 2 && argc <= 3 && strcmp(argv[1], "modules") == 0)
		return cmd_modules(argc == 3 ? argv[2] : NULL);
	if (argc >= 2 && strcmp(argv[1], "stat") == 0)
		return mcc_cmd_stat(argc - 2, argv + 2);
	usage(stderr);
	return EXIT_USAGE;
}
