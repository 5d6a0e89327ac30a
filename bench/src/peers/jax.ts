/**
 * jax-js 0.1.25 as a peer: its webgpu device on the same Dawn adapter, and its wasm device
 * (kernels generated as WebAssembly at run time: no binary to ship) for the CPU rows.
 *
 * jax-js arrays are reference counted (every call consumes its arguments; `.ref` keeps one)
 * and lazy: work is only submitted when a result is read or waited on. So a runner keeps
 * the outputs of its iterations and waits on them with blockUntilReady in sync(); a bounded
 * number stay in flight so that memory stays bounded. Elementwise chains and the training
 * step go through jit(), jax's fusing compiler, as a jax user would write them.
 */
import { pick, relErr } from '../data';
import { Check, Framework, FrameworkId, NotAvailable, RowInputs, Runner, kernelCheck, trainCheck } from '../framework';
import { readsLoss } from '../rows';
import type { Row, TrainRow } from '../rows';

type Jax = typeof import('@jax-js/jax');
type JArray = import('@jax-js/jax').Array;

let jaxModule: Promise<Jax> | null = null;
const started = new Map<string, Promise<boolean>>();

/** Imports jax-js once and starts one of its devices (init is per device, so a CPU-only run never touches WebGPU). */
async function loadJax(device: 'webgpu' | 'wasm'): Promise<{ jax: Jax; ok: boolean }> {
  jaxModule ??= (async () => {
    // jax-js reads navigator.userAgent when it loads; Node 20 has no navigator (a GPU run's
    // setupWebGPU made one holding Dawn's gpu).
    const g = globalThis as { navigator?: { userAgent?: string } };
    if (!g.navigator)
      Object.defineProperty(globalThis, 'navigator', {
        value: { userAgent: `Node.js/${process.version}` },
        configurable: true,
        writable: true,
      });
    return import('@jax-js/jax');
  })();
  const jax = await jaxModule;
  if (!started.has(device))
    started.set(
      device,
      jax.init(device).then((d) => (d as string[]).includes(device)),
    );
  return { jax, ok: await started.get(device)! };
}

/** Outputs waiting to be submitted and finished; at most `limit` are held. */
class InFlight {
  private items: { arr: JArray; done: Promise<unknown> }[] = [];
  constructor(
    private jax: Jax,
    private limit: number,
  ) {}

  /** Submits `arr`'s pending work now; returns a promise only when the oldest must be drained. */
  push(arr: JArray): void | Promise<void> {
    this.items.push({ arr, done: arr.blockUntilReady() });
    if (this.items.length > this.limit) {
      const old = this.items.shift()!;
      return old.done.then(() => old.arr.dispose());
    }
  }

  async drain(): Promise<void> {
    const items = this.items;
    this.items = [];
    await Promise.all(items.map((x) => x.done));
    for (const x of items) x.arr.dispose();
  }
}

export class JaxFramework implements Framework {
  readonly id: FrameworkId;
  readonly label: string;
  readonly device: 'gpu' | 'cpu';
  private jax: Jax | null = null;
  private failure: string | null = null;

  constructor(readonly jaxDevice: 'webgpu' | 'wasm') {
    this.id = `jax-${jaxDevice}`;
    this.label = `jax-js ${jaxDevice}`;
    this.device = jaxDevice === 'webgpu' ? 'gpu' : 'cpu';
  }

  describe(): Record<string, unknown> {
    return { device: this.jaxDevice, ...(this.failure ? { error: this.failure } : {}) };
  }

  private async use(): Promise<Jax> {
    if (!this.jax && !this.failure) {
      try {
        const { jax, ok } = await loadJax(this.jaxDevice);
        if (!ok) this.failure = `jax.init('${this.jaxDevice}') did not start it`;
        else this.jax = jax;
      } catch (e) {
        this.failure = `jax-js did not load: ${(e as Error).message}`;
      }
    }
    if (this.failure) throw new NotAvailable(this.failure);
    this.jax!.defaultDevice(this.jaxDevice);
    return this.jax!;
  }

