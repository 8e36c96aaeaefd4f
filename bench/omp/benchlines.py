# SPDX-License-Identifier: MIT
"""What an OpenMP benchmark measured, from the lines it prints: EPCC's
"<TEST> time = <X> microseconds" (its reference lines left out) and
bench/omp-dense's "result <NAME> <X> ...". Shared by epcc-ratios.py and
config-ratios.py."""
import re
import subprocess

EPCC = re.compile(r"^(.+?) time\s+=\s+([0-9.]+) microseconds")
RESULT = re.compile(r"^result (\S+) ([0-9.eE+-]+)")


def measure(prog, args, env, timeout):
    """{measurement: value} of one run of prog; None if it ran past timeout."""
    try:
        out = subprocess.run([prog] + args, env=env, capture_output=True, text=True, timeout=timeout).stdout
    except subprocess.TimeoutExpired:
        return None
    got = {}
    for line in out.splitlines():
        m = EPCC.match(line.strip()) or RESULT.match(line.strip())
        if m and not m.group(1).startswith("reference"):
            got[m.group(1)] = float(m.group(2))
    return got
