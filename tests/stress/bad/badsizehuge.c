/* SPDX-License-Identifier: MIT */
/* badsizehuge.c - test-only module: a descriptor of this header's size (216
 * bytes at v1.2) claiming struct_size 0xffffffff (minor 0). A loader that trusted the size would
 * copy 4 GiB from the symbol; it must copy at most its own sizeof (the ABI's
 * "a later minor's tail is ignored") or refuse. Otherwise valid. */
#include "minimal.h"

MINIMAL_MODULE(0xffffffffu, "badsizehuge", "struct_size 0xffffffff");
