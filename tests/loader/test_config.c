/* SPDX-License-Identifier: MIT */
/*
 * test_config.c - the configuration authority (mcc_config_defaults,
 * mcc_config_load, mcc_config_module_path): every validation rule of the
 * ini file and the environment, good and bad, table-driven; precedence;
 * file errors; the shipped sample conf/mcc.ini.
 */
#define _GNU_SOURCE
#include <errno.h>
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
static char err[2048];

static int suite_init(void)
{
	lt_clear_env();
	return lt_mkdtemp(dir, sizeof(dir)) == 0 ? 0 : -1;
}

static int suite_clean(void)
{
	lt_clear_env();
	lt_rmtree(dir);
	return 0;
}

/* Write `text` as the test ini file and load it (environment ignored). */
static int load_text(const char *text, struct mcc_config *cfg)
{
	if (lt_write(dir, "t.ini", text, 0644, ini, sizeof(ini)) != 0)
		return -1000;
	return mcc_config_load(ini, 1, cfg, err, sizeof(err));
}

/* The effective value mcc_config_explain() reports for `key` ("": unset;
 * NULL: no such key). */
static const char *origin_value(const struct mcc_config_provenance *ex, const char *key)
{
	for (uint32_t i = 0; i < ex->count; i++)
		if (strcmp(ex->origin[i].key, key) == 0)
			return ex->origin[i].value;
	return NULL;
}

static int is_defaults(const struct mcc_config *cfg)
{
	struct mcc_config d;

	mcc_config_defaults(&d);
	return memcmp(&d, cfg, sizeof(d)) == 0;
}

/* ------------------------------------------------------------ defaults */

static void test_defaults_are_the_documented_values(void)
{
	struct mcc_config c;

	mcc_config_defaults(&c);
	CU_ASSERT_EQUAL(c.struct_size, sizeof(c));
	CU_ASSERT_EQUAL(c.policy.struct_size, sizeof(c.policy));
	CU_ASSERT_EQUAL(c.policy.mode, MCC_MODE_OFF);
	CU_ASSERT_EQUAL(c.policy.min_window_bytes, 131072);
	CU_ASSERT_EQUAL(c.policy.max_window_bytes, 16777216);
	CU_ASSERT_EQUAL(c.policy.probe_window_bytes, 0);
	CU_ASSERT_EQUAL(c.policy.target_drain_us, 200);
	CU_ASSERT_EQUAL(c.policy.high_pressure_epochs, 2);
	CU_ASSERT_EQUAL(c.policy.low_pressure_epochs, 4);
	CU_ASSERT_EQUAL(c.policy.hard_error_threshold, 3);
	CU_ASSERT_EQUAL(c.policy.cooldown_ms, 1000);
	CU_ASSERT_EQUAL(c.policy.cooldown_max_ms, 30000);
	CU_ASSERT_EQUAL(c.policy.flap_window_ms, 60000);
	CU_ASSERT_EQUAL(c.policy.epoch_us, 1000);
	CU_ASSERT_EQUAL(c.policy.md_percent, 50);
	CU_ASSERT_EQUAL(c.policy.fast_recovery_epochs, 5);
	CU_ASSERT_EQUAL(c.policy.ai_bytes, 262144);
	CU_ASSERT_EQUAL(c.policy.probe_successes, 3);
	CU_ASSERT_EQUAL(c.policy.evidence_tasks, 65536);
	CU_ASSERT_EQUAL(c.policy.recorder_entries, 4096);
	CU_ASSERT_PTR_NOT_NULL(c.policy.module_get);
	CU_ASSERT_PTR_NULL(c.policy.module_get(&c.policy, "anything"));
	CU_ASSERT_STRING_EQUAL(c.module, "");
	CU_ASSERT_EQUAL(c.module_dir[0], '/');
	CU_ASSERT_EQUAL(c.tent_cc_plugin_enabled, 0);
	CU_ASSERT_EQUAL(c.qos_enabled, 0);
}

