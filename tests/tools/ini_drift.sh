#!/bin/sh
# SPDX-License-Identifier: MIT
# ini_drift.sh [INI] - conf/mcc.ini (or INI) against the configuration key
# table of plugin_api/lib/config.c, as `mcc check` prints it (no second copy of
# the table here):
#   - `mcc check` without a file (MC_ADAPTIVE_CC_CONFIG=none) lists every
#     key of the table with its default: "key = value ; default", or
#     "; key = (unset) ; default";
#   - every key with a default must be set by the sample file itself (its
#     source is INI:line, not "default") to exactly that default;
#   - a key without a fixed default (unset, or $(pkglibdir) for module_dir)
#     must stay a commented example ("; key = ...") and not be set;
#   - the sample sets or documents no key that the table lacks;
#   - mcc.ini(5) states the same numeric defaults, and the modules' example
#     files (modules/*/*.ini) depart from them only under a comment.
# (test_config.c checks the values parse to the defaults; this one that the
# sample names every key.) Pass a copy of the sample as INI to see it fail.
. "$MCC_TEST_SRCDIR/tests/loader/toolchain.sh"

mcc=$MCC_TEST_BUILDDIR/plugin_api/tools/mcc
ini=${1:-$MCC_TEST_SRCDIR/conf/mcc.ini}
s=$scratch

# The table, not the caller's environment: drop every MC_ADAPTIVE_CC_*.
for v in $(env | sed -n 's/^\(MC_ADAPTIVE_CC_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done

MC_ADAPTIVE_CC_CONFIG=none "$mcc" check > "$s/table" 2> "$s/err" ||
	{ echo "FAIL: mcc check without a file: $(cat "$s/err")"; exit 1; }
# Its [module.*] sections are checked by the modules of this build.
MC_ADAPTIVE_CC_MODULE_DIR=$MCC_TEST_MODULE_DIR "$mcc" check "$ini" > "$s/sample" 2> "$s/err" ||
	{ echo "FAIL: mcc check $ini: $(cat "$s/err")"; exit 1; }

# "[; ]key = value ; source" -> "key|value|source" (value "" when unset).
keys() {
	sed -n -e 's/^; \([a-z_0-9]*\) = (unset) *; \(.*\)$/\1||\2/p' \
	       -e 's/^\([a-z_0-9]*\) = \(.*[^ ]\) *; \(.*\)$/\1|\2|\3/p' "$1"
}
keys "$s/table" > "$s/table.k"
keys "$s/sample" > "$s/sample.k"
n=$(wc -l < "$s/table.k")
test "$n" -ge 20 || failed "only $n keys read from mcc check (output format changed?)"

while IFS='|' read -r key def src; do
	test "x$src" = xdefault || failed "no file: $key comes from '$src', not the default"
	line=$(grep "^$key|" "$s/sample.k")
	val=$(printf '%s\n' "$line" | cut -d'|' -f2)
	from=$(printf '%s\n' "$line" | cut -d'|' -f3)
	if test -z "$def" || test "$key" = module_dir; then
		# No fixed default: documented as a commented example, not set.
		grep -Eq "^; *$key *=" "$ini" ||
			failed "$key: no commented example '; $key = ...' in $ini"
		test "x$from" = xdefault || test "x$from" = xMC_ADAPTIVE_CC_MODULE_DIR ||
			failed "$key: set by $from; it has no fixed default (leave it commented)"
		continue
	fi
	case $from in
	"$ini":*) ;;
	*) failed "$key: missing from $ini (table default $def)"; continue ;;
	esac
	test "x$val" = "x$def" || failed "$key = $val at $from, but the table's default is $def"
done < "$s/table.k"

# Every key the sample sets or documents in [policy], [controller], [engine]
# is in the table ([module.*] keys belong to their modules).
awk '/^\[/ { mod = ($0 ~ /^\[module\./); next }
     !mod && match($0, /^[; ]*[a-z_0-9]+ *=/) { k = substr($0, 1, RLENGTH); gsub(/[; =]/, "", k); print k }' \
	"$ini" | sort -u |
while read -r key; do
	grep -q "^$key|" "$s/table.k" || { echo "FAIL: $ini names '$key', which the key table lacks"; exit 1; }
done || fail=1

# mcc.ini(5) states each default as ".B key" then "...; default V; ...", and
# the modules' example files set a [controller] key to another value only
# under a comment that says why (with no INI argument: a copy given as INI
# is checked alone).
if test $# -eq 0; then
	man5=$MCC_TEST_SRCDIR/plugin_api/man/mcc.ini.5
	awk '/^\.B [a-z_0-9]+$/ { k = $2; next }
	     k != "" && match($0, /default [0-9]+/) { print k "|" substr($0, RSTART + 8, RLENGTH - 8) }
	     { k = "" }' "$man5" > "$s/man.k"
	while IFS='|' read -r key def src; do
		case $def in '' | *[!0-9]*) continue ;; esac # numbers: the [controller] keys
		mv=$(grep "^$key|" "$s/man.k" | cut -d'|' -f2)
		test "x$mv" = "x$def" || failed "mcc.ini(5): $key default '${mv:-missing}', the table's is $def"
	done < "$s/table.k"
	for mi in "$MCC_TEST_SRCDIR"/modules/*/*.ini; do
		awk '/^\[/ { c = ($0 == "[controller]"); why = 0; next }
		     c && match($0, /^[a-z_0-9]+ *= *[0-9]+/) { gsub(/ /, ""); print $0 "=" why }
		     { why = /^;/ }' "$mi" |
		while IFS='=' read -r key val why; do
			def=$(grep "^$key|" "$s/table.k" | cut -d'|' -f2)
			test "x$val" = "x$def" || test "$why" = 1 ||
				{ echo "FAIL: $mi: $key = $val without a comment saying why, the table's default is ${def:-none}"; exit 1; }
		done || fail=1
	done
fi

test $fail = 0 && echo "ok: $n keys of the table in $ini, mcc.ini(5) and the modules' examples, with their defaults"
exit $fail
