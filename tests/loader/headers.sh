#!/bin/sh
# SPDX-License-Identifier: MIT
# headers.sh - every installed header (plugin_api/*.h) compiles on its own,
# twice in one unit (include guards), as strict C11 and as C++11, with
# warnings as errors, and with the adaptive-CC switch both off and on
# (STYLE 22; liburing / rdma-core check-build).
. "$MCC_TEST_SRCDIR/tests/loader/toolchain.sh"

cwarn="-Wall -Wextra -Wshadow -Wpointer-arith -Wstrict-prototypes -Wmissing-prototypes -Wvla"
cwarn="$cwarn -Wformat=2 -Werror"
xxwarn="-Wall -Wextra -Wshadow -Wpointer-arith -Werror"
have_cxx=0
echo 'int main(void) { return 0; }' > "$scratch/probe.cpp"
$CXX -x c++ -std=c++11 -c "$scratch/probe.cpp" -o "$scratch/probe.o" >/dev/null 2>&1 && have_cxx=1

for h in "$MCC_TEST_SRCDIR"/plugin_api/*.h; do
	name=$(basename "$h")
	printf '#include "%s"\n#include "%s"\n' "$name" "$name" > "$scratch/unit.c"
	for sw in "" "-DMCC_ENABLE_ADAPTIVE_CC=1"; do
		$CC -std=c11 -pedantic-errors $cwarn $sw -I"$MCC_TEST_SRCDIR/plugin_api" \
			-c "$scratch/unit.c" -o "$scratch/unit.o" || failed "$name as C11 $sw"
		if test $have_cxx -eq 1; then
			$CXX -x c++ -std=c++11 -pedantic-errors $xxwarn $sw -I"$MCC_TEST_SRCDIR/plugin_api" \
				-c "$scratch/unit.c" -o "$scratch/unit.o" || failed "$name as C++11 $sw"
		fi
	done
	echo "ok: $name"
done
test $have_cxx -eq 1 || echo "note: no working C++ compiler ($CXX), C++ checks skipped"
exit $fail
