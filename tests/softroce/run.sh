#!/bin/bash
# SPDX-License-Identifier: MIT
#
# run.sh [TEST...] - entry point of "make check-softroce".
#
# Runs every test of tests/softroce/tests.list (or only the named ones) in a
# fresh QEMU/TCG guest with Soft-RoCE (rdma_rxe), prints PASS/FAIL/SKIP per
# test with the work-completion statuses and async events it saw, and exits
#   0  all tests passed (some may have been skipped)
#   1  a test failed, or hit an infrastructure failure four times
#   77 skipped: no QEMU / guest kernel / cache, and the cache cannot be built
#
# Environment:
#   BUILDDIR        build tree holding the test programs (default: $PWD); the
#                   guest sees it read-only at the same path
#   SRCDIR          source tree (default: two levels above this script)
#   SOFTROCE_CACHE  kernel + initramfs from setup.sh ($BUILDDIR/softroce-cache);
#                   built here (without apt) if missing
#   SOFTROCE_WORK   logs and the guests' writable share ($BUILDDIR/softroce-run)
#   SOFTROCE_TESTS  space-separated test names to run (like the arguments)
#   SOFTROCE_LIST   test list file (default: tests/softroce/tests.list)
#   SOFTROCE_BUDGET wall-clock budget in seconds for the whole run (1200); once
#                   spent, no retries are made and remaining tests are not run
#                   (they count as failures)
#   SOFTROCE_SMP    vCPUs per guest (2 here; vm.sh's own default is 1): with
#                   one vCPU, rxe stalls ended a third of the quad guests'
#                   attempts (see README "Infrastructure failures")
#   ACCEL           QEMU accelerator (tcg; "kvm" only where KVM really works)
# bash, HERE, BUILDDIR, SRCDIR
. "$(dirname "$0")/prelude.sh"
BUDGET=${SOFTROCE_BUDGET:-1200}
export SOFTROCE_SMP=${SOFTROCE_SMP:-2}

skip() {
	echo "check-softroce: SKIP: $*"
	echo "check-softroce: to enable it: \"make softroce-setup\" as root, or sudo $HERE/setup.sh \"${CACHE:-$BUILDDIR/softroce-cache}\" (Debian 12; see tests/softroce/README.md)"
	exit 77
}

[ -d "$BUILDDIR" ] || { echo "check-softroce: BUILDDIR=$BUILDDIR does not exist" >&2; exit 1; }
BUILDDIR=$(cd "$BUILDDIR" && pwd)
CACHE=${SOFTROCE_CACHE:-$BUILDDIR/softroce-cache}
WORK=${SOFTROCE_WORK:-$BUILDDIR/softroce-run}
export SOFTROCE_CACHE=$CACHE SOFTROCE_WORK=$WORK

