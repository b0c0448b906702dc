#!/bin/sh
# SPDX-License-Identifier: MIT
# scale.sh - what the control plane costs against the number of open routes
# (tests/bench/README.md "Scale"): instructions (callgrind, the inclusive
# cost of each measured function of benchscale over its count) and CPU time
# (a run without valgrind) of tick, route_open, domain_stats and the
# admit + completion pair, per size; one lane over 1 and 1,024 routes;
# memory per route and per evidence slot.
#
# Usage: scale.sh -d BENCHSCALE -m MODULE_DIR [-o OUTDIR] [-q] [-c]
#   -q  quick (also BENCH_QUICK=1): sizes up to 64k (no 1M)
#   -c  the CI check: sizes 1,000 and 16,384, instructions only; exits 1
#       when a figure passes its budget (SCALE_* variables, set by
#       tests/bench/Makefile.inc)
# Output: OUTDIR/scale.tsv (op open active count insns_per_op cpu_ns_per_op),
# OUTDIR/scale.md, OUTDIR/scale-*.png with gnuplot ($GNUPLOT).
set -eu

drv= mod= out=. quick= ci=
while getopts d:m:o:qc opt; do
	case $opt in
	d) drv=$OPTARG ;;
	m) mod=$OPTARG ;;
	o) out=$OPTARG ;;
	q) quick=1 ;;
	c) ci=1 ;;
	*) echo "usage: scale.sh -d BENCHSCALE -m MODULE_DIR [-o OUTDIR] [-q] [-c]" >&2; exit 2 ;;
	esac
done
case ${BENCH_QUICK:-0} in 0|'') ;; *) quick=1 ;; esac
[ -n "$drv" ] && [ -n "$mod" ] || { echo "scale.sh: -d and -m are required" >&2; exit 2; }
VALGRIND=${VALGRIND:-valgrind}
command -v "$VALGRIND" >/dev/null 2>&1 || { echo "scale.sh: valgrind not found" >&2; exit 2; }
command -v callgrind_annotate >/dev/null 2>&1 || { echo "scale.sh: callgrind_annotate not found" >&2; exit 2; }
mkdir -p "$out"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mcc-scale.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
tsv=$out/scale.tsv
: >"$tsv"
t0=$(date +%s)
say() { printf 'scale: [%4ds] %s\n' $(($(date +%s) - t0)) "$*" >&2; }

# Inclusive instructions of function $2 in callgrind output $1.
incl() {
	callgrind_annotate --inclusive=yes --threshold=100 "$1" 2>/dev/null |
		sed -n "s/^ *\([0-9,]*\) .*:$2 .*/\1/p" | head -n 1 | tr -d ,
}

# measure NAME -- BENCHSCALE ARGS...: callgrind run, then native run; rows
# joined by op. A native line "scale OP OPEN ACTIVE COUNT NS" and the
# callgrind line of the same op (its own COUNT) give one row.
measure() {
	name=$1
	shift
	"$VALGRIND" --tool=callgrind --toggle-collect='mcc_scale_m_*' \
		--callgrind-out-file="$tmp/$name.cg" "$drv" "$@" >"$tmp/$name.cgout" 2>"$tmp/$name.cgerr" || {
		echo "scale.sh: $name: benchscale failed under valgrind:" >&2
		tail -n 20 "$tmp/$name.cgerr" >&2
		exit 1
	}
	if [ -z "$ci" ]; then
		"$drv" "$@" >"$tmp/$name.native" 2>>"$tmp/$name.err" || { cat "$tmp/$name.err" >&2; exit 1; }
	else
		: >"$tmp/$name.native"
	fi
	while read -r tag op open active count _; do
		[ "$tag" = scale ] || continue
		case $op in open_wall_ms|mem_*) continue ;; esac
		fn=mcc_scale_m_$op
		case $op in lane_exact) fn=mcc_scale_m_lane ;; esac
		ir=$(incl "$tmp/$name.cg" "$fn")
		ipp=$(awk -v a="${ir:-0}" -v n="$count" 'BEGIN { printf "%.1f", n ? a / n : 0 }')
		ns=$(awk -v op="$op" '$1 == "scale" && $2 == op { print $6 }' "$tmp/$name.native")
		printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$op" "$open" "$active" "$count" "$ipp" "${ns:--}" >>"$tsv"
	done <"$tmp/$name.cgout"
	awk '$1 == "scale" && ($2 == "open_wall_ms" || $2 ~ /^mem_/) {
		printf "%s\t%s\t%s\t%s\t-\t%s\n", $2, $3, $4, $5, $6 }' "$tmp/$name.native" >>"$tsv"
}

get() { # get OP OPEN ACTIVE COLUMN(5: insns, 6: ns)
	awk -F '\t' -v o="$1" -v n="$2" -v a="$3" -v c="$4" \
		'$1 == o && $2 == n && $3 == a { print $c; exit }' "$tsv"
}

