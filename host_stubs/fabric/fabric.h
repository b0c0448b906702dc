/* SPDX-License-Identifier: MIT */
/*
 * fabric.h - the verbs-shaped fabric interface the host stubs post to.
 *
 * A backend is a vtable (struct mcc_fab_ops) over opaque objects. Every call
 * maps 1:1 onto libibverbs so a real backend is a thin shim:
 *
 *   open_device      ibv_open_device (+ ibv_query_device / ibv_query_port)
 *   create_cq        ibv_create_cq (notify ~ completion channel readiness)
 *   reg_mr/dereg_mr  ibv_reg_mr / ibv_dereg_mr
 *   create_qp        ibv_create_qp (RC, send CQ = recv CQ)
 *   connect_qp       ibv_modify_qp INIT->RTR->RTS (timeout, retry_cnt,
 *                    rnr_retry, min_rnr_timer as in TE rdma_endpoint.cpp)
 *   reset_qp         ibv_modify_qp(IBV_QPS_ERR): outstanding WRs flush
 *   destroy_qp       ibv_destroy_qp
 *   post_send        ibv_post_send (linked WRs, bad_wr, errno return)
 *   poll_cq          ibv_poll_cq (batch; raw enum ibv_wc_status, vendor_err)
 *   get_async_event  ibv_get_async_event on a non-blocking async_fd
 *                    (raw enum ibv_event_type); ack = ibv_ack_async_event
 *
 * Status and event numbers are the raw libibverbs enums (infiniband/verbs.h
 * is included for the numbers only; nothing here links libibverbs).
 * Threading: like verbs, every call is thread-safe.
 */
#ifndef MCC_FABRIC_H
#define MCC_FABRIC_H

#include <infiniband/verbs.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mcc_fab mcc_fab;         /* one backend instance ("the fabric") */
typedef struct mcc_fab_dev mcc_fab_dev; /* ibv_context */
typedef struct mcc_fab_cq mcc_fab_cq;   /* ibv_cq */
typedef struct mcc_fab_qp mcc_fab_qp;   /* ibv_qp (RC) */

/* Address of one port on the fabric (what a handshake exchanges: GID+QPN). */
struct mcc_fab_addr {
	uint32_t node; /* machine */
	uint32_t dev;  /* device index on the machine */
	uint32_t port; /* 1-based */
	uint32_t qp_num;
};

struct mcc_fab_device_attr {
	char name[32];          /* "mlx5_0" */
	uint32_t node;          /* machine the device sits in */
	uint32_t dev;           /* device index on the machine */
	uint32_t num_ports;
	uint32_t max_qp_wr;
	uint32_t max_cqe;
	uint64_t link_rate_bps; /* per port */
};

enum mcc_fab_port_state { MCC_FAB_PORT_DOWN = 1, MCC_FAB_PORT_ACTIVE = 4 }; /* ibv_port_state */

struct mcc_fab_mr {
	void *addr;
	size_t length;
	uint32_t lkey;
	uint32_t rkey;
	mcc_fab_dev *dev;
};

/* RTR/RTS attributes (TE/TENT defaults: 14, 7, 7, 12). */
struct mcc_fab_qp_attr {
	uint32_t port_num;
	uint32_t max_send_wr;
	uint8_t timeout;       /* local ACK timeout: 4.096 us * 2^timeout */
	uint8_t retry_cnt;     /* transport retries */
	uint8_t rnr_retry;     /* RNR retries; 7 = infinite (IB spec) */
	uint8_t min_rnr_timer; /* IB encoding (12 = 0.64 ms) */
	uint32_t generation;   /* host tag echoed in diagnostics */
};

/* ibv_send_wr reduced to one SGE and the one-sided opcodes. */
struct mcc_fab_send_wr {
	uint64_t wr_id;
	struct mcc_fab_send_wr *next;
	int opcode; /* IBV_WR_RDMA_WRITE or IBV_WR_RDMA_READ */
	uint64_t local_addr;
	uint32_t length;
	uint32_t lkey;
	uint64_t remote_addr;
	uint32_t rkey;
	uint32_t reserved0;
};

