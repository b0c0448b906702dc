/* SPDX-License-Identifier: MIT */
/*
 * test_spec.c - scenario descriptions (host_stubs/scenario/README.md):
 * malformed files fail with "FILE:LINE: what" and -EINVAL, never a crash;
 * a tiny file runs end to end, its flow start times honoured; every
 * built-in name resolves to its compiled-in spec.
 */
#include "../cu_driver.h"
#include "hosts_run.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[64];

/* Writes `text` to a fresh temporary file (its name in `path`). */
static int write_spec(const char *text)
{
	snprintf(path, sizeof(path), "/tmp/mcc-spec-test-XXXXXX");
	int fd = mkstemp(path);
	if (fd < 0)
		return -1;
	FILE *f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		return -1;
	}
	fputs(text, f);
	fclose(f);
	return 0;
}

/* The runner's options for the spec file at `path`, off arm, simulated. */
static struct mcc_scn_opts spec_opts(int engine)
{
	struct mcc_scn_opts o = th_sim_opts("off", engine, 1, NULL);
	o.spec_path = path;
	return o;
}

#define HEAD "[scenario]\nname = t\nduration_s = 0.02\nsenders = 2\nreceivers = 1\n"
#define FLOW "[flow.a]\nsenders = 0\n"

static const struct {
	const char *text;
	int line;          /* expected line in the message */
	const char *what;  /* a part of the message */
} bad[] = {
    {HEAD FLOW "[bogus]\nx = 1\n", 9, "unknown section [bogus]"},
    {HEAD "colour = red\n" FLOW, 6, "unknown key 'colour'"},
    {HEAD FLOW "size = 12Q\n", 8, "bad number"},
    {HEAD FLOW "outstanding = 17\n", 8, "bad number"},
    {HEAD FLOW "outstanding = -1\n", 8, "bad number"},
    {HEAD "[flow.a]\nsenders = 3-1\n", 7, "bad range"},
    {HEAD "[flow.a]\nsenders = 2\n", 7, "sender 2 out of range"},
    {HEAD FLOW "receiver = 1\n", 7, "receiver 1 out of range"},
    {HEAD, 5, "no flows"},
    {"[scenario]\nduration_s = 1\n" FLOW, 2, "name is missing"},
    {"[scenario]\nname = Big\n", 2, "[a-z0-9_-]"},
    {HEAD "senders = 65\n" FLOW, 6, "bad number"},
    {HEAD FLOW "[fault.x]\nat_s = 0.1\nkind = meltdown\n", 10, "unknown kind"},
    {HEAD FLOW "[fault.x]\nat_s = 0.1\nkind = link_down\nnode = 9\n", 9, "node out of range"},
    {HEAD FLOW "[fault.x]\nkind = rekey\n", 9, "at_s is missing"},
    {HEAD FLOW "[fault.x]\nat_s = 0.1\nkind = link_down\nreceiver = 1\n", 9,
     "receiver 1 out of range"},
    {HEAD FLOW "[fabric]\nlink_gbps = fast\n", 9, "bad number"},
    {HEAD FLOW "[fabric]\nrail_optimised = maybe\n", 9, "bad number"},
    {HEAD FLOW "this is not ini\n", 8, "syntax error"},
    {"duration_s = 1\n", 1, "outside any section"},
};

static void test_malformed_specs_fail_with_file_and_line(void)
{
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char err[512] = "", want[96];
		CU_ASSERT_EQUAL_FATAL(write_spec(bad[i].text), 0);
		int rc = mcc_scn_check_spec(path, err, sizeof(err));
		snprintf(want, sizeof(want), "%s:%d: ", path, bad[i].line);
		if (rc != -EINVAL || strncmp(err, want, strlen(want)) || !strstr(err, bad[i].what))
			printf("\ncase %zu: rc %d, message '%s' (want '%s...%s')\n", i, rc, err, want,
			       bad[i].what);
		CU_ASSERT_EQUAL(rc, -EINVAL);
		CU_ASSERT_NSTRING_EQUAL(err, want, strlen(want));
		CU_ASSERT_PTR_NOT_NULL(strstr(err, bad[i].what));
		/* the runner's entry point refuses it too, without running */
		struct mcc_scn_opts o = spec_opts(MCC_SCN_TE);
		struct mcc_scn_result r;
		CU_ASSERT_EQUAL(mcc_scn_run(&o, &r), -EINVAL);
		unlink(path);
	}
	char err[256];
	CU_ASSERT_EQUAL(mcc_scn_check_spec("/nonexistent/x.ini", err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "/nonexistent/x.ini: "));
}

