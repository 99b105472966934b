# netem, which this machine's kernel lacks, runs for real in the lab VM; by
# default rxerun goes there on its own and says why in its first line.
source "$(dirname "$0")/lib.sh"
if [ "$(id -u)" -ne 0 ]; then echo "skip: needs root to know that the host lacks only netem"; exit 77; fi
if "$RXERUN" run --host tests/data/e2e/../vm/idle.yaml >/dev/null 2>&1 && [ -e /sys/module/sch_netem ]; then
  echo "skip: this host has netem, so rxerun would rightly stay on the host"; exit 77
fi
expect_exit 0 "scenarios/netem-loss-host.yaml, placed by rxerun" -- "$RXERUN" run scenarios/netem-loss-host.yaml --report json:"$WORK/n.json"
first=$(head -n1 <<<"$out")
contains "$first" "host kernel has no sch_netem" "first line: what the host lacks"
contains "$first" "running in the lab VM, kernel $NEWEST" "first line: where it runs instead"
expect_exit 3 "--host keeps it on the host, where netem fails" -- "$RXERUN" run --host scenarios/netem-loss-host.yaml
contains "$out$err" "--vm" "the error names --vm"
no_qemu_left "after netem"
finish
