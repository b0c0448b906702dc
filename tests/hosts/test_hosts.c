/* SPDX-License-Identifier: MIT */
/*
 * test_hosts.c - the TE and TENT host stubs under the deterministic
 * executor: RFC outcomes per scenario, determinism, and the hook points
 * (through a spy policy module counting every callback).
 */
#include "../../host_stubs/fabric/fabric.h"
#include "../cu_driver.h"
#include "hosts_run.h"
#include "mcc_engine.h"
#include "mcc_policy_v1.h"
#include "spy.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *mdir;
static char spy_path[4096];
static struct mcc_spy *spy;
static void *spy_handle;

static int have_module(const char *name)
{
	char p[4200];
	snprintf(p, sizeof(p), "%s/mcc-policy-%s.so", mdir, name);
	return access(p, R_OK) == 0;
}

/* True (the test passes vacuously, saying so) when module `name` is not built. */
static int lacks(const char *name)
{
	return th_lacks_module(mdir, name);
}

/* One scenario run on the deterministic simulator: the quick variant, or
 * duration_s seconds when not 0. */
static int run_for(const char *scen, const char *mode, int engine, uint64_t seed,
                   double duration_s, struct mcc_scn_result *r)
{
	struct mcc_scn_opts o = th_sim_opts(mode, engine, seed, mdir);
	o.scenario = scen;
	o.quick = 1;
	o.duration_s = duration_s;
	if (!strcmp(mode, "spy")) {
		o.mode = "enforce";
		o.module = spy_path;
	}
	return mcc_scn_run(&o, r);
}

static int run(const char *scen, const char *mode, int engine, uint64_t seed,
               struct mcc_scn_result *r)
{
	return run_for(scen, mode, engine, seed, 0, r);
}

/* The scenario in two arms (modes a and b) on the same engine and seed. */
static void run_arms(const char *scen, const char *mode_a, const char *mode_b, int engine,
                     uint64_t seed, struct mcc_scn_result *a, struct mcc_scn_result *b)
{
	CU_ASSERT_EQUAL_FATAL(run(scen, mode_a, engine, seed, a), 0);
	CU_ASSERT_EQUAL_FATAL(run(scen, mode_b, engine, seed, b), 0);
}

/* Seeds the loss scenarios run with: 1 .. MCC_TEST_SEEDS (default 1; at
 * most 64), so a sanitizer build can replay them over many seeds:
 *   MCC_TEST_SEEDS=8 make check TESTS=tests/hosts/test_hosts */
static uint64_t test_seeds(void)
{
	const char *v = getenv("MCC_TEST_SEEDS");
	unsigned long n = v ? strtoul(v, NULL, 10) : 1;
	return n < 1 ? 1 : n > 64 ? 64 : n;
}

static void assert_clean(const struct mcc_scn_result *r)
{
	CU_ASSERT_EQUAL(r->bytes_lost, 0);
	CU_ASSERT_EQUAL(r->bytes_corrupted, 0);
	CU_ASSERT_EQUAL(r->permits_leaked, 0);
	CU_ASSERT(r->tasks_done > 0);
}

static void spy_reset(void)
{
	memset(spy, 0, sizeof(*spy));
}

/* ---------------------------------------------------------------- outcomes */

static void test_all_scenarios_deliver_every_byte_off_and_observe(void)
{
	for (const char *const *n = mcc_scn_names(); *n; n++) {
		if (!strcmp(*n, "flap") || !strcmp(*n, "peercut") || !strcmp(*n, "probefail") ||
		    !strcmp(*n, "nicloss") || !strcmp(*n, "flap6") || !strcmp(*n, "bothdown"))
			continue; /* long: covered in enforce (test_hosts_faults) */
		struct mcc_scn_result r;
		for (int en = 0; en < 2; en++) {
			CU_ASSERT_EQUAL_FATAL(run(*n, "off", en, 1, &r), 0);
			assert_clean(&r);
			/* controller off: the caller sees UNKNOWN only */
			CU_ASSERT_EQUAL(r.task_states[0] + r.task_states[1] + r.task_states[2], 0);
		}
	}
}

static void test_same_seed_twice_is_bit_identical(void)
{
	struct mcc_scn_result a, b, c;
	const char *mode = have_module("aimd") ? "enforce" : "off";
	CU_ASSERT_EQUAL_FATAL(run("incast", mode, 0, 7, &a), 0);
	CU_ASSERT_EQUAL_FATAL(run("incast", mode, 0, 7, &b), 0);
	CU_ASSERT_EQUAL(a.digest, b.digest);
	CU_ASSERT_EQUAL(a.queue_peak_bytes, b.queue_peak_bytes);
	CU_ASSERT_DOUBLE_EQUAL(a.p99_us, b.p99_us, 0.0);
	CU_ASSERT_EQUAL_FATAL(run("incast", mode, 0, 8, &c), 0);
	CU_ASSERT_NOT_EQUAL(a.digest, c.digest); /* the seed matters */
	CU_ASSERT_EQUAL_FATAL(run("flush", mode, 1, 3, &a), 0);
	CU_ASSERT_EQUAL_FATAL(run("flush", mode, 1, 3, &b), 0);
	CU_ASSERT_EQUAL(a.digest, b.digest);
}

