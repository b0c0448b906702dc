/* SPDX-License-Identifier: MIT */
/* hosts_run.h - what the tests/hosts programs share to run the scenario
 * runner on the deterministic simulator. */
#ifndef MCC_TESTS_HOSTS_RUN_H
#define MCC_TESTS_HOSTS_RUN_H

#include "../../host_stubs/scenario/scenario.h"
#include "../../host_stubs/sim/exec.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The runner's options for a run on the simulator: `mode` on `engine`
 * (enum mcc_scn_engine) with `seed`, the policy modules from `module_dir`
 * (NULL: the loader's default); the rest zero (the scenario's defaults). */
static inline struct mcc_scn_opts th_sim_opts(const char *mode, int engine, uint64_t seed,
                                              const char *module_dir)
{
	struct mcc_scn_opts o = {
	        .mode = mode,
	        .engine = engine,
	        .exec = MCC_EXEC_SIM,
	        .seed = seed,
	        .module_dir = module_dir,
	};
	return o;
}

/* True, with "(NAME module not built: skipped) " printed, when module_dir
 * holds no readable mcc-policy-NAME.so: the test then passes vacuously. */
static inline int th_lacks_module(const char *module_dir, const char *name)
{
	char p[4200];
	snprintf(p, sizeof(p), "%s/mcc-policy-%s.so", module_dir, name);
	if (access(p, R_OK) == 0)
		return 0;
	printf("(%s module not built: skipped) ", name);
	return 1;
}

#endif
