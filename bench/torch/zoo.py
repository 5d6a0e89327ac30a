"""PyTorch twins of the zoo (bench/src/zoo/models.ts): each model written the plain way, built
from the same config the row carries, trained on the same inputs (bench.py's hash_unit).

The eager row is PyTorch's eager loop; the jit row is the whole step in one CUDA graph where
PyTorch can capture it (a plain eager figure is reported too, so both ratios can be read).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCHES = 4


def floats(hash_unit, shape, seed, dev, scale=1.0):
    n = math.prod(shape)
    return ((hash_unit(n, seed, dev) - 0.5) * 2 * scale).reshape(shape)


def ints(hash_unit, shape, classes, seed, dev):
    n = math.prod(shape)
    return torch.floor(hash_unit(n, seed, dev) * classes).to(torch.int64).reshape(shape)


def make_batches(hash_unit, dev, x_shape, y_shape, classes=None, x_ints=None):
    out = []
    for b in range(BATCHES):
        x = ints(hash_unit, x_shape, x_ints, 100 + b, dev) if x_ints is not None else floats(hash_unit, x_shape, 100 + b, dev)
        y = ints(hash_unit, y_shape, classes, 200 + b, dev) if classes is not None else floats(hash_unit, y_shape, 200 + b, dev, 0.5)
        out.append((x, y))
    return out


def act(name):
    return {"relu": nn.ReLU, "tanh": nn.Tanh, "gelu": nn.GELU}[name]()


class Ffn(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.ln = nn.LayerNorm(m["dim"])
        self.fc1 = nn.Linear(m["dim"], m["hidden"])
        self.fc2 = nn.Linear(m["hidden"], m["dim"])

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.ln(x))))


class SelfAttention(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.heads = m["heads"]
        self.qkv = nn.Linear(m["dim"], 3 * m["dim"])
        self.proj = nn.Linear(m["dim"], m["dim"])

    def forward(self, x):
        B, L, C = x.shape
        D = C // self.heads
        q, k, v = [t.view(B, L, self.heads, D).transpose(1, 2) for t in self.qkv(x).split(C, dim=2)]
        mask = torch.ones(L, L, device=x.device).triu(1) > 0
        att = (q @ k.transpose(-2, -1) * (1 / math.sqrt(D))).masked_fill(mask, float("-inf")).softmax(-1)
        return self.proj((att @ v).transpose(1, 2).reshape(B, L, C))


class Bag(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.emb = nn.Embedding(m["vocab"], m["dim"])
        self.head = nn.Linear(m["dim"], m["vocab"])

    def forward(self, idx):
        return self.head(self.emb(idx).mean(1))


class Chain(nn.Module):
    def __init__(self, m, w):
        super().__init__()
        self.depth = m["depth"]
        self.w = nn.Parameter(w)

    def forward(self, x):
        h = x
        for i in range(self.depth):
            r = i % 6
            if r == 0:
                h = h * self.w
            elif r == 1:
                h = h.tanh()
            elif r == 2:
                h = h + self.w
            elif r == 3:
                h = h * h.sigmoid()
            elif r == 4:
                h = h - self.w * 0.5
            else:
                h = (h * 0.9).sin()
        return h


class RmsBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.g = nn.Parameter(torch.ones(dim))
        self.lin = nn.Linear(dim, dim)

    def forward(self, x):
        n = x * (x * x).mean(-1, keepdim=True).add(1e-6).rsqrt() * self.g
        return x + F.silu(self.lin(n))


class Rnn(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.hidden = m["hidden"]
        self.wx = nn.Linear(m["input"], m["hidden"])
        self.wh = nn.Linear(m["hidden"], m["hidden"], bias=False)
        self.out = nn.Linear(m["hidden"], m["classes"])

    def forward(self, x):
        h = torch.zeros(x.shape[0], self.hidden, device=x.device)
        for t in range(x.shape[1]):
            h = torch.tanh(self.wx(x[:, t]) + self.wh(h))
        return self.out(h)


def build(m, hash_unit, dev):
    """(module, loss(x, y), batches) for one zoo config."""
    a = m["arch"]
    if a == "mlp":
        L = m["layers"]
        mods = []
        for i in range(len(L) - 1):
            mods.append(nn.Linear(L[i], L[i + 1]))
            if i + 2 < len(L):
                mods.append(act(m["act"]))
                if m["dropout"] > 0:
                    mods.append(nn.Dropout(m["dropout"]))
        net = nn.Sequential(*mods).to(dev)
        return net, lambda x, y: F.cross_entropy(net(x), y), make_batches(hash_unit, dev, [m["batch"], L[0]], [m["batch"]], classes=L[-1])
    if a == "ffn":
        net = Ffn(m).to(dev)
        shape = [m["batch"], m["seq"], m["dim"]]
        return net, lambda x, y: F.mse_loss(net(x), y), make_batches(hash_unit, dev, shape, shape)
    if a == "attn":
        net = SelfAttention(m).to(dev)
        shape = [m["batch"], m["seq"], m["dim"]]
        return net, lambda x, y: F.mse_loss(net(x), y), make_batches(hash_unit, dev, shape, shape)
    if a == "embed":
        net = Bag(m).to(dev)
        return net, lambda x, y: F.cross_entropy(net(x), y), make_batches(
            hash_unit, dev, [m["batch"], m["seq"]], [m["batch"]], classes=m["vocab"], x_ints=m["vocab"])
    if a == "chain":
        net = Chain(m, floats(hash_unit, [m["rows"], m["cols"]], 7, dev, 0.5)).to(dev)
        shape = [m["rows"], m["cols"]]
        return net, lambda x, y: F.mse_loss(net(x), y), make_batches(hash_unit, dev, shape, shape)
    if a == "rmsnorm":
        net = nn.Sequential(*[RmsBlock(m["dim"]) for _ in range(m["blocks"])]).to(dev)
        shape = [m["batch"], m["dim"]]
        return net, lambda x, y: F.mse_loss(net(x), y), make_batches(hash_unit, dev, shape, shape)
    if a == "stem":
        w = m["width"]
        net = nn.Sequential(
            nn.Conv2d(3, w, 7, stride=2, padding=3, bias=False), nn.BatchNorm2d(w), nn.ReLU(),
            nn.MaxPool2d(3, stride=2, padding=1), nn.Conv2d(w, w, 3, padding=1), nn.ReLU(),
            nn.Conv2d(w, 2 * w, 1, stride=2), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
            nn.Linear(2 * w, 10)).to(dev)
        return net, lambda x, y: F.cross_entropy(net(x), y), make_batches(
            hash_unit, dev, [m["batch"], 3, m["size"], m["size"]], [m["batch"]], classes=10)
    if a == "conv":
        c0, c1, c2 = m["channels"]
        o = (m["size"] - 3) // 2 + 1
        net = nn.Sequential(
            nn.Conv2d(c0, c1, 3, padding=1), nn.ReLU(), nn.Conv2d(c1, c2, 3, stride=2), nn.ReLU(),
            nn.Flatten(), nn.Linear(c2 * o * o, 10)).to(dev)
        return net, lambda x, y: F.cross_entropy(net(x), y), make_batches(
            hash_unit, dev, [m["batch"], c0, m["size"], m["size"]], [m["batch"]], classes=10)
    if a == "rnn":
        net = Rnn(m).to(dev)
        return net, lambda x, y: F.cross_entropy(net(x), y), make_batches(
            hash_unit, dev, [m["batch"], m["seq"], m["input"]], [m["batch"]], classes=m["classes"])
    if a == "redloss":
        net = nn.Linear(m["features"], m["classes"]).to(dev)

        def red_loss(x, y):
            logits = net(x)
            return F.cross_entropy(logits, y) + logits.var(1).mean() * 0.1 + logits.logsumexp(1).mean() * 0.01

        return net, red_loss, make_batches(hash_unit, dev, [m["batch"], m["features"]], [m["batch"]], classes=m["classes"])
    if a == "longrow":
        net = nn.Sequential(nn.LayerNorm(m["features"]), nn.Linear(m["features"], m["hidden"]), nn.ReLU(),
                            nn.Linear(m["hidden"], 1)).to(dev)
        return net, lambda x, y: F.mse_loss(net(x), y), make_batches(hash_unit, dev, [m["batch"], m["features"]], [m["batch"], 1])
    raise ValueError(f"unknown zoo arch {a}")


def optimizer(o, params, capturable):
    if o["name"] == "sgd":
        return torch.optim.SGD(params, lr=o["lr"], momentum=o["momentum"])
    if o["name"] == "adam":
        return torch.optim.Adam(params, lr=o["lr"], capturable=capturable)
    return torch.optim.AdamW(params, lr=o["lr"], weight_decay=o["weightDecay"], capturable=capturable)


def zoo_row(row, timing, dev, hash_unit, time_fn, loss_check, sync):
    """bench.py's runner of a zoo row: (sec, iters, samples, check)."""
    torch.manual_seed(42)
    graph = row["loop"] == "jit"
    if graph and dev.type != "cuda":
        raise RuntimeError("CUDA graphs need a CUDA device")
    net, loss_fn, batches = build(row["model"], hash_unit, dev)
    net.train()
    opt = optimizer(row["optimizer"], net.parameters(), graph)

    def eager(i):
        x, y = batches[i % len(batches)]
        opt.zero_grad(set_to_none=True)
        loss_fn(x, y).backward()
        opt.step()

    # Dropout's fresh mask makes a train-mode loss noisy: the check reads the loss in eval mode.
    has_dropout = row["model"]["arch"] == "mlp" and row["model"]["dropout"] > 0

    def loss0():
        with torch.no_grad():
            if has_dropout:
                net.eval()
            loss = loss_fn(*batches[0]).item()
            net.train()
            return loss

    # The check (as surf-zoo.ts): batch 0's loss after all the timed steps is below the first.
    initial = loss0()
    step = graph_step(net, opt, loss_fn, batches) if graph else eager
    sec, iters, samples = time_fn(step, timing)
    sync()
    return sec, iters, samples, loss_check(initial, loss0())


def graph_step(net, opt, loss_fn, batches):
    """The whole step in one CUDA graph with static inputs, PyTorch's whole-network capture."""
    sx = batches[0][0].clone()
    sy = batches[0][1].clone()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            loss_fn(sx, sy).backward()
            opt.step()
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(g):
        loss_fn(sx, sy).backward()
        opt.step()

    def step(i):
        x, y = batches[i % len(batches)]
        sx.copy_(x)
        sy.copy_(y)
        g.replay()

    return step