[ "$(uname -s)" = Linux ] || skip "needs a Linux host"
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 not found (package qemu-system-x86)"
command -v socat >/dev/null || skip "socat not found (needed for QEMU monitor requests)"
command -v timeout >/dev/null || skip "timeout(1) not found (coreutils)"
ls /lib/modules/*/kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko* >/dev/null 2>&1 \
	|| skip "no host-installed kernel with rdma_rxe.ko under /lib/modules (package linux-image-amd64)"

# the cache: reuse it when current, else (re)build it without touching apt
SETUP_LOG=$(mktemp)
if ! SKIP_APT=1 "$HERE/setup.sh" "$CACHE" > "$SETUP_LOG" 2>&1; then
	sed 's/^/check-softroce: setup: /' "$SETUP_LOG"
	rm -f "$SETUP_LOG"
	skip "the guest kernel/initramfs cache at $CACHE cannot be built"
fi
rm -f "$SETUP_LOG"
KVER=$(cat "$CACHE/kver")
[ -d "/lib/modules/$KVER" ] || skip "/lib/modules/$KVER is missing (the guest loads its modules from there)"

case "$BUILDDIR$SRCDIR" in *[[:space:],]*)
	echo "check-softroce: BUILDDIR and SRCDIR must not contain blanks or commas" >&2; exit 1 ;;
esac

WANT=" ${*:-${SOFTROCE_TESTS:-}} "
LIST=${SOFTROCE_LIST:-$HERE/tests.list}
[ -r "$LIST" ] || { echo "check-softroce: cannot read the test list $LIST" >&2; exit 1; }
mkdir -p "$WORK/logs" || exit 1
RESULTS=$WORK/results.txt
: > "$RESULTS"

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
secs() { printf '%d.%d' $(($1 / 1000)) $((($1 % 1000) / 100)); }

# print what a test saw: WC statuses (with counts), async events, RESULT lines
observed() { # LOG...
	local f
	for f in "$@"; do tr -d '\r' < "$f"; done | awk '
	/^WC status=/ {
		st = $2; sub(/^status=/, "", st); n = 1
		for (i = 3; i <= NF; i++) if ($i ~ /^count=/) { n = substr($i, 7) + 0 }
		if (!(st in wc)) order[++nw] = st
		wc[st] += n
	}
	/^ASYNC / {
		k = $2; for (i = 3; i <= NF; i++) if ($i !~ /^t=/) k = k " " $i
		if (!(k in ev)) eorder[++ne] = k
		ev[k]++
	}
	/^RESULT / && !/^RESULT (PASS|FAIL)/ { res[++nr] = $0 }
	/^(SKIP|FAIL): / || /^RESULT FAIL/ { why[++ny] = $0 }
	/^SUMMARY first_error=/ { fe = substr($0, 9) }
	END {
		if (nw) { s = ""; for (i = 1; i <= nw; i++) s = s " " order[i] "=" wc[order[i]]; print "    WC:" s }
		if (ne) { s = ""; for (i = 1; i <= ne; i++) s = s (i > 1 ? "," : "") " " eorder[i] (ev[eorder[i]] > 1 ? " x" ev[eorder[i]] : ""); print "    ASYNC:" s }
		if (fe != "") print "    " fe
		for (i = 1; i <= nr; i++) print "    " res[i]
		for (i = 1; i <= ny; i++) print "    " why[i]
	}'
}

T_ALL=$(now_ms)
npass=0 nfail=0 nskip=0 ninfra=0 nrun=0
echo "check-softroce: kernel $KVER, BUILDDIR=$BUILDDIR, logs in $WORK/logs"
while read -r name topo tmo script args; do
	case $name in '' | \#*) continue ;; esac
	if [ "$WANT" != "  " ] && [ "${WANT#* "$name" }" = "$WANT" ]; then continue; fi
	nrun=$((nrun + 1))
	elapsed=$(( ($(now_ms) - T_ALL) / 1000 ))
	if [ $((elapsed + tmo)) -gt "$BUDGET" ]; then
		echo "FAIL: $name (not run: the ${BUDGET} s budget of SOFTROCE_BUDGET is spent)" | tee -a "$RESULTS"
		nfail=$((nfail + 1)); continue
	fi
	# up to three retries after an infrastructure failure (an rxe TX stall hit
	# 3 of 10 first attempts on this 2-core machine), as the budget allows
	retries=3
	while [ "$retries" -gt 0 ] && [ $((elapsed + (retries + 1) * tmo)) -gt "$BUDGET" ]; do
		retries=$((retries - 1))
	done
	t0=$(now_ms)
	# shellcheck disable=SC2086  # ARGS are words from tests.list
	"$HERE/vm.sh" -n "$name" -T "$topo" -t "$tmo" -R "$retries" "$script" $args \
		> "$WORK/logs/$name.vm.txt" 2>&1 < /dev/null
	rc=$?
	dt=$(secs $(( $(now_ms) - t0 )))
	mapfile -t logs < "$WORK/logs/$name.last" 2>/dev/null || logs=()
	attempts=$(grep -c 'INFRA FAILURE (attempt' "$WORK/logs/$name.vm.txt")
	note=""
	[ "$attempts" -gt 0 ] && note=", $attempts infrastructure failure(s)"
	case $rc in
	0) verdict=PASS; npass=$((npass + 1)) ;;
	77) verdict=SKIP; nskip=$((nskip + 1)) ;;
	99) verdict=FAIL; note="$note, INFRA FAILURE"; ninfra=$((ninfra + 1)); nfail=$((nfail + 1)) ;;
	*) verdict=FAIL; nfail=$((nfail + 1)) ;;
	esac
	{
		echo "$verdict: $name (${dt} s, $topo$note)"
		grep 'INFRA FAILURE\|^vm.sh:   ' "$WORK/logs/$name.vm.txt" | sed 's/^vm.sh: */    /'
		[ ${#logs[@]} -gt 0 ] && observed "${logs[@]}"
	} | tee -a "$RESULTS"
	if [ "$verdict" = FAIL ]; then
		grep -v '^vm.sh: .*monitor\[' "$WORK/logs/$name.vm.txt" | grep -v 'INFRA FAILURE\|^vm.sh:   ' | sed 's/^/    /'
		for f in "${logs[@]}"; do
			echo "    --- last lines of $f"
			tr -d '\r' < "$f" | grep -v 'speed is unknown' | tail -n 40 | sed 's/^/    | /'
		done
	fi
done < "$LIST"

TOTAL=$(secs $(( $(now_ms) - T_ALL )))
echo "check-softroce: $nrun tests in ${TOTAL} s: $npass passed, $nfail failed ($ninfra infrastructure), $nskip skipped" | tee -a "$RESULTS"
[ $nrun -gt 0 ] || { echo "check-softroce: no test matched '${WANT# }'"; exit 1; }
[ $nfail -eq 0 ] || exit 1
[ $npass -gt 0 ] || exit 77
exit 0
