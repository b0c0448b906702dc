/* SPDX-License-Identifier: MIT */
/*
 * test_append.c - the append-only promise of ABI v1, tested across minors.
 * This program is linked with a "v1.1" libmcc: the loader's sources compiled
 * against a copy of mcc_policy_v1.h with one callback appended to struct
 * mcc_policy_v1 after the v1.2 members (tests/abi/Makefile.inc generates it,
 * as the developer of a later minor would write it). It must keep loading a
 * module built against the frozen v1.0 header snapshot (tests/abi/v1_0/),
 * whose descriptor is 24 bytes smaller, and fill the slots it lacks itself
 * (the v1.2 try_acquire_qos and the appended one); and it must still refuse
 * a descriptor smaller than v1.0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "cu_driver.h"
#include "mcc_loader.h"

static char ini_path[4096];

static void quiet(void *arg, int level, const char *fmt, ...)
{
	(void)arg;
	(void)level;
	(void)fmt;
}

/* Acquire with an ini naming `module` in `dir`. */
static int acquire(const char *module, const char *dir, mcc_instance **inst)
{
	FILE *f = fopen(ini_path, "w");

	CU_ASSERT_FATAL(f != NULL);
	fprintf(f, "[policy]\nmode = off\nmodule = %s\nmodule_dir = %s\n", module, dir);
	fclose(f);
	struct mcc_loader_opts o;
	memset(&o, 0, sizeof(o));
	o.struct_size = sizeof(o);
	o.engine = "te";
	o.ini_path = ini_path;
	o.ignore_env = 1;
	o.log = quiet;
	return mcc_instance_acquire(&o, inst);
}

static const char *abi_dir(void)
{
	static char dir[4096];
	const char *b = getenv("MCC_TEST_BUILDDIR");

	if (!b)
		return NULL;
	snprintf(dir, sizeof(dir), "%s/tests/abi/.libs", b);
	return dir;
}

static void test_this_host_is_a_later_minor(void)
{
	/* Guards the test itself: the generated header did append a member. */
	CU_ASSERT(sizeof(struct mcc_policy_v1) > MCC_POLICY_V1_0_SIZE);
	CU_ASSERT(offsetof(struct mcc_policy_v1, appended_v1_1) >= MCC_POLICY_V1_0_SIZE);
	CU_ASSERT(offsetof(struct mcc_policy_v1, appended_v1_1) + sizeof(void (*)(void)) ==
	          sizeof(struct mcc_policy_v1));
}

static void test_v1_0_module_loads_after_an_append(void)
{
	mcc_instance *inst = NULL;
	int rc = acquire("v10", abi_dir(), &inst);

	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_STRING_EQUAL(mcc_instance_error(inst), "");
	CU_ASSERT_STRING_EQUAL(mcc_instance_name(inst), "v10");
	const struct mcc_policy_v1 *ops = mcc_instance_ops(inst);
	CU_ASSERT_EQUAL(ops->struct_size, sizeof(struct mcc_policy_v1));
	/* The slot the v1.0 module cannot have comes from the host's null
	 * module (which, in this test build, leaves it NULL): nothing was read
	 * past the module's 200 bytes. */
	CU_ASSERT_PTR_NULL(ops->appended_v1_1);
	CU_ASSERT_PTR_NOT_NULL(ops->try_acquire);
	/* v1.2's config_check, absent from a v1.0 descriptor: filled by the
	 * host, which then does not validate the module's section. */
	CU_ASSERT_PTR_NOT_NULL(ops->config_check);
	CU_ASSERT_PTR_NOT_NULL(ops->try_acquire_qos); /* v1.2, filled by the host */
	mcc_instance_release(inst);
}

static void test_descriptor_below_v1_0_is_still_refused(void)
{
	mcc_instance *inst = NULL;
	char dir[4096];

	snprintf(dir, sizeof(dir), "%s/tests/loader/bad/.libs", getenv("MCC_TEST_BUILDDIR"));
	int rc = acquire("small", dir, &inst);
	CU_ASSERT(rc < 0);
	CU_ASSERT_STRING_EQUAL(mcc_instance_name(inst), "null");
	CU_ASSERT_PTR_NOT_NULL(strstr(mcc_instance_error(inst),
	                              "descriptor struct_size 100 is smaller than the v1.0 "
	                              "descriptor (200 bytes)"));
	mcc_instance_release(inst);
}

static int setup(void)
{
	const char *t = getenv("TMPDIR");

	snprintf(ini_path, sizeof(ini_path), "%s/mcc-abi-append-%ld.ini", t ? t : "/tmp",
	         (long)getpid());
	return abi_dir() ? 0 : -1;
}

static int teardown(void)
{
	unlink(ini_path);
	return 0;
}

MCC_CU_SUITE(t_init_abi_tests, "abi append", setup, teardown,
             test_this_host_is_a_later_minor,
             test_v1_0_module_loads_after_an_append,
             test_descriptor_below_v1_0_is_still_refused)

MCC_CU_MAIN(t_init_abi_tests)
