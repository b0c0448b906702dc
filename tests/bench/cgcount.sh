#!/bin/sh
# SPDX-License-Identifier: MIT
# cgcount.sh - instructions (and locked RMWs) per healthy-path pair, counted by
# valgrind --tool=callgrind on cgdriver: collection toggled on
# mcc_bench_cg_measured, and (count at 2N) - (count at N), divided by N, so
# loading, setup and first-call effects cancel. Instructions, never time.
#
# Usage: cgcount.sh -d CGDRIVER -m MODULE_DIR [-n N] [-o OUT.tsv] [-l]
#                   [-b BUDGET] ARM...
#   -l         also count locked RMWs (needs python3 and objdump)
#   -b BUDGET  exit 1 when an aimd-* arm exceeds BUDGET instructions per pair
# Output lines (stdout and OUT.tsv): cg<TAB>ARM<TAB>INSNS_PER_PAIR<TAB>LOCKED_PER_PAIR<TAB>N
set -eu

drv= moddir= n=100000 out= locks=0 budget=
while getopts d:m:n:o:lb: opt; do
	case $opt in
	d) drv=$OPTARG ;;
	m) moddir=$OPTARG ;;
	n) n=$OPTARG ;;
	o) out=$OPTARG ;;
	l) locks=1 ;;
	b) budget=$OPTARG ;;
	*) echo "usage: cgcount.sh -d CGDRIVER -m MODULE_DIR [-n N] [-o OUT] [-l] [-b BUDGET] ARM..." >&2
	   exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ -n "$drv" ] && [ -n "$moddir" ] && [ $# -gt 0 ] || { echo "cgcount.sh: -d, -m and ARMs are required" >&2; exit 2; }
VALGRIND=${VALGRIND:-valgrind}
PYTHON=${PYTHON:-python3}
command -v "$VALGRIND" >/dev/null 2>&1 || { echo "cgcount.sh: valgrind not found (VALGRIND=$VALGRIND)" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mcc-cg.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

total() { sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$1" | head -n 1; }

[ -n "$out" ] && : >"$out"
fail=0
for arm in "$@"; do
	for k in 1 2; do
		nk=$((n * k))
		extra=
		[ "$locks" = 1 ] && extra=--dump-instr=yes
		# shellcheck disable=SC2086
		if ! "$VALGRIND" --tool=callgrind $extra --toggle-collect=mcc_bench_cg_measured \
			--callgrind-out-file="$tmp/$arm.$k.out" "$drv" "$arm" "$nk" "$moddir" \
			>"$tmp/$arm.$k.log" 2>&1; then
			echo "cgcount.sh: $arm: cgdriver failed under valgrind:" >&2
			tail -n 20 "$tmp/$arm.$k.log" >&2
			exit 1
		fi
	done
	i1=$(total "$tmp/$arm.1.out") i2=$(total "$tmp/$arm.2.out")
	ipp=$(awk -v a="$i1" -v b="$i2" -v n="$n" 'BEGIN { printf "%.2f", (b - a) / n }')
	lpp=-
	if [ "$locks" = 1 ]; then
		l1=$("$PYTHON" "$here/cglocks.py" "$tmp/$arm.1.out") &&
			l2=$("$PYTHON" "$here/cglocks.py" "$tmp/$arm.2.out") &&
			lpp=$(awk -v a="$l1" -v b="$l2" -v n="$n" 'BEGIN { printf "%.2f", (b - a) / n }') ||
			lpp=-
	fi
	line=$(printf 'cg\t%s\t%s\t%s\t%s' "$arm" "$ipp" "$lpp" "$n")
	echo "$line"
	[ -n "$out" ] && echo "$line" >>"$out"
	case $arm in aimd-*)
		if [ -n "$budget" ] && awk -v x="$ipp" -v b="$budget" 'BEGIN { exit !(x > b) }'; then
			echo "cgcount.sh: FAIL: $arm costs $ipp instructions per pair, budget $budget (tests/bench/README.md)" >&2
			fail=1
		fi ;;
	esac
done
if [ -n "$budget" ] && [ "$fail" = 0 ]; then
	echo "cgcount.sh: aimd pair within the budget of $budget instructions"
fi
exit $fail