static void test_tiny_spec_runs_end_to_end(void)
{
	/* two bulk senders (one starting after the run's end: nothing may be
	 * submitted) and a victim, 100 Gb/s, 6 us of propagation per RTT */
	CU_ASSERT_EQUAL_FATAL(write_spec("[scenario]\nname = tiny-1\nduration_s = 0.5\n"
	                                 "quick_duration_s = 0.02\nsenders = 3\n"
	                                 "[fabric]\nlink_gbps = 100\nprop_ns = 2000\n"
	                                 "switch_buf = 8M\nxoff = 6M\n"
	                                 "[flow.a]\nsenders = 0\nsize = 256K\noutstanding = 4 ; x\n"
	                                 "[flow.late]\nsender = 1\nstart_s = 10\n"
	                                 "[flow.v]\nsenders = 2\nsize = 4K\noutstanding = 1\n"
	                                 "victim = yes\n[measure]\nfair_settle_ms = 5\n"),
	                      0);
	struct mcc_scn_opts o = spec_opts(MCC_SCN_TE);
	struct mcc_scn_result r, back;
	o.quick = 1;
	CU_ASSERT_EQUAL_FATAL(mcc_scn_run(&o, &r), 0);
	CU_ASSERT_STRING_EQUAL(r.scenario, "tiny-1");
	CU_ASSERT_DOUBLE_EQUAL(r.duration_s, 0.02, 1e-9);
	CU_ASSERT_EQUAL(r.nflows, 3);
	CU_ASSERT(r.flow_gbps[0] > 10);
	CU_ASSERT_EQUAL(r.flow_gbps[1], 0); /* started after the end: nothing */
	CU_ASSERT(r.flow_gbps[2] > 0);
	CU_ASSERT(r.tasks_done > 0);
	CU_ASSERT_EQUAL(r.bytes_lost + r.bytes_corrupted, 0);
	CU_ASSERT(r.vp99_us > 0 && r.vp99_us == r.p99_us);
	CU_ASSERT_DOUBLE_EQUAL(r.fair_from_s, 10.005, 1e-9);
	CU_ASSERT_EQUAL(r.nfair, 0); /* the interval is empty */
	CU_ASSERT_EQUAL(r.jain, 1);
	/* the RESULT line round-trips */
	char line[4096];
	FILE *f = fmemopen(line, sizeof(line), "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	mcc_scn_result_write(f, &r);
	fclose(f);
	CU_ASSERT_EQUAL_FATAL(mcc_scn_result_parse(line, &back), 0);
	CU_ASSERT_STRING_EQUAL(back.scenario, "tiny-1");
	CU_ASSERT_EQUAL(back.digest, r.digest);
	CU_ASSERT_DOUBLE_EQUAL(back.vp99_us, r.vp99_us, 1e-3);
	/* deterministic */
	struct mcc_scn_result again;
	CU_ASSERT_EQUAL_FATAL(mcc_scn_run(&o, &again), 0);
	CU_ASSERT_EQUAL(again.digest, r.digest);
	unlink(path);
}

static void test_fairness_interval_and_staggered_start(void)
{
	/* two flows on one bottleneck, the second from 10 ms: the fairness
	 * interval starts 5 ms after it; both are measured there */
	CU_ASSERT_EQUAL_FATAL(write_spec("[scenario]\nname = stagger\nduration_s = 0.04\n"
	                                 "senders = 2\n[flow.a]\nsenders = 0\n"
	                                 "[flow.b]\nsenders = 1\nstart_s = 0.01\n"
	                                 "[measure]\nfair_settle_ms = 5\n"),
	                      0);
	struct mcc_scn_opts o = spec_opts(MCC_SCN_TENT);
	struct mcc_scn_result r;
	CU_ASSERT_EQUAL_FATAL(mcc_scn_run(&o, &r), 0);
	CU_ASSERT_DOUBLE_EQUAL(r.fair_from_s, 0.015, 1e-9);
	CU_ASSERT_EQUAL(r.nfair, 2);
	CU_ASSERT(r.fair_gbps[0] > 0 && r.fair_gbps[1] > 0);
	CU_ASSERT(r.fair_gbps[0] + r.fair_gbps[1] <= 25.5); /* one 25 Gb/s port */
	CU_ASSERT(r.jain > 0.5 && r.jain <= 1.0);
	CU_ASSERT_EQUAL(r.bytes_lost + r.bytes_corrupted, 0);
	unlink(path);
}

static void test_every_builtin_name_resolves(void)
{
	int n = 0;
	for (const char *const *s = mcc_scn_names(); *s; s++)
		n++;
	CU_ASSERT_EQUAL(n, 15); /* the specs folder: ten, and five one-rail faults */
	struct mcc_scn_opts o;
	struct mcc_scn_result r;
	memset(&o, 0, sizeof(o));
	o.scenario = "nosuchscenario";
	CU_ASSERT_EQUAL(mcc_scn_run(&o, &r), -EINVAL);
}

MCC_CU_SUITE(t_init_spec_tests, "spec", NULL, NULL, test_malformed_specs_fail_with_file_and_line,
             test_tiny_spec_runs_end_to_end, test_fairness_interval_and_staggered_start,
             test_every_builtin_name_resolves)

MCC_CU_MAIN(t_init_spec_tests)
