#!/bin/sh
# SPDX-License-Identifier: MIT
# check-abi.sh BUILDDIR SRCDIR [--update]  (make check-abi / make update-abi-baseline)
# The ABI of what an engine links and loads, against the abidw baselines
# committed in tests/abi/baseline/: libmcc and every shipped module (whose
# one export is its struct mcc_policy_v1 descriptor). Types are those of the
# public headers (plugin_api/include/). Fails on
#   - an incompatible change by abidiff (a removed or changed symbol), and
#   - a struct layout that is not append-only (tests/abi/layout.py);
# reports compatible changes (an added function, an appended member) and
# says how to take them into the baseline. Needs abidw/abidiff (Debian
# abigail-tools) and a build with debug info (the default -g -O2).
set -u
B=$1 S=$2 MODE=${3:-check}
BASE=$S/tests/abi/baseline
command -v abidw >/dev/null 2>&1 || { echo "check-abi: abidw not found (apt-get install abigail-tools)" >&2; exit 2; }
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

objects() {
	echo "$B/plugin_api/.libs/libmcc.so libmcc"
	for m in "$B"/modules/.libs/mcc-policy-*.so; do
		[ -e "$m" ] && echo "$m $(basename "$m" .so)"
	done
}

fail=0
objects | while read -r so name; do
	[ -e "$so" ] || { echo "check-abi: $so missing (build first)"; exit 1; }
	abidw --headers-dir "$S/plugin_api/include" --no-corpus-path --no-comp-dir-path "$so" >"$tmp/$name.abi" ||
		{ echo "check-abi: abidw failed on $so"; exit 1; }
	if [ "$MODE" = --update ]; then
		mkdir -p "$BASE" && cp "$tmp/$name.abi" "$BASE/$name.abi"
		echo "check-abi: baseline $name.abi written"
		continue
	fi
	if [ ! -e "$BASE/$name.abi" ]; then
		echo "check-abi: FAIL $name: no baseline (a new shipped object: make update-abi-baseline)"
		exit 1
	fi
	abidiff --no-show-locs "$BASE/$name.abi" "$tmp/$name.abi" >"$tmp/$name.diff" 2>&1
	rc=$?
	if [ $((rc & 3)) != 0 ]; then
		cat "$tmp/$name.diff"; echo "check-abi: FAIL $name: abidiff error ($rc)"; exit 1
	elif [ $((rc & 8)) != 0 ]; then
		cat "$tmp/$name.diff"; echo "check-abi: FAIL $name: incompatible ABI change"; exit 1
	fi
	if ! python3 "$S/tests/abi/layout.py" "$BASE/$name.abi" "$tmp/$name.abi"; then
		echo "check-abi: FAIL $name: a struct of the public headers is not append-only"; exit 1
	fi
	if [ $((rc & 4)) != 0 ]; then
		sed 's/^/  /' "$tmp/$name.diff"
		echo "check-abi: $name: compatible change (above); make update-abi-baseline records it"
	else
		echo "check-abi: $name: unchanged"
	fi
done || fail=1
exit $fail
