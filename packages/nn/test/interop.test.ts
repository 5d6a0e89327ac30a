import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Module, load, nn, noGrad, save, tensor } from '@surf/nn';
import { arr, backends, describeEach, on } from './helpers';

// PyTorch interop against fixtures written once by scripts/interop/make-fixtures.py (PyTorch
// 2.x): the PyTorch state dict loads into the same Surf architecture and gives PyTorch's
// outputs, and Surf saves a state dict whose keys, shapes, dtypes and bytes are PyTorch's
// (so load_state_dict takes it back).

const B = backends();
beforeAll(B.setup);
afterAll(B.teardown);

const DIR = join(__dirname, 'fixtures/interop');

interface Expected {
  inputShape: number[];
  input: number[];
  outputShape: number[];
  output: number[];
}

const MODELS: Record<string, () => Module> = {
  // Same layout as the script's mlp() and cnn(): Sequential indices are the key prefixes.
  mlp: () => new nn.Sequential(new nn.Linear(4, 8), new nn.LayerNorm(8), new nn.ReLU(), new nn.Linear(8, 3)),
  cnn: () =>
    new nn.Sequential(
      new nn.Conv2d(2, 3, 3, { padding: 1 }),
      new nn.BatchNorm2d(3),
      new nn.ReLU(),
      new nn.Flatten(),
      new nn.Linear(3 * 4 * 4, 2),
    ),
};

/** The tensor table of a safetensors buffer: name -> dtype, shape and raw bytes. */
function table(bytes: Uint8Array): Map<string, { dtype: string; shape: number[]; data: number[] }> {
  const n = Number(Buffer.from(bytes.buffer, bytes.byteOffset, 8).readBigUInt64LE());
  const header = JSON.parse(Buffer.from(bytes.subarray(8, 8 + n)).toString('utf8')) as Record<
    string,
    { dtype: string; shape: number[]; data_offsets: [number, number] }
  >;
  const out = new Map<string, { dtype: string; shape: number[]; data: number[] }>();
  for (const [name, info] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const [b, e] = info.data_offsets;
    out.set(name, { dtype: info.dtype, shape: info.shape, data: [...bytes.subarray(8 + n + b, 8 + n + e)] });
  }
  return out;
}

describeEach(['cpu', 'webgpu'] as const, 'on %s', (kind) => {
  const get = () => (kind === 'cpu' ? B.cpu : B.gpu());

  describe.each(Object.keys(MODELS))('%s', (name) => {
    const torchBytes = new Uint8Array(readFileSync(join(DIR, `${name}.safetensors`)));
    const expected = JSON.parse(readFileSync(join(DIR, `${name}.json`), 'utf8')) as Expected;

    test("a PyTorch state dict loads strictly and gives PyTorch's outputs", async () => {
      await on(get(), async () => {
        const model = MODELS[name]();
        expect(Object.keys(model.stateDict())).toEqual([...table(torchBytes).keys()]);
        model.loadStateDict(load(torchBytes));
        model.eval();
        const x = tensor(expected.input).reshape(expected.inputShape);
        const y = noGrad(() => model.forward(x));
        expect(y.shape).toEqual(expected.outputShape);
        const got = await arr(y);
        got.forEach((v, i) =>
          expect(Math.abs(v - expected.output[i])).toBeLessThan(1e-5 + 1e-5 * Math.abs(expected.output[i])),
        );
      });
    });

    test('a Surf state dict has the keys, shapes, dtypes and bytes PyTorch wrote', async () => {
      await on(get(), async () => {
        const model = MODELS[name]();
        model.loadStateDict(load(torchBytes));
        const bytes = await save(model);
        // SURF_INTEROP_OUT=dir writes the file for `make-fixtures.py --check` (PyTorch's own load).
        if (process.env.SURF_INTEROP_OUT && kind === 'cpu')
          writeFileSync(join(process.env.SURF_INTEROP_OUT, `surf-${name}.safetensors`), bytes);
        const mine = table(bytes);
        const theirs = table(torchBytes);
        expect([...mine.keys()].sort()).toEqual([...theirs.keys()].sort());
        for (const [key, t] of theirs) expect({ key, ...mine.get(key) }).toEqual({ key, ...t });
      });
    });
  });
});
