import { BackendError, CpuBackend, DTypeError, ShapeError, ValueError } from '@surf/core';
import { Tensor, crossEntropy, load, nn, optim, save, setBackend, tensor, tidy, zeros } from '@surf/nn';

/**
 * Mismatched state dicts are rejected with an error naming the key and what differs, and a
 * rejected load changes nothing: the model keeps every value and still trains.
 */
let prev: ReturnType<typeof setBackend>;
const cpu = new CpuBackend();
beforeAll(() => {
  prev = setBackend(cpu);
});
afterAll(() => {
  setBackend(prev);
});

function mlp(hidden = 4): nn.Sequential {
  return new nn.Sequential(new nn.Linear(3, hidden), new nn.ReLU(), new nn.Linear(hidden, 2));
}

async function values(m: nn.Module): Promise<Record<string, number[]>> {
  const out: Record<string, number[]> = {};
  for (const [k, p] of Object.entries(m.stateDict())) out[k] = Array.from(await p.data());
  return out;
}

function disposeAll(...ms: nn.Module[]): void {
  for (const m of ms) m.parameters().forEach((p) => p.dispose());
}

/** Each bad dict: the error class, what the message must say, and how to build the dict from a good one. */
const BAD: [
  string,
  typeof ValueError | typeof ShapeError | typeof DTypeError | typeof BackendError,
  RegExp,
  (d: Record<string, Tensor>) => Record<string, Tensor>,
][] = [
  [
    'a wrong shape (last key)',
    ShapeError,
    /^loadStateDict: '2\.bias' has shape \[3\]; the parameter has shape \[2\]/,
    (d) => ({ ...d, '2.bias': zeros([3]) }),
  ],
  [
    'a transposed weight',
    ShapeError,
    /^loadStateDict: '0\.weight' has shape \[3,4\]; the parameter has shape \[4,3\]/,
    (d) => ({ ...d, '0.weight': zeros([3, 4]) }),
  ],
  [
    'a wrong dtype',
    DTypeError,
    /^loadStateDict: '2\.bias' has dtype int32; the parameter has dtype float32/,
    (d) => ({ ...d, '2.bias': tensor([1, 2], { dtype: 'int32' }) }),
  ],
  [
    'a missing key',
    ValueError,
    /missing keys: 2\.weight/,
    (d) => {
      const c = { ...d };
      delete c['2.weight'];
      return c;
    },
  ],
  ['an unexpected key', ValueError, /unexpected keys: 3\.weight/, (d) => ({ ...d, '3.weight': zeros([1]) })],
  [
    'a non-tensor value',
    ValueError,
    /^loadStateDict: '0\.bias' is number; expected a Tensor/,
    (d) => ({ ...d, '0.bias': 3 as unknown as Tensor }),
  ],
  [
    'a disposed tensor',
    ValueError,
    /^loadStateDict: '0\.bias' was disposed/,
    (d) => {
      const t = zeros([4]);
      t.dispose();
      return { ...d, '0.bias': t };
    },
  ],
];

test.each(BAD)('loadStateDict with %s raises a named error and changes nothing', async (_what, cls, msg, corrupt) => {
  const model = mlp();
  const source = mlp();
  const before = await values(model);
  const dict = tidy(() => {
    const good: Record<string, Tensor> = {};
    for (const [k, v] of Object.entries(source.stateDict())) good[k] = v.mul(1).add(5);
    return good;
  });
  const bad = corrupt(dict);
  let err: unknown = null;
  try {
    model.loadStateDict(bad);
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(cls);
  expect((err as Error).message).toMatch(msg);
  // Nothing was written, not even the keys that were fine.
  expect(await values(model)).toEqual(before);
  // The model still trains after the rejected load.
  const opt = new optim.SGD(model.parameters(), { lr: 0.1 });
  const w0 = Array.from(await model.stateDict()['0.weight'].data());
  tidy(() => {
    const l = crossEntropy(
      model.forward(
        tensor(
          [
            [1, 2, 3],
            [-1, 0, 1],
          ],
          { dtype: 'float32' },
        ),
      ),
      tensor([0, 1], { dtype: 'int32' }),
    );
    l.backward();
    opt.step();
  });
  expect(Array.from(await model.stateDict()['0.weight'].data())).not.toEqual(w0);
  opt.dispose();
  new Set([...Object.values(dict), ...Object.values(bad)]).forEach((t) => {
    if (t instanceof Tensor) t.dispose();
  });
  disposeAll(model, source);
});

test('strict: false loads the matching keys and reports the others', async () => {
  const model = mlp();
  const dict = { '0.bias': tensor([1, 2, 3, 4], { dtype: 'float32' }), extra: zeros([2]) };
  const r = model.loadStateDict(dict, { strict: false });
  expect(r.missingKeys.sort()).toEqual(['0.weight', '2.bias', '2.weight']);
  expect(r.unexpectedKeys).toEqual(['extra']);
  expect(Array.from(await model.stateDict()['0.bias'].data())).toEqual([1, 2, 3, 4]);
  // A mismatch among the matching keys still throws, strict or not.
  expect(() => model.loadStateDict({ '0.bias': zeros([5]) }, { strict: false })).toThrow(ShapeError);
  Object.values(dict).forEach((t) => t.dispose());
  disposeAll(model);
});

test('a dict from another backend is rejected with a BackendError naming the key', () => {
  const other = new CpuBackend();
  const p = setBackend(other);
  const foreign = mlp();
  setBackend(p);
  const model = mlp();
  expect(() => model.loadStateDict(foreign.stateDict())).toThrow(BackendError);
  expect(() => model.loadStateDict(foreign.stateDict())).toThrow(
    /^loadStateDict: '0\.weight' lives on backend cpu, the parameter on cpu; load\(\) it again after init\(\)/,
  );
  disposeAll(model, foreign);
});

test('a file saved from another architecture fails to load into a model, naming the keys and shapes', async () => {
  const wide = mlp(8);
  const bytes = await save(wide);
  const dict = load(bytes);
  const model = mlp(4);
  expect(() => model.loadStateDict(dict)).toThrow(
    /^loadStateDict: '0\.weight' has shape \[8,3\]; the parameter has shape \[4,3\]/,
  );
  Object.values(dict).forEach((t) => t.dispose());
  disposeAll(model, wide);
});

test('bad arguments to loadStateDict and load are ValueErrors', () => {
  const model = mlp();
  expect(() => model.loadStateDict(null as unknown as Record<string, Tensor>)).toThrow(
    /^loadStateDict: expected an object or Map of tensors; got null/,
  );
  expect(() => load('not bytes' as unknown as Uint8Array)).toThrow(ValueError);
  expect(() => load(new Uint8Array(3))).toThrow(/^load: not a valid safetensors file: 3 bytes is too short/);
  disposeAll(model);
});
