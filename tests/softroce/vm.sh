#!/bin/bash
# SPDX-License-Identifier: MIT
# shellcheck disable=SC2054,SC2016  # QEMU options contain commas; guest-side \$ stays literal
#
# Boot throw-away QEMU (TCG) guests that run one guest test script of the
# Soft-RoCE harness, collect their console logs, and classify the outcome.
#
#   vm.sh [options] SCRIPT [ARGS...]
#
# SCRIPT is a file in tests/softroce/guest/ (or a path to a script anywhere);
# it is staged into the share and run in the guest as
# "/bin/sh /mnt/guest/<SCRIPT> ARGS...".
#
# Options:
#   -n NAME   test name (default: SCRIPT without .sh); logs and outputs use it
#   -T TOPO   one    : 1 guest, 1 NIC (eth0 = QEMU netdev n0)
#             twonic : 1 guest, 2 NICs (n0/eth0, n1/eth1) on one QEMU hub
#                      (topology (b) of the study; the default)
#             quad   : 1 guest, 4 NICs (n0..n3 / eth0..eth3) on one QEMU hub:
#                      two "nodes" of two rails each (rxe0/rxe1 and rxe2/rxe3)
#             pair   : 2 guests NAME-a and NAME-b, one NIC (n0/eth0) each, on a
#                      private link (LINK=udp, the default, or LINK=tap as root)
#   -t SECS   hard timeout of one attempt (180)
#   -R N      retries after an infrastructure failure (1)
#   -m MIB    guest memory (1024)
#   -c DIR    cache built by setup.sh (default $SOFTROCE_CACHE, else
#             $BUILDDIR/softroce-cache)
#   -w DIR    writable work folder: share/, logs/ (default $SOFTROCE_WORK, else
#             $BUILDDIR/softroce-run)
#   -e V=X    extra environment variable for the guest script (repeatable)
#   -I        interactive: a shell on the serial console (one/twonic only)
#
# $SOFTROCE_SMP: vCPUs per guest (1).
#
# Environment passed on to the guest script: BUILDDIR, SRCDIR (exported the
# same as on the host; BUILDDIR is made visible in the guest at its host path),
# SR_TEST, SR_VM, SR_TOPO, SR_ROLE (a|b, pair only), SR_PEER_VM (pair: the other guest),
# SR_OUT (/mnt/out/NAME, writable, = $WORK/share/out/NAME on the host),
# SR_GUEST (/mnt/guest, where the staged scripts and lib.sh are).
#
# Monitor requests: a guest runs "sr-mon [-v VM] CMD..." (guest/sr-mon) to have
# the host send CMD to a QEMU monitor (e.g. "set_link n1 off", a cable pull).
# A guest that is stopped on purpose with "sr-mon -v VM quit" needs no exit
# status.  pair: once one guest has finished, the other gets PEER_GRACE
# seconds (20) to finish too; then it is stopped and the test fails.
#
# One vm.sh at a time per work folder (a lock in it serializes them).
#
# Exit status: 0 PASS, 1 FAIL, 77 SKIP, 99 INFRA FAILURE (after the retries),
# 2 usage error.  Infrastructure failure = a guest kernel WARNING/BUG/Oops/
# panic/NETDEV WATCHDOG/hung task/RCU stall, a console line starting with
# "SR-INFRA:" (a test program's own infrastructure verdict, e.g. an rxe TX
# stall), a timeout (hung guest), a QEMU error, or a guest that died without
# reporting an exit status.  The console
# logs of the final attempt are listed in $WORK/logs/NAME.last.
# re-run under bash when started as "sh run.sh" (make's $(SHELL) is /bin/sh)
if [ -z "${BASH_VERSION:-}" ]; then
	command -v bash >/dev/null 2>&1 || { echo "vm.sh: bash is required" >&2; exit 2; }
	exec bash "$0" "$@"
fi
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
NAME='' TOPO=twonic TMO=180 RETRIES=1 MEM=1024 INTERACTIVE=0 PEER_GRACE=${PEER_GRACE:-20}
CACHE=${SOFTROCE_CACHE:-} WORK=${SOFTROCE_WORK:-}
EXTRA_ENV=()
usage() { sed -n '/^#   vm.sh/,/^# 2 usage/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while getopts "n:T:t:R:m:c:w:e:Ih" o; do
	case $o in
	n) NAME=$OPTARG ;; T) TOPO=$OPTARG ;; t) TMO=$OPTARG ;; R) RETRIES=$OPTARG ;;
	m) MEM=$OPTARG ;; c) CACHE=$OPTARG ;; w) WORK=$OPTARG ;; e) EXTRA_ENV+=("$OPTARG") ;;
	I) INTERACTIVE=1 ;; *) usage ;;
	esac
