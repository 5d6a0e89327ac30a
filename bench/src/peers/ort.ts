/**
 * onnxruntime-node (native, CPU execution provider) as a peer for the CPU rows: the native
 * reference the issue measures Surf's CPU backend against. ONNX Runtime has no training
 * API in Node, so the MLP row runs one SGD step written out as an inference graph
 * (forward, cross-entropy, backward, update; onnx-proto.ts): the same work Surf's step
 * does, with the parameters fed in and read back each step as a user of the session would.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pick, relErr } from '../data';
import { Framework, NotAvailable, RowInputs, Runner, kernelCheck, trainCheck } from '../framework';
import type { Row, TrainRow } from '../rows';
import { FLOAT, Graph, INT64, Node, modelBytes } from './onnx-proto';

interface OrtTensor {
  data: Float32Array;
  dims: readonly number[];
}
interface OrtSession {
  run(feeds: Record<string, OrtTensor>): Promise<Record<string, OrtTensor>>;
  release?(): Promise<void>;
}
interface Ort {
  Tensor: new (type: 'float32', data: Float32Array, dims: number[]) => OrtTensor;
  InferenceSession: { create(model: Uint8Array, opts: Record<string, unknown>): Promise<OrtSession> };
  env: { versions?: Record<string, string> };
}

let ortLoaded: Ort | string | undefined;

/** Loaded from the repo's node_modules at run time (a native addon: never bundled). */
function loadOrt(): Ort | string {
  if (ortLoaded === undefined) {
    try {
      ortLoaded = createRequire(join(process.cwd(), 'package.json'))('onnxruntime-node') as Ort;
    } catch (e) {
      ortLoaded = `onnxruntime-node is not installed: ${(e as Error).message.split('\n')[0]}`;
    }
  }
  return ortLoaded;
}

/** One SGD step of an MLP (ReLU between layers, softmax cross-entropy) as an ONNX graph. */
export function mlpStepGraph(layers: number[], batch: number, lr: number): Graph {
  const n = layers.length - 1;
  const nodes: Node[] = [];
  const add = (op: string, inputs: string[], output: string, attrs?: Node['attrs']) => {
    nodes.push({ op, inputs, outputs: [output], attrs });
    return output;
  };
  const acts = ['x'];
  const zs: string[] = [];
  for (let l = 0; l < n; l++) {
    zs.push(add('Gemm', [acts[l], `w${l}`, `b${l}`], `z${l}`));
    if (l + 1 < n) acts.push(add('Relu', [`z${l}`], `a${l + 1}`));
  }
  const lsm = add('LogSoftmax', [zs[n - 1]], 'lsm', [{ name: 'axis', i: 1 }]);
  const s = add('ReduceSum', [add('Mul', ['y', lsm], 'ylsm')], 'nll_sum', [{ name: 'keepdims', i: 0 }]);
  add('Mul', [s, 'neg_inv_b'], 'loss');
  // d loss / d logits = (softmax - y) / batch.
  let g = add('Mul', [add('Sub', [add('Exp', [lsm], 'p'), 'y'], 'p_y'), 'inv_b'], 'g_out');
  for (let l = n - 1; l >= 0; l--) {
    // w - lr · aᵀg in one Gemm; b - lr · Σ_rows g.
    add('Gemm', [acts[l], g, `w${l}`], `w${l}_new`, [
      { name: 'alpha', f: -lr },
      { name: 'beta', f: 1 },
      { name: 'transA', i: 1 },
    ]);
    add(
      'Sub',
      [`b${l}`, add('Mul', [add('ReduceSum', [g, 'axis0'], `db${l}`, [{ name: 'keepdims', i: 0 }]), 'lr'], `lrdb${l}`)],
      `b${l}_new`,
    );
    if (l > 0) {
      const dh = add('Gemm', [g, `w${l}`], `dh${l}`, [{ name: 'transB', i: 1 }]);
      g = add('Where', [add('Greater', [zs[l - 1], 'zero'], `pos${l}`), dh, 'zero'], `g${l - 1}`);
    }
  }
  const inputs = [
    { name: 'x', shape: [batch, layers[0]] },
    { name: 'y', shape: [batch, layers[n]] },
  ];
  const outputs = [{ name: 'loss', shape: [] as number[] }];
  for (let l = 0; l < n; l++) {
    inputs.push({ name: `w${l}`, shape: [layers[l], layers[l + 1]] }, { name: `b${l}`, shape: [layers[l + 1]] });
    outputs.push(
      { name: `w${l}_new`, shape: [layers[l], layers[l + 1]] },
      { name: `b${l}_new`, shape: [layers[l + 1]] },
    );
  }
  const consts = [
    { name: 'neg_inv_b', dims: [], type: FLOAT, values: [-1 / batch] },
    { name: 'inv_b', dims: [], type: FLOAT, values: [1 / batch] },
    { name: 'lr', dims: [], type: FLOAT, values: [lr] },
    { name: 'zero', dims: [], type: FLOAT, values: [0] },
    { name: 'axis0', dims: [1], type: INT64, values: [0] },
  ] as Graph['consts'];
  return { nodes, inputs, outputs, consts };
}

