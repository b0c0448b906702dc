/* SPDX-License-Identifier: MIT */
/*
 * scenario.h - scenarios of RFC #4162's acceptance list run on the fabric
 * model with the TE or TENT host stub, under either executor. Compiled once
 * per arm (hooks in / out); the runner and the tests link one arm.
 */
#ifndef MCC_SCENARIO_H
#define MCC_SCENARIO_H

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

enum mcc_scn_engine { MCC_SCN_TE = 0, MCC_SCN_TENT = 1 };

struct mcc_scn_opts {
	const char *scenario;   /* healthy, incast, flap, multinic, rxpressure, flush, peercut,
	                         * probefail, nicloss, grayloss (specs/NAME.ini) */
	const char *mode;       /* off | observe | enforce (ignored when compiled out) */
	int engine;             /* enum mcc_scn_engine */
	int exec;               /* enum mcc_exec_kind */
	uint64_t seed;
	double duration_s;      /* 0: the scenario's default */
	int quick;              /* test scale: shorter, smaller */
	const char *module_dir; /* policy modules (NULL: the loader's default) */
	const char *timeline_csv; /* NULL: none */
	const char *module;     /* optional [policy] module override (name or path) */
	const char *ini_extra;  /* optional text appended to the generated ini (e.g. a
	                         * [controller] section) */
	const char *spec_path;  /* a scenario description file (README.md in
	                         * host_stubs/scenario/); overrides `scenario`, a
	                         * built-in name resolved to its compiled-in spec */
};

#define MCC_SCN_MAX_FLOWS 80

struct mcc_scn_result {
	char scenario[16], arm[16], engine[8];
	double duration_s;
	double goodput_gbps;      /* verified bytes of the bulk flows / time */
	double cpu_ms;            /* process CPU time of the run (real) */
	double vcpu_ms;           /* engine steps' virtual CPU (sim) */
	double p50_us, p99_us, p999_us; /* completion latency (victim flow if any) */
	uint64_t queue_peak_bytes;
	uint64_t queue_peak_steady_bytes; /* over the last 40 % of the run */
	double pause_ms;
	uint64_t bytes_lost, bytes_corrupted, bytes_failed;
	int64_t permits_leaked;
	uint64_t tasks_done, tasks_failed;
	uint64_t task_states[4];  /* caller-visible states seen at completion */
	uint64_t defers, avoids, admits, rail_pauses, wc_errors, flushes;
	uint64_t quarantines, probes; /* summed route-domain stats */
	uint32_t watch_final_state; /* route watched by the scenario */
	uint32_t healthy_quarantined; /* routes on healthy devices ever quarantined */
	char state_timeline[160]; /* watched route: distinct successive states */
	double flow_gbps[MCC_SCN_MAX_FLOWS];
	uint32_t nflows;
	/* fairness (RESULT jain= fair_from= fair_gbps=): the bulk flows' Gb/s
	 * over [fair_from, fair_to] (the last start + fair_settle_ms, the
	 * earliest bulk stop or the run's end), in spec order; Jain's index over
	 * them (1 when fewer than 2) */
	double jain, fair_from_s, fair_to_s;
	double fair_gbps[MCC_SCN_MAX_FLOWS];
	uint32_t nfair;
	double qavg_bytes;        /* time-weighted mean egress queue to the watched
	                           * receiver port over the last 40 % of the run */
	double vp99_us;           /* p99 completion latency of victim flows (0: none) */
	double total_gbps;        /* verified bytes of every flow, victims included, over
	                           * the bulk flows' active interval */
	double prio_p99_us[3];    /* p99 completion latency of the flows at TENT priority
	                           * HIGH, MEDIUM, LOW (victims included; 0: none) */
	int measured;             /* MCC_SCN_MEAS_* (not in the RESULT line) */
	uint64_t digest;          /* determinism digest (excludes real CPU) */
	uint64_t posted;          /* WRs the hosts handed to the fabric */
	/* watched route's endpoint generations (peercut; 0: not seen; not in
	 * the RESULT line): the route's own when first sampled QUARANTINED and
	 * the highest that had ended a WR with a hard error by then; the
	 * route's own when first sampled HEALTHY or CONGESTED after PROBING
	 * (the recovery probe's) and the highest failed one by then */
	uint32_t watch_q_gen, watch_q_failed_gen, watch_rec_gen, watch_rec_failed_gen;
	/* local-device hand-off (nicloss; not in the RESULT line): slices the
	 * hosts moved to another local device; when the last of the watched
	 * device's routes was sampled entering QUARANTINED (0: never); from then
	 * to the first hand-off sampled (-1: none) */
	uint64_t handoffs, allq_ns;
	int64_t handoff_ns;
	/* gray loss on the receiver's NIC 0 (grayloss; not in the RESULT line):
	 * NIC 1's share of the payload delivered from 1 s after the onset to
	 * the end of the loss, and from 1 s after its end to the end of the run
	 * (-1: not measured); the bytes delivered in the first interval */
	double gray_during, gray_after;
	uint64_t gray_bytes_during;
	/* faults (`[measure] faults`; not in the RESULT line; deterministic
	 * executor only): over [first fault + fault_settle_ms, last fault],
	 * sender 0's NIC 1 share of the payload it sent (-1: none sent); over
	 * [first fault, last fault], its longest stretch without a completed
	 * task, and the outstanding tasks the sampler read LONG_UNAVAILABLE;
	 * groups with no usable path (engine counter, whole run); the time from
	 * the sample in which no route of sender 0 to receiver 0 was usable
	 * (each QUARANTINED or PROBING) to the first LONG_UNAVAILABLE read after
	 * it (-1: none);
	 * the watched route's cooldown at each entry into QUARANTINED */
	double fault_share;
	uint64_t fault_stall_ns, fault_lu_reads, fault_nup;
	int64_t lu_after_allq_ns;
	uint64_t q_cooldown_ms[8];
	uint32_t nq_cooldown;
};

#define MCC_SCN_MEAS_GRAY 1
#define MCC_SCN_MEAS_HANDOFF 2
#define MCC_SCN_MEAS_FAULTS 4

/* Returns 0, -EINVAL for an unknown scenario or a bad spec file (the
 * message "FILE:LINE: ..." on stderr), or another -errno. */
int mcc_scn_run(const struct mcc_scn_opts *o, struct mcc_scn_result *r);
const char *const *mcc_scn_names(void);
/* Parses and checks a spec file without running it: 0, or -EINVAL with
 * "FILE:LINE: what" in err. */
int mcc_scn_check_spec(const char *path, char *err, size_t errlen);
/* One line "key=value ..." and its parser (runner <-> compile-out arm). */
void mcc_scn_result_write(FILE *f, const struct mcc_scn_result *r);
int mcc_scn_result_parse(const char *line, struct mcc_scn_result *r);

#ifdef __cplusplus
}
#endif
#endif /* MCC_SCENARIO_H */
