/* SPDX-License-Identifier: MIT */
/*
 * test_hosts_nocc.c - the compile-out arm: the same engine sources built
 * without the hooks run every scenario cleanly and the caller queries
 * answer UNKNOWN (no controller fields or code exist).
 */
#include "../../host_stubs/scenario/scenario.h"
#include "../../host_stubs/sim/exec.h"
#include "../../host_stubs/te/te.h"
#include "../cu_driver.h"
#include "mcc_hooks.h"

#include <string.h>

#if MCC_CC_COMPILED_IN
#error "this test is the compile-out arm"
#endif

static void test_compiled_out_scenarios_deliver_every_byte(void)
{
	for (const char *const *n = mcc_scn_names(); *n; n++) {
		if (!strcmp(*n, "flap"))
			continue;
		for (int en = 0; en < 2; en++) {
			struct mcc_scn_opts o;
			struct mcc_scn_result r;
			memset(&o, 0, sizeof(o));
			o.scenario = *n;
			o.engine = en;
			o.exec = MCC_EXEC_SIM;
			o.seed = 1;
			o.quick = 1;
			CU_ASSERT_EQUAL_FATAL(mcc_scn_run(&o, &r), 0);
			CU_ASSERT_EQUAL(r.bytes_lost, 0);
			CU_ASSERT_EQUAL(r.bytes_corrupted, 0);
			CU_ASSERT(r.tasks_done > 0);
			CU_ASSERT_STRING_EQUAL(r.arm, "compiled-out");
			CU_ASSERT_EQUAL(r.task_states[3], r.tasks_done + r.tasks_failed);
			CU_ASSERT_EQUAL(r.defers + r.avoids, 0);
		}
	}
}

static void test_compiled_out_slice_has_no_permit_field(void)
{
	/* the hook macros expand to nothing */
	int x = 0;
	MCC_HOOK(x = 1;)
	MCC_NOCC(x += 2;)
	CU_ASSERT_EQUAL(x, 2);
}

MCC_CU_SUITE(t_init_hosts_nocc_tests, "hosts_nocc", NULL, NULL,
             test_compiled_out_scenarios_deliver_every_byte,
             test_compiled_out_slice_has_no_permit_field)

MCC_CU_MAIN(t_init_hosts_nocc_tests)
