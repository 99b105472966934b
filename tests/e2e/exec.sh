# exec with real programs: in a namespace of the run's, in one that does not
# exist, a timeout that stops the whole process tree, a gigabyte of output
# in bounded memory (and all of it in the output file), stdin, parse and
# extract, an undo run by `rxerun cleanup` after the run was SIGKILLed;
# background programs ready on each probe, waited for, reverted, stopped by
# cleanup, and after SIGKILL found by `rxerun cleanup` while a namesake
# survives.
source "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || { echo "skip: needs root (network namespaces)"; exit 77; }

name="e2e-exec-$$"
ns="rxe2e-exec-$$"
marker=$((400000 + $$))  # a sleep nobody else runs: sleep $marker

# Runs SCENARIO (whose last step sleeps an hour) in the background and
# SIGKILLs rxerun once it holds the scenario's lock and its quick first step
# is done.
run_then_kill() {  # FILE NAME
  "$RXERUN" run "$1" --host >"$WORK/killed.out" 2>&1 &
  local pid=$!
  for _ in $(seq 100); do [ -e "$RXERUN_STATE_DIR/$2.lock" ] && break; sleep 0.05; done
  sleep 0.5
  kill -KILL $pid
  wait $pid 2>/dev/null
}

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
run_then_kill "$WORK/undo.yaml" "$name-undo"
[ -e "$WORK/undone" ] && fail "the undo ran before cleanup" || pass "SIGKILL: the undo has not run yet"
expect_exit 0 "rxerun cleanup after SIGKILL" -- "$RXERUN" cleanup "$WORK/undo.yaml"
[ -e "$WORK/undone" ] && pass "rxerun cleanup ran the undo command" || fail "the undo command did not run"
expect_exit 0 "a second cleanup" -- "$RXERUN" cleanup "$WORK/undo.yaml"
contains "$out" "nothing" "finds nothing left"

# Background programs: each readiness probe, wait, revert, cleanup.
port=$((20000 + $$ % 20000))
cat >"$WORK/bg.yaml" <<EOF
name: $name-bg
steps:
  - netns: {name: $ns}
  - {link: {dev: lo, up: true}, netns: $ns}
  - name: server
    exec:
      argv: [python3, -c, "import socket; s=socket.socket(); s.bind(('127.0.0.1', $port)); s.listen(); c,_=s.accept(); print('got', c.recv(5).decode())"]
      background: true
      ready: {tcp: $port}
    netns: $ns
  - name: client
    exec: {argv: [python3, -c, "import socket; socket.create_connection(('127.0.0.1', $port)).send(b'hello')"]}
    netns: $ns
  - {wait: server, netns: $ns, expect: {exit: 0, stdout: "~ got hello"}}
  - name: udp
    exec: {argv: [python3, -c, "import socket,time; s=socket.socket(socket.AF_INET6, socket.SOCK_DGRAM); s.bind(('::', $port)); time.sleep(300)"], background: true, ready: {udp: $port}}
    netns: $ns
  - name: log
    exec: {shell: "sleep 0.2; echo up and READY; exec sleep $marker", background: true, ready: {log: "up and READY"}}
  - name: file
    exec: {shell: "sleep 0.2; touch $WORK/ready; exec sleep $marker", background: true, ready: {file: $WORK/ready}}
  - name: never
    exec: {argv: [sleep, "$marker"], background: true, ready: {exec: ["false"]}}
    timeout: 500ms
    expect: timeout
  - name: dies
    exec: {shell: "echo bye; exit 4", background: true, ready: {tcp: $port}}
    expect: {outcome: fail, exit: 4}
  - {revert: log, expect: {exit: SIGTERM, stdout: "~ READY"}}
EOF
expect_exit 0 "background programs: tcp, udp (IPv6), log, file, exec readiness, wait, revert" -- \
  "$RXERUN" run "$WORK/bg.yaml" --host --report json:"$WORK/bg.json"
messages=$(python3 -c 'import json,sys; print("\n".join(s["message"] for s in json.load(open(sys.argv[1]))["steps"]))' "$WORK/bg.json")
contains "$messages" "sleep was not ready within the step's timeout (stopped)" "a program that never gets ready is timeout"
contains "$messages" "the shell command ended before it was ready: exit 4: bye" "a program that ends before it is ready fails"
sleep 0.2
pgrep -f "sleep $marker" >/dev/null && fail "a background program outlived the run" || pass "cleanup stopped every background program"

# After SIGKILL: `rxerun cleanup` stops what the program left (here two
# sleeps its shell started: the shell itself died with rxerun), and nothing
# else: a sleep of the same name and arguments, started by someone else.
cat >"$WORK/bgkill.yaml" <<EOF
name: $name-bgkill
steps:
  - {name: bg, exec: {shell: "sleep $marker & sleep $marker; wait", background: true}}
  - {name: wait, sleep: {duration: 1h}}
EOF
sleep "$marker" &
namesake=$!
run_then_kill "$WORK/bgkill.yaml" "$name-bgkill"
sleep 0.2
mine=$(pgrep -f "sleep $marker" | grep -vx "$namesake" | wc -l)
[ "$mine" -eq 2 ] && pass "SIGKILL: the program's two children are still running" || fail "SIGKILL: $mine of its children running"
expect_exit 0 "rxerun cleanup after SIGKILL" -- "$RXERUN" cleanup "$WORK/bgkill.yaml"
sleep 0.2
mine=$(pgrep -f "sleep $marker" | grep -vx "$namesake" | wc -l)
[ "$mine" -eq 0 ] && pass "rxerun cleanup stopped them" || fail "rxerun cleanup left $mine running"
kill -0 "$namesake" 2>/dev/null && pass "the namesake started by someone else still runs" || fail "the namesake was signalled"
kill "$namesake"
wait "$namesake" 2>/dev/null
finish
