"""Writes packages/nn/test/diff/fixtures.json: the differential suite's expected values, from PyTorch.

Run by hand with torch installed (the tests do not need it; Debian's python3-torch, 1.13, works):

    /usr/bin/python3 scripts/interop/make-diff-fixtures.py

For every public tensor op and nn.functional op of Surf (the registry in
packages/nn/test/diff/ops.ts names the same ops), over layouts of its first input:
contiguous, transposed, flipped, narrowed, strided, broadcast, the empty shapes [0], [0,3] and
[3,0], 0-d, and 'special' (NaN, +-Inf and large magnitudes in a contiguous input), it records the
inputs (as the *base* tensor the layout is a view of), PyTorch's outputs, random weights w for
each float output, and the gradient of sum(out * w) with respect to every float input's base. A
case where PyTorch raises records the error, and Surf must raise too.

Inputs of kind 'grid' (rounding, sign, comparisons) are quarters, so halves and ties occur.
Numbers are written with 9 significant digits (exact for float32); NaN and +-Infinity as the
strings "NaN", "Infinity", "-Infinity".
"""
import json
import math
from pathlib import Path

import torch
import torch.nn.functional as F

OUT = Path(__file__).resolve().parents[2] / 'packages/nn/test/diff/fixtures.json'

ALL = ['contiguous', 'transposed', 'flipped', 'narrowed', 'strided', 'broadcast', 'empty0', 'empty03', 'empty30', 'scalar', 'special']
RANK2 = ['contiguous', 'transposed', 'flipped', 'narrowed', 'strided', 'broadcast', 'empty03', 'empty30', 'special']
RANK2_NONEMPTY = ['contiguous', 'transposed', 'flipped', 'narrowed', 'strided', 'broadcast', 'special']
RANK1 = ['contiguous', 'flipped', 'narrowed', 'strided', 'broadcast', 'empty0', 'special']
NOSPECIAL = [l for l in ALL if l != 'special']
EMPTY_SHAPES = {'empty0': [0], 'empty03': [0, 3], 'empty30': [3, 0], 'scalar': []}
SPECIALS = {
    'normal': [math.nan, math.inf, -math.inf, 1e30, -1e30],
    'grid': [math.nan, math.inf, -math.inf, 1e30, -0.0],
    'nonzero': [math.nan, math.inf, -math.inf, 1e30, -1e30],
    'pos': [math.nan, math.inf, 1e30, 1e-30, 0.0],
    'unit': [math.nan, 0.0, 1.0, 1e-30, 0.5],
}

gen = torch.Generator().manual_seed(1234)


def data(kind, shape):
    if kind == 'normal':
        return torch.randn(shape, generator=gen)
    if kind == 'pos':
        return torch.rand(shape, generator=gen) * 1.5 + 0.5
    if kind == 'unit':
        return torch.rand(shape, generator=gen) * 0.9 + 0.05
    if kind == 'nonzero':
        s = torch.where(torch.rand(shape, generator=gen) < 0.5, -1.0, 1.0)
        return s * (torch.rand(shape, generator=gen) * 1.5 + 0.5)
    if kind == 'grid':  # quarters in [-3, 3): exact halves and ties
        return torch.randint(-12, 12, shape, generator=gen).float() / 4
    if kind == 'bool':
        return torch.rand(shape, generator=gen) < 0.5
    if kind.startswith('int:'):
        lo, hi = map(int, kind.split(':')[1:])
        return torch.randint(lo, hi, shape, generator=gen, dtype=torch.int32)
    raise ValueError(kind)


def base_shape(layout, shape):
    if layout == 'transposed':
        return shape[:-2] + [shape[-1], shape[-2]]
    if layout == 'narrowed':
        return shape[:-1] + [shape[-1] + 2]
    if layout == 'strided':
        return shape[:-1] + [shape[-1] * 2]
    if layout == 'broadcast':
        return [1] + shape[1:]
    return shape


def view(layout, base, shape):
    if layout == 'transposed':
        return base.transpose(-1, -2)
    if layout == 'flipped':
        return base.flip(-1)
    if layout == 'narrowed':
        return base.narrow(-1, 1, shape[-1])
    if layout == 'strided':
        return base[..., ::2]
    if layout == 'broadcast':
        return base.expand(shape)
    return base


