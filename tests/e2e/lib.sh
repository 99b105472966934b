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

# What a run may change on this machine, in a stable order: network
# namespaces, interfaces (name, state, alias), nftables tables, qdiscs and the
# root namespace's per-interface IPv4 and IPv6 settings. Equal snapshots
# before and after: nothing was left behind.
host_snapshot() {
  ip netns list 2>/dev/null | awk '{print "netns", $1}' | sort
  ip -o link show 2>/dev/null | sed -E 's/^[0-9]+: //; s/ link\/.*alias/ alias/; s/ link\/.*//' | sort
  nft list tables 2>/dev/null | sort
  tc qdisc show 2>/dev/null | sort
  sysctl -a -r '^net\.ipv[46]\.conf\.' 2>/dev/null | sort
}
