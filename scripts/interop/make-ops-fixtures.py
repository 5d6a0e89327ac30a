"""Writes PyTorch's values for the tensor ops to packages/autograd/test/fixtures/ops.json, and
for cross entropy / NLL (ignore_index, weight, [N, C, d...]) to packages/nn/test/fixtures/losses-ce.json.

Run by hand with PyTorch installed (the tests do not need PyTorch):

    /usr/bin/python3 scripts/interop/make-ops-fixtures.py

Each case has inputs (values, shape, dtype, whether they require grad), PyTorch's outputs, and
for differentiable cases a fixed upstream gradient `cot` per output with PyTorch's gradients of
sum(out * cot) for every input that requires grad. packages/autograd/test/ops-torch.test.ts
maps each case name to the Surf call and compares on every backend; so does
packages/nn/test/cross-entropy-torch.test.ts for the loss cases.
"""
import json
import math
from pathlib import Path

import torch

OUT = Path(__file__).resolve().parents[2] / 'packages/autograd/test/fixtures/ops.json'
torch.manual_seed(0)


def enc(v):
    if isinstance(v, float) and math.isnan(v):
        return 'nan'
    if isinstance(v, float) and math.isinf(v):
        return 'inf' if v > 0 else '-inf'
    return v


def pack(t):
    dt = {torch.float32: 'float32', torch.int32: 'int32', torch.int64: 'int32', torch.bool: 'bool'}[t.dtype]
    vals = t.detach().reshape(-1).tolist()
    if dt == 'bool':
        vals = [1 if v else 0 for v in vals]
    return {'shape': list(t.shape), 'dtype': dt, 'data': [enc(float(v)) if dt == 'float32' else int(v) for v in vals]}


cases = []


def case(name, fn, *inputs, grad=True, fixed=()):
    """inputs: tensors; float ones require grad when grad is True. fixed: more inputs that never do."""
    ins = [x.clone().requires_grad_(grad and x.dtype == torch.float32) for x in inputs]
    ins += [x.clone() for x in fixed]
    out = fn(*ins)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    entry = {'name': name, 'inputs': [dict(pack(x), requiresGrad=x.requires_grad) for x in ins],
             'outputs': [pack(o) for o in outs]}
    diff = [o for o in outs if o.dtype == torch.float32 and o.requires_grad]
    wants = [x for x in ins if x.requires_grad]
    if diff and wants:
        cots = [torch.randn(o.shape) for o in outs]
        total = sum((o * c).sum() for o, c in zip(outs, cots) if o.dtype == torch.float32 and o.requires_grad)
        gs = torch.autograd.grad(total, wants, allow_unused=True)
        it = iter(gs)
        entry['cots'] = [pack(c) for c in cots]
        entry['grads'] = [(pack(next(it)) if x.requires_grad else None) for x in ins]
        entry['grads'] = [None if g is None else g for g in entry['grads']]
    cases.append(entry)


r = lambda *s: torch.randn(*s)
special = torch.tensor([1.0, float('nan'), float('inf'), -float('inf'), 0.0, -2.5, 3e38, -1e-30])

case('isnan', torch.isnan, special, grad=False)
case('isinf', torch.isinf, special, grad=False)
case('isfinite', torch.isfinite, special, grad=False)
case('isnan int', torch.isnan, torch.tensor([1, -2, 0], dtype=torch.int32), grad=False)
case('isfinite int', torch.isfinite, torch.tensor([1, -2, 0], dtype=torch.int32), grad=False)
case('nanToNum defaults', torch.nan_to_num, special)
case('nanToNum options', lambda x: torch.nan_to_num(x, nan=1.5, posinf=2.0, neginf=-3.0), special)
a = r(3, 4)
b = a + torch.tensor([0.0, 1e-6, 1e-3, -2e-5]) * a.abs()
b[0, 0] = float('nan')
a[0, 0] = float('nan')
a[1, 1] = float('inf')
b[1, 1] = float('inf')
a[2, 2] = 1.0
b[2, 2] = float('inf')
case('isclose defaults', torch.isclose, a, b, grad=False)
case('isclose rtol atol', lambda x, y: torch.isclose(x, y, rtol=1e-2, atol=1e-4), a, b, grad=False)
case('isclose equalNan', lambda x, y: torch.isclose(x, y, equal_nan=True), a, b, grad=False)
case('cumprod dim 1 with zeros', lambda x: torch.cumprod(x, 1),
     torch.tensor([[1.5, 0.0, 2.0, -1.0, 0.5], [0.0, 0.0, 3.0, 1.0, 2.0], [2.0, -1.5, 0.5, 0.0, 1.25]]))