def enc_num(v):
    if isinstance(v, bool):
        return 1 if v else 0
    if isinstance(v, int):
        return v
    if math.isnan(v):
        return 'NaN'
    if math.isinf(v):
        return 'Infinity' if v > 0 else '-Infinity'
    return float('%.9g' % v)


DT = {torch.float32: 'float32', torch.int32: 'int32', torch.int64: 'int32', torch.bool: 'bool'}


def enc(t):
    t = t.detach()
    flat = t.reshape(-1).tolist()
    return {'shape': list(t.shape), 'dtype': DT[t.dtype], 'data': [enc_num(v) for v in flat]}


class Op:
    def __init__(self, name, fn, inputs, layouts=ALL, shape=(2, 3), grad=True):
        self.name, self.fn, self.inputs, self.layouts, self.shape, self.grad = name, fn, inputs, layouts, list(shape), grad


OPS = []


def op(name, fn, inputs=('normal',), **kw):
    OPS.append(Op(name, fn, list(inputs), **kw))


# Elementwise, unary.
for name, fn, kind in [
    ('neg', torch.neg, 'normal'),
    ('exp', torch.exp, 'normal'),
    ('log', torch.log, 'pos'),
    ('sqrt', torch.sqrt, 'pos'),
    ('rsqrt', torch.rsqrt, 'pos'),
    ('abs', torch.abs, 'normal'),
    ('sin', torch.sin, 'normal'),
    ('cos', torch.cos, 'normal'),
    ('tanh', torch.tanh, 'normal'),
    ('sigmoid', torch.sigmoid, 'normal'),
    ('relu', torch.relu, 'normal'),
    ('leakyRelu', lambda x: F.leaky_relu(x, 0.01), 'normal'),
    ('gelu', F.gelu, 'normal'),
    ('geluTanh', lambda x: F.gelu(x, approximate='tanh'), 'normal'),
    ('softplus', F.softplus, 'normal'),
    ('silu', F.silu, 'normal'),
    ('erf', torch.erf, 'normal'),
    ('floor', torch.floor, 'grid'),
    ('ceil', torch.ceil, 'grid'),
    ('round', torch.round, 'grid'),
    ('trunc', torch.trunc, 'grid'),
    ('sign', torch.sign, 'grid'),
    ('log1p', torch.log1p, 'unit'),
    ('expm1', torch.expm1, 'normal'),
    ('clamp', lambda x: x.clamp(-0.5, 0.5), 'normal'),
    ('addScalar', lambda x: x + 2.5, 'normal'),
    ('mulScalar', lambda x: x * -1.5, 'normal'),
    ('powScalar', lambda x: x**2, 'normal'),
]:
    op(name, fn, [kind])

# Elementwise, binary (the second operand has the first's logical shape, contiguous).
for name, fn, kinds in [
    ('add', torch.add, ('normal', 'normal')),
    ('sub', torch.sub, ('normal', 'normal')),
    ('mul', torch.mul, ('normal', 'normal')),
    ('div', torch.div, ('normal', 'nonzero')),
    ('pow', torch.pow, ('pos', 'normal')),
    ('maximum', torch.maximum, ('normal', 'normal')),
    ('minimum', torch.minimum, ('normal', 'normal')),
    ('remainder', torch.remainder, ('normal', 'nonzero')),
    ('eq', torch.eq, ('grid', 'grid')),
    ('ne', torch.ne, ('grid', 'grid')),
    ('lt', torch.lt, ('grid', 'grid')),
    ('le', torch.le, ('grid', 'grid')),
    ('gt', torch.gt, ('grid', 'grid')),
    ('ge', torch.ge, ('grid', 'grid')),
    ('where', lambda x, y, c: torch.where(c, x, y), ('normal', 'normal', 'bool')),
    ('maskedFill', lambda x, m: x.masked_fill(m, -1.5), ('normal', 'bool')),
]:
    op(name, fn, list(kinds))
for name, fn in [('bitwiseAnd', torch.bitwise_and), ('bitwiseOr', torch.bitwise_or), ('bitwiseXor', torch.bitwise_xor)]:
    op(name, fn, ['int:-8:8', 'int:-8:8'], layouts=NOSPECIAL)