done
shift $((OPTIND - 1))
if [ "$INTERACTIVE" = 1 ]; then
	SCRIPT=; NAME=${NAME:-shell}
else
	[ $# -ge 1 ] || usage
	SCRIPT=$1; shift
	[ -n "$NAME" ] || { NAME=${SCRIPT##*/}; NAME=${NAME%.sh}; }
fi
case $TOPO in one | twonic | quad | pair) ;; *) echo "vm.sh: unknown topology '$TOPO'" >&2; exit 2 ;; esac
case $NAME in *[!A-Za-z0-9_.-]*) echo "vm.sh: bad test name '$NAME'" >&2; exit 2 ;; esac

BUILDDIR=${BUILDDIR:-$PWD}
BUILDDIR=$(cd "$BUILDDIR" && pwd) || exit 2
SRCDIR=${SRCDIR:-$(cd "$HERE/../.." && pwd)}
CACHE=${CACHE:-$BUILDDIR/softroce-cache}
WORK=${WORK:-$BUILDDIR/softroce-run}
case "$BUILDDIR$SRCDIR" in *[[:space:],]*)
	echo "vm.sh: BUILDDIR/SRCDIR must not contain blanks or commas" >&2; exit 2 ;;
esac
KVER=$(cat "$CACHE/kver" 2>/dev/null) || { echo "vm.sh: no cache at $CACHE (run setup.sh)" >&2; exit 2; }
KERNEL=$CACHE/vmlinux-$KVER INITRD=$CACHE/initramfs-$KVER.cpio.gz
{ [ -s "$KERNEL" ] && [ -s "$INITRD" ]; } || { echo "vm.sh: $CACHE is incomplete (run setup.sh)" >&2; exit 2; }

SHARE=$WORK/share LOGS=$WORK/logs CTL=$WORK/share/ctl
mkdir -p "$SHARE/guest" "$SHARE/out" "$CTL" "$LOGS" || exit 2
if command -v flock >/dev/null; then
	exec 9> "$WORK/.lock"
	flock -w 900 9 || { echo "vm.sh: $WORK is busy (another vm.sh holds $WORK/.lock)" >&2; exit 2; }
