"""Writes PyTorch's values for packages/nn/test/values/*.test.ts (edge cases where Surf must
match PyTorch: gradients at the ends of a range, NaN propagation, empty batches).

Run by hand with PyTorch installed (the tests do not need it):

    /usr/bin/python3 scripts/values/make-fixtures.py   # writes packages/nn/test/fixtures/values/

Infinities and NaN are written as the strings "inf", "-inf" and "nan".
"""
import json
import math
from pathlib import Path

import torch
import torch.nn.functional as F

OUT = Path(__file__).resolve().parents[2] / 'packages/nn/test/fixtures/values'


def enc(v):
    if isinstance(v, list):
        return [enc(x) for x in v]
    if not isinstance(v, float):
        return v
    if math.isnan(v):
        return 'nan'
    if math.isinf(v):
        return 'inf' if v > 0 else '-inf'
    return v


def grads(case):
    return {k: enc(v) for k, v in case.items()}


def bce():
    cases = []
    for x, y, red in [
        ([0.0, 1.0, 0.5], [1.0, 0.0, 1.0], 'mean'),
        ([0.0, 1.0, 0.3, 0.0], [0.0, 1.0, 0.2, 0.7], 'sum'),
        ([1e-30, 1 - 1e-7, 0.9], [1.0, 0.0, 0.25], 'none'),
    ]:
        xt = torch.tensor(x, requires_grad=True)
        yt = torch.tensor(y, requires_grad=True)
        loss = F.binary_cross_entropy(xt, yt, reduction=red)
        loss.backward(torch.ones_like(loss))
        cases.append(grads({'input': x, 'target': y, 'reduction': red, 'loss': loss.detach().reshape(-1).tolist(),
                            'gradInput': xt.grad.tolist(), 'gradTarget': yt.grad.tolist()}))
    return cases


def std_var():
    cases = []
    for x, dim, unbiased in [
        ([[2.0, 2.0, 2.0], [1.0, 4.0, -3.0]], 1, True),
        ([[2.0, 2.0, 2.0], [1.0, 4.0, -3.0]], 1, False),
        ([[5.0, 5.0], [5.0, 5.0]], None, True),
    ]:
        row = {'input': x, 'dim': dim, 'unbiased': unbiased}
        for name in ['std', 'var']:
            t = torch.tensor(x, requires_grad=True)
            r = getattr(t, name)(unbiased=unbiased) if dim is None else getattr(t, name)(dim, unbiased=unbiased)
            r.sum().backward()
            row[name] = r.detach().reshape(-1).tolist()
            row[name + 'Grad'] = t.grad.tolist()
        cases.append(grads(row))
    return cases


def nan_cases():
    out = {}
    z = torch.tensor([[1.0, float('nan'), 0.0], [0.0, 0.0, 0.0]])
    out['crossEntropy'] = enc(F.cross_entropy(z, torch.tensor([0, 1])).item())
    out['crossEntropyNone'] = enc(F.cross_entropy(z, torch.tensor([0, 1]), reduction='none').tolist())
    out['softmaxAllNaN'] = enc(torch.softmax(torch.tensor([[float('nan')] * 3, [1.0, 2.0, 3.0]]), -1).tolist())
    out['softmaxOneNaN'] = enc(torch.softmax(torch.tensor([[1.0, float('nan'), 0.0]]), -1).tolist())
    out['logSoftmaxOneNaN'] = enc(torch.log_softmax(torch.tensor([[1.0, float('nan'), 0.0]]), -1).tolist())
    out['logsumexp'] = enc(torch.logsumexp(torch.tensor([[1.0, float('nan'), 0.0], [1.0, 2.0, 3.0]]), -1).tolist())
    x = torch.tensor([[1.0, float('nan'), 3.0], [4.0, 5.0, 6.0]])
    out['max'] = enc(x.max().item())
    out['min'] = enc(x.min().item())
    out['maxDim'] = enc(x.amax(1).tolist())
    out['minDim'] = enc(x.amin(1).tolist())
    q = torch.tensor([[[1.0, 0.0], [0.5, -1.0]]])
    k = torch.tensor([[[1.0, 2.0], [float('nan'), 0.0], [0.0, 1.0]]])
    v = torch.tensor([[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]])
    out['attention'] = enc(F.scaled_dot_product_attention(q, k, v).tolist()) if hasattr(F, 'scaled_dot_product_attention') \
        else enc(torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(2), -1).matmul(v).tolist())
    out['crossEntropyEmpty'] = enc(F.cross_entropy(torch.zeros(0, 3), torch.zeros(0, dtype=torch.long)).item())
    return out


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    data = {'torch': torch.__version__, 'bce': bce(), 'stdVar': std_var(), 'nan': nan_cases()}
    (OUT / 'edge-values.json').write_text(json.dumps(data, indent=1) + '\n')


if __name__ == '__main__':
    main()
