#!/bin/busybox sh
# SPDX-License-Identifier: MIT
#
# /init of the Soft-RoCE harness initramfs (built by setup.sh).
#
# Loads the virtio/9p modules, mounts the host's / read-only over virtio-9p,
# gives the guest private /proc /sys /dev /tmp /run /var/tmp, mounts the
# read-write share (9p tag "share") on /mnt, optionally mounts one more host
# folder (9p tag "xdir") at its host path when that path is not visible through
# the root share (e.g. a build tree under /tmp), then switch_roots into the
# host root and runs /mnt/ctl/<vm>.boot (written by vm.sh).  It prints
# "SR-EXIT rc=<n>" and powers off.
#
# Kernel command line knobs: sr.vm=NAME  sr.xdir=/abs/path  sr.shell=1
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
# console shows kernel messages up to KERN_WARNING, so a WARN() splat
# reaches the console log that the host scans for infrastructure failures
echo 5 > /proc/sys/kernel/printk

for m in $(cat /lib/sr/modules); do
	insmod "/lib/sr/$m" || echo "sr-init: insmod $m failed"
done

VM=guest XDIR='' SHELLMODE=''
for w in $(cat /proc/cmdline); do
	case $w in
	sr.vm=*) VM=${w#sr.vm=} ;;
	sr.xdir=*) XDIR=${w#sr.xdir=} ;;
	sr.shell=1) SHELLMODE=1 ;;
	esac
done
hostname "$VM"

fail() { echo "sr-init: FAILED: $*"; echo "SR-EXIT rc=254"; poweroff -f; }

O9P="trans=virtio,version=9p2000.L,msize=512000"
mount -t 9p -o "$O9P,ro,cache=loose" hostroot /newroot || fail "cannot mount the host root"
mount -t proc proc /newroot/proc
mount -t sysfs sysfs /newroot/sys
mount -t devtmpfs devtmpfs /newroot/dev
mkdir -p /newroot/dev/shm /newroot/dev/pts
mount -t tmpfs -o mode=1777 shm /newroot/dev/shm
mount -t devpts devpts /newroot/dev/pts
for d in tmp run var/tmp; do mount -t tmpfs -o mode=1777 "sr-$d" "/newroot/$d"; done
mount -t 9p -o "$O9P,rw" share /newroot/mnt || fail "cannot mount the read-write share"
if [ -n "$XDIR" ] && [ ! -d "/newroot$XDIR" ]; then
	mkdir -p "/newroot$XDIR" && mount -t 9p -o "$O9P,ro" xdir "/newroot$XDIR" \
		|| fail "cannot mount $XDIR"
fi
echo "sr-init: $VM up at $(cut -d' ' -f1 /proc/uptime) s"

if [ -n "$SHELLMODE" ]; then
	exec switch_root /newroot /bin/sh -c 'cd /; /bin/sh -i; /bin/busybox poweroff -f'
fi
[ -r "/newroot/mnt/ctl/$VM.boot" ] || fail "no /mnt/ctl/$VM.boot"
exec switch_root /newroot /bin/sh -c \
	"cd /; /bin/sh /mnt/ctl/$VM.boot; echo \"SR-EXIT rc=\$?\"; sync; /bin/busybox poweroff -f"
