import { SurfError, ValueError } from '@surf/core';
import { Tensor, load, memory, nn, save, tensor } from '@surf/nn';

/**
 * Corrupt safetensors bytes, fuzzed: truncations, byte flips in the length, the header and
 * the data, rewritten header lengths, mutated header JSON, trailing bytes. Every outcome is
 * either a ValueError from load() that starts with 'load:' or a state dict whose tensors are
 * consistent (their data has shape's element count) and free cleanly; never another error
 * class (RangeError, TypeError, SyntaxError) and never a leaked tensor.
 */
const CASES = 3000;

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const enc = new TextEncoder();

/** Bytes with `header` as the JSON header and `data` after it. */
function file(header: string, data: Uint8Array): Uint8Array {
  const h = enc.encode(header);
  const out = new Uint8Array(8 + h.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(h.length), true);
  out.set(h, 8);
  out.set(data, 8 + h.length);
  return out;
}

/** JSON-level mutations of a valid header: each keeps the file well-formed JSON. */
const HEADER_MUTATIONS: ((h: Record<string, any>, name: string) => void)[] = [
  (h, n) => {
    h[n].dtype = 'F64';
  },
  (h, n) => {
    h[n].dtype = 'BF16';
  },
  (h, n) => {
    h[n].dtype = 7;
  },
  (h, n) => {
    delete h[n].dtype;
  },
  (h, n) => {
    h[n].shape = [-1, 2];
  },
  (h, n) => {
    h[n].shape = [1.5];
  },
  (h, n) => {
    h[n].shape = 'big';
  },
  (h, n) => {
    h[n].shape = [1e20];
  },
  (h, n) => {
    h[n].shape = [...h[n].shape, 2];
  },
  (h, n) => {
    h[n].shape = [];
  },
  (h, n) => {
    delete h[n].data_offsets;
  },
  (h, n) => {
    h[n].data_offsets = [h[n].data_offsets[1], h[n].data_offsets[0]];
  },
  (h, n) => {
    h[n].data_offsets = [h[n].data_offsets[0] + 4, h[n].data_offsets[1] + 4];
  },
  (h, n) => {
    h[n].data_offsets = [h[n].data_offsets[0] - 4, h[n].data_offsets[1] - 4];
  },
  (h, n) => {
    h[n].data_offsets = [0, h[n].data_offsets[1] - h[n].data_offsets[0]];
  },
  (h, n) => {
    h[n].data_offsets = [-4, 0];
  },
  (h, n) => {
    h[n].data_offsets = [0, 2 ** 60];
  },
  (h, n) => {
    h[n] = null;
  },
  (h, n) => {
    h[n] = [1, 2];
  },
  (h) => {
    h.__metadata__ = { a: 1 };
  },
  (h) => {
    h.__metadata__ = 'x';
  },
  (h, n) => {
    h[`${n}_copy`] = { ...h[n] };
  },
  (h, n) => {
    delete h[n];
  },
];

let base: Uint8Array;
let names: string[];

beforeAll(async () => {
  const lin = new nn.Linear(3, 2);
  const extra = { step: tensor([7, 8, 9]), mask: tensor([true, false]) };
  const dict: Record<string, Tensor> = { ...lin.stateDict(), ...extra };
  base = await save(dict, { format: 'pt', note: 'fuzz' });
  names = Object.keys(dict);
  Object.values(dict).forEach((t) => t.dispose());
});

test(`safetensors: ${CASES} corrupted files are rejected with a ValueError naming the problem, or load consistently`, async () => {
  const before = memory().tensors;
  const n = Number(new DataView(base.buffer, base.byteOffset).getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(base.subarray(8, 8 + n)));
  const data = base.subarray(8 + n);
  const counts = { rejected: 0, loaded: 0 };
  const problems: string[] = [];
  for (let c = 0; c < CASES; c++) {
    const r = rng(c + 1);
    const pick = (k: number) => Math.floor(r() * k);
    let bytes: Uint8Array;
    let what: string;
    switch (c % 6) {
      case 0: {
        const len = pick(base.length);
        bytes = base.slice(0, len);
        what = `truncated to ${len}`;
        break;
      }
      case 1: {
        bytes = base.slice();
        const flips = 1 + pick(3);
        for (let i = 0; i < flips; i++) bytes[pick(8 + n)] ^= 1 << pick(8);
        what = `${flips} bit flips in the length or header`;
        break;
      }
      case 2: {
        bytes = base.slice();
        const v = [0n, 1n, 2n, BigInt(n - 1), BigInt(n + 1), BigInt(base.length), 2n ** 63n, BigInt(pick(2 ** 31))][
          pick(8)
        ];
        new DataView(bytes.buffer).setBigUint64(0, v, true);
        what = `header length set to ${v}`;
        break;
      }
      case 3: {
        const h = JSON.parse(JSON.stringify(header));
        const name = names[pick(names.length)];
        const m = pick(HEADER_MUTATIONS.length);
        HEADER_MUTATIONS[m](h, name);
        bytes = file(JSON.stringify(h), data);
        what = `header mutation ${m} on '${name}'`;
        break;
      }
      case 4: {
        bytes = base.slice();
        const i = 8 + n + pick(data.length);
        bytes[i] ^= 0xff;
        what = `data byte ${i} flipped`;
        break;
      }
      default: {
        const extra = 1 + pick(16);
        bytes = new Uint8Array(base.length + extra);
        bytes.set(base);
        what = `${extra} bytes appended`;
      }
    }
    let dict: Record<string, Tensor> | null = null;
    try {
      dict = load(bytes);
    } catch (e) {
      counts.rejected++;
      if (!(e instanceof ValueError) || !(e as Error).message.startsWith('load: ')) {
        problems.push(
          `case ${c} (${what}): ${e instanceof SurfError ? '' : 'non-Surf '}${(e as Error).name}: ${(e as Error).message}`,
        );
      }
      continue;
    }
    counts.loaded++;
    for (const [k, t] of Object.entries(dict)) {
      const d = await t.data();
      if (d.length !== t.numel)
        problems.push(`case ${c} (${what}): '${k}' has ${d.length} values for shape [${t.shape}]`);
      t.dispose();
    }
  }
  expect(problems.slice(0, 20)).toEqual([]);
  // Both outcomes occur (data flips and some header flips still parse), or the fuzz is vacuous.
  expect(counts.rejected).toBeGreaterThan(CASES / 2);
  expect(counts.loaded).toBeGreaterThan(CASES / 10);
  expect(memory().tensors).toBe(before);
});
