import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ValueError, load, loadFile, nn, save, tensor } from '@surf/nn';
import { arr, backends, describeEach, on } from './helpers';

// Checkpoints written by PyTorch in its own dtypes (F16, BF16, F64, I64, I16, I8, U8, BOOL) load
// converted to Surf's dtypes; float tensors save as F16/BF16 on request with PyTorch's rounding.
// Every expected value was computed by PyTorch (scripts/interop/make-safetensors-fixtures.py).

const DIR = join(__dirname, 'fixtures/safetensors');
const bytes = (name: string) => new Uint8Array(readFileSync(join(DIR, `${name}.safetensors`)));
interface Expected {
  tensors: Record<string, { dtype: string; shape: number[]; values: number[] }>;
  input?: number[];
  inputShape?: number[];
  output?: number[];
}
const expected = (name: string) => JSON.parse(readFileSync(join(DIR, `${name}.json`), 'utf8')) as Expected;

const SURF_DTYPE: Record<string, string> = {
  F64: 'float32',
  F32: 'float32',
  F16: 'float32',
  BF16: 'float32',
  I64: 'int32',
  I32: 'int32',
  I16: 'int32',
  I8: 'int32',
  U8: 'int32',
  BOOL: 'bool',
};

/** The data area of a safetensors file as 16-bit words (for a file of one F16/BF16 tensor). */
function words16(file: Uint8Array): number[] {
  const dv = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const start = 8 + Number(dv.getBigUint64(0, true));
  const out: number[] = [];
  for (let p = start; p < file.length; p += 2) out.push(dv.getUint16(p, true));
  return out;
}

const B = backends();
beforeAll(B.setup);
afterAll(B.teardown);

