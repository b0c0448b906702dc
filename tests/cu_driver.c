/* SPDX-License-Identifier: MIT */
#include "cu_driver.h"

#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *skip_reason;

void mcc_cu_skip(const char *reason)
{
	skip_reason = reason;
}

CU_pSuite mcc_cu_add_suite(const char *name, CU_InitializeFunc init, CU_CleanupFunc clean,
                           const char *names, const CU_TestFunc *fns, unsigned ntests)
{
	CU_pSuite s = CU_add_suite(name, init, clean);
	const char *p = names;

	for (unsigned i = 0; s && i < ntests; i++) {
		char one[256];
		size_t n;

		p += strspn(p, ", ");
		n = strcspn(p, ", ");
		if (n == 0 || n >= sizeof(one)) {
			fprintf(stderr, "suite %s: test %u has no usable name in \"%s\"\n", name, i,
			        names);
			return NULL;
		}
		memcpy(one, p, n);
		one[n] = '\0';
		p += n;
		if (!CU_add_test(s, one, fns[i]))
			return NULL;
	}
	return s;
}

int mcc_cu_main(int argc, char **argv, const mcc_cu_suite_fn *suites, unsigned nsuites)
{
	const char *only = argc > 1 ? argv[1] : getenv("MCC_TEST_ONLY");
	unsigned failures, failed_tests, run;

	if (CU_initialize_registry() != CUE_SUCCESS) {
		fprintf(stderr, "CUnit: %s\n", CU_get_error_msg());
		return 1;
	}
	for (unsigned i = 0; i < nsuites; i++) {
		if (!suites[i]() || CU_get_error() != CUE_SUCCESS) {
			fprintf(stderr, "CUnit registration: %s\n", CU_get_error_msg());
			CU_cleanup_registry();
			return 1;
		}
	}
	if (skip_reason) {
		printf("SKIP: %s\n", skip_reason);
		CU_cleanup_registry();
		return 77;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	if (only && *only) {
		/* Run only the test named `only` (in whichever suite holds it). */
		CU_pTestRegistry reg = CU_get_registry();
		int found = 0;
		for (CU_pSuite s = reg->pSuite; s; s = s->pNext)
			for (CU_pTest t = s->pTest; t; t = t->pNext)
				if (strcmp(t->pName, only) == 0) {
					CU_basic_run_test(s, t);
					found = 1;
				}
		if (!found) {
			fprintf(stderr, "no test named %s\n", only);
			CU_cleanup_registry();
			return 1;
		}
	} else {
		CU_basic_run_tests();
	}
	failures = CU_get_number_of_failures();
	failed_tests = CU_get_number_of_tests_failed();
	run = CU_get_number_of_tests_run();
	printf("\n%s: %u tests run, %u failed, %u assertion failures\n", argv[0], run,
	       failed_tests, failures);
	int rc = (failures || failed_tests || CU_get_error() != CUE_SUCCESS || run == 0) ? 1 : 0;
	CU_cleanup_registry();
	return rc;
}