static void test_no_file_and_no_env_gives_defaults(void)
{
	struct mcc_config c;

	CU_ASSERT_EQUAL(mcc_config_load(NULL, 1, &c, err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(err, "");
	CU_ASSERT_TRUE(is_defaults(&c));
}

static void test_shipped_sample_ini_is_valid_and_equals_defaults(void)
{
	const char *src = getenv("MCC_TEST_SRCDIR");
	char path[LT_PATH];
	struct mcc_config c;

	CU_ASSERT_PTR_NOT_NULL_FATAL(src);
	snprintf(path, sizeof(path), "%s/conf/mcc.ini", src);
	CU_ASSERT_EQUAL(mcc_config_load(path, 1, &c, err, sizeof(err)), 0);
	if (err[0])
		fprintf(stderr, "conf/mcc.ini: %s\n", err);
	CU_ASSERT_TRUE(is_defaults(&c));
}

/* ----------------------------------------------------------- good input */

static void test_every_key_is_applied(void)
{
	struct mcc_config c;

	CU_ASSERT_EQUAL_FATAL(load_text("[policy]\n"
	                                "mode = enforce\n"
	                                "module = my_mod-2\n"
	                                "module_dir = /opt/mcc/modules\n"
	                                "[controller]\n"
	                                "min_window_bytes = 65536\n"
	                                "max_window_bytes = 1099511627776\n"
	                                "probe_window_bytes = 65536\n"
	                                "target_drain_us = 10000000\n"
	                                "high_pressure_epochs = 1\n"
	                                "low_pressure_epochs = 1000000\n"
	                                "hard_error_threshold = 7\n"
	                                "cooldown_ms = 86400000\n"
	                                "cooldown_max_ms = 86400000\n"
	                                "flap_window_ms = 1\n"
	                                "epoch_us = 20\n"
	                                "md_percent = 99\n"
	                                "fast_recovery_epochs = 64\n"
	                                "ai_bytes = 1\n"
	                                "probe_successes = 9\n"
	                                "evidence_tasks = 16777216\n"
	                                "recorder_entries = 1\n"
	                                "[engine]\n"
	                                "tent_cc_plugin = none\n"
	                                "qos = on\n"
	                                "base_rtt_us = 1000000\n",
	                                &c),
	                      0);
	CU_ASSERT_EQUAL(c.policy.mode, MCC_MODE_ENFORCE);
	CU_ASSERT_STRING_EQUAL(c.module, "my_mod-2");
	CU_ASSERT_STRING_EQUAL(c.module_dir, "/opt/mcc/modules");
	CU_ASSERT_EQUAL(c.policy.min_window_bytes, 65536);
	CU_ASSERT_EQUAL(c.policy.max_window_bytes, 1099511627776ull);
	CU_ASSERT_EQUAL(c.policy.probe_window_bytes, 65536);
	CU_ASSERT_EQUAL(c.policy.target_drain_us, 10000000);
	CU_ASSERT_EQUAL(c.policy.high_pressure_epochs, 1);
	CU_ASSERT_EQUAL(c.policy.low_pressure_epochs, 1000000);
	CU_ASSERT_EQUAL(c.policy.hard_error_threshold, 7);
	CU_ASSERT_EQUAL(c.policy.cooldown_ms, 86400000);
	CU_ASSERT_EQUAL(c.policy.cooldown_max_ms, 86400000);
	CU_ASSERT_EQUAL(c.policy.flap_window_ms, 1);
	CU_ASSERT_EQUAL(c.policy.epoch_us, 20);
	CU_ASSERT_EQUAL(c.policy.md_percent, 99);
	CU_ASSERT_EQUAL(c.policy.fast_recovery_epochs, 64);
	CU_ASSERT_EQUAL(c.policy.ai_bytes, 1);
	CU_ASSERT_EQUAL(c.policy.probe_successes, 9);
	CU_ASSERT_EQUAL(c.policy.evidence_tasks, 16777216);
	CU_ASSERT_EQUAL(c.policy.recorder_entries, 1);
	CU_ASSERT_EQUAL(c.tent_cc_plugin_enabled, 0);
	CU_ASSERT_EQUAL(c.qos_enabled, 1);
	/* [engine] base_rtt_us is libmcc's own, not in struct mcc_config: its
	 * effective value as `mcc check` reports it */
	static struct mcc_config_provenance ex;
	ex.struct_size = sizeof(ex);
	CU_ASSERT_EQUAL_FATAL(mcc_config_explain(ini, 1, &c, &ex, err, sizeof(err)), 0);
	const char *rtt = origin_value(&ex, "base_rtt_us");
	CU_ASSERT_PTR_NOT_NULL_FATAL(rtt);
	CU_ASSERT_STRING_EQUAL(rtt, "1000000");
}

/* Accepted spellings: each text loads, and `check` holds afterwards. */
struct good_case {
	const char *what;
	const char *text;
	uint64_t (*get)(const struct mcc_config *c);
	uint64_t want;
};

static uint64_t get_md(const struct mcc_config *c)
{
	return c->policy.md_percent;
}
static uint64_t get_min(const struct mcc_config *c)
{
	return c->policy.min_window_bytes;
}
static uint64_t get_mode(const struct mcc_config *c)
{
	return c->policy.mode;
}
static uint64_t get_tent(const struct mcc_config *c)
{
	return c->tent_cc_plugin_enabled;
}
static uint64_t get_qos(const struct mcc_config *c)
{
	return c->qos_enabled;
}
static uint64_t get_probe(const struct mcc_config *c)
{
	return c->policy.probe_window_bytes;
}

static const struct good_case good[] = {
	{ "inline comment", "[controller]\nmd_percent = 40 ; forty\n", get_md, 40 },
	{ "colon separator", "[controller]\nmd_percent: 41\n", get_md, 41 },
	{ "no spaces", "[controller]\nmd_percent=42\n", get_md, 42 },
	{ "leading zeros are decimal", "[controller]\nmd_percent = 010\n", get_md, 10 },
	{ "CRLF line endings", "[controller]\r\nmd_percent = 43\r\n", get_md, 43 },
	{ "no final newline", "[controller]\nmd_percent = 44", get_md, 44 },
	{ "UTF-8 BOM", "\xEF\xBB\xBF[controller]\nmd_percent = 45\n", get_md, 45 },
	{ "comments and blank lines",
	  "; c\n# c\n\n[controller]\n  ; indented comment\nmd_percent = 46\n", get_md, 46 },
	{ "indented first key after a header", "[controller]\n  md_percent = 47\n", get_md, 47 },
	{ "repeated section header",
	  "[controller]\nmd_percent = 48\n[policy]\nmode = off\n[controller]\n"
	  "min_window_bytes = 4096\n",
	  get_min, 4096 },
	{ "probe window equal to the minimum window",
	  "[controller]\nmin_window_bytes = 65536\nprobe_window_bytes = 65536\n", get_probe,
	  65536 },
	{ "probe window unset stays 0", "[controller]\nmin_window_bytes = 4096\n", get_probe, 0 },
	{ "min window equal to max window",
	  "[controller]\nmin_window_bytes = 8192\nmax_window_bytes = 8192\n", get_min, 8192 },
	{ "observe mode", "[policy]\nmode = observe\n", get_mode, MCC_MODE_OBSERVE },
	{ "tent plugin with mode off", "[policy]\nmode = off\n[engine]\ntent_cc_plugin = aimd.v2\n",
	  get_tent, 1 },
	{ "qos with enforce", "[policy]\nmode = enforce\n[engine]\nqos = on\n", get_qos, 1 },
	{ "module sections are free-form",
	  "[module.aimd]\nanything = goes here\nEmpty =\n[module.x_y-9]\nk = v\n[controller]\n"
	  "md_percent = 49\n",
	  get_md, 49 },
	{ "empty module section", "[module.null]\n[controller]\nmd_percent = 50\n", get_md, 50 },
};

static void test_accepted_spellings(void)
{
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct mcc_config c;
		int rc = load_text(good[i].text, &c);

		if (rc != 0 || good[i].get(&c) != good[i].want)
			fprintf(stderr, "good case '%s': rc %d value %llu: %s\n", good[i].what, rc,
			        (unsigned long long)good[i].get(&c), err);
		CU_ASSERT_EQUAL(rc, 0);
		CU_ASSERT_EQUAL(good[i].get(&c), good[i].want);
	}
}

/* ------------------------------------------------------------ bad input */

/* A rejected ini: the message must be "<file>:<line>: <key>: ..." and
 * contain `reason`; the configuration must be the defaults. */
struct bad_case {
	const char *what;
	const char *text;
	int line;
	const char *key;
	const char *reason;
};

static const struct bad_case bad[] = {
	{ "unknown section", "[polcy]\nmode = off\n", 1, "[polcy]", "unknown section" },
	{ "section with spaces", "[ policy ]\n", 1, "[ policy ]", "unknown section" },
	{ "invalid module section", "[module.Bad]\n", 1, "[module.Bad]", "invalid module section" },
	{ "empty module section name", "[module.]\n", 1, "[module.]", "invalid module section" },
	{ "missing ]", "[policy\nmode = off\n", 1, "[policy", "without a closing ']'" },
	{ "no = on a line", "[policy]\nmode off\n", 2, "mode off", "expected 'key = value'" },
	{ "key outside any section", "mode = off\n", 1, "mode", "outside of any section" },
	{ "unknown key", "[policy]\nmood = off\n", 2, "mood", "unknown key in [policy]" },
	{ "upper-case key", "[policy]\nMODE = off\n", 2, "MODE", "unknown key in [policy]" },
	{ "key in the wrong section", "[policy]\nmin_window_bytes = 5\n", 2, "min_window_bytes",
	  "belongs in [controller]" },
	{ "empty key", "[controller]\n= 5\n", 2, "(empty)", "key name missing" },
	{ "duplicate key", "[controller]\nmd_percent = 40\nmd_percent = 41\n", 3, "md_percent",
	  "duplicate key (first set on line 2)" },
	{ "duplicate key across repeated sections",
	  "[controller]\nmd_percent = 40\n[policy]\nmode = off\n[controller]\nmd_percent = 40\n", 6,
	  "md_percent", "duplicate key (first set on line 2)" },
	{ "duplicate module key", "[module.aimd]\nx = 1\nx = 2\n", 3, "x",
	  "duplicate key in [module.aimd] (first set on line 2)" },
	{ "continuation line", "[controller]\nmd_percent = 40\n  ai_bytes = 5\n", 3, "md_percent",
	  "multi-line values are not supported" },
	{ "trailing garbage", "[controller]\nmin_window_bytes = 12x\n", 2, "min_window_bytes",
	  "'12x' has trailing characters" },
	{ "unit suffix", "[controller]\nmax_window_bytes = 16M\n", 2, "max_window_bytes",
	  "trailing characters" },
	{ "embedded junk", "[controller]\nai_bytes = 12 34\n", 2, "ai_bytes",
	  "trailing characters" },
	{ "hex", "[controller]\nai_bytes = 0x10\n", 2, "ai_bytes", "trailing characters" },
	{ "fraction", "[controller]\nepoch_us = 1.5\n", 2, "epoch_us", "trailing characters" },
	{ "negative", "[controller]\ncooldown_ms = -5\n", 2, "cooldown_ms", "is negative" },
	{ "plus sign", "[controller]\ncooldown_ms = +5\n", 2, "cooldown_ms",
	  "not a positive decimal integer" },
	{ "words", "[controller]\ncooldown_ms = ten\n", 2, "cooldown_ms",
	  "not a positive decimal integer" },
	{ "empty value", "[controller]\nai_bytes =\n", 2, "ai_bytes", "empty value" },
	{ "zero", "[controller]\nepoch_us = 0\n", 2, "epoch_us", "must be positive" },
	{ "zero probe window", "[controller]\nprobe_window_bytes = 0\n", 2, "probe_window_bytes",
	  "must be positive" },
	{ "2^64 overflow", "[controller]\nai_bytes = 18446744073709551616\n", 2, "ai_bytes",
	  "overflows 64 bits" },
	{ "above the byte range", "[controller]\nmax_window_bytes = 1099511627777\n", 2,
	  "max_window_bytes", "out of range 1..1099511627776" },
	{ "2^32 in a 32-bit key", "[controller]\nepoch_us = 4294967296\n", 2, "epoch_us",
	  "out of range 1..10000000" },
	{ "md_percent 100", "[controller]\nmd_percent = 100\n", 2, "md_percent",
	  "out of range 1..99" },
	{ "fast recovery above 64", "[controller]\nfast_recovery_epochs = 65\n", 2,
	  "fast_recovery_epochs", "out of range 1..64" },
	{ "base RTT above a second", "[engine]\nbase_rtt_us = 1000001\n", 2, "base_rtt_us",
	  "out of range 1..1000000" },
	{ "base RTT 0 (unset is unknown)", "[engine]\nbase_rtt_us = 0\n", 2, "base_rtt_us",
	  "must be positive" },
	{ "base RTT in [controller]", "[controller]\nbase_rtt_us = 10\n", 2, "base_rtt_us",
	  "belongs in [engine]" },
	{ "recorder not a power of two", "[controller]\nrecorder_entries = 1000\n", 2,
	  "recorder_entries", "not a power of two" },
	{ "min above max", "[controller]\nmin_window_bytes = 262144\nmax_window_bytes = 131072\n",
	  3, "max_window_bytes", "131072 is below min_window_bytes (262144)" },
	{ "min above the default max", "[controller]\nmin_window_bytes = 33554432\n", 2,
	  "min_window_bytes", "33554432 exceeds max_window_bytes (16777216)" },
	{ "probe above min", "[controller]\nprobe_window_bytes = 262144\n", 2, "probe_window_bytes",
	  "262144 exceeds min_window_bytes (131072)" },
	{ "min below an earlier probe",
	  "[controller]\nprobe_window_bytes = 65536\nmin_window_bytes = 4096\n", 3,
	  "min_window_bytes", "is below the configured probe_window_bytes (65536)" },
	{ "cooldown above its cap", "[controller]\ncooldown_ms = 60000\n", 2, "cooldown_ms",
	  "60000 exceeds cooldown_max_ms (30000)" },
	{ "cap below cooldown", "[controller]\ncooldown_max_ms = 500\n", 2, "cooldown_max_ms",
	  "500 is below cooldown_ms (1000)" },
	{ "invalid mode", "[policy]\nmode = on\n", 2, "mode", "expected off, observe or enforce" },
	{ "upper-case mode", "[policy]\nmode = OFF\n", 2, "mode",
	  "expected off, observe or enforce" },
	{ "hash is not an inline comment", "[policy]\nmode = off # no\n", 2, "mode",
	  "expected off, observe or enforce" },
	{ "relative module path", "[policy]\nmodule = lib/x.so\n", 2, "module", "is not a module" },
	{ "module name with dots", "[policy]\nmodule = ../evil\n", 2, "module", "is not a module" },
	{ "module name too long", "[policy]\nmodule = abcdefghijklmnopqrstuvwxyz0123456\n", 2,
	  "module", "is not a module" },
	{ "relative module_dir", "[policy]\nmodule_dir = modules\n", 2, "module_dir",
	  "not an absolute directory path" },
	{ "qos yes", "[engine]\nqos = yes\n", 2, "qos", "expected on or off" },
	{ "tent plugin name with a space", "[engine]\ntent_cc_plugin = a b\n", 2, "tent_cc_plugin",
	  "not a plugin name" },
	{ "tent plugin with enforce", "[policy]\nmode = enforce\n[engine]\ntent_cc_plugin = aimd\n",
	  4, "tent_cc_plugin", "second congestion controller" },
	{ "enforce after a tent plugin",
	  "[engine]\ntent_cc_plugin = aimd\n[policy]\nmode = observe\n", 4, "mode",
	  "second congestion controller" },
};

static void check_error(const char *what, int rc, const struct mcc_config *c, int line,
                        const char *key, const char *reason)
{
	char prefix[LT_PATH + 128];
	int ok;

	snprintf(prefix, sizeof(prefix), "%s:%d: %s: ", ini, line, key);
	ok = rc < 0 && strncmp(err, prefix, strlen(prefix)) == 0 && strstr(err, reason) != NULL &&
	     is_defaults(c);
	if (!ok)
		fprintf(stderr, "bad case '%s': rc %d, message '%s', wanted '%s...%s'\n", what, rc,
		        err, prefix, reason);
	CU_ASSERT_TRUE(ok);
}

static void test_rejected_inputs_name_file_line_key(void)
{
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct mcc_config c;
		int rc = load_text(bad[i].text, &c);

		check_error(bad[i].what, rc, &c, bad[i].line, bad[i].key, bad[i].reason);
		CU_ASSERT_EQUAL(rc, -EINVAL);
	}
}