static void test_healthy_enforce_keeps_goodput_and_stays_healthy(void)
{
	if (lacks("aimd"))
		return;
	for (int en = 0; en < 2; en++) {
		struct mcc_scn_result off, enf;
		run_arms("healthy", "off", "enforce", en, 1, &off, &enf);
		assert_clean(&off);
		assert_clean(&enf);
		printf("(%s goodput off %.2f enforce %.2f Gb/s, route %s) ", en ? "tent" : "te",
		       off.goodput_gbps, enf.goodput_gbps, enf.state_timeline);
		/* RFC: <= 3% large-transfer regression for healthy enforce (model
		 * time). 8 x 4 MiB outstanding on an uncongested path: the route
		 * never leaves HEALTHY; the device compares its drain time with the
		 * target (modules/core/README.md "Pressure"), so the host's own
		 * backlog beyond it is cut at the device, and the tasks that
		 * complete while the device is CONGESTED read CONGESTED (seed 1:
		 * TE 2 of 52, TENT 8 of 48 in this 30 ms run, most in its first
		 * cuts; 4 of 304 and 21 of 299 over 0.2 s) */
		CU_ASSERT(enf.goodput_gbps >= 0.97 * off.goodput_gbps);
		CU_ASSERT_STRING_EQUAL(enf.state_timeline, "HEALTHY");
		CU_ASSERT_EQUAL(enf.watch_final_state, MCC_PATH_HEALTHY);
		CU_ASSERT(enf.task_states[MCC_TASK_CONGESTED] * 4 <= enf.tasks_done);
		CU_ASSERT_EQUAL(enf.tasks_failed, 0);
		/* every WR went through admission (all lanes opened) */
		CU_ASSERT(enf.posted > 0 && enf.admits >= enf.posted);
		/* mode off bypasses the policy: no admission call at all */
		CU_ASSERT(off.posted > 0);
		CU_ASSERT_EQUAL(off.admits, 0);
	}
}

/* Small windows (as after cuts) on a healthy path: TENT's lanes and its
 * DeviceSelector must keep both devices busy (slices deferred on a full
 * device count as its load, so the next slices pick the other device), TE's
 * posters refill on every completion. A window well above the path's BDP
 * costs no goodput. */
static void test_small_windows_keep_healthy_goodput(void)
{
	if (lacks("aimd"))
		return;
	for (int en = 0; en < 2; en++) {
		struct mcc_scn_result off, enf;
		struct mcc_scn_opts o = th_sim_opts("enforce", en, 1, mdir);
		o.scenario = "healthy";
		o.quick = 1;
		o.ini_extra = "[controller]\nmax_window_bytes = 524288";
		CU_ASSERT_EQUAL_FATAL(run("healthy", "off", en, 1, &off), 0);
		CU_ASSERT_EQUAL_FATAL(mcc_scn_run(&o, &enf), 0);
		assert_clean(&enf);
		printf("(%s 512 KiB windows: %.2f of %.2f Gb/s) ", en ? "tent" : "te", enf.goodput_gbps,
		       off.goodput_gbps);
		CU_ASSERT(enf.defers > 0); /* the windows do bind */
		CU_ASSERT(enf.goodput_gbps >= 0.97 * off.goodput_gbps);
	}
}

static void test_incast_enforce_keeps_queue_below_off_with_goodput(void)
{
	if (lacks("aimd"))
		return;
	for (int en = 0; en < 2; en++) {
		struct mcc_scn_result off, enf;
		run_arms("incast", "off", "enforce", en, 1, &off, &enf);
		assert_clean(&off);
		assert_clean(&enf);
		printf("(%s steady queue peak off %llu KiB enforce %llu KiB; pause %.0f/%.0f ms; "
		       "goodput %.1f/%.1f Gb/s) ",
		       en ? "tent" : "te", (unsigned long long)off.queue_peak_steady_bytes >> 10,
		       (unsigned long long)enf.queue_peak_steady_bytes >> 10, off.pause_ms,
		       enf.pause_ms, off.goodput_gbps, enf.goodput_gbps);
		/* 17 engines share one policy instance: every WR of every sender
		 * went through admission */
		CU_ASSERT(enf.posted > 0 && enf.admits >= enf.posted);
		/* once the first burst (4 MiB per sender, committed before any
		 * control epoch) has drained, the route windows hold the switch
		 * queue far below the uncontrolled one, at the same goodput */
		CU_ASSERT(enf.queue_peak_steady_bytes <= off.queue_peak_steady_bytes / 2);
		CU_ASSERT(enf.pause_ms < 0.6 * off.pause_ms); /* PFC pause stops growing */
		CU_ASSERT(enf.goodput_gbps >= 0.95 * off.goodput_gbps);
		CU_ASSERT(enf.task_states[1] > 0); /* callers see CONGESTED */
	}
}

