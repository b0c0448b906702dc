#!/bin/sh
# SPDX-License-Identifier: MIT
#
# verbs_smoke.sh MODE  (guest script, topology twonic)
# Runs $BUILDDIR/tests/softroce/verbs_smoke between rxe0 (eth0) and rxe1
# (eth1) of this guest.  MODE: healthy | peer-cut | local-down.
#   peer-cut:   the host pulls the cable of rxe1's NIC (QEMU set_link n1 off)
#               mid-stream; expects IBV_WC_RETRY_EXC_ERR (retry_cnt 6, timeout 14)
#   local-down: "ip link set eth0 down" mid-stream; expects IBV_EVENT_PORT_ERR
#               and IBV_WC_LOC_QP_OP_ERR
. "$SR_GUEST/lib.sh"
MODE=${1:-healthy}
BIN=$BUILDDIR/tests/softroce/verbs_smoke
sr_need_bin "$BIN"
[ "$SR_TOPO" = twonic ] || sr_fail "verbs_smoke needs topology twonic (got $SR_TOPO)"
sr_net_setup
export SR_INFRA_POWEROFF=1	# a TX stall before the fault: power off, vm.sh retries

case $MODE in
healthy)
	set -- -m healthy -n 256 -t 16 ;;	# 268 ms: no spurious retransmit on a loaded host
peer-cut)
	set -- -m peer-cut -r 6 -t 14 -k 64 \
		-F "sr-mon -v $SR_PEER_VM set_link $SR_PEER_NIC off" \
		-H "sr-mon -v $SR_PEER_VM set_link $SR_PEER_NIC on" ;;
local-down)
	# taking eth0 down also drops the policy route of table 102: restore it
	set -- -m local-down -r 7 -t 14 -k 64 -u 3 \
		-F "ip link set $SR_NETDEV down" \
		-H "ip link set $SR_NETDEV up && ip route replace $SR_PEER_IP dev $SR_NETDEV src $SR_IP table 102" ;;
*) sr_fail "unknown mode '$MODE'" ;;
esac

sr_log "verbs_smoke $MODE: start"
timeout -k 5 60 "$BIN" -c "$SR_DEV" -s "$SR_PEER_DEV" "$@"
rc=$?
sr_log "verbs_smoke $MODE: exit status $rc"
echo "rxe counters $SR_DEV: $(sr_rxe_stats "$SR_DEV")"
echo "rxe counters $SR_PEER_DEV: $(sr_rxe_stats "$SR_PEER_DEV")"
[ $rc = 124 ] && echo "FAIL: verbs_smoke did not finish within 60 s"
exit $rc
