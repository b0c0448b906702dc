/* SPDX-License-Identifier: MIT */
/*
 * fuzz_config.c - fuzzer of libmcc's configuration parser (ini file +
 * MC_ADAPTIVE_CC_* environment), through mcc_config_load().
 *
 * Input layout: byte 0 = flags, then the ini text up to the first
 * "\n%%ENV\n" marker (or the end), then environment records: one key
 * selector byte followed by the value up to '\n'.
 *   flags bit 0: read the environment (ignore_env = 0)
 *   flags bit 1: pass the ini path in MC_ADAPTIVE_CC_CONFIG instead of the
 *                ini_path argument (the path is always our private file)
 *   flags bit 2: no ini file at all (defaults + environment)
 *   flags bits 4-5: error buffer size (256, 1, 8, 40) to exercise truncation
 * The ini file lives in a private 0700 directory (mode 0600), so permission
 * checks of the loader never reject it.
 *
 * Invariants checked:
 *   - total: returns 0 or a negative errno, never crashes, never overflows
 *     the error buffer (exact-size heap buffer under ASan);
 *   - an error is explained: the message is NUL-terminated and non-empty;
 *   - deterministic: the same input loads twice to the same result;
 *   - a success is a valid configuration: mode in range, numbers positive,
 *     min <= max window, explicit probe window <= min window, strings
 *     terminated, tent_cc_plugin only with mode off, recorder_entries a
 *     power of two, defaults < ini < environment precedence for the one key
 *     the harness can tell (a MIN_WINDOW_BYTES that parsed).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "mcc_loader.h"

static char fz_dir[64];
static char fz_ini[128];
static int fz_fd = -1;

/* Environment keys the fuzzer may set (after MC_ADAPTIVE_CC_). CONFIG is
 * handled by flags bit 1 (an arbitrary path could name a FIFO or a device). */
static const char *const fz_env_keys[] = {
	"MODE",                 "MODULE",              "MODULE_DIR",
	"MIN_WINDOW_BYTES",     "MAX_WINDOW_BYTES",    "TARGET_DRAIN_US",
	"HIGH_PRESSURE_EPOCHS", "LOW_PRESSURE_EPOCHS", "HARD_ERROR_THRESHOLD",
	"COOLDOWN_MS",          "PROBE_WINDOW_BYTES",  "EPOCH_US",
	"COOLDOWN_MAX_MS",      "FLAP_WINDOW_MS",      "MD_PERCENT",
	"FAST_RECOVERY_EPOCHS", "AI_BYTES",            "PROBE_SUCCESSES",
	"EVIDENCE_TASKS",       "RECORDER_ENTRIES",    "BOGUS_KEY",
	"min_window_bytes",
};
#define FZ_NENV (sizeof(fz_env_keys) / sizeof(fz_env_keys[0]))

static void fz_cleanup(void)
{
	if (fz_fd >= 0)
		close(fz_fd);
	unlink(fz_ini);
	rmdir(fz_dir);
}