case('cumprod dim 0', lambda x: torch.cumprod(x, 0), r(5, 2))
case('cumprod int', lambda x: torch.cumprod(x, 0).int(), torch.tensor([2, -3, 4, 0, 5], dtype=torch.int32), grad=False)
case('roll dim 1', lambda x: torch.roll(x, 1, 1), r(3, 4))
case('roll two dims', lambda x: torch.roll(x, (2, -1), (0, 1)), r(3, 4))
case('roll flat', lambda x: torch.roll(x, 3), r(2, 3))
case('roll negative large', lambda x: torch.roll(x, -7, 0), r(3, 2))
case('diag vector offset 1', lambda x: torch.diag(x, 1), r(3))
case('diag vector offset -2', lambda x: torch.diag(x, -2), r(2))
case('diag matrix', torch.diag, r(3, 4))
case('diag matrix offset 1', lambda x: torch.diag(x, 1), r(3, 4))
case('diag matrix offset -1', lambda x: torch.diag(x, -1), r(3, 4))
case('diagonal 3-d dims 1 2 offset 1', lambda x: torch.diagonal(x, 1, 1, 2), r(2, 3, 4))
case('diagonal offset -1 dims 2 0', lambda x: torch.diagonal(x, -1, 2, 0), r(3, 2, 4))
case('outer', torch.outer, r(3), r(4))
case('meshgrid ij', lambda x, y, z: torch.meshgrid(x, y, z, indexing='ij'), r(2), r(3), r(4))
case('meshgrid xy', lambda x, y: torch.meshgrid(x, y, indexing='xy'), r(2), r(3))
case('square', torch.square, r(2, 3))
case('square int', torch.square, torch.tensor([-3, 2, 7], dtype=torch.int32), grad=False)
case('lerp scalar weight', lambda s, e: torch.lerp(s, e, 0.3), r(2, 3), r(3))
case('lerp tensor weight', torch.lerp, r(2, 3), r(2, 3), torch.rand(3))
lo = torch.tensor([0.0, 1.0, float('nan'), -2.0, 0.0, 0.5])
hi = torch.tensor([0.0, 0.0, 1.0, 3.0, float('nan'), 0.0])
case('logicalAnd', torch.logical_and, lo, hi, grad=False)
case('logicalOr', torch.logical_or, lo, hi, grad=False)
case('logicalXor', torch.logical_xor, lo, hi, grad=False)
case('logicalNot', torch.logical_not, lo, grad=False)
case('logicalAnd int bool', torch.logical_and, torch.tensor([0, 3, -1, 0], dtype=torch.int32),
     torch.tensor([True, True, False, False]), grad=False)
