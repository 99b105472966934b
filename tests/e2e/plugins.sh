# Plugins for real: the test plugins of tests/plugins/, built against the
# SDK's headers (BUILD/test-plugins/*.so), loaded with --plugin and with a
# scenario's `plugins:`.
# - refused, exit 2, before anything runs: a file that is not there, a shared
#   object that is no plugin, one built for another SDK version (both
#   versions named), a kind named like a built-in one, a kind another plugin
#   has; a missing plugin named in a scenario is a FILE:LINE:COL error;
# - a plugin kind lives like a built-in one: steps, validate (FILE:LINE:COL
#   for its parameters), schema, plan (shown, not run), run;
# - a plugin step that throws is that step's error, and cleanup still undoes
#   what the plugin's earlier step made;
# - after SIGKILL, `rxerun cleanup` loads the plugin the journal names and
#   undoes its change; with the plugin file gone, cleanup reports the change
#   as left behind (exit 4) with the plugin's path, then undoes it once the
#   file is back;
# - --plugin reaches every run of a suite.
source "$(dirname "$0")/lib.sh"
RXERUN=$(realpath "$RXERUN")  # the cleanups below run from another directory

PLUGINS="$(cd "$(dirname "$RXERUN")" && pwd)/test-plugins"
KINDS="$PLUGINS/test_kinds.so"
[ -f "$KINDS" ] || { fail "no test plugin at $KINDS (built with the tests)"; finish; }
mkdir -p "$WORK/lab/lib"
cp "$KINDS" "$WORK/lab/lib/kinds.so"

# Refusals.
expect_exit 2 "a plugin file that is not there" -- "$RXERUN" steps --plugin "$WORK/none.so"
contains "$err" "plugin $WORK/none.so: No such file or directory" "names the file and errno"
expect_exit 2 "a shared object that is no plugin" -- "$RXERUN" steps --plugin "$(ldd "$RXERUN" | awk '/libc\.so/ {print $3}')"
contains "$err" "not an rxerun plugin: it has no entry point rxerun_plugin" "says what is missing"
expect_exit 2 "a plugin built for another SDK version" -- "$RXERUN" steps --plugin "$PLUGINS/other_version.so"
contains "$err" "was built for rxerun SDK version 3; this rxerun has SDK version 2" "both versions named"
lacks "$err" "Aborted" "its registration never ran"
expect_exit 2 "a plugin kind named like a built-in one" -- "$RXERUN" steps --plugin "$PLUGINS/collision.so"
contains "$err" "step kind 'veth' is taken: rxerun has a built-in kind of that name" "the built-in named"
expect_exit 2 "two plugins with one kind" -- "$RXERUN" steps --plugin "$KINDS" --plugin "$WORK/lab/lib/kinds.so"
contains "$err" "step kind 'test_file' is taken: plugin $KINDS declares it too" "the other plugin named"
expect_exit 0 "one plugin by two paths is loaded once" -- "$RXERUN" steps --plugin "$KINDS" --plugin "$PLUGINS/../test-plugins/test_kinds.so"

# Like a built-in kind.
expect_exit 0 "steps lists the plugin's kinds" -- "$RXERUN" steps --plugin "$KINDS"
contains "$(grep "^test_file " <<<"$out")" "Create an empty file; cleanup removes it" "listed with its summary"
expect_exit 0 "steps describes one" -- "$RXERUN" steps test_file --plugin "$KINDS"
contains "$out" "plugin: $KINDS" "says which plugin it comes from"
expect_exit 0 "schema with the plugin" -- "$RXERUN" schema --plugin "$KINDS"
contains "$out" '"test_file"' "the schema has the plugin's kind"

cat >"$WORK/lab/make.yaml" <<YAML
name: plugin-make
plugins: [lib/kinds.so]
steps:
  - name: marker
    test_file: {path: $WORK/marker}
    expect: {inode: "> 0"}
  - name: hold
    test_wait: {duration: 60s}
YAML
cat >"$WORK/lab/bad.yaml" <<YAML
plugins: [lib/kinds.so]
steps:
  - test_file: {mode: many, path: $WORK/x}
YAML
cat >"$WORK/lab/gone.yaml" <<YAML
steps:
  - sleep: {duration: 1ms}
plugins:
  - lib/kinds.so
  - lib/gone.so
