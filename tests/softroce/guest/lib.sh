# SPDX-License-Identifier: MIT
#
# Helpers for guest test scripts of the Soft-RoCE harness.  Source it with
#   . "$SR_GUEST/lib.sh"
# Environment set by vm.sh: SR_TEST SR_VM SR_TOPO SR_ROLE SR_PEER_VM SR_OUT
# SR_GUEST BUILDDIR SRCDIR.  Exit status of a guest script: 0 pass, 77 skip,
# anything else fail.  ("local" is fine: dash and busybox sh have it.)
# shellcheck shell=sh disable=SC3043

sr_up() { cut -d' ' -f1 /proc/uptime; }
sr_log() { echo "$(sr_up) $*"; }
sr_skip() { echo "SKIP: $*"; exit 77; }
sr_fail() { echo "FAIL: $*"; exit 1; }
# sr_infra REASON: an infrastructure verdict (vm.sh retries the test in a
# fresh guest); powers the guest off at once, since a process stuck on a
# stalled rxe QP may never exit
sr_infra() { echo "SR-INFRA: $*"; sync; /bin/busybox poweroff -f; exit 99; }

# sr_need_bin PATH: skip (77) if a test program was not built
sr_need_bin() {
	[ -x "$1" ] || sr_skip "$1 is not built (BUILDDIR=$BUILDDIR)"
}

# sr_mon [-v VM] CMD...: QEMU monitor command, run by the host (see sr-mon)
sr_mon() { sr-mon "$@"; }

# sr_rxe_add NETDEV IP/PREFIX RXE: bring NETDEV up with an address, add rxe on it
sr_rxe_add() {
	ip link set "$1" up || return 1
	ip addr add "$2" dev "$1" || return 1
	rdma link add "$3" type rxe netdev "$1" || return 1
}

# sr_gid_index RXE: index of the IPv4-mapped RoCE v2 GID (for perftest -x)
sr_gid_index() {
	local d="/sys/class/infiniband/$1/ports/1" f i
	for f in "$d"/gids/*; do
		i=${f##*/}
		case $(cat "$f") in 0000:0000:0000:0000:0000:ffff:*) ;; *) continue ;; esac
		case $(cat "$d/gid_attrs/types/$i" 2>/dev/null) in *v2*) echo "$i"; return 0 ;; esac
	done
	return 1
}

# sr_wait_port RXE [SECS]: wait until the port is ACTIVE
sr_wait_port() {
	local n=0 max=$((${2:-10} * 10))
	while [ $n -lt $max ]; do
		grep -q ACTIVE "/sys/class/infiniband/$1/ports/1/state" 2>/dev/null && return 0
		sleep 0.1; n=$((n + 1))
	done
	return 1
}

