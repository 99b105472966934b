# Helpers for the end-to-end tests. Each test script is run by CTest as
#   bash tests/e2e/NAME.sh BUILD/rxerun SOURCE_DIR
# and exits 0 (pass), 1 (fail) or 77 (skip, with the reason on stdout).
set -uo pipefail
RXERUN=${1:?usage: $0 RXERUN_BINARY SOURCE_DIR}
SRC=${2:?usage: $0 RXERUN_BINARY SOURCE_DIR}
cd "$SRC" || exit 1
WORK=$(mktemp -d)
export RXERUN_STATE_DIR="$WORK/state"
export NO_COLOR=
trap 'rm -rf "$WORK"' EXIT
failures=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }

# expect_exit CODE DESCRIPTION -- COMMAND...: runs it, keeps stdout/stderr in $out/$err.
expect_exit() {
  local want=$1 what=$2
  shift 3
  "$@" >"$WORK/out" 2>"$WORK/err"
  local got=$?
  out=$(cat "$WORK/out")
  err=$(cat "$WORK/err")
  if [ "$got" -eq "$want" ]; then pass "$what (exit $got)"; else
    fail "$what: exit $got, wanted $want"; echo "--- stdout"; echo "$out"; echo "--- stderr"; echo "$err"
  fi
}

# contains HAYSTACK NEEDLE DESCRIPTION
contains() {
  if grep -qF -- "$2" <<<"$1"; then pass "$3"; else fail "$3: no '$2' in:"; echo "$1"; fi
}
lacks() {
  if grep -qF -- "$2" <<<"$1"; then fail "$3: unexpected '$2' in:"; echo "$1"; else pass "$3"; fi
}

finish() {
  if [ "$failures" -gt 0 ]; then echo "$failures check(s) failed"; exit 1; fi
  exit 0
}

# What a run of SCENARIO (its namespaces named PREFIX*) may change on this
# machine, in a stable order: those namespaces, interfaces carrying its mark,
# its nftables tables, and the qdiscs and IPv4/IPv6 settings of the root
# namespace's own devices (lo, all, default and real hardware: not the
# throwaway interfaces of tests running beside this one). Equal snapshots
# before and after: the run left nothing behind.
host_snapshot() {  # SCENARIO PREFIX
  local scenario=$1 prefix=$2 devs dev
  ip netns list 2>/dev/null | awk '{print "netns", $1}' | grep -F "netns $prefix" | sort
  ip -o link show 2>/dev/null | grep -F "rxerun:$scenario" | sed -E 's/^[0-9]+: //; s/ link\/.*alias/ alias/' | sort
  nft list tables 2>/dev/null | grep -F "rxerun-$scenario" | sort
  devs="lo"
  for dev in /sys/class/net/*; do [ -e "$dev/device" ] && devs="$devs ${dev##*/}"; done
  for dev in $devs; do tc qdisc show dev "$dev" 2>/dev/null; done
  for dev in all default $devs; do sysctl -a -r "^net\.ipv[46]\.conf\.$dev\." 2>/dev/null; done | sort
}
