/* SPDX-License-Identifier: MIT */
/*
 * config.c - the single configuration authority of a process: built-in
 * defaults, then the ini file (inih r55, Debian libinih-dev), then the
 * MC_ADAPTIVE_CC_* environment, validated as a whole (RFC "Configuration,
 * Compatibility, and Rollback").
 *
 * Strictness (any violation is an error and leaves the controller off; the
 * caller never sees a partially defaulted configuration):
 *   - sections: [policy], [controller], [engine], [module.<name>] only;
 *   - keys of [policy]/[controller]/[engine]: only those in `keys` below,
 *     each at most once in the file (a repeated key is an error, not "last
 *     one wins"); keys are lower case;
 *   - [module.<name>] keys are kept raw (bounded: MCC_MODKEYS_MAX keys,
 *     MCC_MODKEY_KEY_MAX-1 bytes a key) and handed to that module only,
 *     through mcc_config_v1.module_get; the module validates them;
 *   - numbers: decimal digits only (no sign, no base prefix, no suffix, no
 *     surrounding junk), parsed with strtoull after resetting errno, overflow
 *     detected, then range-checked per key (table below); every numeric
 *     value is positive;
 *   - cross-key rules: min_window_bytes <= max_window_bytes; an explicitly
 *     set probe_window_bytes <= min_window_bytes; cooldown_ms <=
 *     cooldown_max_ms; recorder_entries a power of two;
 *   - single policy authority: [engine] tent_cc_plugin (the PR #2489 TENT
 *     controller) enabled while mode != off is rejected; qos = on is allowed;
 *   - inih's own errors are reported with file:line too: a line longer than
 *     197 characters (inih would split it), a NUL byte (inih would cut the
 *     line there), a section header without ']', a line that is neither a
 *     comment, a section header nor `key = value`, and indented continuation
 *     lines (inih's multi-line values, which we do not accept);
 *   - the file itself: a regular file (a FIFO or device is refused without
 *     blocking), not writable by others.
 *
 * Error messages: "<file>:<line>: <key>: <reason>" for the ini file,
 * "<file>: <reason>" for the file as a whole, and
 * "MC_ADAPTIVE_CC_<KEY>: <reason>" for the environment. A cross-key error is
 * reported at the setting of higher precedence (environment over file, a
 * later line over an earlier one), the one that made the pair inconsistent.
 *
 * inih is used conservatively: no INI_* macro is defined here (the
 * library's compile-time options are baked into libinih.so and
 * INI_HANDLER_LINENO would change the handler signature), only the r55 API
 * ini_parse_stream() is called, and line numbers come from our own reader,
 * which sees every physical line before inih does.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mcc_defaults.h"
#include "mcc_internal.h"

#ifndef MCC_PKGLIBDIR
#error "MCC_PKGLIBDIR must be defined (Makefile.am AM_CPPFLAGS)"
#endif
#ifndef MCC_SYSCONFDIR
#error "MCC_SYSCONFDIR must be defined (Makefile.am AM_CPPFLAGS)"
#endif

extern char **environ;

#define ENV_PREFIX "MC_ADAPTIVE_CC_"
#define ENV_CONFIG ENV_PREFIX "CONFIG"
#define ENV_LOG_LEVEL ENV_PREFIX "LOG_LEVEL"
/* The configuration file read when neither the engine nor
 * MC_ADAPTIVE_CC_CONFIG names one (the installed sample, conf/mcc.ini). */
#define DEFAULT_INI MCC_SYSCONFDIR "/mcc/mcc.ini"
/* MC_ADAPTIVE_CC_CONFIG=none: no file at all, not even the default one. */
#define CONFIG_NONE "none"

/* ------------------------------------------------------------ key table */

enum sec_id { SEC_POLICY, SEC_CONTROLLER, SEC_ENGINE, SEC_COUNT_ };
static const char *const sec_names[SEC_COUNT_] = { "policy", "controller", "engine" };

enum key_type {
	KT_U32,    /* number, stored in a uint32_t of struct mcc_config_v1 */
	KT_U64,    /* number, stored in a uint64_t of struct mcc_config_v1 */
	KT_MODE,   /* off | observe | enforce */
	KT_MODULE, /* none | <short name> | </absolute/path.so> */
	KT_DIR,    /* </absolute/dir> */
	KT_TENT,   /* none | <plugin name> */
	KT_ONOFF,  /* on | off */
	KT_STAT,   /* off | on | </absolute/dir>: the live view (mcc_stat.h) */
	KT_STAT_MS,/* number, stored in mcc_modkeys.stat.interval_ms */
	KT_RTT_US, /* number, stored in mcc_modkeys.base_rtt_us */
};

#define KF_POW2 1u       /* must be a power of two */
#define KF_UNSET_ZERO 2u /* default 0 means "not set"; a set value is positive */

enum key_id {
	K_MODE,
	K_MODULE,
	K_MODULE_DIR,
	K_MIN_WINDOW_BYTES,
	K_MAX_WINDOW_BYTES,
	K_PROBE_WINDOW_BYTES,
	K_TARGET_DRAIN_US,
	K_HIGH_PRESSURE_EPOCHS,
	K_LOW_PRESSURE_EPOCHS,
	K_HARD_ERROR_THRESHOLD,
	K_COOLDOWN_MS,
	K_COOLDOWN_MAX_MS,
	K_FLAP_WINDOW_MS,
	K_EPOCH_US,
	K_MD_PERCENT,
	K_FAST_RECOVERY_EPOCHS,
	K_AI_BYTES,
	K_PROBE_SUCCESSES,
	K_EVIDENCE_TASKS,
	K_RECORDER_ENTRIES,
	K_TENT_CC_PLUGIN,
	K_QOS,
	K_STAT,
	K_STAT_INTERVAL_MS,
	K_BASE_RTT_US,
	K_COUNT_
};

struct key_spec {
	const char *name; /* ini key */
	const char *env;  /* environment variable */
	unsigned section; /* enum sec_id */
	unsigned type;    /* enum key_type */
	unsigned flags;   /* KF_* */
	size_t off;       /* numbers: offset in struct mcc_config_v1 */
	uint64_t def, min, max;
};

