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

import zoo

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


# False with --device cpu: timing by the host clock, no CUDA calls.
ON_CUDA = True


def sync():
    if ON_CUDA:
        torch.cuda.synchronize()


def cuda_time(fn, n):
    if not ON_CUDA:  # --device cpu: the smoke form of the rows
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        return time.perf_counter() - t0
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
        sync()
    # The warm-up time the JavaScript frameworks get for this row (suite.ts warmupMsOf).
    w0 = time.perf_counter()
    n = 4
    while (time.perf_counter() - w0) * 1000 < timing.get("warmupMs", 0):
        for _ in range(n):
            one()
        sync()
        n = min(timing["maxIters"], n * 2)
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
    if unit == "GFLOP/s" and kind == "attention":
        return attention_flops(row) / sec / 1e9
    if kind == "conv":
        return conv_work(row) / sec / 1e9
    if unit == "GFLOP/s":
        s = row["spec"]
        return 2 * s["m"] * s["k"] * s["n"] / sec / 1e9
    if unit == "tokens/s":
        c = row["config"]
        return c["batchSize"] * c["blockSize"] / sec
    if kind == "random":
        return 4 * row["size"] / sec / 1e9
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


def reads_loss(row, i):
    """bench/src/rows.ts readsLoss: every step, or every readEvery-th step."""
    if row.get("readback"):
        return True
    every = row.get("readEvery", 0)
    return every > 0 and i % every == every - 1


def train_row(row, timing, dev):
    layers = row["layers"]
    torch.manual_seed(42)
    mods = []
    for i in range(len(layers) - 1):
        mods.append(torch.nn.Linear(layers[i], layers[i + 1]))
        if i + 2 < len(layers):
            mods.append(torch.nn.ReLU())
            if row.get("dropout"):
                mods.append(torch.nn.Dropout(row["dropout"]))
    model = torch.nn.Sequential(*mods).to(dev)
    graph = row.get("loop") == "jit"
    if graph and dev.type != "cuda":
        raise RuntimeError("CUDA graphs need a CUDA device")
    if row["optimizer"] == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=row["lr"])
    else:
        # capturable: Adam's step count lives on the GPU, so a CUDA graph can replay it.
        opt = torch.optim.Adam(model.parameters(), lr=row["lr"], capturable=graph)
    xs, ys = train_data(layers[0], layers[-1], row["batch"], 8, dev)
    if graph:
        step = graph_step(model, opt, xs, ys, row)
    else:
        def step(i):
            b = i % len(xs)
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(xs[b]), ys[b])
            loss.backward()
            opt.step()
            if reads_loss(row, i):
                loss.item()

    sec, iters, samples = time_fn(step, timing)

    # The check of bench/src/framework.ts: one more step on batch 0 must lower batch 0's loss
    # (read in eval mode, so Dropout adds no noise between the two readings).
    def loss0():
        model.eval()
        try:
            return F.cross_entropy(model(xs[0]), ys[0])
        finally:
            model.train()

    return sec, iters, samples, step_check(loss0, step)


def step_check(loss0, step):
    """One more step on batch 0 must lower batch 0's loss (bench/src/framework.ts trainCheck)."""
    with torch.no_grad():
        before = loss0().item()
    step(0)
    sync()
    with torch.no_grad():
        after = loss0().item()
    return loss_check(before, after)


def loss_check(before, after):
    fitted = 1e-4
    ok = math.isfinite(before) and math.isfinite(after) and (after < before or (before < fitted and after <= before))
    check = {"lossFirst": before, "lossLast": after, "ok": ok}
    if not ok:
        check["note"] = f"loss did not fall: {before} -> {after}"
    return check


