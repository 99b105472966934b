# Helpers for the lab VM tests: the e2e helpers, plus the prepared kernels.
# Each script is run by CTest as `bash tests/vm/NAME.sh BUILD/rxerun SOURCE_DIR`,
# one at a time (a VM takes a core and 1.4 GB).
source "$(dirname "${BASH_SOURCE[0]}")/../e2e/lib.sh"

# One lab VM at a time on this machine, also beside VMs that people (or
# other test runs) start by hand under the same lock.
exec 9>"${RXERUN_VM_LOCK:-/tmp/rxerun-vm.lock}"
flock 9

# Labels of the prepared kernels, newest first ("7.3 6.1").
KERNELS=$("$RXERUN" vm status | awk '$2 == "ready" {print $1}' | sort -rV | tr '\n' ' ')
if [ -z "$KERNELS" ]; then
  echo "skip: no lab kernel is prepared (scripts/setup runs \`rxerun vm setup\`)"
  exit 77
fi
NEWEST=${KERNELS%% *}

# This test's lab VMs: their share dirs live in this test's own TMPDIR, so
# that a VM someone else runs meanwhile is neither counted nor killed.
export TMPDIR="$WORK/tmp"
mkdir -p "$TMPDIR"
lab_qemus() { pgrep -f "qemu-system-x86_64.*$TMPDIR/rxerun-vm\\." || true; }

no_qemu_left() {  # DESCRIPTION
  local left
  for _ in $(seq 50); do left=$(lab_qemus); [ -z "$left" ] && break; sleep 0.1; done
  if [ -z "$left" ]; then pass "$1: no qemu left"; else fail "$1: qemu still running: $left"; pkill -9 -f "qemu-system-x86_64.*$TMPDIR/rxerun-vm\\."; fi
}

# json_field FILE EXPR: a field of a JSON report (python3 expression on r).
json_field() { /usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
# step_fact REPORT STEP FACT, step_field REPORT STEP FIELD: one step's fact or
# field ("outcome", "message", "hints") in a JSON report; None when absent.
step_fact() { json_field "$1" "[s['facts'].get('$3') for s in r['steps'] if s['name'] == '$2'][0]"; }
step_field() { json_field "$1" "[s.get('$3') for s in r['steps'] if s['name'] == '$2'][0]"; }
# same GOT WANT DESCRIPTION; positive VALUE DESCRIPTION (a number > 0)
# A guest script's verdicts: its "ok: ..." and "FAIL: ..." lines (in $out)
# become this test's, under DESCRIPTION; its other lines are shown.
check_guest() {  # DESCRIPTION
  echo "$out" | grep -vE '^(ok|FAIL): '
  while IFS= read -r line; do
    case $line in
      "ok: "*) pass "$1: ${line#ok: }" ;;
      "FAIL: "*) fail "$1: ${line#FAIL: }" ;;
    esac
  done <<<"$out"
  contains "$out" "ok: " "$1: the guest reported"
}

same() { if [ "$1" = "$2" ]; then pass "$3"; else fail "$3: got '$1', wanted '$2'"; fi; }
positive() {
  if /usr/bin/python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) > 0 else 1)' "$1" 2>/dev/null; then pass "$2"; else fail "$2: got '$1'"; fi
}
