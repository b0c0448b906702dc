#!/bin/sh
# SPDX-License-Identifier: MIT
#
# bench.sh ROUNDS MSGS [ARMS]  (guest script, topology quad; make bench-softroce)
# Throughput on one guest link, rxe0 (eth0) -> rxe2 (eth2), 64 KiB messages:
#   ibwb       ib_write_bw -s 65536 -n MSGS (perftest, 1 RC QP, tx depth 128)
#   nocc       the TE host with the hooks compiled out (mcc_verbs_run_nocc)
#   off        the TE host, hooks in, mode = off (null module)
#   observe    mode = observe
#   enforce    mode = enforce (aimd), target_drain_us 100 ms (the emulated
#              link's scale; before the software-device rule the 200 us
#              default held the route at its minimum window)
#   enforce200 mode = enforce with every default (target_drain_us = 200)
# The TE host moves MSGS x 64 KiB as 1 MiB tasks, 8 in flight (128 WRs of
# 64 KiB outstanding, like ib_write_bw's tx depth), every byte verified.
# Arms run interleaved (A B C ... A B C ...), ROUNDS times. Prints
#   BENCH arm=<arm> round=<r> gbps=<average>
# Soft-RoCE verifies software paths; these are emulation numbers, not HCA
# performance: compare them only with each other.
# shellcheck disable=SC2086
. "$SR_GUEST/lib.sh"
ROUNDS=${1:-5}
MSGS=${2:-1000}
ARMS=${3:-ibwb,nocc,off,observe,enforce,enforce200}
BIN=$BUILDDIR/host_stubs/verbs/mcc_verbs_run
NOCC=$BUILDDIR/host_stubs/verbs/mcc_verbs_run_nocc
sr_need_bin "$BIN"
sr_need_bin "$NOCC"
command -v ib_write_bw >/dev/null || sr_skip "ib_write_bw not installed (perftest)"
[ "$SR_TOPO" = quad ] || sr_fail "bench.sh needs topology quad (got $SR_TOPO)"
sr_net_setup
export SR_INFRA_POWEROFF=1
BYTES=$((MSGS * 65536))
TE="--devices rxe0;rxe2 --engine te --bytes $BYTES --task-bytes 1048576 --concurrency 8 --quiet"
TE="$TE --ib-timeout 16 --ib-retry 3 --max-duration 120"
GC=$(sr_gid_index rxe0) || sr_fail "no GID on rxe0"
GS=$(sr_gid_index rxe2) || sr_fail "no GID on rxe2"

ini() { # MODE MODULE [TARGET_US]
	{
		echo "[policy]"
		echo "mode = $1"
		echo "module = $2"
		echo "[controller]"
		[ -n "${3:-}" ] && echo "target_drain_us = $3"
	} > /tmp/bench.ini
}

ibwb() {
	timeout -k 5 120 ib_write_bw -d rxe2 -x "$GS" -s 65536 -n "$MSGS" --report_gbits -F \
		> /tmp/ibwb-s.txt 2>&1 &
	local spid=$! try=0 line
	sleep 1
	while :; do
		timeout -k 5 120 ib_write_bw -d rxe0 -x "$GC" -s 65536 -n "$MSGS" --report_gbits -F \
			10.0.0.3 > /tmp/ibwb-c.txt 2>&1
		grep -q "Couldn't connect" /tmp/ibwb-c.txt || break
		try=$((try + 1)); [ $try -lt 10 ] || break
		sleep 1
	done
	wait $spid
	line=$(grep -A1 '#bytes' /tmp/ibwb-c.txt | tail -1)
	set -- $line
	[ $# -ge 4 ] && echo "BENCH arm=ibwb round=$r gbps=$4" || { echo "bench: ib_write_bw failed"; cat /tmp/ibwb-c.txt; }
}

te() { # ARM BINARY [ARGS]
	local arm=$1 bin=$2 out
	shift 2
	out=$("$bin" $TE "$@" 2>&1)
	echo "$out" | grep -E '^(FAIL|SR-INFRA)' 
	echo "$out" | sed -n 's/^RESULT verbs .* gbps=\([0-9.]*\).*/BENCH arm='"$arm"' round='"$r"' gbps=\1/p'
}

r=1
while [ $r -le "$ROUNDS" ]; do
	for arm in $(echo "$ARMS" | tr ',' ' '); do
		case $arm in
		ibwb) ibwb ;;
		nocc) te nocc "$NOCC" ;;
		off) ini off null; te off "$BIN" --ini /tmp/bench.ini ;;
		observe) ini observe observe; te observe "$BIN" --ini /tmp/bench.ini ;;
		enforce) ini enforce aimd 100000; te enforce "$BIN" --ini /tmp/bench.ini ;;
		enforce200) ini enforce aimd; te enforce200 "$BIN" --ini /tmp/bench.ini ;;
		spin-*) ini off null; te "$arm" "$BIN" --ini /tmp/bench.ini --poll spin ;;
		*) sr_fail "unknown arm $arm" ;;
		esac
	done
	r=$((r + 1))
done
exit 0
