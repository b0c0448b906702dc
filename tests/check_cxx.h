/* SPDX-License-Identifier: MIT */
/* check_cxx.h - the assertion of the C++ test programs (the C++ headers are
 * tested without CUnit): CHECK counts a failed condition and goes on;
 * check_cxx_result() prints the verdict and gives the exit status. */
#ifndef MCC_CHECK_CXX_H
#define MCC_CHECK_CXX_H
#include <cstdio>

static int failures;
#define CHECK(c)                                                                            \
	do {                                                                                \
		if (!(c)) {                                                                 \
			std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
			failures++;                                                         \
		}                                                                           \
	} while (0)

static inline int check_cxx_result(const char *program)
{
	std::printf("%s: %s (%d failed checks)\n", program, failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}
#endif
