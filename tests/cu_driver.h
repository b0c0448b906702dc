/* SPDX-License-Identifier: MIT */
/* cu_driver.h - the one CUnit driver every test program uses. */
#ifndef MCC_CU_DRIVER_H
#define MCC_CU_DRIVER_H
#include <CUnit/CUnit.h>

/* A test program lists its suites' registration functions, each adding one
 * CU_pSuite (t_init_<area>_tests in the STYLE guide), then calls
 * mcc_cu_main. Exit status: 0 all passed, 1 any assertion or test failed or
 * the registry failed, 77 when a suite asked to skip the whole program. */
typedef CU_pSuite (*mcc_cu_suite_fn)(void);
int mcc_cu_main(int argc, char **argv, const mcc_cu_suite_fn *suites, unsigned nsuites);

/* Call from a suite init to skip the whole program with a reason (exit 77). */
void mcc_cu_skip(const char *reason);

#define MCC_CU_ADD(suite, fn) CU_add_test((suite), #fn, (fn))
#endif
