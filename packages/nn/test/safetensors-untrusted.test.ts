import {
  Module,
  Tensor,
  ValueError,
  load,
  loadCheckpoint,
  loadMetadata,
  manualSeed,
  nn,
  optim,
  save,
  saveCheckpoint,
  tensor,
} from '@surf/nn';
import { backends, describeEach, on } from './helpers';

// Files are untrusted: names and metadata from them are data, never property paths. Each case
// here is a reproduction that polluted Object.prototype, swallowed a tensor, or let a checkpoint
// set hyperparameters its optimizer's constructor refuses.

const B = backends();
beforeAll(B.setup);
afterAll(B.teardown);

const META = 'surf.checkpoint';

/** A safetensors file from raw header text and data bytes (the writer here shares nothing with Surf's). */
function rawFile(header: string, data: number[] = []): Uint8Array {
  const h = Buffer.from(header);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(h.length));
  return new Uint8Array(Buffer.concat([len, h, Buffer.from(data)]));
}

const f32 = (v: number) => [...Buffer.from(new Float32Array([v]).buffer)];

function prototypeClean(): void {
  expect(Object.keys({})).toEqual([]);
  for (const k of ['isAdmin', 'step', 'steps', 'lr', '0', 'polluted'])
    expect([k, (Object.prototype as Record<string, unknown>)[k]]).toEqual([k, undefined]);
  expect(Object.getPrototypeOf({})).toBe(Object.prototype);
}

class Net extends Module {
  fc = new nn.Linear(2, 2);
  forward(x: Tensor): Tensor {
    return this.fc.forward(x);
  }
}

async function checkpoint() {
  manualSeed(5);
  const model = new Net();
  const optimizer = new optim.Adam(model.parameters(), { lr: 0.01 });
  model
    .forward(tensor([[1, 2]], { dtype: 'float32' }))
    .sum()
    .backward();
  optimizer.step();
  const bytes = await saveCheckpoint({ model, optimizer, step: 1 });
  return { model, optimizer, bytes };
}

/** The checkpoint with its metadata JSON replaced by `edit(meta)` (a JSON text). */
async function withMeta(bytes: Uint8Array, edit: (m: Record<string, unknown>) => string): Promise<Uint8Array> {
  const meta = JSON.parse(loadMetadata(bytes)![META]) as Record<string, unknown>;
  const tensors = load(bytes);
  return save(tensors, { [META]: edit(meta) });
}

afterEach(prototypeClean);

