#!/usr/bin/env python3
"""first_step.py COMMAND...: runs COMMAND to its end and prints "FIRST TOTAL":
the seconds from its start to its first line that reports a step (a result
row, "  ok    NAME ...", with or without a node's "[a] " in front) and to its
end. Exits non-zero when the command fails or reports no step."""
import subprocess
import sys
import time

t0 = time.monotonic()
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
first = None
for line in p.stdout:
    if first is None and line.lstrip("[ab] ").startswith("ok "):
        first = time.monotonic() - t0
if p.wait() != 0 or first is None:
    sys.exit("the run failed (exit %d)" % p.returncode)
print("%.3f %.3f" % (first, time.monotonic() - t0))
