/* SPDX-License-Identifier: MIT */
/* The observe module's descriptor, linked into test programs under its own name. */
#define MCC_TEST_DESCRIPTOR mcc_test_observe_v1
#include "observe/observe.c"
