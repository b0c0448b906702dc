#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Host setup for the Soft-RoCE guest harness (tests/softroce).
#
#   setup.sh [CACHE_DIR]
#
# 1. Installs the Debian packages the harness needs (apt-get, no recommends).
#    SKIP_APT=1 skips this step (the packages must then already be there).
# 2. Builds into CACHE_DIR (argument, else $SOFTROCE_CACHE, else
#    $BUILDDIR/softroce-cache, else ./softroce-cache):
#      vmlinux-<kver>            the ELF kernel, cut out of /boot/vmlinuz-<kver>
#                                so QEMU can boot it through the PVH entry
#                                (no in-guest decompression: ~4 s saved per boot)
#      initramfs-<kver>.cpio.gz  busybox + virtio/9p modules + our /init
#      kver                      the guest kernel version that was picked
# It never writes into the source tree, and it is a no-op (well under a second)
# when everything is already up to date.  KVER=... picks the guest kernel.
# re-run under bash when started as "sh run.sh" (make's $(SHELL) is /bin/sh)
if [ -z "${BASH_VERSION:-}" ]; then
	command -v bash >/dev/null 2>&1 || { echo "setup.sh: bash is required" >&2; exit 1; }
	exec bash "$0" "$@"
fi
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${1:-${SOFTROCE_CACHE:-${BUILDDIR:-$PWD}/softroce-cache}}

say() { echo "softroce-setup: $*"; }
die() { echo "softroce-setup: ERROR: $*" >&2; exit 1; }

PKGS="qemu-system-x86 linux-image-amd64 busybox-static cpio kmod xz-utils
      zstd gzip socat iproute2 procps rdma-core ibverbs-providers
      ibverbs-utils perftest libibverbs-dev"

if [ "${SKIP_APT:-0}" != 1 ]; then
	missing=
	for p in $PKGS; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' \
			|| missing="$missing $p"
	done
	if [ -n "$missing" ]; then
		[ "$(id -u)" = 0 ] || die "need root to install:$missing (or SKIP_APT=1)"
		say "installing:$missing"
		export DEBIAN_FRONTEND=noninteractive
		# shellcheck disable=SC2086  # a list of package names
		apt-get install -y -q --no-install-recommends $missing \
			|| { apt-get update -q && apt-get install -y -q --no-install-recommends $missing; }
	fi
fi

for t in qemu-system-x86_64 cpio modprobe; do
	command -v "$t" >/dev/null || die "'$t' not found (install the packages or run without SKIP_APT)"
done
[ -x /bin/busybox ] || die "/bin/busybox missing (package busybox-static)"
file_is_static() { ! LC_ALL=C ldd "$1" >/dev/null 2>&1; }
file_is_static /bin/busybox || die "/bin/busybox is dynamically linked; install busybox-static"

# Guest kernel: newest /lib/modules/<kver> that ships rdma_rxe and has a /boot image.
pick_kver() {
	local d k
	for d in $(ls -d /lib/modules/* 2>/dev/null | sort -rV); do
		k=${d##*/}
		[ -f "/boot/vmlinuz-$k" ] || continue
		find "$d/kernel/drivers/infiniband/sw/rxe" -name 'rdma_rxe.ko*' 2>/dev/null | grep -q . || continue
		echo "$k"; return 0
	done
	return 1
}
KVER=${KVER:-$(pick_kver)} || die "no kernel with rdma_rxe.ko under /lib/modules (package linux-image-amd64)"
BZ=/boot/vmlinuz-$KVER
[ -r "$BZ" ] || die "$BZ missing"

mkdir -p "$CACHE"
CACHE=$(cd "$CACHE" && pwd)
VMLINUX=$CACHE/vmlinux-$KVER
INITRD=$CACHE/initramfs-$KVER.cpio.gz

