/* SPDX-License-Identifier: MIT */
/*
 * bad.c - test-only modules, each broken in exactly one way, to check that
 * the loader refuses it, logs one error and leaves the controller off
 *. Built once per variant as tests/loader/bad/mcc-policy-<id>.la
 * (check_LTLIBRARIES, never installed), selected by -D knobs:
 *
 *   BAD_ID          the module's short name (also its descriptor name)
 *   BAD_NOSYM       export no mcc_policy_v1 symbol at all
 *   BAD_MAJOR       ABI major (default 1)
 *   BAD_SIZE        descriptor struct_size (default sizeof(struct mcc_policy_v1))
 *   BAD_NAME_KIND   0: BAD_ID, 1: NULL, 2: not [a-z0-9_-]
 *   BAD_CAPS        capabilities (default MCC_CAP_THREAD_SAFE, what modules
 *                   built before it became implied set; 0 must load too)
 *   BAD_MODE        declared mode (default MCC_MODE_OFF)
 *   BAD_INIT_KIND   0: init succeeds, 1: no init, 2: init fails with
 *                   -ENOMEM (after a warning through host->log),
 *                   3: init calls a function no library defines (link with
 *                   unresolved symbols allowed: dlopen(RTLD_NOW) must fail)
 *   BAD_CTOR        add an ELF constructor (what the ABI forbids; used by
 *                   exports.sh to prove that its constructor check works)
 *   BAD_ACQUIRE     a try_acquire of its own (answers MCC_DEFER, marks the
 *                   permit's module64 with 0x5150); with BAD_SIZE=200, a
 *                   module built before ABI 1.2 (no try_acquire_qos)
 *
 * With no knob but BAD_ID this is a valid minimal module ("baseline"):
 * everything except init left NULL, filled by the loader.
 */
#include <errno.h>
#include <stddef.h>

#include "mcc_policy_v1.h"

#define BAD_STR_(x) #x
#define BAD_STR(x) BAD_STR_(x)

#ifndef BAD_ID
#error "BAD_ID must name the module"
#endif
#ifndef BAD_MAJOR
#define BAD_MAJOR 1
#endif
#ifndef BAD_SIZE
#define BAD_SIZE sizeof(struct mcc_policy_v1)
#endif
#ifndef BAD_NAME_KIND
#define BAD_NAME_KIND 0
#endif
#ifndef BAD_CAPS
#define BAD_CAPS MCC_CAP_THREAD_SAFE
#endif
#ifndef BAD_MODE
#define BAD_MODE MCC_MODE_OFF
#endif
#ifndef BAD_INIT_KIND
#define BAD_INIT_KIND 0
#endif

#if BAD_NAME_KIND == 0
#define BAD_NAME BAD_STR(BAD_ID)
#elif BAD_NAME_KIND == 1
#define BAD_NAME NULL
#else
#define BAD_NAME "Bad/Name"
#endif

#if !defined(BAD_NOSYM) && (BAD_INIT_KIND == 0 || BAD_INIT_KIND == 3)
static const char bad_ctx = 0;
#endif

#if BAD_INIT_KIND == 3
/* Defined nowhere: the module links (unresolved symbols allowed) but cannot
 * be loaded with RTLD_NOW. */
extern int mcc_test_undefined_function(void);
#endif

#if BAD_INIT_KIND != 1 && !defined(BAD_NOSYM)
static int bad_init(const struct mcc_host_v1 *host, const struct mcc_config_v1 *cfg,
                    struct mcc_init_out_v1 *out, void **ctx)
{
	(void)cfg;
	(void)out;
#if BAD_INIT_KIND == 2
	(void)ctx;
	host->log(host->log_arg, MCC_LOG_WARN, "%s: init refuses (test module)", BAD_STR(BAD_ID));
	return -ENOMEM;
#else
	(void)host;
#if BAD_INIT_KIND == 3
	if (mcc_test_undefined_function() != 0)
		return -EINVAL;
#endif
	*ctx = (void *)&bad_ctx;
	return 0;
#endif
}
#define BAD_INIT bad_init
#else
#define BAD_INIT NULL
#endif

#ifdef BAD_CTOR
#include <unistd.h>
/* Runs inside dlopen(), before the host can vet the module. (It calls into
 * libc so that no compiler can evaluate it at build time and drop it.) */
int mcc_test_ctor_pid;
__attribute__((constructor)) static void bad_ctor(void)
{
	mcc_test_ctor_pid = (int)getpid();
}
#endif

#ifdef BAD_ACQUIRE
static int bad_try_acquire(mcc_lane *lane, mcc_route *route, uint64_t bytes, uint32_t generation,
                           const struct mcc_task_ref_v1 *task, struct mcc_permit_v1 *permit)
{
	(void)lane;
	(void)route;
	(void)bytes;
	(void)generation;
	(void)task;
	permit->module64 = 0x5150;
	return MCC_DEFER;
}
#define BAD_TRY_ACQUIRE bad_try_acquire
#else
#define BAD_TRY_ACQUIRE NULL
#endif

#ifndef BAD_NOSYM
MCC_POLICY_V1_DEFINE = {
	.abi_version = MCC_ABI(BAD_MAJOR, 0),
	.struct_size = BAD_SIZE,
	.name = BAD_NAME,
	.description = "test-only module " BAD_STR(BAD_ID),
	.mode = BAD_MODE,
	.caps = BAD_CAPS,
	.init = BAD_INIT,
	.try_acquire = BAD_TRY_ACQUIRE,
};
#else
/* Something is exported, just not the descriptor. */
MCC_EXPORT const int mcc_policy_none = 1;
#endif
