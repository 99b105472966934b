# SIGINT, SIGTERM and SIGHUP stop the current step, run cleanup and exit 130; a
# second run of the same scenario meanwhile is locked out (exit 3).
source "$(dirname "$0")/lib.sh"

for sig in INT TERM HUP; do
  "$RXERUN" run tests/data/e2e/long-sleep.yaml --report json:"$WORK/sig.json" >"$WORK/sig.out" 2>&1 &
  pid=$!
  # Wait until the run holds its lock (it is then in the 1h step).
  for _ in $(seq 100); do [ -e "$RXERUN_STATE_DIR/e2e-long-sleep.lock" ] && break; sleep 0.05; done
  sleep 0.3
  expect_exit 3 "a second run of the same scenario is refused" -- "$RXERUN" run tests/data/e2e/long-sleep.yaml
  contains "$err" "another run of scenario 'e2e-long-sleep' is in progress (pid $pid)" "the refusal names the holder"
  start=$(date +%s%N)
  kill -$sig $pid
  wait $pid
  code=$?
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  [ "$code" -eq 130 ] && pass "SIG$sig exits 130" || { fail "SIG$sig: exit $code"; cat "$WORK/sig.out"; }
  echo "   (SIG$sig: run ended ${ms}ms after the signal; a 1h step that was not cut short would hang this test until CTest's timeout)"
  contains "$(cat "$WORK/sig.out")" "interrupted" "SIG$sig: the output says interrupted"
  statuses=$(/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(" ".join(s["status"] for s in r["steps"]), r["interrupted"])' "$WORK/sig.json")
  [ "$statuses" = "passed interrupted not-run True" ] && pass "SIG$sig: report says passed/interrupted/not-run" || fail "SIG$sig: report statuses: $statuses"
done
ls "$RXERUN_STATE_DIR"/*.journal >/dev/null 2>&1 && fail "a journal was left behind" || pass "no journal left behind"
finish
