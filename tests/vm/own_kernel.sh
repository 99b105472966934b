# A kernel of one's own: `rxerun run --kernel BUILD_DIR`. No kernel is
# compiled here: a build directory is assembled from the prepared Debian 6.1
# kernel (its vmlinuz as arch/x86/boot/bzImage, its config as .config, its
# modules at their tree paths with modules.order, modules.builtin*,
# include/config/kernel.release). It boots and runs an rxe lab; installed
# once, it is reused; without CONFIG_RDMA_RXE it is refused before any qemu
# starts, exit 3, the option named. Then the same kernel as an installed
# image with --modules.
source "$(dirname "$0")/lib.sh"

where=$("$RXERUN" vm status | awk '$1 == "6.1" && $2 == "ready" {print $4}')
if [ -z "$where" ]; then
  echo "skip: kernel 6.1 is not prepared (rxerun vm setup --kernel 6.1)"
  exit 77
fi
release=$("$RXERUN" vm status | awk '$1 == "6.1" && $2 == "ready" {print $3}')
mods="$where/root/lib/modules/$release"

# The build directory, its big files symbolic links into the prepared kernel.
tree="$WORK/linux"
mkdir -p "$tree/arch/x86/boot" "$tree/include/config"
ln -s "$where/vmlinuz" "$tree/arch/x86/boot/bzImage"
cp "$where/root/boot/config-$release" "$tree/.config"
echo "$release" >"$tree/include/config/kernel.release"
cp "$mods/modules.builtin" "$mods/modules.builtin.modinfo" "$tree/"
# modules.order in a build tree names tree paths (kbuild writes .o in newer
# kernels: both spellings must work).
sed -e 's|^kernel/||' "$mods/modules.order" | awk 'NR % 2 {sub(/\.ko$/, ".o")} {print}' >"$tree/modules.order"
# (One process for the 4,000 links: a shell loop's mkdir and ln took a minute.)
/usr/bin/python3 - "$mods" "$tree" <<'PY'
import os, sys
mods, tree = sys.argv[1], sys.argv[2]
for line in open(os.path.join(mods, "modules.order")):
    m = line.strip().removeprefix("kernel/")
    if not m:
        continue
    os.makedirs(os.path.join(tree, os.path.dirname(m)), exist_ok=True)
    os.symlink(os.path.join(mods, "kernel", m), os.path.join(tree, m))
PY

export RXERUN_CACHE_DIR="$WORK/cache"
expect_exit 0 "an rxe lab on a kernel build directory" -- "$RXERUN" run --kernel "$tree" tests/data/vm/rxe.yaml --report json:"$WORK/own.json"
contains "$out" "kernel $release: installed" "the kernel was installed into the cache"
contains "$out" "lab VM: kernel $release ($release," "it booted that kernel"
same "$(json_field "$WORK/own.json" 'r["host"]["kernel"]')" "$release" "the guest ran $release"
ls -d "$RXERUN_CACHE_DIR"/own/"$release"-* >/dev/null 2>&1 && pass "the installation is under CACHE/own" || fail "no CACHE/own/$release-*"

expect_exit 0 "the same build directory again" -- "$RXERUN" run --kernel "$tree/" tests/data/vm/rxe.yaml
lacks "$out" "installed" "the installation was reused"
contains "$out" "up in" "it started"
contains "$out" "from its snapshot" "  ... from the snapshot the first run made"
ls "$RXERUN_CACHE_DIR"/own/*/snapshots/*.snap >/dev/null 2>&1 && pass "the snapshot is beside the installed kernel" ||
  fail "no snapshot under CACHE/own/*/snapshots"
same "$(ls -d "$RXERUN_CACHE_DIR"/own/*/ | wc -l)" 1 "one installation in the cache"

# Without rdma_rxe: refused before boot, every missing option named.
sed -i -e '/^CONFIG_RDMA_RXE=/d' -e '/^CONFIG_ACPI=/d' "$tree/.config"
expect_exit 3 "a build without CONFIG_RDMA_RXE" -- "$RXERUN" run --kernel "$tree" tests/data/vm/rxe.yaml
contains "$err" "CONFIG_RDMA_RXE" "the message names CONFIG_RDMA_RXE"
contains "$err" "CONFIG_ACPI" "and every other missing option"
contains "$err" "not booted" "it says nothing booted"
lacks "$out" "lab VM:" "no lab VM started"
# A scenario that needs no rdma_rxe would still boot; one missing boot option refuses any.
expect_exit 3 "a build without CONFIG_ACPI, for a lab without rxe" -- "$RXERUN" run --kernel "$tree" tests/data/vm/pass.yaml
contains "$err" "CONFIG_ACPI" "the boot option is named"
lacks "$err" "CONFIG_RDMA_RXE" "rdma_rxe is not asked of a lab without rxe"

# An installed kernel: the image, its modules directory used where it is,
# the configuration beside the image (as in /boot).
image="$where/root/boot/vmlinuz-$release"
expect_exit 0 "a kernel image with --modules" -- "$RXERUN" run --kernel "$image" --modules "$mods" tests/data/vm/rxe.yaml
contains "$out" "lab VM: kernel $release ($release," "it booted that kernel"
expect_exit 2 "a kernel image without --modules" -- "$RXERUN" run --kernel "$image" tests/data/vm/rxe.yaml
contains "$err" "--modules DIR" "it asks for the modules directory"

expect_exit 2 "--kernel PATH that is no kernel" -- "$RXERUN" run --kernel "$WORK/nowhere/linux" tests/data/vm/rxe.yaml
contains "$err" "no kernel at" "it says so"
expect_exit 2 "--modules without a kernel image" -- "$RXERUN" run --kernel 6.1 --modules "$mods" tests/data/vm/rxe.yaml
no_qemu_left "after the own kernels"
finish
