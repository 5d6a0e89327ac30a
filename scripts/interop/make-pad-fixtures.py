"""Writes packages/autograd/test/fixtures/pad.json: torch.nn.functional.pad's values and
gradients for packages/autograd/test/pad.test.ts.

Run by hand with PyTorch installed (the tests do not need it):

    /usr/bin/python3 scripts/interop/make-pad-fixtures.py

Each case: an input (values i * 0.5 - 1 in row-major order), PyTorch's flat pad list (last dim
first), the mode and value, the output, and the gradient of sum(out * w) for w[k] = sin(k + 1).
"""
import json
import math
from pathlib import Path

import torch
import torch.nn.functional as F

OUT = Path(__file__).resolve().parents[2] / 'packages/autograd/test/fixtures/pad.json'

CASES = [
    # shape, pad, mode, value
    ([2, 3], [1, 2], 'constant', 0.0),
    ([2, 3], [1, 0, 2, 1], 'constant', 0.0),
    ([2, 3], [2, 1], 'constant', 1.5),
    ([2, 4], [-1, 2, 0, -1], 'constant', 0.0),
    ([1, 2, 4], [2, 3], 'reflect'),
    ([1, 3, 4], [1, 2, 2, 1], 'reflect'),
    ([1, 2, 3], [2, 1], 'replicate'),
    ([1, 1, 2, 3], [3, 1, 1, 2], 'replicate'),
    ([1, 2, 4], [3, 1], 'circular'),
    ([1, 1, 3, 3], [1, 2, 3, 0], 'circular'),
    ([1, 1, 2, 2, 3], [1, 1, 1, 0, 0, 1], 'replicate'),
]


def main():
    out = []
    for case in CASES:
        shape, pad, mode = case[0], case[1], case[2]
        value = case[3] if len(case) > 3 else None
        n = math.prod(shape)
        x = (torch.arange(n, dtype=torch.float64) * 0.5 - 1).reshape(shape).requires_grad_()
        y = F.pad(x, pad, mode=mode, value=value) if mode == 'constant' else F.pad(x, pad, mode=mode)
        w = torch.sin(torch.arange(y.numel(), dtype=torch.float64) + 1).reshape(y.shape)
        (y * w).sum().backward()
        out.append({
            'shape': shape,
            'pad': pad,
            'mode': mode,
            **({'value': value} if value is not None else {}),
            'outShape': list(y.shape),
            'out': y.detach().flatten().tolist(),
            'grad': x.grad.flatten().tolist(),
        })
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({'torch': torch.__version__, 'cases': out}, indent=1) + '\n')
    print(f'wrote {len(out)} cases to {OUT}')


if __name__ == '__main__':
    main()
