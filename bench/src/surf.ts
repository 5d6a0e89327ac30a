/**
 * Surf in the suite: kernel rows drive core's NDArray on a backend directly (@surf/webgpu's,
 * or core's CPU backend), training rows go through the PyTorch-like API of @surf/nn. The
 * packages are loaded fail-soft: a piece that is missing (or not yet written) turns its rows
 * into n/a with the reason, and the rest of the suite still runs.
 */
import { Backend, E, NDArray, createBackend, cpuThreads as cpuThreadCount } from '@surf/core';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pick, relErr } from './data';
import { bundleDir } from './env';
import { Framework, FrameworkId, NotAvailable, RowInputs, Runner, kernelCheck, trainCheck } from './framework';
import { readsLoss } from './rows';
import type { ExampleRow, RandomRow, Row, TrainRow } from './rows';
import { modelRunner } from './surf-models';
import { zooRunner } from './zoo/surf-zoo';

// ---- the parts of @surf/nn the training rows use (structural, so the bench type-checks
// against whatever the package exports today) ----

interface STensor {
  readonly shape: readonly number[];
  reshape(shape: readonly number[]): STensor;
  backward(): void;
  detach(): STensor;
  item(): Promise<number>;
  dispose(): void;
}
interface SModule {
  forward(x: STensor): STensor;
  parameters(): unknown;
  train?(mode?: boolean): unknown;
}
interface SOptimizer {
  step(): void;
  zeroGrad(): void;
  dispose?: () => void;
}
interface SurfNn {
  /** Issue 12's captured step; absent until the `jit` helper lands. */
  jit?: <A extends unknown[], R>(fn: (...args: A) => R) => ((...args: A) => R) & { reset?: () => void };
  init(opts: { backend: string }): Promise<{ backend: string; description: string }>;
  setBackend?: (b: Backend) => Backend;
  getBackend?: () => Backend;
  tensor(data: Float32Array | Int32Array, opts?: { dtype?: string }): STensor;
  manualSeed(n: number): void;
  tidy<T>(fn: () => T): T;
  noGrad<T>(fn: () => T): T;
  randn?(shape: number[]): STensor;
  rand?(shape: number[]): STensor;
  crossEntropy(logits: STensor, target: STensor): STensor;
  nn: {
    Linear: new (inF: number, outF: number) => SModule;
    ReLU: new () => SModule;
    Dropout?: new (p: number) => SModule;
    Sequential: new (...layers: SModule[]) => SModule;
  };
  optim: {
    SGD: new (params: unknown, opts: { lr: number }) => SOptimizer;
    Adam: new (params: unknown, opts: { lr: number }) => SOptimizer;
  };
}

/** What the MNIST example exports that its row uses (examples/mlp/src/train.ts and data/). */
interface ExampleTrain {
  train(opts: {
    data: unknown;
    epochs?: number;
    batchSize?: number;
    logEvery?: number;
    evalEvery?: number;
    maxStepsPerEpoch?: number;
    onLoss?: (p: { globalStep: number; loss: number }) => void;
  }): Promise<{ firstLoss: number; steps: number; epochs: { trainLoss: number }[]; model?: unknown }>;
}

type Loaded<T> = { ok: true; mod: T } | { ok: false; why: string };

function missing(what: string, e: unknown): { ok: false; why: string } {
  const msg = e instanceof Error ? e.message.split('\n')[0] : String(e);
  return { ok: false, why: `${what} did not load: ${msg}` };
}

async function loadNn(): Promise<Loaded<SurfNn>> {
  try {
    // @ts-ignore -- resolved when the package exists; a missing one is caught below
    const m = (await import('@surf/nn')) as unknown as Partial<SurfNn>;
    const need = ['init', 'tensor', 'tidy', 'crossEntropy', 'nn', 'optim'] as const;
    const lacking = need.filter((k) => !m[k]);
    if (lacking.length) return { ok: false, why: `@surf/nn does not export ${lacking.join(', ')}` };
    if (!m.setBackend) {
      try {
        const ag = (await import('@surf/autograd')) as {
          setBackend?: SurfNn['setBackend'];
          getBackend?: SurfNn['getBackend'];
        };
        return { ok: true, mod: { ...(m as SurfNn), setBackend: ag.setBackend, getBackend: ag.getBackend } };
      } catch {
        /* init() then */
      }
    }
    return { ok: true, mod: m as SurfNn };
  } catch (e) {
    return missing('@surf/nn', e);
  }
}

