# SIGHUP and SIGTERM at every step of the shipped host scenario, and its
# output read by `head -n K` for every K (the reader leaves, the pipe is
# closed): every run ends with the documented exit code and leaves the
# machine exactly as it was. The signals are delivered by strace at the K-th
# line rxerun writes to its output file, so each lands at a chosen step.
source "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || { echo "SKIPPED: needs root (CAP_NET_ADMIN); CI runs it as root"; exit 77; }
command -v strace >/dev/null || { echo "SKIPPED: strace is not installed (scripts/setup installs it)"; exit 77; }

S=scenarios/netns-faults.yaml
before=$(host_snapshot netns-faults rxf-)
"$RXERUN" run "$S" --report json:"$WORK/plain.json" >"$WORK/plain.out" 2>&1 || fail "the plain run failed"
lines=$(wc -l <"$WORK/plain.out")
steps=$(/usr/bin/python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["steps"]))' "$WORK/plain.json")

check_clean() {  # WHAT
  local now
  now=$(host_snapshot netns-faults rxf-)
  if [ "$now" != "$before" ]; then fail "$1: left behind:"; diff <(echo "$before") <(echo "$now"); return 1; fi
  ls "$RXERUN_STATE_DIR"/*.journal >/dev/null 2>&1 && { fail "$1: a journal was left"; return 1; }
  return 0
}

for sig in HUP TERM; do
  bad=0
  # Output line 1 is the header; line K+1 ends step K. A signal at line K+1 lands as step K+1 starts.
  for k in $(seq 1 "$steps"); do
    strace -f -qq -o /dev/null -P "$WORK/sig.out" -e trace=write -e inject=write:signal=SIG$sig:when="$k" \
      "$RXERUN" run "$S" --report json:"$WORK/sig.json" >"$WORK/sig.out" 2>&1
    code=$?
    if [ "$code" -ne 130 ]; then
      bad=$((bad + 1)); fail "SIG$sig at output line $k: exit $code, wanted 130"; cat "$WORK/sig.out"
    elif ! /usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["interrupted"], r' "$WORK/sig.json"; then
      bad=$((bad + 1)); fail "SIG$sig at output line $k: the report does not say interrupted"
    fi
    check_clean "SIG$sig at output line $k" || bad=$((bad + 1))
  done
  [ "$bad" -eq 0 ] && pass "SIG$sig at each of $steps steps: exit 130, report written, nothing left behind"
done

# The reader leaves after K lines: rxerun carries on to cleanup, writes its
# report, and exits as it would have (0).
bad=0
for k in $(seq 1 "$lines"); do
  rm -f "$WORK/pipe.json"
  "$RXERUN" run "$S" --report json:"$WORK/pipe.json" 2>&1 | head -n "$k" >/dev/null
  code=${PIPESTATUS[0]}
  [ "$code" -eq 0 ] || { bad=$((bad + 1)); fail "| head -n $k: exit $code, wanted 0"; }
  /usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["cleanup"]["clean"] and not r["interrupted"], r' \
    "$WORK/pipe.json" 2>/dev/null || { bad=$((bad + 1)); fail "| head -n $k: no complete report"; }
  check_clean "| head -n $k" || bad=$((bad + 1))
done
[ "$bad" -eq 0 ] && pass "output closed after each of $lines lines: exit 0, report written, nothing left behind"

# stdout and stderr closed from the start: the same run, the same exit code.
"$RXERUN" run "$S" --report json:"$WORK/closed.json" >&- 2>&-
code=$?
[ "$code" -eq 0 ] && pass "stdout and stderr closed: exit 0" || fail "stdout and stderr closed: exit $code"
[ -s "$WORK/closed.json" ] && pass "stdout and stderr closed: the report was written" || fail "no report with closed streams"
check_clean "closed streams" && pass "closed streams: nothing left behind"
finish
