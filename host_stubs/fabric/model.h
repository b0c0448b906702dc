/* SPDX-License-Identifier: MIT */
/*
 * model.h - the in-process fabric model backend and its fault-injection API.
 *
 * Granularity is one WR (one slice): a WR is serialised by its sender port,
 * crosses its link (propagation delay), queues in the switch egress buffer of
 * the destination port (finite; lossless PFC-style pause of the ingress port
 * when above XOFF, resume below XON: incast queues and blocks the head of
 * line of every flow on a paused sender port), is serialised on the egress
 * link, lands in the receiver's memory (memcpy into the registered buffer:
 * payload really moves), and is acknowledged. Completions are delivered in
 * send-queue order per QP, as on an RC QP.
 *
 * Failure arithmetic follows real QPs: a WR lost on a dead path is
 * retransmitted every ACK timeout and fails with IBV_WC_RETRY_EXC_ERR after
 * (retry_cnt + 1) * 4.096 us * 2^timeout; a receiver without receive
 * resources NAKs (RNR) and the WR fails with IBV_WC_RNR_RETRY_EXC_ERR after
 * rnr_retry retries (7 = infinite); an errored QP flushes every other
 * outstanding WR with IBV_WC_WR_FLUSH_ERR.
 *
 * Time: the executor advances the model (mcc_fab_model_advance) and learns
 * its next event time; the model asks the executor to be advanced earlier
 * through the schedule callback. Its one read of a clock: a post first
 * advances it to the executor's time (mcc_fab_model_set_clock), since its own
 * time stands at its last event while nothing is due.
 */
#ifndef MCC_FABRIC_MODEL_H
#define MCC_FABRIC_MODEL_H

#include "fabric.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MCC_FAB_MAX_NODES 72
#define MCC_FAB_MAX_DEVS 8
#define MCC_FAB_MAX_PORTS 2
#define MCC_FAB_NEVER UINT64_MAX

struct mcc_fab_model_cfg {
	uint32_t nodes;
	uint32_t devs_per_node;
	uint32_t ports_per_dev;
	uint64_t link_bps;        /* per port, default 25 Gb/s */
	uint64_t prop_ns;         /* per link hop, default 1000 */
	uint64_t switch_buf_bytes;/* egress buffer per switch port (default 4 MiB) */
	uint64_t xoff_bytes;      /* pause ingress above (default buf - 1 MiB) */
	uint64_t xon_bytes;       /* resume below (default xoff / 2) */
	uint64_t seed;
	uint32_t max_qp_wr;       /* device limit, default 256 */
	uint32_t max_cqe;         /* device limit, default 4096 */
	uint32_t move_payload;    /* 1 (default): memcpy payload; 0: timing only */
	uint32_t rail_optimised;  /* 1: each NIC index is its own network (a rail):
	                           * a unit between NICs of different index is
	                           * lost at the switch; 0 (default): one fabric */
};

struct mcc_fab_model_stats {
	uint64_t wrs_posted;
	uint64_t wrs_completed;
	uint64_t bytes_delivered;  /* payload bytes written into remote memory */
	uint64_t wrs_lost;         /* units dropped on dead paths (retransmitted) */
	uint64_t rnr_naks;
	uint64_t pause_ns;         /* summed over ports: time spent paused */
	uint64_t pause_events;
	uint64_t queue_peak_bytes; /* max over switch egress queues */
	uint64_t flushed;
	uint64_t wc_errors;
	uint64_t cqe_dropped;      /* WCs lost to an errored CQ */
	uint64_t events;           /* internal events processed */
};

typedef struct mcc_fab_model mcc_fab_model;

void mcc_fab_model_cfg_defaults(struct mcc_fab_model_cfg *cfg);
/* The round trip of a WRITE on an empty path, without serialisation: three
 * propagation hops (sender -> switch, switch -> receiver, the ACK back), the
 * figure an operator of this fabric would state ([engine] base_rtt_us). */
uint64_t mcc_fab_model_base_rtt_ns(const struct mcc_fab_model_cfg *cfg);
mcc_fab_model *mcc_fab_model_create(const struct mcc_fab_model_cfg *cfg);
void mcc_fab_model_destroy(mcc_fab_model *m);
/* The backend view for engines. */
struct mcc_fab_handle mcc_fab_model_handle(mcc_fab_model *m);

/* ---- driving (executors) */
typedef void (*mcc_fab_sched_fn)(void *arg, uint64_t at_ns);
void mcc_fab_model_set_sched(mcc_fab_model *m, mcc_fab_sched_fn fn, void *arg);
/* Process every event due at or before now_ns; returns the next event time
 * or MCC_FAB_NEVER. Thread-safe (the model has one lock). */