static void test_very_long_line_is_rejected_not_split(void)
{
	char text[1024];
	struct mcc_config c;
	int rc;

	/* A comment line of 300 characters: inih would read it as two lines. */
	snprintf(text, sizeof(text), "[policy]\n;%0300d\nmode = off\n", 0);
	rc = load_text(text, &c);
	check_error("long comment", rc, &c, 2, "(line)", "line too long");
	/* A value line: 250 digits. */
	snprintf(text, sizeof(text), "[controller]\nai_bytes = %0250d\n", 1);
	rc = load_text(text, &c);
	check_error("long value", rc, &c, 2, "(line)", "line too long");
	/* 197 characters is the documented limit and loads. */
	snprintf(text, sizeof(text), "[controller]\nai_bytes = %0186d\n", 7);
	CU_ASSERT_EQUAL(strlen(strchr(text, '\n') + 1), 198); /* 197 + '\n' */
	CU_ASSERT_EQUAL(load_text(text, &c), 0);
	CU_ASSERT_EQUAL(c.policy.ai_bytes, 7);
}

static void test_module_sections_are_bounded(void)
{
	char text[8192], key[128];
	size_t used;
	struct mcc_config c;
	int rc;

	used = (size_t)snprintf(text, sizeof(text), "[module.aimd]\n");
	for (int i = 0; i < 65; i++)
		used += (size_t)snprintf(text + used, sizeof(text) - used, "k%d = %d\n", i, i);
	rc = load_text(text, &c);
	check_error("65 module keys", rc, &c, 66, "k64", "too many keys in [module.*] sections");

	memset(key, 'k', 64);
	key[64] = '\0';
	snprintf(text, sizeof(text), "[module.aimd]\n%s = 1\n", key);
	rc = load_text(text, &c);
	memcpy(key + 40, "...", 4); /* messages quote at most 40 characters */
	check_error("64-character module key", rc, &c, 2, key,
	            "module key longer than 63 characters");

	/* 16 distinct sections (a repeated one counts once), then the 17th. */
	used = 0;
	for (int i = 0; i < 17; i++)
		used += (size_t)snprintf(text + used, sizeof(text) - used, "[module.m%d]\n%s", i,
		                         i == 3 ? "[module.m0]\n" : "");
	rc = load_text(text, &c);
	check_error("17 module sections", rc, &c, 18, "[module.m16]",
	            "too many [module.*] sections (at most 16)");
}

