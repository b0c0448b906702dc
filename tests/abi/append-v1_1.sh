#!/bin/sh
# SPDX-License-Identifier: MIT
# append-v1_1.sh PLUGIN_API_DIR OUTDIR - write a copy of libmcc's sources
# of a later minor to OUTDIR: mcc_policy_v1.h with one callback appended to
# struct mcc_policy_v1 (after the last member, try_acquire_qos of v1.2), and
# loader.c taught about it, exactly as such a change would be written (a
# FILL() line; the size assert names the new last member).
# tests/abi/test_append links this copy and must keep loading a module
# built against the v1.0 header snapshot.
set -eu
in=$1 out=$2
mkdir -p "$out"
cp "$in/include/mcc_loader.h" "$out/"
for f in mcc_internal.h mcc_defaults.h names_table.h config.c names.c null_builtin.c; do cp "$in/lib/$f" "$out/$f"; done
awk '
	/^struct mcc_policy_v1 \{/ { inside = 1 }
	inside && /^\};/ { print "\tvoid (*appended_v1_1)(void); /* test-only v1.1 member */"; inside = 0 }
	{ print }
' "$in/include/mcc_policy_v1.h" >"$out/mcc_policy_v1.h"
# The member loader.c's size assert names: the last one of this header.
last=$(sed -n '/_Static_assert(sizeof(struct mcc_policy_v1) ==/,/;$/p' "$in/lib/loader.c" |
	sed -n 's/.*offsetof(struct mcc_policy_v1, \([a-z_0-9]*\)).*/\1/p' | head -n 1)
test -n "$last" || { echo "append-v1_1.sh: no size assert in loader.c" >&2; exit 1; }
sed -e 's/^\tFILL(dump);$/\tFILL(dump);\n\tFILL(appended_v1_1);/' \
    -e "s/offsetof(struct mcc_policy_v1, $last)/offsetof(struct mcc_policy_v1, appended_v1_1)/" \
    -e "s/->$last),\$/->appended_v1_1),/" "$in/lib/loader.c" >"$out/loader.c"
grep -q 'appended_v1_1' "$out/mcc_policy_v1.h" && grep -q 'FILL(appended_v1_1)' "$out/loader.c" ||
	{ echo "append-v1_1.sh: could not append (struct or loader.c changed shape)" >&2; exit 1; }