# Reductions and scans.
for name, fn in [
    ('sum', lambda x: x.sum()),
    ('sumDim', lambda x: x.sum(-1)),
    ('mean', lambda x: x.mean()),
    ('meanDim', lambda x: x.mean(-1, keepdim=True)),
    ('max', lambda x: x.max()),
    ('maxDim', lambda x: x.max(-1).values),
    ('min', lambda x: x.min()),
    ('argmax', lambda x: x.argmax()),
    ('argminDim', lambda x: x.argmin(-1)),
    ('var', lambda x: x.var()),
    ('varDim', lambda x: x.var(-1)),
    ('std', lambda x: x.std()),
    ('stdDim', lambda x: x.std(-1)),
    ('logsumexp', lambda x: x.logsumexp(-1)),
    ('softmax', lambda x: x.softmax(-1)),
    ('logSoftmax', lambda x: x.log_softmax(-1)),
    ('prod', lambda x: x.prod()),
    ('prodDim', lambda x: x.prod(-1)),
    ('norm', lambda x: x.norm()),
    ('norm1Dim', lambda x: x.norm(1, -1)),
    ('cumsum', lambda x: x.cumsum(-1)),
]:
    op(name, fn)
op('any', lambda x: x.any(), ['bool'], layouts=NOSPECIAL)
op('all', lambda x: x.all(), ['bool'], layouts=NOSPECIAL)

# Shapes and movement.
op('reshape', lambda x: x.reshape(-1))
op('flatten', lambda x: x.flatten())
op('unsqueeze', lambda x: x.unsqueeze(0))
op('squeeze', lambda x: x.unsqueeze(0).squeeze())
op('expand', lambda x: x.unsqueeze(0).expand(2, *x.shape))
op('contiguous', lambda x: x.contiguous())
op('transpose', lambda x: x.transpose(0, 1), layouts=RANK2)
op('permute', lambda x: x.permute(1, 0), layouts=RANK2)
op('flip', lambda x: x.flip(0), layouts=[l for l in ALL if l != 'scalar'])
op('narrow', lambda x: x.narrow(0, 1, 1), layouts=RANK2_NONEMPTY + ['empty30'])
op('slice', lambda x: x[:, 1::2], layouts=RANK2)
op('pad', lambda x: F.pad(x, (1, 2)), layouts=[l for l in ALL if l != 'scalar'])
op('repeat', lambda x: x.repeat(2, 1), layouts=RANK2)
op('triu', lambda x: x.triu(), layouts=RANK2)
op('tril', lambda x: x.tril(-1), layouts=RANK2)
op('indexSelect', lambda x: x.index_select(1, torch.tensor([2, 0])), layouts=RANK2_NONEMPTY)
op('gather', lambda x, i: x.gather(1, i.long()), ['normal', 'int:0:3'], layouts=RANK2_NONEMPTY)
op('scatter', lambda x, s: x.scatter(1, torch.tensor([[2, 0], [1, 2]]), s), ['normal', ('normal', [2, 2])], layouts=RANK2_NONEMPTY)
op('scatterAdd', lambda x, s: x.scatter_add(1, torch.tensor([[2, 2], [0, 2]]), s), ['normal', ('normal', [2, 2])], layouts=RANK2_NONEMPTY)
op('sort', lambda x: tuple(x.sort(-1)), layouts=[l for l in ALL if l != 'scalar'])
op('sortDescending', lambda x: x.sort(-1, descending=True).values, layouts=RANK2)
op('argsort', lambda x: x.argsort(-1), layouts=RANK2)
op('topk', lambda x: tuple(x.topk(2, -1)), layouts=RANK2_NONEMPTY)
op('split', lambda x: tuple(x.split(2, -1)), layouts=RANK2)
op('chunk', lambda x: tuple(x.chunk(2, 0)), layouts=RANK2)
op('cat', lambda x, y: torch.cat([x, y], 0), ['normal', 'normal'], layouts=[l for l in ALL if l != 'scalar'])
op('stack', lambda x, y: torch.stack([x, y], 0), ['normal', 'normal'])