async function loadWebgpu(): Promise<Loaded<{ createWebGPUBackend?: (opts?: unknown) => Promise<Backend> }>> {
  try {
    // @ts-ignore -- resolved when the package exists; a missing one is caught below
    const m = (await import('@surf/webgpu')) as { createWebGPUBackend?: (opts?: unknown) => Promise<Backend> };
    return { ok: true, mod: m };
  } catch (e) {
    return missing('@surf/webgpu', e);
  }
}

async function loadExample(): Promise<Loaded<{ ex: ExampleTrain; data: () => unknown }>> {
  let ex: Partial<ExampleTrain>;
  try {
    ex = (await import('@surf/example-mlp/train')) as Partial<ExampleTrain>;
  } catch (e) {
    return missing('examples/mlp/src/train', e);
  }
  if (typeof ex.train !== 'function') return { ok: false, why: 'examples/mlp/src/train does not export train()' };
  // The digits: a binary split next to the bundle (GPU host, written by build.sh), else the
  // `mnist` package through the example's own loader.
  const bin = join(bundleDir(), 'mnist.bin');
  try {
    if (existsSync(bin)) {
      const b = (await import('@surf/example-mlp/data/binary')) as { decodeSplit?: (u: Uint8Array) => unknown };
      if (b.decodeSplit) {
        const bytes = new Uint8Array(readFileSync(bin));
        const decode = b.decodeSplit;
        return { ok: true, mod: { ex: ex as ExampleTrain, data: () => decode(bytes) } };
      }
    }
    const n = (await import('@surf/example-mlp/data/mnist-node')) as { loadMnist?: () => unknown };
    if (!n.loadMnist) return { ok: false, why: 'examples/mlp/src/data/mnist-node does not export loadMnist()' };
    return { ok: true, mod: { ex: ex as ExampleTrain, data: n.loadMnist } };
  } catch (e) {
    return missing('the MNIST digits', e);
  }
}

export class SurfFramework implements Framework {
  readonly id: FrameworkId;
  readonly label: string;
  readonly device: 'gpu' | 'cpu';
  private backend: Backend | null = null;
  private backendWhy: string | null = null;
  private nnMod: Loaded<SurfNn> | null = null;

  /** `cpuThreads`: the CPU backend's thread count (its default when undefined). */
  constructor(
    readonly kind: 'webgpu' | 'cpu',
    private log: (s: string) => void,
    private readonly cpuThreads?: number,
  ) {
    this.id = kind === 'webgpu' ? 'surf-webgpu' : 'surf-cpu';
    this.label = kind === 'webgpu' ? 'Surf webgpu' : 'Surf cpu';
    this.device = kind === 'webgpu' ? 'gpu' : 'cpu';
  }

  describe(): Record<string, unknown> {
    return {
      backend: this.kind,
      description: this.backend?.description ?? null,
      ...(this.kind === 'cpu' ? { threads: cpuThreadCount() } : {}),
      ...(this.backendWhy ? { error: this.backendWhy } : {}),
    };
  }

  /** The backend every Surf row of this framework runs on (created once). */
  async getBackend(): Promise<Backend> {
    if (!this.backend && !this.backendWhy) {
      if (this.kind === 'cpu') {
        // The factory waits until the worker threads run.
        this.backend = await createBackend(
          'cpu',
          this.cpuThreads === undefined ? undefined : { threads: this.cpuThreads },
        );
      } else {
        const w = await loadWebgpu();
        try {
          if (!w.ok) throw new Error(w.why);
          this.backend = w.mod.createWebGPUBackend ? await w.mod.createWebGPUBackend() : await createBackend('webgpu');
        } catch (e) {
          this.backendWhy = `Surf WebGPU backend unavailable: ${(e as Error).message.split('\n')[0]}`;
          this.log(this.backendWhy);
        }
      }
    }
    if (!this.backend) throw new NotAvailable(this.backendWhy ?? 'no backend');
    return this.backend;
  }

