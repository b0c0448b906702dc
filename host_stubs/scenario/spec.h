/* SPDX-License-Identifier: MIT */
/*
 * spec.h - a scenario as data: the ini description (README.md in this
 * directory) parsed into a struct the scenario builder reads. Built-in
 * scenarios are the same files, compiled in as strings (specs_builtin.c,
 * generated from specs/ by the build).
 */
#ifndef MCC_SCN_SPEC_H
#define MCC_SCN_SPEC_H

#include <stddef.h>
#include <stdint.h>

#define MCC_SPEC_MAX_SENDERS 64
#define MCC_SPEC_MAX_RECEIVERS 4
#define MCC_SPEC_MAX_NICS 8
#define MCC_SPEC_MAX_FLOWS 80
#define MCC_SPEC_MAX_FAULTS 16
#define MCC_SPEC_MAX_SLOTS 16
#define MCC_SPEC_POLICY_MAX 1024

enum { MCC_SPEC_F_LINK_DOWN = 1, MCC_SPEC_F_LINK_UP, MCC_SPEC_F_PORT_DOWN, MCC_SPEC_F_DEV_FATAL,
       MCC_SPEC_F_QP_FATAL, MCC_SPEC_F_REKEY, MCC_SPEC_F_SLOW_RX, MCC_SPEC_F_CQ_ERR,
       MCC_SPEC_F_POLLER_STALL, MCC_SPEC_F_PATH_MIG, MCC_SPEC_F_LOSS };

struct mcc_spec_flow {
	char name[32];
	uint32_t sender;      /* one flow per sender after expansion */
	uint32_t receiver;    /* index among the receivers */
	uint32_t nic;         /* hint (ignored: the engines pick the NIC) */
	uint64_t size, rate_bps, start_ns, stop_ns;
	uint32_t outstanding;
	int victim;
	int priority;         /* MCC_SPEC_PRIO_* (TENT's request priority; TE ignores it) */
	int line;
};

/* [flow] priority: TENT's TENT_PRIO_* values. */
enum { MCC_SPEC_PRIO_HIGH = 0, MCC_SPEC_PRIO_MEDIUM = 1, MCC_SPEC_PRIO_LOW = 2 };

struct mcc_spec_fault {
	int kind;
	int has_at, has_frac, has_te, has_tent;
	uint64_t at_ns, at_te_ns, at_tent_ns;
	double at_frac;       /* fraction of the run length */
	uint32_t node, dev, peer_node, peer_dev;
	int node_rcv, peer_rcv; /* node / peer_node given as receiver index */
	int has_node;
	uint64_t arg;
	int line;
};

struct mcc_spec {
	char name[16];
	double duration_s, quick_duration_s; /* quick: 0 = duration_s */
	uint32_t senders, receivers, nics;
	uint64_t sample_ns;   /* 0: 1 ms quick, 0.5 ms otherwise */
	/* fabric: 0 = the model's default */
	uint64_t link_bps, prop_ns, switch_buf, xoff, xon;
	int rail_optimised;
	/* host */
	uint32_t ib_timeout, ib_retry, rnr_retry, rail_pause_s, tent_rail_cooldown_s;
	uint64_t recovery_ns;
	int tap;
	int qos;              /* [host] qos: [engine] qos = on in the generated policy ini */
	int base_rtt;         /* [host] base_rtt: [engine] base_rtt_us = the fabric's, stated */
	char policy[MCC_SPEC_POLICY_MAX]; /* "[controller]\n..." or "" */
	struct mcc_spec_flow flows[MCC_SPEC_MAX_FLOWS];
	uint32_t nflows;
	struct mcc_spec_fault faults[MCC_SPEC_MAX_FAULTS];
	uint32_t nfaults;
	/* measure */
	uint32_t watch_ctx, watch_receiver, watch_dev, healthy_from_ctx;
	uint64_t fair_settle_ns;
	int gray, handoff;
	int measure_faults;   /* fault measurement (FAULTS line) */
	uint64_t fault_settle_ns; /* its window starts this long after the first fault */
	uint64_t rx_buf;      /* receiver buffer override (0: from the flows' need) */
};

/* Parses `text` (named `file` in messages). 0, or -1 with "FILE:LINE: what"
 * in err. */
int mcc_spec_parse_string(const char *file, const char *text, struct mcc_spec *s, char *err,
                          size_t errlen);
int mcc_spec_parse_file(const char *path, struct mcc_spec *s, char *err, size_t errlen);
/* A built-in scenario's text (NULL: none of that name), and the names. */
const char *mcc_spec_builtin(const char *name);
const char *const *mcc_spec_builtin_names(void);

/* generated (specs_builtin.c) */
struct mcc_spec_builtin_ent {
	const char *name, *text;
};
extern const struct mcc_spec_builtin_ent mcc_spec_builtins[];
extern const char *const mcc_spec_builtin_name_list[];

#endif /* MCC_SCN_SPEC_H */
