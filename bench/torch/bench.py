#!/usr/bin/env python3
"""PyTorch CUDA rows of Surf's benchmark suite.

bench/src/main.ts runs this when python3 has torch with CUDA, passing the rows as JSON
(--spec) and reading the results back (--out). Inputs are the same bit-for-bit as the
JavaScript frameworks get (the integer hash of bench/src/data.ts), TF32 is off, and timing
uses CUDA events around back-to-back iterations, the median of several repeats.

    python3 bench/torch/bench.py --spec spec.json --out torch.json
"""
import argparse
import json
import math
import sys
import time

import torch
import torch.nn.functional as F

M32 = 0xFFFFFFFF


def mul32(h, c):
    """(h * c) mod 2^32 for 0 <= h < 2^32, without int64 overflow."""
    lo = (h * (c & 0xFFFF)) & M32
    hi = ((h * (c >> 16)) & 0xFFFF) << 16
    return (lo + hi) & M32


def hash_unit(n, seed, device):
    """n values in [0, 1) of stream `seed`: bench/src/data.ts hashUnit, vectorised."""
    i = torch.arange(n, dtype=torch.int64, device=device)
    h = (mul32(i, 0x9E3779B1) + ((seed * 0x85EBCA77) & M32)) & M32
    h = h ^ (h >> 16)
    h = mul32(h, 0x85EBCA6B)
    h = h ^ (h >> 13)
    h = mul32(h, 0xC2B2AE35)
    h = h ^ (h >> 16)
    return (h >> 8).to(torch.float32) / 16777216.0


SEED_A, SEED_B, SEED_C = 1, 2, 3


def rel_err(got, want):
    got = got.double().flatten()
    want = want.double().flatten()
    mag = want.abs().max().item()
    err = (got - want).abs().max().item()
    if math.isnan(err):
        return float("inf")
    return err / mag if mag > 0 else err


