import {
  Module,
  SurfError,
  Tensor,
  load,
  loadCheckpoint,
  manualSeed,
  nn,
  optim,
  save,
  saveCheckpoint,
  tensor,
} from '@surf/nn';
import { backends, describeEach, on } from './helpers';

// Mutated safetensors files and checkpoints (flipped bytes, truncations, huge header lengths,
// bogus dtypes/shapes/offsets, prototype names, adversarial metadata JSON), a few hundred from a
// fixed seed: each must load exactly (checked against a decoder written here) or fail with a
// SurfError, never a raw TypeError/RangeError/SyntaxError, and Object.prototype stays untouched.

const B = backends();
beforeAll(B.setup);
afterAll(B.teardown);

/** mulberry32: a small deterministic generator, so every run tries the same cases. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PROTO_NAMES = Object.getOwnPropertyNames(Object.prototype).sort();
function prototypeUntouched(label: string): void {
  expect([label, Object.getOwnPropertyNames(Object.prototype).sort()]).toEqual([label, PROTO_NAMES]);
  expect([label, Object.keys({})]).toEqual([label, []]);
  for (const k of ['isAdmin', 'step', 'lr', '0', 'x', 'polluted', 'weight'])
    expect([label, k, (Object.prototype as Record<string, unknown>)[k]]).toEqual([label, k, undefined]);
}

interface Parts {
  header: Record<string, unknown>;
  data: Buffer;
}
function split(file: Uint8Array): Parts {
  const b = Buffer.from(file);
  const n = Number(b.readBigUInt64LE(0));
  return { header: JSON.parse(b.subarray(8, 8 + n).toString()) as Record<string, unknown>, data: b.subarray(8 + n) };
}
function join(headerText: string, data: Buffer): Uint8Array {
  const h = Buffer.from(headerText);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(h.length));
  return new Uint8Array(Buffer.concat([len, h, data]));
}

/** The values the file holds for each tensor, decoded here with Buffer's readers (independent of Surf's). */
function reference(file: Uint8Array): Map<string, { shape: number[]; values: number[] }> {
  const { header, data } = split(file);
  const out = new Map<string, { shape: number[]; values: number[] }>();
  for (const [name, info] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const {
      dtype,
      shape,
      data_offsets: [a, z],
    } = info as { dtype: string; shape: number[]; data_offsets: number[] };
    const bytes = data.subarray(a, z);
    const values: number[] = [];
    const read: Record<string, [number, (o: number) => number]> = {
      F32: [4, (o) => bytes.readFloatLE(o)],
      I32: [4, (o) => bytes.readInt32LE(o)],
      I64: [8, (o) => Number(bytes.readBigInt64LE(o))],
      U8: [1, (o) => bytes.readUInt8(o)],
      BOOL: [1, (o) => (bytes.readUInt8(o) ? 1 : 0)],
      F16: [
        2,
        (o) => {
          const h = bytes.readUInt16LE(o);
          const e = (h >> 10) & 31;
          const m = h & 1023;
          const s = h >> 15 ? -1 : 1;
          return e === 31 ? (m ? NaN : s * Infinity) : s * Math.pow(2, e ? e - 15 : -14) * ((e ? 1 : 0) + m / 1024);
        },
      ],
    };
    const [size, f] = read[dtype];
    for (let o = 0; o < bytes.length; o += size) values.push(f(o));
    out.set(name, { shape, values });
  }
  return out;
}

/** A plain file of several dtypes (some written by hand: Surf saves no I64/U8). */
async function baseFile(): Promise<Uint8Array> {
  const surfFile = await save(
    {
      w: tensor(
        [
          [0.5, -1.25],
          [3, 1e-3],
        ],
        { dtype: 'float32' },
      ),
      n: tensor([7, -2], { dtype: 'int32' }),
      b: tensor([true, false]),
    },
    { note: 'base' },
  );
  const { header, data } = split(surfFile);
  const extra = Buffer.alloc(8 + 3 + 4);
  extra.writeBigInt64LE(-5n, 0);
  extra.set([1, 200, 3], 8);
  extra.writeUInt16LE(0x3c00, 11); // 1.0 in F16
  extra.writeUInt16LE(0xc500, 13); // -5.0
  const at = data.length;
  header.count = { dtype: 'I64', shape: [], data_offsets: [at, at + 8] };
  header.bytes = { dtype: 'U8', shape: [3], data_offsets: [at + 8, at + 11] };
  header.half = { dtype: 'F16', shape: [2], data_offsets: [at + 11, at + 15] };
  return join(JSON.stringify(header), Buffer.concat([data, extra]));
}

