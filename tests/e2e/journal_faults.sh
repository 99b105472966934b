# The journal's defences, with the real binary: hostile state directories
# (a symbolic link, open to others, another user's, the /tmp fallback made
# by someone else), a lock and a journal that are symbolic links (refused,
# their targets untouched), damaged journals (bad lines listed, the journal
# kept aside, the good entries still undone on real veths in a throwaway
# namespace), entries an undo cannot read (residue with their text), a torn
# last line followed by a new run, and a journal write that meets a full
# file system (a real tmpfs): the change is not made.
# Without root only the first part runs, and the test ends as skipped.
source "$(dirname "$0")/lib.sh"

NS=rxj-e2e
FULL=$WORK/full
NOBODY_DIR=/tmp/rxerun-65534
made_nobody_dir=
cleanup_host() {
  mountpoint -q "$FULL" 2>/dev/null && umount "$FULL"
  ip netns del "$NS" 2>/dev/null
  ip netns del rxj-full 2>/dev/null
  [ -n "$made_nobody_dir" ] && rm -rf "$NOBODY_DIR"
  rm -rf "$WORK"
}
trap cleanup_host EXIT

cat >"$WORK/sleep.yaml" <<'EOF'
name: e2e-journal
steps:
  - sleep: {duration: 10ms}
EOF
run_with_state() {  # STATE_DIR EXPECTED-EXIT DESCRIPTION
  local dir=$1 want=$2 what=$3
  expect_exit "$want" "$what" -- env RXERUN_STATE_DIR="$dir" "$RXERUN" run "$WORK/sleep.yaml"
}
# A state directory taken: the run gets as far as its lock. (Without root a
# run may still stop at a preclean hook that needs root: not this test's.)
accepted() {  # STATE_DIR DESCRIPTION
  env RXERUN_STATE_DIR="$1" "$RXERUN" run "$WORK/sleep.yaml" >"$WORK/out" 2>"$WORK/err"
  lacks "$(cat "$WORK/out" "$WORK/err")" "state directory" "$2"
  [ -f "$1/e2e-journal.lock" ] && pass "$2: the lock is there" || fail "$2: no lock in $1: $(ls -A "$1")"
}

# ---- hostile state directories (any user) ----
mkdir -m 700 "$WORK/real"
ln -s "$WORK/real" "$WORK/link"
run_with_state "$WORK/link" 3 "a state directory that is a symbolic link is refused"
contains "$err" "rxerun: state directory $WORK/link is a symbolic link; remove it, or set RXERUN_STATE_DIR to a directory of your own" "the refusal says what to do"
expect_exit 3 "cleanup refuses it too" -- env RXERUN_STATE_DIR="$WORK/link" "$RXERUN" cleanup "$WORK/sleep.yaml"
run_with_state "$WORK/link/" 3 "with a trailing slash (which would follow the link) too"
[ -z "$(ls -A "$WORK/real")" ] && pass "nothing written through the link" || fail "written through the link: $(ls -A "$WORK/real")"

mkdir -m 755 "$WORK/open"
run_with_state "$WORK/open" 3 "a state directory open to others is refused"
contains "$err" "state directory $WORK/open has mode 0755, open to others (they could change what cleanup undoes); chmod 700 $WORK/open" "the refusal says chmod 700"
[ -z "$(ls -A "$WORK/open")" ] && pass "nothing written there" || fail "written: $(ls -A "$WORK/open")"
chmod 700 "$WORK/open"
accepted "$WORK/open" "after chmod 700 the run goes ahead"

run_with_state "$WORK/missing/state" 3 "a state directory whose parent is missing is refused"
contains "$err" "its parent directory does not exist (rxerun creates only the last component)" "the refusal names the missing parent"
[ -e "$WORK/missing" ] && fail "the parent was created" || pass "no parent created"

accepted "$WORK/new" "a missing state directory is created"
[ "$(stat -c %a "$WORK/new")" = 700 ] && pass "with mode 700" || fail "mode $(stat -c %a "$WORK/new")"

echo precious >"$WORK/target"
for file in e2e-journal.lock e2e-journal.journal; do
  mkdir -m 700 "$WORK/s-$file"
  ln -s "$WORK/target" "$WORK/s-$file/$file"
  run_with_state "$WORK/s-$file" 3 "$file as a symbolic link is refused"
  contains "$err" "$WORK/s-$file/$file is a symbolic link; remove it (rxerun never writes through one)" "$file: the refusal names the link"
  [ "$(cat "$WORK/target")" = precious ] && pass "$file: the link's target is untouched" || fail "$file: the target now holds: $(cat "$WORK/target")"
done
mkdir -m 700 "$WORK/s-fifo"
mkfifo "$WORK/s-fifo/e2e-journal.journal"
expect_exit 3 "a journal that is a FIFO is refused (and does not hang)" -- timeout 20 env RXERUN_STATE_DIR="$WORK/s-fifo" "$RXERUN" run "$WORK/sleep.yaml"
contains "$err" "e2e-journal.journal is not a regular file; remove it" "the refusal says so"

