# --vm needs no root on the host: an unprivileged user runs a root-only
# scenario in the lab VM.
source "$(dirname "$0")/lib.sh"
if [ "$(id -u)" -ne 0 ]; then
  expect_exit 0 "as $(id -un), in the lab VM" -- "$RXERUN" run --vm tests/data/vm/pass.yaml
  finish
fi
user=nobody
if ! runuser -u "$user" -- test -x "$RXERUN"; then echo "skip: $user cannot run $RXERUN (its directory is private)"; exit 77; fi
chmod 755 "$WORK"
install -d -o "$user" "$WORK/home"
chown "$user" "$TMPDIR"
expect_exit 0 "as $user, by default in the lab VM" -- runuser -u "$user" -- env HOME="$WORK/home" TMPDIR="$TMPDIR" "$RXERUN" run "$SRC/tests/data/vm/pass.yaml"
contains "$(head -n1 <<<"$out")" "not root on the host" "first line: why the lab VM"
no_qemu_left "unprivileged"
finish
