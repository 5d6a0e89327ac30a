/**
 * TF.js 4.22 as a peer: the webgpu backend on the same Dawn adapter, and the cpu (plain JS)
 * and wasm (XNNPACK) backends for the CPU rows. Each row is written the way a TF.js user
 * writes it: tf.matMul with transpose flags, tf.sum, mul+add (TF.js has no fusion), and
 * training through an optimizer's minimize().
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { conv2dReference, convInputs, convSamples, maxPoolReference, pick, relErr, toChannelsLast } from '../data';
import { bundleDir, findPackageDir } from '../env';
import { Check, Framework, FrameworkId, NotAvailable, RowInputs, Runner, kernelCheck, trainCheck } from '../framework';
import { convOutSize } from '../rows';
import type { ConvRow, Row, TrainRow } from '../rows';

type TF = typeof import('@tensorflow/tfjs-core');
type Tensor = import('@tensorflow/tfjs-core').Tensor;

let tfPromise: Promise<TF> | null = null;
let wasmThreads: (() => number) | null = null;

/** Imports TF.js and its three backends once (after navigator.gpu exists). */
async function loadTf(log: (s: string) => void): Promise<TF> {
  tfPromise ??= (async () => {
    const tf = await import('@tensorflow/tfjs-core');
    // Gradients are registered by a side-effect module (the @tensorflow/tfjs union package
    // imports it; tfjs-core alone does not).
    await import('@tensorflow/tfjs-core/dist/register_all_gradients');
    // Silence the "install tfjs-node" banner and the sync-readback warnings.
    tf.enableProdMode();
    await import('@tensorflow/tfjs-backend-cpu');
    try {
      await import('@tensorflow/tfjs-backend-webgpu');
    } catch (e) {
      log(`TF.js webgpu backend did not load: ${(e as Error).message}`);
    }
    try {
      const wasm = await import('@tensorflow/tfjs-backend-wasm');
      wasmThreads = wasm.getThreadsCount;
      const dir = wasmDir();
      if (dir) wasm.setWasmPaths(dir.endsWith('/') ? dir : `${dir}/`);
      else log('TF.js wasm: no .wasm binaries found next to the bundle or in node_modules');
    } catch (e) {
      log(`TF.js wasm backend did not load: ${(e as Error).message}`);
    }
    return tf;
  })();
  return tfPromise;
}

/** The folder holding tfjs-backend-wasm*.wasm: next to the bundle (GPU host), else the package's dist/. */
function wasmDir(): string | null {
  const here = bundleDir();
  if (existsSync(join(here, 'tfjs-backend-wasm.wasm'))) return here;
  const pkg = findPackageDir(createRequire(join(process.cwd(), 'package.json')), '@tensorflow/tfjs-backend-wasm');
  if (pkg && existsSync(join(pkg, 'dist', 'tfjs-backend-wasm.wasm'))) return join(pkg, 'dist');
  return null;
}

export class TfjsFramework implements Framework {
  readonly id: FrameworkId;
  readonly label: string;
  readonly device: 'gpu' | 'cpu';
  private tf: TF | null = null;
  private ready: Promise<void> | null = null;
  private failure: string | null = null;

  constructor(
    readonly backend: 'webgpu' | 'cpu' | 'wasm',
    private log: (s: string) => void,
  ) {
    this.id = `tfjs-${backend}`;
    this.label = `TF.js ${backend}`;
    this.device = backend === 'webgpu' ? 'gpu' : 'cpu';
  }

  describe(): Record<string, unknown> {
    const d: Record<string, unknown> = { backend: this.backend, version: this.tf?.version_core ?? null };
    if (this.failure) d.error = this.failure;
    if (this.tf && this.backend === 'wasm' && !this.failure) {
      d.wasmDir = wasmDir();
      // In Node the wasm backend runs its SIMD build on one thread (no Web Workers).
      try {
        d.threads = wasmThreads?.() ?? null;
      } catch {
        d.threads = null;
      }
    }
    return d;
  }

  private async use(): Promise<TF> {
    this.ready ??= (async () => {
      const tf = await loadTf(this.log);
      let ok = false;
      try {
        ok = await tf.setBackend(this.backend);
      } catch (e) {
        this.failure = (e as Error).message;
      }
      if (!ok) this.failure ??= `tf.setBackend('${this.backend}') failed`;
      this.tf = tf;
    })();
    await this.ready;
    if (this.failure) throw new NotAvailable(this.failure);
    const tf = this.tf!;
    if (tf.getBackend() !== this.backend) await tf.setBackend(this.backend);
    return tf;
  }

