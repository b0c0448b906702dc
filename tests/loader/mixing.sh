#!/bin/sh
# SPDX-License-Identifier: MIT
# mixing.sh - the RFC's "manually compiled ON/OFF objects must not be
# mixed": objects including mcc_hooks.h compiled with and without
# MCC_ENABLE_ADAPTIVE_CC link together only when all agree; a mixed
# executable or shared library fails at link time on mcc_cc_layout_marker.
. "$MCC_TEST_SRCDIR/tests/loader/toolchain.sh"

inc=-I$MCC_TEST_SRCDIR/plugin_api/include
cat > "$scratch/lib.c" <<'EOS'
#include "mcc_hooks.h"
int mcc_test_lib(void);
int mcc_test_lib(void) { return MCC_CC_COMPILED_IN; }
EOS
cat > "$scratch/other.c" <<'EOS'
#include "mcc_hooks.h"
int mcc_test_other(void);
int mcc_test_other(void) { return MCC_CC_COMPILED_IN; }
EOS
cat > "$scratch/main.c" <<'EOS'
#include "mcc_hooks.h"
int mcc_test_lib(void);
int main(void) { return mcc_test_lib() != MCC_CC_COMPILED_IN; }
EOS
for f in lib other main; do
	$CC -fPIC -c "$scratch/$f.c" $inc -o "$scratch/$f-off.o" || failed "compile $f OFF"
	$CC -fPIC -c "$scratch/$f.c" $inc -DMCC_ENABLE_ADAPTIVE_CC=1 -o "$scratch/$f-on.o" ||
		failed "compile $f ON"
done

# link <output> <arguments...>: 0 when the link succeeds; output in <output>.log
link() {
	out=$1
	shift
	(cd "$scratch" && $CC "$@" -o "$out" >"$out.log" 2>&1)
}

# must_fail <output> <arguments...>: the link fails, on the marker
must_fail() {
	if link "$@"; then
		failed "mixed ON/OFF objects linked: $*"
	elif ! grep -q mcc_cc_layout_marker "$scratch/$1.log"; then
		failed "mixed link $* failed, but not on mcc_cc_layout_marker: $(cat "$scratch/$1.log")"
	fi
}

for s in off on; do
	link "all-$s" "main-$s.o" "lib-$s.o" "other-$s.o" || failed "all-$s objects do not link"
	"$scratch/all-$s" || failed "the all-$s program does not run"
	link "lib-$s.so" -shared "lib-$s.o" "other-$s.o" || failed "all-$s shared library does not link"
done
must_fail mixed1 main-on.o lib-off.o
must_fail mixed2 main-off.o lib-on.o
must_fail mixed3 main-on.o lib-on.o other-off.o
must_fail mixed.so -shared lib-on.o other-off.o
test $fail -eq 0 && echo "ok: ON/OFF mixing is refused at link time, uniform builds link"
exit $fail