m = torch.tensor([[1.0, 3.0, 3.0, 2.0], [-1.0, -4.0, -4.0, 0.5], [2.0, 7.0, 0.0, 7.0]])
case('max dim 1', lambda x: torch.max(x, 1), m)
case('max dim 0 keepdim', lambda x: torch.max(x, 0, keepdim=True), r(3, 4))
case('min dim 1', lambda x: torch.min(x, 1), m)
case('min dim -1 keepdim', lambda x: torch.min(x, -1, keepdim=True), r(2, 3, 4))
case('amax dims', lambda x: torch.amax(x, (0, 2)), r(2, 3, 4))
case('amin dim', lambda x: torch.amin(x, 1, keepdim=True), r(3, 4))
case('einsum matmul', lambda x, y: torch.einsum('ij,jk->ik', x, y), r(2, 3), r(3, 4))
case('einsum batched', lambda x, y: torch.einsum('bij,bjk->bik', x, y), r(2, 2, 3), r(2, 3, 2))
case('einsum trace', lambda x: torch.einsum('ii', x), r(3, 3))
case('einsum diagonal', lambda x: torch.einsum('ii->i', x), r(3, 3))
case('einsum sum all', lambda x: torch.einsum('ij->', x), r(2, 3))
case('einsum outer', lambda x, y: torch.einsum('i,j->ij', x, y), r(3), r(2))
case('einsum dot', lambda x, y: torch.einsum('i,i->', x, y), r(4), r(4))
case('einsum hadamard', lambda x, y: torch.einsum('ij,ij->ij', x, y), r(2, 3), r(2, 3))
case('einsum transpose', lambda x: torch.einsum('ij->ji', x), r(2, 3))
case('einsum implicit', lambda x, y: torch.einsum('ij,jk', x, y), r(2, 3), r(3, 2))
case('einsum implicit transpose', lambda x: torch.einsum('ba', x), r(2, 3))
case('einsum attention scores', lambda q, k: torch.einsum('bhqd,bhkd->bhqk', q, k), r(1, 2, 3, 4), r(1, 2, 2, 4))
case('einsum contract two', lambda x, y: torch.einsum('ijk,ikl->jl', x, y), r(2, 3, 4), r(2, 4, 2))
case('einsum ellipsis broadcast', lambda x, y: torch.einsum('...ij,...jk->...ik', x, y), r(2, 1, 2, 3), r(3, 3, 2))
case('einsum ellipsis middle', lambda x: torch.einsum('i...j->j...i', x), r(2, 3, 4))
case('einsum three operands', lambda x, y, z: torch.einsum('ij,jk,kl->il', x, y, z), r(2, 3), r(3, 4), r(4, 2))
case('einsum repeated with other', lambda x, y: torch.einsum('iij,j->i', x, y), r(3, 3, 2), r(2))
case('einsum bilinear', lambda x, w, y: torch.einsum('bi,oij,bj->bo', x, w, y), r(2, 3), r(4, 3, 2), r(2, 2))
u = torch.tensor([[3.0, 1.0, 2.0], [1.0, -0.5, 3.0], [2.0, 2.0, 7.0]])
case('unique', lambda x: torch.unique(x, return_inverse=True, return_counts=True), u, grad=False)
case('unique int', lambda x: torch.unique(x, return_inverse=True, return_counts=True),
     torch.tensor([5, -1, 5, 0, -1, 5], dtype=torch.int32), grad=False)

OUT.parent.mkdir(parents=True, exist_ok=True)
OUT.write_text(json.dumps({'torch': torch.__version__, 'cases': cases}, separators=(',', ':')) + '\n')
print(f'wrote {len(cases)} cases to {OUT}')

# ---- losses: cross entropy and NLL ----
import torch.nn.functional as F  # noqa: E402

LOSS_OUT = Path(__file__).resolve().parents[2] / 'packages/nn/test/fixtures/losses-ce.json'
cases = []
i32 = lambda *v: torch.tensor(v, dtype=torch.int32)
y4 = i32(1, -100, 4, 0)
z45 = r(4, 5)
w5 = torch.rand(5) + 0.5
L = torch.int64
case('ce mean', lambda z, y: F.cross_entropy(z, y.to(L)), z45, fixed=[y4.clamp(min=0)])
case('ce ignore default mean', lambda z, y: F.cross_entropy(z, y.to(L)), z45, fixed=[y4])
case('ce ignore default sum', lambda z, y: F.cross_entropy(z, y.to(L), reduction='sum'), z45, fixed=[y4])
case('ce ignore default none', lambda z, y: F.cross_entropy(z, y.to(L), reduction='none'), z45, fixed=[y4])
case('ce ignore in range smoothed', lambda z, y: F.cross_entropy(z, y.to(L), ignore_index=1, label_smoothing=0.1), z45,
     fixed=[i32(1, 2, 4, 1)])
