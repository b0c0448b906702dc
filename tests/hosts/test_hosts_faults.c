/* SPDX-License-Identifier: MIT */
/*
 * test_hosts_faults.c - one-rail faults on the fabric model (deterministic
 * executor), TE host stub in enforce against the same seed with the
 * controller off: a lossy local NIC (on one fabric and on a
 * rail-optimised one), a flapping rail, both peer NICs down,
 * and the RETRY_EXC bursts rxe makes of reordering. Each scenario is a spec
 * in host_stubs/scenario/specs/ measured with `[measure] faults` (the
 * FAULTS line of mcc_scenario).
 */
#include "../cu_driver.h"
#include "hosts_run.h"
#include "mcc_policy_v1.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *mdir;

static int run(const char *scen, const char *mode, uint64_t seed, struct mcc_scn_result *r)
{
	struct mcc_scn_opts o = th_sim_opts(mode, MCC_SCN_TE, seed, mdir);
	o.scenario = scen;
	o.quick = 1;
	return mcc_scn_run(&o, r);
}

static void assert_clean(const struct mcc_scn_result *r)
{
	CU_ASSERT_EQUAL(r->bytes_lost, 0);
	CU_ASSERT_EQUAL(r->bytes_corrupted, 0);
	CU_ASSERT_EQUAL(r->permits_leaked, 0);
	CU_ASSERT(r->tasks_done > 0);
	CU_ASSERT(r->measured & MCC_SCN_MEAS_FAULTS);
}

static void show(const struct mcc_scn_result *r)
{
	printf("(%s: %.1f Gb/s, NIC 1 %.1f %%, stall %.1f ms, LU reads %llu, no usable path %llu, "
	       "LU after all quarantined %.3f ms, failed %llu, cooldowns",
	       r->arm, r->goodput_gbps, 100 * r->fault_share, (double)r->fault_stall_ns / 1e6,
	       (unsigned long long)r->fault_lu_reads, (unsigned long long)r->fault_nup,
	       r->lu_after_allq_ns < 0 ? -1.0 : (double)r->lu_after_allq_ns / 1e6,
	       (unsigned long long)r->tasks_failed);
	for (uint32_t i = 0; i < r->nq_cooldown; i++)
		printf(" %llu", (unsigned long long)r->q_cooldown_ms[i]);
	printf(") ");
}

/* The scenario (seed 1) in enforce into r, after the controller-off arm
 * into `off` when that is not NULL: each shown, the enforce arm checked
 * clean. 0, with nothing run, when the aimd module is not built. */
static int run_arms(const char *scen, struct mcc_scn_result *off, struct mcc_scn_result *r)
{
	if (th_lacks_module(mdir, "aimd"))
		return 0;
	if (off)
		CU_ASSERT_EQUAL_FATAL(run(scen, "off", 1, off), 0);
	CU_ASSERT_EQUAL_FATAL(run(scen, "enforce", 1, r), 0);
	if (off)
		show(off);
	show(r);
	assert_clean(r);
	return 1;
}

/* A quarter of the data units lost on local NIC 0 for 3 s. NIC 0's routes
 * are held near their floor, and what they refuse moves to NIC 1 (a local
 * hand-off, site 9): no stretch of a second without a completed task, at
 * least 70 % of the bytes on NIC 1 from 1 s after the onset, no task read
 * LONG_UNAVAILABLE and no group without a usable path (NIC 1 is usable),
 * nothing failed, more delivered than with the controller off. */
static void check_lossy_local_nic(const char *scen)
{
	struct mcc_scn_result off, r;
	if (!run_arms(scen, &off, &r))
		return;
	CU_ASSERT(r.fault_stall_ns < 1000000000ull);
	CU_ASSERT(r.fault_share >= 0.70);
	CU_ASSERT_EQUAL(r.fault_lu_reads, 0);
	CU_ASSERT_EQUAL(r.fault_nup, 0);
	CU_ASSERT_EQUAL(r.tasks_failed, 0);
	CU_ASSERT(r.goodput_gbps > off.goodput_gbps);
}

static void test_lossy_local_nic_moves_bytes_without_a_stall(void)
{
	check_lossy_local_nic("nicgray");
}

