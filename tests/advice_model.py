# SPDX-License-Identifier: MIT
"""The advice's models (docs/ADVICE.md; report/advice/model.c), restated once
for the tests that check the report's estimates: tests/analysis/check_next.py
on profiles with known metrics, tests/cupti/check_report_*.py on replayed
recordings. Each returns T'/T (a ratio) or T/T' (a speedup) as named."""


def stall_ratio(wr, waiting, f, cut=0.0):
    """The first model: the share f of the samples, all waiting, removed,
    and the share cut of the issued instructions:
    T'/T = W_R (1 - c) + (1 - W_R) (w - f) / w."""
    left = (waiting - f) / waiting if waiting > 0 else 1.0
    return wr * (1 - cut) + (1 - wr) * max(0.0, left)


def barrier_ratio(wr, waiting, b, g_sum, g_max):
    """Barriers: the shares b at them, g_sum for global loads outside
    loops, g_max for the load that waits the most: the first model with
    f = b + g_sum - g_max."""
    return stall_ratio(wr, waiting, b + g_sum - g_max)


def serial_loads(nodes, k):
    """The waits for global loads outside loops (GPB_GLOBAL at the nodes
    right under kernel context k, a report's JSON nodes): sum and most."""
    g = [n.get("metrics", {}).get("GPB_GLOBAL", {}).get("excl", {}).get("sum", 0)
         for n in nodes if n.get("parent") == k["id"]]
    return sum(g), max(g + [0])


def gone_ratio(wr, waiting, f, cut, n):
    """The second model: the waits' cause gone too, n resident warps per
    scheduler: T'/T = W_R (1 - c) / (1 - w'^n), w' = (w - f) / (1 - f)."""
    w = max(0.0, (waiting - f) / (1 - f)) if f < 1 else 0.0
    if w >= 1 or n < 1:
        return stall_ratio(wr, waiting, f, cut)
    return wr * (1 - cut) / (1 - w ** n)


def issue_rate(e, n):
    """A scheduler's issue rate with n independent warps, each ready the
    share e of its cycles: 1 - (1 - e)^n; n e under one warp."""
    if n <= 0 or e <= 0:
        return 0.0
    return 1 - (1 - e) ** n if n >= 1 else n * e


def occupancy_ratio(m, e, n, nxt):
    """More resident warps per scheduler, n -> nxt, the memory's waits
    (share m) left: T'/T = 1 - (1 - m) (1 - R(n) / R(n'))."""
    to = issue_rate(e, nxt)
    return 1 - (1 - m) * (1 - issue_rate(e, n) / to) if to > 0 else 1.0


def threads_ratio(u, e, n, nxt):
    """Larger blocks: lanes u -> 1, warps per scheduler n -> nxt:
    T'/T = u R(n) / R(n')."""
    to = issue_rate(e, nxt)
    return u * issue_rate(e, n) / to if to > 0 else u


def blocks_ratio(sms, sms_next, e, n, nxt):
    """Smaller blocks, the same threads: busy SMs sms -> sms_next, warps
    per scheduler n -> nxt: T'/T = sms R(n) / (sms' R(n'))."""
    to = sms_next * issue_rate(e, nxt)
    return sms * issue_rate(e, n) / to if to > 0 else 1.0


def divergence_ratio(cut, wr=None):
    """The share cut of the warp instructions ran for idle threads; without
    PC samples (wr None) the kernel is taken as issue-bound."""
    return 1 - cut if wr is None else stall_ratio(wr, 1.0, 0.0, cut)


def launch_speedup(busy, gap):
    """Launches that found their stream idle, launched together: (busy + gap) / busy."""
    return (busy + gap) / busy


def speedup(ratio):
    """A kernel's speedup from its T'/T."""
    return 1 / ratio


# Scattered global accesses: the least a global instruction waits, on
# average, for the advice (model.h, GT_ADVICE_MODEL_DRAM_WAIT).
DRAM_WAIT = 500.0


def access_wait(waits, issued):
    """Cycles waited per global instruction issued: waits / issued (0 without any)."""
    return waits / issued if issued > 0 else 0.0


def omp_imbalance_saved(wait, team):
    """OpenMP imbalance: the threads' waits at the region's barriers over
    the team, what a balanced schedule saves."""
    return wait / team


def omp_fork_join_saved(par, work, team):
    """A region too short for its team: its wall time less the threads'
    mean work, par - work / team."""
    return max(0.0, par - work / team)


def omp_amdahl_saved(serial, team):
    """Serial time run by the team: serial (1 - 1 / team)."""
    return serial * (1 - 1 / team) if team > 1 else 0.0


def omp_tasks_saved(work, tasks, team):
    """Tasks too fine: the team's work outside them, over the team."""
    return max(0.0, work - tasks) / team