fi
# stage the guest scripts (always fresh, so edits apply without a rebuild)
cp -p "$HERE"/guest/* "$SHARE/guest/" && chmod +x "$SHARE"/guest/* || exit 2
if [ -f "$SCRIPT" ] && [ "${SCRIPT#*/}" != "$SCRIPT" ]; then
	cp -p "$SCRIPT" "$SHARE/guest/" || exit 2
	SCRIPT=${SCRIPT##*/}
fi
[ -z "$SCRIPT" ] || [ -f "$SHARE/guest/$SCRIPT" ] \
	|| { echo "vm.sh: no guest script '$SCRIPT' in $HERE/guest" >&2; exit 2; }

ACCEL=${ACCEL:-tcg}
SOCKDIR=$(mktemp -d /tmp/srvm.XXXXXX) || exit 2   # unix socket paths must be short
PIDS=() TAPS=() ATTEMPT_VMS=() ATTEMPT_LOGS=() ATTEMPT_QRC=()
declare -A QUITS=()   # vm -> "guest" (asked to quit by a guest) | "harness" (stopped by us)
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${TAPS[@]}"; do ip link del "$p" 2>/dev/null; done
	TAPS=()
	rm -rf "$SOCKDIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

q() { printf "'%s'" "$(printf %s "$1" | sed "s/'/'\\\\''/g")"; }   # sh single-quote

# write /mnt/ctl/<vm>.boot: the environment plus the script invocation
write_boot() { # VM ROLE PEER [ARGS...]
	local vm=$1 role=$2 peer=$3 a
	shift 3
	{
		echo "# generated by vm.sh for test $NAME"
		echo "export PATH=/mnt/guest:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
		echo "export HOME=/root TERM=dumb LC_ALL=C"
		echo "export BUILDDIR=$(q "$BUILDDIR") SRCDIR=$(q "$SRCDIR")"
		echo "export SR_TEST=$(q "$NAME") SR_VM=$(q "$vm") SR_TOPO=$TOPO SR_ROLE=$role SR_PEER_VM=$(q "$peer")"
		echo "export SR_OUT=/mnt/out/$NAME SR_GUEST=/mnt/guest"
		for a in "${EXTRA_ENV[@]}"; do echo "export ${a%%=*}=$(q "${a#*=}")"; done
		echo 'mkdir -p "$SR_OUT" && cd "$SR_OUT" || exit 253'
		if [ -z "$SCRIPT" ]; then
			echo '/bin/sh -i'
		else
			printf '/bin/sh /mnt/guest/%s' "$SCRIPT"
			for a in "$@"; do printf ' %s' "$(q "$a")"; done
			echo
		fi
		echo 'rc=$?'
		echo 'dmesg > "$SR_OUT/dmesg-$SR_VM.txt" 2>&1'
		echo 'exit $rc'
	} > "$CTL/$vm.boot.tmp" && mv "$CTL/$vm.boot.tmp" "$CTL/$vm.boot"
}

# run one attempt; sets ATTEMPT_LOGS (console logs) and ATTEMPT_QRC (QEMU exit statuses)
run_attempt() { # ATTEMPT ARGS...
	local attempt=$1 vm vms=() roles=() peers=() i log netargs
	shift
	if [ "$TOPO" = pair ]; then
		vms=("$NAME-a" "$NAME-b"); roles=(a b); peers=("$NAME-b" "$NAME-a")
	else
		vms=("$NAME"); roles=(-); peers=(-)
	fi
	ATTEMPT_VMS=("${vms[@]}") ATTEMPT_LOGS=() ATTEMPT_QRC=() QUITS=()
	rm -rf "${SHARE:?}/out/$NAME"; mkdir -p "$SHARE/out/$NAME"
	rm -f "$CTL"/req.* "$CTL"/rsp.*
	local link=${LINK:-udp} port=$((20000 + RANDOM % 30000)) tapsfx
	tapsfx=$(printf %04x $((RANDOM % 65536)))
	if [ "$TOPO" = pair ] && [ "$link" = tap ]; then
		ip link add "srbr$tapsfx" type bridge && TAPS+=("srbr$tapsfx") || return 1
		sysctl -qw "net.ipv6.conf.srbr$tapsfx.disable_ipv6=1" 2>/dev/null
		ip link set "srbr$tapsfx" up
		for i in a b; do
			ip tuntap add dev "srt$i$tapsfx" mode tap && TAPS=("srt$i$tapsfx" "${TAPS[@]}") || return 1
			ip link set "srt$i$tapsfx" master "srbr$tapsfx" up
		done
	fi
	PIDS=()
	for i in "${!vms[@]}"; do
		vm=${vms[$i]}
		log=$LOGS/$NAME.try$attempt.log
		[ "$TOPO" = pair ] && log=$LOGS/$NAME.try$attempt.${roles[$i]}.log
		ATTEMPT_LOGS+=("$log")
		rm -f "$log" "$log.qemu"
		write_boot "$vm" "${roles[$i]}" "${peers[$i]}" "$@" || return 1
		case $TOPO in
		one) netargs=(-netdev hubport,id=n0,hubid=0 -device virtio-net-pci,netdev=n0,mac=52:54:00:5a:00:01) ;;
		twonic) netargs=(-netdev hubport,id=n0,hubid=0 -device virtio-net-pci,netdev=n0,mac=52:54:00:5a:00:01
			-netdev hubport,id=n1,hubid=0 -device virtio-net-pci,netdev=n1,mac=52:54:00:5a:00:02) ;;
		quad) netargs=(); local k
			for k in 0 1 2 3; do
				netargs+=(-netdev "hubport,id=n$k,hubid=0" -device "virtio-net-pci,netdev=n$k,mac=52:54:00:5a:00:0$((k + 1))")
			done ;;
		pair)
			if [ "$link" = tap ]; then
				netargs=(-netdev "tap,id=n0,ifname=srt${roles[$i]}$tapsfx,script=no,downscript=no")
			elif [ "$i" = 0 ]; then
				netargs=(-netdev "socket,id=n0,udp=127.0.0.1:$((port + 1)),localaddr=127.0.0.1:$port")
			else
				netargs=(-netdev "socket,id=n0,udp=127.0.0.1:$port,localaddr=127.0.0.1:$((port + 1))")
			fi
			netargs+=(-device "virtio-net-pci,netdev=n0,mac=52:54:00:5a:01:0$((i + 1))") ;;
		esac
		local append="console=ttyS0 quiet panic=-1 mitigations=off sr.vm=$vm sr.xdir=$BUILDDIR"
		local cmd=(qemu-system-x86_64 -accel "$ACCEL" -m "$MEM" -smp "${SOFTROCE_SMP:-1}" -nodefaults -no-reboot
			-display none -kernel "$KERNEL" -initrd "$INITRD" -append "$append"
			-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap
			-virtfs "local,path=$SHARE,mount_tag=share,security_model=none,multidevs=remap"
			-virtfs "local,path=$BUILDDIR,mount_tag=xdir,security_model=none,readonly=on,multidevs=remap"
			-monitor "unix:$SOCKDIR/$vm.mon,server=on,wait=off"
			-serial "file:$log" "${netargs[@]}")
		timeout -k 5 "$TMO" "${cmd[@]}" < /dev/null > "$log.qemu" 2>&1 &
		PIDS+=($!)
	done
	relay
	ATTEMPT_QRC=()
	for i in "${!PIDS[@]}"; do wait "${PIDS[$i]}"; ATTEMPT_QRC+=($?); done
	PIDS=()
	for i in "${TAPS[@]}"; do ip link del "$i" 2>/dev/null; done
	TAPS=()
}