/* The same loss on a rail-optimised fabric (railgray: NIC i reaches only
 * the peer's NIC i). The hand-off must let NIC 1 pick its own rail's peer
 * NIC (INTEGRATION.md site 11, tryHandoffToAnotherLocalWorker(slice,
 * true)): one that kept rail 0's peer NIC sent the slices over a dead
 * cross-rail path. The same bounds as on one fabric. */
static void test_lossy_local_nic_on_rail_optimised_fabric(void)
{
	check_lossy_local_nic("railgray");
}

/* Local NIC 0 flaps six times. The policy counts each flap's transport
 * timeouts across endpoint generations and quarantines the rail; each later
 * failure quarantines it again with a doubled cooldown (flap damping), so
 * the cooldowns seen grow. The traffic goes to NIC 1 meanwhile: nothing
 * fails (off: TE's own rail pauses fail thousands of tasks), no group is
 * left without a usable path, no long stall. */
static void test_flapping_rail_quarantined_with_growing_cooldown(void)
{
	struct mcc_scn_result r;
	if (!run_arms("flap6", NULL, &r))
		return;
	CU_ASSERT(r.nq_cooldown >= 3);
	for (uint32_t i = 1; i < r.nq_cooldown; i++)
		CU_ASSERT(r.q_cooldown_ms[i] > r.q_cooldown_ms[i - 1]);
	CU_ASSERT(r.quarantines >= 3);
	CU_ASSERT_EQUAL(r.tasks_failed, 0);
	CU_ASSERT_EQUAL(r.fault_nup, 0);
	CU_ASSERT(r.fault_stall_ns < 1000000000ull);
}

/* Both NICs of the peer down for 2.5 s: no path is usable. Once the last of
 * the sender's routes is quarantined its waiting tasks read LONG_UNAVAILABLE
 * within 2 epochs (the sampler reads every 250 us); a probe during the
 * outage fails and quarantines again. Nothing is lost. */
static void test_both_rails_down_reads_long_unavailable(void)
{
	struct mcc_scn_result r;
	if (!run_arms("bothdown", NULL, &r))
		return;
	CU_ASSERT(r.lu_after_allq_ns >= 0 && r.lu_after_allq_ns <= 2000000);
	CU_ASSERT(r.fault_lu_reads > 0);
	CU_ASSERT(r.fault_nup > 0);
	CU_ASSERT(r.quarantines >= 2);
}

/* RETRY_EXC_ERR on a few WRs in many on local NIC 0, each on a fresh
 * endpoint (rxe's answer to reordering and duplication): the traffic
 * moves to NIC 1 (at least 70 % of the bytes), nothing fails. */
static void test_retry_exc_bursts_hand_the_traffic_off(void)
{
	struct mcc_scn_result off, r;
	if (!run_arms("dupreorder", &off, &r))
		return;
	printf("(wc errors off %llu enforce %llu) ", (unsigned long long)off.wc_errors,
	       (unsigned long long)r.wc_errors);
	CU_ASSERT(off.wc_errors > 0); /* the fault does end WRs with errors */
	CU_ASSERT(r.quarantines >= 1);  /* counted across generations */
	CU_ASSERT(r.nq_cooldown >= 1);
	CU_ASSERT(r.fault_share >= 0.70);
	CU_ASSERT_EQUAL(r.tasks_failed, 0);
	CU_ASSERT_EQUAL(r.fault_nup, 0);
	CU_ASSERT(r.goodput_gbps > off.goodput_gbps);
}

static int init_suite(void)
{
	mdir = getenv("MCC_TEST_MODULE_DIR");
	return mdir ? 0 : 1;
}

MCC_CU_SUITE(t_init_hosts_faults_tests, "hosts_faults", init_suite, NULL,
             test_lossy_local_nic_moves_bytes_without_a_stall,
             test_lossy_local_nic_on_rail_optimised_fabric,
             test_flapping_rail_quarantined_with_growing_cooldown,
             test_both_rails_down_reads_long_unavailable,
             test_retry_exc_bursts_hand_the_traffic_off)

MCC_CU_MAIN(t_init_hosts_faults_tests)
