"""PyTorch peer of `npm run gpt:bench`: causal f32 attention at the same shape, fused SDPA and
plain softmax(QK^T)V, forward and forward+backward, ms per call after warm-up; then the
example's GPT (same config: 4 layers, 128 wide, context 128, batch 32, vocab 85) in tokens/s
in eager mode. Usage: python examples/gpt/bench/attention.py [--shape 16,8,1024,64]"""
import argparse, math, time
import torch
import torch.nn as nn
import torch.nn.functional as F

p = argparse.ArgumentParser()
p.add_argument('--shape', default='16,8,1024,64')
p.add_argument('--iters', type=int, default=10)
a = p.parse_args()
B, H, L, E = map(int, a.shape.split(','))
dev = 'cuda'
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
q, k, v = (torch.randn(B, H, L, E, device=dev, requires_grad=True) for _ in range(3))
g = torch.randn(B, H, L, E, device=dev)
mask = torch.ones(L, L, dtype=torch.bool, device=dev).tril()

def timed(fn):
    for _ in range(2): fn()
    torch.cuda.synchronize(); t0 = time.perf_counter()
    for _ in range(a.iters): fn()
    torch.cuda.synchronize(); return (time.perf_counter() - t0) / a.iters * 1e3

fused = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True)
plain = lambda: (q @ k.transpose(-2, -1) / math.sqrt(E)).masked_fill(~mask, float('-inf')).softmax(-1) @ v
flops = 4 * B * H * L * L * E * 0.5
for name, f in (('fused', fused), ('plain', plain)):
    with torch.no_grad(): fwd = timed(f)
    both = timed(lambda: f().backward(g))
    print(f'{name:6} forward {fwd:.2f} ms ({flops / fwd / 1e6:.0f} GFLOP/s), forward+backward {both:.2f} ms ({3.5 * flops / both / 1e6:.0f} GFLOP/s)')

class Block(nn.Module):
    def __init__(s, C, nh):
        super().__init__(); s.ln1, s.ln2 = nn.LayerNorm(C), nn.LayerNorm(C)
        s.attn = nn.MultiheadAttention(C, nh, batch_first=True); s.fc, s.proj = nn.Linear(C, 4 * C), nn.Linear(4 * C, C)
    def forward(s, x):
        T = x.shape[1]; h = s.ln1(x)
        x = x + s.attn(h, h, h, need_weights=False, attn_mask=torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1), is_causal=True)[0]
        return x + s.proj(F.gelu(s.fc(s.ln2(x))))

class Gpt(nn.Module):
    def __init__(s, V=85, T=128, C=128, nh=4, nl=4):
        super().__init__(); s.tok, s.pos = nn.Embedding(V, C), nn.Embedding(T, C)
        s.blocks = nn.ModuleList(Block(C, nh) for _ in range(nl)); s.ln, s.head = nn.LayerNorm(C), nn.Linear(C, V, bias=False)
    def forward(s, idx):
        x = s.tok(idx) + s.pos(torch.arange(idx.shape[1], device=idx.device))
        for b in s.blocks: x = b(x)
        return s.head(s.ln(x))

m = Gpt().to(dev); opt = torch.optim.AdamW(m.parameters(), lr=2e-3)
x = torch.randint(0, 85, (32, 129), device=dev)
def step():
    opt.zero_grad(); loss = F.cross_entropy(m(x[:, :-1]).reshape(-1, 85), x[:, 1:].reshape(-1)); loss.backward()
    torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0); opt.step(); loss.item()
ms = timed(step)
print(f'gpt training step (eager): {32 * 128 / ms * 1e3:,.0f} tokens/s')