case('ce ignore smoothed none', lambda z, y: F.cross_entropy(z, y.to(L), label_smoothing=0.2, reduction='none'), z45,
     fixed=[y4])
case('ce weight mean', lambda z, y, w: F.cross_entropy(z, y.to(L), weight=w), z45, fixed=[i32(1, 3, 4, 0), w5])
case('ce weight ignore mean', lambda z, y, w: F.cross_entropy(z, y.to(L), weight=w), z45, fixed=[y4, w5])
case('ce weight smoothing mean', lambda z, y, w: F.cross_entropy(z, y.to(L), weight=w, label_smoothing=0.1), z45,
     fixed=[y4, w5])
case('ce weight smoothing none',
     lambda z, y, w: F.cross_entropy(z, y.to(L), weight=w, label_smoothing=0.3, reduction='none'), z45, fixed=[y4, w5])
case('ce weight sum', lambda z, y, w: F.cross_entropy(z, y.to(L), weight=w, reduction='sum'), z45, fixed=[y4, w5])
y3d = i32(0, 2, -100, 1, 1, 0, 2, 2, -100, 0, 1, 2).reshape(2, 2, 3)
z3d = r(2, 3, 2, 3)
case('ce 4-d mean', lambda z, y: F.cross_entropy(z, y.to(L)), z3d, fixed=[y3d])
case('ce 4-d none', lambda z, y: F.cross_entropy(z, y.to(L), reduction='none'), z3d, fixed=[y3d])
case('ce 4-d weight smoothing', lambda z, y, w: F.cross_entropy(z, y.to(L), weight=w, label_smoothing=0.1), z3d,
     fixed=[y3d, torch.tensor([0.2, 1.0, 3.0])])
case('ce unbatched', lambda z, y: F.cross_entropy(z, y.to(L)), r(4), fixed=[torch.tensor(2, dtype=torch.int32)])
ybig = torch.randint(0, 6, (70,), dtype=torch.int32)
ybig[::7] = -100
case('ce 70 rows ignore mean', lambda z, y: F.cross_entropy(z, y.to(L)), r(70, 6), fixed=[ybig])
case('ce 70 rows ignore smoothed sum', lambda z, y: F.cross_entropy(z, y.to(L), label_smoothing=0.1, reduction='sum'),
     r(70, 6), fixed=[ybig])
case('ce all ignored mean is nan', lambda z, y: F.cross_entropy(z, y.to(L)), r(2, 3), fixed=[i32(-100, -100)])
case('ce weight all ignored', lambda z, y, w: F.cross_entropy(z, y.to(L), weight=w), r(2, 5),
     fixed=[i32(-100, -100), w5])
case('nll all ignored', lambda x, y: F.nll_loss(x, y.to(L)), r(2, 5), fixed=[i32(-100, -100)])
case('nll mean', lambda x, y: F.nll_loss(x, y.to(L)), torch.log_softmax(r(4, 5), 1), fixed=[i32(1, 3, 4, 0)])
case('nll weight ignore', lambda x, y, w: F.nll_loss(x, y.to(L), weight=w), torch.log_softmax(r(4, 5), 1),
     fixed=[y4, w5])
case('nll 3-d none', lambda x, y: F.nll_loss(x, y.to(L), reduction='none'), r(2, 3, 3),
     fixed=[i32(0, 2, -100, 1, 1, 0).reshape(2, 3)])
case('nll ignore sum', lambda x, y: F.nll_loss(x, y.to(L), ignore_index=3, reduction='sum'), r(4, 5),
     fixed=[i32(1, 3, 4, 0)])
pt = torch.softmax(r(3, 4), 1)
case('ce probabilities weight smoothing', lambda z, t, w: F.cross_entropy(z, t, weight=w, label_smoothing=0.1), r(3, 4),
     fixed=[pt, torch.tensor([0.5, 1.0, 2.0, 1.5])])
LOSS_OUT.parent.mkdir(parents=True, exist_ok=True)
LOSS_OUT.write_text(json.dumps({'torch': torch.__version__, 'cases': cases}, separators=(',', ':')) + '\n')
print(f'wrote {len(cases)} cases to {LOSS_OUT}')
