import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ValueError, load, loadFile, loadMetadata, manualSeed, nn, save, saveFile, tensor } from '@surf/nn';
import { arr, backends, describeEach, on } from './helpers';

// save/load of tensors and modules through the safetensors format, against a file built by
// hand to the spec, and round trips through bytes and files on both backends.

const B = backends();
beforeAll(B.setup);
afterAll(B.teardown);

/** A safetensors file written by hand: u64 LE header length, JSON header, LE data. */
function fixture(): Uint8Array {
  let header =
    '{"__metadata__":{"format":"pt"},"fc.bias":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"fc.weight":{"dtype":"F32","shape":[2,3],"data_offsets":[8,32]},"steps":{"dtype":"I32","shape":[],"data_offsets":[32,36]},"flags":{"dtype":"BOOL","shape":[3],"data_offsets":[36,39]}}';
  while (header.length % 8) header += ' ';
  const data = Buffer.alloc(39);
  [0.5, -0.25].forEach((v, i) => data.writeFloatLE(v, i * 4));
  [1, 2, 3, 4, 5, 6].forEach((v, i) => data.writeFloatLE(v / 8, 8 + i * 4));
  data.writeInt32LE(-7, 32);
  data.set([1, 0, 1], 36);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(header.length));
  return new Uint8Array(Buffer.concat([len, Buffer.from(header), data]));
}

class Net extends nn.Module {
  fc = new nn.Linear(3, 2);
  forward(x: import('@surf/nn').Tensor) {
    return this.fc.forward(x);
  }
}

describeEach(['cpu', 'webgpu'] as const, 'on %s', (kind) => {
  const get = () => (kind === 'cpu' ? B.cpu : B.gpu());

  test('load() reads a hand-built file, and a module loads its state from it', async () => {
    const backend = get();
    await on(backend, async () => {
      const sd = load(fixture());
      expect(Object.keys(sd)).toEqual(['fc.bias', 'fc.weight', 'steps', 'flags']);
      expect(sd['fc.weight'].shape).toEqual([2, 3]);
      expect(await arr(sd['fc.weight'])).toEqual([1, 2, 3, 4, 5, 6].map((v) => v / 8));
      expect(sd.steps.dtype).toBe('int32');
      expect(sd.steps.shape).toEqual([]);
      expect(await arr(sd.steps)).toEqual([-7]);
      expect(sd.flags.dtype).toBe('bool');
      expect(await arr(sd.flags)).toEqual([1, 0, 1]);
      expect(loadMetadata(fixture())).toEqual({ format: 'pt' });
      const net = new Net();
      const r = net.loadStateDict(sd, { strict: false });
      expect(r.unexpectedKeys).toEqual(['steps', 'flags']);
      expect(await arr(net.forward(tensor([[8, 0, 0]], { dtype: 'float32' })))).toEqual([1 + 0.5, 4 - 0.25]);
    });
  });

  test('save() writes what the spec says, byte for byte', async () => {
    const backend = get();
    await on(backend, async () => {
      const bytes = await save({ a: tensor([1.5, -2]), n: tensor([3], { dtype: 'int32' }) }, { by: 'surf' });
      let header =
        '{"__metadata__":{"by":"surf"},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"n":{"dtype":"I32","shape":[1],"data_offsets":[8,12]}}';
      while (header.length % 8) header += ' ';
      const data = Buffer.alloc(12);
      data.writeFloatLE(1.5, 0);
      data.writeFloatLE(-2, 4);
      data.writeInt32LE(3, 8);
      const len = Buffer.alloc(8);
      len.writeBigUInt64LE(BigInt(header.length));
      expect(Buffer.from(bytes).equals(Buffer.concat([len, Buffer.from(header), data]))).toBe(true);
    });
  });

  test('a module round-trips through bytes and through a file', async () => {
    const backend = get();
    await on(backend, async () => {
      manualSeed(1);
      const a = new nn.Sequential(new nn.Linear(3, 4), new nn.GELU(), new nn.LayerNorm(4), new nn.Linear(4, 2));
      manualSeed(2);
      const b = new nn.Sequential(new nn.Linear(3, 4), new nn.GELU(), new nn.LayerNorm(4), new nn.Linear(4, 2));
      const x = tensor([[0.5, -1, 2]]);
      b.loadStateDict(load(await save(a)));
      expect(await arr(b.forward(x))).toEqual(await arr(a.forward(x)));
      const dir = mkdtempSync(join(tmpdir(), 'surf-nn-'));
      const path = join(dir, 'model.safetensors');
      await saveFile(path, a, { epoch: '3' });
      expect(loadMetadata(new Uint8Array(readFileSync(path)))).toEqual({ epoch: '3' });
      const c = new nn.Sequential(new nn.Linear(3, 4), new nn.GELU(), new nn.LayerNorm(4), new nn.Linear(4, 2));
      c.loadStateDict(await loadFile(path));
      expect(await arr(c.forward(x))).toEqual(await arr(a.forward(x)));
      expect(Object.keys(await loadFile(path))).toEqual([
        '0.weight',
        '0.bias',
        '2.weight',
        '2.bias',
        '3.weight',
        '3.bias',
      ]);
    });
  });
});

test('corrupt files and bad arguments raise ValueErrors that say what is wrong', async () => {
  await on(B.cpu, async () => {
    const bad = fixture();
    bad[0] = 200; // header length now points past the end
    expect(() => load(bad)).toThrow(ValueError);
    expect(() => load(bad)).toThrow(/load: not a valid safetensors file: header length \d+ runs past the end/);
    const truncated = fixture().slice(0, -1);
    expect(() => load(truncated)).toThrow(/tensor 'flags' has data_offsets \[36, 39\] beyond the 38-byte data area/);
    await expect(save({ x: 3 as unknown as import('@surf/nn').Tensor })).rejects.toThrow(
      /save: 'x' is number; expected a Tensor/,
    );
    const dir = mkdtempSync(join(tmpdir(), 'surf-nn-'));
    writeFileSync(join(dir, 'junk'), 'not a tensor file at all');
    await expect(loadFile(join(dir, 'junk'))).rejects.toThrow(ValueError);
  });
});
