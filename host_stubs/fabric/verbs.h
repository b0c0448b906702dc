/* SPDX-License-Identifier: MIT */
/*
 * verbs.h - the libibverbs backend of the fabric interface (fabric.h): real
 * RC QPs between real RDMA devices (Soft-RoCE rxe in the test guests),
 * registered memory, RDMA WRITE/READ of real payloads.
 *
 * Both "machines" of a host-stub world live in one process, so the backend
 * maps the hosts' (node, dev) addresses onto local RDMA devices by name
 * ("rxe0,rxe1;rxe2,rxe3": node 0 has rails rxe0 and rxe1, node 1 has rxe2
 * and rxe3). connect_qp performs the handshake in-process: it reads the
 * remote device's GID from a registry and creates the passive (responder) QP
 * on that device, as RdmaEndPoint::setupConnectionsByPassive would on the
 * peer, with fresh PSNs on both sides. Reconnecting a QP (connect_qp again)
 * takes both QPs RESET -> INIT -> RTR -> RTS with fresh PSNs. A QP can also
 * be connected to another host's active QP (remote qp_num != 0, looked up in
 * the registry); both sides then connect, and both reconnect together.
 *
 * Threads: no thread of its own and no second event loop. Completions are
 * reaped by ibv_poll_cq on the host's poller thread; async events by
 * ibv_get_async_event on a non-blocking async_fd, on the host's monitor
 * thread (the host calls get_async_event every monitor pass). A completion
 * channel would need a thread blocked on it, so CQ readiness (the notify
 * callback of create_cq) is signalled by the backend itself:
 *   - after every successful post_send (a WC will come), and
 *   - in "spin" poll mode (MCC_VERBS_POLL=spin), also after a poll pass that
 *     leaves WRs outstanding, so the poller keeps polling while work is in
 *     flight, like Mooncake's busy-polling workers. In "event" mode (the
 *     default) the host's own heartbeat (1 ms while WRs are outstanding)
 *     paces the poller between posts.
 * The async notify callback is never called (the monitor polls).
 *
 * QP timeouts: the hosts pass TE/TENT defaults (timeout 14, retry_cnt 7).
 * rxe treats retry_cnt 7 as "retry forever" and timeout 0 as "no retransmit
 * timer", so a dead peer would never be reported. The backend's qp_timeout /
 * qp_retry_cnt override what the host asks for (defaults 14 and 6: a dead
 * peer fails the head WR with IBV_WC_RETRY_EXC_ERR after about
 * (6 + 1) x 67 ms = 0.47 s); 0xff keeps the host's value.
 *
 * Environment (read by mcc_fab_verbs_cfg_defaults):
 *   MCC_VERBS_DEVICES      node map, e.g. "rxe0,rxe1;rxe2,rxe3"
 *   MCC_VERBS_IB_TIMEOUT   QP local ACK timeout exponent (14)
 *   MCC_VERBS_IB_RETRY_CNT QP transport retries (6)
 *   MCC_VERBS_GID_INDEX    GID index (default: the IPv4-mapped RoCE v2 GID)
 *   MCC_VERBS_POLL         event | spin (event)
 */
#ifndef MCC_FABRIC_VERBS_H
#define MCC_FABRIC_VERBS_H

#include "fabric.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MCC_FAB_VERBS_MAX_NODES 4
#define MCC_FAB_VERBS_MAX_DEVS 4
#define MCC_FAB_VERBS_KEEP 0xffu /* qp_timeout / qp_retry_cnt: use the host's */

enum mcc_fab_verbs_poll { MCC_FAB_VERBS_POLL_EVENT = 0, MCC_FAB_VERBS_POLL_SPIN = 1 };

struct mcc_fab_verbs_cfg {
	uint32_t nodes;
	uint32_t devs_per_node;
	char dev_name[MCC_FAB_VERBS_MAX_NODES][MCC_FAB_VERBS_MAX_DEVS][32];
	int gid_index;        /* -1: the IPv4-mapped RoCE v2 GID of each port */
	uint32_t qp_timeout;  /* MCC_FAB_VERBS_KEEP or 0..31 */
	uint32_t qp_retry_cnt;/* MCC_FAB_VERBS_KEEP or 0..7 */
	uint32_t poll_mode;   /* enum mcc_fab_verbs_poll */
	uint32_t reserved0;
};

/* Observer of everything the backend reaps (the run program prints it):
 * called on the thread that polled / read the event, after translation.
 * lat_ns: post-to-poll time of the WC (0 when unknown). Setting a wc
 * observer also makes post_send sample the clock once per post call. */
struct mcc_fab_verbs_trace {
	void (*wc)(void *arg, uint32_t node, uint32_t dev, const struct mcc_fab_wc *wc,
	           uint64_t lat_ns);
	void (*async)(void *arg, uint32_t node, uint32_t dev, const struct mcc_fab_async_event *ev);
	void *arg;
};

struct mcc_fab_verbs_stats {
	uint64_t wrs_posted, post_errors, wcs, wc_errors, async_events;
	uint64_t qps_created, passive_qps, connects, reconnects, resets, destroys;
	uint64_t bytes_posted;
};

typedef struct mcc_fab_verbs mcc_fab_verbs;

/* Defaults, then the MCC_VERBS_* environment (see above). */
void mcc_fab_verbs_cfg_defaults(struct mcc_fab_verbs_cfg *cfg);
/* Parse a node map "a,b;c,d" into cfg (nodes separated by ';', devices by
 * ','; every node needs the same number of devices). 0 or -EINVAL. */
int mcc_fab_verbs_cfg_devices(struct mcc_fab_verbs_cfg *cfg, const char *spec);

/* Opens nothing yet: devices open on first open_device. NULL on bad cfg. */
mcc_fab_verbs *mcc_fab_verbs_create(const struct mcc_fab_verbs_cfg *cfg);
/* Every object must have been closed/destroyed by its owner. */
void mcc_fab_verbs_destroy(mcc_fab_verbs *v);
struct mcc_fab_handle mcc_fab_verbs_handle(mcc_fab_verbs *v);
void mcc_fab_verbs_set_trace(mcc_fab_verbs *v, const struct mcc_fab_verbs_trace *t);
void mcc_fab_verbs_stats(mcc_fab_verbs *v, struct mcc_fab_verbs_stats *out);
/* WRs posted on the host's QPs of (node, dev) whose WC has not been polled
 * yet (0 for an unknown device). */
uint64_t mcc_fab_verbs_dev_outstanding(mcc_fab_verbs *v, uint32_t node, uint32_t dev);
/* Verbs device name of (node, dev), or NULL. */
const char *mcc_fab_verbs_dev_name(const mcc_fab_verbs *v, uint32_t node, uint32_t dev);
/* Drain and ack the async events of an open (node, dev) that no host
 * monitors (the passive side); each one goes to the trace. Returns the
 * number read. */
int mcc_fab_verbs_drain_async(mcc_fab_verbs *v, uint32_t node, uint32_t dev);

/* Diagnostics: one line per host QP (device, qp_num, verbs state queried
 * with ibv_query_qp, WRs posted and not yet polled when the trace is on,
 * the passive peer) to `f`. Slow path only. */
void mcc_fab_verbs_dump(mcc_fab_verbs *v, FILE *f);

/* Enum names as in <infiniband/verbs.h> ("IBV_WC_RETRY_EXC_ERR"). */
const char *mcc_fab_verbs_wc_status_name(int status);
const char *mcc_fab_verbs_event_name(int event_type);

#ifdef __cplusplus
}
#endif
#endif /* MCC_FABRIC_VERBS_H */
