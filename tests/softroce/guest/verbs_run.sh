#!/bin/sh
# SPDX-License-Identifier: MIT
#
# verbs_run.sh SCENARIO [ENGINE]  (guest script, topology quad)
# Runs $BUILDDIR/host_stubs/verbs/mcc_verbs_run: a TE or TENT host stub on
# the real-verbs fabric backend, node 0 = rxe0/rxe1 (eth0/eth1), node 1 =
# rxe2/rxe3 (eth2/eth3), all four NICs on one QEMU hub.
#
# SCENARIO:
#   healthy     TE and TENT, each with the modules null (mode off), observe
#               and aimd (enforce), switched by editing one ini file and
#               restarting the host, plus the compile-out binary: payload
#               verified byte for byte, no error WC, caller task states
#   peer-cut    the cable of node 1's rail 0 (rxe2, QEMU n2) is pulled
#               mid-transfer and plugged back: RETRY_EXC_ERR -> SUSPECT ->
#               QUARANTINED -> traffic avoided onto rail 1 -> PROBING on a
#               new generation -> HEALTHY; task states; nothing lost
#   blackhole   node 1's rail 0 (eth2) silently drops every packet (netem loss
#               100%, no link event: only timeouts tell) until 4.5 s after the
#               route is QUARANTINED, past the first recovery probe, which fails:
#               QUARANTINED again, then a later probe on a newer generation
#               recovers it; nothing lost, no crash (issue 14)
#   blackhole-local  the same on node 0's rail 0 (eth0): the host hands the
#               slices of rxe0's routes to rxe1
#   gray        node 1's rail 0 (eth2) drops 25 % of what it sends from 2 s to
#               14 s (no link event; starting tc in a busy guest can take
#               seconds): most bytes move to the other rail
#               meanwhile, both rails carry bytes again after (issue 14)
#   local-down  "ip link set eth0 down" (node 0's rail 0) mid-transfer, up
#               again later: PORT_ERR, LOC_QP_OP_ERR, a flush burst counted
#               once, quarantine at port scope, nothing lost
#   tbf         "tc qdisc add dev eth0 root tbf rate 8mbit" shapes node 0's rail 0:
#               completion latency and drain time rise, the route goes
#               CONGESTED and its window shrinks, no quarantine
#   stat        the live view: TE, then TENT, publish with [engine] stat; 2 s
#               into the transfer `mcc stat` (another process) must show the
#               host's devices rxe0/rxe1 and its routes to node 1's rails
#   gray-local  node 0's rail 0 (eth0) drops 25 % of what it sends from 2 s
#               to 14 s: rxe0's routes are held near their floor and the host
#               moves their slices to rxe1 (>= 70 % of the bytes), no second
#               without a completed task, no task reads no_usable_path, and
#               one whose slice was AVOIDed on the quarantined rail reads
#               LONG_UNAVAILABLE (the RFC's AVOID row) for under a second in
#               a row, until a slice of it completes on rxe1
#   dupreorder  netem delay 1ms duplicate 5% reorder 25% 50% on eth0 from 2 s
#               to 14 s: rxe answers with RETRY_EXC_ERR on new endpoints; the
#               errors count across generations and the traffic moves to rxe1
#   flap        eth0 blackholed (netem loss 100%) 1.5 s, then clear 1.5 s, six
#               times, each phase timed from when the tc command before it
#               finished: the rail is quarantined again and again with a
#               growing cooldown, no group is left without a usable path
#   both-down   node 1's two rails (eth2, eth3) blackholed from 2 s, for 5 s
#               from when both tc commands finished: once no route is
#               usable the tasks read LONG_UNAVAILABLE
#               within 2 epochs; the engine fails what its own rail pause
#               leaves without a rail
# ENGINE: te (default) or tent.
# MODE: enforce (default), or off for blackhole, blackhole-local and gray:
#   the contrast, module null, the blackhole lifted at a fixed 9 s (off never
#   quarantines); the checks that need the controller are skipped, every task
#   must read UNKNOWN and none may fail.
# The ini files are written here (under /tmp of the guest); each run prints
# its assertions (CHECK ok / FAIL) and RESULT lines.
. "$SR_GUEST/lib.sh"
SCEN=${1:-healthy}
ENGINE=${2:-te}
MODE=${3:-enforce}
BIN=$BUILDDIR/host_stubs/verbs/mcc_verbs_run
NOCC=$BUILDDIR/host_stubs/verbs/mcc_verbs_run_nocc
sr_need_bin "$BIN"
[ "$SR_TOPO" = quad ] || sr_fail "verbs_run needs topology quad (got $SR_TOPO)"
sr_net_setup
INI=/tmp/mcc.ini
rc=0
# a stalled rxe (see mcc_verbs_run --stall-s) powers the guest off at once:
# the harness then retries the test in a fresh guest
export SR_INFRA_POWEROFF=1
# QP ACK timeout 16 (268 ms), retry_cnt 3: a dead peer fails a WR after
# (3 + 1) x 268 ms ~ 1.1 s. The backend default (14 / 6, ~0.5 s) is too
# tight for a loaded host: TCG guests descheduled for tens of ms cause
# spurious retransmits and, in rxe, IBV_WC_REM_INV_REQ_ERR on healthy paths.
QP="--ib-timeout 16 --ib-retry 3"