static void test_nul_byte_is_rejected_not_truncated(void)
{
	/* Each would parse as something valid if the line ended at the NUL. */
	static const char v1[] = "[policy]\nmode = off\n\0mode = enforce\n";
	static const char v2[] = "[controller]\nmin_window_bytes = 1\0"
	                         "31072\n";
	static const char v3[] = "[policy]\nmode = off\0 junk";
	static const struct {
		const char *data;
		size_t len;
		int line;
	} v[] = { { v1, sizeof(v1) - 1, 3 }, { v2, sizeof(v2) - 1, 2 }, { v3, sizeof(v3) - 1, 2 } };

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct mcc_config c;
		int rc;

		CU_ASSERT_EQUAL_FATAL(
		        lt_write_bytes(dir, "t.ini", v[i].data, v[i].len, 0644, ini, sizeof(ini)),
		        0);
		rc = mcc_config_load(ini, 1, &c, err, sizeof(err));
		check_error("NUL byte", rc, &c, v[i].line, "(line)", "contains a NUL byte");
	}
}

/* -------------------------------------------------------- file errors */

static void test_missing_file_is_an_error(void)
{
	struct mcc_config c;
	char path[LT_PATH + 32];

	snprintf(path, sizeof(path), "%s/does-not-exist.ini", dir);
	CU_ASSERT_EQUAL(mcc_config_load(path, 1, &c, err, sizeof(err)), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, path));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "cannot open"));
	CU_ASSERT_TRUE(is_defaults(&c));
}