if [ "$(id -u)" -ne 0 ]; then
  [ "$failures" -gt 0 ] && finish
  echo "SKIPPED: the rest (another user's directories, real veths, a full tmpfs) needs root; CI runs it as root"
  exit 77
fi

# ---- another user's directories (root) ----
mkdir -m 700 "$WORK/theirs"
chown nobody "$WORK/theirs"
run_with_state "$WORK/theirs" 3 "a state directory of another user is refused, even for root"
contains "$err" "state directory $WORK/theirs belongs to uid 65534, not to uid 0 that runs rxerun" "the refusal names the owner"
[ -z "$(ls -A "$WORK/theirs")" ] && pass "nothing written there" || fail "written: $(ls -A "$WORK/theirs")"

# The /tmp fallback of a user without XDG_RUNTIME_DIR, made beforehand by
# someone else (root here), as a directory and as a link to one of the
# user's own.
chmod 755 "$WORK"
chmod 644 "$WORK/sleep.yaml"
as_nobody() { runuser -u nobody -- env -u RXERUN_STATE_DIR -u XDG_RUNTIME_DIR "$RXERUN" run "$WORK/sleep.yaml"; }
if ! runuser -u nobody -- test -x "$RXERUN"; then
  echo "note: nobody cannot run $RXERUN (its directory is private): the /tmp fallback is not tried"
elif [ -e "$NOBODY_DIR" ] || [ -L "$NOBODY_DIR" ]; then
  echo "note: $NOBODY_DIR exists already (not this test's): the /tmp fallback is not tried"
else
  made_nobody_dir=1
  mkdir -m 700 "$NOBODY_DIR"
  expect_exit 3 "the /tmp fallback made by another user is refused" -- as_nobody
  contains "$err" "state directory $NOBODY_DIR belongs to uid 0, not to uid 65534 that runs rxerun" "the refusal names the owner"
  [ -z "$(ls -A "$NOBODY_DIR")" ] && pass "nothing written there" || fail "written: $(ls -A "$NOBODY_DIR")"
  rmdir "$NOBODY_DIR"
  install -d -m 700 -o nobody "$WORK/nobodys"
  ln -s "$WORK/nobodys" "$NOBODY_DIR"
  expect_exit 3 "the /tmp fallback as a link (to a directory of the user's own) is refused" -- as_nobody
  contains "$err" "state directory $NOBODY_DIR is a symbolic link; remove it" "the refusal says remove it"
  [ -z "$(ls -A "$WORK/nobodys")" ] && pass "nothing written through the link" || fail "written: $(ls -A "$WORK/nobodys")"
  rm "$NOBODY_DIR"
  # (The run itself may then stop at a preclean hook that needs root: only
  # the state directory matters here.)
  as_nobody >"$WORK/out" 2>"$WORK/err"
  lacks "$(cat "$WORK/out" "$WORK/err")" "state directory" "without it, the user's run makes the fallback itself"
  [ "$(stat -c '%U %a' "$NOBODY_DIR")" = "nobody 700" ] && pass "owned by the user, mode 700" || fail "made as $(stat -c '%U %a' "$NOBODY_DIR")"
  [ -f "$NOBODY_DIR/e2e-journal.lock" ] && pass "with the lock in it" || fail "no lock in $NOBODY_DIR: $(ls -A "$NOBODY_DIR")"
  rm -rf "$NOBODY_DIR"
  made_nobody_dir=
fi
chmod 700 "$WORK"

# ---- damaged journals, on real veths in a throwaway namespace (root) ----
export RXERUN_STATE_DIR="$WORK/state"
VETH=tests/data/e2e/journal-veth.yaml
J=$RXERUN_STATE_DIR/e2e-journal-veth.journal
ip netns add "$NS" || { fail "cannot make namespace $NS"; finish; }
veths() { ip -n "$NS" -o link show 2>/dev/null | grep -oE 'vJ[ab](-p)?@' | tr -d @ | sort | tr '\n' ' '; }
aside() { ls "$RXERUN_STATE_DIR" | grep -c '\.damaged-'; }

