# The documentation (README.md and docs/*.md) stays whole and self-contained:
# every relative link leads to a file of the repository (and a #section to a
# heading that exists), no path of a particular machine shows in it, it
# cites nothing outside the repository and no issue numbers, and the README
# stays a short front door that names every command. No root needed.
source "$(dirname "$0")/lib.sh"

PY=$(command -v python3) || { echo "python3 not installed: cannot check the documentation's links"; exit 77; }

docs=(README.md docs/*.md)
[ -r README.md ] || fail "README.md missing"

# (a) Relative links: the file exists inside the repository; an anchor names
# a heading of the file it points to (GitHub's slugs).
cat >"$WORK/links.py" <<'PYEOF'
import os, re, sys

root = os.path.realpath(".")
fence = re.compile(r"^\s*(```|~~~)")
inline = re.compile(r"(?<!!)\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
image = re.compile(r"!\[[^\]]*\]\(\s*<?([^)\s>]+)>?")
reference = re.compile(r"^\s*\[[^\]]+\]:\s*<?(\S+?)>?(\s|$)")
heading = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")

def prose_lines(path):
    """The lines outside fenced code blocks, with inline code blanked."""
    in_fence = False
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if fence.match(line):
                in_fence = not in_fence
                continue
            if not in_fence:
                yield n, re.sub(r"`[^`]*`", "``", line)

def slugs(path):
    seen, out = {}, set()
    in_fence = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if fence.match(line):
                in_fence = not in_fence
                continue
            m = None if in_fence else heading.match(line)
            if not m:
                continue
            text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", m.group(2))
            slug = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            out.add(slug if count == 0 else f"{slug}-{count}")
    return out

bad = checked = 0
for doc in sys.argv[1:]:
    base = os.path.dirname(doc)
    for n, line in prose_lines(doc):
        targets = inline.findall(line) + image.findall(line)
        m = reference.match(line)
        if m:
            targets.append(m.group(1))
        for target in targets:
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
                continue  # http:, https:, mailto:
            checked += 1
            path, _, anchor = target.partition("#")
            full = os.path.realpath(os.path.join(base, path)) if path else os.path.realpath(doc)
            where = f"{doc}:{n}: link '{target}'"
            if not (full == root or full.startswith(root + os.sep)):
                print(f"{where} leaves the repository"); bad += 1
            elif not os.path.exists(full):
                print(f"{where}: no such file {os.path.relpath(full, root)}"); bad += 1
            elif anchor and full.endswith(".md") and anchor not in slugs(full):
                print(f"{where}: no heading '#{anchor}' in {os.path.relpath(full, root)}"); bad += 1
print(f"{checked} relative links checked")
sys.exit(1 if bad else 0)
PYEOF
if report=$("$PY" "$WORK/links.py" "${docs[@]}" 2>&1); then
  pass "every relative link of README.md and docs/*.md resolves ($(tail -n 1 <<<"$report"))"
else
  fail "broken links:"; echo "$report"
fi

# refuse WHAT GREP_OPTIONS PATTERN FILE...: fails, listing the hits, when any
# file matches PATTERN; passes with "no WHAT" otherwise.
refuse() {
  local what=$1 opts=$2 pattern=$3 hits
  shift 3
  if hits=$(grep "$opts" -- "$pattern" "$@"); then
    fail "$what:"; echo "$hits"
  else
    pass "no $what"
  fi
}

# (b) No path of a particular machine (a checkout, a home directory).
refuse "machine paths (/work/, /root/, /home/) in the documentation" -nE \
  '(^|[^A-Za-z0-9_.~-])/(work|root|home)/' "${docs[@]}"

# (c) Nothing outside the repository, no issue numbers; the code, scenarios,
# scripts and tests cite the repository's own docs too.
outside='product\.md|rxe-notes|style\.md|\.\./shared|\bthe seeds\b|seed recipe|\b(first|second) seed\b'
refuse "references to documents outside the repository" -nE "$outside" "${docs[@]}"
mapfile -t code < <(git ls-files '*.h' '*.cpp' '*.sh' '*.yaml' '*.py' '*.txt' 'scripts/*' | grep -v '^tests/e2e/docs_links\.sh$')
[ ${#code[@]} -gt 100 ] && pass "${#code[@]} code files to check" || fail "only ${#code[@]} code files found"
refuse "code citing documents outside the repository" -nE "$outside" "${code[@]}"
refuse "issue references" -niE '\bissues? #?[0-9]+|(^|[[:space:](\[])#[0-9]+\b' "${docs[@]}"

# (d) The README is a front door, not a manual.
lines=$(wc -l <README.md)
if [ "$lines" -le 300 ]; then pass "README.md has $lines lines (at most 300)"; else
  fail "README.md has $lines lines: move detail into docs/ (at most 300)"
fi

# The README names every command the binary has.
expect_exit 0 "rxerun --help" -- "$RXERUN" --help
commands=$(sed -n '/^Subcommands:/,/^$/p' <<<"$out" | awk 'NR > 1 && NF {print $1}')
[ -n "$commands" ] || fail "no commands found in rxerun --help"
readme=$(cat README.md)
for cmd in $commands; do
  contains "$readme" "rxerun $cmd" "README.md names 'rxerun $cmd'"
done

# Code comments cite these sections by name; the kind reference is generated
# after the marker at the end of docs/scenarios.md.
notes=$(grep -E '^## ' docs/kernel-notes.md 2>/dev/null)
for section in "Loopback" "Two traps" "GID table" "Faults" "Forced wire" "ICRC" "Namespaces" "Modules"; do
  if grep -qxF "## $section" <<<"$notes"; then pass "docs/kernel-notes.md has \"$section\""; else
    fail "docs/kernel-notes.md has no section \"## $section\" (code comments cite it)"
  fi
done
marker='<!-- The kind reference below is generated by `rxerun steps --markdown`; scripts/test checks it is current. -->'
if grep -qxF -- "$marker" docs/scenarios.md 2>/dev/null; then pass "docs/scenarios.md has the kind reference's marker"; else
  fail "docs/scenarios.md lacks the line: $marker"
fi
finish
