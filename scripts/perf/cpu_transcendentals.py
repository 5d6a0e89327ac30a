"""PyTorch twin of cpu-transcendentals.ts: exp, tanh, silu, sigmoid, log and gelu over 4M float32
elements on the CPU, process CPU time (not inflated by a busy box), median (and min) of 25
runs after a warm-up.
    /usr/bin/python3 scripts/perf/cpu_transcendentals.py [threads]
"""
import sys
import time

import torch

if len(sys.argv) > 1:
    torch.set_num_threads(int(sys.argv[1]))
N = 4 * 1024 * 1024
REPS = 25
x = ((torch.arange(N, dtype=torch.float64) * 7919) % 20000 / 1000 - 10).float()
ops = [
    ("exp", torch.exp),
    ("tanh", torch.tanh),
    ("silu", torch.nn.functional.silu),
    ("sigmoid", torch.sigmoid),
    ("log", lambda t: t.abs().log()),
    ("gelu", torch.nn.functional.gelu),
]
for name, f in ops:
    times = []
    for r in range(REPS + 2):
        t0 = time.process_time()
        f(x)
        if r >= 2:
            times.append((time.process_time() - t0) * 1000)
    times.sort()
    print(f"{name:8} {times[REPS // 2]:.2f} ms (min {times[0]:.2f})")
