/* SPDX-License-Identifier: MIT */
/*
 * te.h - host stub of Mooncake's classic Transfer Engine RDMA transport
 * (RdmaTransport / RdmaContext / WorkerPool / RdmaEndPoint), running on the
 * fabric interface (fabric.h) under either executor (exec.h), with the
 * congestion-control hooks of RFC #4162 at the engine's own points.
 *
 * Public surface mirrors include/transfer_engine_c.h: batches, requests,
 * getTransferStatus (status code + transferred bytes, STATUS_* numbers),
 * freeBatchID; plus the RFC caller queries as a C API.
 */
#ifndef MCC_TE_H
#define MCC_TE_H

#include "../common/hostenv.h"
#include "mcc_policy_v1.h" /* types only (struct mcc_task_detail_v1) */

#ifdef __cplusplus
extern "C" {
#endif

/* transfer_engine_c.h status codes */
#define TE_STATUS_WAITING 0
#define TE_STATUS_PENDING 1
#define TE_STATUS_INVALID 2
#define TE_STATUS_CANCELED 3
#define TE_STATUS_COMPLETED 4
#define TE_STATUS_TIMEOUT 5
#define TE_STATUS_FAILED 6

#define TE_OPCODE_READ 0
#define TE_OPCODE_WRITE 1
#define TE_INVALID_BATCH UINT64_MAX

typedef struct te_engine te_engine;

struct te_request {
	int opcode;
	void *source;
	int32_t target_id; /* segment id */
	uint64_t target_offset;
	uint64_t length;
};

struct te_transfer_status {
	int status;
	uint64_t transferred_bytes;
};

struct te_config {
	uint32_t node;            /* local machine on the fabric */
	uint32_t num_devices;     /* contexts to open (0: all) */
	uint32_t workers_per_ctx; /* MC_WORKERS_PER_CTX, default 2 */
	uint32_t slice_size;      /* MC_SLICE_SIZE, default 65536 */
	uint32_t max_wr;          /* MC_MAX_WR, default 256 */
	uint32_t num_qp_per_ep;   /* MC_NUM_QP_PER_EP, default 2 */
	uint32_t max_cqe;         /* MC_MAX_CQE_PER_CTX, default 4096 */
	uint32_t retry_cnt;       /* MC_RETRY_CNT, default 9 */
	uint8_t ib_timeout, ib_retry_cnt, ib_rnr_retry, ib_min_rnr_timer; /* 14 7 7 12 */
	uint32_t rail_pause_s;    /* MC_RDMA_RAIL_PAUSE_SECONDS, default 30 */
	uint64_t ctx_recovery_delay_ns; /* kContextRecoveryDelayNs, default 30 s */
	uint32_t monitor_period_us;     /* monitor loop period, default = epoch (1000) */
	uint32_t reserved0;
};

struct te_stats {
	uint64_t slices_posted, slices_completed, slices_failed, slices_retried;
	uint64_t wc_errors, flushes, post_rejects;
	uint64_t defers, avoids, admits;           /* hook decisions seen by the host */
	uint64_t endpoints_created, endpoints_deleted;
	uint64_t rail_pauses, handoffs, rebinds;
	uint64_t spills;                           /* slices rerouted to another peer NIC (site 9) */
	uint64_t reroute_peer, reroute_local;      /* groups rerouted (site 9; handoffs counts
	                                            * the slices moved to another local NIC) */
	uint64_t no_usable_path;                   /* groups with nowhere to go (site 9) */
	uint64_t avoided_hits;                     /* selections that passed over a marked path */
	uint64_t async_events, reclaimed;
	int64_t permits_live;                      /* admitted, not yet settled */
	uint64_t cpu_virtual_ns;                   /* sim: summed step costs */
};

void te_config_defaults(struct te_config *cfg);
te_engine *te_engine_create(const struct te_config *cfg, const struct mcc_host_env *env);
/* Quiesce (the executor must be stopped) and free. */
void te_engine_destroy(te_engine *e);

int te_register_memory(te_engine *e, void *addr, size_t len);
uint64_t te_allocate_batch(te_engine *e, size_t batch_size);
int te_submit(te_engine *e, uint64_t batch_id, const struct te_request *reqs, size_t n);
int te_get_transfer_status(te_engine *e, uint64_t batch_id, size_t task_id,
                           struct te_transfer_status *st);
/* -EBUSY while a task is unfinished (freeBatchID). */
int te_free_batch(te_engine *e, uint64_t batch_id);

/* RFC caller observability: enum mcc_task_state in *state; UNKNOWN when
 * the hooks are compiled out or the controller is off. Valid until
 * te_free_batch. Never polls, posts or probes. 0 or -errno. */
int te_get_task_congestion_state(te_engine *e, uint64_t batch_id, uint64_t task_id, int *state);
int te_get_task_congestion_detail(te_engine *e, uint64_t batch_id, uint64_t task_id,
                                  struct mcc_task_detail_v1 *detail);

/* Completion notification (USE_EVENT_DRIVEN_COMPLETION analog). */
void te_set_task_notify(te_engine *e, void (*fn)(void *arg, uint64_t batch_id, uint64_t task_id),
                        void *arg);

void te_get_stats(te_engine *e, struct te_stats *out);
uint32_t te_num_contexts(const te_engine *e);
/* Host-side fault: the poller of context `ctx` makes no pass for dur_ns. */
void te_inject_poller_stall(te_engine *e, uint32_t ctx, uint64_t dur_ns);

/* Diagnostics for the scenario runner (ON arm with a live controller):
 * snapshot of the device domain of context `ctx` or of its route to
 * (segment, peer device). -ENOENT when absent, -EOPNOTSUPP compiled out. */
int te_domain_stats(te_engine *e, uint32_t ctx, int route_seg, int route_dev,
                    struct mcc_domain_stats_v1 *out);
/* "off", "observe", "enforce" or "compiled-out". */
const char *te_cc_mode(const te_engine *e);

#ifdef __cplusplus
}
#endif
#endif /* MCC_TE_H */