  private async nn(): Promise<SurfNn> {
    this.nnMod ??= await loadNn();
    if (!this.nnMod.ok) throw new NotAvailable(this.nnMod.why);
    const surf = this.nnMod.mod;
    const backend = await this.getBackend();
    if (surf.setBackend) surf.setBackend(backend);
    else if (!surf.getBackend || surf.getBackend() !== backend)
      throw new NotAvailable('@surf/nn exports no setBackend() to put its tensors on the bench backend');
    return surf;
  }

  async prepare(row: Row, inputs: RowInputs): Promise<Runner> {
    if (row.kind === 'train') return this.trainRunner(row, inputs);
    if (row.kind === 'random') return this.randomRunner(row);
    if (row.kind === 'example') return this.exampleRunner(row);
    if (row.kind === 'zoo') {
      await this.nn();
      // @ts-ignore -- resolved when the package exists; nn() above has checked that it loads
      const surf = (await import('@surf/nn')) as unknown as Record<string, unknown>;
      return zooRunner(surf, await this.getBackend(), row.model, row.optimizer, row.loop);
    }
    if (row.kind === 'attention' || row.kind === 'gpt' || row.kind === 'cnn' || row.kind === 'conv') {
      await this.nn();
      // The model rows need the whole @surf/nn surface (modules, optimizers, ops): loaded as is.
      // @ts-ignore -- resolved when the package exists; nn() above has checked that it loads
      return modelRunner(
        row,
        (await import('@surf/nn')) as unknown as Record<string, unknown>,
        await this.getBackend(),
        inputs.quick,
        this.log,
      );
    }
    const be = await this.getBackend();
    const up = (data: Float32Array, shape: number[]) => NDArray.fromData(be, data, shape);
    const sync = async () => {
      be.flush();
      await be.sync();
    };
    switch (row.kind) {
      case 'matmul': {
        const { spec, a, b, samples, want } = inputs.matmul();
        const sets = Array.from({ length: inputs.rotations }, () => {
          const A = spec.ta ? up(a, [spec.k, spec.m]) : up(a, [spec.m, spec.k]);
          const B = spec.tb ? up(b, [spec.n, spec.k]) : up(b, [spec.k, spec.n]);
          const av = spec.ta ? A.permute([1, 0]) : A;
          const bv = spec.tb ? B.permute([1, 0]) : B;
          return { own: [A, B, av, bv], args: [av, bv] };
        });
        return this.kernelRunner(
          sets,
          (s) => s[0].matmul(s[1]),
          sync,
          async (out) => kernelCheck(relErr(pick(out, spec.n, samples), want)),
        );
      }
      case 'sum': {
        const { x, want } = inputs.sum();
        const sets = Array.from({ length: inputs.rotations }, () => {
          const X = up(x, [row.rows, row.cols]);
          return { own: [X], args: [X] };
        });
        const op = (s: NDArray[]) => (row.axis === null ? s[0].sum() : s[0].sum(row.axis));
        return this.kernelRunner(sets, op, sync, async (out) => kernelCheck(relErr(out, want)));
      }
      case 'fma': {
        const { a, b, c, want } = inputs.fma();
        const sets = Array.from({ length: inputs.rotations }, () => {
          const A = up(a, row.permuted ? [row.cols, row.rows] : [row.rows, row.cols]);
          const av = row.permuted ? A.permute([1, 0]) : A;
          const B = up(b, [row.rows, row.cols]);
          const C = up(c, [row.rows, row.cols]);
          return { own: [A, av, B, C], args: [av, B, C] };
        });
        const expr = E.add(E.mul(E.in(0), E.in(1)), E.in(2));
        return this.kernelRunner(
          sets,
          (s) => NDArray.elementwise([expr], s)[0],
          sync,
          async (out) => kernelCheck(relErr(out, want)),
        );
      }
      case 'overhead': {
        let x = NDArray.full(be, [row.size], 0);
        const y = NDArray.full(be, [row.size], 1);
        const add = E.add(E.in(0), E.in(1));
        let done = 0;
        return {
          fixedIters: row.ops,
          step: () => {
            const nx = x.map(add, y);
            x.dispose();
            x = nx;
            done++;
          },
          sync,
          check: async () => {
            const got = await x.data();
            return kernelCheck(relErr([got[0], got[row.size - 1]], [done, done]));
          },
          dispose: () => {
            x.dispose();
            y.dispose();
          },
        };
      }
    }
  }