YAML
expect_exit 0 "validate: a scenario's own plugins, relative to it" -- "$RXERUN" validate "$WORK/lab/make.yaml"
expect_exit 2 "validate: a wrong parameter of a plugin kind" -- "$RXERUN" validate "$WORK/lab/bad.yaml"
contains "$err" "$WORK/lab/bad.yaml:3:23:" "FILE:LINE:COL of the value"
contains "$err" "'mode'" "names the parameter"
expect_exit 2 "validate: a plugin the scenario names is not there" -- "$RXERUN" validate "$WORK/lab/gone.yaml"
contains "$err" "$WORK/lab/gone.yaml:5:5: plugin $WORK/lab/lib/gone.so: No such file or directory" "FILE:LINE:COL of the path"
expect_exit 2 "run: the same, before anything runs" -- "$RXERUN" run --host "$WORK/lab/gone.yaml"
lacks "$out" "sleep" "no step ran"

expect_exit 0 "plan shows a plugin step and does not run it" -- "$RXERUN" plan "$WORK/lab/make.yaml"
contains "$out" "comes from a plugin, which acts by its own means: not previewed" "the plan says so"
[ ! -e "$WORK/marker" ] && pass "plan made nothing" || { fail "plan ran the plugin's step"; rm -f "$WORK/marker"; }

# A step that throws.
cat >"$WORK/lab/throw.yaml" <<YAML
name: plugin-throw
plugins: [lib/kinds.so]
steps:
  - test_file: {path: $WORK/thrown}
  - test_throw: {what: "the plugin gave up"}
YAML
expect_exit 3 "a plugin step that throws is that step's error" -- "$RXERUN" run --host "$WORK/lab/throw.yaml" --report json:"$WORK/throw.json"
contains "$out" "the plugin gave up" "its message is shown"
[ ! -e "$WORK/thrown" ] && pass "cleanup still removed what the plugin made" || fail "$WORK/thrown left behind"
contains "$(cat "$WORK/throw.json")" '"clean": true' "the report's cleanup is clean"

# SIGKILL, then `rxerun cleanup`, which loads the plugin the journal names.
kill_mid_run() {  # DESCRIPTION
  "$RXERUN" run --host "$WORK/lab/make.yaml" >"$WORK/killed.out" 2>&1 &
  local pid=$!
  for _ in $(seq 100); do grep -q "hold" "$WORK/killed.out" && break; sleep 0.1; done
  kill -9 "$pid"
  wait "$pid" 2>/dev/null
  [ -e "$WORK/marker" ] && pass "$1: the plugin's file exists after SIGKILL" || fail "$1: no marker after the kill"
}
kill_mid_run "first kill"
contains "$(cat "$RXERUN_STATE_DIR/plugin-make.journal")" "\"plugin\":\"$WORK/lab/lib/kinds.so\"" "the journal names the plugin"
cd "$WORK" || exit 1
expect_exit 0 "cleanup after SIGKILL loads the plugin and undoes" -- "$RXERUN" cleanup "$WORK/lab/make.yaml"
[ ! -e "$WORK/marker" ] && pass "the plugin's file is gone" || fail "the plugin's file is left"

kill_mid_run "second kill"
mv "$WORK/lab/lib/kinds.so" "$WORK/kinds.so.away"
expect_exit 4 "cleanup with the plugin file gone: residue, no crash" -- "$RXERUN" cleanup "$WORK/lab/make.yaml"
contains "$err" "$WORK/lab/make.yaml:2:11: warning: plugin $WORK/lab/lib/kinds.so: No such file or directory" "warns at the scenario's entry"
contains "$out" "comes from a plugin that could not be loaded: plugin $WORK/lab/lib/kinds.so: No such file or directory" "the undo names the plugin's path and why"
contains "$out" "left behind" "reported as left behind"
[ -e "$WORK/marker" ] && pass "the file stays (nothing could undo it)" || fail "the file went without its plugin?"
mv "$WORK/kinds.so.away" "$WORK/lab/lib/kinds.so"
expect_exit 0 "cleanup once the plugin is back" -- "$RXERUN" cleanup "$WORK/lab/make.yaml"
[ ! -e "$WORK/marker" ] && pass "then the file is gone" || fail "the file is still there"
[ ! -e "$RXERUN_STATE_DIR/plugin-make.journal" ] && pass "no journal left" || fail "a journal is left"
cd "$SRC" || exit 1

# --plugin in a suite: each run is a child rxerun of its own.
for n in one two; do
  cat >"$WORK/suite-$n.yaml" <<YAML
name: plugin-suite-$n
steps:
  - test_file: {path: $WORK/suite-$n}
YAML
done
expect_exit 0 "a suite with --plugin" -- "$RXERUN" run --host --plugin "$KINDS" "$WORK/suite-one.yaml" "$WORK/suite-two.yaml"
contains "$out" "plugin-suite-two" "both runs ran"
[ ! -e "$WORK/suite-one" ] && [ ! -e "$WORK/suite-two" ] && pass "both cleaned up" || fail "a suite run left its file"
finish
