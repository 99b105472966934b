#include "vm/boot_protocol.h"

#include <cstdio>

namespace rxerun::vm {

std::string go_line(const GoLine& go) {
  return "rxerun-go " + go.release + " " + go.modules + " " + go.exe + " " + std::to_string(go.host_time_ns) + " " +
         go.seed_hex + "\n";
}

std::string wire_boot_mac(std::size_t i) {
  char mac[18];
  std::snprintf(mac, sizeof mac, "02:72:78:00:%02zx:%02zx", (i >> 8) & 0xff, i & 0xff);
  return mac;
}

std::string_view stage1_init_script() {
  // Every failure powers the VM off at once with one FATAL line on the
  // console: the host sees a guest that never started and says why.
  return R"SH(#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
die() { echo "rxerun-init: FATAL: $*" >/dev/console; poweroff -f; sleep 10; }
REL= ; MODS= ; EXE= ; GO=
for a in $(cat /proc/cmdline); do
  case $a in
    rxerun.release=*) REL=${a#*=} ;;
    rxerun.modules=*) MODS=${a#*=} ;;
    rxerun.exe=*) EXE=${a#*=} ;;
    rxerun.go=console) GO=console ;;
  esac
done
for m in $(cat /modules/order); do
  insmod /modules/$m.ko || die "insmod $m"
done
if [ "$GO" = console ]; then
  stty -echo </dev/console
  echo "rxerun-init: waiting for the host" >/dev/console
  TAG=
  while [ "$TAG" != rxerun-go ]; do
    read -r TAG REL MODS EXE T SEED REST </dev/console || die "the console closed before the host's go line"
  done
  read -r UP REST </proc/uptime
  export RXERUN_GO_TIME_NS=$T RXERUN_GO_UPTIME=$UP RXERUN_GO_SEED=$SEED
  echo "rxerun-init: go" >/dev/console
fi
[ -n "$REL" ] && [ -n "$MODS" ] && [ -n "$EXE" ] || die "kernel command line lacks rxerun.release/modules/exe"
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000,cache=loose hostroot /lower || die "mount of the host root (9p) failed"
mount -t tmpfs -o mode=0755 tmpfs /upper || die "tmpfs"
mkdir -p /upper/u /upper/w
mount -t overlay -o lowerdir=/lower,upperdir=/upper/u,workdir=/upper/w overlay /newroot || die "overlay root"
mkdir -p /newroot/mnt/rxerun /newroot/lib/modules/$REL
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 rxerun /newroot/mnt/rxerun || die "mount of the run share (9p) failed"
mount --bind /newroot$MODS /newroot/lib/modules/$REL || die "no module tree at $MODS"
[ -x /newroot$EXE ] || die "rxerun binary $EXE not found in the host root"
mount --move /proc /newroot/proc
mount --move /sys /newroot/sys
mount --move /dev /newroot/dev
exec switch_root /newroot $EXE __vm-guest
)SH";
}

}  // namespace rxerun::vm