op('clone', lambda x: x.clone())
op('view', lambda x: x.contiguous().view(-1))
op('broadcastTo', lambda x: x.broadcast_to((2, *x.shape)))
op('squeezeDim', lambda x: x.unsqueeze(1).squeeze(1))
op('index', lambda x: x[1], layouts=RANK2_NONEMPTY + ['empty30'])
op('castInt', lambda x: x.int(), ['normal'], layouts=NOSPECIAL, grad=False)
op('castFloat', lambda x: x.float(), ['int:-8:8'], layouts=NOSPECIAL)
op('castBool', lambda x: x.bool(), ['grid'], grad=False)
op('addInplace', lambda x, y: x.clone().add_(y), ['normal', 'normal'])
op('mulInplace', lambda x, y: x.clone().mul_(y), ['normal', 'normal'])
op('clampInplace', lambda x: x.clone().clamp_(-0.5, 0.5))
op('linearRelu', lambda x, w, b: F.linear(x, w, b).relu(), ['normal', ('normal', [4, 3]), ('normal', [4])], layouts=RANK2_NONEMPTY)
op('labelSmoothing', lambda x, t: F.cross_entropy(x, t.long(), label_smoothing=0.1), ['normal', ('int:0:4', [3])], layouts=RANK2_NONEMPTY, shape=(3, 4))

# Linear algebra, convolution, pooling, normalisation, attention (shape given per op).
op('matmul', lambda x, w: x @ w, ['normal', ('normal', [3, 4])], layouts=RANK2_NONEMPTY + ['empty03'])
op('dot', lambda x, y: torch.dot(x, y), ['normal', 'normal'], layouts=RANK1, shape=(3,))
op('linear', lambda x, w, b: F.linear(x, w, b), ['normal', ('normal', [4, 3]), ('normal', [4])], layouts=RANK2_NONEMPTY + ['empty03'])
op('conv1d', lambda x, w, b: F.conv1d(x, w, b), ['normal', ('normal', [3, 2, 3]), ('normal', [3])], layouts=RANK2_NONEMPTY, shape=(1, 2, 6))
op('conv2d', lambda x, w, b: F.conv2d(x, w, b, padding=1), ['normal', ('normal', [2, 2, 3, 3]), ('normal', [2])], layouts=RANK2_NONEMPTY, shape=(1, 2, 4, 5))
op('convTranspose2d', lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2), ['normal', ('normal', [2, 3, 2, 2]), ('normal', [3])], layouts=RANK2_NONEMPTY, shape=(1, 2, 3, 3))
op('maxPool2d', lambda x: F.max_pool2d(x, 2), layouts=RANK2_NONEMPTY, shape=(1, 2, 4, 4))
op('avgPool2d', lambda x: F.avg_pool2d(x, 2), layouts=RANK2_NONEMPTY, shape=(1, 2, 4, 4))
op('adaptiveAvgPool2d', lambda x: F.adaptive_avg_pool2d(x, 2), layouts=RANK2_NONEMPTY, shape=(1, 2, 5, 5))
op('batchNormEval', lambda x, m, v, w, b: F.batch_norm(x, m, v, w, b, training=False), ['normal', ('normal', [3], False), ('pos', [3], False), ('normal', [3]), ('normal', [3])], layouts=RANK2_NONEMPTY, shape=(4, 3))
op('batchNormTrain', lambda x, m, v, w, b: F.batch_norm(x, m.clone(), v.clone(), w, b, training=True), ['normal', ('normal', [3], False), ('pos', [3], False), ('normal', [3]), ('normal', [3])], layouts=RANK2_NONEMPTY, shape=(4, 3))


def sdpa(q, k, v):
    # PyTorch 2's F.scaled_dot_product_attention (not in 1.13), as its documentation defines it.
    return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), -1) @ v


op('scaledDotProductAttention', sdpa, ['normal', ('normal', [1, 5, 4]), ('normal', [1, 5, 4])], layouts=RANK2_NONEMPTY, shape=(1, 3, 4))

