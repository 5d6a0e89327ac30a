"""PyTorch twin of scripts/gpu/cliff-lab.ts: the same matmuls and plain-attention pieces, CUDA, TF32 off."""
import time

import torch

torch.backends.cuda.matmul.allow_tf32 = False
dev = torch.device("cuda")


def bench(label, fn, work=0):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        torch.cuda.synchronize()
        ms = (time.perf_counter() - t0) * 1000
        if ms > 200 or n >= 4096:
            break
        n *= 2
    per = ms / n
    v = work / (per / 1000) / 1e9 if work else per * 1000
    print(f"{label:<48} {v:>10.1f} {'GFLOP/s' if work else 'us'}")


MM = [
    ("mm 1024^3", [1024, 1024], [1024, 1024], False, False),
    ("mm 1000x1000x300", [1000, 1000], [1000, 300], False, False),
    ("mm 100x1000x300", [100, 1000], [1000, 300], False, False),
    ("mm 100x1000x300 bT", [100, 1000], [300, 1000], False, True),
    ("mm 1000x100x300 aT (wgrad)", [100, 1000], [100, 300], True, False),
    ("mm 3x4099x515", [3, 4099], [4099, 515], False, False),
    ("mm 4099x3x515 aT (wgrad k=3)", [3, 4099], [3, 515], True, False),
    ("mm 3x515x4099 bT (dgrad)", [3, 515], [4099, 515], False, True),
    ("mm 1x37x129", [1, 37], [37, 129], False, False),
    ("mm 13x71x71", [13, 71], [71, 71], False, False),
    ("mm 1848x200x800", [1848, 200], [200, 800], False, False),
    ("mm 1848x800x200", [1848, 800], [800, 200], False, False),
    ("mm 200x1848x800 aT", [1848, 200], [1848, 800], True, False),
    ("mm 512x1023x257 bT", [512, 1023], [257, 1023], False, True),
    ("mm 32x96x30011", [32, 96], [96, 30011], False, False),
    ("mm 96x32x30011 aT", [32, 96], [32, 30011], True, False),
]
with torch.no_grad():
    for label, as_, bs, ta, tb in MM:
        a = torch.randn(as_, device=dev)
        b = torch.randn(bs, device=dev)
        A = a.t() if ta else a
        B = b.t() if tb else b
        bench(label, lambda: A @ B, 2 * A.shape[0] * A.shape[1] * B.shape[1])
B_, H, L, E = 16, 8, 1024, 64
q = torch.randn(B_, H, L, E, device=dev, requires_grad=True)
k = torch.randn(B_, H, L, E, device=dev, requires_grad=True)
v = torch.randn(B_, H, L, E, device=dev, requires_grad=True)
mask = torch.ones(L, L, device=dev).tril() > 0
s = 1 / E**0.5
bmm = 2 * B_ * H * L * L * E
with torch.no_grad():
    bench("attn q·kT", lambda: q @ k.transpose(-2, -1), bmm)
    sc = q @ k.transpose(-2, -1) * s
    bench("attn where(mask, s, -inf)", lambda: torch.where(mask, sc, float("-inf")))
    bench("attn softmax(-1) [16,8,1024,1024]", lambda: sc.softmax(-1))
    p = sc.softmax(-1)
    bench("attn p·v", lambda: p @ v, bmm)
    fwd = lambda: torch.where(mask, q @ k.transpose(-2, -1) * s, float("-inf")).softmax(-1) @ v
    bench("attn plain fwd", fwd, 2 * bmm)
g = torch.randn(B_, H, L, E, device=dev)


def fb():
    torch.where(mask, q @ k.transpose(-2, -1) * s, float("-inf")).softmax(-1).matmul(v).backward(g)
    q.grad = k.grad = v.grad = None


bench("attn plain fwd+bwd", fb, 6 * bmm)


def ff():
    torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True).backward(g)
    q.grad = k.grad = v.grad = None


bench("attn fused fwd+bwd", ff, 6 * bmm * 0.5)