def graph_step(model, opt, xs, ys, row):
    """The whole step (forward, loss, backward, optimizer) in one CUDA graph, as PyTorch's
    "whole network capture" recipe: warm up on a side stream, capture once with static
    input buffers, then each step copies its batch in and replays."""
    static_x = xs[0].clone()
    static_y = ys[0].clone()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            F.cross_entropy(model(static_x), static_y).backward()
            opt.step()
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(g):
        static_loss = F.cross_entropy(model(static_x), static_y)
        static_loss.backward()
        opt.step()

    def step(i):
        b = i % len(xs)
        static_x.copy_(xs[b])
        static_y.copy_(ys[b])
        g.replay()
        if reads_loss(row, i):
            static_loss.item()

    return step


def attention_flops(row):
    """bench/src/rows.ts attentionFlops: FlashAttention's count, forward + backward = 3.5x forward."""
    f = 4 * row["batch"] * row["heads"] * row["len"] * row["len"] * row["dim"]
    return 3.5 * f * (0.5 if row["causal"] else 1)


def attention_row(row, timing, dev):
    """Forward + backward of causal attention: fused SDPA or the plain composite."""
    B, H, L, E = row["batch"], row["heads"], row["len"], row["dim"]
    n = B * H * L * E

    def centred(seed):
        return (hash_unit(n, seed, dev) - 0.5).reshape(B, H, L, E)

    q, k, v = (centred(s).requires_grad_() for s in (SEED_A, SEED_B, SEED_C))
    g = centred(4)
    keep = torch.ones(L, L, dtype=torch.bool, device=dev).tril()
    scale = 1 / math.sqrt(E)

    def fwd(a, b, c):
        if row["impl"] == "fused":
            return F.scaled_dot_product_attention(a, b, c, is_causal=row["causal"])
        return ((a @ b.transpose(-2, -1)) * scale).masked_fill(~keep, float("-inf")).softmax(-1) @ c

    def step(i):
        fwd(q, k, v).backward(g)
        q.grad = k.grad = v.grad = None

    sec, iters, samples = time_fn(step, timing)
    with torch.no_grad():
        want = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=row["causal"])
        e = rel_err(fwd(q, k, v), want)
    return sec, iters, samples, {"relErr": e, "ok": e <= 1e-3}


def conv_out(row):
    if row["op"] == "conv2d":
        return row["size"] + 2 * row["padding"] - row["kernel"] + 1
    return row["size"] // row["kernel"]


def conv_work(row):
    """bench/src/rows.ts convWork: conv2d FLOPs (forward + both gradients), maxPool2d bytes."""
    o = conv_out(row)
    N, C, S, O, k = row["batch"], row["channels"], row["size"], row["outChannels"], row["kernel"]
    if row["op"] == "conv2d":
        return 3 * 2 * N * O * o * o * C * k * k
    return 4 * N * C * (2 * S * S + 2 * o * o)


def conv_row(row, timing, dev):
    """conv2d (cuDNN, TF32 off; data and weight gradients) or max_pool2d, forward + backward."""
    N, C, S, O, k, pad = row["batch"], row["channels"], row["size"], row["outChannels"], row["kernel"], row["padding"]
    o = conv_out(row)
    conv = row["op"] == "conv2d"
    out_c = O if conv else C
    x = (hash_unit(N * C * S * S, SEED_A, dev) - 0.5).reshape(N, C, S, S).requires_grad_()
    w = ((hash_unit(O * C * k * k, SEED_B, dev) - 0.5) / math.sqrt(C * k * k)).reshape(O, C, k, k).requires_grad_()
    g = (hash_unit(N * out_c * o * o, 4, dev) - 0.5).reshape(N, out_c, o, o)

    def fwd(a, b):
        return F.conv2d(a, b, padding=pad) if conv else F.max_pool2d(a, k)

    def step(i):
        fwd(x, w).backward(g)
        x.grad = w.grad = None

    sec, iters, samples = time_fn(step, timing)
    with torch.no_grad():
        e = rel_err(fwd(x, w), fwd(x.double(), w.double()))
    return sec, iters, samples, {"relErr": e, "ok": e <= 1e-3}


