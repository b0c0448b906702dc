/* SPDX-License-Identifier: MIT */
/*
 * host_engine.h - one interface over the TE-like and TENT-like engine stubs
 * for what embeds them (the scenario runner, the verbs runner, the
 * end-to-end bench host): one-request batches, their status and
 * caller-visible congestion state, domain stats, counters. Each call goes to
 * the engine's own API (te.h, tent.h); nothing here keeps state.
 */
#ifndef MCC_HOST_ENGINE_H
#define MCC_HOST_ENGINE_H

#include "../te/te.h"
#include "../tent/tent.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Exactly one of te and tent is set. */
struct mcc_host_engine {
	te_engine *te;
	tent_engine *tent;
};

/* Both engines' configurations, each from its defaults: create makes the
 * engine `is_tent` names from its own. */
struct mcc_host_eng_cfg {
	int is_tent;
	struct te_config te;
	struct tent_config tent;
};
/* The defaults of both, local machine `node` set in both. */
void mcc_host_eng_cfg_defaults(struct mcc_host_eng_cfg *c, int is_tent, uint32_t node);
/* The QP settings both engines share, set in both (a negative one keeps
 * the default). */
void mcc_host_eng_cfg_ib(struct mcc_host_eng_cfg *c, int timeout, int retry_cnt, int rnr_retry);

/* Creates the engine into h (which it zeroes first) and points its task
 * completion notifier at done(arg, batch, task). 0 or -ENOMEM. */
int mcc_host_eng_create(struct mcc_host_engine *h, const struct mcc_host_eng_cfg *c,
                        const struct mcc_host_env *env,
                        void (*done)(void *arg, uint64_t batch, uint64_t task), void *arg);
/* Registers local memory (registerLocalMemory): the engine's return. */
int mcc_host_eng_register(const struct mcc_host_engine *h, void *addr, size_t len);
/* Destroys whichever engine h holds (none: nothing) and clears h. */
void mcc_host_eng_destroy(struct mcc_host_engine *h);

/* A transfer of one request (opcode: TE_OPCODE_READ/WRITE, which TENT's
 * TENT_OPCODE_* equal; tent_prio: TENT's priority, unused by TE). */
struct mcc_host_xfer {
	int opcode;
	void *src;
	uint32_t seg;
	uint64_t off, len;
	int tent_prio;
};

/* Allocates a batch, submits `x` as its one task. Returns 0 or -errno
 * (-ENOMEM when no batch could be allocated; *batch is then invalid). */
int mcc_host_eng_submit(const struct mcc_host_engine *h, const struct mcc_host_xfer *x,
                        uint64_t *batch);

/* Status of the task (getTransferStatus / tent_task_status). */
enum { MCC_HOST_PENDING = 0, MCC_HOST_DONE = 1, MCC_HOST_FAILED = 2 };
/* Returns MCC_HOST_*, or -errno when the engine cannot say (an unknown
 * batch); *transferred (may be NULL): bytes moved so far. */
int mcc_host_eng_status(const struct mcc_host_engine *h, uint64_t batch, uint64_t *transferred);

/* Caller-visible congestion state (enum mcc_task_state) and its detail;
 * the detail reads UNKNOWN when the engine has none. Return the engine's. */
int mcc_host_eng_cstate(const struct mcc_host_engine *h, uint64_t batch, int *state);
int mcc_host_eng_detail(const struct mcc_host_engine *h, uint64_t batch,
                        struct mcc_task_detail_v1 *d);

/* freeBatchID: 0 or -errno (-EBUSY while a task is unfinished). */
int mcc_host_eng_free(const struct mcc_host_engine *h, uint64_t batch);

/* Domain stats of context/device `ctx`: its route to (seg, dev), or the
 * device itself with seg = -1. */
int mcc_host_eng_dstats(const struct mcc_host_engine *h, uint32_t ctx, int seg, int dev,
                        struct mcc_domain_stats_v1 *out);
uint32_t mcc_host_eng_nctx(const struct mcc_host_engine *h);
void mcc_host_eng_stall(const struct mcc_host_engine *h, uint32_t ctx, uint64_t dur_ns);

/* The counters both engines keep. */
struct mcc_host_eng_stats {
	uint64_t defers, avoids, admits, rail_pauses, wc_errors, flushes, vcpu;
	int64_t permits_live;
	uint64_t posted, handoffs, retried;
	uint64_t no_usable_path; /* TE: groups with nowhere to go (site 9); TENT: 0 */
};
void mcc_host_eng_stats(const struct mcc_host_engine *h, struct mcc_host_eng_stats *o);

/* The controller mode in force ("off", "observe", "enforce", "compiled-out"). */
const char *mcc_host_eng_cc_mode(const struct mcc_host_engine *h);

#ifdef __cplusplus
}
#endif
#endif /* MCC_HOST_ENGINE_H */
