#!/bin/sh
# SPDX-License-Identifier: MIT
# exports.sh - every shipped module (modules/.libs/mcc-policy-*.so) exports
# exactly its descriptor symbols mcc_policy_v<N> and has no ELF
# constructor of its own (nothing may run at dlopen time; toolchain and
# sanitizer start-up code is allowed); libmcc exports only the mcc_* API of
# mcc_loader.h and mcc_engine.h, each with the symbol version MCC_1.0. The test-only module with a constructor proves the
# constructor check can fail.
. "$MCC_TEST_SRCDIR/tests/loader/toolchain.sh"

moddir=$MCC_TEST_BUILDDIR/modules/.libs
baddir=$MCC_TEST_BUILDDIR/tests/loader/bad/.libs
libmcc=$MCC_TEST_BUILDDIR/plugin_api/.libs/libmcc.so

# Defined dynamic symbols without their version; version nodes (type A,
# e.g. MCC_1.0) are not symbols.
defined() {
	$NM -D --defined-only "$1" | awk 'NF >= 3 && $2 != "A" { print $3 }' | sed 's/@.*//' | sort -u
}

# Names of the functions an object's .init_array runs (empty when readelf
# is missing).
ctors() {
	command -v "$READELF" >/dev/null 2>&1 || return 0
	set -- "$1" $($READELF -W -S "$1" |
		awk '{ for (i = 1; i <= NF; i++) if ($i == ".init_array") print $(i + 2), $(i + 4) }')
	test $# -eq 3 || return 0
	so=$1 start=$((0x$2)) size=$((0x$3))
	# Position-independent .init_array entries are R_*_RELATIVE relocations
	# whose addend is the function's address.
	$READELF -W -r "$so" | awk '$3 ~ /_RELATIVE$/ { print $1, $4 }' |
	while read -r off val; do
		off=$((0x$off))
		test "$off" -ge "$start" && test "$off" -lt $((start + size)) || continue
		$NM "$so" 2>/dev/null | awk -v a="$((0x$val))" '
			{ v = 0; h = tolower($1)
			  for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
			  if (v == a && ($2 == "t" || $2 == "T")) { print $3; exit } }'
	done
}

# Allowed: crtbegin's frame_dummy and the sanitizers' module constructors
# (clang: <san>.module_ctor; gcc: priority-99 _sub_I_00099_<n>).
allowed_ctor() {
	case $1 in
	frame_dummy | asan.module_ctor | tsan.module_ctor | ubsan.module_ctor | \
	_sub_I_00099_* | _GLOBAL__sub_I_00099_*) return 0 ;;
	esac
	return 1
}

count=0
for so in "$moddir"/mcc-policy-*.so; do
	test -f "$so" || continue
	count=$((count + 1))
	syms=$(defined "$so")
	test -n "$syms" || failed "$so exports nothing"
	echo "$syms" | grep -qx 'mcc_policy_v1' || failed "$so does not export mcc_policy_v1"
	bad=$(echo "$syms" | grep -vE '^mcc_policy_v[0-9]+$')
	test -z "$bad" || failed "$so exports more than mcc_policy_v*: $(echo $bad)"
	for c in $(ctors "$so"); do
		allowed_ctor "$c" || failed "$so has an ELF constructor: $c"
	done
	echo "ok: $(basename "$so"): $(echo $syms)"
done
test "$count" -gt 0 || failed "no module in $moddir"

# libmcc: the loader API only.
syms=$(defined "$libmcc")
bad=$(echo "$syms" | grep -vE '^mcc_[a-z][a-z0-9_]*$')
test -z "$bad" || failed "libmcc exports non-API symbols: $(echo $bad)"
echo "$syms" | grep -qx mcc_instance_acquire || failed "libmcc lacks mcc_instance_acquire"
# The provenance API behind `mcc check` (mcc_loader.h).
echo "$syms" | grep -qx mcc_config_explain || failed "libmcc lacks mcc_config_explain"
# The engine SDK (mcc_engine.h): every function it declares, and no other mcc_engine_*.
sdk=$(sed -n 's/^[a-z_0-9 *]*[ *]\(mcc_engine_[a-z_0-9]*\)(.*/\1/p' \
	"$MCC_TEST_SRCDIR/plugin_api/include/mcc_engine.h" | sort -u)
test -n "$sdk" || failed "no function found in mcc_engine.h"
for f in $sdk; do
	echo "$syms" | grep -qx "$f" || failed "libmcc lacks $f (mcc_engine.h)"
done
extra=$(echo "$syms" | grep '^mcc_engine_' | grep -vxF "$sdk")
test -z "$extra" || failed "libmcc exports mcc_engine_* not in mcc_engine.h: $(echo $extra)"
echo "$syms" | grep -q '^mcc_policy_v' && failed "libmcc exports a module descriptor"
# Symbol versioning (plugin_api/lib/libmcc.map): every export is mcc_*@@MCC_1.0.
unversioned=$($NM -D --defined-only "$libmcc" | awk 'NF >= 3 && $3 ~ /^mcc_/ { print $3 }' |
	grep -v '@@MCC_1\.0$')
test -z "$unversioned" || failed "libmcc exports without the version MCC_1.0: $(echo $unversioned)"
$NM -D --defined-only "$libmcc" | awk 'NF >= 3 { print $3 }' | grep -qx 'MCC_1\.0' ||
	failed "libmcc defines no version node MCC_1.0"
echo "ok: libmcc: $(echo "$syms" | wc -l) functions, each mcc_*@@MCC_1.0"

# The constructor check itself: it must see the test module's constructor.
if command -v "$READELF" >/dev/null 2>&1; then
	found=0
	for c in $(ctors "$baddir/mcc-policy-ctor.so"); do
		allowed_ctor "$c" || found=1
	done
	test "$found" -eq 1 || failed "constructor check did not detect mcc-policy-ctor.so's constructor"
else
	echo "note: readelf not found, constructor check skipped"
fi
exit $fail