uint64_t mcc_fab_model_advance(mcc_fab_model *m, uint64_t now_ns);
/* The executor's clock (optional): a post first advances the model to it,
 * so a WR never starts at a time before it was posted. */
typedef uint64_t (*mcc_fab_clock_fn)(void *arg);
void mcc_fab_model_set_clock(mcc_fab_model *m, mcc_fab_clock_fn fn, void *arg);
uint64_t mcc_fab_model_now(mcc_fab_model *m);

/* ---- measurement */
void mcc_fab_model_stats(mcc_fab_model *m, struct mcc_fab_model_stats *out);
/* Current bytes queued at the switch egress towards (node, dev, port). */
uint64_t mcc_fab_model_queue_bytes(mcc_fab_model *m, uint32_t node, uint32_t dev, uint32_t port);
/* Max of the above since the last call (and reset). */
uint64_t mcc_fab_model_queue_peak_reset(mcc_fab_model *m);
/* Payload bytes delivered so far to (node, dev, port) as the data receiver. */
uint64_t mcc_fab_model_rx_bytes(mcc_fab_model *m, uint32_t node, uint32_t dev, uint32_t port);
/* Payload bytes sent from (node, dev, port) and delivered at their receiver. */
uint64_t mcc_fab_model_tx_bytes(mcc_fab_model *m, uint32_t node, uint32_t dev, uint32_t port);

/* ---- scripted faults (all take effect at the model's current time) */
/* Silent path failure on the link of (node, dev, port): WRs crossing it are
 * lost and time out; the local port stays ACTIVE (a cable/switch fault). */
void mcc_fab_fault_link(mcc_fab_model *m, uint32_t node, uint32_t dev, uint32_t port, int up);
/* Silent loss on the link of (node, dev, port): each WR crossing it is lost
 * with probability ppm / 1e6 per transmission (drawn from the model's seeded
 * generator) and retransmitted after the ACK timeout, failing
 * IBV_WC_RETRY_EXC_ERR when retry_cnt + 1 transmissions were lost. No port
 * event, the port stays ACTIVE: only WC errors and latency tell. 1000000 is
 * a silent blackhole (as link down), 0 clears; above 1000000 reads as 1000000. */
void mcc_fab_fault_loss(mcc_fab_model *m, uint32_t node, uint32_t dev, uint32_t port,
                        uint32_t ppm);
/* Local port error: IBV_EVENT_PORT_ERR, head WR of each QP on the port fails
 * IBV_WC_LOC_QP_OP_ERR, the rest flush; up=1: IBV_EVENT_PORT_ACTIVE. */
void mcc_fab_fault_port(mcc_fab_model *m, uint32_t node, uint32_t dev, uint32_t port, int up);
/* CQ error: IBV_EVENT_CQ_ERR; the CQ delivers nothing more (WCs are lost). */
void mcc_fab_fault_cq(mcc_fab_model *m, uint32_t node, uint32_t dev);
/* QP fatal: IBV_EVENT_QP_FATAL on the QP numbered qp_num (0: the first
 * connected QP of the device towards (peer_node, peer_dev)); it flushes. */
void mcc_fab_fault_qp_fatal(mcc_fab_model *m, uint32_t node, uint32_t dev, uint32_t peer_node,
                            uint32_t peer_dev);
/* Device fatal: IBV_EVENT_DEVICE_FATAL; all QPs flush; posts fail EIO. */
void mcc_fab_fault_device(mcc_fab_model *m, uint32_t node, uint32_t dev);
/* Path migration error on the first QP of (node, dev) towards peer. */
void mcc_fab_fault_path_mig(mcc_fab_model *m, uint32_t node, uint32_t dev, uint32_t peer_node,
                            uint32_t peer_dev);
/* Stale rkey: every MR of `node` gets a new rkey (re-registration); WRs with
 * the old one fail IBV_WC_REM_ACCESS_ERR. */
void mcc_fab_fault_rekey(mcc_fab_model *m, uint32_t node);
/* Slow receiver: (node, dev) accepts at most rate_bps of WR payload with a
 * burst of burst_bytes; beyond that it NAKs (RNR). rate_bps 0 clears. */
void mcc_fab_fault_slow_receiver(mcc_fab_model *m, uint32_t node, uint32_t dev, uint64_t rate_bps,
                                 uint64_t burst_bytes);
/* Look up the current rkey of the MR covering addr on node (metadata
 * service analog: the segment descriptor a host re-reads on refresh). */
uint32_t mcc_fab_model_lookup_rkey(mcc_fab_model *m, uint32_t node, uint32_t dev, const void *addr);

#ifdef __cplusplus
}
#endif
#endif /* MCC_FABRIC_MODEL_H */