# Losses (nn.functional), mean reduction; the target is the second input.
op('softmaxCrossEntropy', lambda x, t: F.cross_entropy(x, t.long()), ['normal', ('int:0:4', [3])], layouts=RANK2_NONEMPTY, shape=(3, 4))
op('crossEntropy', lambda x, t: F.cross_entropy(x, t.long()), ['normal', ('int:0:4', [3])], layouts=RANK2_NONEMPTY, shape=(3, 4))
op('nllLoss', lambda x, t: F.nll_loss(x, t.long()), ['normal', ('int:0:4', [3])], layouts=RANK2_NONEMPTY, shape=(3, 4))
op('mseLoss', F.mse_loss, ['normal', 'normal'])
op('l1Loss', F.l1_loss, ['normal', 'normal'])
op('huberLoss', F.huber_loss, ['normal', 'normal'])
op('smoothL1Loss', F.smooth_l1_loss, ['normal', 'normal'])
op('binaryCrossEntropy', F.binary_cross_entropy, ['unit', 'unit'])
op('binaryCrossEntropyWithLogits', F.binary_cross_entropy_with_logits, ['normal', 'unit'])
op('klDivLoss', lambda x, t: F.kl_div(x, t, reduction='batchmean'), ['normal', 'unit'])
op('oneHot', lambda i: F.one_hot(i.long(), 3), ['int:0:3'], layouts=[l for l in NOSPECIAL if l not in ('transposed',)], shape=(2, 3))

# Creation (no inputs, no layouts).
for name, fn in [
    ('arange', lambda: torch.arange(0, 5, 0.5)),
    ('linspace', lambda: torch.linspace(-1, 2, 7)),
    ('eye', lambda: torch.eye(3, 4)),
    ('zeros', lambda: torch.zeros(2, 3)),
    ('ones', lambda: torch.ones(2, 3)),
    ('full', lambda: torch.full((2, 3), 1.5)),
]:
    op(name, fn, [], layouts=['none'], grad=False)


def run(o, layout):
    case = {'layout': layout}
    shape = EMPTY_SHAPES.get(layout, o.shape)
    leaves, args, encoded = [], [], []
    for i, spec in enumerate(o.inputs):
        kind, ishape, wants_grad = (spec + (True,))[:3] if isinstance(spec, tuple) else (spec, shape, True)
        lay = layout if i == 0 and layout not in EMPTY_SHAPES and layout != 'special' else 'contiguous'
        base = data(kind, base_shape(lay, ishape))
        if i == 0 and layout == 'special':
            flat = base.reshape(-1)
            for j, s in enumerate(SPECIALS[kind][: max(flat.numel() - 1, 0)]):
                flat[j] = s
        if base.dtype.is_floating_point:
            base = base.clone().requires_grad_(o.grad and wants_grad)
        leaves.append(base)
        args.append(view(lay, base, ishape))
        encoded.append({**enc(base), 'layout': lay, 'viewShape': list(ishape), 'grad': bool(base.requires_grad)})
    case['inputs'] = encoded
    try:
        out = o.fn(*args)
    except Exception as e:  # PyTorch refuses: Surf must refuse too.
        case['error'] = str(e).split('\n')[0][:200]
        return case
    outs = list(out) if isinstance(out, tuple) else [out]
    case['outputs'] = [enc(t) for t in outs]
    floats = [t for t in outs if t.dtype.is_floating_point and t.requires_grad]
    if floats:
        ws = [torch.randn(t.shape, generator=gen) for t in floats]
        case['weights'] = [enc(w) for w in ws]
        sum((t * w).sum() for t, w in zip(floats, ws)).backward()
        case['grads'] = [
            enc(l.grad if l.grad is not None else torch.zeros_like(l)) if l.requires_grad else None for l in leaves
        ]
    return case


fixtures = {'generator': 'scripts/interop/make-diff-fixtures.py', 'torch': torch.__version__, 'ops': {}}
for o in OPS:
    fixtures['ops'][o.name] = [run(o, layout) for layout in o.layouts]

OUT.parent.mkdir(parents=True, exist_ok=True)
OUT.write_text(json.dumps(fixtures, separators=(',', ':')) + '\n')
n = sum(len(v) for v in fixtures['ops'].values())
print(f'wrote {OUT}: {len(OPS)} ops, {n} cases, {OUT.stat().st_size} bytes')
