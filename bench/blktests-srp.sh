#!/usr/bin/env bash
# blktests' srp group over rxe against scenarios/srp-rdma.yaml, in one boot
# of the lab VM (kernel 6.1; bench/blktests-srp-guest.sh is the guest half):
# the time of each blktests test and of the whole group, and the SRP lab's
# wall time over 5 rounds. A by-hand comparison, not part of CI: blktests'
# srp tests need multipathd, udevd, mkfs.xfs, sg_reset and GNU awk, which
# scripts/setup does not install.
#
#   apt-get install multipath-tools xfsprogs sg3-utils gawk udev
#   bench/blktests-srp.sh [RXERUN] BLKTESTS_CHECKOUT
set -euo pipefail
cd "$(dirname "$0")/.."
RXERUN=$(realpath "${1:-build/rxerun}")
SRC=${2:?usage: bench/blktests-srp.sh [RXERUN] BLKTESTS_CHECKOUT}
missing=()
for p in multipathd mkfs.xfs sg_reset gawk fio /lib/systemd/systemd-udevd; do
  command -v "$p" >/dev/null || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "blktests-srp: missing ${missing[*]}: apt-get install multipath-tools xfsprogs sg3-utils gawk udev" >&2
  exit 2
fi
# The guest sees the host's root read-only and /tmp shared: blktests is
# copied and built under /tmp, where its results can be written.
work=$(mktemp -d /tmp/blktests-srp.XXXXXX)
trap 'rm -rf "$work"' EXIT
cp -a "$SRC"/. "$work/"
make -C "$work" -j"$(nproc)" >/dev/null
"$RXERUN" vm exec --kernel 6.1 --timeout 40m -- /bin/bash bench/blktests-srp-guest.sh "$RXERUN" "$work"