class Net extends Module {
  fc = new nn.Linear(2, 2);
  forward(x: Tensor): Tensor {
    return this.fc.forward(x);
  }
}

function mutateJson(r: () => number, v: unknown, depth = 0): unknown {
  const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)];
  const weird = (): unknown =>
    pick<unknown>([
      null,
      -1,
      2 ** 53,
      1e308,
      -0,
      0.5,
      'abc',
      '',
      [],
      {},
      [2, 2],
      { __proto__: 1 },
      JSON.parse('{"__proto__":{"polluted":1}}'),
      JSON.parse('{"constructor":{"prototype":{"polluted":1}}}'),
      true,
      '1e999',
    ]);
  if (r() < 0.15 || depth > 6) return weird();
  if (Array.isArray(v)) return v.map((x) => (r() < 0.3 ? mutateJson(r, x, depth + 1) : x));
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v)) {
      const val = (v as Record<string, unknown>)[k];
      if (r() < 0.05) continue;
      out[r() < 0.05 ? pick(['__proto__', 'constructor', 'prototype', k + 'x', '0']) : k] =
        r() < 0.3 ? mutateJson(r, val, depth + 1) : val;
    }
    if (r() < 0.1) Object.defineProperty(out, '__proto__', { value: { polluted: 1 }, enumerable: true });
    return out;
  }
  return r() < 0.5 ? weird() : v;
}

/** One mutated variant of `file`; `kind` spreads the cases over the mutation families. */
function mutate(r: () => number, file: Uint8Array, kind: number): Uint8Array {
  const b = Buffer.from(file);
  const { header, data } = split(file);
  const names = Object.keys(header).filter((k) => k !== '__metadata__');
  const name = names[Math.floor(r() * names.length)];
  const entry = header[name] as Record<string, unknown>;
  const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)];
  switch (kind % 8) {
    case 0: {
      const out = Buffer.from(b);
      for (let i = 0, n = 1 + Math.floor(r() * 4); i < n; i++)
        out[Math.floor(r() * out.length)] ^= 1 << Math.floor(r() * 8);
      return new Uint8Array(out);
    }
    case 1:
      return new Uint8Array(b.subarray(0, Math.floor(r() * b.length)));
    case 2: {
      const out = Buffer.from(b);
      out.writeBigUInt64LE(
        pick([
          2n ** 64n - 1n,
          2n ** 63n,
          2n ** 32n,
          100_000_001n,
          BigInt(b.length),
          1n,
          0n,
          BigInt(Math.floor(r() * 1e9)),
        ]),
        0,
      );
      return new Uint8Array(out);
    }
    case 3:
      entry.dtype = pick([
        'F8',
        'f32',
        'C64',
        '',
        'I64',
        'BF16',
        'U16',
        'F64',
        'I8',
        '__proto__',
        'constructor',
        7,
        null,
      ]);
      return join(JSON.stringify(header), data);
    case 4:
      entry.shape = pick<unknown>([
        [-1],
        [1.5],
        [2 ** 53],
        [1e6, 1e6, 1e6],
        ['2'],
        null,
        3,
        [],
        [0],
        [4],
        [1, 1, 1, 1, 1, 1, 1, 1, 2],
      ]);
      return join(JSON.stringify(header), data);
    case 5:
      entry.data_offsets = pick<unknown>([
        [0],
        [-4, 0],
        [8, 4],
        [0, 1e15],
        [0.5, 4],
        ['0', '4'],
        null,
        [0, 4, 8],
        [2 ** 53, 2 ** 53 + 8],
      ]);
      return join(JSON.stringify(header), data);
    case 6: {
      const bad = pick([
        '__proto__',
        'constructor',
        'a.__proto__.b',
        'prototype',
        'model.__proto__.isAdmin',
        'optimizer.__proto__.isAdmin',
        'optimizer.constructor.polluted',
        'optimizer.0.__proto__',
        'toString',
        'hasOwnProperty',
      ]);
      const text = JSON.stringify(header).replace(`"${name}":`, `"${bad}":`);
      return join(text, data);
    }
    default: {
      const meta = (header.__metadata__ ?? {}) as Record<string, string>;
      const key = Object.keys(meta)[0] ?? 'm';
      let value: string;
      try {
        value = JSON.stringify(mutateJson(r, JSON.parse(meta[key] ?? '{}')));
      } catch {
        value = meta[key] ?? '';
      }
      value = pick([
        value,
        value,
        value,
        value.slice(0, Math.floor(r() * value.length)),
        'null',
        '[]',
        '{"version":1}',
        '1e999',
      ]);
      header.__metadata__ = { ...meta, [key]: value };
      return join(JSON.stringify(header), data);
    }
  }
}