static void test_flapped_rail_quarantined_avoided_probed_recovered(void)
{
	if (lacks("aimd"))
		return;
	struct mcc_scn_result r;
	CU_ASSERT_EQUAL_FATAL(run("flap", "enforce", 0, 1, &r), 0);
	printf("(timeline %s, quarantines %llu, avoids %llu, probes %llu) ", r.state_timeline,
	       (unsigned long long)r.quarantines, (unsigned long long)r.avoids,
	       (unsigned long long)r.probes);
	assert_clean(&r);
	CU_ASSERT(r.quarantines >= 1);
	CU_ASSERT(r.avoids >= 1);
	CU_ASSERT(r.probes >= 1);
	CU_ASSERT(strstr(r.state_timeline, "QUARANTINED") != NULL);
	CU_ASSERT_EQUAL(r.watch_final_state, MCC_PATH_HEALTHY);
	CU_ASSERT_EQUAL(r.tasks_failed, 0);
}

/* A peer cable cut (tests/softroce verbs_peer_cut's shape on the model).
 * TENT resets an endpoint on its first error WC and builds the next
 * generation on the next post: the error that reaches the threshold is on
 * an endpoint rebuilt after an earlier failure, and the one rebuilt after
 * it already exists at the quarantining tick. The policy fences the
 * generation the failures were seen on, so the recovery probe runs on that
 * rebuilt, never-failed endpoint (fencing the route's newest generation
 * left the route PROBING for good: every admission AVOID, no probe). */
static void test_peer_cut_recovers_on_endpoint_rebuilt_before_quarantine(void)
{
	if (lacks("aimd"))
		return;
	for (int en = 0; en < 2; en++) {
		struct mcc_scn_result r;
		CU_ASSERT_EQUAL_FATAL(run("peercut", "enforce", en, 1, &r), 0);
		printf("(%s: timeline %s; failed gen %u, gen %u at quarantine; failed gen %u, gen %u at "
		       "recovery; probes %llu) ",
		       en ? "tent" : "te", r.state_timeline, r.watch_q_failed_gen, r.watch_q_gen,
		       r.watch_rec_failed_gen, r.watch_rec_gen, (unsigned long long)r.probes);
		assert_clean(&r);
		CU_ASSERT_EQUAL(r.tasks_failed, 0);
		CU_ASSERT(strstr(r.state_timeline, "SUSPECT>QUARANTINED>PROBING") != NULL);
		CU_ASSERT_EQUAL(r.watch_final_state, MCC_PATH_HEALTHY);
		CU_ASSERT(r.probes >= 1);
		/* the quarantining error came from a rebuilt endpoint */
		CU_ASSERT(r.watch_q_failed_gen >= 2);
		if (en == 1) /* TENT: its next endpoint was there at the quarantine */
			CU_ASSERT(r.watch_q_gen > r.watch_q_failed_gen);
		/* recovered on a generation that never failed */
		CU_ASSERT(r.watch_rec_gen > r.watch_rec_failed_gen);
	}
}

/* Observe computes and records but changes nothing the engine does: with a
 * peer cut (quarantine, probing, recovery computed all the way) both engines
 * move exactly what they move with the controller off. (The scenario's link
 * once came back at a time counted from the first QUARANTINED sample, which
 * an off arm never has: off then ran on a longer outage, and observe read as
 * 1.5x-5x "better" than off.) */
static void test_observe_changes_nothing_under_a_peer_cut(void)
{
	if (lacks("observe"))
		return;
	for (int en = 0; en < 2; en++) {
		struct mcc_scn_result off, obs;
		run_arms("peercut", "off", "observe", en, 1, &off, &obs);
		printf("(%s: off %.3f Gb/s %llu tasks, observe %.3f Gb/s %llu tasks, %s) ",
		       en ? "tent" : "te", off.goodput_gbps, (unsigned long long)off.tasks_done,
		       obs.goodput_gbps, (unsigned long long)obs.tasks_done, obs.state_timeline);
		assert_clean(&obs);
		CU_ASSERT(strstr(obs.state_timeline, "QUARANTINED>PROBING") != NULL);
		CU_ASSERT_EQUAL(obs.tasks_done, off.tasks_done);
		CU_ASSERT_EQUAL(obs.tasks_failed, off.tasks_failed);
		CU_ASSERT_DOUBLE_EQUAL(obs.goodput_gbps, off.goodput_gbps, 0.0);
		CU_ASSERT_DOUBLE_EQUAL(obs.p99_us, off.p99_us, 0.0);
		CU_ASSERT_EQUAL(obs.queue_peak_bytes, off.queue_peak_bytes);
	}
}

/* Issue 14: the blackhole outlives the first cooldown, so the first
 * recovery probe fails: the route goes back to QUARANTINED (PROBING ->
 * QUARANTINED, a new cooldown) instead of recovering or failing over for
 * good, and only the later probe after the link returns recovers it (TENT
 * within the run; TE's second, flap-damped cooldown outlasts the run). No
 * task fails (the other rail carries them) and nothing is lost. */
