# The report page (--report html:PAGE and `rxerun report`) from real runs on
# this machine, checked in headless Chromium against the JSON report of the
# same run (tests/tools/page_check.py): no console error, nothing fetched,
# one hook per step, expectation (with the report's verdict), run and
# captured frame. A passing run with an expected failure; a failing run
# whose output holds markup and bytes that are not UTF-8 (shown as text);
# with root, a capture lab whose pcaps become ladders (also with scripts
# off, and printed to PDF), and a capture that is gone. `rxerun report` draws the page of a run byte for byte as the run
# did, reads a report of version 1, and refuses what is not a report.
# Screenshots are kept in BUILD/screenshots/.
source "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
CHECK=tests/tools/page_check.py

if ! command -v chromium >/dev/null; then
  echo "chromium not installed (scripts/setup): cannot load the pages in a browser"
  exit 77
fi
SHOTS="$(dirname "$RXERUN")/screenshots"
mkdir -p "$SHOTS" || exit 1
rm -f "$SHOTS"/report_page-*.png

# page NAME WANT_EXIT ARGS...: runs the checker on $WORK/NAME.html against
# $WORK/NAME.json, with a screenshot.
page() {
  local name=$1 want=$2
  shift 2
  expect_exit "$want" "$name: the page as Chromium shows it" -- $PY $CHECK "$WORK/$name.html" "$WORK/$name.json" \
    --screenshot "$SHOTS/report_page-$name.png" "$@"
  echo "$out" | sed 's/^/    /'
}

# A passing run: an expected timeout, a skipped step.
expect_exit 0 "selftest with a page and a JSON report" -- "$RXERUN" run scenarios/selftest.yaml --skip slow \
  --report html:"$WORK/self.html" --report json:"$WORK/self.json"
page self 0 --expect-open
contains "$(cat "$WORK/self.html")" "timeout as expected" "the expected timeout is said on its bar"

# The checker can fail: a report that does not match the page.
$PY -c '
import json, sys
r = json.load(open(sys.argv[1])); r["steps"][0]["expectations"][0]["verdict"] = "fail"
json.dump(r, open(sys.argv[2], "w"))' "$WORK/self.json" "$WORK/self-wrong.json"
cp "$WORK/self.html" "$WORK/self-wrong.html"
expect_exit 1 "the checker finds a verdict the page does not show" -- $PY $CHECK "$WORK/self-wrong.html" \
  "$WORK/self-wrong.json"
contains "$out" "FAIL: data-verdict as the report's" "it says which"

# `rxerun report` draws the same page from the JSON report.
expect_exit 0 "rxerun report RUN.json -o PAGE" -- "$RXERUN" report "$WORK/self.json" -o "$WORK/again.html"
cmp -s "$WORK/self.html" "$WORK/again.html" && pass "the page from the report is the run's, byte for byte" \
  || fail "the page from the report differs from the run's: $(diff "$WORK/self.html" "$WORK/again.html" | head -5)"
expect_exit 0 "rxerun report RUN.json (stdout)" -- "$RXERUN" report "$WORK/self.json"
[ "$out" = "$(cat "$WORK/self.html")" ] && pass "on stdout without -o" || fail "stdout differs from -o's page"

# A suite on this machine: the matrix (column host), a run that passed
# closed, the one that failed open at its failing step.
expect_exit 1 "a suite with a page" -- "$RXERUN" run scenarios/selftest.yaml tests/data/e2e/expect-fail.yaml \
  --skip slow --report html:"$WORK/suite.html" --report json:"$WORK/suite.json"
page suite 0 --expect-open passes
contains "$(cat "$WORK/suite.html")" "suite: 2 runs: 1 passed, 1 failed (exit 1)" "the title counts the verdicts"

# A report of version 1 (before steps had starts, parameters and expectations).
$PY -c '
import json, sys
r = json.load(open(sys.argv[1])); r["report_version"] = 1; r.pop("picture")
for s in r["steps"]:
    for k in ("started_s", "params", "expectations"): s.pop(k, None)
json.dump(r, open(sys.argv[2], "w"))' "$WORK/self.json" "$WORK/v1.json"
expect_exit 0 "rxerun report renders a version 1 report" -- "$RXERUN" report "$WORK/v1.json" -o "$WORK/v1.html"
contains "$(cat "$WORK/v1.html")" "version 1: written before" "the page says what it lacks"
page v1 0

