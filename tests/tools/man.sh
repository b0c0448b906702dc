#!/bin/sh
# SPDX-License-Identifier: MIT
# man.sh - the manual pages as installed (plugin_api/man/gen/, generated
# from plugin_api/man/ with the configured directories):
#   - no make variable left ("$(sysconfdir)" and the like);
#   - groff -z -man -ww: any warning fails;
#   - man -l renders each page, with groff's warnings on, silently;
#   - mcc.ini(5) documents every key of the configuration table, in its
#     section, with its environment variable and (numbers) its default: the
#     keys come from `mcc check` (the table in plugin_api/lib/config.c), so a key
#     added there without documentation fails here.
. "$MCC_TEST_SRCDIR/tests/loader/toolchain.sh"

man_dir=$MCC_TEST_BUILDDIR/plugin_api/man/gen
pages="mcc.1 mcc.ini.5 mcc_policy_v1.7"

for p in $pages; do
	test -r "$man_dir/$p" || { failed "$man_dir/$p: not generated"; continue; }
	grep -n '\$(' "$man_dir/$p" && failed "$p: a make variable is left in the installed page"
done
mcc=$MCC_TEST_BUILDDIR/plugin_api/tools/mcc

if ! command -v groff > /dev/null 2>&1; then
	echo "FAIL: groff not found (Debian package groff-base)"
	exit 1
fi
for p in $pages; do
	groff -z -man -ww "$man_dir/$p" > "$scratch/groff.out" 2>&1 || failed "groff $p: exit $?"
	test -s "$scratch/groff.out" && failed "groff -ww $p: $(cat "$scratch/groff.out")"
	echo "ok: groff -z -man -ww $p"
done
# The checker itself: a page with a warning must fail it.
printf '.TH X 1\n.SH NAME\nx \\- y\n.BOGUS\n' > "$scratch/bad.1"
groff -z -man -ww "$scratch/bad.1" 2>&1 | grep -q . || failed "groff -ww did not warn on an unknown macro"

if command -v man > /dev/null 2>&1; then
	for p in $pages; do
		MANWIDTH=80 MAN_KEEP_FORMATTING= man --warnings -l "$man_dir/$p" \
			> "$scratch/man.out" 2> "$scratch/man.err" || failed "man -l $p: exit $?"
		test -s "$scratch/man.err" && failed "man -l $p: $(cat "$scratch/man.err")"
		grep -q "^NAME" "$scratch/man.out" || failed "man -l $p: no NAME section rendered"
		echo "ok: man -l $p"
	done
else
	echo "FAIL: man not found (Debian package man-db)"
	fail=1
fi

# Every key of the table, from the command's default output:
# "[section]" lines, then "key = value ; default" or "; key = (unset) ; default".
MC_ADAPTIVE_CC_CONFIG=none "$mcc" check > "$scratch/keys" 2> /dev/null ||
	failed "mcc check with the defaults failed"
awk '/^\[/ { sec = substr($1, 2, length($1) - 2); next }
     /^; [a-z_]+ = / { print sec, $2, "-"; next }
     /^[a-z_]+ = / { print sec, $1, $3 }' "$scratch/keys" > "$scratch/table"
n=$(wc -l < "$scratch/table")
test "$n" -ge 20 || failed "only $n keys in the output of mcc check"
page=$man_dir/mcc.ini.5
while read -r sec key def; do
	var=MC_ADAPTIVE_CC_$(echo "$key" | tr a-z A-Z)
	# The key's entry: from ".B key" after ".SH "[sec] KEYS"" up to the next .TP/.SH.
	awk -v sec="$sec" -v key="$key" '
		/^\.SH/ { insec = index($0, "\"[" sec "] KEYS\"") > 0; inkey = 0; next }
		/^\.TP/ { inkey = 0; tp = 1; next }
		tp && insec && $0 == ".B " key { inkey = 1; found = 1 }
		{ tp = 0 }
		inkey { print }
		END { exit !found }' "$page" > "$scratch/entry" ||
		{ failed "mcc.ini(5): no entry '.B $key' under [$sec] KEYS"; continue; }
	grep -q "$var" "$scratch/entry" || failed "mcc.ini(5): $key: variable $var not named"
	case $def in
	[0-9]*) tr '\n' ' ' < "$scratch/entry" | grep -q "default $def;" ||
		failed "mcc.ini(5): $key: default $def not stated" ;;
	esac
done < "$scratch/table"
echo "ok: mcc.ini(5) documents the $n keys of the configuration table"
exit $fail
