# The plugin SDK as a user meets it, on the host: `cmake --install` of the
# build gives a prefix with rxerun, the headers and the CMake package; the
# example plugin examples/rdma_device, copied elsewhere, builds against that
# prefix alone (no path into the source tree or the build); the installed
# rxerun then lists and describes its kind, puts it in the JSON Schema (a
# real validator accepts the example scenario and rejects bad parameters),
# and validate points at a bad parameter with FILE:LINE:COL. The kind's run
# on a real rxe device is tests/vm/plugin_rdma_device.sh.
source "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3

BUILD=$(cd "$(dirname "$RXERUN")" && pwd -P)
HERE=$(pwd -P)  # the source tree, as lib.sh entered it
command -v cmake >/dev/null || { echo "skip: cmake is not installed"; exit 77; }
pkg-config --exists libibverbs 2>/dev/null || { echo "skip: libibverbs-dev is not installed (the example needs it)"; exit 77; }
[ -f "$BUILD/cmake_install.cmake" ] || { echo "skip: $RXERUN is not in a CMake build directory to install from"; exit 77; }

# 1. The install.
expect_exit 0 "cmake --install of the build into a prefix" -- cmake --install "$BUILD" --prefix "$WORK/prefix"
RX="$WORK/prefix/bin/rxerun"
config=$(find "$WORK/prefix" -name rxerunConfig.cmake | head -1)
[ -x "$RX" ] && pass "the prefix has bin/rxerun" || fail "no bin/rxerun in the prefix"
[ -f "$WORK/prefix/include/rxerun/plugin.h" ] && pass "the prefix has include/rxerun/plugin.h" || fail "no plugin.h"
[ -n "$config" ] && pass "the prefix has the CMake package (${config#"$WORK/prefix/"})" || fail "no rxerunConfig.cmake"
leaks=$(grep -rlF -e "$HERE/" -e "$BUILD" "$WORK/prefix/include" "$(dirname "${config:-$WORK/prefix}")" 2>/dev/null)
[ -z "$leaks" ] && pass "the installed package names no path of the source tree or the build" \
  || fail "the installed package names the source tree or the build: $leaks"

# 2. The example, built out of tree against the prefix only.
cp -r examples/rdma_device "$WORK/ex"
rm -rf "$WORK/ex/build"
expect_exit 0 "configure the example against the prefix" -- cmake -S "$WORK/ex" -B "$WORK/ex/build" \
  -DCMAKE_PREFIX_PATH="$WORK/prefix" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
found=$(sed -n 's/^rxerun_DIR:PATH=//p' "$WORK/ex/build/CMakeCache.txt")
case "$found/" in
  "$WORK/prefix/"*) pass "find_package(rxerun) found the prefix's package" ;;
  *) fail "find_package(rxerun) found '$found', not the prefix's" ;;
esac
expect_exit 0 "build the example" -- cmake --build "$WORK/ex/build"
PLUGIN="$WORK/ex/build/librdma_device.so"
# (The symbols into a variable first: grep -q leaving early would SIGPIPE nm under pipefail.)
symbols=$(nm -D --defined-only "$PLUGIN" 2>/dev/null)
grep -qw rxerun_plugin <<<"$symbols" && pass "librdma_device.so exports rxerun_plugin" \
  || fail "librdma_device.so has no rxerun_plugin"
# No file of the example's build (cache, compile commands, makefiles, dependency
# files) names the source tree or the build it was installed from.
case "$WORK/" in
  "$HERE/"*) fail "the temporary directory $WORK is inside the source tree: cannot tell its paths apart" ;;
  *)
    leaks=$(grep -rlIF -e "$HERE/" -e "$BUILD" "$WORK/ex/build")
    [ -z "$leaks" ] && pass "the example's build uses no path of the source tree or the build" \
      || { fail "the example's build names the source tree or the build:"; grep -rnIF -e "$HERE/" -e "$BUILD" "$WORK/ex/build" | head -5; }
    ;;
esac

# 3. The installed rxerun and the plugin's kind.
expect_exit 0 "steps --plugin" -- "$RX" steps --plugin "$PLUGIN"
grep -q '^rdma_device  *Report an RDMA device' <<<"$out" && pass "steps lists rdma_device with its summary" \
  || fail "steps does not list rdma_device: $out"
expect_exit 0 "steps rdma_device --plugin" -- "$RX" steps rdma_device --plugin "$PLUGIN"
contains "$out" "dev                string         required" "the description has the required parameter dev"
contains "$out" "port               integer        default 1" "and port with its default"
contains "$out" "atomic_cap         atomic operations: NONE, HCA" "and the facts with their help"
contains "$out" "- rdma_device: {dev: rxe0}" "and the example"
contains "$out" "plugin: $PLUGIN" "and the plugin it comes from"
expect_exit 2 "without the plugin the kind is unknown" -- "$RX" steps rdma_device
contains "$err" "unknown step kind 'rdma_device'" "it says so"

# The example of `steps rdma_device`, as a scenario, is valid.
"$RX" steps rdma_device --plugin "$PLUGIN" | { echo "name: example"; echo "steps:"; awk '/^example:/ {on = 1; next} on && /^$/ {exit} on'; } >"$WORK/example.yaml"
expect_exit 0 "the kind's example is a valid scenario" -- "$RX" validate --plugin "$PLUGIN" "$WORK/example.yaml"