static void test_failed_probe_requarantines_the_route(void)
{
	if (lacks("aimd"))
		return;
	for (int en = 0; en < 2; en++) {
		struct mcc_scn_result r;
		CU_ASSERT_EQUAL_FATAL(run("probefail", "enforce", en, 1, &r), 0);
		printf("(%s: timeline %s; quarantines %llu probes %llu failed %llu final %u) ",
		       en ? "tent" : "te", r.state_timeline, (unsigned long long)r.quarantines,
		       (unsigned long long)r.probes, (unsigned long long)r.tasks_failed,
		       r.watch_final_state);
		assert_clean(&r);
		CU_ASSERT(strstr(r.state_timeline, "QUARANTINED>PROBING>QUARANTINED") != NULL);
		CU_ASSERT(r.quarantines >= 2);
		CU_ASSERT(r.probes >= 1);
		CU_ASSERT_EQUAL(r.tasks_failed, 0); /* the other rail carried them */
		if (en == 1) /* TENT: the second probe, after the link is back */
			CU_ASSERT_EQUAL(r.watch_final_state, MCC_PATH_HEALTHY);
	}
}

/* Issue 14: a silent blackhole on one of two local NICs (no port event).
 * Enforce fails no task, and AVOID does not storm: at most one AVOID per
 * admitted slice (before: millions, each charging the slice's retry budget
 * and bouncing it between the peer NICs of the same local NIC). TE runs
 * 5 s: at about 4 s its own rail pause takes the last route of NIC 0 out
 * (both rails paused), and every slice still sent to NIC 0 used to fail as
 * "all rails failed" (2278 tasks) instead of going to NIC 1. */
static void test_local_nic_loss_enforce_fails_nothing_and_avoid_does_not_storm(void)
{
	if (lacks("aimd"))
		return;
	for (uint64_t i = 0; i < 2 * test_seeds(); i++) {
		const int en = (int)(i % 2);
		const uint64_t seed = 1 + i / 2;
		struct mcc_scn_result r;
		CU_ASSERT_EQUAL_FATAL(run_for("nicloss", "enforce", en, seed, en ? 0 : 5.0, &r), 0);
		printf("(%s: avoids %llu admits %llu handoffs %llu failed %llu, last quarantine %.1f ms, "
		       "hand-off after %.2f ms) ",
		       en ? "tent" : "te", (unsigned long long)r.avoids, (unsigned long long)r.admits,
		       (unsigned long long)r.handoffs, (unsigned long long)r.tasks_failed,
		       (double)r.allq_ns / 1e6, r.handoff_ns < 0 ? -1.0 : (double)r.handoff_ns / 1e6);
		assert_clean(&r);
		CU_ASSERT_EQUAL(r.tasks_failed, 0);
		CU_ASSERT(r.admits > 0);
		CU_ASSERT(r.avoids <= r.admits);
		CU_ASSERT_EQUAL(r.healthy_quarantined, 0); /* NIC 1 never blamed */
		/* handed to NIC 1 within 2 epochs (1 ms, the default) of the last
		 * route of NIC 0 being quarantined; when the policy quarantines
		 * none (the engine's own rail pause took them out first) there is
		 * no AVOID to answer */
		if (!r.allq_ns) {
			printf("(no route of NIC 0 quarantined: hand-off not exercised) ");
			continue;
		}
		/* TENT may have moved its traffic off NIC 0 before that: its lossy
		 * routes read their delayed completions as queueing, are paced,
		 * and the DEFER spill takes their slices to NIC 1 */
		if (en && r.handoff_ns < 0) {
			/* TENT answered its AVOIDs on NIC 0's other route or had
			 * spilled everything already: nothing failed (above) and
			 * few AVOIDs (seeds 1-3: 1, 1, 11 of 109,000+ admits) */
			CU_ASSERT(r.avoids * 1000 <= r.admits);
			continue;
		}
		CU_ASSERT(r.handoffs > 0);
		CU_ASSERT(r.handoff_ns >= 0 && r.handoff_ns <= 2000000);
	}
}

/* Issue 14: gray loss, a quarter of the data units towards the receiver's
 * NIC 0 lost from 0.5 s to 2.5 s (no error WC: each costs an ACK timeout).
 * The route reads the delayed completions as queueing and is held near its
 * minimum window; the host moves what it DEFERs there to a sibling path
 * (defer_spill in both: TE another NIC of the peer, TENT another local
 * device's own rail), so from 1 s after the onset at least 70 % of the bytes
 * arrive on the healthy rail, from 1 s after the end the rails share again,
 * and the run delivers at least what off does. Before defer_spill TE kept
 * 52 % on the lossy rail and delivered 8 MB in that second (off: 270 MB);
 * TENT without it kept everything on the lossy rail at seed 6 (3.5 MB). */