# What is not a report: exit 2, nothing written.
echo '{"steps": 3}' >"$WORK/bad.json"
expect_exit 2 "a JSON file that is not a report" -- "$RXERUN" report "$WORK/bad.json" -o "$WORK/bad.html"
contains "$err" "bad.json" "the error names the file"
[ ! -e "$WORK/bad.html" ] && pass "no page written" || fail "a page was written for a bad report"
echo 'not json' >"$WORK/text.json"
expect_exit 2 "a file that is not JSON" -- "$RXERUN" report "$WORK/text.json"
expect_exit 2 "a report that is not there" -- "$RXERUN" report "$WORK/none.json"

# A failing run whose output holds markup, quotes and bytes that are not
# UTF-8: text on the page, never markup; the failing step open.
expect_exit 1 "a failing run with hostile output" -- "$RXERUN" run tests/data/e2e/hostile-page.yaml \
  --report html:"$WORK/hostile.html" --report json:"$WORK/hostile.json"
page hostile 0 --expect-open fails
expect_exit 0 "hostile text is text" -- env TMPDIR="$WORK" $PY tests/tools/browser_check.py "$WORK/hostile.html" \
  --strict --count script --count img --text b --text 'section.run p' --text 'details[data-step=prints-markup] pre'
$PY -c '
import json, sys
d = json.loads(sys.argv[1])
assert d["counts"]["script"] == 1, d["counts"]  # the page own script; no other
assert d["counts"]["img"] == 0, d["counts"]
assert "not bold" not in d["texts"]["b"], d["texts"]["b"]
assert any("<script>alert(\x27description\x27)</script>" in t for t in d["texts"]["section.run p"]), d["texts"]
pre = " ".join(d["texts"]["details[data-step=prints-markup] pre"])
assert "<script>alert(1)</script>\\xff\\xfe \"<img src=x onerror=alert(2)>" in pre, pre
' "$out" && pass "markup shows as text, the odd bytes as \\xff\\xfe; no element comes of it" \
  || fail "hostile text became markup or was lost: $out"

# Captures: root only (namespaces, a veth, libpcap).
if [ "$(id -u)" -eq 0 ]; then
  mkdir -p "$WORK/captures"
  expect_exit 0 "a capture lab with a page" -- "$RXERUN" run tests/data/e2e/capture-ping.yaml --output-dir \
    "$WORK/captures" --report html:"$WORK/cap.html" --report json:"$WORK/cap.json"
  page cap 0
  contains "$out" "data-packet per frame of icmp.pcap" "the ICMP capture's frames are on its ladder"
  # Without scripts everything but the interactive parts shows: the same
  # hooks, every frame of the ladder; and the page prints (to PDF).
  cp "$WORK/cap.html" "$WORK/cap-noscript.html"
  cp "$WORK/cap.json" "$WORK/cap-noscript.json"
  page cap-noscript 0 --no-scripts --capture-dir "$WORK/captures"
  contains "$out" "data-packet per frame of icmp.pcap" "without scripts too"
  expect_exit 0 "the page prints" -- env TMPDIR="$WORK" $PY tests/tools/browser_check.py "$WORK/cap.html" --strict \
    --pdf "$WORK/cap.pdf"
  [ "$(head -c 5 "$WORK/cap.pdf")" = "%PDF-" ] && [ "$(stat -c %s "$WORK/cap.pdf")" -gt 20000 ] \
    && pass "a PDF of $(stat -c %s "$WORK/cap.pdf") bytes" || fail "no PDF of the page"
  # Its pcap gone, `rxerun report` still draws the page, with a note.
  rm "$WORK/captures/icmp.pcap"
  expect_exit 0 "rxerun report after a capture is gone" -- "$RXERUN" report "$WORK/cap.json" -o "$WORK/gone.html"
  contains "$(cat "$WORK/gone.html")" "icmp.pcap is not there any more" "a note instead of the ladder"
  cp "$WORK/cap.json" "$WORK/gone.json"
  page gone 0
else
  echo "skipped: the capture pages need root (CAP_NET_ADMIN); CI runs them as root"
fi
finish
