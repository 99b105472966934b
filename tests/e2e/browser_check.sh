# tests/tools/browser_check.py, the checker the report page's tests load
# the page with, can fail: on the pages of tests/data/html/ it finds a
# console error, an exception on load, one only a click reaches, requests to
# the network (without hanging on them) and what shows only without
# scripts; a clean page passes --strict with its counts, attributes, the
# effect of a real click, a full-page PNG and a PDF. Bad usage, a browser
# that dies at once and a page that never loads end with exit 2; SIGTERM and
# Ctrl-C stop it. After every run no Chromium process and no temporary
# directory is left. No root needed.
source "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
CHECK=tests/tools/browser_check.py
PAGES=tests/data/html

if ! command -v chromium >/dev/null; then
  echo "chromium not installed (scripts/setup): cannot load the pages in a browser"
  exit 77
fi
if ! command -v pgrep >/dev/null; then
  echo "pgrep not installed (procps): cannot check that no Chromium process is left"
  exit 77
fi

# The checker's temporary directories go under $TMP: empty after each run.
# Screenshots are kept beside the binary, in BUILD/screenshots/, for a person
# to look at.
TMP="$WORK/tmp"
SHOTS="$(dirname "$RXERUN")/screenshots"
mkdir -p "$TMP" "$SHOTS" || exit 1
rm -f "$SHOTS"/browser_check-*.png

# nothing_left NAME: no process whose command line names $TMP (every
# Chromium process carries its profile's path), nothing in $TMP.
nothing_left() {
  local procs files
  procs=$(pgrep -af -- "$TMP")
  files=$(find "$TMP" -mindepth 1 -maxdepth 1)
  [ -z "$procs" ] || fail "$1: Chromium processes left: $procs"
  [ -z "$files" ] || fail "$1: temporary files left: $files"
  [ -z "$procs$files" ] && pass "$1: no process, no temporary directory left"
}

# check NAME WANT_EXIT ARGS...: runs the checker (its JSON kept in
# $WORK/NAME.json), then nothing_left.
check() {
  local name=$1 want=$2
  shift 2
  expect_exit "$want" "$name" -- env TMPDIR="$TMP" "$PY" "$CHECK" "$@"
  printf '%s\n' "$out" >"$WORK/$name.json"
  nothing_left "$name"
}

# field NAME EXPR: EXPR (Python, over the report `d`) as JSON.
field() {
  "$PY" -c 'import json, sys; d = json.load(open(sys.argv[1])); print(json.dumps(eval(sys.argv[2])))' \
    "$WORK/$1.json" "$2" 2>&1
}

# is NAME EXPR WANT DESCRIPTION: field NAME EXPR is the JSON WANT.
is() {
  local got
  got=$(field "$1" "$2")
  if [ "$got" = "$3" ]; then pass "$1: $4"; else fail "$1: $4: $2 is $got, wanted $3"; fi
}

# png_size PNG: "WIDTH HEIGHT" from its IHDR.
png_size() {
  "$PY" -c 'import struct,sys; d=open(sys.argv[1],"rb").read(24); assert d[:8]==b"\x89PNG\r\n\x1a\n"; print(*struct.unpack(">II", d[16:24]))' "$1" 2>&1
}

# --- A clean page: counts, attributes, a real click's effect, no findings.
check clean 0 "$PAGES/clean.html" --count '[data-x]' --attr '[data-x]' data-x --text '#status' \
  --text '#veiled' --click '#toggle' --click '#covered' --screenshot "$SHOTS/browser_check-clean.png" --pdf "$WORK/clean.pdf" --strict
if [ -z "$err" ]; then pass "clean: nothing on stderr"; else fail "clean: stderr: $err"; fi
is clean 'd["title"]' '"Clean page"' "the title"
is clean 'd["counts"]["[data-x]"]' 3 "three data-x elements"
is clean 'd["attrs"]["[data-x]"]["data-x"]' '["ns", "link", "rdma"]' "their data-x values"
is clean 'd["clicks"]' '[{"selector": "#toggle", "method": "mouse"}, {"selector": "#covered", "method": "element.click()"}]' \
  "a mouse click on the button, click() on the one the mouse cannot reach"
is clean '[d["texts"]["#status"], d["texts"]["#veiled"]]' '[["shown"], ["clicked"]]' "the click handlers changed the texts"
is clean '[d["console"], d["exceptions"], d["blocked_requests"]]' '[[], [], []]' "no console message, exception or request"
is clean 'd["url"].startswith("file:///") and d["url"].endswith("/tests/data/html/clean.html")' true "the file:// URL"
size=$(png_size "$SHOTS/browser_check-clean.png")
read -r w h <<<"$size"
if [ "${w:-0}" -eq 1280 ] && [ "${h:-0}" -gt 1500 ] && [ "$h" -le 16000 ]; then
  pass "clean: the screenshot is a ${w}x${h} PNG (the whole page, taller than the window)"
else
  fail "clean: the screenshot's size is '$size', wanted 1280 wide and 1500 to 16000 high"
