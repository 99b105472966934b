# A guest kernel that cannot start the run is booted once more, then the
# run ends with exit 3 and the console's last lines.
source "$(dirname "$0")/lib.sh"
expect_exit 3 "a kernel without its init" -- env RXERUN_VM_APPEND=rdinit=/nonexistent "$RXERUN" run --vm tests/data/vm/idle.yaml
contains "$err" "booting again" "the first failure is retried"
contains "$err" "the lab VM did not boot" "the second is reported"
contains "$err" "the guest console's last lines" "with the console"
no_qemu_left "after boot failures"
finish