  /** A random row: `row.size` values from the seeded generator per iteration, through @surf/nn. */
  private async randomRunner(row: RandomRow): Promise<Runner> {
    const surf = await this.nn();
    const be = await this.getBackend();
    const draw = row.dist === 'normal' ? surf.randn : surf.rand;
    if (!draw) throw new NotAvailable(`@surf/nn has no ${row.dist === 'normal' ? 'randn' : 'rand'}`);
    surf.manualSeed(42);
    let last: STensor | null = null;
    return {
      step: () => {
        last?.dispose();
        last = draw([row.size]);
      },
      sync: async () => {
        be.flush();
        await be.sync();
      },
      // Mean and variance of one draw: 0 and 1 (normal) or 1/2 and 1/12 (uniform), to 1%.
      check: async () => {
        const t = draw([row.size]) as STensor & { data(): Promise<Float32Array> };
        const v = await t.data();
        t.dispose();
        let m = 0;
        for (const x of v) m += x;
        m /= v.length;
        let q = 0;
        for (const x of v) q += (x - m) ** 2;
        q /= v.length;
        const [wm, wq] = row.dist === 'normal' ? [0, 1] : [0.5, 1 / 12];
        const ok = Math.abs(m - wm) < 0.01 && Math.abs(q - wq) < 0.01 * Math.max(wq, 0.1);
        return { ok, note: `mean ${m.toFixed(4)}, variance ${q.toFixed(4)}` };
      },
      dispose: () => last?.dispose(),
    };
  }

  private kernelRunner(
    sets: { own: NDArray[]; args: NDArray[] }[],
    op: (args: NDArray[]) => NDArray,
    sync: () => Promise<void>,
    check: (out: Float32Array) => Promise<ReturnType<typeof kernelCheck>>,
  ): Runner {
    let last: NDArray | null = null;
    return {
      step: (i) => {
        const out = op(sets[i % sets.length].args);
        last?.dispose();
        last = out;
      },
      sync,
      check: async () => {
        const out = op(sets[0].args);
        const got = (await out.data()) as Float32Array;
        out.dispose();
        return check(got);
      },
      dispose: () => {
        last?.dispose();
        for (const s of sets) for (const t of s.own) t.dispose();
      },
    };
  }