# run LIMIT_S ARGS...: one mcc_verbs_run, its exit status folded into rc
run() {
	local lim=$1
	shift
	sr_log "mcc_verbs_run $*"
	timeout -k 5 "$lim" "$@"
	local r=$?
	[ $r = 124 ] && echo "FAIL: mcc_verbs_run did not finish within $lim s"
	sr_log "mcc_verbs_run: exit status $r"
	if [ $r != 0 ]; then
		rc=1
		# the guest NICs' view, for a stalled or failed run
		ip -s link show | sed -n '/eth[0-3]:/,+5p' | sed 's/^/diag: /'
		tc -s qdisc show | grep -A2 'dev eth' | sed 's/^/diag: /'
	fi
}

# ini MODE MODULE [controller lines...]: write the policy configuration
# (MODE=off on the command line: mode off, module null, whatever is asked)
ini() {
	local mode=$1 module=$2
	shift 2
	[ "$MODE" = off ] && mode=off module=null
	{
		echo "; written by verbs_run.sh ($SCEN)"
		echo "[policy]"
		echo "mode = $mode"
		echo "module = $module"
		echo "[controller]"
		for l in "$@"; do echo "$l"; done
	} > "$INI"
}

# ini_link_fault: the controller of the link-fault scenarios (peer-cut,
# blackhole, local-down): 3 hard errors quarantine a route, a 1.5 s
# cooldown (3 s at most), 3 probe successes recover it.
ini_link_fault() {
	ini enforce aimd "target_drain_us = 5000000" "epoch_us = 10000" "hard_error_threshold = 3" \
		"cooldown_ms = 1500" "cooldown_max_ms = 3000" "probe_successes = 3" "low_pressure_epochs = 4"
}

# run_to_recovery TASK_BYTES CONCURRENCY [--at WHEN:WHAT ...]: a 6 s run of
# $SCEN that must end with the watched route healthy, within 45 s.
run_to_recovery() {
	local task_bytes=$1 concurrency=$2
	shift 2
	run 75 "$BIN" $QP --engine "$ENGINE" --ini "$INI" --bytes 0 --task-bytes "$task_bytes" \
		--concurrency "$concurrency" --duration 6 --max-duration 45 --until-healthy \
		--check "$SCEN" --watch 0 "$@" --label "$ENGINE-$SCEN" --quiet
}

case $SCEN:$MODE in
*:enforce | blackhole:off | blackhole-local:off | gray:off | gray-local:off | dupreorder:off) ;;
*) sr_fail "mode '$MODE' is not offered for scenario '$SCEN'" ;;
esac

case $SCEN in
healthy)
	# not a congestion test: a drain target no emulated path can miss
	ini off null "target_drain_us = 5000000" "epoch_us = 20000"
	for eng in te tent; do
		for m in off:null observe:observe enforce:aimd; do
			mode=${m%%:*} module=${m#*:}
			# switch the module: edit the ini, restart the host
			sed -i "s/^mode = .*/mode = $mode/; s/^module = .*/module = $module/" "$INI"
			echo "INI $(grep -E '^(mode|module) =' "$INI" | tr '\n' ' ')"
			run 60 "$BIN" $QP --engine "$eng" --ini "$INI" --bytes 16777216 --task-bytes 1048576 \
				--concurrency 4 --check healthy --expect-mode "$mode" --expect-module "$module" \
				--label "$eng-$mode" --quiet
		done
	done
	if [ -x "$NOCC" ]; then
		run 60 "$NOCC" $QP --engine te --bytes 16777216 --check healthy --expect-mode compiled-out \
			--label te-compiled-out --quiet
	fi
	;;
peer-cut)
	# The first endpoint generation on the cut path fails both its QPs with
	# RETRY_EXC_ERR (2 hard errors: SUSPECT below the threshold of 3); the
	# host pauses the rail 1 s, builds the next generation, whose WRs time
	# out too: QUARANTINED. The link comes back 0.5 s later; after the
	# 1.5 s cooldown a probe on a generation newer than the failed ones
	# recovers the route. TENT resets an endpoint on its first error WC and
	# builds the next one on the next post, usually before the tick that
	# quarantines: the policy fences the generation the failures were seen
	# on, so the probe runs on that rebuilt endpoint.
	ini_link_fault
	run_to_recovery 524288 4 --at "1.5:mon:set_link n2 off" --at "q+0.5:mon:set_link n2 on"
	;;
