# exec with real programs: in a namespace of the run's, in one that does not
# exist, a timeout that stops the whole process tree, a gigabyte of output
# in bounded memory (and all of it in the output file), stdin, parse and
# extract, and an undo run by `rxerun cleanup` after the run was SIGKILLed.
source "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || { echo "skip: needs root (network namespaces)"; exit 77; }

name="e2e-exec-$$"
ns="rxe2e-exec-$$"
marker=$((400000 + $$))  # a sleep nobody else runs: sleep $marker

cat >"$WORK/lab.yaml" <<EOF
name: $name
steps:
  - netns: {name: $ns}
  - name: inside
    exec: {shell: "ip -o link show | wc -l; readlink /proc/self/ns/net", extract: {links: "^([0-9]+)"}}
    netns: $ns
    expect: {links: 1}
  - name: tree
    exec: {shell: "sleep $marker & sleep $marker & echo started; wait"}
    timeout: 1s
    expect: {outcome: timeout, stdout: "~ started"}
  - name: gigabyte
    exec: {shell: "head -c 1G /dev/zero; echo; echo END", output: big}
    expect: {stdout: "~ END\\\\n\$", exit: 0}
  - name: input
    exec: {argv: [wc, -c], stdin: "$(head -c 100000 /dev/zero | tr '\0' x)", extract: {count: "([0-9]+)"}}
    expect: {count: 100000}
  - name: json
    exec: {argv: [python3, -c, "import json; print(json.dumps({'jobs': [{'write': {'bw': 7}}]}))"], parse: json}
    expect: {jobs.0.write.bw: 7}
EOF
host_ns=$(readlink /proc/self/ns/net)
(ulimit -v 400000; /usr/bin/time -f "%M" -o "$WORK/rss" "$RXERUN" run "$WORK/lab.yaml" --host --output-dir "$WORK" \
  --report json:"$WORK/r.json" >"$WORK/out" 2>&1)
code=$?
[ "$code" -eq 0 ] && pass "the lab passes (exit 0)" || { fail "the lab: exit $code"; cat "$WORK/out"; }
inside=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["steps"][1]["facts"]["stdout"].split()[1])' "$WORK/r.json")
[ -n "$inside" ] && [ "$inside" != "$host_ns" ] && pass "the program ran in the step's namespace ($inside, not $host_ns)" ||
  fail "namespace: $inside (host: $host_ns)"
sleep 0.2
if pgrep -f "sleep $marker" >/dev/null; then fail "a process of the stopped tree is still running"; pkill -f "sleep $marker"; else
  pass "the timeout stopped the whole process tree"; fi
rss=$(tail -n 1 "$WORK/rss")
[ "$rss" -lt 100000 ] && pass "a gigabyte of output in ${rss} KB of memory (under a 400 MB address-space limit)" ||
  fail "maximum RSS $rss KB for a gigabyte of output"
size=$(stat -c %s "$WORK/big.stdout" 2>/dev/null || echo 0)
[ "$size" -eq $((1024 * 1024 * 1024 + 5)) ] && pass "big.stdout holds all of it ($size bytes)" || fail "big.stdout: $size bytes"
ip netns list | grep -qF "$ns" && fail "namespace $ns left behind" || pass "cleanup removed the namespace"

# A namespace that does not exist: the step's error, exit 3.
cat >"$WORK/nons.yaml" <<EOF
name: $name-nons
steps:
  - {name: e, exec: {argv: ["true"]}, netns: rxe2e-no-such-ns}
EOF
expect_exit 3 "exec in a namespace that does not exist" -- "$RXERUN" run "$WORK/nons.yaml" --host
contains "$out" "rxe2e-no-such-ns" "the error names the namespace"

# A program that is not installed: the step's error, exit 3.
printf 'name: %s-missing\nsteps:\n  - {name: e, exec: {argv: [rxerun-no-such-program]}}\n' "$name" >"$WORK/missing.yaml"
expect_exit 3 "a program that is not installed" -- "$RXERUN" run "$WORK/missing.yaml" --host
contains "$out" "not installed" "the error says so"

# The undo after SIGKILL: `rxerun cleanup` runs it from the journal.
cat >"$WORK/undo.yaml" <<EOF
name: $name-undo
steps:
  - {name: e, exec: {argv: ["true"], undo: [touch, "$WORK/undone"]}}
  - {name: wait, sleep: {duration: 1h}}
EOF
"$RXERUN" run "$WORK/undo.yaml" --host >"$WORK/undo.out" 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q "running wait\|wait " "$WORK/undo.out" 2>/dev/null && break; sleep 0.05; done
sleep 0.3
kill -KILL $pid
wait $pid 2>/dev/null
[ -e "$WORK/undone" ] && fail "the undo ran before cleanup" || pass "SIGKILL: the undo has not run yet"
expect_exit 0 "rxerun cleanup after SIGKILL" -- "$RXERUN" cleanup "$WORK/undo.yaml"
[ -e "$WORK/undone" ] && pass "rxerun cleanup ran the undo command" || fail "the undo command did not run"
expect_exit 0 "a second cleanup" -- "$RXERUN" cleanup "$WORK/undo.yaml"
contains "$out" "nothing" "finds nothing left"
finish
