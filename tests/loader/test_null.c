/* SPDX-License-Identifier: MIT */
/*
 * test_null.c - the null policy's contract, checked on the built-in of
 * libmcc (mode off, and the fallback after a failed load) and on the module
 * file mcc-policy-null.so through the loader (a template: its descriptor sets
 * only init, and the loader fills every other slot from the built-in). Plus
 * mcc_strerror and the enum name helpers.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_driver.h"
#include "lt_util.h"
#include "mcc_loader.h"

static int suite_init(void)
{
	lt_clear_env();
	if (!lt_module_dir())
		mcc_cu_skip("MCC_TEST_MODULE_DIR not set (run from make check)");
	return 0;
}

static int suite_clean(void)
{
	return 0;
}

static uint64_t zero_clock(void *arg)
{
	(void)arg;
	return 0;
}

static void quiet_log(void *arg, int level, const char *fmt, ...)
{
	(void)arg;
	(void)level;
	(void)fmt;
}

/* ------------------------------------------------- the raw descriptor */

/* The template: name, mode, no capability, init, and every other slot left
 * NULL for the loader to fill. */
static void test_descriptor_is_a_template(void)
{
	const struct mcc_policy_v1 *d;
	void *h = dlopen(lt_null_so(), RTLD_NOW | RTLD_LOCAL);

	CU_ASSERT_PTR_NOT_NULL_FATAL(h);
	d = dlsym(h, MCC_POLICY_V1_SYMBOL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	CU_ASSERT_EQUAL(d->abi_version, MCC_POLICY_ABI_V1);
	CU_ASSERT_EQUAL(d->struct_size, sizeof(struct mcc_policy_v1));
	CU_ASSERT_STRING_EQUAL(d->name, "null");
	CU_ASSERT_PTR_NOT_NULL(d->description);
	CU_ASSERT_EQUAL(d->mode, MCC_MODE_OFF);
	CU_ASSERT_EQUAL(d->caps, 0);
	CU_ASSERT_PTR_NOT_NULL(d->init);
	CU_ASSERT_PTR_NULL(d->fini);
	CU_ASSERT_PTR_NULL(d->lane_open);
	CU_ASSERT_PTR_NULL(d->lane_close);
	CU_ASSERT_PTR_NULL(d->device_open);
	CU_ASSERT_PTR_NULL(d->device_close);
	CU_ASSERT_PTR_NULL(d->route_open);
	CU_ASSERT_PTR_NULL(d->route_rebind);
	CU_ASSERT_PTR_NULL(d->route_close);
	CU_ASSERT_PTR_NULL(d->try_acquire);
	CU_ASSERT_PTR_NULL(d->release);
	CU_ASSERT_PTR_NULL(d->on_completion);
	CU_ASSERT_PTR_NULL(d->poller_progress);
	CU_ASSERT_PTR_NULL(d->on_async_event);
	CU_ASSERT_PTR_NULL(d->on_signal);
	CU_ASSERT_PTR_NULL(d->tick);
	CU_ASSERT_PTR_NULL(d->task_query);
	CU_ASSERT_PTR_NULL(d->batch_free);
	CU_ASSERT_PTR_NULL(d->domain_stats);
	CU_ASSERT_PTR_NULL(d->dump);
	/* Nothing else is exported. */
	CU_ASSERT_PTR_NULL(dlsym(h, "null_init"));
	CU_ASSERT_PTR_NULL(dlsym(h, "mcc__null_builtin_v1"));
	dlclose(h);
}

/* ------------------------------------------------ the module contract */

/* Every behaviour of the null module, on one vtable. */
static void check_null_contract(const struct mcc_policy_v1 *ops)
{
	struct mcc_host_v1 host = { MCC_POLICY_ABI_V1, sizeof(host), "te", 0, zero_clock, NULL,
		                    quiet_log,         NULL,         4,    0 };
	struct mcc_config cfg;
	struct mcc_init_out_v1 io;
	struct mcc_lane_desc_v1 ld = { sizeof(ld), 0, MCC_LANE_POST_POLL, 0 };
	struct mcc_device_desc_v1 dd = { sizeof(dd), 3, "mlx5_0", 1, 0, 400000000000ull, 0 };
	struct mcc_route_desc_v1 rd = { sizeof(rd), 1, 2, 5, 77, "10.0.0.2:4791@mlx5_1", 9, 0 };
	struct mcc_task_ref_v1 task = { 11, 22, 1, 0 };
	struct mcc_permit_v1 p = MCC_PERMIT_INIT;
	struct mcc_completion_v1 wc;
	struct mcc_task_detail_v1 td;
	struct mcc_domain_stats_v1 st;
	mcc_lane *lane = NULL;
	mcc_device *dev = NULL;
	mcc_route *route = NULL;
	void *ctx = NULL;
	unsigned char raw[sizeof(td)];

	mcc_config_defaults(&cfg);
	memset(&io, 0xff, sizeof(io));
	io.struct_size = sizeof(io);
	CU_ASSERT_EQUAL_FATAL(ops->init(&host, &cfg.policy, &io, &ctx), 0);
	CU_ASSERT_PTR_NOT_NULL(ctx);
	CU_ASSERT_EQUAL(io.signal_mask, 0); /* subscribes to nothing */
	CU_ASSERT_EQUAL(io.want_async_events, 0);
	CU_ASSERT_EQUAL(ops->init(NULL, &cfg.policy, &io, &ctx), -EINVAL);

	/* Handles. */
	CU_ASSERT_EQUAL(ops->lane_open(ctx, &ld, &lane), 0);
	CU_ASSERT_EQUAL(ops->device_open(ctx, &dd, &dev), 0);
	CU_ASSERT_EQUAL(ops->route_open(ctx, dev, &rd, &route), 0);
	CU_ASSERT_PTR_NOT_NULL(lane);
	CU_ASSERT_PTR_NOT_NULL(dev);
	CU_ASSERT_PTR_NOT_NULL(route);
	CU_ASSERT_EQUAL(ops->lane_open(ctx, &ld, NULL), -EINVAL);
	CU_ASSERT_EQUAL(ops->route_open(ctx, NULL, &rd, &route), -EINVAL);
	CU_ASSERT_EQUAL(ops->route_rebind(ctx, route, dev, 2, 3), 0);
	CU_ASSERT_EQUAL(ops->route_rebind(ctx, NULL, dev, 2, 3), -EINVAL);

	/* try_acquire: always admits, fills the permit. */
	CU_ASSERT_EQUAL(ops->try_acquire(lane, route, 65536, 5, &task, &p), MCC_ADMIT);
	CU_ASSERT_EQUAL(p.flags, MCC_PERMIT_F_LIVE);
	CU_ASSERT_PTR_EQUAL(p.route, route);
	CU_ASSERT_EQUAL(p.bytes, 65536);
	CU_ASSERT_EQUAL(p.generation, 5);
	CU_ASSERT_EQUAL(p.reason, MCC_REASON_NONE);
	CU_ASSERT_EQUAL(p.task.batch_id, 11);
	CU_ASSERT_EQUAL(p.task.task_id, 22);
	CU_ASSERT_EQUAL(p.task.attempt, 1);
	/* A live permit is not reused; zero bytes and no route are invalid. */
	CU_ASSERT_EQUAL(ops->try_acquire(lane, route, 4096, 5, &task, &p), -EINVAL);
	CU_ASSERT_EQUAL(p.bytes, 65536);

	/* Partial post: release the unposted part, complete the rest. */
	CU_ASSERT_EQUAL(ops->release(lane, &p, 16384, MCC_REL_NOT_POSTED), 0);
	CU_ASSERT_EQUAL(p.bytes, 49152);
	CU_ASSERT_TRUE(p.flags & MCC_PERMIT_F_LIVE);
	memset(&wc, 0, sizeof(wc));
	wc.struct_size = sizeof(wc);
	wc.bytes = 49152;
	wc.generation = 5;
	ops->on_completion(lane, &p, &wc);
	CU_ASSERT_EQUAL(p.bytes, 0);
	CU_ASSERT_FALSE(p.flags & MCC_PERMIT_F_LIVE);
	/* Every byte settles once: more is a double release. */
	CU_ASSERT_EQUAL(ops->release(lane, &p, 1, MCC_REL_RECLAIMED), -EALREADY);
	ops->on_completion(lane, &p, &wc); /* ignored */
	CU_ASSERT_EQUAL(p.bytes, 0);
	CU_ASSERT_EQUAL(ops->release(lane, &p, 0, MCC_REL_CANCELLED), 0);

	/* Over-release settles only the live bytes. */
	CU_ASSERT_EQUAL(ops->try_acquire(lane, route, 1000, 6, NULL, &p), MCC_ADMIT);
	CU_ASSERT_EQUAL(p.task.batch_id, 0);
	CU_ASSERT_EQUAL(ops->release(lane, &p, 5000, MCC_REL_POST_REJECTED), -EALREADY);
	CU_ASSERT_EQUAL(p.bytes, 0);
	CU_ASSERT_FALSE(p.flags & MCC_PERMIT_F_LIVE);
	CU_ASSERT_EQUAL(ops->try_acquire(lane, route, 0, 6, NULL, &p), -EINVAL);
	CU_ASSERT_EQUAL(ops->try_acquire(lane, NULL, 10, 6, NULL, &p), -EINVAL);
	CU_ASSERT_EQUAL(ops->try_acquire(lane, route, 10, 6, NULL, NULL), -EINVAL);
	CU_ASSERT_EQUAL(ops->release(lane, NULL, 10, 0), -EINVAL);

	ops->poller_progress(lane, dev, 3);
	ops->tick(ctx, 1000);

	/* task_query: UNKNOWN, nothing observed; NULL detail allowed; the
	 * caller's struct_size is honoured. */
	memset(&td, 0xa5, sizeof(td));
	td.struct_size = sizeof(td);
	CU_ASSERT_EQUAL(ops->task_query(ctx, &task, MCC_TASKQ_SEEN_SUCCESS, &td), MCC_TASK_UNKNOWN);
	CU_ASSERT_EQUAL(td.state, MCC_TASK_UNKNOWN);
	CU_ASSERT_EQUAL(td.observed, 0);
	CU_ASSERT_EQUAL(td.reason, 0);
	CU_ASSERT_EQUAL(td.path[0], '\0');
	CU_ASSERT_EQUAL(td.reserved0, 0);
	CU_ASSERT_EQUAL(ops->task_query(ctx, &task, 0, NULL), MCC_TASK_UNKNOWN);
	CU_ASSERT_EQUAL(ops->task_query(ctx, NULL, 0, NULL), -EINVAL);
	memset(raw, 0xa5, sizeof(raw));
	((struct mcc_task_detail_v1 *)(void *)raw)->struct_size =
	        12; /* struct_size, state, observed */
	/* shorter than the v1.0 detail: refused whole, nothing written */
	CU_ASSERT_EQUAL(ops->task_query(ctx, &task, 0, (struct mcc_task_detail_v1 *)(void *)raw),
	                -EINVAL);
	CU_ASSERT_EQUAL(raw[4], 0xa5);
	CU_ASSERT_EQUAL(raw[12], 0xa5);
	ops->batch_free(ctx, 11);

	/* domain_stats: zeros, HEALTHY. */
	memset(&st, 0xa5, sizeof(st));
	st.struct_size = sizeof(st);
	CU_ASSERT_EQUAL(ops->domain_stats(ctx, MCC_DOMAIN_ROUTE, route, &st), 0);
	CU_ASSERT_EQUAL(st.state, MCC_PATH_HEALTHY);
	CU_ASSERT_EQUAL(st.window_bytes, 0);
	CU_ASSERT_EQUAL(st.admits, 0);
	CU_ASSERT_EQUAL(st.suppressed_deadlines, 0);
	CU_ASSERT_EQUAL(ops->domain_stats(ctx, MCC_DOMAIN_DEVICE, dev, &st), 0);
	CU_ASSERT_EQUAL(ops->domain_stats(ctx, 7, dev, &st), -EINVAL);
	CU_ASSERT_EQUAL(ops->domain_stats(ctx, MCC_DOMAIN_DEVICE, NULL, &st), -EINVAL);

	CU_ASSERT_EQUAL(ops->dump(ctx, 1), -EOPNOTSUPP);
	{
		struct mcc_signal_v1 sig;
		struct mcc_async_event_v1 ev;

		memset(&sig, 0, sizeof(sig));
		memset(&ev, 0, sizeof(ev));
		sig.struct_size = sizeof(sig);
		sig.kind = MCC_SIG_BACKLOG;
		ev.struct_size = sizeof(ev);
		ev.device = dev;
		ops->on_signal(ctx, &sig);
		ops->on_async_event(ctx, &ev);
	}

	ops->route_close(ctx, route);
	ops->device_close(ctx, dev);
	ops->lane_close(ctx, lane);
	ops->fini(ctx);
}

static void test_builtin_null_honours_the_contract(void)
{
	struct mcc_loader_opts o;
	mcc_instance *inst = NULL;

	lt_opts(&o, NULL, NULL);
	o.log = quiet_log;
	CU_ASSERT_EQUAL_FATAL(mcc_instance_acquire(&o, &inst), 0);
	check_null_contract(mcc_instance_ops(inst));
	mcc_instance_release(inst);
}

/* The module file, loaded (not the built-in): its own init, the rest filled. */
static void test_null_so_honours_the_contract(void)
{
	struct mcc_loader_opts o;
	mcc_instance *inst = NULL;
	const struct mcc_policy_v1 *ops;
	char dir[LT_PATH], ini[LT_PATH], text[LT_PATH + 64];
	Dl_info info;
	int rc;

	CU_ASSERT_EQUAL_FATAL(lt_mkdtemp(dir, sizeof(dir)), 0);
	snprintf(text, sizeof(text), "[policy]\nmode = off\nmodule = null\nmodule_dir = %s\n",
	         lt_module_dir());
	CU_ASSERT_EQUAL_FATAL(lt_write(dir, "null.ini", text, 0644, ini, sizeof(ini)), 0);
	lt_opts(&o, NULL, ini);
	o.log = quiet_log;
	rc = mcc_instance_acquire(&o, &inst);
	lt_rmtree(dir);
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	CU_ASSERT_STRING_EQUAL(mcc_instance_name(inst), "null");
	CU_ASSERT_EQUAL(mcc_instance_mode(inst), MCC_MODE_OFF);
	ops = mcc_instance_ops(inst);
	/* init comes from the file, try_acquire from libmcc's built-in. */
	CU_ASSERT_FATAL(dladdr((const void *)ops->init, &info) && info.dli_fname);
	CU_ASSERT_PTR_NOT_NULL(strstr(info.dli_fname, "mcc-policy-null.so"));
	CU_ASSERT_FATAL(dladdr((const void *)ops->try_acquire, &info) && info.dli_fname);
	CU_ASSERT_PTR_NULL(strstr(info.dli_fname, "mcc-policy-null.so"));
	check_null_contract(ops);
	mcc_instance_release(inst);
}

static void test_fallback_instance_honours_the_contract(void)
{
	struct mcc_loader_opts o;
	mcc_instance *inst = NULL;

	lt_opts(&o, NULL, "/nonexistent/mcc.ini");
	o.log = quiet_log;
	CU_ASSERT_EQUAL(mcc_instance_acquire(&o, &inst), -ENOENT);
	check_null_contract(mcc_instance_ops(inst));
	mcc_instance_release(inst);
}

/* --------------------------------------------------------------- names */

static void test_names_cover_every_enum_value(void)
{
	/* Every value has its own name; the next one is "invalid". */
	for (int i = 0; i <= MCC_TASK_UNKNOWN; i++) {
		CU_ASSERT_STRING_NOT_EQUAL(mcc_task_state_name(i), "invalid");
		for (int j = 0; j < i; j++)
			CU_ASSERT_STRING_NOT_EQUAL(mcc_task_state_name(i), mcc_task_state_name(j));
	}
	for (int i = 0; i <= MCC_PATH_PROBING; i++) {
		CU_ASSERT_STRING_NOT_EQUAL(mcc_path_state_name(i), "invalid");
		for (int j = 0; j < i; j++)
			CU_ASSERT_STRING_NOT_EQUAL(mcc_path_state_name(i), mcc_path_state_name(j));
	}
	for (int i = 0; i < MCC_REASON_COUNT_; i++) {
		CU_ASSERT_STRING_NOT_EQUAL(mcc_reason_name(i), "invalid");
		for (int j = 0; j < i; j++)
			CU_ASSERT_STRING_NOT_EQUAL(mcc_reason_name(i), mcc_reason_name(j));
	}
	CU_ASSERT_STRING_EQUAL(mcc_task_state_name(MCC_TASK_LONG_UNAVAILABLE), "LONG_UNAVAILABLE");
	CU_ASSERT_STRING_EQUAL(mcc_path_state_name(MCC_PATH_QUARANTINED), "QUARANTINED");
	CU_ASSERT_STRING_EQUAL(mcc_reason_name(MCC_REASON_BYTE_WINDOW), "BYTE_WINDOW");
	CU_ASSERT_STRING_EQUAL(mcc_task_state_name(MCC_TASK_UNKNOWN + 1), "invalid");
	CU_ASSERT_STRING_EQUAL(mcc_task_state_name(-1), "invalid");
	CU_ASSERT_STRING_EQUAL(mcc_path_state_name(MCC_PATH_PROBING + 1), "invalid");
	CU_ASSERT_STRING_EQUAL(mcc_path_state_name(-1), "invalid");
	CU_ASSERT_STRING_EQUAL(mcc_reason_name(MCC_REASON_COUNT_), "invalid");
	CU_ASSERT_STRING_EQUAL(mcc_reason_name(-1), "invalid");
}

static void test_strerror_knows_the_abi_errors(void)
{
	static const int errs[] = { EINVAL, ENOMEM, ENOENT, EALREADY, EOPNOTSUPP,
		                    EPROTO, EBUSY,  EPERM,  ENOEXEC };

	CU_ASSERT_STRING_EQUAL(mcc_strerror(0), "success");
	for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		CU_ASSERT_STRING_NOT_EQUAL(mcc_strerror(-errs[i]), "unknown error");
		CU_ASSERT_STRING_EQUAL(mcc_strerror(-errs[i]), mcc_strerror(errs[i]));
	}
	CU_ASSERT_STRING_EQUAL(mcc_strerror(-EPROTO), "module ABI mismatch");
	CU_ASSERT_STRING_EQUAL(mcc_strerror(-99999), "unknown error");
}

MCC_CU_SUITE(t_init_null_tests, "null", suite_init, suite_clean,
             test_descriptor_is_a_template,
             test_builtin_null_honours_the_contract,
             test_null_so_honours_the_contract,
             test_fallback_instance_honours_the_contract,
             test_names_cover_every_enum_value,
             test_strerror_knows_the_abi_errors)

MCC_CU_MAIN(t_init_null_tests)