# --- 1. vmlinux: the bzImage header says where the compressed payload is ---
# (boot protocol >= 2.08: payload_offset at 0x248, payload_length at 0x24c,
#  both relative to the protected-mode code that starts after the setup sectors)
le32() { od -An -t u4 -j "$2" -N 4 "$1" | tr -d ' '; }
u8() { od -An -t u1 -j "$2" -N 1 "$1" | tr -d ' '; }
extract_vmlinux() {
	local setup_sects pm off len magic tmp=$VMLINUX.tmp.$$
	setup_sects=$(u8 "$BZ" $((0x1f1)))
	[ "$setup_sects" = 0 ] && setup_sects=4
	pm=$(( (setup_sects + 1) * 512 ))
	off=$(( pm + $(le32 "$BZ" $((0x248))) ))
	len=$(le32 "$BZ" $((0x24c)))
	magic=$(od -An -t x1 -j "$off" -N 4 "$BZ" | tr -d ' ')
	local dec
	case $magic in
	fd377a58) dec="xz -dc" ;;
	1f8b08*)  dec="gzip -dc" ;;
	28b52ffd) dec="zstd -dcq" ;;
	*) die "unknown kernel payload compression (magic $magic) in $BZ" ;;
	esac
	tail -c +$((off + 1)) "$BZ" | head -c "$len" | $dec > "$tmp" 2>/dev/null || true
	[ "$(od -An -t x1 -N 4 "$tmp" | tr -d ' ')" = 7f454c46 ] \
		|| { rm -f "$tmp"; die "could not extract an ELF vmlinux from $BZ"; }
	mv "$tmp" "$VMLINUX"
}
if [ ! -s "$VMLINUX" ] || [ "$BZ" -nt "$VMLINUX" ]; then
	t0=$(date +%s%N)
	extract_vmlinux
	say "built $VMLINUX in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
fi

# --- 2. initramfs ---
need_initrd=0
[ -s "$INITRD" ] || need_initrd=1
[ "$need_initrd" = 0 ] && [ "$HERE/guest-init.sh" -nt "$INITRD" ] && need_initrd=1
[ "$need_initrd" = 0 ] && [ "/lib/modules/$KVER/modules.dep" -nt "$INITRD" ] && need_initrd=1
if [ "$need_initrd" = 1 ]; then
	stage=$(mktemp -d)
	trap 'rm -rf "$stage"' EXIT
	mkdir -p "$stage"/{bin,dev,proc,sys,newroot,lib/sr}
	cp /bin/busybox "$stage/bin/busybox"
	# what must be loaded before the 9p root can be mounted, in dependency order
	for m in virtio_pci 9pnet_virtio 9p; do
		modprobe -S "$KVER" --show-depends "$m" || die "modprobe --show-depends $m failed for $KVER"
	done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }' > "$stage/modlist"
	: > "$stage/lib/sr/modules"
	while read -r ko; do
		case $ko in
		*.ko)     cp "$ko" "$stage/lib/sr/" ;;
		*.ko.xz)  xz -dc "$ko" > "$stage/lib/sr/$(basename "${ko%.xz}")" ;;
		*.ko.zst) zstd -dcq "$ko" > "$stage/lib/sr/$(basename "${ko%.zst}")" ;;
		*.ko.gz)  gzip -dc "$ko" > "$stage/lib/sr/$(basename "${ko%.gz}")" ;;
		*) die "unexpected module file $ko" ;;
		esac
		b=$(basename "$ko"); echo "${b%.ko*}.ko" >> "$stage/lib/sr/modules"
	done < "$stage/modlist"
	rm -f "$stage/modlist"
	install -m 0755 "$HERE/guest-init.sh" "$stage/init"
	(cd "$stage" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -1) > "$INITRD.tmp.$$"
	mv "$INITRD.tmp.$$" "$INITRD"
	say "built $INITRD ($(du -h "$INITRD" | cut -f1), modules: $(tr '\n' ' ' < "$stage/lib/sr/modules"))"
fi

echo "$KVER" > "$CACHE/kver.tmp.$$" && mv "$CACHE/kver.tmp.$$" "$CACHE/kver"
say "ready: cache=$CACHE kernel=$KVER"
