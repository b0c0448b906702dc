/* SPDX-License-Identifier: MIT */
/* test_module.h - the descriptor header the test-only policy modules share
 * (the spy, the bad modules of test_bad_input): the current ABI, enforce
 * mode, and the size, name, description and capabilities each one sets. A
 * module that must differ in one of the fixed members writes its own. */
#ifndef MCC_TEST_MODULE_H
#define MCC_TEST_MODULE_H
#include "mcc_policy_v1.h"

/* Use first inside MCC_POLICY_V1_DEFINE = { ... }, then the callbacks. */
#define MCC_TEST_MODULE_HEAD(size, module_name, text, cap_bits)                                      \
	.abi_version = MCC_POLICY_ABI_V1, .struct_size = (size), .name = (module_name),                \
	.description = (text), .mode = MCC_MODE_ENFORCE, .caps = (cap_bits)
#endif
