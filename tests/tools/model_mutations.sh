#!/usr/bin/env bash
# Mutation check of the model (sys/model/), the stand-in the unit tests run
# on: each kernel rule below is broken in turn in a copy of the tree, and
# the unit tests must catch it (at least one case fails). A rule whose
# breaking no test notices is reported; the script then exits 1.
#
#   tests/tools/model_mutations.sh [WORK_DIR]
#
# Not part of scripts/test: the copy is built once (minutes on two cores),
# then each mutation recompiles one batch and relinks the test binary.
set -euo pipefail
cd "$(dirname "$0")/../.."
work=${1:-$(mktemp -d /tmp/rxerun-mutations.XXXXXX)}
mkdir -p "$work/src"
git ls-files -z | xargs -0 cp --parents -t "$work/src"
cmake -S "$work/src" -B "$work/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
echo "building the unmutated tests in $work/build ..."
cmake --build "$work/build" -j"$(nproc)" --target rxerun_tests >/dev/null

# file @ the text of the rule @ what it becomes @ the rule, in words (fields split at @:
# read splits at IFS even after a backslash, and rules hold |)
mutations=(
  "sys/model/links.cpp@!spec.peer_netns.empty() && !*netns_.exists(there) && !k_.open_world@false@a veth's peer namespace must exist"
  "sys/model/links.cpp@if (!k_.open_world) forget(other.first, other.second);@(void)other;@deleting a veth end deletes the other end"
  "sys/model/links.cpp@link->carrier = other->carrier = up \&\& other->up;@link->carrier = other->carrier = up;@a veth has carrier only while both ends are up"
  "sys/model/routes.cpp@std::erase_if(t.table, [\&](const Route\& r) { return !r.dev.empty() \&\& !links_.may_exist(k_.netns, r.dev); });@(void)0;@a route goes with its interface"
  "sys/model/rdma.cpp@return !l || (d.netdev_ifindex != 0 \&\& l->ifindex != d.netdev_ifindex);@return !l;@an rxe device goes with its netdev, not with its name"
  "sys/model/modules.cpp@if (in_use(name)) return@if (false) return@a module another module uses cannot go"
  "sys/model/settings.cpp@if (!v \&\& !k_.open_world) return make_error(\"no sysctl \" + key, ENOENT);@(void)0;@a sysctl write makes no file"
  "sys/model/nvme.cpp@{linked, EBUSY,@{false, EBUSY,@a subsystem a port links cannot go"
  "sys/model/nvme.cpp@for (const auto\& d : ctrls[instance].block_devices) storage_.disks.erase(d);@(void)0;@a controller's disks go with it"
  "sys/model/storage.cpp@return disks.count(name) > 0;@return false;@a disk another service made is a block device"
  "sys/model/nft.cpp@return make_error(\"Error: Could not process rule: Device or resource busy\", EBUSY);@(void)0;@a chain that holds rules cannot go"
  "sys/model/srp.cpp@const std::string login_name = srpt_login_name(address);@const std::string login_name = address;@ib_srpt names an IPv6 login by its address in full"
  "sys/model/srp.cpp@{port != 0 \&\& siw_elsewhere, EADDRINUSE,@{false, EADDRINUSE,@ib_srpt cannot listen while a siw device is in another namespace"
  "sys/model/nfs.cpp@} else if (!exported) {@} else if (false) {@an NFS mount needs an export for one of the client's addresses"
  "sys/model/nfs.cpp@            stop(namespaces[netns]);@            (void)netns;@the last mount of a namespace's nfsd filesystem stops its nfsd"
)

missed=0
for m in "${mutations[@]}"; do
  IFS='@' read -r file rule broken words <<<"$m"
  cp "$file" "$work/src/$file"
  python3 - "$work/src/$file" "$rule" "$broken" <<'PY'
import sys
path, rule, broken = sys.argv[1], sys.argv[2].replace('\\', ''), sys.argv[3].replace('\\', '')
text = open(path).read()
if rule not in text:
    sys.exit(f"the rule is not in {path} as written: {rule}")
open(path, 'w').write(text.replace(rule, broken, 1))
PY
  cmake --build "$work/build" -j"$(nproc)" --target rxerun_tests >/dev/null
  # The cases that run on the model: those of the steps, the engine, the app and the model itself.
  if "$work/build/tests/rxerun_tests" --source-file='*/tests/steps/*,*/tests/engine/*,*/tests/app/*,*/tests/sys/model/*' \
    >"$work/out" 2>&1; then
    echo "MISSED: $words ($file): no test failed"
    missed=$((missed + 1))
  else
    # doctest's summary counts the failed cases (its "TEST CASE:" headers
    # also head a passing case's MESSAGE).
    failed=$(sed -n 's/^\[doctest\] test cases:.*| *\([0-9]*\) failed.*/\1/p' "$work/out")
    echo "caught: $words ($file): $failed case(s) failed"
  fi
  cp "$file" "$work/src/$file"
done
cmake --build "$work/build" -j"$(nproc)" --target rxerun_tests >/dev/null
exit $((missed > 0))