describeEach(['cpu', 'webgpu'] as const, 'fuzzed files on %s', (kind) => {
  test('every mutated file loads exactly or fails with a SurfError, and Object.prototype is untouched', async () => {
    await on(kind === 'cpu' ? B.cpu : B.gpu(), async () => {
      const r = rng(20261129);
      manualSeed(11);
      const model = new Net();
      const opt = new optim.Adam(model.parameters(), { lr: 0.01 });
      model
        .forward(tensor([[1, 2]], { dtype: 'float32' }))
        .sum()
        .backward();
      opt.step();
      const files = [await baseFile(), await saveCheckpoint({ model, optimizer: opt, step: 1, extra: { best: 0.5 } })];
      const outcomes = { loaded: 0, refused: 0 };
      for (let i = 0; i < 320; i++) {
        const isCheckpoint = i % 2 === 1;
        const bytes = mutate(r, files[i % 2], Math.floor(i / 2));
        const label = `case ${i} (${isCheckpoint ? 'checkpoint' : 'file'}, mutation ${Math.floor(i / 2) % 8})`;
        let err: unknown = null;
        let sd: Record<string, Tensor> | null = null;
        try {
          if (isCheckpoint) {
            const m = new Net();
            const o = new optim.Adam(m.parameters(), { lr: 0.01 });
            loadCheckpoint(bytes, { model: m, optimizer: o });
            // Loaded: the model holds exactly the file's model.* values.
            const ref = reference(bytes);
            for (const [k, t] of Object.entries(m.stateDict()))
              expect([label, k, Array.from(await t.data())]).toEqual([label, k, ref.get(`model.${k}`)!.values]);
            o.dispose();
          } else {
            sd = load(bytes);
            const ref = reference(bytes);
            expect([label, Object.keys(sd).sort()]).toEqual([label, [...ref.keys()].sort()]);
            for (const [k, t] of Object.entries(sd)) {
              expect([label, k, t.shape]).toEqual([label, k, ref.get(k)!.shape]);
              expect([label, k, Array.from(await t.data())]).toEqual([label, k, ref.get(k)!.values]);
            }
          }
          outcomes.loaded++;
        } catch (e) {
          err = e;
          outcomes.refused++;
        } finally {
          if (sd) Object.values(sd).forEach((t) => t.dispose());
        }
        if (err !== null) {
          // An expectation failing above is a real failure, not a refusal.
          if (!(err instanceof SurfError)) throw err;
          expect([label, (err as Error).message.length > 10]).toEqual([label, true]);
        }
        prototypeUntouched(label);
      }
      // The cases exercise both outcomes.
      expect(outcomes.loaded).toBeGreaterThan(20);
      expect(outcomes.refused).toBeGreaterThan(150);
    });
  });
});