static void test_gray_loss_moves_bytes_to_the_healthy_rail_and_back(void)
{
	if (lacks("aimd"))
		return;
	for (uint64_t i = 0; i < 2 * test_seeds(); i++) {
		const int en = (int)(i % 2);
		const uint64_t seed = 1 + i / 2;
		struct mcc_scn_result r, off;
		run_arms("grayloss", "off", "enforce", en, seed, &off, &r);
		printf("(%s seed %llu: healthy rail %.1f %% during, %.1f %% after, %.1f Gb/s, off %.1f) ",
		       en ? "tent" : "te", (unsigned long long)seed, 100 * r.gray_during,
		       100 * r.gray_after, r.goodput_gbps, off.goodput_gbps);
		assert_clean(&r);
		CU_ASSERT_EQUAL(r.tasks_failed, 0);
		CU_ASSERT(r.gray_during >= 0.70);
		CU_ASSERT(r.gray_after >= 0.40 && r.gray_after <= 0.60);
		/* no worse than off by more than the RFC's 3 %: TE at seeds 2
		 * and 3 delivers 0.996x and 1.02x of off with this law (the
		 * previous one 1.25-1.39x; docs/results.md), TENT 1.22-1.35x */
		CU_ASSERT(r.goodput_gbps >= 0.97 * off.goodput_gbps);
	}
}

static void test_receiver_pressure_does_not_slow_other_receivers(void)
{
	const char *mode = have_module("aimd") ? "enforce" : "off";
	for (int en = 0; en < 2; en++) {
		struct mcc_scn_result off, p;
		run_arms("rxpressure", "off", mode, en, 1, &off, &p);
		assert_clean(&p);
		printf("(%s flows off %.1f %.1f %.1f, %s %.1f %.1f %.1f Gb/s) ", en ? "tent" : "te",
		       off.flow_gbps[0], off.flow_gbps[1], off.flow_gbps[2], mode, p.flow_gbps[0],
		       p.flow_gbps[1], p.flow_gbps[2]);
		/* the receivers that are not under pressure keep their share: the
		 * slow receiver's stuck bytes do not drive the shared device
		 * domain (RFC WC matrix, RNR_RETRY_EXC_ERR) */
		CU_ASSERT(p.flow_gbps[0] + p.flow_gbps[2] >
		          0.8 * (off.flow_gbps[0] + off.flow_gbps[2]));
		CU_ASSERT(p.flow_gbps[0] > 25.0 / 3 * 0.8);
		CU_ASSERT(p.flow_gbps[2] > 25.0 / 3 * 0.8);
		CU_ASSERT(p.flow_gbps[1] < p.flow_gbps[0]);
	}
}

static void test_failed_device_never_marks_remote_peer_down(void)
{
	const char *mode = have_module("aimd") ? "enforce" : "off";
	for (int en = 0; en < 2; en++) {
		struct mcc_scn_result r;
		CU_ASSERT_EQUAL_FATAL(run("multinic", mode, en, 1, &r), 0);
		assert_clean(&r);
		CU_ASSERT_EQUAL(r.tasks_failed, 0);
		CU_ASSERT_EQUAL(r.healthy_quarantined, 0); /* routes via devices 2,3 */
		CU_ASSERT_EQUAL(r.task_states[MCC_TASK_LONG_UNAVAILABLE], 0);
	}
}

static void test_flush_burst_and_stale_rkey_are_not_path_failures(void)
{
	const char *mode = have_module("aimd") ? "enforce" : "off";
	for (int en = 0; en < 2; en++) {
		struct mcc_scn_result r;
		CU_ASSERT_EQUAL_FATAL(run("flush", mode, en, 1, &r), 0);
		assert_clean(&r);
		CU_ASSERT_EQUAL(r.tasks_failed, 0);
		CU_ASSERT_EQUAL(r.quarantines, 0);
		CU_ASSERT_EQUAL(r.task_states[MCC_TASK_LONG_UNAVAILABLE], 0);
	}
}

/* ------------------------------------------------------------- hook points */

static void test_every_admitted_slice_settles_exactly_once(void)
{
	for (int en = 0; en < 2; en++) {
		struct mcc_scn_result r;
		spy_reset();
		CU_ASSERT_EQUAL_FATAL(run("flush", "spy", en, 1, &r), 0);
		assert_clean(&r);
		CU_ASSERT(atomic_load(&spy->admit) > 0);
		CU_ASSERT_EQUAL(atomic_load(&spy->live_bytes), 0);
		CU_ASSERT_EQUAL(atomic_load(&spy->over_settle), 0);
		CU_ASSERT_EQUAL(atomic_load(&spy->admit),
		                atomic_load(&spy->completion) + atomic_load(&spy->release));
		CU_ASSERT(atomic_load(&spy->wc_status[IBV_WC_WR_FLUSH_ERR]) > 0);
		CU_ASSERT(atomic_load(&spy->progress) > 0); /* poller_progress per pass */
		CU_ASSERT(atomic_load(&spy->tick) > 0);     /* monitor epochs */
		CU_ASSERT(atomic_load(&spy->async_type[IBV_EVENT_QP_FATAL]) > 0);
		printf("(en %d: rebuilt %llu stale %llu qpfatal %llu) ", en,
		       (unsigned long long)atomic_load(&spy->sig_kind[MCC_SIG_ENDPOINT_REBUILT]),
		       (unsigned long long)atomic_load(&spy->sig_kind[MCC_SIG_METADATA_STALE]),
		       (unsigned long long)atomic_load(&spy->async_type[IBV_EVENT_QP_FATAL]));
		if (en == 0) /* TE rebuilds the endpoint of the fatal QP on the next post */
			CU_ASSERT(atomic_load(&spy->sig_kind[MCC_SIG_ENDPOINT_REBUILT]) > 0);
		CU_ASSERT(atomic_load(&spy->sig_kind[MCC_SIG_METADATA_STALE]) > 0);
		CU_ASSERT_EQUAL(atomic_load(&spy->batch_free), r.tasks_done + r.tasks_failed);
		CU_ASSERT(atomic_load(&spy->task_query) >= r.tasks_done);
		if (en == 1) /* TENT feeds DeviceSelector telemetry */
			CU_ASSERT(atomic_load(&spy->sig_kind[MCC_SIG_DEVICE_TELEMETRY]) > 0);
	}
}

