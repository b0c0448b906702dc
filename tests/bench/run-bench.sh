#!/bin/sh
# SPDX-License-Identifier: MIT
# run-bench.sh - what `make bench` runs (see tests/bench/README.md). Writes
# $MCC_BENCH_OUT/{identity.tsv,microbench.*,callgrind.tsv,e2e.json,report.md,*.png}.
# A benchmark, not a test: it exits non-zero only when a step could not run.
set -eu

SRC=${MCC_BENCH_SRCDIR:?} B=${MCC_BENCH_BUILDDIR:?} OUT=${MCC_BENCH_OUT:?}
MOD=${MCC_BENCH_MODULE_DIR:-$B/modules/.libs}
QUICK=${BENCH_QUICK:-}
[ "$QUICK" = 0 ] && QUICK=
PYTHON=${PYTHON:-python3}
[ "$PYTHON" = : ] && PYTHON=
mkdir -p "$OUT"
rm -f "$OUT"/*.png "$OUT"/*.dat "$OUT"/report.md "$OUT"/e2e.json "$OUT"/callgrind.tsv
t0=$(date +%s)
say() { printf 'bench: [%4ds] %s\n' $(($(date +%s) - t0)) "$*"; }

# ------------------------------------------------------------------ identity
id=$OUT/identity.tsv
kv() { printf '%s\t%s\n' "$1" "$2" >>"$id"; }
: >"$id"
kv command "cd $B && make bench${QUICK:+ BENCH_QUICK=$QUICK}"
kv date "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
commit=$(git -C "$SRC" rev-parse HEAD 2>/dev/null || echo unknown)
kv source_commit "$commit"
if [ "$commit" != unknown ]; then
	dirty=$(git -C "$SRC" status --porcelain 2>/dev/null | wc -l | tr -d ' ')
	kv source_tree "$dirty uncommitted changes (git status --porcelain) on top of $commit"
fi
kv compiler "$($MCC_BENCH_CC --version 2>/dev/null | head -n 1) ($MCC_BENCH_CC)"
kv cflags "${MCC_BENCH_CFLAGS:-}"
kv cppflags "${MCC_BENCH_CPPFLAGS:-}"
kv ldflags "${MCC_BENCH_LDFLAGS:-}"
kv cpu "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1) x $(grep -c ^processor /proc/cpuinfo)"
kv cpus_online "$(cat /sys/devices/system/cpu/online 2>/dev/null || echo ?)"
kv kernel "$(uname -srvm)"
kv loadavg_start "$(cat /proc/loadavg)"
kv quick "${QUICK:-0}"
kv budget "${MCC_BENCH_BUDGET:-}"
other=$(ps -eo pcpu=,comm= --sort=-pcpu 2>/dev/null | awk '$1 > 20 { printf "%s %s%%; ", $2, $1 }' | head -c 300)
kv other_load "${other:-none above 20% CPU}"
binid() {
	[ -f "$1" ] || return 0
	bid=$(readelf -n "$1" 2>/dev/null | sed -n 's/.*Build ID: //p' | head -n 1)
	sum=$(sha256sum "$1" | cut -c1-16)
	kv "bin:${1#"$B"/}" "${bid:-no-build-id} / sha256:$sum"
}
for f in "$B/tests/bench/microbench" "$B/tests/bench/cgdriver" "$B"/plugin_api/.libs/libmcc.so \
	"$MOD"/*.so; do
	binid "$f"
done
for f in "$B"/host_stubs/*/te_host* "$B"/host_stubs/*/tent_host* "$B"/host_stubs/*/*scenario*; do
	[ -x "$f" ] && [ ! -d "$f" ] && case $f in *.o|*.la|*.lo) ;; *) binid "$f" ;; esac
done

# ------------------------------------------------------------ microbenchmark
say "microbenchmark${QUICK:+ (quick)}"
mbargs=
[ -n "$QUICK" ] && mbargs=-q
# shellcheck disable=SC2086
"$B/tests/bench/microbench" $mbargs -m "$MOD" -o "$OUT/microbench.tsv" >"$OUT/microbench.txt" 2>&1 ||
	say "microbench exited $? (anomalies are listed in microbench.txt)"
sed -n '/^1T tight/,/^$/p' "$OUT/microbench.txt"

# ---------------------------------------------------------- callgrind counts
if [ -n "${VALGRIND:-}" ]; then
	say "callgrind instruction counts"
	n=100000
	[ -n "$QUICK" ] && n=20000
	lflag=
	[ -n "$PYTHON" ] && command -v objdump >/dev/null 2>&1 && lflag=-l
	# shellcheck disable=SC2086
	VALGRIND=$VALGRIND PYTHON=${PYTHON:-python3} sh "$SRC/tests/bench/cgcount.sh" \
		-d "$B/tests/bench/cgdriver" -m "$MOD" -n "$n" $lflag -o "$OUT/callgrind.tsv" \
		floor floor-add compile-out off null-rel null-wc observe-rel observe-wc aimd-rel aimd-wc aimd-tick-rel aimd-tick-wc \
		aimd-cong-rel aimd-cong-wc ||
		say "callgrind step failed"
else
	say "callgrind skipped: valgrind not found by configure"
fi

# ------------------------------------------------------------------ end to end
if [ -n "$PYTHON" ]; then
	say "end-to-end arms and scenarios${QUICK:+ (quick)}"
	"$PYTHON" "$SRC/tests/bench/e2e.py" --builddir "$B" --srcdir "$SRC" --out "$OUT" \
		${QUICK:+--quick} || say "end-to-end step failed (see above)"
else
	say "end-to-end skipped: python3 not found by configure"
fi

kv loadavg_end "$(cat /proc/loadavg)"
kv elapsed_s "$(($(date +%s) - t0))"

# -------------------------------------------------------------------- report
if [ -n "$PYTHON" ]; then
	"$PYTHON" "$SRC/tests/bench/report.py" "$OUT" "${GNUPLOT:-}"
else
	{ echo "# mcc benchmark report (python3 missing: raw outputs only)"; echo;
	  echo '```'; cat "$id" "$OUT/microbench.txt"; cat "$OUT/callgrind.tsv" 2>/dev/null; echo '```'; } >"$OUT/report.md"
fi
say "done: $OUT/report.md"
