# The man page (docs/rxerun.1): renders without warnings, and documents every
# command and every long option the binary's --help prints, so that it cannot
# silently go stale when the command line grows.
source "$(dirname "$0")/lib.sh"

MAN=docs/rxerun.1
[ -r "$MAN" ] || { echo "FAIL: $MAN missing"; exit 1; }
if ! command -v groff >/dev/null; then
  echo "groff not installed: cannot check that $MAN renders"
  exit 77
fi

expect_exit 0 "groff renders $MAN" -- groff -man -Tutf8 -ww -z "$MAN"
if [ -z "$out$err" ]; then pass "groff printed no warnings"; else
  fail "groff warnings:"; echo "$out$err"
fi

# The page as a reader sees it: escapes such as \- resolved.
text=$(groff -man -Tutf8 -P-cbou "$MAN" 2>/dev/null | sed "s/\xe2\x80\x90/-/g; s/\xe2\x88\x92/-/g")
[ -n "$text" ] || fail "rendering $MAN produced nothing"

expect_exit 0 "rxerun --help" -- "$RXERUN" --help
commands=$(sed -n '/^Subcommands:/,/^$/p' <<<"$out" | awk 'NR > 1 && NF {print $1}')
for cmd in run validate plan graph cleanup steps schema decode; do
  if grep -qx -- "$cmd" <<<"$commands"; then pass "--help lists $cmd"; else fail "--help does not list $cmd"; fi
done
[ -n "$commands" ] || fail "no commands found in rxerun --help"

# Each documented command has its own entry (COMMANDS lists them as tags).
for cmd in $commands; do
  if grep -qE "^ +$cmd( |\$)" <<<"$(sed -n '/^COMMANDS/,/^OPTIONS/p' <<<"$text")"; then
    pass "command $cmd documented under COMMANDS"
  else
    fail "command $cmd is not documented under COMMANDS in $MAN"
  fi
  contains "$(sed -n '/^SYNOPSIS/,/^DESCRIPTION/p' <<<"$text")" "rxerun $cmd" "command $cmd in SYNOPSIS"
done

# Every long option of the top level and of each command: described under
# OPTIONS (as an entry of its own), and named in the command's entry under
# COMMANDS.
options_section=$(sed -n '/^OPTIONS/,/^SCENARIO FILES/p' <<<"$text")
# command_entry CMD: the text of CMD's entry under COMMANDS.
command_entry() {
  sed -n '/^COMMANDS/,/^OPTIONS/p' <<<"$text" |
    awk -v cmd="$1" '/^       [a-z]/ {cur = $1} cur == cmd {print}'
}
for cmd in "" $commands; do
  # shellcheck disable=SC2086
  help=$("$RXERUN" $cmd --help 2>&1)
  entry=$( [ -n "$cmd" ] && command_entry "$cmd")
  while read -r opt; do
    [ "$opt" = "--help" ] && continue
    if grep -qE -- "^ +(-[a-z], )?$opt( |\$)" <<<"$options_section"; then
      pass "${cmd:-rxerun} $opt described under OPTIONS"
    else
      fail "${cmd:-rxerun} $opt (from --help) has no entry under OPTIONS in $MAN"
    fi
    if [ -n "$cmd" ]; then
      if grep -qE -- "(^|[^a-z-])$opt([^a-z-]|\$)" <<<"$entry"; then
        pass "$cmd $opt named in the entry of $cmd"
      else
        fail "$cmd $opt (from --help) is not named in the COMMANDS entry of $cmd in $MAN"
      fi
    fi
  done < <(grep -oE -- '--[a-z][a-z0-9-]*' <<<"$help" | sort -u)
done

# The documented exit codes.
for code in 0 1 2 3 4 130; do
  if grep -qE "^ +$code +[A-Z]" <<<"$(sed -n '/^EXIT STATUS/,/^ENVIRONMENT/p' <<<"$text")"; then
    pass "exit status $code documented"
  else
    fail "exit status $code not under EXIT STATUS"
  fi
done
for var in NO_COLOR RXERUN_STATE_DIR XDG_RUNTIME_DIR; do
  contains "$text" "$var" "environment variable $var documented"
done
finish
