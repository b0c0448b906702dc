/* SPDX-License-Identifier: MIT */
/*
 * headers_cxx.cpp - the public headers from C++: every plugin_api header
 * compiles as C++ (twice, to check the include guards), its C declarations
 * keep C linkage (this program links libmcc and calls into it), and the
 * frozen-layout static_asserts hold in C++ too.
 */
#include "mcc_hooks.h"
#include "mcc_loader.h"
#include "mcc_policy.h"
#include "mcc_policy_v1.h"
#include "mcc_hooks.h"
#include "mcc_loader.h"
#include "mcc_policy.h"
#include "mcc_policy_v1.h"

#include <cerrno>
#include <cstring>

extern "C" {
#include "cu_driver.h"
}

static void test_cxx_sees_the_c_abi(void)
{
	mcc_config cfg;
	mcc_config_defaults(&cfg);
	CU_ASSERT_EQUAL(cfg.policy.mode, static_cast<uint32_t>(MCC_MODE_OFF));
	CU_ASSERT_EQUAL(sizeof(mcc_policy), sizeof(struct mcc_policy_v1));
	CU_ASSERT_EQUAL(MCC_POLICY_ABI_CURRENT, MCC_ABI(1, 3));
	CU_ASSERT_EQUAL(sizeof(struct mcc_route_desc_v1), MCC_ROUTE_DESC_V1_3_SIZE);
	CU_ASSERT_EQUAL(sizeof(struct mcc_policy_v1), MCC_POLICY_V1_2_SIZE);
	CU_ASSERT_EQUAL(sizeof(struct mcc_domain_stats_v1), MCC_DOMAIN_STATS_V1_2_SIZE);
	CU_ASSERT_STRING_EQUAL(mcc_strerror(-EPROTO), "module ABI mismatch");

	mcc_loader_opts o;
	std::memset(&o, 0, sizeof(o));
	o.struct_size = sizeof(o);
	o.engine = "cxx";
	o.ignore_env = 1;
	mcc_instance *inst = nullptr;
	CU_ASSERT_EQUAL(mcc_instance_acquire(&o, &inst), 0);
	const mcc_policy_v1 *ops = mcc_instance_ops(inst);
	CU_ASSERT_PTR_NOT_NULL(ops);
	CU_ASSERT_PTR_NOT_NULL(ops->try_acquire_qos);
	mcc_permit_v1 permit = MCC_PERMIT_INIT;
	CU_ASSERT_EQUAL(permit.struct_size, sizeof(permit));
	CU_ASSERT_EQUAL(mcc_instance_mode(inst), MCC_MODE_OFF);
	mcc_instance_release(inst);
	/* The hooks compile out in this (OFF) translation unit. */
	CU_ASSERT_EQUAL(MCC_CC_COMPILED_IN, 0);
}

MCC_CU_SUITE(t_init_cxx_tests, "cxx", nullptr, nullptr,
             test_cxx_sees_the_c_abi)

MCC_CU_MAIN(t_init_cxx_tests)
