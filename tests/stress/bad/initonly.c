/* SPDX-License-Identifier: MIT */
/* initonly.c - test-only module: init() and fini() only; every other
 * callback is NULL and the host fills it from the built-in null module. */
#include "minimal.h"

MINIMAL_MODULE(sizeof(struct mcc_policy_v1), "initonly", "init/fini only");
