# The manual page (docs/rxerun.1) is what `rxerun help --man` makes of the
# declarations now (a command, an option, an exit code or a kind changed
# without scripts/generate fails here); it renders without warnings, with
# groff and with man; it has every command, option and kind the binary
# has. README.md names the default lab kernels `vm setup --help` names.
source "$(dirname "$0")/lib.sh"

MAN=docs/rxerun.1
[ -r "$MAN" ] || { echo "FAIL: $MAN missing"; exit 1; }

expect_exit 0 "rxerun help --man" -- "$RXERUN" help --man
printf '%s\n' "$out" >"$WORK/generated.1"
if diff -u "$MAN" "$WORK/generated.1" >"$WORK/diff"; then
  pass "$MAN is current"
else
  fail "$MAN is stale; regenerate with: scripts/generate"
  head -40 "$WORK/diff"
fi
expect_exit 2 "help --man COMMAND is a usage error" -- "$RXERUN" help --man validate
contains "$err" "leave out COMMAND" "it says what to do"

if ! command -v groff >/dev/null; then
  echo "groff not installed (scripts/setup installs groff-base): cannot check that $MAN renders"
  exit 77
fi
expect_exit 0 "groff renders $MAN" -- groff -man -Tutf8 -ww -z "$MAN"
if [ -z "$out$err" ]; then pass "groff printed no warnings"; else
  fail "groff warnings:"; echo "$out$err"
fi
if command -v man >/dev/null; then
  MANWIDTH=100 man -l "$MAN" >"$WORK/man.txt" 2>"$WORK/man.err"
  [ -s "$WORK/man.txt" ] && pass "man -l renders $MAN" || fail "man -l $MAN printed nothing"
  [ -s "$WORK/man.err" ] && { fail "man -l $MAN warned:"; cat "$WORK/man.err"; } || pass "man -l printed no warnings"
fi

# The page as a reader sees it: escapes such as \- resolved.
text=$(groff -man -Tutf8 -P-cbou -rLL=200n "$MAN" 2>/dev/null | sed "s/\xe2\x80\x90/-/g; s/\xe2\x88\x92/-/g")
[ -n "$text" ] || fail "rendering $MAN produced nothing"

# Every command people see (`rxerun --help`, and vm's), with its own entry
# under COMMANDS, its options and its exit codes as its --help has them.
expect_exit 0 "rxerun --help" -- "$RXERUN" --help
commands=$(sed -n '/^Subcommands:/,/^$/p' <<<"$out" | awk 'NR > 1 && NF {print $1}')
for cmd in run validate plan graph cleanup steps schema decode vm help; do
  grep -qx -- "$cmd" <<<"$commands" && pass "--help lists $cmd" || fail "--help does not list $cmd"
done
expect_exit 0 "rxerun vm --help" -- "$RXERUN" vm --help
vm_commands=$(sed -n '/^Subcommands:/,/^$/p' <<<"$out" | awk 'NR > 1 && NF {print "vm " $1}')
[ "$(wc -l <<<"$vm_commands")" = 3 ] && pass "vm has three commands" || fail "vm's commands: $vm_commands"

section() {  # NAME: the rendered section NAME, up to the next one
  awk -v s="$1" '/^[A-Z][A-Z ]+$/ {on = ($0 == s)} on' <<<"$text"
}
commands_section=$(section COMMANDS)
entry() {  # CMD: the text of its entry under COMMANDS
  awk -v h="   rxerun $1" '/^   rxerun / {on = ($0 == h)} on' <<<"$commands_section"
}
while read -r cmd; do
  [ "$cmd" = vm ] && continue
  # shellcheck disable=SC2086
  help=$("$RXERUN" $cmd --help 2>&1)
  e=$(entry "$cmd")
  [ -n "$e" ] && pass "'rxerun $cmd' has an entry under COMMANDS" || { fail "no entry for 'rxerun $cmd' under COMMANDS"; continue; }
  contains "$(section SYNOPSIS)" "rxerun $cmd" "'rxerun $cmd' in SYNOPSIS"
  while read -r opt; do
    [ "$opt" = --help ] && continue
    grep -qE -- "(^|[ ,])$opt( |,|\$)" <<<"$e" && pass "$cmd $opt in its entry" || fail "$cmd $opt (from --help) is not in its entry"
  done < <(grep -oE -- '--[a-z][a-z0-9-]*' <<<"$help" | sort -u)
  # Its exit codes: those of its --help's footer, each a line of the entry.
  codes=$(grep -oE '(Exit codes:|;) [0-9]+ ' <<<"$(tr '\n' ' ' <<<"$help")" | grep -oE '[0-9]+')
  [ -n "$codes" ] || fail "$cmd --help names no exit codes"
  for code in $codes; do
    grep -qE "^ +$code( |\$)" <<<"$(awk '/Exit status:/ {on = 1} on' <<<"$e")" && pass "$cmd exit $code in its entry" ||
      fail "$cmd: exit code $code of its --help is not in its entry"
  done