# sr_net_setup: create the rxe devices of the topology and export
#   SR_DEV SR_NETDEV SR_IP          this side (the requester/client side)
#   SR_PEER_DEV SR_PEER_NETDEV SR_PEER_IP   twonic: the other device in this guest
#   SR_NIC SR_PEER_NIC              QEMU netdev ids for "sr-mon set_link <id> off"
#   SR_PEER_VM                      VM that owns SR_PEER_NIC (for sr-mon -v)
# one:    rxe0 on eth0 (10.0.0.1); rxe talks to itself (no wire: no faults)
# twonic: rxe0 on eth0 (10.0.0.1, QEMU n0) <- hub -> rxe1 on eth1 (10.0.0.2, n1),
#         with the policy routing that makes traffic between the two local
#         addresses leave through the NICs instead of lo (rxe drops frames
#         that arrive on lo)
# quad:   rxe0..rxe3 on eth0..eth3 (10.0.0.1..4, QEMU n0..n3) on one hub, with
#         policy routing by source address; also exports SR_NODES
#         ("rxe0,rxe1;rxe2,rxe3": node 0 and node 1 of mcc_verbs_run)
# pair:   rxe0 on eth0, 10.0.0.1 in VM "a" and 10.0.0.2 in VM "b"
sr_net_setup() {
	modprobe virtio_net 2>/dev/null
	modprobe rdma_rxe || sr_fail "modprobe rdma_rxe failed"
	ip link set lo up
	case $SR_TOPO in
	one)
		sr_rxe_add eth0 10.0.0.1/24 rxe0 || sr_fail "rxe setup failed"
		SR_DEV=rxe0 SR_NETDEV=eth0 SR_IP=10.0.0.1 SR_NIC=n0
		SR_PEER_DEV=rxe0 SR_PEER_NETDEV=eth0 SR_PEER_IP=10.0.0.1 SR_PEER_NIC=n0 SR_PEER_VM=$SR_VM
		;;
	twonic)
		local k
		for k in all default eth0 eth1; do
			sysctl -qw "net.ipv4.conf.$k.accept_local=1" "net.ipv4.conf.$k.rp_filter=0" 2>/dev/null
		done
		sr_rxe_add eth0 10.0.0.1/24 rxe0 || sr_fail "rxe0 setup failed"
		sr_rxe_add eth1 10.0.0.2/24 rxe1 || sr_fail "rxe1 setup failed"
		# look up "local" after the policy rules, not first
		ip rule add pref 1000 lookup local && ip rule del pref 0 &&
		ip rule add pref 10 iif lo to 10.0.0.2 lookup 102 &&
		ip route add 10.0.0.2 dev eth0 src 10.0.0.1 table 102 &&
		ip rule add pref 11 iif lo to 10.0.0.1 lookup 101 &&
		ip route add 10.0.0.1 dev eth1 src 10.0.0.2 table 101 || sr_fail "policy routing failed"
		SR_DEV=rxe0 SR_NETDEV=eth0 SR_IP=10.0.0.1 SR_NIC=n0
		SR_PEER_DEV=rxe1 SR_PEER_NETDEV=eth1 SR_PEER_IP=10.0.0.2 SR_PEER_NIC=n1 SR_PEER_VM=$SR_VM
		;;
	quad)
		# four rxe devices on one L2 hub: node 0 = rxe0 (eth0) + rxe1 (eth1),
		# node 1 = rxe2 (eth2) + rxe3 (eth3); any device reaches any other
		# (rails and cross-rail paths), as on a single RoCE fabric
		local k
		for k in all default eth0 eth1 eth2 eth3; do
			# answer ARP only on the NIC that owns the address (no ARP flux
			# between NICs of one subnet), accept frames from local sources
			sysctl -qw "net.ipv4.conf.$k.accept_local=1" "net.ipv4.conf.$k.rp_filter=0" \
				"net.ipv4.conf.$k.arp_ignore=1" "net.ipv4.conf.$k.arp_announce=2" 2>/dev/null
		done
		for k in 0 1 2 3; do
			sr_rxe_add "eth$k" "10.0.0.$((k + 1))/24" "rxe$k" || sr_fail "rxe$k setup failed"
		done
		# locally generated traffic from 10.0.0.<k+1> to another of the four
		# addresses leaves through eth<k>; traffic from an address to itself
		# (and without a source) stays on lo (look up "local" after these rules)
		ip rule add pref 1000 lookup local && ip rule del pref 0 || sr_fail "policy routing failed"
		local j
		for k in 0 1 2 3; do
			for j in 0 1 2 3; do
				[ $j = $k ] && continue
				ip rule add pref $((10 + k)) iif lo from "10.0.0.$((k + 1))" to "10.0.0.$((j + 1))" \
					lookup $((100 + k)) || sr_fail "policy routing failed"
			done
			sr_quad_route "$k" || sr_fail "policy routing failed"
		done
		# permanent neighbours (the MACs vm.sh gives the NICs): a carrier
		# loss flushes dynamic entries, and rxe's modify_qp(RTR) then blocks
		# ~1 s in ARP and fails (ETIMEDOUT) for every endpoint set up towards
		# the cut NIC; with these, endpoints connect and their WRs time out
		for k in 0 1 2 3; do
			for j in 0 1 2 3; do
				[ $j = $k ] && continue
				ip neigh replace "10.0.0.$((j + 1))" lladdr "52:54:00:5a:00:0$((j + 1))" \
					dev "eth$k" nud permanent || sr_fail "static neighbour failed"
			done
		done
		SR_DEV=rxe0 SR_NETDEV=eth0 SR_IP=10.0.0.1 SR_NIC=n0
		SR_PEER_DEV=rxe2 SR_PEER_NETDEV=eth2 SR_PEER_IP=10.0.0.3 SR_PEER_NIC=n2 SR_PEER_VM=$SR_VM
		SR_NODES="rxe0,rxe1;rxe2,rxe3"
		export SR_NODES
		;;
	pair)
		if [ "$SR_ROLE" = a ]; then SR_IP=10.0.0.1 SR_PEER_IP=10.0.0.2; else SR_IP=10.0.0.2 SR_PEER_IP=10.0.0.1; fi
		sr_rxe_add eth0 "$SR_IP/24" rxe0 || sr_fail "rxe setup failed"
		SR_DEV=rxe0 SR_NETDEV=eth0 SR_NIC=n0
		SR_PEER_DEV='' SR_PEER_NETDEV='' SR_PEER_NIC=n0
		;;
	*) sr_fail "unknown SR_TOPO '$SR_TOPO'" ;;
	esac
	export SR_DEV SR_NETDEV SR_IP SR_NIC SR_PEER_DEV SR_PEER_NETDEV SR_PEER_IP SR_PEER_NIC SR_PEER_VM
	sr_wait_port "$SR_DEV" 10 || sr_fail "$SR_DEV port not ACTIVE"
	[ -z "$SR_PEER_DEV" ] || sr_wait_port "$SR_PEER_DEV" 10 || sr_fail "$SR_PEER_DEV port not ACTIVE"
	if [ "$SR_TOPO" = quad ]; then
		sr_wait_port rxe1 10 && sr_wait_port rxe3 10 || sr_fail "rxe1/rxe3 port not ACTIVE"
	fi
	sr_log "net: topo=$SR_TOPO dev=$SR_DEV ip=$SR_IP peer_dev=${SR_PEER_DEV:--} peer_ip=$SR_PEER_IP"
}

# sr_quad_route K: (re)install the policy route of eth<K> in topology quad;
# "ip link set eth<K> down" deletes it, so run this after bringing it up
sr_quad_route() {
	ip route replace 10.0.0.0/24 dev "eth$1" src "10.0.0.$(($1 + 1))" table $((100 + $1))
}

# sr_rxe_stats RXE: the rdma statistic counters that are not zero, one line
sr_rxe_stats() {
	rdma statistic show link "$1/1" 2>/dev/null | tr ' ' '\n' | grep -v '^$' |
		awk 'NR > 2 { if (k == "") k = $0; else { if ($0 != "0") printf "%s=%s ", k, $0; k = "" } }'
	echo
}

# pair topology: simple barrier through the share (both VMs see $SR_OUT)
# sr_signal NAME / sr_wait NAME [SECS]
sr_signal() { : > "$SR_OUT/.flag-$1"; }
sr_wait() {
	local n=0 max=$((${2:-60} * 10))
	while [ ! -e "$SR_OUT/.flag-$1" ]; do
		[ $n -lt $max ] || return 1
		sleep 0.1; n=$((n + 1))
	done
}