  async afterRow(): Promise<void> {
    // Nothing is kept between rows: every runner disposes its tensors.
  }

  async prepare(row: Row, inputs: RowInputs): Promise<Runner> {
    const tf = await this.use();
    switch (row.kind) {
      case 'matmul': {
        const { spec, a, b, samples, want } = inputs.matmul();
        const shA: [number, number] = spec.ta ? [spec.k, spec.m] : [spec.m, spec.k];
        const shB: [number, number] = spec.tb ? [spec.n, spec.k] : [spec.k, spec.n];
        const sets = Array.from(
          { length: inputs.rotations },
          () => [tf.tensor2d(a, shA), tf.tensor2d(b, shB)] as const,
        );
        const op = (s: readonly [Tensor, Tensor]) => tf.matMul(s[0], s[1], spec.ta, spec.tb);
        return this.kernelRunner(tf, sets, op, async (out) => kernelCheck(relErr(pick(out, spec.n, samples), want)));
      }
      case 'sum': {
        const { x, want } = inputs.sum();
        const sets = Array.from({ length: inputs.rotations }, () => [tf.tensor2d(x, [row.rows, row.cols])] as const);
        const op = (s: readonly [Tensor]) => (row.axis === null ? tf.sum(s[0]) : tf.sum(s[0], row.axis));
        return this.kernelRunner(tf, sets, op, async (out) => kernelCheck(relErr(out, want)));
      }
      case 'fma': {
        const { a, b, c, want } = inputs.fma();
        const sets = Array.from(
          { length: inputs.rotations },
          () =>
            [
              tf.tensor2d(a, row.permuted ? [row.cols, row.rows] : [row.rows, row.cols]),
              tf.tensor2d(b, [row.rows, row.cols]),
              tf.tensor2d(c, [row.rows, row.cols]),
            ] as const,
        );
        const op = (s: readonly [Tensor, Tensor, Tensor]) =>
          tf.tidy(() => tf.add(tf.mul(row.permuted ? tf.transpose(s[0]) : s[0], s[1]), s[2]));
        return this.kernelRunner(tf, sets, op, async (out) => kernelCheck(relErr(out, want)));
      }
      case 'overhead': {
        let x = tf.zeros([row.size]);
        const y = tf.ones([row.size]);
        let done = 0;
        return {
          fixedIters: row.ops,
          step: () => {
            const nx = tf.add(x, y);
            x.dispose();
            x = nx;
            done++;
          },
          sync: async () => {
            await x.data();
          },
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
      case 'train':
        if (row.loop === 'jit') throw new NotAvailable('TF.js has no captured training step');
        if (row.loop === 'notidy') throw new NotAvailable('TF.js frees tensors only through tidy/dispose');
        return this.trainRunner(tf, row, inputs);
      case 'example':
        throw new NotAvailable('Surf only');
      case 'random':
        throw new NotAvailable('a Surf and PyTorch row (not written for TF.js)');
      case 'conv':
        return this.convRunner(tf, row);
      case 'attention':
      case 'gpt':
      case 'cnn':
      case 'zoo':
        throw new NotAvailable('a Surf and PyTorch row (not written for TF.js)');
    }
  }

  /**
   * Issue 13's conv rows as a TF.js user writes them: channels-last tensors (TF.js's layout;
   * the same numbers, transposed on the host), tf.conv2d / tf.maxPool, gradients by tf.grads.
   */
  private convRunner(tf: TF, row: ConvRow): Runner {
    const { batch: N, channels: C, size: S, outChannels: O, kernel: k, padding } = row;
    const o = convOutSize(row);
    const h = convInputs(row, o);
    const x = tf.tensor4d(toChannelsLast(h.x, N, C, S, S), [N, S, S, C]);
    const w = tf.tensor4d(toChannelsLast(h.w, O, C, k, k, true), [k, k, C, O]);
    const g = tf.tensor4d(toChannelsLast(h.g, N, h.outC, o, o), [N, o, o, h.outC]);
    const conv = row.op === 'conv2d';
    const forward = (a: Tensor, b: Tensor) =>
      conv
        ? tf.conv2d(
            a as import('@tensorflow/tfjs-core').Tensor4D,
            b as import('@tensorflow/tfjs-core').Tensor4D,
            1,
            padding,
          )
        : tf.maxPool(a as import('@tensorflow/tfjs-core').Tensor4D, k, k, 'valid');
    const grads = tf.grads((a: Tensor, b: Tensor) => forward(a, b));
    const poolGrads = tf.grads((a: Tensor) => forward(a, w));
    let last: Tensor[] = [];
    const step = () => {
      const out = conv ? grads([x, w], g) : poolGrads([x], g);
      for (const t of last) t.dispose();
      last = out;
    };
    return {
      step,
      sync: async () => {
        for (const t of last) {
          const probe = tf.slice(tf.reshape(t, [-1]), [0], [1]);
          await probe.data();
          probe.dispose();
        }
      },
      check: async () => {
        const out = forward(x, w);
        const all = (await out.data()) as Float32Array;
        out.dispose();
        const samples = convSamples(N, h.outC, o);
        const want = conv
          ? conv2dReference(h.x, h.w, C, S, O, k, padding, samples)
          : maxPoolReference(h.x, C, S, k, samples);
        const got = samples.map(([n, c, y, xx]) => all[((n * o + y) * o + xx) * h.outC + c]);
        return kernelCheck(relErr(got, want));
      },
      dispose: () => {
        for (const t of [...last, x, w, g]) t.dispose();
      },
    };
  }

  private kernelRunner<S extends readonly Tensor[]>(
    tf: TF,
    sets: S[],
    op: (s: S) => Tensor,
    check: (out: Float32Array) => Promise<Check>,
  ): Runner {
    let last: Tensor | null = null;
    return {
      step: (i) => {
        const out = op(sets[i % sets.length]);
        last?.dispose();
        last = out;
      },
      sync: async () => {
        if (!last) return;
        // A one-element slice of the last result: waits for the queue without a big readback.
        const probe = last.size > 1 ? tf.slice(tf.reshape(last, [-1]), [0], [1]) : last.clone();
        await probe.data();
        probe.dispose();
      },
      check: async () => {
        const out = op(sets[0]);
        const got = (await out.data()) as Float32Array;
        out.dispose();
        return check(got);
      },
      dispose: () => {
        last?.dispose();
        for (const s of sets) for (const t of s) t.dispose();
      },
    };
  }

  private async trainRunner(tf: TF, row: TrainRow, inputs: RowInputs): Promise<Runner> {
    const data = inputs.train();
    const xs = data.x.map((x) => tf.tensor2d(x, [data.batch, data.features]));
    const ys = data.yOneHot.map((y) => tf.tensor2d(y, [data.batch, data.classes]));
    const params: { w: import('@tensorflow/tfjs-core').Variable; b: import('@tensorflow/tfjs-core').Variable }[] = [];
    for (let l = 0; l + 1 < row.layers.length; l++) {
      const fanIn = row.layers[l];
      const bound = 1 / Math.sqrt(fanIn);
      params.push({
        w: tf.variable(tf.randomUniform([fanIn, row.layers[l + 1]], -bound, bound, 'float32', 42 + l)),
        b: tf.variable(tf.zeros([row.layers[l + 1]])),
      });
    }
    const forward = (x: Tensor): Tensor => {
      let h = x;
      params.forEach((p, l) => {
        h = tf.add(tf.matMul(h, p.w), p.b);
        if (l + 1 < params.length) h = tf.relu(h);
      });
      return h;
    };
    const lossOf = (i: number) =>
      tf.losses.softmaxCrossEntropy(ys[i], forward(xs[i])) as import('@tensorflow/tfjs-core').Scalar;
    const opt = row.optimizer === 'sgd' ? tf.train.sgd(row.lr) : tf.train.adam(row.lr);
    const evalLoss = async () => {
      const l = tf.tidy(() => lossOf(0));
      const v = (await l.data())[0];
      l.dispose();
      return v;
    };
    return {
      step: (i) => {
        const b = i % xs.length;
        if (!row.readback) {
          opt.minimize(() => lossOf(b), false);
          return;
        }
        const cost = opt.minimize(() => lossOf(b), true)!;
        return cost.data().then(() => cost.dispose());
      },
      sync: async () => {
        const probe = tf.slice(params[0].b, [0], [1]);
        await probe.data();
        probe.dispose();
      },
      // One more step on batch 0 must lower batch 0's loss.
      check: async () => {
        const b0 = await evalLoss();
        opt.minimize(() => lossOf(0), false);
        return trainCheck(b0, await evalLoss());
      },
      dispose: () => {
        opt.dispose();
        for (const p of params) {
          p.w.dispose();
          p.b.dispose();
        }
        for (const t of [...xs, ...ys]) t.dispose();
      },
    };
  }
}