# forward pending monitor requests of the guests (see guest/sr-mon)
relay_once() {
	local req id vm cmd out
	for req in "$CTL"/req.*; do
		[ -f "$req" ] || continue
		case $req in *.tmp) continue ;; esac
		id=${req##*/req.}
		read -r vm cmd < "$req"; rm -f "$req"
		case $cmd in quit | q) QUITS[$vm]=guest ;; esac
		if [ -S "$SOCKDIR/$vm.mon" ]; then
			out=$(printf '%s\n' "$cmd" | socat -t 0.3 - "UNIX-CONNECT:$SOCKDIR/$vm.mon" 2>&1 |
				tr -d '\r' | sed 's/\x1b\[[0-9;]*[A-Za-z]//g; /^QEMU .* monitor/d; s/^(qemu) *//; /^$/d' |
				grep -vF -- "$cmd")
		else
			out="ERROR: no monitor for VM '$vm'"
		fi
		printf '%s\n' "$out" > "$CTL/rsp.$id.tmp" && mv "$CTL/rsp.$id.tmp" "$CTL/rsp.$id"
		echo "vm.sh: $NAME: monitor[$vm] $cmd" >&2
	done
}

# relay until every QEMU of the attempt has exited; in a pair, stop a guest
# that is still running PEER_GRACE s after the other one finished
relay() {
	local alive i first_exit=-1 stopped=0 vm
	while :; do
		alive=0
		for i in "${!PIDS[@]}"; do kill -0 "${PIDS[$i]}" 2>/dev/null && alive=$((alive + 1)); done
		relay_once
		[ $alive -gt 0 ] || break
		if [ $alive -lt ${#PIDS[@]} ] && [ $stopped = 0 ]; then
			[ $first_exit -ge 0 ] || first_exit=$SECONDS
			if [ $((SECONDS - first_exit)) -ge "$PEER_GRACE" ]; then
				stopped=1
				for i in "${!PIDS[@]}"; do
					kill -0 "${PIDS[$i]}" 2>/dev/null || continue
					vm=${ATTEMPT_VMS[$i]}
					[ -n "${QUITS[$vm]:-}" ] || QUITS[$vm]=harness
					echo "vm.sh: $NAME: stopping $vm, still running ${PEER_GRACE} s after its peer finished" >&2
					echo quit | socat -t 0.3 - "UNIX-CONNECT:$SOCKDIR/$vm.mon" >/dev/null 2>&1
				done
			fi
		fi
		sleep 0.05
	done
}

# classify the attempt: INFRA reasons (one per line) or nothing
infra_reasons() {
	local i log vm rc dm
	for i in "${!ATTEMPT_LOGS[@]}"; do
		log=${ATTEMPT_LOGS[$i]}; rc=${ATTEMPT_QRC[$i]}
		vm=${ATTEMPT_VMS[$i]}
		dm=$SHARE/out/$NAME/dmesg-$vm.txt
		case $rc in
		124 | 137) echo "$vm: guest hung: killed after the ${TMO} s timeout" ;;
		0) ;;
		*) echo "$vm: qemu exited with status $rc: $(tail -c 300 "$log.qemu" 2>/dev/null | tr '\n' ' ')" ;;
		esac
		grep -a -h -m 3 -E 'WARNING: CPU:|WARNING: at |-+\[ cut here \]|NETDEV WATCHDOG|Kernel panic|BUG:|Oops|general protection fault|INFO: task .* blocked for more than|rcu: INFO: .*stall|sr-init: FAILED|^SR-INFRA:' \
			"$log" 2>/dev/null | tr -d '\r' | sed "s/^/$vm: console: /"
		[ -f "$dm" ] && grep -a -h -m 3 -E 'WARNING:|NETDEV WATCHDOG|BUG:|Oops|Kernel panic|blocked for more than|rcu.*stall' "$dm" \
			| sed "s/^/$vm: dmesg: /"
		if [ "$rc" = 0 ] && [ -z "${QUITS[$vm]:-}" ] && ! grep -aq '^SR-EXIT rc=' "$log" 2>/dev/null; then
			echo "$vm: guest stopped without reporting an exit status"
		fi
	done | awk '!seen[$0]++'
}