class GptBlock(torch.nn.Module):
    """examples/gpt's pre-norm block: x + attn(ln(x)), then x + proj(gelu(fc(ln(x))))."""

    def __init__(self, C, nh):
        super().__init__()
        self.ln1, self.ln2 = torch.nn.LayerNorm(C), torch.nn.LayerNorm(C)
        self.attn = torch.nn.MultiheadAttention(C, nh, batch_first=True)
        self.fc, self.proj = torch.nn.Linear(C, 4 * C), torch.nn.Linear(4 * C, C)

    def forward(self, x, mask):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False, attn_mask=mask, is_causal=True)[0]
        return x + self.proj(F.gelu(self.fc(self.ln2(x))))


class Gpt(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        C = c["nEmbd"]
        self.tok, self.pos = torch.nn.Embedding(c["vocabSize"], C), torch.nn.Embedding(c["blockSize"], C)
        self.blocks = torch.nn.ModuleList(GptBlock(C, c["nHead"]) for _ in range(c["nLayer"]))
        self.ln, self.head = torch.nn.LayerNorm(C), torch.nn.Linear(C, c["vocabSize"], bias=False)

    def forward(self, idx):
        T = idx.shape[1]
        mask = torch.ones(T, T, dtype=torch.bool, device=idx.device).triu(1)
        x = self.tok(idx) + self.pos(torch.arange(T, device=idx.device))
        for b in self.blocks:
            x = b(x, mask)
        return self.head(self.ln(x))


def token_data(vocab, batch, T, batches, dev):
    """bench/src/data.ts tokenData: windows of a noisy rule id' = (7 id + 3 + n) mod vocab."""
    xs, ys = [], []
    for b in range(batches):
        u = hash_unit(batch * (T + 1), 2000 + b, dev).reshape(batch, T + 1)
        ids = torch.empty(batch, T + 1, dtype=torch.int64, device=dev)
        ids[:, 0] = (u[:, 0] * vocab).floor().long()
        for j in range(1, T + 1):
            ids[:, j] = (7 * ids[:, j - 1] + 3 + (3 * u[:, j]).floor().long()) % vocab
        xs.append(ids[:, :-1].contiguous())
        ys.append(ids[:, 1:].contiguous())
    return xs, ys


def gpt_lr(c, t):
    """bench/src/surf-models.ts gptLr: the example's linear warmup, then cosine to lr/10."""
    warm = max(1, min(c["warmup"], c["steps"] - 1))
    if t < warm:
        return c["lr"] * (t + 1) / warm
    t_max = max(1, c["steps"] - warm)
    lo = c["lr"] / 10
    return lo + (c["lr"] - lo) * (1 + math.cos(math.pi * (t - warm + 1) / t_max)) / 2


def gpt_row(row, timing, quick, dev):
    """examples/gpt's training step in eager PyTorch: AdamW (decay on matrices), clipping, lr schedule."""
    c = row["config"]
    torch.manual_seed(1)
    model = Gpt(c).to(dev)
    params = list(model.parameters())
    opt = torch.optim.AdamW([
        {"params": [p for p in params if p.dim() >= 2], "weight_decay": c["weightDecay"]},
        {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
    ], lr=c["lr"], betas=tuple(c["betas"]))
    V = c["vocabSize"]
    xs, ys = token_data(V, c["batchSize"], c["blockSize"], 2 if quick else 8, dev)

    def loss_of(b):
        return F.cross_entropy(model(xs[b]).reshape(-1, V), ys[b].reshape(-1))

    with torch.no_grad():
        first = loss_of(0).item()
    t = [0]

    def step(i):
        for group in opt.param_groups:
            group["lr"] = gpt_lr(c, t[0])
        t[0] += 1
        b = i % len(xs)
        opt.zero_grad(set_to_none=True)
        loss = loss_of(b)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, c["clip"])
        opt.step()
        if reads_loss(row, i):
            loss.item()

    sec, iters, samples = time_fn(step, timing)
    with torch.no_grad():
        last = loss_of(0).item()
    return sec, iters, samples, loss_check(first, last)


def cnn_row(row, timing, dev):
    """examples/cnn's architecture: [conv 3x3 pad 1 (no bias), BatchNorm2d, ReLU, max pool 2] per block, linear."""
    torch.manual_seed(42)
    layers, in_c, side = [], 1, 28
    for ch in row["channels"]:
        layers += [torch.nn.Conv2d(in_c, ch, 3, padding=1, bias=False), torch.nn.BatchNorm2d(ch), torch.nn.ReLU(), torch.nn.MaxPool2d(2)]
        in_c, side = ch, side // 2
    layers += [torch.nn.Flatten(), torch.nn.Linear(in_c * side * side, 10)]
    model = torch.nn.Sequential(*layers).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=row["lr"])
    xs, ys = train_data(784, 10, row["batch"], 8, dev)
    xs = [x.reshape(-1, 1, 28, 28) for x in xs]

    def step(i):
        b = i % len(xs)
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(model(xs[b]), ys[b]).backward()
        opt.step()

    sec, iters, samples = time_fn(step, timing)
    return sec, iters, samples, step_check(lambda: F.cross_entropy(model(xs[0]), ys[0]), step)