expect_exit 0 "a kept lab of two veth pairs" -- "$RXERUN" run --keep "$VETH"
[ "$(veths)" = "vJa vJa-p vJb vJb-p " ] && pass "both pairs are up" || fail "veths: $(veths)"
# Line 1 is the boot, line 2 vJa's entry. Damage two lines after it and one at the end.
sed -i '2a\this is not JSON\n{"what":"a line type of some other program"}' "$J"
echo '["neither"]' >>"$J"
last=$(wc -l <"$J")
expect_exit 4 "cleanup of a damaged journal reports residue" -- "$RXERUN" cleanup "$VETH"
contains "$out" "journal lines 3, 4, $last" "the damaged lines are listed by number"
contains "$out" "journal line 3 (not JSON): this is not JSON" "with their text"
contains "$out" "the journal is kept as $J.damaged-" "and where the journal went"
[ -z "$(veths)" ] && pass "the good entries were undone: no veth left" || fail "veths left: $(veths)"
[ "$(aside)" = 1 ] && pass "the journal is kept aside" || fail "kept: $(ls "$RXERUN_STATE_DIR")"
kept=$(ls "$RXERUN_STATE_DIR"/*.damaged-* | head -1)
grep -q '^this is not JSON$' "$kept" && pass "the kept journal holds the damage" || fail "kept journal: $(cat "$kept")"
[ -e "$J" ] && fail "a journal is left in its place: $(cat "$J")" || pass "no journal left in its place"
expect_exit 0 "the next cleanup has nothing to do" -- "$RXERUN" cleanup "$VETH"
contains "$out" "nothing to undo" "and says so"
rm -f "$RXERUN_STATE_DIR"/*.damaged-*

# Entries an undo cannot read: residue with their text; the others undone.
expect_exit 0 "a kept lab again" -- "$RXERUN" run --keep "$VETH"
kept_lines=$(wc -l <"$J")
echo '{"do":7,"step":"hand","kind":"veth","netns":"rxj-e2e","summary":"delete veth by hand","args":{"peer":"x"}}' >>"$J"
echo '{"do":8,"step":"future","kind":"teleport","summary":"undo a teleport","args":{}}' >>"$J"
expect_exit 4 "cleanup with entries it cannot read exits 4" -- "$RXERUN" cleanup "$VETH"
contains "$out" "LEFT  delete veth by hand" "the unreadable entry is left"
contains "$out" "journal line $((kept_lines + 1)): {\"do\":7,\"step\":\"hand\",\"kind\":\"veth\"" "with its journal line"
contains "$out" "no undo for step kind 'teleport'" "the unknown kind is left"
contains "$out" "journal line $((kept_lines + 2)): {\"do\":8,\"step\":\"future\",\"kind\":\"teleport\"" "with its journal line"
[ -z "$(veths)" ] && pass "the readable entries were undone" || fail "veths left: $(veths)"
[ "$(aside)" = 0 ] && pass "nothing damaged, nothing kept aside" || fail "kept: $(ls "$RXERUN_STATE_DIR")"
expect_exit 4 "they stay residue until a person deals with them" -- "$RXERUN" cleanup "$VETH"
contains "$out" "cleanup: 0 undone, 2 left behind" "nothing is undone twice"
rm -f "$J"

# A torn last line (a crash in the middle of a write), then a new run.
expect_exit 0 "a kept lab, once more" -- "$RXERUN" run --keep "$VETH"
printf '{"do":3,"step":"x","kind":"veth","ar' >>"$J"
expect_exit 0 "a run after a torn last line passes" -- "$RXERUN" run --keep "$VETH" --report json:"$WORK/torn.json"
lacks "$out" "journal line" "a torn last line is not damage"
[ "$(/usr/bin/python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["preclean"]["undos"]))' "$WORK/torn.json")" = 2 ] \
  && pass "the preclean undid both kept pairs" || fail "preclean: $(cat "$WORK/torn.json")"
expect_exit 0 "every line of the journal reads back" -- /usr/bin/python3 -c '
import json, sys
for line in open(sys.argv[1]):
    json.loads(line)
' "$J"
expect_exit 0 "and cleanup after it is clean" -- "$RXERUN" cleanup "$VETH"
[ -z "$(veths)" ] && pass "no veth left" || fail "veths left: $(veths)"
[ "$(aside)" = 0 ] && pass "nothing kept aside" || fail "kept: $(ls "$RXERUN_STATE_DIR")"

# ---- a journal write on a full file system (root) ----
mkdir "$FULL"
mount -t tmpfs -o size=64k,mode=700 tmpfs "$FULL" || { fail "cannot mount a tmpfs"; finish; }
dd if=/dev/zero of="$FULL/fill" bs=4k 2>/dev/null
[ "$(df --output=avail "$FULL" | tail -1 | tr -d ' ')" = 0 ] && pass "the tmpfs is full" || fail "the tmpfs is not full: $(df "$FULL")"
expect_exit 3 "a change whose journal line cannot be written is not made" -- \
  env RXERUN_STATE_DIR="$FULL/state" "$RXERUN" run tests/data/e2e/journal-full.yaml
contains "$out" "cannot write journal $FULL/state/e2e-journal-full.journal: No space left on device" "the error says why"
ip netns list | grep -qw rxj-full && fail "the namespace was made" || pass "no namespace made"
[ -s "$FULL/state/e2e-journal-full.journal" ] && fail "a journal with content is left" || pass "no journal left"
umount "$FULL" && pass "the tmpfs is unmounted" || fail "cannot unmount $FULL"
finish