blackhole | blackhole-local)
	# as peer-cut, but silent and lifted late: the first probe (cooldown
	# 1.5 s) times out ~1.1 s later (QP timeout 16, retry 3) while the loss
	# is still on; the next cooldown is 3 s, so the second probe runs on the
	# healed path. The loss is on the egress of the responder's NIC: its
	# ACKs and read responses never reach rail 0 of node 0.
	# blackhole-local: the same on node 0's rail 0 (eth0, what rxe0 sends):
	# both routes of rxe0 fail, the host hands their slices to rxe1
	BH_DEV=eth2
	[ "$SCEN" = blackhole-local ] && BH_DEV=eth0
	ini_link_fault
	if [ "$MODE" = off ]; then
		set -- --duration 12 --at "9:tc qdisc del dev $BH_DEV root"
	else
		set -- --duration 6 --until-healthy --at "q+4.5:tc qdisc del dev $BH_DEV root"
	fi
	run 90 "$BIN" $QP --engine "$ENGINE" --ini "$INI" --bytes 0 --task-bytes 524288 --concurrency 4 \
		--max-duration 60 --check "$SCEN" --watch 0 \
		--at "1.5:tc qdisc add dev $BH_DEV root netem loss 100%" "$@" \
		--label "$ENGINE-$SCEN-$MODE" --quiet
	tc qdisc del dev "$BH_DEV" root 2>/dev/null
	;;
gray)
	# gray loss on node 1's rail 0: 25 % of what rxe2 sends (ACKs, read
	# responses) dropped, no link event; mostly retransmissions, rarely a
	# RETRY_EXC_ERR. A 100 ms drain target: above the healthy rail's own
	# scatter under TCG, below an ACK timeout (268 ms)
	ini enforce aimd "target_drain_us = 100000" "epoch_us = 10000"
	run 90 "$BIN" $QP --engine "$ENGINE" --ini "$INI" --bytes 0 --task-bytes 524288 --concurrency 4 \
		--duration 20 --max-duration 60 --check gray --watch 0 \
		--at "2:tc qdisc add dev eth2 root netem loss 25%" \
		--at "14:tc qdisc del dev eth2 root" \
		--label "$ENGINE-gray-$MODE" --quiet
	tc qdisc del dev eth2 root 2>/dev/null
	;;
local-down)
	# PORT_ERR quarantines the routes of rxe0 (port scope); the link comes
	# back 1.5 s after the first error WC or PORT_ERR ("ip link set eth0
	# down" also dropped its policy route and neighbours: sr-quad-up restores
	# them)
	ini_link_fault
	# 1 MiB tasks (16 WRs each, all posted at once), 6 in flight: the send
	# queues of rxe0 hold WRs when the link goes down, so a burst flushes
	run_to_recovery 1048576 6 --at "1.5:ip link set eth0 down" --at "e+1.5:sr-quad-up 0"
	;;
tbf)
	# drain target between the healthy rail (40-80 ms here, spikes to ~0.33 s
	# under host load) and the shaped one (~1.6 s when the shaping starts; a
	# 64 KiB WR alone takes 65 ms at 8 Mbit/s). The qdisc limit is above what
	# rxe keeps queued (64 packets per QP): no drop, no retransmission. At
	# 4 Mbit/s the queueing delay neared the 268 ms ACK timeout: spurious
	# retransmits, tbf drops and IBV_WC_REM_INV_REQ_ERR. At 8 Mbit/s the p50
	# after shaping is ~200 ms, but the tbf queue alone holds up to 0.5 s
	# (512 KB at 1 MB/s) and a WC once took 701 ms and came back as
	# REM_INV_REQ_ERR: QP timeout 18 (1.07 s) here, no fault to detect.
	ini enforce aimd "target_drain_us = 400000" "epoch_us = 25000" "high_pressure_epochs = 2" \
		"low_pressure_epochs = 4" "min_window_bytes = 65536" "max_window_bytes = 1048576" \
		"ai_bytes = 65536"
	run 75 "$BIN" --ib-timeout 18 --ib-retry 3 --engine "$ENGINE" --ini "$INI" --bytes 0 \
		--task-bytes 262144 --concurrency 4 --duration 11 --max-duration 30 --check tbf --watch 0 \
		--at "3:tc qdisc add dev eth0 root tbf rate 8mbit burst 16kb limit 512kb" \
		--label "$ENGINE-tbf" --quiet
	tc qdisc del dev eth0 root 2>/dev/null
	;;