# 4. The JSON Schema with the plugin's kind, read by a real validator.
expect_exit 0 "schema --plugin" -- "$RX" schema --plugin "$PLUGIN"
cp "$WORK/out" "$WORK/schema.json"
contains "$out" '"title": "rdma_device"' "the schema has the kind"
"$RX" schema | grep -qF '"title": "rdma_device"' && fail "the schema without the plugin has rdma_device" \
  || pass "the schema without the plugin has no rdma_device"

cat >"$WORK/bad-port.yaml" <<'YEOF'
name: bad-port
steps:
  - veth: {name: vA, peer: vB}
  - rdma_device:
      dev: rxe0
      port: zero
YEOF
cat >"$WORK/bad-key.yaml" <<'YEOF'
name: bad-key
steps:
  - rdma_device: {dev: rxe0, colour: red}
YEOF
cat >"$WORK/port-zero.yaml" <<'YEOF'
name: port-zero
steps:
  - rdma_device: {dev: rxe0, port: 0}
YEOF
cat >"$WORK/no-dev.yaml" <<'YEOF'
name: no-dev
steps:
  - rdma_device: {port: 1}
YEOF
expect_exit 0 "the schema accepts rxe-attributes.yaml and the kind's example" -- $PY "$SRC/tests/tools/schema_check.py" \
  "$WORK/schema.json" valid "$WORK/ex/rxe-attributes.yaml" "$WORK/example.yaml"
for f in bad-port bad-key port-zero no-dev; do
  expect_exit 0 "the schema rejects $f.yaml" -- $PY "$SRC/tests/tools/schema_check.py" "$WORK/schema.json" invalid "$WORK/$f.yaml"
done

# 5. validate: a bad parameter of the plugin's kind at its line and column.
expect_exit 2 "validate: port: zero" -- "$RX" validate --plugin "$PLUGIN" "$WORK/bad-port.yaml"
contains "$out$err" "$WORK/bad-port.yaml:6:13: 'port' must be an integer, got 'zero'" "it points at the value"
expect_exit 2 "validate: an unknown parameter" -- "$RX" validate --plugin "$PLUGIN" "$WORK/bad-key.yaml"
contains "$out$err" "$WORK/bad-key.yaml:3:30: unknown parameter 'colour' for 'rdma_device'" "it points at the key"
expect_exit 2 "validate: port 0" -- "$RX" validate --plugin "$PLUGIN" "$WORK/port-zero.yaml"
contains "$out$err" "$WORK/port-zero.yaml:3:36: 'port' must be >= 1, got 0" "it points at the value, with the bound"
expect_exit 2 "validate: no dev" -- "$RX" validate --plugin "$PLUGIN" "$WORK/no-dev.yaml"
contains "$out$err" "$WORK/no-dev.yaml:3:5: missing required parameter 'dev' for 'rdma_device'" "it points at the step"

# The example scenario loads its plugin itself (plugins: relative to it).
expect_exit 0 "validate rxe-attributes.yaml (its own plugins:)" -- "$RX" validate "$WORK/ex/rxe-attributes.yaml"
contains "$out" "ok: scenario 'rxe-attributes'" "it is valid"
expect_exit 0 "plan rxe-attributes.yaml" -- "$RX" plan "$WORK/ex/rxe-attributes.yaml"
contains "$out" "attributes (rdma_device)" "the plan has the plugin's step"
# Elsewhere, without its build next to it, the plugins: entry is the error.
mkdir -p "$WORK/elsewhere"
cp "$WORK/ex/rxe-attributes.yaml" "$WORK/elsewhere/"
line=$(grep -n '^plugins:' "$WORK/elsewhere/rxe-attributes.yaml" | cut -d: -f1)
expect_exit 2 "validate rxe-attributes.yaml without its plugin" -- "$RX" validate "$WORK/elsewhere/rxe-attributes.yaml"
contains "$out$err" "rxe-attributes.yaml:$line:11: plugin $WORK/elsewhere/build/librdma_device.so" "it points at the plugins: entry"

# 6. The kind runs on the host: a device that is not there. Without an RDMA
# stack in the kernel libibverbs cannot list devices (an error); with one,
# the device is missing (a failure that names the devices that exist).
cat >"$WORK/missing.yaml" <<YEOF
name: plugin-missing
plugins: [$WORK/ex/build/librdma_device.so]
steps:
  - name: missing
    rdma_device: {dev: nosuch0}
YEOF
"$RX" run --host "$WORK/missing.yaml" >"$WORK/out" 2>&1
code=$?
out=$(cat "$WORK/out")
case "$code" in
  1) contains "$out" "no RDMA device nosuch0" "run on the host: a missing device fails (exit 1), named" ;;
  3) contains "$out" "libibverbs cannot list the RDMA devices" "run on the host without RDMA: an error (exit 3), said" ;;
  *) fail "run on the host: exit $code, wanted 1 or 3"; echo "$out" ;;
esac
contains "$out" "cleanup: nothing to undo" "the kind changes nothing"
finish
