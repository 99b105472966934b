#include "vm/boot_protocol.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace rxerun::vm {

std::string go_line(const GoLine& go) {
  return "rxerun-go " + go.release + " " + go.modules + " " + go.exe + " " + std::to_string(go.host_time_ns) + " " +
         go.seed_hex + "\n";
}

std::optional<GoLine> parse_go_line(std::string_view line) {
  std::istringstream in{std::string(line)};
  std::string tag, time;
  GoLine go;
  if (!(in >> tag >> go.release >> go.modules >> go.exe >> time >> go.seed_hex) || tag != "rxerun-go")
    return std::nullopt;
  char* end = nullptr;
  go.host_time_ns = std::strtoll(time.c_str(), &end, 10);
  if (*end != '\0' || go.seed_hex.size() != 64 ||
      go.seed_hex.find_first_not_of("0123456789abcdef") != std::string::npos)
    return std::nullopt;
  return go;
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
  # rxerun and its libraries, copied from the host's root into this one,
  # which is unmounted again: rxerun, loaded, waits for the host's go line.
  [ -n "$EXE" ] || die "kernel command line lacks rxerun.exe"
  mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000,cache=loose hostroot /lower || die "mount of the host root (9p) failed"
  [ -x /lower$EXE ] || die "rxerun binary $EXE not found in the host root"
  mkdir -p /rx/lib /lib64
  chroot /lower /lib64/ld-linux-x86-64.so.2 --list $EXE >/rx/libs || die "cannot list the libraries of $EXE"
  while read -r NAME ARROW WHERE REST; do
    [ "$ARROW" = "=>" ] || WHERE=$NAME
    case $WHERE in /*) ;; *) continue ;; esac
    # The host's links, followed as the host follows them: an absolute one
    # is a path in the host's root.
    while [ -L "/lower$WHERE" ]; do
      TO=$(readlink "/lower$WHERE")
      case $TO in /*) WHERE=$TO ;; *) WHERE=${WHERE%/*}/$TO ;; esac
    done
    case $NAME in
      /*) cp "/lower$WHERE" "$NAME" || die "cannot copy $NAME" ;;
      *) cp "/lower$WHERE" "/rx/lib/$NAME" || die "cannot copy $NAME" ;;
    esac
  done </rx/libs
  cp "/lower$EXE" /rx/rxerun || die "cannot copy $EXE"
  umount /lower || die "cannot unmount the host root"
  stty -echo </dev/console
  export LD_LIBRARY_PATH=/rx/lib RXERUN_GO=console
  exec /rx/rxerun __vm-guest
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