static void test_directory_is_not_a_config_file(void)
{
	struct mcc_config c;

	CU_ASSERT_EQUAL(mcc_config_load(dir, 1, &c, err, sizeof(err)), -EISDIR);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "is a directory"));
	CU_ASSERT_TRUE(is_defaults(&c));
}

/* Runs unprivileged (root reads anything): creates a file it may not read
 * in its own directory and expects -EACCES; 0 or 1 (printed why). */
static int unreadable_file_check(void *arg)
{
	const char *sub = arg;
	struct mcc_config c;
	char path[LT_PATH];
	int rc;

	if (lt_write(sub, "secret.ini", "[policy]\nmode = enforce\n", 0000, path, sizeof(path))) {
		printf("\n    cannot create %s/secret.ini", sub);
		return 1;
	}
	rc = mcc_config_load(path, 1, &c, err, sizeof(err));
	if (rc != -EACCES || !strstr(err, "cannot open") || !strstr(err, path) || !is_defaults(&c)) {
		printf("\n    unreadable file as uid %u: rc %d, \"%s\"", (unsigned)geteuid(), rc, err);
		return 1;
	}
	return 0;
}

static void test_unreadable_file_is_an_error(void)
{
	char sub[LT_PATH];

	/* a directory of its own (its parents are traversable by anyone) */
	CU_ASSERT_EQUAL_FATAL(lt_mkdtemp(sub, sizeof(sub)), 0);
	CU_ASSERT_EQUAL(lt_run_unprivileged(unreadable_file_check, sub, sub), 0);
	lt_rmtree(sub);
}

static void test_fifo_is_refused_without_blocking(void)
{
	struct mcc_config c;
	char fifo[LT_PATH + 16];

	snprintf(fifo, sizeof(fifo), "%s/fifo.ini", dir);
	CU_ASSERT_EQUAL_FATAL(mkfifo(fifo, 0644), 0);
	alarm(10); /* a blocking open would hang here: fail loudly instead */
	CU_ASSERT_EQUAL(mcc_config_load(fifo, 1, &c, err, sizeof(err)), -EINVAL);
	alarm(0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "not a regular file"));
	CU_ASSERT_EQUAL(mcc_config_load("/dev/zero", 1, &c, err, sizeof(err)), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err, "/dev/zero: not a regular file");
}

static void test_world_writable_file_is_refused(void)
{
	struct mcc_config c;

	CU_ASSERT_EQUAL_FATAL(
	        lt_write(dir, "open.ini", "[policy]\nmode = off\n", 0666, ini, sizeof(ini)), 0);
	CU_ASSERT_EQUAL(mcc_config_load(ini, 1, &c, err, sizeof(err)), -EPERM);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "writable by others"));
}

