#!/usr/bin/env python3
"""Compares `rxerun decode --json FILE` with Wireshark's dissector, packet by
packet: every frame tshark dissects as InfiniBand (RoCEv2, UDP 4791) must be
a packet in rxerun's output with the same frame number, addresses, opcode,
destination QP, PSN, AckReq, RETH (VA, R_Key, DMA length) and AETH
(syndrome, MSN), and rxerun must list no packet tshark does not see.

usage: crosscheck_tshark.py FILE RXERUN [--tshark PATH] [--quiet]

Frames rxerun calls malformed are left out of the comparison (tshark
dissects what it can of a cut frame) and counted. Exits 0 when everything
agrees and at least one packet was compared, 1 on any difference (the first
20 are printed), 2 when a tool fails. Works on any capture, generated or
real (the lab VM's tests call it on what `capture` wrote).
"""

import argparse
import json
import subprocess
import sys

FIELDS = [
    "frame.number", "ip.src", "ip.dst", "ipv6.src", "ipv6.dst",
    "infiniband.bth.opcode", "infiniband.bth.destqp", "infiniband.bth.psn", "infiniband.bth.a",
    "infiniband.reth.va", "infiniband.reth.r_key", "infiniband.reth.dmalen",
    "infiniband.aeth.syndrome", "infiniband.aeth.msn",
]


def number(text):
    """tshark prints some fields in hex (0x...), others in decimal; a field
    seen twice in one frame (e.g. ICMP quoting a packet) is comma-separated:
    the first is the outer one."""
    text = text.split(",")[0].strip()
    if text == "":
        return None
    return int(text, 0)


def flag(text):
    text = text.split(",")[0].strip()
    return text in ("1", "True", "true")


def tshark_packets(tshark, path):
    cmd = [tshark, "-n", "-r", path, "-d", "udp.port==4791,infiniband", "-T", "fields", "-E", "separator=/t",
           "-E", "occurrence=f"]
    for f in FIELDS:
        cmd += ["-e", f]
    run = subprocess.run(cmd, capture_output=True, text=True, env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"})
    if run.returncode != 0:
        # tshark exits 2 on a file cut short but prints what it read.
        if not run.stdout:
            sys.exit(f"crosscheck: tshark failed ({run.returncode}): {run.stderr.strip()}")
    packets = {}
    for line in run.stdout.splitlines():
        v = dict(zip(FIELDS, line.split("\t")))
        if v.get("infiniband.bth.opcode", "") == "":
            continue
        frame = int(v["frame.number"])
        p = {
            "src": v["ip.src"] or v["ipv6.src"],
            "dst": v["ip.dst"] or v["ipv6.dst"],
            "opcode": number(v["infiniband.bth.opcode"]),
            "dest_qp": number(v["infiniband.bth.destqp"]),
            "psn": number(v["infiniband.bth.psn"]),
            "ack_req": flag(v["infiniband.bth.a"]),
        }
        if v["infiniband.reth.va"]:
            p["reth"] = {"va": number(v["infiniband.reth.va"]), "rkey": number(v["infiniband.reth.r_key"]),
                         "length": number(v["infiniband.reth.dmalen"])}
        if v["infiniband.aeth.syndrome"]:
            p["aeth"] = {"syndrome": number(v["infiniband.aeth.syndrome"]),
                         "msn": number(v["infiniband.aeth.msn"])}
        packets[frame] = p
    return packets


def rxerun_packets(rxerun, path):
    run = subprocess.run([rxerun, "decode", "--json", path], capture_output=True, text=True)
    if run.returncode not in (0, 1):
        sys.exit(f"crosscheck: rxerun decode failed ({run.returncode}): {run.stderr.strip()}")
    packets, malformed = {}, set()
    for line in run.stdout.splitlines():
        o = json.loads(line)
        if "error" in o:
            malformed.add(o["frame"])
        elif "frame" in o:
            packets[o["frame"]] = {k: o.get(k) for k in ("src", "dst", "opcode", "dest_qp", "psn", "ack_req")}
            for k in ("reth", "aeth"):
                if k in o:
                    packets[o["frame"]][k] = o[k]
    return packets, malformed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file")
    ap.add_argument("rxerun")
    ap.add_argument("--tshark", default="tshark")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args()

    theirs = tshark_packets(a.tshark, a.file)
    ours, malformed = rxerun_packets(a.rxerun, a.file)
    problems = []
    for frame in sorted(set(theirs) | set(ours)):
        if frame in malformed:
            continue
        t, o = theirs.get(frame), ours.get(frame)
        if t is None:
            problems.append(f"frame {frame}: rxerun lists it, tshark does not see RoCE: {o}")
        elif o is None:
            problems.append(f"frame {frame}: tshark sees RoCE, rxerun does not list it: {t}")
        elif t != o:
            diff = {k: (o.get(k), t.get(k)) for k in sorted(set(t) | set(o)) if o.get(k) != t.get(k)}
            problems.append(f"frame {frame}: rxerun vs tshark differ: {diff}")
    compared = len(set(theirs) & set(ours) - malformed)
    for p in problems[:20]:
        print(p)
    if len(problems) > 20:
        print(f"... and {len(problems) - 20} more")
    summary = (f"crosscheck {a.file}: {compared} packets compared, {len(problems)} differences, "
               f"{len(malformed)} malformed frames left out")
    print(summary)
    if problems or compared == 0:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
