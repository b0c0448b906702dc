#!/bin/sh
# SPDX-License-Identifier: MIT
# headers.sh - every installed header (plugin_api/*.h) compiles on its own,
# twice in one unit (include guards), as strict C11 and as C++11, with
# warnings as errors, and with the adaptive-CC switch both off and on
# (as liburing and rdma-core check their headers).
. "$MCC_TEST_SRCDIR/tests/loader/toolchain.sh"

cwarn="-Wall -Wextra -Wshadow -Wpointer-arith -Wstrict-prototypes -Wmissing-prototypes -Wvla"
cwarn="$cwarn -Wformat=2 -Werror"
xxwarn="-Wall -Wextra -Wshadow -Wpointer-arith -Werror"
have_cxx=0
echo 'int main(void) { return 0; }' > "$scratch/probe.cpp"
$CXX -x c++ -std=c++11 -c "$scratch/probe.cpp" -o "$scratch/probe.o" >/dev/null 2>&1 && have_cxx=1

for h in "$MCC_TEST_SRCDIR"/plugin_api/include/*.h; do
	name=$(basename "$h")
	printf '#include "%s"\n#include "%s"\n' "$name" "$name" > "$scratch/unit.c"
	for sw in "" "-DMCC_ENABLE_ADAPTIVE_CC=1"; do
		$CC -std=c11 -pedantic-errors $cwarn $sw -I"$MCC_TEST_SRCDIR/plugin_api/include" \
			-c "$scratch/unit.c" -o "$scratch/unit.o" || failed "$name as C11 $sw"
		if test $have_cxx -eq 1; then
			$CXX -x c++ -std=c++11 -pedantic-errors $xxwarn $sw -I"$MCC_TEST_SRCDIR/plugin_api/include" \
				-c "$scratch/unit.c" -o "$scratch/unit.o" || failed "$name as C++11 $sw"
		fi
	done
	echo "ok: $name"
done
# The spellings first published without _v1 name the same types as the _v1
# names (a pointer converts with no cast: same type, not a lookalike), in C
# and C++; MCC_NO_UNVERSIONED_NAMES takes them away.
cat > "$scratch/names.c" <<'EOF2'
#include "mcc_policy_v1.h"
struct mcc_permit_v1 *names_permit(struct mcc_permit *p);
struct mcc_permit_v1 *names_permit(struct mcc_permit *p) { return p; }
const struct mcc_completion *names_wc(const struct mcc_completion_v1 *w);
const struct mcc_completion *names_wc(const struct mcc_completion_v1 *w) { return w; }
typedef char names_sizes[sizeof(struct mcc_signal) == sizeof(struct mcc_signal_v1) &&
                         sizeof(struct mcc_task_detail) == sizeof(struct mcc_task_detail_v1) &&
                         sizeof(struct mcc_domain_stats) == sizeof(struct mcc_domain_stats_v1) &&
                         sizeof(struct mcc_task_ref) + sizeof(struct mcc_async_event) +
                         sizeof(struct mcc_device_desc) + sizeof(struct mcc_route_desc) +
                         sizeof(struct mcc_lane_desc) > 0 ? 1 : -1];
EOF2
$CC -std=c11 -pedantic-errors $cwarn -I"$MCC_TEST_SRCDIR/plugin_api/include" \
	-c "$scratch/names.c" -o "$scratch/names.o" || failed "unversioned names as C11"
if test $have_cxx -eq 1; then
	$CXX -x c++ -std=c++11 -pedantic-errors $xxwarn -I"$MCC_TEST_SRCDIR/plugin_api/include" \
		-c "$scratch/names.c" -o "$scratch/names.o" || failed "unversioned names as C++11"
fi
if $CC -std=c11 -DMCC_NO_UNVERSIONED_NAMES -I"$MCC_TEST_SRCDIR/plugin_api/include" \
	-c "$scratch/names.c" -o "$scratch/names.o" >/dev/null 2>&1; then
	failed "MCC_NO_UNVERSIONED_NAMES left the old names defined"
fi
echo "ok: unversioned names"
test $have_cxx -eq 1 || echo "note: no working C++ compiler ($CXX), C++ checks skipped"
exit $fail
