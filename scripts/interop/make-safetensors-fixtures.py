"""Writes the PyTorch-dtype safetensors fixtures for packages/nn/test/safetensors-dtypes.test.ts.

Run by hand with PyTorch installed (the tests do not need it):

    /usr/bin/python3 scripts/interop/make-safetensors-fixtures.py   # writes packages/nn/test/fixtures/safetensors/

torch 1.13 has no safetensors package, so the format is written here by hand: an 8-byte
little-endian header length, the JSON header (padded with spaces to 8 bytes), then the raw
little-endian bytes of each tensor in PyTorch's own dtype (F16, BF16, F64, I64, ...).

Each <name>.safetensors comes with <name>.json holding what the test compares against,
computed by PyTorch: each tensor's values after `.float()` (floats) or `.tolist()` (integers),
and for the models a fixed input with PyTorch's eval-mode output.
"""
import json
import struct
from pathlib import Path

import torch
from torch import nn

OUT = Path(__file__).resolve().parents[2] / 'packages/nn/test/fixtures/safetensors'
NAMES = {
    torch.float64: 'F64', torch.float32: 'F32', torch.float16: 'F16', torch.bfloat16: 'BF16',
    torch.int64: 'I64', torch.int32: 'I32', torch.int16: 'I16', torch.int8: 'I8', torch.uint8: 'U8',
    torch.bool: 'BOOL',
}


def raw_bytes(t):
    t = t.detach().contiguous()
    if t.dtype == torch.bfloat16:  # numpy has no bfloat16: the same 16 bits as int16
        return t.view(torch.int16).numpy().tobytes()
    return t.numpy().astype(t.numpy().dtype.newbyteorder('<')).tobytes()


def save_safetensors(tensors, path, extra_header=None):
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        b = raw_bytes(t)
        header[name] = {'dtype': NAMES[t.dtype], 'shape': list(t.shape), 'data_offsets': [offset, offset + len(b)]}
        blobs.append(b)
        offset += len(b)
    if extra_header:
        header.update(extra_header)
    h = json.dumps(header, separators=(',', ':')).encode()
    h += b' ' * ((8 - len(h) % 8) % 8)
    path.write_bytes(struct.pack('<Q', len(h)) + h + b''.join(blobs))


def values(t):
    t = t.detach()
    if t.dtype.is_floating_point:
        return t.float().flatten().tolist()
    return t.flatten().tolist()


def expected(tensors):
    return {k: {'dtype': NAMES[t.dtype], 'shape': list(t.shape), 'values': values(t)} for k, t in tensors.items()}


def write(name, tensors, **extra):
    save_safetensors(tensors, OUT / f'{name}.safetensors')
    (OUT / f'{name}.json').write_text(json.dumps({'tensors': expected(tensors), **extra}, indent=1) + '\n')


def batchnorm():
    # A BatchNorm2d trained in train mode for a few steps: running stats moved, num_batches_tracked (I64) = 3,
    # affine weights changed by SGD. Its state dict is what torch.save(model.state_dict()) holds.
    torch.manual_seed(0)
    bn = nn.BatchNorm2d(3)
    opt = torch.optim.SGD(bn.parameters(), lr=0.1)
    for _ in range(3):
        x = torch.randn(4, 3, 2, 2) * 2 + 1
        opt.zero_grad()
        (bn(x) ** 2 * torch.arange(1.0, 4.0).view(1, 3, 1, 1)).mean().backward()
        opt.step()
    bn.eval()
    x = torch.randn(2, 3, 2, 2)
    sd = bn.state_dict()
    assert sd['num_batches_tracked'].dtype == torch.int64
    write('batchnorm2d', dict(sd), input=x.flatten().tolist(), inputShape=list(x.shape),
          output=bn(x).detach().flatten().tolist())


def mlp(dtype, name):
    torch.manual_seed(1)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)).to(dtype)
    x = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
    # The reference output: the stored (rounded) weights, computed in float32 as Surf will.
    out = model.float()(x).detach()
    model.to(dtype)
    write(name, {k: v for k, v in model.state_dict().items()}, input=x.flatten().tolist(), inputShape=list(x.shape),
          output=out.flatten().tolist())


def integers():
    tensors = {
        'i64': torch.tensor([[0, -1, 2147483647], [-2147483648, 42, 7]], dtype=torch.int64),
        'i32': torch.tensor([-5, 5], dtype=torch.int32),
        'i16': torch.tensor([-32768, 32767, 0], dtype=torch.int16),
        'i8': torch.tensor([-128, 127, -3], dtype=torch.int8),
        'u8': torch.tensor([0, 255, 128], dtype=torch.uint8),
        'flags': torch.tensor([True, False, True]),
        'f64': torch.tensor([1 / 3, -1e-40, 3.4e38, 0.1], dtype=torch.float64),
        'empty': torch.zeros(0, 3, dtype=torch.int64),
        'scalar': torch.tensor(12345678901 % 1000, dtype=torch.int64),
    }
    write('integers', tensors)
    # One value past int32: loading must refuse it, naming the tensor.
    save_safetensors({'ok': torch.tensor([1.0]), 'counter': torch.tensor([0, 2**31], dtype=torch.int64)},
                     OUT / 'int64-overflow.safetensors')


def rounding():
    # float32 values and the bits PyTorch's .half() / .bfloat16() give them (round to nearest even):
    # ties both ways, subnormals, overflow to infinity, signed zero, and random values.
    g = torch.Generator().manual_seed(2)
    special = [1 + 2**-11, 1 + 3 * 2**-11, 2049.0, 2051.0, 65504.0, 65519.0, 65520.0, 1e6, -1e6,
               2**-24, 2**-25, 3 * 2**-26, 2**-14 - 2**-25, 5.96e-8, 1e-10, -0.0, 0.1, -2.5,
               1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-8 + 2**-20, 3.3895314e38, 1e-39]
    rand = (torch.randn(64, generator=g) * torch.logspace(-8, 8, 64)).tolist()
    f = torch.tensor(special + rand, dtype=torch.float32)
    (OUT / 'rounding.json').write_text(json.dumps({
        'f32': f.tolist(),
        'f16': (f.half().view(torch.int16).int() & 0xFFFF).tolist(),
        'bf16': (f.bfloat16().view(torch.int16).int() & 0xFFFF).tolist(),
    }, indent=1) + '\n')


if __name__ == '__main__':
    OUT.mkdir(parents=True, exist_ok=True)
    batchnorm()
    mlp(torch.float16, 'mlp-f16')
    mlp(torch.bfloat16, 'mlp-bf16')
    integers()
    rounding()
    print('wrote', sorted(p.name for p in OUT.iterdir()))
