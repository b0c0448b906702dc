/* SPDX-License-Identifier: MIT */
/*
 * hostenv.h - what a host engine stub is given by its embedder (the scenario
 * runner, a test): the executor, the fabric, the metadata service (segment
 * descriptors) and where the policy configuration lives. Shared by the TE
 * and TENT stubs; independent of the hook switch.
 */
#ifndef MCC_HOSTENV_H
#define MCC_HOSTENV_H

#include "../fabric/fabric.h"
#include "../fabric/model.h"
#include "../sim/exec.h"
#include "mcc_policy_v1.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A remote segment as the metadata service publishes it (TE
 * SegmentDesc / TENT SegmentInfo reduced): the machine, its NICs (with the
 * rkey of the segment's buffer on each) and the buffer. */
struct mcc_seg_desc {
	uint32_t node;
	uint32_t ndev;
	uint32_t nports;
	uint32_t reserved0;
	uint64_t base;
	uint64_t length;
	uint32_t rkey[8];
};

struct mcc_host_env {
	mcc_exec *ex;
	struct mcc_fab_handle fab;
	/* metadata service: GetSegmentDesc (re-read on refresh) */
	int (*get_segment)(void *arg, uint32_t segment_id, struct mcc_seg_desc *out);
	void *seg_arg;
	/* policy configuration: ini file (NULL: environment only) and module dir */
	const char *cc_ini_path;
	const char *cc_module_dir;
	int cc_ignore_env;
	/* max_lanes declared to the policy (0: the engine SDK's process-wide
	 * bound, MCC_ENGINE_LANES_MAX); the first engine's declaration is the
	 * instance's, so an embedder of several engines may declare the total */
	uint32_t cc_max_lanes;
	/* optional log sink for the policy (NULL: stderr) */
	void (*log)(void *, int, const char *, ...);
	void *log_arg;
};

/* Fills `out` for a segment of `len` bytes at `base` on `node`, one port on
 * each of its first `ndev` devices (at most 8), with the rkeys model `m`
 * holds for it now (after a re-key, the new ones). */
void mcc_host_seg_desc(struct mcc_seg_desc *out, mcc_fab_model *m, uint32_t node, uint32_t ndev,
                       const void *base, uint64_t len);

/* 64-bit checksum of a buffer (fast, for payload verification). */
uint64_t mcc_host_checksum(const void *p, size_t n);

/* The fabric model as an executor actor: advance it to `now` and return
 * when it next wants a step: its next event (or park) under the virtual-time
 * executor; under the threaded one, polled at least every 200 us. */
uint64_t mcc_host_fab_step(mcc_fab_model *m, mcc_exec *ex, uint64_t now);

/* That actor ("fabric", parked until the model schedules itself through its
 * scheduling hook, which wakes it): mcc_host_fab_actor_add fills `f` and
 * hands it to both, so `f` must outlive the executor and the model. */
struct mcc_host_fab_actor {
	mcc_fab_model *model;
	mcc_exec *ex;
	mcc_actor *actor;
};
void mcc_host_fab_actor_add(struct mcc_host_fab_actor *f, mcc_fab_model *m, mcc_exec *ex);

/* A two-node world for tests, benches and the demo: node 0 sends, node 1
 * holds `len` zeroed bytes at dst, registered on each of its devices and
 * served as segment 1 (get_segment); src is node 0's buffer of the same size
 * (zeroed). The model runs as the executor's fabric actor. env has ex, fab,
 * get_segment and seg_arg set, the rest zero: the caller's to fill. */
struct mcc_host_pair {
	mcc_exec *ex;
	mcc_fab_model *model;
	struct mcc_host_env env;
	struct mcc_host_fab_actor fab;
	char *src, *dst;
	size_t len;
	uint32_t devs; /* per node */
};
/* `mcfg`: the model's configuration (NULL: the defaults), with nodes = 2.
 * 0, or -ENOMEM with what was made left for mcc_host_pair_fini. */
int mcc_host_pair_init(struct mcc_host_pair *p, enum mcc_exec_kind kind, uint64_t seed,
                       const struct mcc_fab_model_cfg *mcfg, size_t len);
/* Destroys the model and the executor (engines on them first) and frees
 * the buffers. */
void mcc_host_pair_fini(struct mcc_host_pair *p);

/* A fabric tap for checks (slow path): it wraps a fabric handle and
 * attributes every WC that ends a WR with a route hard error
 * (IBV_WC_RETRY_EXC_ERR, RESP_TIMEOUT_ERR, FATAL_ERR, GENERAL_ERR) to its
 * route (local node and device, remote device) and to the endpoint
 * generation the host tagged the QP with (mcc_fab_qp_attr.generation), at
 * the executor's time. Other WCs cost one compare. One tap per process at a
 * time: create returns NULL (h untouched) when one is active or on
 * allocation failure. It replaces h->ops; every object created through the
 * tapped handle must be gone before destroy. */
typedef struct mcc_host_fab_tap mcc_host_fab_tap;
mcc_host_fab_tap *mcc_host_fab_tap_create(struct mcc_fab_handle *h, mcc_exec *ex);
void mcc_host_fab_tap_destroy(mcc_host_fab_tap *t);
/* Highest generation of route (node, dev) -> remote device rdev that ended
 * a WR with a hard error at or before until_ns; 0 when none. *count (may be
 * NULL): how many such WCs. */
uint32_t mcc_host_fab_tap_failed_gen(mcc_host_fab_tap *t, uint32_t node, uint32_t dev,
                                     uint32_t rdev, uint64_t until_ns, uint32_t *count);

/* Caller queries (RFC "Caller Observability"), shared by the TE and TENT
 * stubs. mcc_host_detail_unknown fills `d` (up to d->struct_size) as "no
 * evidence": controller off or compiled out. mcc_host_task_query asks the
 * policy with the engine's MCC_TASKQ_* facts and projects its answer: a
 * task with no record reads UNKNOWN and returns 0; other errors are
 * returned with state UNKNOWN. */
void mcc_host_detail_unknown(struct mcc_task_detail_v1 *d);
int mcc_host_task_query(const struct mcc_policy_v1 *ops, void *ctx, uint64_t batch_id,
                        uint64_t task_id, uint32_t facts, struct mcc_task_detail_v1 *d);
/* An engine's detail query with the controller compiled in: the policy's
 * answer (mcc_host_task_query) when the controller is on, else "no
 * evidence" and 0. */
int mcc_host_task_detail(int cc_on, const struct mcc_policy_v1 *ops, void *ctx, uint64_t batch_id,
                         uint64_t task_id, uint32_t facts, struct mcc_task_detail_v1 *d);
/* An engine's state query answered by its detail query: mcc_host_detail_init
 * readies `d` (zeroed, its size set) for that query, whose return `rc`
 * mcc_host_task_state passes on after setting *state (the detail's state,
 * UNKNOWN on an error). */
struct mcc_task_detail_v1 *mcc_host_detail_init(struct mcc_task_detail_v1 *d);
int mcc_host_task_state(int rc, const struct mcc_task_detail_v1 *d, int *state);

/* The name of a controller mode (enum mcc_mode): "off", "observe" or
 * "enforce" (any other value reads "off"). */
const char *mcc_host_mode_name(int mode);

/* A policy signal of `kind` on device `dev` / route `route` (either may be
 * NULL), without a task: the fields both engines fill, the rest zero. */
void mcc_host_signal(struct mcc_signal_v1 *sig, uint32_t kind, mcc_device *dev, mcc_route *route,
                     uint32_t generation, int32_t error, uint64_t v0, uint64_t v1, uint64_t now);

/* The policy's view of a polled WC (WorkerPool::performPollCq,
 * Workers::asyncPollCq): `wc` as the fabric returned it, with what the
 * engine kept at post time (generation, permit bytes, post timestamp).
 * complete_ns is never before post_ns (threaded executor: a post may carry a
 * later timestamp than the poller's `now`). */
void mcc_host_completion(struct mcc_completion_v1 *c, const struct mcc_fab_wc *wc,
                         uint32_t generation, uint64_t bytes, uint64_t post_ns, uint64_t now);

/* Latency samples (ns) for an embedder's percentiles. */
struct mcc_host_samples {
	uint64_t *v;
	size_t n, cap;
};
/* Appends x; when memory runs out the sample is dropped (the percentiles
 * then speak of fewer). */
void mcc_host_samples_add(struct mcc_host_samples *s, uint64_t x);
/* Appends every sample of `from`, or none when memory runs out. */
void mcc_host_samples_merge(struct mcc_host_samples *s, const struct mcc_host_samples *from);
/* Sorts the samples; then mcc_host_samples_pct_us reads the p quantile
 * (0 < p <= 1, nearest rank) in microseconds, 0 when there is none. */
void mcc_host_samples_sort(struct mcc_host_samples *s);
double mcc_host_samples_pct_us(const struct mcc_host_samples *s, double p);
void mcc_host_samples_free(struct mcc_host_samples *s);

/* CPU time of this process (user and system), in milliseconds. */
double mcc_host_cpu_ms(void);

/* Writes a policy ini to a new file named by the mkstemp template `path`
 * (filled in): "[policy]", mode (NULL: off), module_dir and module when
 * given, then each non-NULL line of extra[0..nextra). 0 or -errno. */
int mcc_host_policy_ini(char *path, const char *mode, const char *module_dir, const char *module,
                        const char *const *extra, size_t nextra);

/* Virtual CPU costs of the engines' steps under the sim executor (ns). */
#define MCC_HOST_COST_PASS_NS 300u
#define MCC_HOST_COST_WR_NS 150u
#define MCC_HOST_COST_WC_NS 100u
#define MCC_HOST_POLL_LATENCY_NS 200u

#ifdef __cplusplus
}
#endif
#endif /* MCC_HOSTENV_H */
