# Sourced by the benchmarks that time a lab against its hand script in ONE
# lab VM boot (bench/labs.sh, bench/nvme.sh). Their guest half prints one
# line "rxerun T1 T2 ..." and one line "shell T1 T2 ..." (seconds).
#
# vm_ratio NAME GUEST TITLE BASELINE [RXERUN] [REPEATS]
#   runs bench/GUEST in the lab VM (kernel 6.1) and prints TITLE, the
#   medians (and ranges) of both, and the ratio BASELINE / rxerun against
#   the target of 2. RXERUN defaults to build/rxerun, REPEATS to 5. Exits
#   77 when kernel 6.1 is not prepared.
vm_ratio() {
  local name=$1 guest=$2 title=$3 baseline=$4
  local rxerun repeats work
  rxerun=$(realpath "${5:-build/rxerun}")
  repeats=${6:-5}
  "$rxerun" vm status | awk '$1 == "6.1" && $2 == "ready"' | grep -q . ||
    { echo "$name: kernel 6.1 is not prepared: run \`rxerun vm setup --kernel 6.1\`"; exit 77; }
  work=$(mktemp -d)
  trap "rm -rf '$work'" EXIT
  "$rxerun" vm exec -q --kernel 6.1 --timeout 30m -- "$PWD/bench/$guest" "$rxerun" "$repeats" >"$work/out" 2>&1 ||
    { cat "$work/out"; echo "$name: the run in the lab VM failed"; exit 1; }
  python3 - "$work/out" "$repeats" "$title" "$baseline" <<'PYEOF'
import statistics, sys
times = {}
for line in open(sys.argv[1]):
    words = line.split()
    if words and words[0] in ("rxerun", "shell"):
        times[words[0]] = [float(w) for w in words[1:]]
def show(v):
    return "%7.2f  (%.2f-%.2f)" % (statistics.median(v), min(v), max(v))
print("%s, %s rounds, lab VM kernel 6.1" % (sys.argv[3], sys.argv[2]))
print("  rxerun         s median %s" % show(times["rxerun"]))
print("  %-14s s median %s" % (sys.argv[4], show(times["shell"])))
ratio = statistics.median(times["shell"]) / statistics.median(times["rxerun"])
print("  ratio shell / rxerun: %.2f (target >= 2: %s)" % (ratio, "met" if ratio >= 2 else "NOT met"))
PYEOF
}