def random_row(row, timing, dev):
    """bench/src/rows.ts RandomRow: row["size"] values of torch.randn / torch.rand per iteration."""
    torch.manual_seed(42)
    draw = torch.randn if row["dist"] == "normal" else torch.rand
    state = {"last": None}

    def step(i):
        state["last"] = draw(row["size"], device=dev)

    sec, iters, samples = time_fn(step, timing)
    v = draw(row["size"], device=dev).double()
    m, q = v.mean().item(), v.var(unbiased=False).item()
    wm, wq = (0.0, 1.0) if row["dist"] == "normal" else (0.5, 1 / 12)
    ok = abs(m - wm) < 0.01 and abs(q - wq) < 0.01 * max(wq, 0.1)
    return sec, iters, samples, {"ok": ok, "note": f"mean {m:.4f}, variance {q:.4f}"}


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
    ap.add_argument("--device", default="cuda", help="cuda (the suite), or cpu to smoke-test the rows without a GPU")
    args = ap.parse_args()
    with open(args.spec) as f:
        spec = json.load(f)
    quick = spec.get("quick", False)
    global ON_CUDA
    dev = torch.device(args.device)
    ON_CUDA = dev.type == "cuda"
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    env = {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "device": torch.cuda.get_device_name(0) if dev.type == "cuda" else "cpu",
        "python": sys.version.split()[0],
        "tf32": False,
    }
    results = {}
    t0 = time.time()
    for row in spec["rows"]:
        rid = row["id"]
        timing = {**spec["timing"], "warmupMs": spec.get("warmupMs", {}).get(rid, 0)}
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
            elif kind == "random":
                sec, iters, samples, chk = random_row(row, timing, dev)
            elif kind == "attention":
                sec, iters, samples, chk = attention_row(row, timing, dev)
            elif kind == "gpt":
                sec, iters, samples, chk = gpt_row(row, timing, quick, dev)
            elif kind == "cnn":
                sec, iters, samples, chk = cnn_row(row, timing, dev)
            elif kind == "conv":
                sec, iters, samples, chk = conv_row(row, timing, dev)
            elif kind == "zoo":
                sec, iters, samples, chk = zoo.zoo_row(row, timing, dev, hash_unit, time_fn, loss_check, sync)
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
        if dev.type == "cuda":
            torch.cuda.empty_cache()
    with open(args.out, "w") as f:
        json.dump({"env": env, "results": results}, f)


if __name__ == "__main__":
    main()