  async prepare(row: Row, inputs: RowInputs): Promise<Runner> {
    const jax = await this.use();
    const np = jax.numpy;
    const device = this.jaxDevice;
    const put = (data: Float32Array, shape: number[]): JArray => np.array(data, { shape, device });
    switch (row.kind) {
      case 'matmul': {
        const { spec, a, b, samples, want } = inputs.matmul();
        const sets = Array.from({ length: inputs.rotations }, () => [
          put(a, spec.ta ? [spec.k, spec.m] : [spec.m, spec.k]),
          put(b, spec.tb ? [spec.n, spec.k] : [spec.k, spec.n]),
        ]);
        const op = (s: JArray[]) =>
          np.matmul(spec.ta ? np.transpose(s[0].ref) : s[0].ref, spec.tb ? np.transpose(s[1].ref) : s[1].ref);
        return this.kernelRunner(jax, sets, op, 4 * spec.m * spec.n, async (out) =>
          kernelCheck(relErr(pick(out, spec.n, samples), want)),
        );
      }
      case 'sum': {
        const { x, want } = inputs.sum();
        const sets = Array.from({ length: inputs.rotations }, () => [put(x, [row.rows, row.cols])]);
        const op = (s: JArray[]) => (row.axis === null ? np.sum(s[0].ref) : np.sum(s[0].ref, row.axis));
        return this.kernelRunner(jax, sets, op, 4, async (out) => kernelCheck(relErr(out, want)));
      }
      case 'fma': {
        const { a, b, c, want } = inputs.fma();
        const sets = Array.from({ length: inputs.rotations }, () => [
          put(a, row.permuted ? [row.cols, row.rows] : [row.rows, row.cols]),
          put(b, [row.rows, row.cols]),
          put(c, [row.rows, row.cols]),
        ]);
        const f = jax.jit((x: JArray, y: JArray, z: JArray) => (row.permuted ? np.transpose(x) : x).mul(y).add(z));
        const op = (s: JArray[]) => f(s[0].ref, s[1].ref, s[2].ref);
        return this.kernelRunner(
          jax,
          sets,
          op,
          4 * row.rows * row.cols,
          async (out) => kernelCheck(relErr(out, want)),
          () => f.dispose(),
        );
      }
      case 'overhead': {
        let x = np.zeros([row.size], { device });
        const y = np.ones([row.size], { device });
        let done = 0;
        return {
          fixedIters: row.ops,
          step: () => {
            x = x.add(y.ref);
            done++;
          },
          sync: async () => {
            await x.blockUntilReady();
          },
          check: async () => {
            const got = await x.ref.data();
            return kernelCheck(relErr([got[0], got[row.size - 1]], [done, done]));
          },
          dispose: () => {
            x.dispose();
            y.dispose();
          },
        };
      }
      case 'train':
        // jax-js's step is always jax.jit-ted and frees by reference counts: the same runner
        // serves the 'jit' and 'notidy' rows (the latter reads the loss every readEvery steps).
        return this.trainRunner(jax, row, inputs);
      case 'example':
        throw new NotAvailable('Surf only');
      case 'random':
        throw new NotAvailable('a Surf and PyTorch row (not written for jax-js)');
      case 'attention':
      case 'gpt':
      case 'cnn':
      case 'conv':
      case 'zoo':
        throw new NotAvailable('a Surf and PyTorch row (not written for jax-js)');
    }
  }

  private kernelRunner(
    jax: Jax,
    sets: JArray[][],
    op: (s: JArray[]) => JArray,
    outBytes: number,
    check: (out: Float32Array) => Promise<Check>,
    cleanup?: () => void,
  ): Runner {
    // Keep up to 1 GiB (and 64 outputs) in flight.
    const flight = new InFlight(jax, Math.max(2, Math.min(64, Math.floor(2 ** 30 / Math.max(outBytes, 1)))));
    return {
      step: (i) => flight.push(op(sets[i % sets.length])),
      sync: () => flight.drain(),
      check: async () => check((await op(sets[0]).data()) as Float32Array),
      dispose: async () => {
        await flight.drain();
        for (const s of sets) for (const t of s) t.dispose();
        cleanup?.();
      },
    };
  }

