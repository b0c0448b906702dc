/* SPDX-License-Identifier: MIT */
/* noinit.c - test-only module: a valid header whose every callback is NULL,
 * init() included. libmcc refuses a descriptor without init(). */
#include "../../test_module.h"

MCC_POLICY_V1_DEFINE = {
	MCC_TEST_MODULE_HEAD(sizeof(struct mcc_policy_v1), "noinit", "every callback NULL",
	                     MCC_CAP_THREAD_SAFE),
};