def rotations(row, quick):
    kind = row["kind"]
    if kind == "matmul":
        s = row["spec"]
        b = 4 * s["k"] * (s["m"] + s["n"])
    elif kind == "sum":
        b = 4 * row["rows"] * row["cols"]
    elif kind == "fma":
        b = 12 * row["rows"] * row["cols"]
    else:
        return 1
    if quick:
        return 2 if b < (8 << 20) else 1
    return max(1, min(16, -(-(128 << 20) // b)))


def cuda_time(fn, n):
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(n):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / 1000.0


def time_fn(step, timing, fixed_iters=None):
    """bench/src/timing.ts's loop with CUDA events: warm up, calibrate, median of repeats."""
    counter = [0]

    def one():
        step(counter[0])
        counter[0] += 1

    for _ in range(timing["warmup"]):
        one()
        torch.cuda.synchronize()
    if fixed_iters:
        iters = fixed_iters
    else:
        n = 1
        t = cuda_time(one, n)
        while t * 1000 < timing["targetMs"] / 5 and n < timing["maxIters"]:
            n = min(timing["maxIters"], n * 2)
            t = cuda_time(one, n)
        per = t / n
        iters = max(timing["minIters"], min(timing["maxIters"], round(timing["targetMs"] / 1000 / per)))
        if per * 1000 > timing["targetMs"]:
            iters = max(1, min(iters, timing["minIters"]))
    samples = [cuda_time(one, iters) / iters for _ in range(timing["repeats"])]
    s = sorted(samples)
    mid = len(s) // 2
    med = s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2
    return med, iters, samples


def to_unit(row, sec):
    unit = row["unit"]
    kind = row["kind"]
    if unit == "GFLOP/s":
        s = row["spec"]
        return 2 * s["m"] * s["k"] * s["n"] / sec / 1e9
    if unit == "GB/s":
        n = row["rows"] * row["cols"]
        return (4 * n if kind == "sum" else 16 * n) / sec / 1e9
    if unit == "µs/op":
        return sec * 1e6
    return 1.0 / sec


def kernel_row(row, quick, dev):
    """Returns (step(i), check() -> rel_err)."""
    kind = row["kind"]
    r = rotations(row, quick)
    if kind == "matmul":
        s = row["spec"]
        m, k, n = s["m"], s["k"], s["n"]
        a = hash_unit(m * k, SEED_A, dev).reshape((k, m) if s["ta"] else (m, k))
        b = hash_unit(k * n, SEED_B, dev).reshape((n, k) if s["tb"] else (k, n))
        sets = [(a.clone(), b.clone()) for _ in range(r)]

        def op(p):
            x, y = p
            return torch.matmul(x.t() if s["ta"] else x, y.t() if s["tb"] else y)

        def check():
            want = op((a.double(), b.double()))
            return rel_err(op(sets[0]), want)

        return (lambda i: op(sets[i % r])), check
    if kind == "sum":
        x = hash_unit(row["rows"] * row["cols"], SEED_A, dev).reshape(row["rows"], row["cols"])
        sets = [x.clone() for _ in range(r)]
        axis = row["axis"]

        def op(t):
            return t.sum() if axis is None else t.sum(dim=axis)

        return (lambda i: op(sets[i % r])), (lambda: rel_err(op(sets[0]), op(x.double())))
    if kind == "fma":
        rows, cols, perm = row["rows"], row["cols"], row["permuted"]
        a = hash_unit(rows * cols, SEED_A, dev).reshape((cols, rows) if perm else (rows, cols))
        b = hash_unit(rows * cols, SEED_B, dev).reshape(rows, cols)
        c = hash_unit(rows * cols, SEED_C, dev).reshape(rows, cols)
        sets = [(a.clone(), b.clone(), c.clone()) for _ in range(r)]

        def op(p):
            x, y, z = p
            # addcmul: PyTorch's one-kernel c + a*b (eager a*b+c would be two kernels).
            return torch.addcmul(z, x.t() if perm else x, y)

        return (lambda i: op(sets[i % r])), (lambda: rel_err(op(sets[0]), op((a.double(), b.double(), c.double()))))
    raise ValueError(kind)


def train_data(features, classes, batch, batches, dev):
    teacher = (hash_unit(features * classes, 7, dev) - 0.5).reshape(features, classes)
    xs, ys = [], []
    for bi in range(batches):
        x = hash_unit(batch * features, 1000 + bi, dev).reshape(batch, features) - 0.5
        y = torch.argmax(x.double() @ teacher.double(), dim=1)
        xs.append(x)
        ys.append(y)
    return xs, ys


def train_row(row, timing, dev):
    layers = row["layers"]
    torch.manual_seed(42)
    mods = []
    for i in range(len(layers) - 1):
        mods.append(torch.nn.Linear(layers[i], layers[i + 1]))
        if i + 2 < len(layers):
            mods.append(torch.nn.ReLU())
    model = torch.nn.Sequential(*mods).to(dev)
    if row["optimizer"] == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=row["lr"])
    else:
        opt = torch.optim.Adam(model.parameters(), lr=row["lr"])
    xs, ys = train_data(layers[0], layers[-1], row["batch"], 8, dev)
    readback = row["readback"]
    # eagermem: the no-tidy rows read the loss every readEvery steps
    read_every = (row.get("noTidy") or {}).get("readEvery", 0)

    def step(i):
        b = i % len(xs)
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(xs[b]), ys[b])
        loss.backward()
        opt.step()
        if readback or (read_every and (i + 1) % read_every == 0):
            loss.item()

    sec, iters, samples = time_fn(step, timing)
    # The check of bench/src/framework.ts: one more step on batch 0 must lower batch 0's loss.
    with torch.no_grad():
        before = F.cross_entropy(model(xs[0]), ys[0]).item()
    step(0)
    with torch.no_grad():
        after = F.cross_entropy(model(xs[0]), ys[0]).item()
    ok = math.isfinite(before) and math.isfinite(after) and after < before
    check = {"lossFirst": before, "lossLast": after, "ok": ok}
    if not ok:
        check["note"] = f"loss did not fall: {before} -> {after}"
    return sec, iters, samples, check


def overhead_row(row, timing, dev):
    size = row["size"]
    state = {"x": torch.zeros(size, device=dev), "n": 0}
    y = torch.ones(size, device=dev)

    def step(i):
        state["x"] = state["x"] + y
        state["n"] += 1

    sec, iters, samples = time_fn(step, timing, fixed_iters=row["ops"])
    got = state["x"]
    want = torch.full_like(got, float(state["n"]))
    return sec, iters, samples, {"relErr": rel_err(got, want), "ok": rel_err(got, want) <= 1e-3}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    with open(args.spec) as f:
        spec = json.load(f)
    timing = spec["timing"]
    quick = spec.get("quick", False)
    dev = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    env = {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "device": torch.cuda.get_device_name(0),
        "python": sys.version.split()[0],
        "tf32": False,
    }
    results = {}
    t0 = time.time()
    for row in spec["rows"]:
        rid = row["id"]
        try:
            kind = row["kind"]
            if kind in ("matmul", "sum", "fma"):
                step, check = kernel_row(row, quick, dev)
                sec, iters, samples = time_fn(step, timing)
                e = check()
                chk = {"relErr": e, "ok": e <= 1e-3}
            elif kind == "train":
                sec, iters, samples, chk = train_row(row, timing, dev)
            elif kind == "overhead":
                sec, iters, samples, chk = overhead_row(row, timing, dev)
            else:
                results[rid] = {"na": "Surf only"}
                continue
            results[rid] = {
                "value": to_unit(row, sec),
                "secondsPerIter": sec,
                "iters": iters,
                "repeats": len(samples),
                "samples": samples,
                "check": chk,
            }
            print(f"# torch {rid}: {results[rid]['value']:.4g} {row['unit']}  [{time.time() - t0:.0f} s]", flush=True)
        except Exception as ex:  # one failing row must not lose the others
            results[rid] = {"na": f"torch failed: {type(ex).__name__}: {str(ex).splitlines()[0] if str(ex) else ''}"}
            print(f"# torch {rid}: {results[rid]['na']}", flush=True)
        torch.cuda.empty_cache()
    with open(args.out, "w") as f:
        json.dump({"env": env, "results": results}, f)


if __name__ == "__main__":
    main()
