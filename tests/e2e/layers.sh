# The layers (docs/architecture.md): every #include points down or sideways.
#   sdk/rxerun/                the plugin SDK: each other only (and the standard library, nlohmann_json)
#   base/                      the SDK (rxerun/) only
#   sys/, vm/, roce/           base/, and each other
#   engine/                    base/, engine/, and sys/ interface headers only
#   steps/                     base/, engine/, steps/, sys/ interface headers, roce/
#   app/                       anything
# A sys/ interface header is one that includes no sys/ implementation: the
# files listed in INTERFACES below, gathered by sys/system.h.
source "$(dirname "$0")/lib.sh"

# sys/ headers engine/ and steps/ may include: the services' interfaces.
INTERFACES="system capture clock ethtool interrupt kernel_health kernel_log links modules mountinfo netns nfs nft nvme ping process qdisc rdma routes srp storage sysctl tools verbs"
is_interface() { local h; for h in $INTERFACES; do [ "$1" = "sys/$h.h" ] && return 0; done; return 1; }

includes() {  # FILE -> the project headers it includes, one per line
  sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$1"
}

bad=0
check() {  # FILE INCLUDE WHY
  echo "  $1 includes $2: $3"; bad=$((bad + 1))
}
while IFS= read -r f; do
  layer=${f%%/*}
  while IFS= read -r inc; do
    target=${inc%%/*}
    case "$layer" in
      sdk) [ "$target" = rxerun ] || check "$f" "$inc" "the SDK's headers include nothing of rxerun but each other" ;;
      base) case "$target" in base | rxerun) ;; *) check "$f" "$inc" "base/ depends on the SDK's headers only" ;; esac ;;
      sys | vm | roce) case "$target" in base | sys | vm | roce | rxerun) ;; *) check "$f" "$inc" "$layer/ sits below engine/, steps/ and app/" ;; esac ;;
      engine)
        case "$target" in
          base | engine | rxerun) ;;
          sys) is_interface "$inc" || check "$f" "$inc" "engine/ may include sys/ interfaces only" ;;
          *) check "$f" "$inc" "engine/ never includes $target/" ;;
        esac ;;
      steps)
        case "$target" in
          base | engine | steps | roce | rxerun) ;;
          sys) is_interface "$inc" || check "$f" "$inc" "steps/ may include sys/ interfaces only" ;;
          *) check "$f" "$inc" "steps/ never includes $target/" ;;
        esac ;;
      app) ;;
    esac
  done < <(includes "$f")
done < <(git ls-files 'sdk/*' 'base/*' 'sys/*' 'vm/*' 'roce/*' 'engine/*' 'steps/*' 'app/*' | grep -E '\.(h|cpp)$')
if [ "$bad" -eq 0 ]; then pass "every include points down"; else fail "$bad include(s) against the layers"; fi

# The interfaces themselves must not pull an implementation in.
for h in $INTERFACES; do
  [ -f "sys/$h.h" ] || { fail "sys/$h.h is listed as an interface but does not exist"; continue; }
  while IFS= read -r inc; do
    case "$inc" in
      sys/*) is_interface "$inc" || fail "sys/$h.h (an interface) includes $inc, an implementation" ;;
    esac
  done < <(includes "sys/$h.h")
done

# The checker can fail: a file that breaks the rule is found.
mkdir -p "$WORK/tree/engine"
printf '#include "vm/lab_vm.h"\n' >"$WORK/tree/engine/x.cpp"
(cd "$WORK/tree" && [ "$(includes engine/x.cpp)" = vm/lab_vm.h ]) && pass "the include reader sees a bad include" ||
  fail "the include reader missed a bad include"
finish
