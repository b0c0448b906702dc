/* SPDX-License-Identifier: MIT */
/* The aimd module's descriptor, linked into test programs under its own name. */
#define MCC_TEST_DESCRIPTOR mcc_test_aimd_v1
#include "aimd/aimd.c"