describeEach(['cpu', 'webgpu'] as const, 'untrusted files on %s', (kind) => {
  const get = () => (kind === 'cpu' ? B.cpu : B.gpu());

  test('a tensor named __proto__ (or with a constructor/prototype segment) is refused by load()', async () => {
    await on(get(), () => {
      for (const name of ['__proto__', 'a.constructor', 'prototype.x', 'optimizer.__proto__.isAdmin']) {
        const file = rawFile(`{"${name}":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, f32(1));
        expect(() => load(file)).toThrow(ValueError);
        expect(() => load(file)).toThrow(`tensor name '${name}' has the segment`);
      }
      // Nesting deep enough to overflow a recursive printer is a ValueError like any bad shape.
      for (const depth of [10, 5000, 100_000]) {
        const deep = '['.repeat(depth) + ']'.repeat(depth);
        const file = rawFile(`{"a":{"dtype":"F32","shape":${deep},"data_offsets":[0,0]}}`);
        expect(() => load(file)).toThrow(
          /tensor 'a' has shape an array of 1; expected an array of non-negative integers/,
        );
      }
      // Metadata keys too; and a safe name loads into a dict whose keys are all the file's.
      expect(() => loadMetadata(rawFile('{"__metadata__":{"__proto__":"x"}}'))).toThrow(/metadata key '__proto__'/);
      const sd = load(rawFile('{"hasOwnProperty":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}', f32(2)));
      expect(Object.keys(sd)).toEqual(['hasOwnProperty']);
    });
  });

  test('a checkpoint tensor named optimizer.__proto__.isAdmin does not reach Object.prototype', async () => {
    await on(get(), async () => {
      const { model, optimizer, bytes } = await checkpoint();
      const tensors = load(bytes);
      const header: Record<string, unknown> = {};
      let off = 0;
      const data: number[] = [];
      for (const [k, t] of [
        ...Object.entries(tensors),
        ['optimizer.__proto__.isAdmin', tensor([1], { dtype: 'float32' })] as const,
      ]) {
        const vals = await t.data();
        header[k] = { dtype: 'F32', shape: t.shape, data_offsets: [off, off + vals.length * 4] };
        vals.forEach((v) => data.push(...f32(v)));
        off += vals.length * 4;
      }
      header.__metadata__ = loadMetadata(bytes);
      const evil = rawFile(JSON.stringify(header), data);
      expect(() => loadCheckpoint(evil, { model, optimizer })).toThrow(
        /'optimizer.__proto__.isAdmin' has the segment '__proto__'/,
      );
      // A state name that is no parameter index is refused too.
      const odd = await save(
        { ...tensors, 'optimizer.x.expAvg': tensor([1], { dtype: 'float32' }) },
        loadMetadata(bytes),
      );
      expect(() => loadCheckpoint(odd, { model, optimizer })).toThrow(/'x' is not a parameter index/);
      // A state tensor of another dtype (int32 moments) is refused, not computed with.
      const name = Object.keys(tensors).find((k) => k.startsWith('optimizer.'))!;
      const ints = await save({ ...tensors, [name]: tensors[name].int() }, loadMetadata(bytes));
      expect(() => loadCheckpoint(ints, { model, optimizer })).toThrow(/state 0.\w+ has dtype int32; expected float32/);
    });
  });

  test('checkpoint metadata with prototype keys, bad values or the wrong shape is a ValueError naming the key', async () => {
    await on(get(), async () => {
      const { model, optimizer, bytes } = await checkpoint();
      const group = (m: Record<string, unknown>) =>
        (m.optimizer as { paramGroups: Record<string, unknown>[] }).paramGroups[0];
      const cases: [string, (m: Record<string, unknown>) => string, RegExp][] = [
        [
          'steps __proto__',
          (m) => JSON.stringify(m).replace('"steps":{', '"steps":{"__proto__":12345,'),
          /the key '__proto__'/,
        ],
        [
          'extra constructor',
          (m) => JSON.stringify({ ...m, extra: { a: [{ constructor: { prototype: 1 } }] } }),
          /the key 'constructor'/,
        ],
        [
          'lr -1',
          (m) => ((group(m).lr = -1), JSON.stringify(m)),
          /paramGroups\[0\]: Adam: lr must be a finite number >= 0; got -1/,
        ],
        ['lr "abc"', (m) => ((group(m).lr = 'abc'), JSON.stringify(m)), /lr must be a finite number >= 0; got abc/],
        [
          'betas [2, 2]',
          (m) => ((group(m).betas = [2, 2]), JSON.stringify(m)),
          /betas must be two numbers in \[0, 1\); got \[2,2\]/,
        ],
        [
          'unknown hyperparameter',
          (m) => ((group(m).momentum = 0.9), JSON.stringify(m)),
          /has the key 'momentum', which Adam does not have/,
        ],
        [
          'steps {0: -7}',
          (m) => JSON.stringify({ ...m, optimizer: { ...(m.optimizer as object), steps: { 0: -7 } } }),
          /'optimizer.steps.0' is -7; expected an integer >= 0/,
        ],
        [
          'steps {x: 1}',
          (m) => JSON.stringify({ ...m, optimizer: { ...(m.optimizer as object), steps: { x: 1 } } }),
          /'x' is not a parameter index/,
        ],
        ['step 1.5', (m) => JSON.stringify({ ...m, step: 1.5 }), /'step' is 1.5; expected an integer >= 0 or null/],
        ['not JSON', () => '{"version": 1,', /is not valid JSON/],
        ['null', () => 'null', /'surf.checkpoint' is null; expected an object/],
        ['an array', () => '[1]', /expected an object/],
        ['optimizer 5', (m) => JSON.stringify({ ...m, optimizer: 5 }), /'optimizer' is 5; expected an object/],
        [
          'paramGroups null',
          (m) => JSON.stringify({ ...m, optimizer: { ...(m.optimizer as object), paramGroups: null } }),
          /'optimizer.paramGroups' is null/,
        ],
        ['version 2', (m) => JSON.stringify({ ...m, version: 2 }), /checkpoint version 2; this Surf reads version 1/],
        [
          'deep nesting',
          (m) => JSON.stringify({ ...m, extra: JSON.parse('['.repeat(100) + ']'.repeat(100)) }),
          /nested more than 64 levels/,
        ],
      ];
      const lr = optimizer.paramGroups[0].lr;
      for (const [name, edit, msg] of cases) {
        const file = await withMeta(bytes, edit);
        let err: unknown;
        try {
          loadCheckpoint(file, { model, optimizer });
        } catch (e) {
          err = e;
        }
        expect([name, err instanceof ValueError]).toEqual([name, true]);
        expect([name, (err as Error).message]).toEqual([name, expect.stringMatching(msg)]);
        expect(optimizer.paramGroups[0].lr).toBe(lr);
        prototypeClean();
      }
    });
  });
});

test('checkpoint parts are strict options: a misspelt or wrongly typed part is refused', () =>
  on(B.cpu, async () => {
    const { model, optimizer, bytes } = await checkpoint();
    await expect(saveCheckpoint({ model, optimzer: optimizer } as never)).rejects.toThrow(/did you mean 'optimizer'/);
    await expect(saveCheckpoint({ model, step: -1 })).rejects.toThrow(/option 'step' must be an integer >= 0/);
    await expect(saveCheckpoint({ model, optimizer: {} as never })).rejects.toThrow(
      /option 'optimizer' must be an Optimizer/,
    );
    expect(() => loadCheckpoint(bytes, { model, optimizer, sheduler: null } as never)).toThrow(
      /did you mean 'scheduler'/,
    );
    expect(() => loadCheckpoint(bytes, { model, scheduler: {} as never })).toThrow(/must be a scheduler/);
  }));

test('a ReduceLROnPlateau checkpoint saved before its first step (best: Infinity, JSON null) loads', () =>
  on(B.cpu, async () => {
    const { model, optimizer } = await checkpoint();
    const scheduler = new optim.ReduceLROnPlateau(optimizer, { mode: 'max' });
    const bytes = await saveCheckpoint({ model, optimizer, scheduler });
    const again = new optim.ReduceLROnPlateau(optimizer, { mode: 'max' });
    again.best = 3;
    loadCheckpoint(bytes, { model, optimizer, scheduler: again });
    expect(again.best).toBe(-Infinity);
  }));