/*
 * Ranges. Lower bounds are the RFC's "every numeric value must be positive"
 * (tighter floors would reject settings the RFC calls valid; the adaptive
 * bound max(window, one slice) keeps tiny windows safe). Upper bounds keep
 * the window arithmetic far from 64-bit overflow (sums of windows over
 * thousands of domains), the time constants within one day, and the
 * per-process tables within a few hundred MiB. The defaults are in
 * mcc_defaults.h, the reasons for them in conf/mcc.ini.
 *
 *   key                   unit     min  max
 *   min_window_bytes      bytes    1    2^40 (1 TiB)
 *   max_window_bytes      bytes    1    2^40
 *   probe_window_bytes    bytes    1    2^40, and <= min_window_bytes
 *   target_drain_us       us       1    10,000,000 (10 s)
 *   high_pressure_epochs  epochs   1    1,000,000
 *   low_pressure_epochs   epochs   1    1,000,000
 *   hard_error_threshold  errors   1    1,000,000
 *   cooldown_ms           ms       1    86,400,000 (1 day)
 *   cooldown_max_ms       ms       1    86,400,000, >= cooldown_ms
 *   flap_window_ms        ms       1    86,400,000
 *   epoch_us              us       1    10,000,000 (10 s)
 *   md_percent            percent  1    99
 *   fast_recovery_epochs  epochs   1    64 (2^-64 of the gap is 0)
 *   ai_bytes              bytes    1    2^40
 *   probe_successes       count    1    1,000,000
 *   evidence_tasks        tasks    1    16,777,216 (2^24)
 *   recorder_entries      entries  1    16,777,216, a power of two
 *   stat_interval_ms      ms       10   3,600,000 (1 hour): [engine], the live
 *                                        view's publish period
 *   base_rtt_us           us       1    1,000,000 (1 s): [engine], unset = unknown
 */
#define BYTES_MAX (UINT64_C(1) << 40)
#define US_MAX UINT64_C(10000000)
#define MS_MAX UINT64_C(86400000)
#define COUNT_MAX UINT64_C(1000000)
#define TABLE_MAX (UINT64_C(1) << 24)

/* clang-format off */
#define NUM(id_, name_, NAME_, type_, def_, min_, max_, flags_)                                  \
	[id_] = { #name_, ENV_PREFIX #NAME_, SEC_CONTROLLER, type_, flags_,                       \
		  offsetof(struct mcc_config_v1, name_), def_, min_, max_ }
