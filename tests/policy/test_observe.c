/* SPDX-License-Identifier: MIT */
#include "cu_driver.h"
#include "harness.h"

static void test_observe_placeholder(void)
{
	struct th *h = th_new(&mcc_test_aimd_v1, NULL);
	th_free(h);
}

static CU_pSuite t_init_observe_tests(void)
{
	CU_pSuite s = CU_add_suite("policy_observe", NULL, NULL);
	if (s)
		MCC_CU_ADD(s, test_observe_placeholder);
	return s;
}

int main(int argc, char **argv)
{
	static const mcc_cu_suite_fn s[] = { t_init_observe_tests };
	return mcc_cu_main(argc, argv, s, 1);
}
