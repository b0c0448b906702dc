/* SPDX-License-Identifier: MIT */
/* cu_driver.h - the one CUnit driver every test program uses. */
#ifndef MCC_CU_DRIVER_H
#define MCC_CU_DRIVER_H
#include <CUnit/CUnit.h>

/* A test program lists its suites' registration functions, each adding one
 * CU_pSuite (t_init_<area>_tests in the STYLE guide), then calls
 * mcc_cu_main. Exit status: 0 all passed, 1 any assertion or test failed or
 * the registry failed, 77 when a suite asked to skip the whole program.
 * MCC_CU_SUITE and MCC_CU_MAIN below write both for the common case. */
typedef CU_pSuite (*mcc_cu_suite_fn)(void);
int mcc_cu_main(int argc, char **argv, const mcc_cu_suite_fn *suites, unsigned nsuites);

/* Call from a suite init to skip the whole program with a reason (exit 77). */
void mcc_cu_skip(const char *reason);

#define MCC_CU_ADD(suite, fn) CU_add_test((suite), #fn, (fn))

/* Adds the suite `name` with the `ntests` tests `fns`, each registered under
 * its name in `names`, the comma-separated list MCC_CU_SUITE writes from the
 * same arguments. NULL (and a line on stderr) on a registry error or a list
 * that does not match. */
CU_pSuite mcc_cu_add_suite(const char *name, CU_InitializeFunc init, CU_CleanupFunc clean,
                           const char *names, const CU_TestFunc *fns, unsigned ntests);

/* The registration function of a suite that is a plain list of tests:
 *   MCC_CU_SUITE(t_init_area_tests, "area", init, clean, test_a, test_b)
 * defines static t_init_area_tests() adding test_a and test_b under their
 * function names. */
#define MCC_CU_SUITE(fn, name, init, clean, ...)                                                   \
	static CU_pSuite fn(void)                                                                  \
	{                                                                                          \
		static const CU_TestFunc fns_[] = { __VA_ARGS__ };                                 \
		return mcc_cu_add_suite((name), (init), (clean), #__VA_ARGS__, fns_,               \
		                        (unsigned)(sizeof(fns_) / sizeof(fns_[0])));               \
	}

/* The driver main of a program that runs the suites its arguments register
 * (mcc_cu_suite_fn each). */
#define MCC_CU_MAIN(...)                                                                           \
	int main(int argc, char **argv)                                                            \
	{                                                                                          \
		static const mcc_cu_suite_fn suites_[] = { __VA_ARGS__ };                          \
		return mcc_cu_main(argc, argv, suites_,                                            \
		                   (unsigned)(sizeof(suites_) / sizeof(suites_[0])));              \
	}
#endif