done < <(printf '%s\n%s\n' "$commands" "$vm_commands")

# Every kind, with its summary, under STEP KINDS.
kinds_section=$(section "STEP KINDS")
expect_exit 0 "rxerun steps" -- "$RXERUN" steps
n=0
while read -r kind summary; do
  n=$((n + 1))
  grep -qE "^   $kind\$" <<<"$kinds_section" || fail "kind $kind has no subsection under STEP KINDS"
  contains "$(tr -s ' \n' ' ' <<<"$kinds_section")" "$summary" "kind $kind's summary under STEP KINDS"
done <<<"$out"
[ "$n" -ge 20 ] && pass "$n kinds checked" || fail "only $n kinds listed by rxerun steps"

for code in 0 1 2 3 4 130; do
  grep -qE "^ +$code( |\$)" <<<"$(section "EXIT STATUS")" && pass "exit status $code documented" || fail "exit status $code not under EXIT STATUS"
done
for var in NO_COLOR RXERUN_STATE_DIR RXERUN_CACHE_DIR XDG_RUNTIME_DIR; do
  contains "$(section ENVIRONMENT)" "$var" "environment variable $var documented"
done
lacks "$text" "checks the key and runs every scenario on the host" "the page does not say the lab VM is unused"

# The default kernels of `vm setup`: its --help and README.md say the same.
expect_exit 0 "vm setup --help" -- "$RXERUN" vm setup --help
defaults=$(grep -oE 'default: [0-9., ]+[0-9]' <<<"$(tr -s ' \n' ' ' <<<"$out")" | head -1)
[ -n "$defaults" ] && pass "vm setup --help names the default kernels ($defaults)" || fail "vm setup --help names no default kernels"
contains "$(grep -F 'rxerun vm setup' README.md)" "$defaults" "README.md's vm setup line names the same default kernels"
# Every whole scenario the pages show (a ```yaml block with `name:` and
# `steps:`) validates; one that includes a topology file is read beside
# scenarios/topology, as the shipped labs are.
mkdir -p "$WORK/doc-labs"
ln -s "$PWD/scenarios/topology" "$WORK/doc-labs/topology"
/usr/bin/python3 - "$WORK/doc-labs" docs/*.md README.md <<'PYEOF'
import os, re, sys
out = sys.argv[1]
for page in sys.argv[2:]:
    text = open(page).read()
    for m in re.finditer(r"```yaml\n(.*?)```", text, re.S):
        body = m.group(1)
        if re.search(r"^name:", body, re.M) and re.search(r"^steps:", body, re.M):
            line = text[: m.start()].count("\n") + 2
            open(os.path.join(out, f"{os.path.basename(page)}-{line}.yaml"), "w").write(body)
PYEOF
shown=0
for lab in "$WORK"/doc-labs/*.yaml; do
  shown=$((shown + 1))
  "$RXERUN" validate "$lab" >"$WORK/doc-lab.out" 2>&1 || { fail "the lab shown at $(basename "$lab" .yaml) does not validate:"; cat "$WORK/doc-lab.out"; }
done
[ "$shown" -ge 3 ] && pass "the $shown whole labs the pages show validate" || fail "only $shown labs found in the pages"
finish
