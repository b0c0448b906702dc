/* SPDX-License-Identifier: MIT */
/*
 * policy.h - what a thin module (modules/aimd, modules/observe,
 * modules/delay) needs from the shared core: the init entry bound to a mode
 * and a control law (law.h), and a descriptor initialiser that fills every
 * callback with the core's implementation.
 *
 *     static int my_init(const struct mcc_host_v1 *h, const struct mcc_config_v1 *c,
 *                        struct mcc_init_out_v1 *o, void **ctx)
 *     { return mcc_core_init(h, c, o, ctx, MCC_MODE_ENFORCE, &mcc_law_aimd); }
 *     MCC_POLICY_V1_DEFINE = MCC_CORE_DESCRIPTOR("aimd", "...", MCC_MODE_ENFORCE,
 *                                                caps, my_init);
 */
#ifndef MCC_CORE_POLICY_H
#define MCC_CORE_POLICY_H

#include "law.h"
#include "mcc_policy_v1.h"

int mcc_core_init(const struct mcc_host_v1 *host, const struct mcc_config_v1 *cfg,
                  struct mcc_init_out_v1 *out, void **ctx, enum mcc_mode mode,
                  const struct mcc_law *law);
void mcc_core_fini(void *ctx);
int mcc_core_lane_open(void *ctx, const struct mcc_lane_desc_v1 *desc, mcc_lane **lane);
void mcc_core_lane_close(void *ctx, mcc_lane *lane);
int mcc_core_device_open(void *ctx, const struct mcc_device_desc_v1 *desc, mcc_device **dev);
void mcc_core_device_close(void *ctx, mcc_device *dev);
int mcc_core_route_open(void *ctx, mcc_device *dev, const struct mcc_route_desc_v1 *desc,
                        mcc_route **route);
int mcc_core_route_rebind(void *ctx, mcc_route *route, mcc_device *dev, uint32_t port_num,
                          uint32_t cq_id);
void mcc_core_route_close(void *ctx, mcc_route *route);
int mcc_core_try_acquire(mcc_lane *lane, mcc_route *route, uint64_t bytes, uint32_t generation,
                         const struct mcc_task_ref_v1 *task, struct mcc_permit_v1 *permit);
int mcc_core_try_acquire_qos(mcc_lane *lane, mcc_route *route, uint64_t bytes,
                             uint32_t generation, const struct mcc_task_ref_v1 *task,
                             uint32_t qos_class, struct mcc_permit_v1 *permit);
int mcc_core_release(mcc_lane *lane, struct mcc_permit_v1 *permit, uint64_t bytes, uint32_t reason);
void mcc_core_on_completion(mcc_lane *lane, struct mcc_permit_v1 *permit,
                            const struct mcc_completion_v1 *wc);
void mcc_core_poller_progress(mcc_lane *lane, mcc_device *dev, uint32_t ncqe);
void mcc_core_on_async_event(void *ctx, const struct mcc_async_event_v1 *ev);
void mcc_core_on_signal(void *ctx, const struct mcc_signal_v1 *sig);
void mcc_core_tick(void *ctx, uint64_t now_ns);
int mcc_core_task_query(void *ctx, const struct mcc_task_ref_v1 *task, uint32_t host_flags,
                        struct mcc_task_detail_v1 *out);
void mcc_core_batch_free(void *ctx, uint64_t batch_id);
int mcc_core_domain_stats(void *ctx, int kind, const void *domain, struct mcc_domain_stats_v1 *out);
int mcc_core_dump(void *ctx, int fd);
int mcc_core_config_check(const char *key, const char *value, char *why, size_t len);

#define MCC_CORE_DESCRIPTOR(NAME, DESC, MODE, CAPS, INIT)                     \
	{                                                                     \
		.abi_version = MCC_POLICY_ABI_V1,                             \
		.struct_size = sizeof(struct mcc_policy_v1),                  \
		.name = (NAME),                                               \
		.description = (DESC),                                        \
		.mode = (MODE),                                               \
		.caps = (CAPS),                                               \
		.init = (INIT),                                               \
		.fini = mcc_core_fini,                                        \
		.lane_open = mcc_core_lane_open,                              \
		.lane_close = mcc_core_lane_close,                            \
		.device_open = mcc_core_device_open,                          \
		.device_close = mcc_core_device_close,                        \
		.route_open = mcc_core_route_open,                            \
		.route_rebind = mcc_core_route_rebind,                        \
		.route_close = mcc_core_route_close,                          \
		.try_acquire = mcc_core_try_acquire,                          \
		.release = mcc_core_release,                                  \
		.on_completion = mcc_core_on_completion,                      \
		.poller_progress = mcc_core_poller_progress,                  \
		.on_async_event = mcc_core_on_async_event,                    \
		.on_signal = mcc_core_on_signal,                              \
		.tick = mcc_core_tick,                                        \
		.task_query = mcc_core_task_query,                            \
		.batch_free = mcc_core_batch_free,                            \
		.domain_stats = mcc_core_domain_stats,                        \
		.dump = mcc_core_dump,                                        \
		.config_check = mcc_core_config_check,                        \
		.try_acquire_qos = mcc_core_try_acquire_qos,                  \
	}

/* A module over the core, its mode stated once: the init that runs the core
 * with law LAW in mode MODE, and the descriptor that declares MODE.
 *   MCC_CORE_MODULE(aimd, "aimd", "...", MCC_MODE_ENFORCE, caps, mcc_law_aimd); */
#define MCC_CORE_MODULE(ID, NAME, DESC, MODE, CAPS, LAW)                                  \
	static int ID##_init(const struct mcc_host_v1 *host, const struct mcc_config_v1 *cfg, \
	                     struct mcc_init_out_v1 *out, void **ctx)                         \
	{                                                                                 \
		return mcc_core_init(host, cfg, out, ctx, (MODE), &(LAW));                \
	}                                                                                 \
	MCC_POLICY_V1_DEFINE = MCC_CORE_DESCRIPTOR(NAME, DESC, MODE, CAPS, ID##_init)

#endif /* MCC_CORE_POLICY_H */