fi
is clean 'd["screenshot"]' "{\"file\": \"$SHOTS/browser_check-clean.png\", \"width\": $w, \"height\": $h}" "the report names the screenshot"
if [ "$(head -c 5 "$WORK/clean.pdf")" = "%PDF-" ]; then pass "clean: the page prints to a PDF"; else
  fail "clean: $WORK/clean.pdf is not a PDF"
fi

# The same page unclicked, narrower, with a click on nothing: the text is
# the page's own, and the missed click is the only finding.
check unclicked 1 "$PAGES/clean.html" --text '#status' --click '#absent' --width 800 \
  --screenshot "$SHOTS/browser_check-narrow.png" --strict
is unclicked 'd["texts"]["#status"]' '["hidden"]' "without the click the text is the page's own"
is unclicked 'd["clicks"]' '[{"selector": "#absent", "method": null, "error": "no element matches"}]' \
  "a click on nothing is reported"
is unclicked '[d["console"], d["exceptions"], d["blocked_requests"]]' '[[], [], []]' "nothing else found"
size=$(png_size "$SHOTS/browser_check-narrow.png")
if [ "${size%% *}" = 800 ]; then pass "unclicked: --width 800 gives an 800 pixel wide PNG"; else
  fail "unclicked: the PNG's size is '$size'"
fi

# --- console.error: reported; exit 1 only with --strict.
check console_error 0 "$PAGES/console_error.html"
is console_error '[(m["level"], m["text"], m["source"]) for m in d["console"]]' \
  '[["error", "report data missing: 42", "console"]]' "the console error"
check console_error_strict 1 "$PAGES/console_error.html" --strict

# --- An uncaught exception while loading.
check throws_on_load 1 "$PAGES/throws_on_load.html" --strict
is throws_on_load '[("undefinedRenderer is not defined" in e["text"], e["line"]) for e in d["exceptions"]]' \
  '[[true, 6]]' "the ReferenceError and its line"

# --- An exception only a click reaches.
check throws_unclicked 0 "$PAGES/throws_on_click.html" --strict
is throws_unclicked 'd["exceptions"]' '[]' "no exception without the click"
check throws_on_click 1 "$PAGES/throws_on_click.html" --click '#expand' --strict
is throws_on_click '[("expand: no such step" in e["text"]) for e in d["exceptions"]]' '[true]' "the click's exception"
is throws_on_click '[c["method"] for c in d["clicks"]]' '["mouse"]' "clicked with the mouse"

# --- Requests to the network: failed at once, recorded; data: URLs are not requests.
check fetches 1 "$PAGES/fetches.html" --count img --strict
is fetches 'sorted(d["blocked_requests"])' '["http://example.com/x.css", "https://example.com/a.png"]' \
  "the stylesheet and the image are blocked and recorded"
is fetches 'd["counts"]["img"]' 2 "the page was still checked"

# --- What shows without scripts.
check noscript 0 "$PAGES/noscript.html" --no-scripts --count 'p.fallback' --text '#app' --strict
is noscript '[d["counts"]["p.fallback"], d["texts"]["#app"]]' '[1, [""]]' "the <noscript> block shows, the script did not run"
check scripted 0 "$PAGES/noscript.html" --count 'p.fallback' --text '#app' --strict
is scripted '[d["counts"]["p.fallback"], d["texts"]["#app"]]' '[0, ["interactive view"]]' "with scripts: the script's text, no fallback"

# --- Exit 2: bad usage, a browser that dies, a page that never loads.
check missing_page 2 "$WORK/absent.html"
contains "$err" "not a readable file" "missing_page: says why"
check bad_selector 2 "$PAGES/clean.html" --count '[['
contains "$err" "not a valid selector" "bad_selector: says why"
check no_browser 2 "$PAGES/clean.html" --chromium "$WORK/absent-chromium"
check dead_browser 2 "$PAGES/clean.html" --chromium /bin/false
contains "$err" "closed its DevTools pipe" "dead_browser: says why"
printf '<!doctype html><title>hang</title><script>for (;;) {}</script>\n' >"$WORK/hang.html"
check hang 2 "$WORK/hang.html" --timeout 5
contains "$err" "no answer within --timeout 5 s" "hang: says why"

# --- SIGTERM and Ctrl-C while the page hangs: 128+N, everything gone.
# stop_case NAME SIGNAL WANT_EXIT
stop_case() {
  local name=$1 sig=$2 want=$3 pid got i
  # A background job starts with SIGINT ignored: restore it, as a terminal's Ctrl-C finds it.
  env TMPDIR="$TMP" "$PY" -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])' \
    "$PY" "$CHECK" "$WORK/hang.html" --timeout 60 >"$WORK/$name.out" 2>&1 &
  pid=$!
  for ((i = 0; i < 300; i++)); do  # until the page's renderer runs (30 s at most)
    pgrep -f -- "--type=renderer.*$TMP" >/dev/null && break
    sleep 0.1
  done
  kill -s "$sig" "$pid"
  wait "$pid"
  got=$?
  if [ "$got" -eq "$want" ]; then pass "$name: SIG$sig ends it with $got"; else
    fail "$name: SIG$sig: exit $got, wanted $want: $(cat "$WORK/$name.out")"
  fi
  nothing_left "$name"
}
stop_case sigterm TERM 143
stop_case sigint INT 130

finish
