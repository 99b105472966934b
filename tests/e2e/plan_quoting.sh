# `rxerun plan` prints commands that are safe to paste: names and values a
# shell would split or expand ($, ', ;, spaces) are quoted, and each printed
# command splits (python3's shlex, POSIX rules) into exactly the argv meant.
# No root needed: plan changes nothing.
source "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3

cat >"$WORK/quoting.yaml" <<'EOF'
name: quoting
steps:
  - netns: {name: "n$x;'q"}
  - veth: {name: "v$a'b", peer: "v;b", peer_netns: "n$x;'q"}
  - address: {dev: "v$a'b", cidr: 10.9.0.1/24}
  - link: {dev: "v$a'b", up: true, mtu: 1400}
  - sysctl: {key: net.ipv4.tcp_rmem, value: "4096 87380 6291456"}
  - name: wire
    capture: {dev: "v;b", filter: "udp port 4791 and not host 10.9.0.9", file: "it's here.pcap"}
    netns: "n$x;'q"
  - block: {proto: udp, port: 4791, dev: "v$a'b"}
  - netem: {dev: "v$a'b", delay: 10ms}
  - ping: {to: 10.9.0.2, from: "v$a'b", count: 1}
EOF
expect_exit 0 "plan of a scenario with names that need quoting" -- "$RXERUN" plan "$WORK/quoting.yaml"
printf '%s\n' "$out" >"$WORK/plan.txt"

expect_exit 0 "every printed command splits into the intended argv" -- $PY - "$WORK/plan.txt" <<'PYEOF'
import shlex, sys

lines = open(sys.argv[1]).read().splitlines()
commands = []
for line in lines:
    text = line.strip()
    # Action lines are indented under their step and are not comments.
    if not line.startswith("       ") or text.startswith("#"):
        continue
    commands.append(shlex.split(text, comments=True))
for argv in commands:
    print(argv)

ns = "n$x;'q"
exec_in = ["ip", "netns", "exec", ns]
want = [
    ["ip", "netns", "add", ns],
    ["ip", "link", "add", "v$a'b", "type", "veth", "peer", "name", "v;b", "netns", ns],
    ["ip", "addr", "add", "10.9.0.1/24", "dev", "v$a'b"],
    ["ip", "link", "set", "v$a'b", "mtu", "1400"],
    ["ip", "link", "set", "v$a'b", "up"],
    ["sysctl", "-w", "net.ipv4.tcp_rmem=4096 87380 6291456"],
    exec_in + ["tcpdump", "-i", "v;b", "-s", "9216", "-w", "it's here.pcap", "udp port 4791 and not host 10.9.0.9", "&"],
    ["tc", "qdisc", "add", "dev", "v$a'b", "root", "netem", "delay", "10ms"],
    ["ping", "-c", "1", "-i", "0.2", "-I", "v$a'b", "10.9.0.2"],
    ["ip", "-n", ns, "link", "set", "v;b", "alias", "rxerun:quoting"],
    exec_in + ["ip", "link", "del", "v;b"],
    ["ip", "netns", "del", ns],
]
missing = [w for w in want if w not in commands]
for w in missing:
    print("MISSING:", w)
# The nft command is one argument holding nftables' own syntax.
nft = [c for c in commands if c[:1] == ["nft"]]
assert nft and all(len(c) == 2 for c in nft), nft
assert any('iifname "v$a\'b"' in c[1] for c in nft), nft
# Nothing a shell would expand is left bare: every word with $ or ; came
# through quoted, so the split words hold them literally.
assert any("v$a'b" in c for c in commands)
# The sysctl's old value is put back the same way (one word, tabs and all).
restore = [c for c in commands if c[:2] == ["sysctl", "-w"] and c[2] != "net.ipv4.tcp_rmem=4096 87380 6291456"]
assert len(restore) == 1 and len(restore[0]) == 3 and restore[0][2].startswith("net.ipv4.tcp_rmem="), restore
sys.exit(1 if missing else 0)
PYEOF
[ "$failures" -eq 0 ] || echo "$out"

# A real shell agrees: the words `echo` receives are the argv above.
line=$(grep -F 'sysctl -w' "$WORK/plan.txt" | head -n 1 | sed 's/^ *//; s/ *#.*$//')
words=$(eval "printf '<%s>' ${line#sysctl -w }")
[ "$words" = "<net.ipv4.tcp_rmem=4096 87380 6291456>" ] && pass "bash reads the sysctl value as one word" \
  || fail "bash read: $words (line: $line)"
finish