static void test_defer_leaves_slices_queued_and_loses_nothing(void)
{
	for (int en = 0; en < 2; en++) {
		struct mcc_scn_result r;
		spy_reset();
		atomic_store(&spy->defer_first, 5000);
		CU_ASSERT_EQUAL_FATAL(run("healthy", "spy", en, 1, &r), 0);
		assert_clean(&r);
		CU_ASSERT(r.defers >= 5000);
		CU_ASSERT_EQUAL(r.tasks_failed, 0);
		CU_ASSERT_EQUAL(atomic_load(&spy->live_bytes), 0);
	}
}

/* TENT priorities beside the policy: one sender, a LOW bulk flow and a
 * HIGH flow of 64 KiB tasks on the same path; the spy DEFERs every LOW
 * slice until 200 HIGH slices were admitted. A deferred LOW slice must not
 * hold the HIGH ones back (they are admitted while LOW waits), and with
 * [host] qos = 1 the class reaches the policy (try_acquire_qos); with
 * qos = 0 it does not (try_acquire, nothing deferred by class). */
static const char qos_spec[] = "[scenario]\nname = qos-spy\nduration_s = 0.05\n"
                               "[host]\nqos = %d\n"
                               "[flow.bulk]\nsize = 1M\noutstanding = 4\npriority = low\n"
                               "[flow.high]\nsize = 64K\noutstanding = 1\nvictim = 1\n"
                               "priority = high\n";

/* `path` (a mkstemp template) filled with `fmt` and its arguments. */
__attribute__((format(printf, 2, 0))) static int vwrite_tmp(char *path, const char *fmt,
                                                             va_list ap)
{
	int fd = mkstemp(path);
	if (fd < 0)
		return -1;
	FILE *f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(path);
		return -1;
	}
	vfprintf(f, fmt, ap);
	return fclose(f);
}

__attribute__((format(printf, 2, 3))) static int write_tmp(char *path, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = vwrite_tmp(path, fmt, ap);
	va_end(ap);
	return rc;
}

/* The scenario `fmt` (with its arguments) on engine `eng`, enforce, with
 * the spy as the policy. */
__attribute__((format(printf, 3, 4))) static int run_spy_spec(enum mcc_scn_engine eng,
                                                               struct mcc_scn_result *r,
                                                               const char *fmt, ...)
{
	char path[] = "/tmp/mcc-spy-spec-XXXXXX";
	va_list ap;
	va_start(ap, fmt);
	int wrc = vwrite_tmp(path, fmt, ap);
	va_end(ap);
	if (wrc != 0)
		return -1;
	struct mcc_scn_opts o = th_sim_opts("enforce", eng, 1, mdir);
	o.spec_path = path;
	o.module = spy_path;
	int rc = mcc_scn_run(&o, r);
	unlink(path);
	return rc;
}

static void test_tent_deferred_low_never_holds_high(void)
{
	struct mcc_scn_result r;
	spy_reset();
	atomic_store(&spy->defer_low_until_high, 200);
	CU_ASSERT_EQUAL_FATAL(run_spy_spec(MCC_SCN_TENT, &r, qos_spec, 1), 0);
	assert_clean(&r);
	CU_ASSERT_EQUAL(r.tasks_failed, 0);
	CU_ASSERT(atomic_load(&spy->qos_admit[MCC_QOS_HIGH]) >= 200);
	CU_ASSERT(atomic_load(&spy->low_deferred_after_high) > 0); /* LOW waited meanwhile */
	CU_ASSERT(atomic_load(&spy->qos_admit[MCC_QOS_LOW]) > 0);  /* and went on after */
	CU_ASSERT_EQUAL(atomic_load(&spy->qos_acquire[MCC_QOS_MEDIUM]), 0); /* promotion keeps
	                                                                    * the class */
	CU_ASSERT_EQUAL(atomic_load(&spy->live_bytes), 0);
	CU_ASSERT(r.prio_p99_us[MCC_QOS_HIGH] > 0);
	CU_ASSERT(r.prio_p99_us[MCC_QOS_LOW] > 0);

	spy_reset();
	atomic_store(&spy->defer_low_until_high, 200);
	CU_ASSERT_EQUAL_FATAL(run_spy_spec(MCC_SCN_TENT, &r, qos_spec, 0), 0);
	assert_clean(&r);
	for (int c = 0; c < MCC_QOS_CLASS_COUNT_; c++)
		CU_ASSERT_EQUAL(atomic_load(&spy->qos_acquire[c]), 0);
	CU_ASSERT_EQUAL(atomic_load(&spy->defer), 0);
	CU_ASSERT(atomic_load(&spy->admit) > 0);
}

