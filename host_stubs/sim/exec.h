/* SPDX-License-Identifier: MIT */
/*
 * exec.h - the two executors the host engines run under, with one engine
 * code base. An engine is written as step functions ("actors": post_step,
 * poll_step, monitor_step, an application, the fabric model). A step does
 * one pass of work at time `now` and returns the absolute time it wants to
 * run again, or MCC_EXEC_PARK to sleep until woken (mcc_exec_wake).
 *
 *   threaded  one OS thread per actor in real time (CLOCK_MONOTONIC from the
 *             start of the run), as the engines run: busy loops while there
 *             is work, parking on a condition variable otherwise.
 *   sim       one thread, virtual time, a discrete-event loop ordered by
 *             (time, sequence): reproducible bit for bit for a given seed.
 *             A step's return value is also its virtual CPU cost.
 *
 * mcc_exec_now() is the clock handed to the policy (mcc_loader_opts.now_ns).
 */
#ifndef MCC_SIM_EXEC_H
#define MCC_SIM_EXEC_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MCC_EXEC_PARK UINT64_MAX

typedef struct mcc_exec mcc_exec;
typedef struct mcc_actor mcc_actor;
typedef uint64_t (*mcc_actor_fn)(void *arg, uint64_t now_ns);

enum mcc_exec_kind { MCC_EXEC_THREADED = 0, MCC_EXEC_SIM = 1 };

mcc_exec *mcc_exec_create(enum mcc_exec_kind kind, uint64_t seed);
void mcc_exec_destroy(mcc_exec *ex);
enum mcc_exec_kind mcc_exec_kind(const mcc_exec *ex);

/* Register an actor; it first runs at `start_ns` (threaded: at once). Only
 * before mcc_exec_run. `name` is borrowed. */
mcc_actor *mcc_exec_add(mcc_exec *ex, const char *name, mcc_actor_fn fn, void *arg,
                        uint64_t start_ns);
/* Make `a` run no later than at_ns. Any thread, any time (also from inside a
 * step or a fabric callback). Never blocks. */
void mcc_exec_wake(mcc_actor *a, uint64_t at_ns);
uint64_t mcc_exec_now(mcc_exec *ex);
/* Clock callback for mcc_loader_opts.now_ns / mcc_host_v1.now_ns. */
uint64_t mcc_exec_clock(void *ex);

/* Run until `until_ns` or until done(arg) returns non-zero (checked between
 * steps in sim, every ~100 us in threaded). Returns the final time. */
uint64_t mcc_exec_run(mcc_exec *ex, uint64_t until_ns, int (*done)(void *), void *arg);
/* Steps executed (sim: deterministic). */
uint64_t mcc_exec_steps(const mcc_exec *ex);
/* Deterministic pseudo-random numbers for actors (sim: seeded). */
uint64_t mcc_exec_rand(mcc_exec *ex);

#ifdef __cplusplus
}
#endif
#endif /* MCC_SIM_EXEC_H */