guest_rc() { # LOG -> the script's exit status
	sed -n 's/^SR-EXIT rc=\([0-9]*\).*/\1/p' "$1" 2>/dev/null | tr -d '\r' | tail -1
}

if [ "$INTERACTIVE" = 1 ]; then
	[ "$TOPO" != pair ] || { echo "vm.sh: -I needs topology one, twonic or quad" >&2; exit 2; }
	write_boot "$NAME" - -
	case $TOPO in
	one) netargs=(-netdev hubport,id=n0,hubid=0 -device virtio-net-pci,netdev=n0) ;;
	twonic) netargs=(-netdev hubport,id=n0,hubid=0 -device virtio-net-pci,netdev=n0
		-netdev hubport,id=n1,hubid=0 -device virtio-net-pci,netdev=n1) ;;
	quad) netargs=()
		for k in 0 1 2 3; do
			netargs+=(-netdev "hubport,id=n$k,hubid=0" -device "virtio-net-pci,netdev=n$k,mac=52:54:00:5a:00:0$((k + 1))")
		done ;;
	esac
	rm -f "$CTL"/req.* "$CTL"/rsp.*
	( while :; do relay_once 2>/dev/null; sleep 0.05; done ) &
	PIDS=($!)
	qemu-system-x86_64 -accel "$ACCEL" -m "$MEM" -smp "${SOFTROCE_SMP:-1}" -nodefaults -no-reboot -display none \
		-kernel "$KERNEL" -initrd "$INITRD" \
		-append "console=ttyS0 quiet panic=-1 mitigations=off sr.vm=$NAME sr.xdir=$BUILDDIR" \
		-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
		-virtfs "local,path=$SHARE,mount_tag=share,security_model=none,multidevs=remap" \
		-virtfs "local,path=$BUILDDIR,mount_tag=xdir,security_model=none,readonly=on,multidevs=remap" \
		-monitor "unix:$SOCKDIR/$NAME.mon,server=on,wait=off" -serial stdio "${netargs[@]}"
	exit $?
fi

attempt=0
while :; do
	attempt=$((attempt + 1))
	T0=$(date +%s%N)
	if ! run_attempt "$attempt" "$@"; then
		echo "vm.sh: $NAME: INFRA FAILURE: could not set up the guests (attempt $attempt)"
		exit 99
	fi
	WALL=$(( ($(date +%s%N) - T0) / 1000000 ))
	WALL=$((WALL / 1000)).$(printf %03d $((WALL % 1000)))
	printf '%s\n' "${ATTEMPT_LOGS[@]}" > "$LOGS/$NAME.last"
	REASONS=$(infra_reasons)
	if [ -n "$REASONS" ]; then
		echo "vm.sh: $NAME: INFRA FAILURE (attempt $attempt, ${WALL} s):"
		printf '%s\n' "$REASONS" | sed 's/^/vm.sh:   /'
		if [ "$attempt" -le "$RETRIES" ]; then
			echo "vm.sh: $NAME: retrying in a fresh guest"
			continue
		fi
		echo "vm.sh: $NAME: RESULT INFRA (${WALL} s, attempt $attempt)"
		exit 99
	fi
	verdict=PASS rc=0 rcs=
	for i in "${!ATTEMPT_LOGS[@]}"; do
		r=$(guest_rc "${ATTEMPT_LOGS[$i]}")
		case ${QUITS[${ATTEMPT_VMS[$i]}]:-}:$r in
		guest:) r=0 ;;   # stopped on purpose by a guest script
		harness:) echo "vm.sh: $NAME: ${ATTEMPT_VMS[$i]} did not finish within ${PEER_GRACE} s after its peer" ;;
		esac
		rcs="$rcs ${r:-?}"
		case $r in
		0) ;;
		77) [ $verdict = PASS ] && verdict=SKIP rc=77 ;;
		*) verdict=FAIL rc=1 ;;
		esac
	done
	echo "vm.sh: $NAME: RESULT $verdict (${WALL} s, attempt $attempt, guest exit status$rcs)"
	exit $rc
done