  private async trainRunner(row: TrainRow, inputs: RowInputs): Promise<Runner> {
    const surf = await this.nn();
    const be = await this.getBackend();
    if (row.loop === 'jit' && typeof surf.jit !== 'function')
      throw new NotAvailable('@surf/nn does not export jit yet (issue 12)');
    const data = inputs.train();
    surf.manualSeed(42);
    const layers: SModule[] = [];
    for (let l = 0; l + 1 < row.layers.length; l++) {
      layers.push(new surf.nn.Linear(row.layers[l], row.layers[l + 1]));
      if (l + 2 < row.layers.length) layers.push(new surf.nn.ReLU());
      if (l + 2 < row.layers.length && row.dropout) {
        if (!surf.nn.Dropout) throw new NotAvailable('@surf/nn has no Dropout');
        layers.push(new surf.nn.Dropout(row.dropout));
      }
    }
    const model = new surf.nn.Sequential(...layers);
    const opt =
      row.optimizer === 'sgd'
        ? new surf.optim.SGD(model.parameters(), { lr: row.lr })
        : new surf.optim.Adam(model.parameters(), { lr: row.lr });
    const upload = (d: Float32Array | Int32Array, shape: number[], dtype: string): STensor => {
      const t = surf.tensor(d, { dtype });
      if (t.shape.length === shape.length && t.shape.every((n, i) => n === shape[i])) return t;
      const r = t.reshape(shape);
      t.dispose();
      return r;
    };
    const xs = data.x.map((x) => upload(x, [data.batch, data.features], 'float32'));
    const ys = data.y.map((y) => upload(y, [data.batch], 'int32'));
    // The check's loss is taken in eval mode: no Dropout noise between the two readings.
    const evalLoss = async () => {
      model.train?.(false);
      const l = surf.noGrad(() => surf.tidy(() => surf.crossEntropy(model.forward(xs[0]), ys[0])));
      model.train?.(true);
      const v = await l.item();
      l.dispose();
      return v;
    };
    const body = (x: STensor, y: STensor, detach = true): STensor => {
      opt.zeroGrad();
      const l = surf.crossEntropy(model.forward(x), y);
      l.backward();
      opt.step();
      return detach ? l.detach() : l;
    };
    // 'tidy': the documented loop. 'jit': the same body captured once per signature and
    // replayed. 'notidy': the loop PyTorch users write (the loss kept as backward left it,
    // nothing disposed by hand), so what frees memory is whatever Surf does on its own (the
    // row's check notes the growth).
    const captured = row.loop === 'jit' ? surf.jit!(body) : null;
    const step = (b: number): STensor =>
      captured
        ? captured(xs[b], ys[b])
        : row.loop === 'notidy'
          ? body(xs[b], ys[b], false)
          : surf.tidy(() => body(xs[b], ys[b]));
    const bytesAtStart = be.memory().bytes;
    const checkLoop = async () => {
      const b0 = await evalLoss();
      step(0).dispose();
      const c = trainCheck(b0, await evalLoss());
      if (row.loop !== 'notidy') return c;
      const grown = (be.memory().bytes - bytesAtStart) / 2 ** 20;
      return {
        ...c,
        note: [c.note, `live memory grew by ${grown.toFixed(1)} MiB over the row`].filter(Boolean).join('; '),
      };
    };
    return {
      step: (i) => {
        const loss = step(i % xs.length);
        if (readsLoss(row, i)) {
          if (row.loop === 'notidy') return loss.item().then(() => undefined);
          return loss.item().then(() => loss.dispose());
        }
        if (row.loop !== 'notidy') loss.dispose();
      },
      sync: async () => {
        be.flush();
        await be.sync();
      },
      // One more step on batch 0 must lower batch 0's loss.
      check: checkLoop,
      dispose: () => {
        for (const t of [...xs, ...ys]) t.dispose();
        opt.dispose?.();
        const params = model.parameters() as Iterable<{ dispose?: () => void }> | undefined;
        if (params && typeof (params as Iterable<unknown>)[Symbol.iterator] === 'function')
          for (const p of params) p.dispose?.();
      },
    };
  }

  /**
   * The example's own loop (Adam, batch 64, loss read every 10 steps, as `npm run mlp` runs it):
   * steps/s between the loss read after the warm-up steps and the last one.
   */
  private async exampleRunner(row: ExampleRow): Promise<Runner> {
    const ex = await loadExample();
    if (!ex.ok) throw new NotAvailable(ex.why);
    await this.nn();
    const data = ex.mod.data();
    let stepsPerSec = NaN;
    let firstLoss = NaN;
    let lastLoss = NaN;
    const run = async () => {
      const marks: { step: number; t: number; loss: number }[] = [];
      const r = await ex.mod.ex.train({
        data,
        epochs: 1,
        batchSize: 64,
        logEvery: 10,
        evalEvery: 0,
        maxStepsPerEpoch: row.steps,
        onLoss: (p) => marks.push({ step: p.globalStep, t: performance.now(), loss: p.loss }),
      });
      const warm = marks.find((m) => m.step >= 10) ?? marks[0];
      const last = marks[marks.length - 1];
      if (!warm || !last || last.step <= warm.step) throw new Error('the example reported too few loss points to time');
      stepsPerSec = (last.step - warm.step) / ((last.t - warm.t) / 1000);
      firstLoss = r.firstLoss;
      lastLoss = last.loss;
    };
    return {
      // One "iteration" is a whole short training run; the row reports the example's own rate.
      fixedIters: 1,
      step: () => run(),
      sync: async () => {},
      check: async () => trainCheck(firstLoss, lastLoss),
      dispose: () => {},
      reported: () => stepsPerSec,
    };
  }
}