static void test_empty_file_gives_defaults(void)
{
	static struct mcc_config_provenance ex;
	struct mcc_config c;

	CU_ASSERT_EQUAL(load_text("", &c), 0);
	CU_ASSERT_TRUE(is_defaults(&c));
	/* ... and the warning an engine logs (`mcc check` fails on it): a file
	 * with sections and comments but no setting is empty too. */
	CU_ASSERT_EQUAL_FATAL(lt_write(dir, "empty.ini", "; nothing\n[policy]\n\n", 0644, ini,
	                               sizeof(ini)),
	                      0);
	ex.struct_size = sizeof(ex);
	CU_ASSERT_EQUAL(mcc_config_explain(ini, 1, &c, &ex, err, sizeof(err)), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(ex.warning, "empty.ini: no setting in the file"));
	const char *rtt = origin_value(&ex, "base_rtt_us"); /* unset: unknown */
	CU_ASSERT_PTR_NOT_NULL_FATAL(rtt);
	CU_ASSERT_STRING_EQUAL(rtt, "");
	CU_ASSERT_EQUAL_FATAL(lt_write(dir, "one.ini", "[policy]\nmode = off\n", 0644, ini,
	                               sizeof(ini)),
	                      0);
	CU_ASSERT_EQUAL(mcc_config_explain(ini, 1, &c, &ex, err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(ex.warning, "");
}

/* Without a path: MC_ADAPTIVE_CC_CONFIG names the file, "none" none, and
 * unset the installed default (read when it exists: installcheck.sh). */
static void test_config_none_reads_no_file(void)
{
	static struct mcc_config_provenance ex;
	struct mcc_config c;

	lt_clear_env(); /* MC_ADAPTIVE_CC_CONFIG=none */
	ex.struct_size = sizeof(ex);
	CU_ASSERT_EQUAL(mcc_config_explain(NULL, 0, &c, &ex, err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(ex.file, "");
	CU_ASSERT_EQUAL(ex.file_from_env, 0);
	CU_ASSERT_STRING_EQUAL(ex.warning, "");
	CU_ASSERT_EQUAL_FATAL(lt_write(dir, "env.ini", "[controller]\nepoch_us = 9\n", 0644, ini,
	                               sizeof(ini)),
	                      0);
	setenv("MC_ADAPTIVE_CC_CONFIG", ini, 1);
	CU_ASSERT_EQUAL(mcc_config_explain(NULL, 0, &c, &ex, err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(ex.file, ini);
	CU_ASSERT_EQUAL(ex.file_from_env, 1);
	CU_ASSERT_EQUAL(c.policy.epoch_us, 9);
	lt_clear_env();
}

/* MC_ADAPTIVE_CC_LOG_LEVEL is checked with the rest; a misspelt variable
 * is a warning naming the variable it is near. */
static void test_log_level_and_misspelt_variables(void)
{
	static struct mcc_config_provenance ex;
	struct mcc_config c;
	static const char *const ok[] = { "error", "warn", "info", "debug" };

	ex.struct_size = sizeof(ex);
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		lt_clear_env();
		setenv("MC_ADAPTIVE_CC_LOG_LEVEL", ok[i], 1);
		/* the Mooncake adapter's own variable is known, not a typo */
		setenv("MC_ADAPTIVE_CC_SUMMARY_MS", "1000", 1);
		CU_ASSERT_EQUAL(mcc_config_explain(NULL, 0, &c, &ex, err, sizeof(err)), 0);
		CU_ASSERT_STRING_EQUAL(ex.warning, "");
	}
	setenv("MC_ADAPTIVE_CC_LOG_LEVEL", "WARN", 1);
	CU_ASSERT_EQUAL(mcc_config_load(NULL, 0, &c, err, sizeof(err)), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err, "MC_ADAPTIVE_CC_LOG_LEVEL: invalid value 'WARN': expected "
	                            "error, warn, info or debug");
	lt_clear_env();
	setenv("MC_ADAPTIVE_CC_COOLDOWN_MSS", "5", 1);
	setenv("MC_ADAPTIVE_CC_XYZ", "5", 1);
	CU_ASSERT_EQUAL(mcc_config_explain(NULL, 0, &c, &ex, err, sizeof(err)), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(ex.warning, "MC_ADAPTIVE_CC_COOLDOWN_MSS: unknown variable, "
	                                          "ignored (did you mean "
	                                          "MC_ADAPTIVE_CC_COOLDOWN_MS?)"));
	CU_ASSERT_PTR_NOT_NULL(strstr(ex.warning, "MC_ADAPTIVE_CC_XYZ: unknown variable, ignored "
	                                          "(known: "));
	CU_ASSERT_PTR_NOT_NULL(strchr(ex.warning, '\n')); /* one line per variable */
	lt_clear_env();
}

/* -------------------------------------------------------- environment */

struct env_bad {
	const char *var;
	const char *value;
	const char *reason;
};

static const struct env_bad env_bad[] = {
	{ "MC_ADAPTIVE_CC_MIN_WINDOW_BYTES", "12x", "'12x' has trailing characters" },
	{ "MC_ADAPTIVE_CC_MIN_WINDOW_BYTES", "", "empty value" },
	{ "MC_ADAPTIVE_CC_MIN_WINDOW_BYTES", " 5", "not a positive decimal integer" },
	{ "MC_ADAPTIVE_CC_MIN_WINDOW_BYTES", "5 ", "trailing characters" },
	{ "MC_ADAPTIVE_CC_MAX_WINDOW_BYTES", "-1", "is negative" },
	{ "MC_ADAPTIVE_CC_TARGET_DRAIN_US", "0", "must be positive" },
	{ "MC_ADAPTIVE_CC_AI_BYTES", "18446744073709551616", "overflows 64 bits" },
	{ "MC_ADAPTIVE_CC_HIGH_PRESSURE_EPOCHS", "1000001", "out of range 1..1000000" },
	{ "MC_ADAPTIVE_CC_LOW_PRESSURE_EPOCHS", "0x4", "trailing characters" },
	{ "MC_ADAPTIVE_CC_HARD_ERROR_THRESHOLD", "three", "not a positive decimal integer" },
	{ "MC_ADAPTIVE_CC_COOLDOWN_MS", "86400001", "out of range" },
	{ "MC_ADAPTIVE_CC_COOLDOWN_MAX_MS", "999", "999 is below cooldown_ms (1000)" },
	{ "MC_ADAPTIVE_CC_FLAP_WINDOW_MS", "1e3", "trailing characters" },
	{ "MC_ADAPTIVE_CC_EPOCH_US", "+100", "not a positive decimal integer" },
	{ "MC_ADAPTIVE_CC_MD_PERCENT", "0", "must be positive" },
	{ "MC_ADAPTIVE_CC_FAST_RECOVERY_EPOCHS", "100", "out of range 1..64" },
	{ "MC_ADAPTIVE_CC_PROBE_SUCCESSES", "", "empty value" },
	{ "MC_ADAPTIVE_CC_EVIDENCE_TASKS", "16777217", "out of range" },
	{ "MC_ADAPTIVE_CC_RECORDER_ENTRIES", "3", "not a power of two" },
	{ "MC_ADAPTIVE_CC_PROBE_WINDOW_BYTES", "262144", "exceeds min_window_bytes (131072)" },
	{ "MC_ADAPTIVE_CC_MIN_WINDOW_BYTES", "33554432", "exceeds max_window_bytes (16777216)" },
	{ "MC_ADAPTIVE_CC_MODE", "fast", "expected off, observe or enforce" },
	{ "MC_ADAPTIVE_CC_MODE", "", "expected off, observe or enforce" },
	{ "MC_ADAPTIVE_CC_MODULE", "rel/x.so", "is not a module" },
	{ "MC_ADAPTIVE_CC_MODULE_DIR", "rel", "not an absolute directory path" },
	{ "MC_ADAPTIVE_CC_QOS", "1", "expected on or off" },
	{ "MC_ADAPTIVE_CC_TENT_CC_PLUGIN", "a;b", "not a plugin name" },
};

static void test_rejected_environment_names_the_variable(void)
{
	for (size_t i = 0; i < sizeof(env_bad) / sizeof(env_bad[0]); i++) {
		struct mcc_config c;
		char prefix[128];
		int rc, ok;

		lt_clear_env();
		setenv(env_bad[i].var, env_bad[i].value, 1);
		rc = mcc_config_load(NULL, 0, &c, err, sizeof(err));
		snprintf(prefix, sizeof(prefix), "%s: ", env_bad[i].var);
		ok = rc == -EINVAL && strncmp(err, prefix, strlen(prefix)) == 0 &&
		     strstr(err, env_bad[i].reason) && is_defaults(&c);
		if (!ok)
			fprintf(stderr, "env case %s='%s': rc %d, '%s'\n", env_bad[i].var,
			        env_bad[i].value, rc, err);
		CU_ASSERT_TRUE(ok);
		/* ignore_env: the same environment is not read at all. */
		CU_ASSERT_EQUAL(mcc_config_load(NULL, 1, &c, err, sizeof(err)), 0);
	}
	lt_clear_env();
}

static void test_env_tent_plugin_with_enforce_is_rejected(void)
{
	struct mcc_config c;

	lt_clear_env();
	setenv("MC_ADAPTIVE_CC_MODE", "enforce", 1);
	setenv("MC_ADAPTIVE_CC_TENT_CC_PLUGIN", "aimd", 1);
	CU_ASSERT_EQUAL(mcc_config_load(NULL, 0, &c, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "second congestion controller"));
	setenv("MC_ADAPTIVE_CC_MODE", "off", 1);
	setenv("MC_ADAPTIVE_CC_QOS", "on", 1);
	CU_ASSERT_EQUAL(mcc_config_load(NULL, 0, &c, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(c.tent_cc_plugin_enabled, 1);
	setenv("MC_ADAPTIVE_CC_TENT_CC_PLUGIN", "none", 1);
	setenv("MC_ADAPTIVE_CC_MODE", "enforce", 1);
	CU_ASSERT_EQUAL(mcc_config_load(NULL, 0, &c, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(c.qos_enabled, 1);
	CU_ASSERT_EQUAL(c.policy.mode, MCC_MODE_ENFORCE);
	lt_clear_env();
}

static void test_env_overrides_ini_and_ignore_env_does_not(void)
{
	struct mcc_config c;

	lt_clear_env();
	CU_ASSERT_EQUAL_FATAL(lt_write(dir, "p.ini",
	                               "[policy]\nmode = observe\nmodule_dir = /from/ini\n"
	                               "[controller]\nmin_window_bytes = 65536\nmd_percent = 30\n",
	                               0644, ini, sizeof(ini)),
	                      0);
	setenv("MC_ADAPTIVE_CC_MIN_WINDOW_BYTES", "8192", 1);
	setenv("MC_ADAPTIVE_CC_MODE", "enforce", 1);
	setenv("MC_ADAPTIVE_CC_MODULE_DIR", "/from/env", 1);
	CU_ASSERT_EQUAL(mcc_config_load(ini, 0, &c, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(c.policy.min_window_bytes, 8192);     /* env */
	CU_ASSERT_EQUAL(c.policy.md_percent, 30);             /* ini */
	CU_ASSERT_EQUAL(c.policy.mode, MCC_MODE_ENFORCE);     /* env */
	CU_ASSERT_STRING_EQUAL(c.module_dir, "/from/env");    /* env */
	CU_ASSERT_EQUAL(c.policy.max_window_bytes, 16777216); /* default */

	CU_ASSERT_EQUAL(mcc_config_load(ini, 1, &c, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(c.policy.min_window_bytes, 65536);
	CU_ASSERT_EQUAL(c.policy.mode, MCC_MODE_OBSERVE);
	CU_ASSERT_STRING_EQUAL(c.module_dir, "/from/ini");
	lt_clear_env();
}

static void test_env_error_blames_the_env_over_the_ini(void)
{
	struct mcc_config c;

	lt_clear_env();
	CU_ASSERT_EQUAL_FATAL(lt_write(dir, "b.ini", "[controller]\nmin_window_bytes = 262144\n",
	                               0644, ini, sizeof(ini)),
	                      0);
	setenv("MC_ADAPTIVE_CC_MAX_WINDOW_BYTES", "131072", 1);
	CU_ASSERT_EQUAL(mcc_config_load(ini, 0, &c, err, sizeof(err)), -EINVAL);
	CU_ASSERT_STRING_EQUAL(
	        err, "MC_ADAPTIVE_CC_MAX_WINDOW_BYTES: 131072 is below min_window_bytes (262144)");
	lt_clear_env();
}

static void test_env_config_names_the_ini_file(void)
{
	struct mcc_config c;
	char missing[LT_PATH + 32];

	lt_clear_env();
	CU_ASSERT_EQUAL_FATAL(
	        lt_write(dir, "e.ini", "[controller]\nepoch_us = 77\n", 0644, ini, sizeof(ini)), 0);
	setenv("MC_ADAPTIVE_CC_CONFIG", ini, 1);
	CU_ASSERT_EQUAL(mcc_config_load(NULL, 0, &c, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(c.policy.epoch_us, 77);
	/* ignore_env: MC_ADAPTIVE_CC_CONFIG is not read either. */
	CU_ASSERT_EQUAL(mcc_config_load(NULL, 1, &c, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(c.policy.epoch_us, 1000);
	/* An explicit path wins over MC_ADAPTIVE_CC_CONFIG. */
	snprintf(missing, sizeof(missing), "%s/missing.ini", dir);
	CU_ASSERT_EQUAL(mcc_config_load(missing, 0, &c, err, sizeof(err)), -ENOENT);
	setenv("MC_ADAPTIVE_CC_CONFIG", missing, 1);
	CU_ASSERT_EQUAL(mcc_config_load(NULL, 0, &c, err, sizeof(err)), -ENOENT);
	setenv("MC_ADAPTIVE_CC_CONFIG", "", 1);
	CU_ASSERT_EQUAL(mcc_config_load(NULL, 0, &c, err, sizeof(err)), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err, "MC_ADAPTIVE_CC_CONFIG: empty configuration file path");
	lt_clear_env();
}

static void test_ini_error_stops_before_the_environment(void)
{
	struct mcc_config c;

	lt_clear_env();
	setenv("MC_ADAPTIVE_CC_MD_PERCENT", "500", 1); /* also bad, but later */
	CU_ASSERT_EQUAL_FATAL(
	        lt_write(dir, "s.ini", "[controller]\nepoch_us = x\n", 0644, ini, sizeof(ini)), 0);
	CU_ASSERT_EQUAL(mcc_config_load(ini, 0, &c, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, ":2: epoch_us: "));
	lt_clear_env();
}

/* ------------------------------------------------------ module paths */

static void test_module_path_follows_mode_and_override(void)
{
	struct mcc_config c;
	char path[LT_PATH];

	mcc_config_defaults(&c);
	snprintf(c.module_dir, sizeof(c.module_dir), "/m");
	CU_ASSERT_EQUAL(mcc_config_module_path(&c, path, sizeof(path)), 0);
	CU_ASSERT_STRING_EQUAL(path, "/m/mcc-policy-null.so");
	c.policy.mode = MCC_MODE_OBSERVE;
	CU_ASSERT_EQUAL(mcc_config_module_path(&c, path, sizeof(path)), 0);
	CU_ASSERT_STRING_EQUAL(path, "/m/mcc-policy-observe.so");
	c.policy.mode = MCC_MODE_ENFORCE;
	CU_ASSERT_EQUAL(mcc_config_module_path(&c, path, sizeof(path)), 0);
	CU_ASSERT_STRING_EQUAL(path, "/m/mcc-policy-aimd.so");
	snprintf(c.module, sizeof(c.module), "custom");
	CU_ASSERT_EQUAL(mcc_config_module_path(&c, path, sizeof(path)), 0);
	CU_ASSERT_STRING_EQUAL(path, "/m/mcc-policy-custom.so");
	snprintf(c.module, sizeof(c.module), "/abs/x.so");
	CU_ASSERT_EQUAL(mcc_config_module_path(&c, path, sizeof(path)), 0);
	CU_ASSERT_STRING_EQUAL(path, "/abs/x.so");
	snprintf(c.module, sizeof(c.module), "none");
	CU_ASSERT_EQUAL(mcc_config_module_path(&c, path, sizeof(path)), -ENOENT);
	snprintf(c.module, sizeof(c.module), "custom");
	CU_ASSERT_EQUAL(mcc_config_module_path(&c, path, 10), -ENAMETOOLONG);
	CU_ASSERT_EQUAL(mcc_config_module_path(NULL, path, sizeof(path)), -EINVAL);
	CU_ASSERT_EQUAL(mcc_config_module_path(&c, NULL, 0), -EINVAL);
}

static void test_null_arguments_are_rejected(void)
{
	CU_ASSERT_EQUAL(mcc_config_load(NULL, 1, NULL, err, sizeof(err)), -EINVAL);
	mcc_config_defaults(NULL); /* no crash */
}

MCC_CU_SUITE(t_init_config_tests, "config", suite_init, suite_clean,
             test_defaults_are_the_documented_values,
             test_no_file_and_no_env_gives_defaults,
             test_shipped_sample_ini_is_valid_and_equals_defaults,
             test_every_key_is_applied,
             test_accepted_spellings,
             test_rejected_inputs_name_file_line_key,
             test_very_long_line_is_rejected_not_split,
             test_module_sections_are_bounded,
             test_nul_byte_is_rejected_not_truncated,
             test_missing_file_is_an_error,
             test_directory_is_not_a_config_file,
             test_unreadable_file_is_an_error,
             test_fifo_is_refused_without_blocking,
             test_world_writable_file_is_refused,
             test_empty_file_gives_defaults,
             test_config_none_reads_no_file,
             test_log_level_and_misspelt_variables,
             test_rejected_environment_names_the_variable,
             test_env_tent_plugin_with_enforce_is_rejected,
             test_env_overrides_ini_and_ignore_env_does_not,
             test_env_error_blames_the_env_over_the_ini,
             test_env_config_names_the_ini_file,
             test_ini_error_stops_before_the_environment,
             test_module_path_follows_mode_and_override,
             test_null_arguments_are_rejected)

MCC_CU_MAIN(t_init_config_tests)