/* The fabric's base RTT reaches the policy: the runner states it as the
 * fabric's operator would ([engine] base_rtt_us = 3 x prop_ns, rounded up
 * to a microsecond; [host] base_rtt = 0: not stated), and both engines pass
 * it in every route descriptor (mcc_engine_base_rtt_ns). */
static const char rtt_spec[] = "[scenario]\nname = rtt-spy\nduration_s = 0.02\n"
                               "[fabric]\nprop_ns = 50000\n[host]\nbase_rtt = %d\n"
                               "[flow.bulk]\nsize = 256K\noutstanding = 2\n";

static void test_hosts_state_the_fabric_base_rtt(void)
{
	for (int eng = 0; eng < 2; eng++)
		for (int stated = 0; stated < 2; stated++) {
			spy_reset();
			atomic_store(&spy->last_base_rtt_ns, 1); /* neither figure */
			struct mcc_scn_result r;
			CU_ASSERT_EQUAL_FATAL(
			        run_spy_spec(eng ? MCC_SCN_TENT : MCC_SCN_TE, &r, rtt_spec, stated), 0);
			assert_clean(&r);
			CU_ASSERT(atomic_load(&spy->route_open) > 0);
			CU_ASSERT_EQUAL(atomic_load(&spy->last_base_rtt_ns), stated ? 150000u : 0u);
		}
}

/* The engine SDK gives [engine] base_rtt_us to a route opened without a
 * figure of its own (mcc_engine_route_open); a host's own figure wins. */
static void test_sdk_route_open_passes_the_stated_base_rtt(void)
{
	char ini[] = "/tmp/mcc-rtt-ini-XXXXXX";
	CU_ASSERT_EQUAL_FATAL(
	        write_tmp(ini, "[policy]\nmode = enforce\nmodule = %s\n[engine]\nbase_rtt_us = 150\n",
	                  spy_path),
	        0);
	struct mcc_loader_opts lo;
	memset(&lo, 0, sizeof(lo));
	lo.struct_size = sizeof(lo);
	lo.engine = "te";
	lo.ini_path = ini;
	lo.ignore_env = 1;
	struct mcc_engine_opts eo;
	memset(&eo, 0, sizeof(eo));
	eo.struct_size = sizeof(eo);
	eo.tick = MCC_ENGINE_TICK_POLL;
	eo.loader = &lo;
	mcc_engine *e = NULL;
	spy_reset();
	CU_ASSERT_EQUAL_FATAL(mcc_engine_open(&eo, &e), 0);
	unlink(ini);
	CU_ASSERT_EQUAL(mcc_engine_base_rtt_ns(e), 150000u);
	struct mcc_device_desc_v1 dd = {sizeof(dd), 0, "mlx5_0", 1, 0, 0, 0};
	mcc_device *dev = NULL;
	CU_ASSERT_EQUAL_FATAL(mcc_engine_device_open(e, &dd, &dev), 0);
	mcc_engine_route *r1 = NULL, *r2 = NULL;
	CU_ASSERT_EQUAL(mcc_engine_route_open(e, dev, "p:1@mlx5_0", 10, 1, NULL, &r1),
	                MCC_ENGINE_ROUTE_NEW);
	CU_ASSERT_EQUAL(atomic_load(&spy->last_base_rtt_ns), 150000u);
	struct mcc_route_desc_v1 own = {sizeof(own), 1, 0, 0, 0, NULL, 0, 5000};
	CU_ASSERT_EQUAL(mcc_engine_route_open(e, dev, "p:1@mlx5_1", 10, 1, &own, &r2),
	                MCC_ENGINE_ROUTE_NEW);
	CU_ASSERT_EQUAL(atomic_load(&spy->last_base_rtt_ns), 5000u);
	CU_ASSERT_EQUAL(mcc_engine_route_close(e, "p:1@mlx5_0", 10), 0);
	CU_ASSERT_EQUAL(mcc_engine_route_close(e, "p:1@mlx5_1", 10), 0);
	mcc_engine_route_put(r1);
	mcc_engine_route_put(r2);
	CU_ASSERT_EQUAL(mcc_engine_device_close(e, dev), 0);
	mcc_engine_close(e);
	spy_reset();
}

static void test_avoid_redispatches_to_other_rail_without_penalty(void)
{
	for (int en = 0; en < 2; en++) {
		struct mcc_scn_result r;
		spy_reset();
		strcpy(spy->avoid_suffix, "@mlx5_0");
		CU_ASSERT_EQUAL_FATAL(run("healthy", "spy", en, 1, &r), 0);
		assert_clean(&r);
		CU_ASSERT(r.avoids > 0);
		CU_ASSERT_EQUAL(r.rail_pauses, 0); /* an avoidance is not a failure */
		CU_ASSERT_EQUAL(r.tasks_failed, 0);
		spy->avoid_suffix[0] = 0;
	}
}

