#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""report.py's rank-sum test against cases known by hand and against plain
enumeration of every split (ties, runs without a kill), TAP output."""
import itertools
import math
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report import rank_sum_p  # noqa: E402


def enumerated_p(a, b):
    """The definition, split by split: slow, but plainly right."""
    pooled = [math.inf if v is None else v for v in a + b]
    order = sorted(pooled)
    rank = {v: (order.index(v) + len(order) - order[::-1].index(v) + 1) / 2 for v in order}
    ranks = [rank[v] for v in pooled]
    mean = len(a) * (len(ranks) + 1) / 2
    seen = abs(sum(ranks[:len(a)]) - mean)
    splits = list(itertools.combinations(ranks, len(a)))
    return sum(abs(sum(s) - mean) >= seen - 1e-9 for s in splits) / len(splits)


checks = [
    ("3 runs against 3, fully apart: 2 splits of 20",
     abs(rank_sum_p([1, 2, 3], [4, 5, 6]) - 0.1) < 1e-12),
    ("10 against 10, fully apart: 2 splits of C(20, 10)",
     abs(rank_sum_p(list(range(10)), list(range(10, 20))) - 2 / math.comb(20, 10)) < 1e-15),
    ("the same runs on both sides: p = 1", rank_sum_p([5, 7, 9], [5, 7, 9]) == 1.0),
    ("no kill ranks after every kill: {no kill, 1} against {2, 3} is centred",
     rank_sum_p([None, 1], [2, 3]) == 1.0),
    ("20 against 20 finishes (C(40, 20) splits are not enumerated)",
     rank_sum_p(list(range(20)), list(range(20, 40))) < 1e-9),
]
rng = random.Random(7)
for _ in range(300):
    a = [rng.choice([None, 1, 2, 3, 4, 5]) for _ in range(rng.randint(1, 6))]
    b = [rng.choice([None, 1, 2, 3, 4, 5]) for _ in range(rng.randint(1, 6))]
    if abs(rank_sum_p(a, b) - enumerated_p(a, b)) > 1e-12:
        checks.append((f"counted p equals enumerated p for {a} against {b}", False))
        break
else:
    checks.append(("counted p equals enumerated p on 300 random cases with ties", True))

print(f"1..{len(checks)}")
for i, (what, ok) in enumerate(checks, 1):
    print(f"{'ok' if ok else 'not ok'} {i} - {what}")
sys.exit(0 if all(ok for _, ok in checks) else 1)