stat)
	VIEW=/tmp/mcc-view
	mkdir -p "$VIEW"
	ini enforce aimd "target_drain_us = 5000000" "epoch_us = 20000"
	printf '[engine]\nstat = %s\nstat_interval_ms = 100\n' "$VIEW" >> "$INI"
	for eng in te tent; do
		out=/tmp/stat-$eng.out
		run 60 "$BIN" $QP --engine "$eng" --ini "$INI" --bytes 0 --duration 4 --task-bytes 1048576 \
			--concurrency 4 --check healthy --expect-mode enforce --expect-module aimd \
			--at "2:$BUILDDIR/plugin_api/tools/mcc stat $VIEW > $out 2>&1" --label "$eng-stat" --quiet
		sed 's/^/stat: /' "$out"
		ok=1
		for d in rxe0 rxe1; do
			grep -Eq "^device +[0-9]+ $d +[A-Z]+ " "$out" || ok=0
			grep -Eq "^route +[0-9]+ $d +[A-Z]+ +[0-9]+ [^ ]+" "$out" || ok=0
		done
		grep -q "^mcc\.[0-9]*\.$eng: pid [0-9]*, engine $eng, module aimd (mode enforce" "$out" || ok=0
		if [ $ok = 1 ]; then
			echo "CHECK ok: mcc stat shows $eng's devices rxe0, rxe1 and a route on each"
		else
			echo "FAIL: mcc stat did not show $eng's devices and routes"
			rc=1
		fi
		[ -z "$(ls "$VIEW")" ] || { echo "FAIL: files left in $VIEW: $(ls "$VIEW")"; rc=1; }
	done
	;;
gray-local | dupreorder)
	# a fault on node 0's rail 0 (what rxe0 sends) that ends no WR with a
	# port event; the drain target as gray's
	if [ "$SCEN" = gray-local ]; then
		NETEM="netem loss 25%"
	else
		NETEM="netem delay 1ms duplicate 5% reorder 25% 50%"
	fi
	ini enforce aimd "target_drain_us = 100000" "epoch_us = 10000"
	run 90 "$BIN" $QP --engine "$ENGINE" --ini "$INI" --bytes 0 --task-bytes 524288 --concurrency 4 \
		--duration 20 --max-duration 60 --check "$SCEN" --watch 0 --epoch-us 10000 \
		--at "2:tc qdisc add dev eth0 root $NETEM" --at "14:tc qdisc del dev eth0 root" \
		--label "$ENGINE-$SCEN-$MODE" --quiet
	tc qdisc del dev eth0 root 2>/dev/null
	;;
flap)
	ini enforce aimd "target_drain_us = 5000000" "epoch_us = 10000"
	# each phase timed from when the previous command finished: tc in a
	# busy TCG guest takes up to 2 s to take effect, which would eat a dead
	# phase timed from the start (and with it the transport timeouts)
	set -- --at "2:tc qdisc add dev eth0 root netem loss 100%" --at "p+1.5:tc qdisc del dev eth0 root"
	for i in 2 3 4 5 6; do
		set -- "$@" --at "p+1.5:tc qdisc add dev eth0 root netem loss 100%" \
			--at "p+1.5:tc qdisc del dev eth0 root"
	done
	run 110 "$BIN" $QP --engine "$ENGINE" --ini "$INI" --bytes 0 --task-bytes 524288 --concurrency 4 \
		--duration 22 --max-duration 80 --check flap --watch 0 --epoch-us 10000 "$@" \
		--label "$ENGINE-flap" --quiet
	tc qdisc del dev eth0 root 2>/dev/null
	;;
both-down)
	ini enforce aimd "target_drain_us = 5000000" "epoch_us = 10000"
	run 90 "$BIN" $QP --engine "$ENGINE" --ini "$INI" --bytes 0 --task-bytes 524288 --concurrency 4 \
		--duration 14 --max-duration 60 --check both-down --watch 0 --epoch-us 10000 --sample-ms 5 \
		--at "2:tc qdisc add dev eth2 root netem loss 100%" \
		--at "2:tc qdisc add dev eth3 root netem loss 100%" \
		--at "p+5:tc qdisc del dev eth2 root; tc qdisc del dev eth3 root" \
		--label "$ENGINE-both-down" --quiet
	tc qdisc del dev eth2 root 2>/dev/null
	tc qdisc del dev eth3 root 2>/dev/null
	;;
*) sr_fail "unknown scenario '$SCEN'" ;;
esac
for d in rxe0 rxe1 rxe2 rxe3; do echo "rxe counters $d: $(sr_rxe_stats "$d")"; done
exit $rc