static void test_hosts_send_only_subscribed_signals_and_events(void)
{
	for (int en = 0; en < 2; en++) {
		struct mcc_scn_result r;
		/* subscribed to everything: the flush scenario produces metadata,
		 * rebuild (TE) and telemetry (TENT) signals and QP_FATAL events */
		spy_reset();
		CU_ASSERT_EQUAL_FATAL(run("flush", "spy", en, 1, &r), 0);
		CU_ASSERT(atomic_load(&spy->sig_kind[MCC_SIG_METADATA_STALE]) > 0);
		CU_ASSERT(atomic_load(&spy->async) > 0);
		if (en == 1)
			CU_ASSERT(atomic_load(&spy->sig_kind[MCC_SIG_DEVICE_TELEMETRY]) > 0);
		/* subscribed to nothing of it: nothing is delivered */
		spy_reset();
		atomic_store(&spy->sig_unsubscribed, (1ull << MCC_SIG_METADATA_STALE) |
		                                         (1ull << MCC_SIG_DEVICE_TELEMETRY) |
		                                         (1ull << MCC_SIG_ENDPOINT_REBUILT));
		atomic_store(&spy->no_async, 1);
		CU_ASSERT_EQUAL_FATAL(run("flush", "spy", en, 1, &r), 0);
		assert_clean(&r);
		CU_ASSERT_EQUAL(atomic_load(&spy->sig_unwanted), 0);
		CU_ASSERT_EQUAL(atomic_load(&spy->async_unwanted), 0);
		CU_ASSERT_EQUAL(atomic_load(&spy->sig_kind[MCC_SIG_DEVICE_TELEMETRY]), 0);
		CU_ASSERT(atomic_load(&spy->admit) > 0); /* the data path still runs */
		/* realistic max_lanes: every lane id the host opens is below it */
		CU_ASSERT(atomic_load(&spy->lane_open) > 0);
		CU_ASSERT_EQUAL(atomic_load(&spy->lane_over), 0);
		CU_ASSERT(atomic_load(&spy->max_lanes) <= (en ? 7u : 2u * 3u));
		spy_reset();
	}
}

static void test_local_nic_handoff_rebinds_route(void)
{
	struct mcc_scn_result r;
	spy_reset();
	CU_ASSERT_EQUAL_FATAL(run("multinic", "spy", 0, 1, &r), 0);
	assert_clean(&r);
	CU_ASSERT(atomic_load(&spy->route_rebind) > 0);
	CU_ASSERT(atomic_load(&spy->async_type[IBV_EVENT_DEVICE_FATAL]) > 0);
	CU_ASSERT(atomic_load(&spy->async_type[IBV_EVENT_PORT_ERR]) > 0);
}

static int init_suite(void)
{
	mdir = getenv("MCC_TEST_MODULE_DIR");
	const char *bd = getenv("MCC_TEST_BUILDDIR");
	if (!mdir || !bd)
		return 1;
	snprintf(spy_path, sizeof(spy_path), "%s/tests/hosts/.libs/mcc-policy-spy.so", bd);
	spy_handle = dlopen(spy_path, RTLD_NOW | RTLD_LOCAL);
	if (!spy_handle)
		return 1;
	spy = dlsym(spy_handle, "mcc_spy");
	return spy ? 0 : 1;
}

static int fini_suite(void)
{
	if (spy_handle)
		dlclose(spy_handle);
	return 0;
}

MCC_CU_SUITE(t_init_hosts_tests, "hosts", init_suite, fini_suite,
             test_all_scenarios_deliver_every_byte_off_and_observe,
             test_same_seed_twice_is_bit_identical,
             test_healthy_enforce_keeps_goodput_and_stays_healthy,
             test_small_windows_keep_healthy_goodput,
             test_incast_enforce_keeps_queue_below_off_with_goodput,
             test_flapped_rail_quarantined_avoided_probed_recovered,
             test_peer_cut_recovers_on_endpoint_rebuilt_before_quarantine,
             test_observe_changes_nothing_under_a_peer_cut,
             test_failed_probe_requarantines_the_route,
             test_local_nic_loss_enforce_fails_nothing_and_avoid_does_not_storm,
             test_gray_loss_moves_bytes_to_the_healthy_rail_and_back,
             test_receiver_pressure_does_not_slow_other_receivers,
             test_failed_device_never_marks_remote_peer_down,
             test_flush_burst_and_stale_rkey_are_not_path_failures,
             test_every_admitted_slice_settles_exactly_once,
             test_defer_leaves_slices_queued_and_loses_nothing,
             test_tent_deferred_low_never_holds_high,
             test_hosts_state_the_fabric_base_rtt,
             test_sdk_route_open_passes_the_stated_base_rtt,
             test_avoid_redispatches_to_other_rail_without_penalty,
             test_local_nic_handoff_rebinds_route,
             test_hosts_send_only_subscribed_signals_and_events)

MCC_CU_MAIN(t_init_hosts_tests)