export class OrtFramework implements Framework {
  readonly id = 'ort-cpu' as const;
  readonly label = 'onnxruntime-node cpu';
  readonly device = 'cpu' as const;

  describe(): Record<string, unknown> {
    const ort = loadOrt();
    if (typeof ort === 'string') return { error: ort };
    return {
      executionProvider: 'cpu',
      version: ort.env.versions?.node ?? ort.env.versions?.common ?? null,
      intraOpThreads: 'default (one per core)',
    };
  }

  private session(ort: Ort, g: Graph): Promise<OrtSession> {
    return ort.InferenceSession.create(modelBytes(g), { executionProviders: ['cpu'], graphOptimizationLevel: 'all' });
  }

  async prepare(row: Row, inputs: RowInputs): Promise<Runner> {
    const ort = loadOrt();
    if (typeof ort === 'string') throw new NotAvailable(ort);
    if (row.kind === 'train') return this.trainRunner(ort, row, inputs);
    if (row.kind !== 'matmul') throw new NotAvailable('only the CPU matmul and training rows');
    const { spec, a, b, samples, want } = inputs.matmul();
    const shA = spec.ta ? [spec.k, spec.m] : [spec.m, spec.k];
    const shB = spec.tb ? [spec.n, spec.k] : [spec.k, spec.n];
    const s = await this.session(ort, {
      nodes: [
        {
          op: 'Gemm',
          inputs: ['a', 'b'],
          outputs: ['c'],
          attrs: [
            { name: 'transA', i: spec.ta ? 1 : 0 },
            { name: 'transB', i: spec.tb ? 1 : 0 },
          ],
        },
      ],
      inputs: [
        { name: 'a', shape: shA },
        { name: 'b', shape: shB },
      ],
      outputs: [{ name: 'c', shape: [spec.m, spec.n] }],
    });
    const sets = Array.from({ length: inputs.rotations }, () => ({
      a: new ort.Tensor('float32', a.slice(), shA),
      b: new ort.Tensor('float32', b.slice(), shB),
    }));
    return {
      step: async (i) => {
        await s.run(sets[i % sets.length]);
      },
      sync: async () => {},
      check: async () => kernelCheck(relErr(pick((await s.run(sets[0])).c.data, spec.n, samples), want)),
      dispose: async () => {
        await s.release?.();
      },
    };
  }

  private async trainRunner(ort: Ort, row: TrainRow, inputs: RowInputs): Promise<Runner> {
    if (row.optimizer !== 'sgd') throw new NotAvailable('SGD only (the Adam state would be more graph inputs)');
    // The ONNX step is one captured graph either way: measured once, on the plain row.
    if (row.loop !== 'tidy') throw new NotAvailable('one step graph: see the plain MLP row');
    const data = inputs.train();
    const s = await this.session(ort, mlpStepGraph(row.layers, data.batch, row.lr));
    const xs = data.x.map((x) => new ort.Tensor('float32', x, [data.batch, data.features]));
    const ys = data.yOneHot.map((y) => new ort.Tensor('float32', y, [data.batch, data.classes]));
    // PyTorch's default Linear init: U(-1/√fan_in, 1/√fan_in), from a fixed LCG.
    let seed = 42;
    const u = () => {
      seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
      return seed / 2 ** 32;
    };
    const params: Record<string, OrtTensor> = {};
    for (let l = 0; l + 1 < row.layers.length; l++) {
      const bound = 1 / Math.sqrt(row.layers[l]);
      params[`w${l}`] = new ort.Tensor(
        'float32',
        Float32Array.from({ length: row.layers[l] * row.layers[l + 1] }, () => (2 * u() - 1) * bound),
        [row.layers[l], row.layers[l + 1]],
      );
      params[`b${l}`] = new ort.Tensor(
        'float32',
        Float32Array.from({ length: row.layers[l + 1] }, () => (2 * u() - 1) * bound),
        [row.layers[l + 1]],
      );
    }
    const names = Object.keys(params);
    const step = async (b: number): Promise<number> => {
      const out = await s.run({ x: xs[b], y: ys[b], ...params });
      for (const k of names) params[k] = out[`${k}_new`];
      return out.loss.data[0];
    };
    return {
      step: async (i) => {
        await step(i % xs.length);
      },
      sync: async () => {},
      // The step graph reports the loss before its update: one step on batch 0, then batch 0's loss.
      check: async () => trainCheck(await step(0), await step(0)),
      dispose: async () => {
        await s.release?.();
      },
    };
  }
}