if [ -n "$ci" ]; then
	say "CI check: 1,000 and 16,384 routes, 0 and 100 busy; one lane over 1 and 1,024 routes"
	for n in 1000 16384; do
		measure "run$n" run "$n" 0,100 10 1000 10000 "$mod"
	done
	measure lane1 lane 1 20000 "$mod"
	measure lane1024 lane 1024 20000 "$mod"
	MCC_SCALE_EXACT=1 measure lanex1 lane 1 20000 "$mod"
	MCC_SCALE_EXACT=1 measure lanex1024 lane 1024 20000 "$mod"
	fail=0
	check() { # check WHAT VALUE BUDGET
		if awk -v v="$2" -v b="$3" 'BEGIN { exit !(v > b) }'; then
			echo "scale.sh: FAIL: $1 = $2, budget $3 (tests/bench/README.md \"Scale\")" >&2
			fail=1
		else
			echo "scale.sh: $1 = $2 (budget $3)"
		fi
	}
	t1k=$(get tick_1 1000 100 5) t16k=$(get tick_1 16384 100 5)
	check "tick, 16k open / 1k open, 100 busy (x)" \
		"$(awk -v a="$t16k" -v b="$t1k" 'BEGIN { printf "%.3f", a / b }')" "${SCALE_TICK_RATIO:-1.5}"
	check "tick, 16k open, 100 busy, per busy route (insns)" \
		"$(awk -v a="$t16k" 'BEGIN { printf "%.1f", a / 100 }')" "${SCALE_TICK_PER_ACTIVE:-900}"
	check "tick, 16k open, none busy (insns)" "$(get tick_0 16384 0 5)" "${SCALE_TICK_IDLE:-3000}"
	check "route_open at 16k open (insns)" "$(get open_more 16384 0 5)" "${SCALE_OPEN:-6000}"
	check "domain_stats at 16k open (insns)" "$(get stats 16384 100 5)" "${SCALE_STATS:-700}"
	check "pair, 16k open / 1k open (x)" \
		"$(awk -v a="$(get pair 16384 100 5)" -v b="$(get pair 1000 100 5)" 'BEGIN { printf "%.3f", a / b }')" \
		"${SCALE_PAIR_RATIO:-1.1}"
	check "one lane, 1,024 routes / 1 route (x)" \
		"$(awk -v a="$(get lane 1024 1024 5)" -v b="$(get lane 1 1 5)" 'BEGIN { printf "%.3f", a / b }')" \
		"${SCALE_LANE_RATIO:-1.5}"
	check "one lane, 1,024 routes / 1 route, exact mode (x)" \
		"$(awk -v a="$(get lane_exact 1024 1024 5)" -v b="$(get lane_exact 1 1 5)" 'BEGIN { printf "%.3f", a / b }')" \
		"${SCALE_LANE_RATIO:-1.5}"
	exit $fail
fi

sizes="1 1000 10000 65536 1048576"
[ -n "$quick" ] && sizes="1 1000 10000 65536"
for n in $sizes; do
	say "$n open routes"
	measure "run$n" run "$n" 0,1000,10000 20 2000 20000 "$mod"
done
say "one lane over 1 and 1,024 routes (lane credit; exact mode)"
measure lane1 lane 1 100000 "$mod"
measure lane1024 lane 1024 100000 "$mod"
MCC_SCALE_EXACT=1 measure lanex1 lane 1 100000 "$mod"
MCC_SCALE_EXACT=1 measure lanex1024 lane 1024 100000 "$mod"
say "memory"
"$drv" mem 65536 65536 "$mod" | awk '$1 == "scale" { printf "%s\t%s\t%s\t%s\t-\t%s\n", $2, $3, $4, $5, $6 }' >>"$tsv"

# ------------------------------------------------------------------ report
md=$out/scale.md
{
	echo "# Control plane against open routes (tests/bench/scale.sh)"
	echo
	echo "Instructions: callgrind, the measured function's inclusive count over its"
	echo "calls. CPU: thread CPU time of a run without valgrind (load average at the"
	echo "end: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo ?))."
	echo
	echo "| op | open routes | busy routes | instructions / op | CPU ns / op |"
	echo "|---|---:|---:|---:|---:|"
	awk -F '\t' '$5 != "-" { printf "| %s | %s | %s | %s | %s |\n", $1, $2, $3, $5, $6 }' "$tsv"
	echo
	echo "| figure | value |"
	echo "|---|---:|"
	awk -F '\t' '$5 == "-" { printf "| %s at %s (%s) | %s |\n", $1, $2, $4, $6 }' "$tsv"
} >"$md"
say "report: $md"

GNUPLOT=${GNUPLOT:-gnuplot}
if command -v "$GNUPLOT" >/dev/null 2>&1; then
	for a in 0 1000 10000; do
		awk -F '\t' -v a="$a" '$1 ~ /^tick_/ && $3 == a { print $2, $5, $6 }' "$tsv" >"$tmp/tick$a.dat"
	done
	for op in open open_more stats pair; do
		awk -F '\t' -v o="$op" '$1 == o { print $2, $5, $6 }' "$tsv" >"$tmp/$op.dat"
	done
	"$GNUPLOT" <<EOF || say "gnuplot failed; no plot"
set terminal png size 1000,800 noenhanced
set output '$out/scale.png'
set multiplot layout 2,1 title 'mcc control plane against open routes (instructions, callgrind)'
set logscale xy
set xlabel 'open routes'
set ylabel 'instructions per tick'
set key left top
plot '$tmp/tick0.dat' u 1:2 w lp t 'tick, 0 busy', '$tmp/tick1000.dat' u 1:2 w lp t 'tick, 1k busy', '$tmp/tick10000.dat' u 1:2 w lp t 'tick, 10k busy'
set ylabel 'instructions per call'
plot '$tmp/open.dat' u 1:2 w lp t 'route_open, mean of the first N', '$tmp/open_more.dat' u 1:2 w lp t 'route_open at N', '$tmp/stats.dat' u 1:2 w lp t 'domain_stats', '$tmp/pair.dat' u 1:2 w lp t 'admit + completion pair'
unset multiplot
EOF
	[ -f "$out/scale.png" ] && say "plot: $out/scale.png"
else
	say "no gnuplot: no plot"
fi
