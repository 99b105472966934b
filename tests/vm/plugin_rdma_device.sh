# The example plugin examples/rdma_device on a real rxe device: built out of
# tree against `cmake --install` of the build, in a directory the lab VM
# sees (its /tmp is the guest's own tmpfs, so not under /tmp), then its
# scenario rxe-attributes.yaml run in the lab VM on 6.1 and 7.3 (those that
# are prepared) as one suite. Per kernel: it passes, the plugin's step
# reports the device's attributes (and what differs between the kernels:
# on-demand paging and the largest message), cleanup leaves nothing, no qemu
# is left. The host side of the SDK is tests/e2e/plugin_sdk.sh.
source "$(dirname "$0")/lib.sh"

BUILD=$(cd "$(dirname "$RXERUN")" && pwd -P)
command -v cmake >/dev/null || { echo "skip: cmake is not installed"; exit 77; }
pkg-config --exists libibverbs 2>/dev/null || { echo "skip: libibverbs-dev is not installed (the example needs it)"; exit 77; }
[ -f "$BUILD/cmake_install.cmake" ] || { echo "skip: $RXERUN is not in a CMake build directory to install from"; exit 77; }
kernels=""
for k in 6.1 7.3; do
  case " $KERNELS " in *" $k "*) kernels="${kernels:+$kernels,}$k" ;; esac
done
[ -n "$kernels" ] || { echo "skip: neither kernel 6.1 nor 7.3 is prepared"; exit 77; }

# Beside the build (outside /tmp), removed however the test ends.
DIR="$BUILD/plugin-test-$$"
trap 'rm -rf "$WORK" "$DIR"' EXIT
mkdir -p "$DIR"

expect_exit 0 "cmake --install of the build into a prefix" -- cmake --install "$BUILD" --prefix "$WORK/prefix"
cp -r examples/rdma_device "$DIR/ex"
rm -rf "$DIR/ex/build"
expect_exit 0 "configure the example against the prefix" -- cmake -S "$DIR/ex" -B "$DIR/ex/build" \
  -DCMAKE_PREFIX_PATH="$WORK/prefix"
expect_exit 0 "build the example" -- cmake --build "$DIR/ex/build"
[ -f "$DIR/ex/build/librdma_device.so" ] && pass "librdma_device.so built beside the scenario" \
  || fail "no librdma_device.so in $DIR/ex/build"

expect_exit 0 "rxe-attributes.yaml on kernels $kernels" -- "$RXERUN" run "$DIR/ex/rxe-attributes.yaml" \
  --kernel "$kernels" --report json:"$WORK/r.json"
echo "$out" | grep -E '^lab VM:|^cleanup|^PASS|^FAIL|^ERROR|^suite'
lacks "$out" "left behind" "cleanup left nothing"

# A suite report has its runs in `runs`; a single run is the report itself.
run_field() { json_field "$WORK/r.json" "[x for x in r.get('runs', [r]) if x['kernel'] == '$1'][0]$2"; }
fact() { run_field "$1" "['steps'][-1]['facts'].get('$2')"; }
for k in ${kernels//,/ }; do
  same "$(run_field "$k" "['exit_code']")" 0 "kernel $k: exit 0"
  same "$(run_field "$k" "['vm']['release'].startswith('$k')")" True "kernel $k: it ran in the lab VM of $k"
  same "$(run_field "$k" "['steps'][-1]['name']")" attributes "kernel $k: the plugin's step is the last"
  same "$(run_field "$k" "['steps'][-1]['outcome']")" ok "kernel $k: the plugin's step passed"
  same "$(run_field "$k" "['cleanup']['clean']")" True "kernel $k: cleanup clean"
  same "$(fact "$k" transport)" InfiniBand "kernel $k: transport"
  same "$(fact "$k" link_layer)" Ethernet "kernel $k: link_layer"
  same "$(fact "$k" atomic_cap)" HCA "kernel $k: atomic_cap"
  same "$(fact "$k" port_state)" ACTIVE "kernel $k: port_state"
  same "$(fact "$k" active_mtu)" 1024 "kernel $k: active_mtu"
  same "$(fact "$k" gid_tbl_len)" 1024 "kernel $k: gid_tbl_len"
  same "$(fact "$k" max_qp)" 1048560 "kernel $k: max_qp"
  same "$(fact "$k" max_mr_size)" 18446744073709551615 "kernel $k: max_mr_size, a uint64 kept exact"
  grep -qE '^[0-9a-f]{4}(:[0-9a-f]{4}){3}$' <<<"$(fact "$k" node_guid)" && pass "kernel $k: node_guid as ibv_devinfo writes it" \
    || fail "kernel $k: node_guid '$(fact "$k" node_guid)'"
done
# What differs between the two kernels' rxe.
case ",$kernels," in
  *,6.1,*)
    same "$(fact 6.1 odp)" False "kernel 6.1: no on-demand paging"
    same "$(fact 6.1 max_msg_sz)" 8388608 "kernel 6.1: messages of up to 8 MiB"
    ;;
esac
case ",$kernels," in
  *,7.3,*)
    same "$(fact 7.3 odp)" True "kernel 7.3: on-demand paging"
    same "$(fact 7.3 max_msg_sz)" 2147483648 "kernel 7.3: messages of up to 2 GiB"
    ;;
esac
no_qemu_left "after the runs"
finish