/* ibv_wc, the fields the engines read. */
struct mcc_fab_wc {
	uint64_t wr_id;
	int status;  /* raw enum ibv_wc_status */
	int opcode;  /* raw enum ibv_wc_opcode */
	uint32_t vendor_err;
	uint32_t byte_len;
	uint32_t qp_num;
	uint32_t reserved0;
};

/* ibv_async_event, flattened (element by kind). */
struct mcc_fab_async_event {
	int event_type; /* raw enum ibv_event_type */
	uint32_t port_num;
	uint32_t cq_id;
	uint32_t qp_num;
	void *qp_context; /* ibv_qp->qp_context of the QP named, or NULL */
	void *cq_context; /* ibv_cq->cq_context of the CQ named, or NULL */
};

/* Readiness callback: completion channel / async_fd became readable. */
typedef void (*mcc_fab_notify_fn)(void *arg);

struct mcc_fab_ops {
	const char *name;
	int (*num_devices)(mcc_fab *fab, uint32_t node);
	mcc_fab_dev *(*open_device)(mcc_fab *fab, uint32_t node, uint32_t dev);
	void (*close_device)(mcc_fab_dev *dev);
	int (*query_device)(mcc_fab_dev *dev, struct mcc_fab_device_attr *attr);
	int (*query_port)(mcc_fab_dev *dev, uint32_t port, int *state);
	void (*set_async_notify)(mcc_fab_dev *dev, mcc_fab_notify_fn fn, void *arg);

	mcc_fab_cq *(*create_cq)(mcc_fab_dev *dev, uint32_t cqe, void *cq_context,
	                         mcc_fab_notify_fn notify, void *arg);
	void (*destroy_cq)(mcc_fab_cq *cq);
	uint32_t (*cq_id)(const mcc_fab_cq *cq);

	int (*reg_mr)(mcc_fab_dev *dev, void *addr, size_t len, struct mcc_fab_mr *out);
	int (*dereg_mr)(struct mcc_fab_mr *mr);

	mcc_fab_qp *(*create_qp)(mcc_fab_dev *dev, mcc_fab_cq *cq, const struct mcc_fab_qp_attr *attr,
	                         void *qp_context);
	int (*connect_qp)(mcc_fab_qp *qp, const struct mcc_fab_addr *remote);
	int (*reset_qp)(mcc_fab_qp *qp);
	int (*destroy_qp)(mcc_fab_qp *qp);
	uint32_t (*qp_num)(const mcc_fab_qp *qp);
	int (*local_addr)(const mcc_fab_qp *qp, struct mcc_fab_addr *out);

	/* 0, or an errno (ENOMEM: send queue full; EINVAL: bad WR; EIO: device
	 * dead); *bad_wr is the first WR not handed to the hardware. */
	int (*post_send)(mcc_fab_qp *qp, struct mcc_fab_send_wr *wr, struct mcc_fab_send_wr **bad_wr);
	/* Number of WCs written (0..n), or negative errno. */
	int (*poll_cq)(mcc_fab_cq *cq, int n, struct mcc_fab_wc *wc);
	/* 0 with *ev filled, or -EAGAIN when none is pending (non-blocking fd). */
	int (*get_async_event)(mcc_fab_dev *dev, struct mcc_fab_async_event *ev);
	void (*ack_async_event)(struct mcc_fab_async_event *ev);
};

/* A fabric: backend ops plus its instance. */
struct mcc_fab_handle {
	const struct mcc_fab_ops *ops;
	mcc_fab *fab;
};

/* ACK-timeout arithmetic of a real RC QP: one local ACK timeout is
 * 4.096 us * 2^timeout; a dead path fails a WR after (retry_cnt + 1) of them. */
static inline uint64_t mcc_fab_ack_timeout_ns(unsigned timeout)
{
	return timeout ? (uint64_t)4096 << timeout : 0; /* 4096 ns * 2^timeout */
}
static inline uint64_t mcc_fab_retry_exc_ns(unsigned timeout, unsigned retry_cnt)
{
	return (uint64_t)(retry_cnt + 1) * mcc_fab_ack_timeout_ns(timeout);
}
/* IB RNR timer encoding -> ns (table of IBTA 9.7.5.2.8, subset). */
uint64_t mcc_fab_rnr_timer_ns(unsigned code);

#ifdef __cplusplus
}
#endif
#endif /* MCC_FABRIC_H */
