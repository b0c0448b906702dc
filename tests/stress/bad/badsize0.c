/* SPDX-License-Identifier: MIT */
/* badsize0.c - test-only module: a descriptor whose struct_size is 0 (the
 * loader must refuse it: smaller than the v1.0 member set). Otherwise
 * valid. */
#include "minimal.h"

MINIMAL_MODULE(0, "badsize0", "struct_size 0");