describeEach(['cpu', 'webgpu'] as const, 'on %s', (kind) => {
  const get = () => (kind === 'cpu' ? B.cpu : B.gpu());

  test.each(['integers', 'mlp-f16', 'mlp-bf16', 'batchnorm2d'])(
    '%s: every tensor loads with PyTorch values',
    async (name) => {
      await on(get(), async () => {
        const want = expected(name).tensors;
        const sd = load(bytes(name));
        expect(Object.keys(sd).sort()).toEqual(Object.keys(want).sort());
        for (const [k, w] of Object.entries(want)) {
          expect([k, sd[k].dtype]).toEqual([k, SURF_DTYPE[w.dtype]]);
          expect(sd[k].shape).toEqual(w.shape);
          expect([k, await arr(sd[k])]).toEqual([k, w.values.map(Number)]);
        }
        Object.values(sd).forEach((t) => t.dispose());
      });
    },
  );

  test('a PyTorch BatchNorm2d state dict (num_batches_tracked int64) loads into nn.BatchNorm2d', async () => {
    await on(get(), async () => {
      const want = expected('batchnorm2d');
      const bn = new nn.BatchNorm2d(3);
      const sd = load(bytes('batchnorm2d'));
      bn.loadStateDict(sd);
      bn.eval();
      expect(await arr(bn.num_batches_tracked!)).toEqual([3]);
      const y = await arr(bn.forward(tensor(want.input!, { dtype: 'float32' }).reshape(want.inputShape!)));
      y.forEach((v, i) => expect(v).toBeCloseTo(want.output![i], 5));
    });
  });

  test.each(['mlp-f16', 'mlp-bf16'])('%s: a half-precision MLP gives PyTorch output', async (name) => {
    await on(get(), async () => {
      const want = expected(name);
      const model = new nn.Sequential(new nn.Linear(3, 4), new nn.Tanh(), new nn.Linear(4, 2));
      model.loadStateDict(load(bytes(name)));
      const y = await arr(model.forward(tensor(want.input!, { dtype: 'float32' }).reshape(want.inputShape!)));
      y.forEach((v, i) => expect(v).toBeCloseTo(want.output![i], 5));
    });
  });

  test('an int64 value outside int32 is refused, naming the tensor', async () => {
    await on(get(), async () => {
      expect(() => load(bytes('int64-overflow'))).toThrow(ValueError);
      expect(() => load(bytes('int64-overflow'))).toThrow(
        /'counter' \(I64\) holds 2147483648 at element 1, outside int32/,
      );
    });
  });

  test('save writes float16 / bfloat16 bits as PyTorch rounds them (nearest even), and they load back', async () => {
    await on(get(), async () => {
      const r = JSON.parse(readFileSync(join(DIR, 'rounding.json'), 'utf8')) as {
        f32: number[];
        f16: number[];
        bf16: number[];
      };
      const x = tensor(r.f32, { dtype: 'float32' });
      expect(words16(await save({ x }, undefined, { dtype: 'float16' }))).toEqual(r.f16);
      expect(words16(await save({ x }, undefined, { dtype: 'bfloat16' }))).toEqual(r.bf16);
      // Per tensor: the named one converts, the others stay float32, an int32 tensor as it is.
      const n = tensor([1, 2], { dtype: 'int32' });
      const file = await save({ x, y: tensor([0.1], { dtype: 'float32' }), n }, undefined, {
        dtype: { x: 'bfloat16' },
      });
      const header = JSON.parse(
        new TextDecoder().decode(file.subarray(8, 8 + Number(new DataView(file.buffer).getBigUint64(0, true)))),
      ) as Record<string, { dtype: string }>;
      expect([header.x.dtype, header.y.dtype, header.n.dtype]).toEqual(['BF16', 'F32', 'I32']);
      const back = load(file);
      const got = await arr(back.x);
      const wantBack = r.bf16.map((b) => new Float32Array(new Uint32Array([b << 16]).buffer)[0]);
      expect(got).toEqual(wantBack);
      expect(await arr(back.n)).toEqual([1, 2]);
    });
  });

  test('save refuses a bad dtype option with a clear error', async () => {
    await on(get(), async () => {
      const x = tensor([1], { dtype: 'float32' });
      const n = tensor([1], { dtype: 'int32' });
      await expect(save({ x }, undefined, { dtype: 'float64' as never })).rejects.toThrow(
        /option 'dtype' must be one of float32, float16, bfloat16/,
      );
      await expect(save({ x }, undefined, { dtype: { z: 'float16' } })).rejects.toThrow(
        /names 'z', which is not among/,
      );
      await expect(save({ n }, undefined, { dtype: { n: 'float16' } })).rejects.toThrow(/int32 tensor; only float32/);
      await expect(save({ x }, undefined, { dtyp: 'float16' } as never)).rejects.toThrow(/did you mean 'dtype'/);
    });
  });

  // A Node Buffer is a view into a shared pool: its byteOffset is rarely 0 and its slice() does
  // not copy. Views of the data must honour the offset, and a misaligned one must be copied.
  test('load() reads a Buffer from readFileSync, a pooled Buffer.from, and a misaligned view', async () => {
    await on(get(), async () => {
      const path = join(__dirname, 'fixtures/interop/mlp.safetensors');
      const ref = await loadFile(path);
      const check = async (sd: Record<string, import('@surf/nn').Tensor>) => {
        expect(Object.keys(sd)).toEqual(Object.keys(ref));
        for (const k of Object.keys(ref)) expect([k, await arr(sd[k])]).toEqual([k, await arr(ref[k])]);
      };
      await check(load(readFileSync(path)));
      const small = Buffer.from(bytes('integers'));
      // Small Buffers share one pool: this one does not start its ArrayBuffer.
      expect(small.byteOffset !== 0 || small.buffer.byteLength > small.length).toBe(true);
      const sd = load(small);
      expect(await arr(sd.i64)).toEqual(expected('integers').tensors.i64.values);
      const file = new Uint8Array(readFileSync(path));
      for (const shift of [1, 2, 3]) {
        const host = new Uint8Array(file.length + shift);
        host.set(file, shift);
        await check(load(host.subarray(shift)));
      }
    });
  });
});