static void fz_clear_env(void)
{
	char name[64];

	for (size_t i = 0; i < FZ_NENV; i++) {
		snprintf(name, sizeof(name), "MC_ADAPTIVE_CC_%s", fz_env_keys[i]);
		unsetenv(name);
	}
	setenv("MC_ADAPTIVE_CC_CONFIG", "none", 1); /* not the machine's own file */
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(fz_dir, sizeof(fz_dir), "/tmp/mcc-fuzz-config.XXXXXX");
	if (!mkdtemp(fz_dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(fz_ini, sizeof(fz_ini), "%s/mcc.ini", fz_dir);
	fz_fd = open(fz_ini, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fz_fd < 0) {
		perror(fz_ini);
		return 1;
	}
	atexit(fz_cleanup);
	fz_clear_env();
	return 0;
}

static int fz_is_pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

static void fz_check_valid(const struct mcc_config *c)
{
	const struct mcc_config_v1 *p = &c->policy;

	MCC_FUZZ_CHECK(p->mode <= MCC_MODE_ENFORCE, "mode %u", p->mode);
	MCC_FUZZ_CHECK(p->min_window_bytes > 0, "min_window_bytes 0");
	MCC_FUZZ_CHECK(p->min_window_bytes <= p->max_window_bytes, "min %llu > max %llu",
	               (unsigned long long)p->min_window_bytes,
	               (unsigned long long)p->max_window_bytes);
	MCC_FUZZ_CHECK(p->probe_window_bytes == 0 || p->probe_window_bytes <= p->min_window_bytes,
	               "probe window %llu > min %llu", (unsigned long long)p->probe_window_bytes,
	               (unsigned long long)p->min_window_bytes);
	MCC_FUZZ_CHECK(p->target_drain_us > 0 && p->high_pressure_epochs > 0 &&
	                   p->low_pressure_epochs > 0 && p->hard_error_threshold > 0 &&
	                   p->cooldown_ms > 0 && p->cooldown_max_ms > 0 && p->flap_window_ms > 0 &&
	                   p->epoch_us > 0 && p->md_percent > 0 && p->fast_recovery_epochs > 0 &&
	                   p->ai_bytes > 0 && p->probe_successes > 0 && p->evidence_tasks > 0 &&
	                   p->recorder_entries > 0,
	               "a numeric parameter is 0 after a successful load");
	MCC_FUZZ_CHECK(p->md_percent <= 100, "md_percent %u", p->md_percent);
	MCC_FUZZ_CHECK(fz_is_pow2(p->recorder_entries), "recorder_entries %u not a power of two",
	               p->recorder_entries);
	MCC_FUZZ_CHECK(memchr(c->module, 0, sizeof(c->module)) != NULL, "module unterminated");
	MCC_FUZZ_CHECK(memchr(c->module_dir, 0, sizeof(c->module_dir)) != NULL,
	               "module_dir unterminated");
	MCC_FUZZ_CHECK(!c->tent_cc_plugin_enabled || p->mode == MCC_MODE_OFF,
	               "tent_cc_plugin enabled together with mode %u (single policy authority)",
	               p->mode);
	if (p->module_get) {
		static const char *const keys[] = { "", "x", "min_window_bytes", "a.b" };
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			const char *v = p->module_get(p, keys[i]);
			if (v)
				(void)strlen(v); /* terminated, readable */
		}
	}
}

struct fz_result {
	int rc;
	char err[256];
	struct mcc_config cfg;
};

static void fz_load(const char *ini, int ignore_env, size_t errlen, struct fz_result *res)
{
	char *errbuf = malloc(errlen); /* exact size: ASan sees any overflow */

	MCC_FUZZ_CHECK(errbuf != NULL, "malloc");
	memset(errbuf, 0x7f, errlen);
	memset(&res->cfg, 0, sizeof(res->cfg));
	res->cfg.struct_size = sizeof(res->cfg);
	res->rc = mcc_config_load(ini, ignore_env, &res->cfg, errbuf, errlen);
	MCC_FUZZ_CHECK(res->rc <= 0 && res->rc > -4096, "mcc_config_load = %d", res->rc);
	MCC_FUZZ_CHECK(memchr(errbuf, 0, errlen) != NULL, "error buffer not NUL-terminated");
	if (res->rc < 0 && errlen > 1)
		MCC_FUZZ_CHECK(errbuf[0] != 0, "error %d without a message", res->rc);
	snprintf(res->err, sizeof(res->err), "%s", errbuf);
	free(errbuf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t errlens[] = { 256, 1, 8, 40 };
	static const char marker[] = "\n%%ENV\n";
	static struct fz_result a, b;
	const uint8_t *ini, *env, *end = data + size;
	size_t ini_len, errlen;
	uint8_t flags;
	const char *ini_arg;
	int ignore_env;
	char name[64];
	int min_env_set = 0;

	if (size < 1)
		return 0;
	flags = data[0];
	ini = data + 1;
	env = memmem(ini, size - 1, marker, sizeof(marker) - 1);
	ini_len = env ? (size_t)(env - ini) : size - 1;
	env = env ? env + sizeof(marker) - 1 : end;
	ignore_env = !(flags & 1);
	errlen = errlens[(flags >> 4) & 3];

	/* The ini file. */
	MCC_FUZZ_CHECK(ftruncate(fz_fd, 0) == 0, "ftruncate");
	MCC_FUZZ_CHECK(pwrite(fz_fd, ini, ini_len, 0) == (ssize_t)ini_len, "pwrite");
	ini_arg = (flags & 4) ? NULL : fz_ini;
	if (ini_arg && (flags & 2)) {
		setenv("MC_ADAPTIVE_CC_CONFIG", fz_ini, 1);
		ini_arg = NULL;
		ignore_env = 0;
	}

	/* The environment records. */
	while (env < end) {
		uint8_t sel = *env++;
		const uint8_t *nl = memchr(env, '\n', (size_t)(end - env));
		size_t vlen = nl ? (size_t)(nl - env) : (size_t)(end - env);
		char *val = malloc(vlen + 1);

		MCC_FUZZ_CHECK(val != NULL, "malloc");
		memcpy(val, env, vlen);
		val[vlen] = 0; /* an embedded NUL truncates, as in a real environment */
		snprintf(name, sizeof(name), "MC_ADAPTIVE_CC_%s", fz_env_keys[sel % FZ_NENV]);
		setenv(name, val, 1);
		if (sel % FZ_NENV == 3)
			min_env_set = 1;
		free(val);
		env += vlen + (nl ? 1 : 0);
	}

	fz_load(ini_arg, ignore_env, errlen, &a);
	if (a.rc == 0)
		fz_check_valid(&a.cfg);

	/* Deterministic: the same files and environment, the same outcome. */
	fz_load(ini_arg, ignore_env, errlen, &b);
	MCC_FUZZ_CHECK(a.rc == b.rc, "nondeterministic: %d then %d", a.rc, b.rc);
	MCC_FUZZ_CHECK(strcmp(a.err, b.err) == 0, "nondeterministic message: '%s' then '%s'", a.err,
	               b.err);
	if (a.rc == 0) {
		MCC_FUZZ_CHECK(memcmp(&a.cfg.policy.min_window_bytes, &b.cfg.policy.min_window_bytes,
		                      offsetof(struct mcc_config_v1, module_get) -
		                          offsetof(struct mcc_config_v1, min_window_bytes)) == 0,
		               "nondeterministic parameters");
		MCC_FUZZ_CHECK(strcmp(a.cfg.module, b.cfg.module) == 0 &&
		                   strcmp(a.cfg.module_dir, b.cfg.module_dir) == 0,
		               "nondeterministic module");
	}

	/* Precedence: a MIN_WINDOW_BYTES from the environment that parsed as a
	 * plain decimal wins over the file and the defaults. */
	if (a.rc == 0 && !ignore_env && min_env_set) {
		const char *v = getenv("MC_ADAPTIVE_CC_MIN_WINDOW_BYTES");
		char *endp;
		unsigned long long n;

		errno = 0;
		n = v ? strtoull(v, &endp, 10) : 0;
		if (v && errno == 0 && *v >= '1' && *v <= '9' && *endp == 0)
			MCC_FUZZ_CHECK(a.cfg.policy.min_window_bytes == n,
			               "environment MIN_WINDOW_BYTES=%s lost to %llu", v,
			               (unsigned long long)a.cfg.policy.min_window_bytes);
	}
	fz_clear_env();
	return 0;
}
