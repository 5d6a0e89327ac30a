"""Writes the PyTorch interop fixtures for packages/nn/test/interop.test.ts.

Run once, by hand, with PyTorch installed (the tests do not need PyTorch):

    python scripts/interop/make-fixtures.py            # writes packages/nn/test/fixtures/interop/
    python scripts/interop/make-fixtures.py --check F  # loads a Surf-saved file F into both models

For each model it writes <name>.safetensors (the state dict, as PyTorch's
safetensors.torch.save_file would) and <name>.json (a fixed input and PyTorch's output for it in
eval mode). The safetensors writer and reader are a few lines here so that only torch is needed.

Surf has no int64: BatchNorm's num_batches_tracked (int64 in PyTorch) is written as int32.
PyTorch's load_state_dict copies values into its int64 buffer, so the file still loads there.
"""
import json
import struct
import sys
from pathlib import Path

import torch
from torch import nn

OUT = Path(__file__).resolve().parents[2] / 'packages/nn/test/fixtures/interop'
DTYPES = {torch.float32: 'F32', torch.int32: 'I32', torch.bool: 'BOOL'}
TORCH_DTYPES = {v: k for k, v in DTYPES.items()}


def mlp():
    # Keys: 0.weight 0.bias 1.weight 1.bias 3.weight 3.bias
    return nn.Sequential(nn.Linear(4, 8), nn.LayerNorm(8), nn.ReLU(), nn.Linear(8, 3))


def cnn():
    # Keys: 0.weight 0.bias 1.weight 1.bias 1.running_mean 1.running_var 1.num_batches_tracked 4.weight 4.bias
    return nn.Sequential(nn.Conv2d(2, 3, 3, padding=1), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(3 * 4 * 4, 2))


def save_safetensors(tensors, path):
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        t = t.detach().contiguous().cpu()
        if t.dtype == torch.int64:
            t = t.to(torch.int32)
        b = t.numpy().tobytes()  # little-endian on every platform torch ships for
        header[name] = {'dtype': DTYPES[t.dtype], 'shape': list(t.shape), 'data_offsets': [offset, offset + len(b)]}
        blobs.append(b)
        offset += len(b)
    h = json.dumps(header, separators=(',', ':')).encode()
    h += b' ' * (-len(h) % 8)
    path.write_bytes(struct.pack('<Q', len(h)) + h + b''.join(blobs))


def load_safetensors(path):
    raw = path.read_bytes()
    (n,) = struct.unpack('<Q', raw[:8])
    header = json.loads(raw[8:8 + n])
    header.pop('__metadata__', None)
    data = raw[8 + n:]
    out = {}
    for name, info in header.items():
        begin, end = info['data_offsets']
        t = torch.frombuffer(bytearray(data[begin:end]), dtype=TORCH_DTYPES[info['dtype']]) if end > begin else torch.empty(0, dtype=TORCH_DTYPES[info['dtype']])
        out[name] = t.reshape(info['shape'])
    return out


def make():
    OUT.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    cases = {'mlp': (mlp(), torch.randn(2, 4)), 'cnn': (cnn(), torch.randn(2, 2, 4, 4))}
    m, _ = cases['cnn']
    # Non-trivial running statistics: a few training steps' worth of batches.
    for _ in range(3):
        m(torch.randn(4, 2, 4, 4) * 2 + 1)
    for name, (model, x) in cases.items():
        model.eval()
        with torch.no_grad():
            y = model(x)
        save_safetensors(model.state_dict(), OUT / f'{name}.safetensors')
        (OUT / f'{name}.json').write_text(json.dumps({
            'torch': torch.__version__,
            'inputShape': list(x.shape), 'input': x.flatten().tolist(),
            'outputShape': list(y.shape), 'output': y.flatten().tolist(),
        }) + '\n')
        print(f'wrote {name}: {list(model.state_dict())}')


def check(path):
    """Loads a Surf-saved state dict into whichever fixture model matches it (strict)."""
    sd = load_safetensors(Path(path))
    for build in (mlp, cnn):
        model = build()
        if set(sd) == set(model.state_dict()):
            model.load_state_dict(sd)  # strict: every key, shape checked
            print(f'{path}: loads into {build.__name__}() with load_state_dict')
            return
    sys.exit(f'{path}: keys {sorted(sd)} match no fixture model')


if __name__ == '__main__':
    if len(sys.argv) == 3 and sys.argv[1] == '--check':
        check(sys.argv[2])
    else:
        make()
