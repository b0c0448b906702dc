/* SPDX-License-Identifier: MIT */
/*
 * tent.h - host stub of Mooncake TENT's RDMA transport (Workers, RdmaEndPoint,
 * DeviceSelector, RailMonitor) on the fabric interface, with the RFC #4162
 * hooks. C surface mirrors tent/include/tent/transfer_engine.h (tent_*),
 * plus the caller congestion queries. Built into libmcc_tent (hooks in).
 */
#ifndef MCC_TENT_H
#define MCC_TENT_H

#include "../common/hostenv.h"
#include "mcc_policy_v1.h" /* types only */

#ifdef __cplusplus
extern "C" {
#endif

/* TransferStatusEnum */
#define TENT_STATUS_INITIAL 0
#define TENT_STATUS_PENDING 1
#define TENT_STATUS_INVALID 2
#define TENT_STATUS_CANCELED 3
#define TENT_STATUS_COMPLETED 4
#define TENT_STATUS_TIMEOUT 5
#define TENT_STATUS_FAILED 6

#define TENT_OPCODE_READ 0
#define TENT_OPCODE_WRITE 1
#define TENT_PRIO_HIGH 0
#define TENT_PRIO_MEDIUM 1
#define TENT_PRIO_LOW 2

typedef struct tent_engine tent_engine;

typedef struct tent_request { /* callers must zero-init */
	int opcode;
	void *source;
	uint64_t target_id;
	uint64_t target_offset;
	uint64_t length;
	int priority;
	int transport_hint;
} tent_request_t;

typedef struct tent_status {
	int status;
	uint64_t transferred_bytes;
} tent_status_t;

struct tent_config {
	uint32_t node;
	uint32_t num_devices;     /* 0: all */
	uint32_t num_lanes;       /* transports/rdma/num_lanes (TENT default 6) */
	uint32_t block_size;      /* workers/block_size, 65536 */
	uint32_t max_qp_wr;       /* endpoint/max_qp_wr, 256 */
	uint32_t max_cqe;         /* 4096 */
	uint32_t max_retry_count; /* workers/max_retry_count, 8 */
	uint64_t max_timeout_ns;  /* software completion deadline, 10 s */
	uint8_t ib_timeout, ib_retry_cnt, ib_rnr_retry, ib_min_rnr_timer;
	uint32_t rail_error_threshold;   /* 3 */
	uint32_t rail_error_window_secs; /* 10 */
	uint32_t rail_cooldown_secs;     /* 30, doubling to 300 */
	uint32_t monitor_period_us;      /* 1000 */
	/* transports/rdma/priority_promotion_timeout_us, 10000: a lane's
	 * MEDIUM (LOW) slices that waited this long move up one tier; 0: never */
	uint32_t priority_promotion_timeout_us;
	const char *cc_plugin_dir;       /* "plugins/cc_dir": policy module directory */
	const char *cc_config;           /* policy ini (NULL: env / host default) */
};

struct tent_stats {
	uint64_t slices_posted, slices_completed, slices_failed, slices_retried;
	uint64_t wc_errors, flushes, timeouts, post_rejects;
	uint64_t defers, avoids, admits;
	uint64_t endpoints_created, endpoints_reset, rail_pauses, async_events, reclaimed;
	int64_t permits_live;
	uint64_t cpu_virtual_ns;
	uint64_t handoffs; /* slices moved to another local device after AVOID */
	uint64_t spills;   /* DEFERred slices moved to a sibling path (defer_spill) */
};

void tent_config_defaults(struct tent_config *cfg);
tent_engine *tent_engine_create(const struct tent_config *cfg, const struct mcc_host_env *env);
void tent_engine_destroy(tent_engine *e);

int tent_register_memory(tent_engine *e, void *addr, size_t len);
uint64_t tent_allocate_batch(tent_engine *e, size_t batch_size);
int tent_submit(tent_engine *e, uint64_t batch_id, const tent_request_t *reqs, size_t n);
/* 0 or -1 (tent_task_status semantics), layout unchanged. */
int tent_task_status(tent_engine *e, uint64_t batch_id, uint64_t task_id, tent_status_t *status);
int tent_free_batch(tent_engine *e, uint64_t batch_id);

/* RFC caller observability (enum mcc_task_state); 0 or -errno. */
int tent_get_task_congestion_state(tent_engine *e, uint64_t batch_id, uint64_t task_id, int *state);
int tent_get_task_congestion_detail(tent_engine *e, uint64_t batch_id, uint64_t task_id,
                                    struct mcc_task_detail_v1 *detail);

void tent_set_task_notify(tent_engine *e, void (*fn)(void *, uint64_t, uint64_t), void *arg);
void tent_get_stats(tent_engine *e, struct tent_stats *out);
uint32_t tent_num_devices(const tent_engine *e);
void tent_inject_poller_stall(tent_engine *e, uint32_t lane, uint64_t dur_ns);
int tent_domain_stats(tent_engine *e, uint32_t dev, int route_seg, int route_dev,
                      struct mcc_domain_stats_v1 *out);
const char *tent_cc_mode(const tent_engine *e);

/* A self-contained demo world (2 machines on the fabric model, sim
 * executor) for bindings and smoke tests: one WRITE of `bytes`, run to
 * completion; returns the batch id (task 0) or 0. */
typedef struct tent_demo tent_demo;
tent_demo *tent_demo_create(const char *cc_config, const char *cc_plugin_dir);
uint64_t tent_demo_transfer(tent_demo *d, uint64_t bytes);
tent_engine *tent_demo_engine(tent_demo *d);
void tent_demo_destroy(tent_demo *d);

#ifdef __cplusplus
}
#endif
#endif /* MCC_TENT_H */
