#!/bin/sh
# SPDX-License-Identifier: MIT
#
# write_bw.sh [ITERS] [SIZE]  (guest script; topology twonic, one or pair)
# ib_write_bw with a fixed iteration count (default 1000) and message size
# (default 65536) between the two rxe devices; prints
#   RESULT ib_write_bw topo=... msg=... iters=... gbps=<average> peak=<peak>
# (emulated Soft-RoCE numbers: only compare them with each other).
# shellcheck disable=SC3043,SC2086  # "local"; $ARGS is a word list
. "$SR_GUEST/lib.sh"
ITERS=${1:-1000}
SIZE=${2:-65536}
command -v ib_write_bw >/dev/null || sr_skip "ib_write_bw not installed (perftest)"
sr_net_setup
GID=$(sr_gid_index "$SR_DEV") || sr_fail "no IPv4 RoCE v2 GID on $SR_DEV"
ARGS="-s $SIZE -n $ITERS --report_gbits -F"
# 1000 x 64 KiB takes 3-6 s on an emulated link; a run still going after
# TMO s is an rxe stall under TCG (packets sent, never received), not a result;
# the server also waits for the client to connect: twice as long
TMO=30

server() { # DEV
	local g
	g=$(sr_gid_index "$1") || sr_fail "no IPv4 RoCE v2 GID on $1"
	timeout -k 5 $((TMO * 2)) ib_write_bw -d "$1" -x "$g" $ARGS > "$SR_OUT/server-$SR_VM.txt" 2>&1
}
client() { # DEV SERVER_IP
	local try=0 rc
	while :; do
		timeout -k 5 $TMO ib_write_bw -d "$1" -x "$GID" $ARGS "$2" > "$SR_OUT/client.txt" 2>&1
		rc=$?
		# the server may not listen yet (pair topology: the other guest boots in parallel)
		grep -q "Couldn't connect\|Unable to open file descriptor for socket" "$SR_OUT/client.txt" || break
		try=$((try + 1)); [ $try -lt 30 ] || break
		sleep 1
	done
	cat "$SR_OUT/client.txt"
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		echo "rxe counters $1: $(sr_rxe_stats "$1")"
		[ "$SR_TOPO" = pair ] || echo "rxe counters $SR_PEER_DEV: $(sr_rxe_stats "$SR_PEER_DEV")"
		sr_infra "ib_write_bw did not finish within $TMO s (exit status $rc): rxe stall under TCG"
	fi
	line=$(grep -A1 '#bytes' "$SR_OUT/client.txt" | tail -1)
	set -- $line
	[ $rc = 0 ] && [ $# -ge 4 ] || sr_fail "ib_write_bw client failed (exit status $rc)"
	echo "RESULT ib_write_bw topo=$SR_TOPO msg=$1 iters=$2 gbps=$4 peak=$3"
}

case $SR_TOPO in
twonic | one)
	server "$SR_PEER_DEV" &
	SPID=$!
	sleep 1
	sr_log "ib_write_bw $SR_DEV -> $SR_PEER_DEV ($SR_PEER_IP), $ITERS x $SIZE B"
	client "$SR_DEV" "$SR_PEER_IP"
	wait $SPID || sr_fail "ib_write_bw server failed"
	;;
pair)
	if [ "$SR_ROLE" = a ]; then
		server "$SR_DEV" || sr_fail "ib_write_bw server failed"
		sr_wait client-done 30 || sr_fail "client never finished"
	else
		sr_log "ib_write_bw $SR_DEV -> $SR_PEER_VM ($SR_PEER_IP), $ITERS x $SIZE B"
		client "$SR_DEV" "$SR_PEER_IP"
		sr_signal client-done
	fi
	;;
esac
echo "rxe counters $SR_DEV: $(sr_rxe_stats "$SR_DEV")"
exit 0