#define STR(id_, name_, NAME_, sec_, type_)                                                     \
	[id_] = { #name_, ENV_PREFIX #NAME_, sec_, type_, 0, 0, 0, 0, 0 }

static const struct key_spec keys[K_COUNT_] = {
	STR(K_MODE, mode, MODE, SEC_POLICY, KT_MODE),
	STR(K_MODULE, module, MODULE, SEC_POLICY, KT_MODULE),
	STR(K_MODULE_DIR, module_dir, MODULE_DIR, SEC_POLICY, KT_DIR),
	NUM(K_MIN_WINDOW_BYTES, min_window_bytes, MIN_WINDOW_BYTES, KT_U64, MCC_DEFAULT_MIN_WINDOW_BYTES, 1, BYTES_MAX, 0),
	NUM(K_MAX_WINDOW_BYTES, max_window_bytes, MAX_WINDOW_BYTES, KT_U64, MCC_DEFAULT_MAX_WINDOW_BYTES, 1, BYTES_MAX, 0),
	NUM(K_PROBE_WINDOW_BYTES, probe_window_bytes, PROBE_WINDOW_BYTES, KT_U64, 0, 1, BYTES_MAX,
	    KF_UNSET_ZERO),
	NUM(K_TARGET_DRAIN_US, target_drain_us, TARGET_DRAIN_US, KT_U32, MCC_DEFAULT_TARGET_DRAIN_US, 1, US_MAX, 0),
	NUM(K_HIGH_PRESSURE_EPOCHS, high_pressure_epochs, HIGH_PRESSURE_EPOCHS, KT_U32, MCC_DEFAULT_HIGH_PRESSURE_EPOCHS, 1, COUNT_MAX,
	    0),
	NUM(K_LOW_PRESSURE_EPOCHS, low_pressure_epochs, LOW_PRESSURE_EPOCHS, KT_U32, MCC_DEFAULT_LOW_PRESSURE_EPOCHS, 1, COUNT_MAX, 0),
	NUM(K_HARD_ERROR_THRESHOLD, hard_error_threshold, HARD_ERROR_THRESHOLD, KT_U32, MCC_DEFAULT_HARD_ERROR_THRESHOLD, 1, COUNT_MAX,
	    0),
	NUM(K_COOLDOWN_MS, cooldown_ms, COOLDOWN_MS, KT_U32, MCC_DEFAULT_COOLDOWN_MS, 1, MS_MAX, 0),
	NUM(K_COOLDOWN_MAX_MS, cooldown_max_ms, COOLDOWN_MAX_MS, KT_U32, MCC_DEFAULT_COOLDOWN_MAX_MS, 1, MS_MAX, 0),
	NUM(K_FLAP_WINDOW_MS, flap_window_ms, FLAP_WINDOW_MS, KT_U32, MCC_DEFAULT_FLAP_WINDOW_MS, 1, MS_MAX, 0),
	NUM(K_EPOCH_US, epoch_us, EPOCH_US, KT_U32, MCC_DEFAULT_EPOCH_US, 1, US_MAX, 0),
	NUM(K_MD_PERCENT, md_percent, MD_PERCENT, KT_U32, MCC_DEFAULT_MD_PERCENT, 1, 99, 0),
	NUM(K_FAST_RECOVERY_EPOCHS, fast_recovery_epochs, FAST_RECOVERY_EPOCHS, KT_U32, MCC_DEFAULT_FAST_RECOVERY_EPOCHS, 1, 64, 0),
	NUM(K_AI_BYTES, ai_bytes, AI_BYTES, KT_U64, MCC_DEFAULT_AI_BYTES, 1, BYTES_MAX, 0),
	NUM(K_PROBE_SUCCESSES, probe_successes, PROBE_SUCCESSES, KT_U32, MCC_DEFAULT_PROBE_SUCCESSES, 1, COUNT_MAX, 0),
	NUM(K_EVIDENCE_TASKS, evidence_tasks, EVIDENCE_TASKS, KT_U32, MCC_DEFAULT_EVIDENCE_TASKS, 1, TABLE_MAX, 0),
	NUM(K_RECORDER_ENTRIES, recorder_entries, RECORDER_ENTRIES, KT_U32, MCC_DEFAULT_RECORDER_ENTRIES, 1, TABLE_MAX,
	    KF_POW2),
	STR(K_TENT_CC_PLUGIN, tent_cc_plugin, TENT_CC_PLUGIN, SEC_ENGINE, KT_TENT),
	STR(K_QOS, qos, QOS, SEC_ENGINE, KT_ONOFF),
	STR(K_STAT, stat, STAT, SEC_ENGINE, KT_STAT),
	[K_STAT_INTERVAL_MS] = { "stat_interval_ms", ENV_PREFIX "STAT_INTERVAL_MS", SEC_ENGINE,
				 KT_STAT_MS, 0, 0, MCC_DEFAULT_STAT_INTERVAL_MS, 10, 3600000 },
	[K_BASE_RTT_US] = { "base_rtt_us", ENV_PREFIX "BASE_RTT_US", SEC_ENGINE, KT_RTT_US, 0, 0, 0,
			    1, 1000000 },
};
#undef NUM
#undef STR
/* clang-format on */

/* ------------------------------------------------------------- defaults */

const char *mcc__module_get_none(const struct mcc_config_v1 *cfg, const char *key)
{
	(void)cfg;
	(void)key;
	return NULL;
}

static void set_number(struct mcc_config_v1 *p, const struct key_spec *ks, uint64_t v)
{
	char *field = (char *)p + ks->off;

	if (ks->type == KT_U32) {
		uint32_t v32 = (uint32_t)v; /* range-checked: max <= UINT32_MAX */
		memcpy(field, &v32, sizeof(v32));
	} else {
		memcpy(field, &v, sizeof(v));
	}
}

void mcc_config_defaults(struct mcc_config *cfg)
{
	if (!cfg)
		return;
	memset(cfg, 0, sizeof(*cfg));
	cfg->struct_size = sizeof(*cfg);
	cfg->policy.struct_size = sizeof(cfg->policy);
	cfg->policy.mode = MCC_MODE_OFF;
	for (unsigned k = 0; k < K_COUNT_; k++)
		if (keys[k].type == KT_U32 || keys[k].type == KT_U64)
			set_number(&cfg->policy, &keys[k], keys[k].def);
	cfg->policy.module_get = mcc__module_get_none;
	cfg->policy.module_arg = NULL;
	/* module[] stays "": no explicit module, the mode picks one. */
	snprintf(cfg->module_dir, sizeof(cfg->module_dir), "%s", MCC_PKGLIBDIR);
	cfg->tent_cc_plugin_enabled = 0;
	cfg->qos_enabled = 0;
}

/* ------------------------------------------------------------- helpers */

int mcc__name_valid(const char *s)
{
	size_t n = 0;

	if (!s)
		return 0;
	for (; s[n]; n++) {
		char c = s[n];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
			return 0;
		if (n >= MCC_NAME_MAX)
			return 0;
	}
	return n > 0;
}

const char *mcc__secure_getenv(const char *name)
{
#ifdef HAVE_SECURE_GETENV
	return secure_getenv(name);
#else
	if (getuid() != geteuid() || getgid() != getegid())
		return NULL;
	return getenv(name);
#endif
}

/* Copy at most `max` characters of `s` for quoting in a message, with an
 * ellipsis when cut; line endings and control characters become '?'. */
static const char *snip(const char *s, char *buf, size_t len, size_t max)
{
	const char *rest;
	size_t n = 0;
	int cut;

	while (s[n] && n < max && n + 4 < len) {
		buf[n] = (unsigned char)s[n] < 0x20 ? '?' : s[n];
		n++;
	}
	rest = s + n;
	while (*rest && isspace((unsigned char)*rest))
		rest++;
	cut = *rest != '\0';
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		n--; /* trailing "\r\n" / blanks */
	if (cut && n + 4 <= len) {
		memcpy(buf + n, "...", 3);
		n += 3;
	}
	buf[n] = '\0';
	return buf;
}

/* ------------------------------------------------------ parse context */

enum org_kind { ORG_DEFAULT = 0, ORG_FILE = 1, ORG_ENV = 2 };

struct origin {
	int kind; /* enum org_kind */
	int line; /* ORG_FILE */
};

enum line_kind { LINE_BLANK, LINE_COMMENT, LINE_CONT, LINE_SECTION, LINE_KEY };

struct load_ctx {
	const char *file; /* ini path for messages, or NULL */
	FILE *fp;
	int line;      /* physical line inih is working on */
	int cur;       /* enum line_kind of that line */
	int have_prev; /* inih's prev_name: a key was seen since the last header */
	int stop;      /* an error was recorded: read no further */
	int nkeys;     /* `key = value` lines seen */
	int rc;
	struct mcc_config *cfg;
	struct mcc_modkeys *mk;
	struct origin org[K_COUNT_];
	char tent_name[64];
	char *err;
	size_t errlen;
};

#if defined(__GNUC__)
__attribute__((format(printf, 6, 7)))
#endif
static void
report(struct load_ctx *lc, int kind, int line, const char *label, int rc, const char *fmt, ...)
{
	char reason[MCC_MSG_MAX];
	va_list ap;

	if (lc->stop)
		return; /* the first error is the one reported */
	lc->stop = 1;
	lc->rc = rc;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	if (!lc->err || lc->errlen == 0)
		return;
	if (kind == ORG_FILE && line > 0)
		snprintf(lc->err, lc->errlen, "%s:%d: %s: %s", lc->file, line, label, reason);
	else if (kind == ORG_FILE)
		snprintf(lc->err, lc->errlen, "%s: %s", lc->file, reason);
	else
		snprintf(lc->err, lc->errlen, "%s: %s", label, reason);
}

/* Report an error against key `k` at the place it was last set. */
#define report_key(lc, k, fmt, ...)                                                                \
	report((lc), (lc)->org[k].kind, (lc)->org[k].line,                                         \
	       (lc)->org[k].kind == ORG_ENV ? keys[k].env : keys[k].name, -EINVAL, fmt,            \
	       __VA_ARGS__)

/* ------------------------------------------------------ value parsing */

/*
 * Strict unsigned decimal: [0-9]+ and nothing else, no overflow, positive,
 * within [min, max] (and a power of two with KF_POW2). On error writes the
 * reason and returns -EINVAL.
 */
static int parse_number(const struct key_spec *ks, const char *s, uint64_t *out, char *reason,
                        size_t rlen)
{
	char q[48];
	char *end = NULL;
	unsigned long long v;

	if (!*s) {
		snprintf(reason, rlen, "empty value: expected a positive decimal integer");
		return -EINVAL;
	}
	if (*s == '-') {
		snprintf(reason, rlen, "'%s' is negative: the value must be positive",
		         snip(s, q, sizeof(q), 40));
		return -EINVAL;
	}
	if (!isdigit((unsigned char)*s)) {
		snprintf(reason, rlen, "'%s' is not a positive decimal integer (digits only)",
		         snip(s, q, sizeof(q), 40));
		return -EINVAL;
	}
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE) {
		snprintf(reason, rlen, "'%s' overflows 64 bits (range %llu..%llu)",
		         snip(s, q, sizeof(q), 40), (unsigned long long)ks->min,
		         (unsigned long long)ks->max);
		return -EINVAL;
	}
	if (errno != 0 || end == s || *end != '\0') {
		snprintf(reason, rlen,
		         "'%s' has trailing characters after the number (digits only, no unit)",
		         snip(s, q, sizeof(q), 40));
		return -EINVAL;
	}
	if (v == 0) {
		snprintf(reason, rlen, "0 is not allowed: the value must be positive");
		return -EINVAL;
	}
	if (v < ks->min || v > ks->max) {
		snprintf(reason, rlen, "%llu is out of range %llu..%llu", v,
		         (unsigned long long)ks->min, (unsigned long long)ks->max);
		return -EINVAL;
	}
	if ((ks->flags & KF_POW2) && (v & (v - 1)) != 0) {
		snprintf(reason, rlen, "%llu is not a power of two", v);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int plugin_name_valid(const char *s)
{
	size_t n = 0;

	for (; s[n]; n++) {
		unsigned char c = (unsigned char)s[n];
		if (!(isalnum(c) || c == '_' || c == '-' || c == '.') || n >= 63)
			return 0;
	}
	return n > 0;
}

/* [engine] stat (off | on | an absolute directory) and stat_interval_ms,
 * kept in lc->mk->stat (mcc_internal.h). */
static int set_stat_key(struct load_ctx *lc, const struct key_spec *ks, const char *v,
                        char *reason, size_t rlen)
{
	struct mcc_stat_keys *st = &lc->mk->stat;
	char q[48];
	uint64_t num;

	if (ks->type == KT_STAT_MS) {
		if (parse_number(ks, v, &num, reason, rlen) < 0)
			return -EINVAL;
		st->interval_ms = (uint32_t)num; /* range-checked */
		return 0;
	}
	if (strcmp(v, "off") == 0 || strcmp(v, "on") == 0) {
		snprintf(st->stat, sizeof(st->stat), "%s", v);
		return 0;
	}
	/* a directory: room left for "/mcc.<pid>.<engine>" within PATH_MAX is
	 * not a concern at this length */
	if (v[0] == '/' && strlen(v) <= MCC_STAT_VALUE_MAX - 40) {
		for (const char *c = v; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				goto bad;
		snprintf(st->stat, sizeof(st->stat), "%s", v);
		return 0;
	}
bad:
	snprintf(reason, rlen,
	         "invalid value '%s': expected off, on (publish to " MCC_STAT_DIR_DEFAULT
	         ") or an absolute directory path of at most %d characters",
	         snip(v, q, sizeof(q), 40), MCC_STAT_VALUE_MAX - 40);
	return -EINVAL;
}

/* Set key `k` from the text `v`; 0 or -EINVAL with `reason`. */
static int set_key(struct load_ctx *lc, unsigned k, const char *v, char *reason, size_t rlen)
{
	const struct key_spec *ks = &keys[k];
	struct mcc_config *cfg = lc->cfg;
	char q[48];
	uint64_t num;

	switch (ks->type) {
	case KT_U32:
	case KT_U64:
		if (parse_number(ks, v, &num, reason, rlen) < 0)
			return -EINVAL;
		set_number(&cfg->policy, ks, num);
		return 0;
	case KT_MODE:
		if (strcmp(v, "off") == 0)
			cfg->policy.mode = MCC_MODE_OFF;
		else if (strcmp(v, "observe") == 0)
			cfg->policy.mode = MCC_MODE_OBSERVE;
		else if (strcmp(v, "enforce") == 0)
			cfg->policy.mode = MCC_MODE_ENFORCE;
		else
			break;
		return 0;
	case KT_MODULE:
		if (strcmp(v, "none") == 0 || mcc__name_valid(v) ||
		    (v[0] == '/' && strlen(v) < sizeof(cfg->module))) {
			snprintf(cfg->module, sizeof(cfg->module), "%s", v);
			return 0;
		}
		snprintf(reason, rlen,
		         "'%s' is not a module: expected a short name ([a-z0-9_-], at most %d "
		         "characters), an absolute path (shorter than %zu), or none",
		         snip(v, q, sizeof(q), 40), MCC_NAME_MAX, sizeof(cfg->module));
		return -EINVAL;
	case KT_DIR:
		if (v[0] == '/' && strlen(v) < sizeof(cfg->module_dir)) {
			snprintf(cfg->module_dir, sizeof(cfg->module_dir), "%s", v);
			return 0;
		}
		snprintf(reason, rlen, "'%s' is not an absolute directory path shorter than %zu",
		         snip(v, q, sizeof(q), 40), sizeof(cfg->module_dir));
		return -EINVAL;
	case KT_TENT:
		if (strcmp(v, "none") == 0) {
			cfg->tent_cc_plugin_enabled = 0;
			lc->tent_name[0] = '\0';
			return 0;
		}
		if (plugin_name_valid(v)) {
			cfg->tent_cc_plugin_enabled = 1;
			snprintf(lc->tent_name, sizeof(lc->tent_name), "%s", v);
			return 0;
		}
		snprintf(reason, rlen,
		         "'%s' is not a plugin name: expected none or [A-Za-z0-9_.-], at most 63 "
		         "characters",
		         snip(v, q, sizeof(q), 40));
		return -EINVAL;
	case KT_ONOFF:
		if (strcmp(v, "on") == 0)
			cfg->qos_enabled = 1;
		else if (strcmp(v, "off") == 0)
			cfg->qos_enabled = 0;
		else
			break;
		return 0;
	case KT_STAT:
	case KT_STAT_MS:
		return set_stat_key(lc, ks, v, reason, rlen);
	case KT_RTT_US:
		if (parse_number(ks, v, &num, reason, rlen) < 0)
			return -EINVAL;
		lc->mk->base_rtt_us = (uint32_t)num; /* range-checked */
		return 0;
	default:
		break;
	}
	snprintf(reason, rlen, "invalid value '%s': expected %s", snip(v, q, sizeof(q), 40),
	         ks->type == KT_MODE ? "off, observe or enforce" : "on or off");
	return -EINVAL;
}

/* ---------------------------------------------------------- ini reader */

/* inih r55's lskip(). */
static const char *ini_lskip(const char *s)
{
	while (*s && isspace((unsigned char)*s))
		s++;
	return s;
}

/* inih r55's find_chars_or_comment() with its default inline comment
 * prefix ';' (a ';' preceded by whitespace starts a comment). */
static const char *ini_find(const char *s, const char *chars)
{
	int was_space = 0;

	while (*s && (!chars || !strchr(chars, *s)) && !(was_space && *s == ';')) {
		was_space = isspace((unsigned char)*s);
		s++;
	}
	return s;
}

static int section_id(const char *s)
{
	for (int i = 0; i < SEC_COUNT_; i++)
		if (strcmp(s, sec_names[i]) == 0)
			return i;
	return -1;
}

/* A [module.<name>] header: remember where the section starts, so a
 * section no module answers to is reported at its line. */
static void module_section(struct load_ctx *lc, const char *module, const char *label)
{
	struct mcc_modkeys *mk = lc->mk;

	for (unsigned i = 0; i < mk->nsec; i++)
		if (strcmp(mk->sec[i].module, module) == 0)
			return; /* a repeated section: its first header is its place */
	if (mk->nsec >= MCC_MODSECS_MAX) {
		report(lc, ORG_FILE, lc->line, label, -EINVAL,
		       "too many [module.*] sections (at most %d)", MCC_MODSECS_MAX);
		return;
	}
	/* mcc__name_valid(): at most MCC_NAME_MAX characters */
	snprintf(mk->sec[mk->nsec].module, sizeof(mk->sec[mk->nsec].module), "%.*s", MCC_NAME_MAX,
	         module);
	mk->sec[mk->nsec].line = lc->line;
	mk->nsec++;
}

/*
 * Classify a physical line exactly as inih r55 will (its default options:
 * BOM allowed, ';'/'#' comments, inline ';' comments, multi-line values), so
 * the errors inih reports only as a line number get a message, and section
 * headers are checked even when no key follows them.
 */
static void classify_line(struct load_ctx *lc, const char *buf)
{
	const char *start = buf, *p, *end;
	char q[48], name[64];
	size_t n;

	if (lc->line == 1 && (unsigned char)buf[0] == 0xEF && (unsigned char)buf[1] == 0xBB &&
	    (unsigned char)buf[2] == 0xBF)
		start += 3;
	p = ini_lskip(start);
	if (!*p) {
		lc->cur = LINE_BLANK;
	} else if (*p == ';' || *p == '#') {
		lc->cur = LINE_COMMENT;
	} else if (lc->have_prev && p > buf) {
		lc->cur = LINE_CONT; /* inih: continuation of the previous value */
	} else if (*p == '[') {
		end = ini_find(p + 1, "]");
		if (*end != ']') {
			report(lc, ORG_FILE, lc->line, snip(p, q, sizeof(q), 40), -EINVAL,
			       "section header without a closing ']'");
			return;
		}
		n = (size_t)(end - (p + 1));
		snprintf(name, sizeof(name), "%.*s", (int)(n < sizeof(name) ? n : sizeof(name) - 1),
		         p + 1);
		lc->cur = LINE_SECTION;
		lc->have_prev = 0;
		if (n >= sizeof(name) - 1) {
			report(lc, ORG_FILE, lc->line, snip(p, q, sizeof(q), 40), -EINVAL,
			       "unknown section (expected [policy], [controller], [engine] or "
			       "[module.<name>])");
		} else if (strncmp(name, "module.", 7) == 0) {
			if (!mcc__name_valid(name + 7))
				report(lc, ORG_FILE, lc->line, snip(p, q, sizeof(q), 40), -EINVAL,
				       "invalid module section: the name must match [a-z0-9_-], at "
				       "most %d characters",
				       MCC_NAME_MAX);
			else
				module_section(lc, name + 7, snip(p, q, sizeof(q), 40));
		} else if (section_id(name) < 0) {
			report(lc, ORG_FILE, lc->line, snip(p, q, sizeof(q), 40), -EINVAL,
			       "unknown section (expected [policy], [controller], [engine] or "
			       "[module.<name>])");
		}
	} else {
		end = ini_find(p, "=:");
		if (*end != '=' && *end != ':') {
			report(lc, ORG_FILE, lc->line, snip(p, q, sizeof(q), 40), -EINVAL,
			       "expected 'key = value', a [section] header or a comment");
			return;
		}
		lc->cur = LINE_KEY;
		lc->have_prev = 1;
		lc->nkeys++;
	}
}

/*
 * fgets-style reader for ini_parse_stream(): reads one physical line (so
 * inih's line numbers are ours), rejects what inih would silently mangle -
 * a line longer than the buffer (inih splits it into two lines) and a NUL
 * byte (C strings end there, hiding the rest of the line) - classifies the
 * line, and ends the parse at the first error by reporting end of file.
 */
static char *lc_reader(char *buf, int size, void *stream)
{
	struct load_ctx *lc = stream;
	size_t n = 0, content, limit;
	int c = EOF, nul = 0;

	if (lc->stop || size < 4)
		return NULL;
	limit = (size_t)size - 3; /* room for "\r\n" and the NUL (inih's rule) */
	while ((c = getc(lc->fp)) != EOF) {
		if (c == '\0')
			nul = 1;
		buf[n++] = (char)c;
		if (c == '\n' || n == (size_t)size - 1)
			break;
	}
	if (n == 0)
		return NULL; /* end of file (or a read error, see ferror) */
	buf[n] = '\0';
	lc->line++;
	if (nul) {
		report(lc, ORG_FILE, lc->line, "(line)", -EINVAL, "contains a NUL byte");
		return NULL;
	}
	content = n;
	while (content > 0 && (buf[content - 1] == '\n' || buf[content - 1] == '\r'))
		content--;
	if (content > limit ||
	    (buf[n - 1] != '\n' && c != EOF && (c = getc(lc->fp)) != EOF && c != '\n')) {
		report(lc, ORG_FILE, lc->line, "(line)", -EINVAL,
		       "line too long (at most %zu characters)", limit);
		return NULL;
	}
	classify_line(lc, buf);
	return lc->stop ? NULL : buf;
}

static const struct mcc_modkey *modkey_find(const struct mcc_modkeys *mk, const char *module,
                                            const char *key)
{
	for (unsigned i = 0; i < mk->count; i++)
		if (strcmp(mk->e[i].module, module) == 0 && strcmp(mk->e[i].key, key) == 0)
			return &mk->e[i];
	return NULL;
}

const char *mcc__modkeys_get(const struct mcc_modkeys *mk, const char *module, const char *key)
{
	const struct mcc_modkey *e;

	if (!mk || !module || !key)
		return NULL;
	e = modkey_find(mk, module, key);
	return e ? e->value : NULL;
}

static int module_key(struct load_ctx *lc, const char *module, const char *name, const char *value)
{
	const struct mcc_modkey *prev;
	struct mcc_modkey *e;
	char q[48];

	if (strlen(name) >= MCC_MODKEY_KEY_MAX) {
		report(lc, ORG_FILE, lc->line, snip(name, q, sizeof(q), 40), -EINVAL,
		       "module key longer than %d characters", MCC_MODKEY_KEY_MAX - 1);
		return 0;
	}
	if (strlen(value) >= MCC_MODKEY_VAL_MAX) {
		report(lc, ORG_FILE, lc->line, name, -EINVAL, "value longer than %d characters",
		       MCC_MODKEY_VAL_MAX - 1);
		return 0;
	}
	prev = modkey_find(lc->mk, module, name);
	if (prev) {
		report(lc, ORG_FILE, lc->line, name, -EINVAL,
		       "duplicate key in [module.%s] (first set on line %d)", module, prev->line);
		return 0;
	}
	if (lc->mk->count >= MCC_MODKEYS_MAX) {
		report(lc, ORG_FILE, lc->line, name, -EINVAL,
		       "too many keys in [module.*] sections (at most %d)", MCC_MODKEYS_MAX);
		return 0;
	}
	e = &lc->mk->e[lc->mk->count++];
	snprintf(e->module, sizeof(e->module), "%s", module);
	snprintf(e->key, sizeof(e->key), "%s", name);
	snprintf(e->value, sizeof(e->value), "%s", value);
	e->line = lc->line;
	return 1;
}

/* inih handler: one `key = value` (section, name, value valid during the
 * call only). Returns 1 to continue, 0 on error (ours is already recorded). */
static int lc_handler(void *user, const char *section, const char *name, const char *value)
{
	struct load_ctx *lc = user;
	char reason[MCC_MSG_MAX / 2], q[48];
	int sec;

	if (lc->stop)
		return 0;
	if (lc->cur == LINE_CONT) {
		report(lc, ORG_FILE, lc->line, name, -EINVAL,
		       "indented line continues the value of '%s': multi-line values are not "
		       "supported (remove the indentation)",
		       name);
		return 0;
	}
	if (!*name) {
		report(lc, ORG_FILE, lc->line, "(empty)", -EINVAL, "key name missing before '='");
		return 0;
	}
	if (strncmp(section, "module.", 7) == 0)
		return module_key(lc, section + 7, name, value);
	sec = section_id(section);
	if (sec < 0) {
		report(lc, ORG_FILE, lc->line, snip(name, q, sizeof(q), 40), -EINVAL, "%s",
		       *section ? "key in an unknown section"
		                : "key outside of any section (put it under [policy], [controller] "
		                  "or [engine])");
		return 0;
	}
	for (unsigned k = 0; k < K_COUNT_; k++) {
		if (strcmp(keys[k].name, name) != 0)
			continue;
		if ((int)keys[k].section != sec) {
			report(lc, ORG_FILE, lc->line, name, -EINVAL,
			       "unknown key in [%s] (it belongs in [%s])", section,
			       sec_names[keys[k].section]);
			return 0;
		}
		if (lc->org[k].kind == ORG_FILE) {
			report(lc, ORG_FILE, lc->line, name, -EINVAL,
			       "duplicate key (first set on line %d)", lc->org[k].line);
			return 0;
		}
		if (set_key(lc, k, value, reason, sizeof(reason)) < 0) {
			report(lc, ORG_FILE, lc->line, name, -EINVAL, "%s", reason);
			return 0;
		}
		lc->org[k].kind = ORG_FILE;
		lc->org[k].line = lc->line;
		return 1;
	}
	report(lc, ORG_FILE, lc->line, snip(name, q, sizeof(q), 40), -EINVAL, "unknown key in [%s]",
	       section);
	return 0;
}

static void parse_file(struct load_ctx *lc, const char *path, int from_env)
{
	char ebuf[128];
	struct stat st;
	int ret, e, fd;

	lc->file = path;
	if (!*path) {
		report(lc, ORG_ENV, 0, from_env ? ENV_CONFIG : "ini_path", -EINVAL,
		       "empty configuration file path");
		return;
	}
	/* O_NONBLOCK: a FIFO (or a device) must not block the engine before
	 * the regular-file check rejects it. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		e = errno;
		report(lc, ORG_FILE, 0, path, -e, "cannot open: %s",
		       strerror_r(e, ebuf, sizeof(ebuf)));
		return;
	}
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		(void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	lc->fp = fdopen(fd, "r");
	if (!lc->fp) {
		e = errno;
		close(fd);
		report(lc, ORG_FILE, 0, path, -e, "cannot open: %s",
		       strerror_r(e, ebuf, sizeof(ebuf)));
		return;
	}
	if (fstat(fd, &st) != 0) {
		e = errno;
		report(lc, ORG_FILE, 0, path, -e, "cannot stat: %s",
		       strerror_r(e, ebuf, sizeof(ebuf)));
	} else if (S_ISDIR(st.st_mode)) {
		report(lc, ORG_FILE, 0, path, -EISDIR, "is a directory, not a configuration file");
	} else if (!S_ISREG(st.st_mode)) {
		report(lc, ORG_FILE, 0, path, -EINVAL, "not a regular file");
	} else if (st.st_mode & S_IWOTH) {
		report(lc, ORG_FILE, 0, path, -EPERM,
		       "writable by others: refusing a configuration anyone can change "
		       "(chmod o-w)");
	} else {
		ret = ini_parse_stream(lc_reader, lc, lc_handler, lc);
		if (!lc->stop && ferror(lc->fp)) {
			e = errno ? errno : EIO;
			report(lc, ORG_FILE, 0, path, -EIO, "read error: %s",
			       strerror_r(e, ebuf, sizeof(ebuf)));
		} else if (!lc->stop && ret > 0) {
			/* Every inih error we know of is caught above; keep a safety net. */
			report(lc, ORG_FILE, ret, "(line)", -EINVAL, "syntax error");
		} else if (!lc->stop && ret < 0) {
			report(lc, ORG_FILE, 0, path, ret == -2 ? -ENOMEM : -EIO,
			       "inih failed (%d)", ret);
		}
	}
	fclose(lc->fp);
	lc->fp = NULL;
}

/* ---------------------------------------------------------- environment */

static int env_is_path(unsigned k)
{
	return k == K_MODULE || k == K_MODULE_DIR || k == K_STAT;
}

static void parse_env(struct load_ctx *lc)
{
	char reason[MCC_MSG_MAX / 2], q[48];
	const char *level = getenv(ENV_LOG_LEVEL);

	/* Read by the default logger (loader.c), checked here with the rest. */
	if (level && mcc__log_level_parse(level) < 0) {
		report(lc, ORG_ENV, 0, ENV_LOG_LEVEL, -EINVAL,
		       "invalid value '%s': expected error, warn, info or debug",
		       snip(level, q, sizeof(q), 40));
		return;
	}

	for (unsigned k = 0; k < K_COUNT_ && !lc->stop; k++) {
		const char *v =
		        env_is_path(k) ? mcc__secure_getenv(keys[k].env) : getenv(keys[k].env);

		if (!v)
			continue;
		if (set_key(lc, k, v, reason, sizeof(reason)) < 0) {
			report(lc, ORG_ENV, 0, keys[k].env, -EINVAL, "%s", reason);
			return;
		}
		lc->org[k].kind = ORG_ENV;
		lc->org[k].line = 0;
	}
}

/* Edit distance of a[0..n) and b, capped: a misspelt variable is near one
 * known name (a letter dropped, doubled or swapped). */
static unsigned distance(const char *a, size_t n, const char *b)
{
	unsigned row[64], prev, tmp;
	size_t m = strlen(b);

	if (n >= 64 || m >= 64)
		return 99;
	for (size_t j = 0; j <= m; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= n; i++) {
		prev = row[0];
		row[0] = (unsigned)i;
		for (size_t j = 1; j <= m; j++) {
			unsigned best = prev + (a[i - 1] != b[j - 1]);

			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			tmp = row[j];
			row[j] = best;
			prev = tmp;
		}
	}
	return row[m];
}

/* Append one line to a warning buffer (lines separated by '\n'). */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void
warn_add(char *warn, size_t warnlen, const char *fmt, ...)
{
	size_t used;
	va_list ap;

	if (!warn || warnlen == 0)
		return;
	used = strnlen(warn, warnlen);
	if (used && used + 1 < warnlen)
		warn[used++] = '\n';
	if (used + 1 >= warnlen)
		return;
	va_start(ap, fmt);
	vsnprintf(warn + used, warnlen - used, fmt, ap);
	va_end(ap);
}

/* Unknown MC_ADAPTIVE_CC_* variables: most likely typos. A warning, not an
 * error: other components may own names in this prefix. One line per
 * variable, naming the known variable it is closest to. */
static void env_unknown(char *warn, size_t warnlen)
{
	/* the Mooncake adapter's periodic summary (INTEGRATION.md) is its own */
	static const char *const extra[] = { ENV_CONFIG, ENV_LOG_LEVEL, ENV_PREFIX "SUMMARY_MS" };
	const unsigned nextra = sizeof(extra) / sizeof(extra[0]);

	for (char **e = environ; e && *e; e++) {
		const char *eq = strchr(*e, '='), *near = NULL;
		size_t n = eq ? (size_t)(eq - *e) : strlen(*e);
		/* suggest a name 1 edit away, 2 for a suffix of 6 or more (a
		 * short one would be near too many) */
		unsigned best = n >= sizeof(ENV_PREFIX) - 1 + 6 ? 3 : 2;
		int known = 0;

		if (strncmp(*e, ENV_PREFIX, sizeof(ENV_PREFIX) - 1) != 0)
			continue;
		for (unsigned i = 0; i < K_COUNT_ + nextra && !known; i++) {
			const char *name = i < K_COUNT_ ? keys[i].env : extra[i - K_COUNT_];
			unsigned d;

			known = strlen(name) == n && strncmp(*e, name, n) == 0;
			d = known ? 0 : distance(*e, n, name);
			if (d < best) {
				best = d;
				near = name;
			}
		}
		if (known)
			continue;
		if (near)
			warn_add(warn, warnlen, "%.*s: unknown variable, ignored (did you mean %s?)",
			         (int)(n < 200 ? n : 200), *e, near);
		else
			warn_add(warn, warnlen,
			         "%.*s: unknown variable, ignored (known: %s, %s and %s<KEY> for "
			         "every key of [policy], [controller], [engine])",
			         (int)(n < 200 ? n : 200), *e, ENV_CONFIG, ENV_LOG_LEVEL, ENV_PREFIX);
	}
}

/* ----------------------------------------------------------- validation */

/* The setting of higher precedence: environment over file, a later line
 * over an earlier one. Returns a or b. */
static unsigned blame(const struct load_ctx *lc, unsigned a, unsigned b)
{
	const struct origin *oa = &lc->org[a], *ob = &lc->org[b];

	if (oa->kind != ob->kind)
		return oa->kind > ob->kind ? a : b;
	return oa->line >= ob->line ? a : b;
}

/* Two bounds out of order (lo > hi): the key of the two set last (blame)
 * is reported, against the other's value. */
static void report_order(struct load_ctx *lc, unsigned lo_k, unsigned long long lo,
                         const char *lo_name, unsigned hi_k, unsigned long long hi,
                         const char *hi_name)
{
	if (blame(lc, lo_k, hi_k) == lo_k)
		report_key(lc, lo_k, "%llu exceeds %s (%llu)", lo, hi_name, hi);
	else
		report_key(lc, hi_k, "%llu is below %s (%llu)", hi, lo_name, lo);
}

static void validate(struct load_ctx *lc)
{
	const struct mcc_config_v1 *p = &lc->cfg->policy;
	unsigned k;

	if (lc->stop)
		return;
	if (p->min_window_bytes > p->max_window_bytes) {
		report_order(lc, K_MIN_WINDOW_BYTES, p->min_window_bytes, "min_window_bytes",
		             K_MAX_WINDOW_BYTES, p->max_window_bytes, "max_window_bytes");
		return;
	}
	if (lc->org[K_PROBE_WINDOW_BYTES].kind != ORG_DEFAULT &&
	    p->probe_window_bytes > p->min_window_bytes) {
		report_order(lc, K_PROBE_WINDOW_BYTES, p->probe_window_bytes,
		             "the configured probe_window_bytes", K_MIN_WINDOW_BYTES, p->min_window_bytes,
		             "min_window_bytes");
		return;
	}
	if (p->cooldown_ms > p->cooldown_max_ms) {
		report_order(lc, K_COOLDOWN_MS, p->cooldown_ms, "cooldown_ms", K_COOLDOWN_MAX_MS,
		             p->cooldown_max_ms, "cooldown_max_ms");
		return;
	}
	if (lc->cfg->tent_cc_plugin_enabled && p->mode != MCC_MODE_OFF) {
		k = blame(lc, K_TENT_CC_PLUGIN, K_MODE);
		if (k == K_TENT_CC_PLUGIN)
			report_key(lc, k,
			           "'%s' would be a second congestion controller beside mode = %s "
			           "(single policy authority: set tent_cc_plugin = none or mode = "
			           "off)",
			           lc->tent_name, mcc__mode_name(p->mode));
		else
			report_key(
			        lc, k,
			        "%s would run a second congestion controller beside [engine] "
			        "tent_cc_plugin = %s (single policy authority: set mode = off or "
			        "tent_cc_plugin = none)",
			        mcc__mode_name(p->mode), lc->tent_name);
		return;
	}
}

/* ---------------------------------------------------------- provenance */

_Static_assert(K_COUNT_ <= MCC_CONFIG_KEYS_MAX, "raise MCC_CONFIG_KEYS_MAX (mcc_loader.h)");

/* The effective value of key `k`, spelt as in the ini file ("" = unset). */
static void format_value(const struct load_ctx *lc, unsigned k, char *buf, size_t len)
{
	const struct key_spec *ks = &keys[k];
	const struct mcc_config *cfg = lc->cfg;
	const char *field = (const char *)&cfg->policy + ks->off;
	uint64_t v = 0;
	uint32_t v32;

	switch (ks->type) {
	case KT_U32:
	case KT_U64:
		if (ks->type == KT_U32) {
			memcpy(&v32, field, sizeof(v32));
			v = v32;
		} else {
			memcpy(&v, field, sizeof(v));
		}
		if (v == 0 && (ks->flags & KF_UNSET_ZERO))
			snprintf(buf, len, "%s", "");
		else
			snprintf(buf, len, "%llu", (unsigned long long)v);
		return;
	case KT_MODE:
		snprintf(buf, len, "%s", mcc__mode_name(cfg->policy.mode));
		return;
	case KT_MODULE:
		snprintf(buf, len, "%s", cfg->module);
		return;
	case KT_DIR:
		snprintf(buf, len, "%s", cfg->module_dir);
		return;
	case KT_TENT:
		snprintf(buf, len, "%s", cfg->tent_cc_plugin_enabled ? lc->tent_name : "none");
		return;
	case KT_ONOFF:
		snprintf(buf, len, "%s", cfg->qos_enabled ? "on" : "off");
		return;
	case KT_STAT:
		snprintf(buf, len, "%s", lc->mk->stat.stat[0] ? lc->mk->stat.stat : "off");
		return;
	case KT_STAT_MS:
		snprintf(buf, len, "%u", (unsigned)lc->mk->stat.interval_ms);
		return;
	case KT_RTT_US: /* 0: unset (unknown) */
		if (lc->mk->base_rtt_us)
			snprintf(buf, len, "%u", (unsigned)lc->mk->base_rtt_us);
		else
			snprintf(buf, len, "%s", "");
		return;
	default:
		snprintf(buf, len, "%s", "");
		return;
	}
}

/* Fill `ex` from a successful load: one origin per key, in table order. */
static void explain_fill(const struct load_ctx *lc, struct mcc_config_provenance *ex)
{
	static const int src[] = { [ORG_DEFAULT] = MCC_CONFIG_SRC_DEFAULT,
		                   [ORG_FILE] = MCC_CONFIG_SRC_FILE,
		                   [ORG_ENV] = MCC_CONFIG_SRC_ENV };

	for (unsigned k = 0; k < K_COUNT_; k++) {
		struct mcc_config_origin *o = &ex->origin[k];

		o->section = sec_names[keys[k].section];
		o->key = keys[k].name;
		o->env = keys[k].env;
		o->source = src[lc->org[k].kind];
		o->line = lc->org[k].kind == ORG_FILE ? lc->org[k].line : 0;
		format_value(lc, k, o->value, sizeof(o->value));
	}
	ex->count = K_COUNT_;
}

/* ---------------------------------------------------------------- load */

/* mcc__config_load() that also fills `ex` (may be NULL) on success. */
static int config_load(const char *ini_path, int ignore_env, struct mcc_config *cfg,
                       struct mcc_modkeys *mk, char *err, size_t errlen, char *warn,
                       size_t warnlen, struct mcc_config_provenance *ex)
{
	struct load_ctx lc;
	int from_env = 0;

	if (err && errlen)
		err[0] = '\0';
	if (warn && warnlen)
		warn[0] = '\0';
	if (!cfg || !mk) {
		if (err && errlen)
			snprintf(err, errlen, "mcc_config_load: NULL argument");
		return -EINVAL;
	}
	mcc_config_defaults(cfg);
	memset(mk, 0, sizeof(*mk));
	snprintf(mk->stat.stat, sizeof(mk->stat.stat), "off");
	mk->stat.interval_ms = MCC_DEFAULT_STAT_INTERVAL_MS;
	memset(&lc, 0, sizeof(lc));
	lc.cfg = cfg;
	lc.mk = mk;
	lc.err = err;
	lc.errlen = errlen;

	if (!ini_path && !ignore_env) {
		/* The engine named no file: $MC_ADAPTIVE_CC_CONFIG ("none": no
		 * file), else the installed one when it exists. */
		struct stat st;

		ini_path = mcc__secure_getenv(ENV_CONFIG);
		from_env = ini_path != NULL;
		if (ini_path && strcmp(ini_path, CONFIG_NONE) == 0) {
			ini_path = NULL;
		} else if (!ini_path && (stat(DEFAULT_INI, &st) == 0 || errno != ENOENT)) {
			ini_path = DEFAULT_INI;
			from_env = 2;
		}
	}
	if (ex) {
		snprintf(ex->file, sizeof(ex->file), "%s", ini_path ? ini_path : "");
		ex->file_from_env = ini_path ? from_env : 0;
	}
	if (ini_path) {
		snprintf(mk->file, sizeof(mk->file), "%s", ini_path);
		parse_file(&lc, ini_path, from_env == 1);
		if (!lc.stop && lc.nkeys == 0)
			warn_add(warn, warnlen,
			         "%s: no setting in the file (empty: every value is the default or "
			         "from the environment)",
			         ini_path);
	}
	if (!ignore_env && !lc.stop) {
		parse_env(&lc);
		env_unknown(warn, warnlen);
	}
	validate(&lc);
	if (lc.stop) {
		/* Never a partially defaulted configuration: all or nothing. */
		mcc_config_defaults(cfg);
		memset(mk, 0, sizeof(*mk));
		return lc.rc ? lc.rc : -EINVAL;
	}
	if (ex)
		explain_fill(&lc, ex);
	return 0;
}

int mcc__config_load(const char *ini_path, int ignore_env, struct mcc_config *cfg,
                     struct mcc_modkeys *mk, char *err, size_t errlen, char *warn, size_t warnlen)
{
	return config_load(ini_path, ignore_env, cfg, mk, err, errlen, warn, warnlen, NULL);
}

/* config_load for a public call (`who` names it in an out-of-memory
 * error): the module keys, which it does not return, on the heap; with
 * `ex`, its warning and provenance. */
static int load_public(const char *who, const char *ini_path, int ignore_env,
                       struct mcc_config *cfg, char *errbuf, size_t errlen,
                       struct mcc_config_provenance *ex)
{
	struct mcc_modkeys *mk = calloc(1, sizeof(*mk));
	int rc;

	if (!mk) {
		mcc_config_defaults(cfg);
		if (errbuf && errlen)
			snprintf(errbuf, errlen, "%s: out of memory", who);
		return -ENOMEM;
	}
	rc = config_load(ini_path, ignore_env, cfg, mk, errbuf, errlen, ex ? ex->warning : NULL,
	                 ex ? sizeof(ex->warning) : 0, ex);
	free(mk);
	return rc;
}

int mcc_config_explain(const char *ini_path, int ignore_env, struct mcc_config *cfg,
                       struct mcc_config_provenance *ex, char *errbuf, size_t errlen)
{
	if (errbuf && errlen)
		errbuf[0] = '\0';
	if (!cfg || !ex || ex->struct_size < sizeof(*ex)) {
		if (errbuf && errlen)
			snprintf(errbuf, errlen,
			         "mcc_config_explain: cfg or ex is NULL, or ex->struct_size is not "
			         "sizeof(struct mcc_config_provenance)");
		return -EINVAL;
	}
	memset((char *)ex + sizeof(ex->struct_size), 0, sizeof(*ex) - sizeof(ex->struct_size));
	return load_public("mcc_config_explain", ini_path, ignore_env, cfg, errbuf, errlen, ex);
}

int mcc_config_load(const char *ini_path, int ignore_env, struct mcc_config *cfg, char *errbuf,
                    size_t errlen)
{
	if (errbuf && errlen)
		errbuf[0] = '\0';
	if (!cfg) {
		if (errbuf && errlen)
			snprintf(errbuf, errlen, "mcc_config_load: cfg is NULL");
		return -EINVAL;
	}
	return load_public("mcc_config_load", ini_path, ignore_env, cfg, errbuf, errlen, NULL);
}

int mcc_config_module_path(const struct mcc_config *cfg, char *path, size_t len)
{
	static const char *const by_mode[] = { "null", "observe", "aimd" };
	const char *m;
	int n;

	if (path && len)
		path[0] = '\0';
	if (!cfg || !path || len == 0)
		return -EINVAL;
	m = cfg->module;
	if (strcmp(m, "none") == 0)
		return -ENOENT; /* the built-in null module: no file */
	if (!*m) {
		if (cfg->policy.mode > MCC_MODE_ENFORCE)
			return -EINVAL;
		m = by_mode[cfg->policy.mode];
	}
	if (m[0] == '/')
		n = snprintf(path, len, "%s", m);
	else if (mcc__name_valid(m) && cfg->module_dir[0] == '/')
		n = snprintf(path, len, "%s/mcc-policy-%s.so", cfg->module_dir, m);
	else
		return -EINVAL;
	if (n < 0 || (size_t)n >= len) {
		path[0] = '\0';
		return -ENAMETOOLONG;
	}
	return 0;
}
