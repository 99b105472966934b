#!/usr/bin/env python3
"""Checks a report page (`--report html:PAGE`) against the JSON report of the
same run, as a person's browser shows it: headless Chromium loads the page
from disk with the network off (tests/tools/browser_check.py, --strict), and

  - no console error, no script exception, nothing fetched;
  - one data-run per run, NAME@KERNEL (NAME@host), in the report's order;
  - one data-step per step, with the steps' names in order;
  - one data-expect per fact expectation, the facts and their data-verdict
    in the report's order and with the report's verdicts;
  - for every capture a step made whose file is found (under --capture-dir,
    in its kernel's directory when the suite ran on more than one kernel),
    one data-packet per frame of the pcap inside its [data-capture] section,
    numbered 1..N (up to --max-packets);
  - a click on the first packet of each ladder opens its panel without an
    error; in a suite, a click on the matrix's link to the last run opens it;
  - --expect-open NAME...: exactly these steps' elements are open.

usage: page_check.py PAGE.html REPORT.json [--capture-dir DIR]... [--screenshot PNG]
                     [--max-packets N] [--expect-open STEP]... [--no-scripts]

Prints what it checked; exits 0 when everything holds, 1 when something does
not (each problem on a line starting with FAIL), 2 when it cannot check.
"""

import argparse
import json
import os
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def pcap_frames(path):
    """Number of frames in a classic pcap file (either byte order, µs or ns)."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        return 0
    magic = data[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        order = "<"
    elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        order = ">"
    else:
        raise ValueError(f"{path}: not a classic pcap file")
    n, at = 0, 24
    while at + 16 <= len(data):
        caplen = struct.unpack(order + "I", data[at + 8:at + 12])[0]
        if at + 16 + caplen > len(data):
            break
        n += 1
        at += 16 + caplen
    return n


def where(run):
    """NAME@WHERE's WHERE: the lab kernel, a two-node lab's node kernels
    joined with '+' (in the report's order of the nodes), or host."""
    if run.get("kernel"):
        return run["kernel"]
    nodes = (run.get("vm") or {}).get("nodes") or {}
    if nodes:
        return "+".join(str(n.get("kernel", "?")) for n in nodes.values())
    return "host"


def runs_of(report):
    return report["runs"] if "runs" in report else [report]


def css_string(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def find_capture(name, dirs, kernel, per_kernel):
    """Where rxerun puts a lab VM's files: under DIR/KERNEL/ when the suite
    booted more than one kernel, else under DIR."""
    if os.path.isabs(name):
        return name if os.path.isfile(name) else None
    for d in dirs:
        where = os.path.join(d, kernel, name) if kernel and per_kernel else os.path.join(d, name)
        if os.path.isfile(where):
            return where
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("page")
    ap.add_argument("report")
    ap.add_argument("--capture-dir", action="append", default=[])
    ap.add_argument("--screenshot")
    ap.add_argument("--max-packets", type=int, default=3000)
    ap.add_argument("--expect-open", action="extend", nargs="*")
    ap.add_argument("--no-scripts", action="store_true")
    a = ap.parse_args()

    report = json.load(open(a.report))
    runs = runs_of(report)
    steps = [s for r in runs for s in r["steps"]]
    expectations = [e for s in steps for e in s.get("expectations", [])]
    per_kernel = len({r["kernel"] for r in runs if r.get("kernel")}) > 1
    captures = []  # (file, frames, index of its run)
    for index, r in enumerate(runs):
        for s in r["steps"]:
            f = s.get("facts", {}).get("file") if s["kind"] == "capture" else None
            if not isinstance(f, str) or any(c[0] == f for c in captures):
                continue
            path = find_capture(f, a.capture_dir or ["."], r.get("kernel"), per_kernel)
            if path:
                captures.append((f, min(pcap_frames(path), a.max_packets), index))

    argv = [sys.executable, os.path.join(HERE, "browser_check.py"), a.page, "--strict", "--timeout", "120",
            "--attr", "[data-run]", "data-run", "--attr", "[data-step]", "data-step",
            "--attr", "[data-expect]", "data-expect", "--attr", "[data-expect]", "data-verdict",
            "--count", "[data-packet]", "--attr", "details[data-step][open]", "data-step"]
    for f, frames, index in captures:
        argv += ["--attr", f"[data-capture={css_string(f)}] [data-packet]", "data-packet"]
        if not a.no_scripts and frames > 0:
            if len(runs) > 1:  # a run of a suite may start closed: opened from the matrix first
                argv += ["--click", f'table.matrix a[href="#run-{index}"]']
            argv += ["--click", f"[data-capture={css_string(f)}] [data-packet]"]
    last = f"#run-{len(runs) - 1} > details.run-body[open]"
    if len(runs) > 1 and not a.no_scripts:  # the matrix's link opens its run
        argv += ["--click", f'table.matrix a[href="#run-{len(runs) - 1}"]', "--count", last]
    if a.screenshot:
        argv += ["--screenshot", a.screenshot]
    if a.no_scripts:
        argv.append("--no-scripts")
    got = subprocess.run(argv, capture_output=True, text=True)
    if got.returncode not in (0, 1):
        print(f"cannot check {a.page}: browser_check.py exit {got.returncode}\n{got.stderr}")
        return 2
    d = json.loads(got.stdout)

    problems = []

    def same(what, have, want):
        if have == want:
            print(f"ok: {what} ({len(want) if isinstance(want, list) else want})")
        else:
            problems.append(f"{what}: the page has {have!r}, the report {want!r}")

    for key in ("console", "exceptions", "blocked_requests"):
        same(f"no {key.replace('_', ' ')}", d[key], [])
    attrs = d["attrs"]
    same("data-run per run", attrs["[data-run]"]["data-run"], [r["scenario"] + "@" + where(r) for r in runs])
    same("data-step per step", attrs["[data-step]"]["data-step"], [s["name"] for s in steps])
    same("data-expect per expectation", attrs["[data-expect]"]["data-expect"], [e["fact"] for e in expectations])
    same("data-verdict as the report's", attrs["[data-expect]"]["data-verdict"],
         [e["verdict"] for e in expectations])
    for f, frames, _ in captures:
        numbers = attrs[f"[data-capture={css_string(f)}] [data-packet]"]["data-packet"]
        same(f"data-packet per frame of {os.path.basename(f)}", numbers, [str(i) for i in range(1, frames + 1)])
    if len(runs) > 1 and not a.no_scripts:
        same("the matrix's link to the last run opens it", d["counts"][last], 1)
    if a.expect_open is not None:
        same("open steps", sorted(attrs["details[data-step][open]"]["data-step"]), sorted(a.expect_open))
    for c in d["clicks"]:
        if c.get("error"):
            problems.append(f"click {c['selector']}: {c['error']}")
    for p in problems:
        print("FAIL: " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