  private async trainRunner(jax: Jax, row: TrainRow, inputs: RowInputs): Promise<Runner> {
    const np = jax.numpy;
    const device = this.jaxDevice;
    const data = inputs.train();
    const xs = data.x.map((x) => np.array(x, { shape: [data.batch, data.features], device }));
    const ys = data.yOneHot.map((y) => np.array(y, { shape: [data.batch, data.classes], device }));
    type Params = { w: JArray[]; b: JArray[] };
    let key = jax.random.key(42);
    const params: Params = { w: [], b: [] };
    for (let l = 0; l + 1 < row.layers.length; l++) {
      const [k1, k2] = jax.random.split(key) as unknown as [JArray, JArray];
      key = k1;
      const bound = 1 / Math.sqrt(row.layers[l]);
      params.w.push(jax.random.uniform(k2, [row.layers[l], row.layers[l + 1]], { minval: -bound, maxval: bound }));
      params.b.push(np.zeros([row.layers[l + 1]], { device }));
    }
    key.dispose();
    let p: Params = params;
    const lossFn = (q: Params, x: JArray, y: JArray): JArray => {
      let h = x;
      const n = q.w.length;
      for (let l = 0; l < n; l++) {
        h = np.matmul(h, q.w[l]).add(q.b[l]);
        if (l + 1 < n) h = jax.nn.relu(h);
      }
      const logp = jax.nn.logSoftmax(h, -1);
      return np.mean(np.sum(logp.mul(y), -1)).mul(-1);
    };
    const evalLoss = jax.jit(lossFn);
    const lr = row.lr;
    let runner: Runner;
    const readLoss = async (l: JArray) => (await l.data())[0];
    const lossNow = async () => readLoss(evalLoss(jax.tree.ref(p), xs[0].ref, ys[0].ref));
    // One more step on batch 0 must lower batch 0's loss.
    const checkStep = async (r: Runner) => {
      const b0 = await lossNow();
      const s = r.step(0);
      if (s) await s;
      return trainCheck(b0, await lossNow());
    };
    const pending: JArray[] = [];
    if (row.optimizer === 'sgd') {
      const step = jax.jit((q: Params, x: JArray, y: JArray): [Params, JArray] => {
        const [loss, g] = jax.valueAndGrad(lossFn)(jax.tree.ref(q), x, y) as unknown as [JArray, Params];
        const nq = jax.tree.map((w: JArray, gw: JArray) => w.sub(gw.mul(lr)), q, g) as unknown as Params;
        return [nq, loss];
      });
      runner = {
        step: (i) => {
          const b = i % xs.length;
          const [nq, loss] = step(p, xs[b].ref, ys[b].ref);
          p = nq;
          if (readsLoss(row, i)) return readLoss(loss).then(() => undefined);
          loss.dispose();
        },
        sync: async () => {
          await jax.blockUntilReady(p);
        },
        check: async () => checkStep(runner),
        dispose: () => {
          jax.tree.dispose(p);
          step.dispose();
        },
      };
    } else {
      const b1 = 0.9;
      const b2 = 0.999;
      const eps = 1e-8;
      let m = jax.tree.map((w: JArray) => np.zerosLike(w.ref), jax.tree.ref(p)) as unknown as Params;
      let v = jax.tree.map((w: JArray) => np.zerosLike(w.ref), jax.tree.ref(p)) as unknown as Params;
      let t = 0;
      // The bias-corrected step size comes in as a scalar array, so jit traces once.
      const step = jax.jit(
        (q: Params, mm: Params, vv: Params, x: JArray, y: JArray, lrT: JArray): [Params, Params, Params, JArray] => {
          const [loss, g] = jax.valueAndGrad(lossFn)(jax.tree.ref(q), x, y) as unknown as [JArray, Params];
          const nm = jax.tree.map(
            (a: JArray, gw: JArray) => a.mul(b1).add(gw.ref.mul(1 - b1)),
            mm,
            jax.tree.ref(g),
          ) as unknown as Params;
          const nv = jax.tree.map(
            (a: JArray, gw: JArray) => a.mul(b2).add(gw.ref.mul(gw).mul(1 - b2)),
            vv,
            g,
          ) as unknown as Params;
          const nq = jax.tree.map(
            (w: JArray, a: JArray, s: JArray) => w.sub(a.mul(lrT.ref).div(np.sqrt(s).add(eps))),
            q,
            jax.tree.ref(nm),
            jax.tree.ref(nv),
          ) as unknown as Params;
          lrT.dispose();
          return [nq, nm, nv, loss];
        },
      );
      runner = {
        step: (i) => {
          const b = i % xs.length;
          t++;
          // m̂/(√v̂+ε) with the bias corrections folded into the step size (as PyTorch's Adam does up to ε).
          const lrT = np.array([(lr * Math.sqrt(1 - b2 ** t)) / (1 - b1 ** t)], { device }).reshape([]);
          const [nq, nm, nv, loss] = step(p, m, v, xs[b].ref, ys[b].ref, lrT);
          p = nq;
          m = nm;
          v = nv;
          if (readsLoss(row, i)) return readLoss(loss).then(() => undefined);
          loss.dispose();
        },
        sync: async () => {
          await jax.blockUntilReady(p);
        },
        check: async () => checkStep(runner),
        dispose: () => {
          jax.tree.dispose(p);
          jax.tree.dispose(m);
          jax.tree.dispose(v);
          step.dispose();
        },
      };
    }
    const inner = runner.dispose.bind(runner);
    runner.dispose = () => {
      inner();
      evalLoss.dispose();
      for (const t of [...xs, ...ys, ...pending]) t.dispose();
    };
    return runner;
  }
}
