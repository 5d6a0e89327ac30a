/**
 * Surf's runners for the model rows of issues 13 and 14: attention forward + backward (fused
 * scaledDotProductAttention or the plain composite), the GPT example's training step, and the
 * CNN example's training step. They use @surf/nn as a user would; what the checkout does not
 * export yet (conv2d before issue 13 lands, ...) makes the row n/a with the reason.
 */
import type { Backend } from '@surf/core';
import {
  attentionInputs,
  attentionReference,
  conv2dReference,
  convInputs,
  convSamples,
  maxPoolReference,
  relErr,
  tokenData,
  trainData,
} from './data';
import { Check, NotAvailable, Runner, kernelCheck, trainCheck } from './framework';
import { convOutSize, readsLoss } from './rows';
import type { AttentionRow, CnnRow, ConvRow, GptRow } from './rows';

// @surf/nn is typed loosely here: the rows use pieces that land at different times, and each
// runner checks that what it needs is there before using it.
/* eslint-disable @typescript-eslint/no-explicit-any */
type Surf = Record<string, any>;
type T = any;

function need(surf: Surf, what: string[], issue: string): void {
  const lacking = what.filter(
    (path) => path.split('.').reduce<any>((o, k) => (o == null ? undefined : o[k]), surf) === undefined,
  );
  if (lacking.length) throw new NotAvailable(`@surf/nn does not export ${lacking.join(', ')} yet (${issue})`);
}

/** A leaf tensor of `shape` from host data (requiresGrad when asked), and what to dispose with it. */
function upload(
  surf: Surf,
  data: Float32Array | Int32Array,
  shape: number[],
  opts: { requiresGrad?: boolean; dtype?: string } = {},
): { t: T; own: T[] } {
  const flat = surf.tensor(data, opts.dtype ? { dtype: opts.dtype } : {});
  const shaped = flat.reshape(shape);
  if (!opts.requiresGrad) return { t: shaped, own: [flat, shaped] };
  const leaf = shaped.detach().requiresGrad_();
  return { t: leaf, own: [flat, shaped, leaf] };
}

export async function modelRunner(
  row: AttentionRow | GptRow | CnnRow | ConvRow,
  surf: Surf,
  be: Backend,
  quick: boolean,
  log: (s: string) => void,
): Promise<Runner> {
  switch (row.kind) {
    case 'conv':
      return convRunner(row, surf, be);
    case 'attention':
      return attentionRunner(row, surf, be);
    case 'gpt':
      return gptRunner(row, surf, be, quick);
    case 'cnn':
      return cnnRunner(row, surf, be, log);
  }
}

const sync = (be: Backend) => async () => {
  be.flush();
  await be.sync();
};

/** A training step body captured with surf.jit, as the examples train (issue 12). */
function jitted(surf: Surf, body: (x: T, y: T) => T): (x: T, y: T) => T {
  need(surf, ['jit'], 'issue 12');
  return surf.jit(body);
}

function attentionRunner(row: AttentionRow, surf: Surf, be: Backend): Runner {
  need(surf, row.impl === 'fused' ? ['scaledDotProductAttention'] : ['where'], 'issue 14');
  const { batch: B, heads: H, len: L, dim: E } = row;
  const shape = [B, H, L, E];
  const host = attentionInputs(B * H * L * E);
  const own: T[] = [];
  const leaf = (d: Float32Array, grad: boolean) => {
    const u = upload(surf, d, shape, { requiresGrad: grad });
    own.push(...u.own);
    return u.t;
  };
  const q = leaf(host.q, true),
    k = leaf(host.k, true),
    v = leaf(host.v, true),
    g = leaf(host.g, false);
  let keep: T = null;
  if (row.impl === 'plain') {
    const m = Uint8Array.from({ length: L * L }, (_, i) => (i % L <= Math.floor(i / L) ? 1 : 0));
    const u = upload(surf, m as unknown as Int32Array, [L, L], { dtype: 'bool' });
    own.push(...u.own);
    keep = u.t;
  }
  const scale = 1 / Math.sqrt(E);
  const forward = (): T =>
    row.impl === 'fused'
      ? surf.scaledDotProductAttention(q, k, v, { causal: row.causal })
      : surf
          .where(keep, q.matmul(k.transpose(-2, -1)).mul(scale), -Infinity)
          .softmax(-1)
          .matmul(v);
  const clearGrads = () => {
    for (const t of [q, k, v]) t.grad = null;
  };
  return {
    step: () => {
      surf.tidy(() => {
        forward().backward(g);
      });
      clearGrads();
    },
    sync: sync(be),
    // The forward output on 16 query rows against a float64 loop, and finite gradients.
    check: async (): Promise<Check> => {
      const rows = Array.from({ length: 16 }, (_, n) => Math.floor(((n + 0.5) * B * H * L) / 16));
      const want = attentionReference(host.q, host.k, host.v, L, E, row.causal, rows);
      const out = surf.noGrad(() => forward());
      const flatOut = (await out.data()) as ArrayLike<number>;
      out.dispose();
      const got = new Float64Array(rows.length * E);
      rows.forEach((r, n) => {
        for (let e = 0; e < E; e++) got[n * E + e] = flatOut[r * E + e];
      });
      const c = kernelCheck(relErr(got, want));
      surf.tidy(() => {
        forward().backward(g);
      });
      const norms: number[] = [];
      for (const t of [q, k, v]) {
        const s = t.grad.abs().sum();
        norms.push(await s.item());
        s.dispose();
      }
      clearGrads();
      if (!norms.every((n) => Number.isFinite(n) && n > 0))
        return { ...c, ok: false, note: `gradients not finite and nonzero: |dq|,|dk|,|dv| sums ${norms.join(', ')}` };
      return c;
    },
    dispose: () => {
      clearGrads();
      for (const t of own) t.dispose();
    },
  };
}

/** examples/gpt's model through the example's package exports (never its src). */
async function loadGpt(): Promise<new (c: Record<string, number>) => T> {
  try {
    const m = (await import('@surf/example-gpt/model')) as unknown as { Gpt?: new (c: Record<string, number>) => T };
    if (!m.Gpt) throw new Error('@surf/example-gpt/model exports no Gpt');
    return m.Gpt;
  } catch (e) {
    throw new NotAvailable(`the GPT example's model did not load: ${(e as Error).message.split('\n')[0]}`);
  }
}

/** lr of step t: the example's LinearWarmup then CosineAnnealingLR to lr/10 (bench.py repeats it). */
export function gptLr(c: GptRow['config'], t: number): number {
  const warm = Math.max(1, Math.min(c.warmup, c.steps - 1));
  if (t < warm) return (c.lr * (t + 1)) / warm;
  const tMax = Math.max(1, c.steps - warm);
  const min = c.lr / 10;
  return min + ((c.lr - min) * (1 + Math.cos((Math.PI * (t - warm + 1)) / tMax))) / 2;
}

/**
 * The example's step (examples/gpt/src/train.ts): AdamW with weight decay on matrices only,
 * gradient clipping, warmup + cosine lr, the loss read every `readEvery` steps. Batches are
 * made once and cycled (the example uploads one per step: a few KB).
 */
async function gptRunner(row: GptRow, surf: Surf, be: Backend, quick: boolean): Promise<Runner> {
  need(surf, ['scaledDotProductAttention', 'nn.MultiheadAttention', 'optim.AdamW', 'optim.clipGradNorm'], 'issue 14');
  const Gpt = await loadGpt();
  const c = row.config;
  surf.manualSeed(1);
  const model = new Gpt({
    vocabSize: c.vocabSize,
    blockSize: c.blockSize,
    nEmbd: c.nEmbd,
    nHead: c.nHead,
    nLayer: c.nLayer,
    dropout: 0,
  });
  const params: T[] = model.parameters();
  const opt = new surf.optim.AdamW(
    [
      { params: params.filter((p) => p.ndim >= 2), weightDecay: c.weightDecay },
      { params: params.filter((p) => p.ndim < 2), weightDecay: 0 },
    ],
    { lr: c.lr, betas: c.betas },
  );
  const data = tokenData(c.vocabSize, c.batchSize, c.blockSize, quick ? 2 : 8);
  const own: T[] = [];
  const ids = (d: Int32Array) => {
    const u = upload(surf, d, [c.batchSize, c.blockSize], { dtype: 'int32' });
    own.push(...u.own);
    return u.t;
  };
  const xs = data.x.map(ids),
    ys = data.y.map(ids);
  const evalLoss = async () => {
    const l = surf.noGrad(() => surf.tidy(() => model.loss(xs[0], ys[0])));
    const v = await l.item();
    l.dispose();
    return v;
  };
  const first = await evalLoss();
  let t = 0;
  const body = (x: T, y: T): T => {
    opt.zeroGrad();
    const l = model.loss(x, y);
    l.backward();
    surf.optim.clipGradNorm(params, c.clip);
    opt.step();
    return l.detach();
  };
  // As the example: the step captured by jit (the lr is set outside it; the record reads it).
  const run = row.jit ? jitted(surf, body) : (x: T, y: T): T => surf.tidy(() => body(x, y));
  const step = (b: number): T => {
    for (const group of opt.paramGroups) group.lr = gptLr(c, t);
    t++;
    return run(xs[b], ys[b]);
  };
  return {
    step: (i) => {
      const loss = step(i % xs.length);
      if (readsLoss(row, i)) return loss.item().then(() => loss.dispose());
      loss.dispose();
    },
    sync: sync(be),
    // Training on the rule must have lowered batch 0's loss from where it started.
    check: async () => trainCheck(first, await evalLoss()),
    dispose: () => {
      for (const x of own) x.dispose();
      opt.dispose?.();
      for (const p of params) p.dispose();
    },
  };
}

/**
 * The CNN example's model: its own buildCnn through the example's package exports, or (when
 * the example is missing) the same architecture built here from nn modules.
 */
async function cnnModel(surf: Surf, channels: number[], log: (s: string) => void): Promise<T> {
  try {
    const m = (await import('@surf/example-cnn/model')) as unknown as { buildCnn?: (c: readonly number[]) => T };
    if (m.buildCnn) return m.buildCnn(channels);
    log('CNN row: @surf/example-cnn/model exports no buildCnn; building its architecture here');
  } catch (e) {
    log(
      `CNN row: the example's model did not load (${(e as Error).message.split('\n')[0]}); building its architecture here`,
    );
  }
  return buildCnn(surf, channels);
}

/** examples/cnn/src/model.ts's architecture from nn modules (the fallback of cnnModel). */
function buildCnn(surf: Surf, channels: number[]): T {
  const { nn } = surf;
  const layers: T[] = [];
  let inC = 1;
  let side = 28;
  for (const ch of channels) {
    layers.push(
      new nn.Conv2d(inC, ch, 3, { padding: 1, bias: false }),
      new nn.BatchNorm2d(ch),
      new nn.ReLU(),
      new nn.MaxPool2d(2),
    );
    inC = ch;
    side = Math.floor(side / 2);
  }
  layers.push(new nn.Flatten(), new nn.Linear(inC * side * side, 10));
  return new nn.Sequential(...layers);
}

async function cnnRunner(row: CnnRow, surf: Surf, be: Backend, log: (s: string) => void): Promise<Runner> {
  need(surf, ['conv2d', 'nn.Conv2d', 'nn.BatchNorm2d', 'nn.MaxPool2d', 'nn.Flatten'], 'issue 13');
  surf.manualSeed(42);
  const model = await cnnModel(surf, row.channels, log);
  const opt = new surf.optim.Adam(model.parameters(), { lr: row.lr });
  // The MLP rows' synthetic digits (784 features = 28x28, teacher labels), as images.
  const data = trainData(784, 10, row.batch, 8);
  const own: T[] = [];
  const xs = data.x.map((x) => {
    const u = upload(surf, x, [row.batch, 1, 28, 28]);
    own.push(...u.own);
    return u.t;
  });
  const ys = data.y.map((y) => {
    const u = upload(surf, y, [row.batch], { dtype: 'int32' });
    own.push(...u.own);
    return u.t;
  });
  const body = (x: T, y: T): T => {
    opt.zeroGrad();
    const l = surf.crossEntropy(model.forward(x), y);
    l.backward();
    opt.step();
    return l.detach();
  };
  const run = row.jit ? jitted(surf, body) : (x: T, y: T): T => surf.tidy(() => body(x, y));
  const step = (b: number): T => run(xs[b], ys[b]);
  // Train-mode forward (batch statistics), as the step sees it; running stats move, harmlessly.
  const evalLoss = async () => {
    const l = surf.noGrad(() => surf.tidy(() => surf.crossEntropy(model.forward(xs[0]), ys[0])));
    const v = await l.item();
    l.dispose();
    return v;
  };
  return {
    step: (i) => {
      step(i % xs.length).dispose();
    },
    sync: sync(be),
    check: async () => {
      const b0 = await evalLoss();
      step(0).dispose();
      return trainCheck(b0, await evalLoss());
    },
    dispose: () => {
      for (const x of own) x.dispose();
      opt.dispose?.();
      for (const p of model.parameters()) p.dispose();
    },
  };
}

/**
 * conv2d (data and weight gradients) or maxPool2d, forward + backward. Inputs centred hashes
 * (weights scaled by 1/√(C·k²)); checked on 64 sampled outputs against float64 loops, and
 * finite gradients.
 */
function convRunner(row: ConvRow, surf: Surf, be: Backend): Runner {
  need(surf, [row.op], 'issue 13');
  const { batch: N, channels: C, size: S, outChannels: O, kernel: k, padding } = row;
  const o = convOutSize(row);
  const { x: hx, w: hw, g: hg, outC } = convInputs(row, o);
  const own: T[] = [];
  const leaf = (d: Float32Array, shape: number[], grad: boolean) => {
    const u = upload(surf, d, shape, { requiresGrad: grad });
    own.push(...u.own);
    return u.t;
  };
  const x = leaf(hx, [N, C, S, S], true);
  const w = row.op === 'conv2d' ? leaf(hw, [O, C, k, k], true) : null;
  const g = leaf(hg, [N, outC, o, o], false);
  const forward = (): T => (row.op === 'conv2d' ? surf.conv2d(x, w, null, { padding }) : surf.maxPool2d(x, k));
  const clearGrads = () => {
    x.grad = null;
    if (w) w.grad = null;
  };
  return {
    step: () => {
      surf.tidy(() => {
        forward().backward(g);
      });
      clearGrads();
    },
    sync: sync(be),
    check: async (): Promise<Check> => {
      const samples = convSamples(N, outC, o);
      const want =
        row.op === 'conv2d'
          ? conv2dReference(hx, hw, C, S, O, k, padding, samples)
          : maxPoolReference(hx, C, S, k, samples);
      const out = surf.noGrad(() => forward());
      const all = (await out.data()) as ArrayLike<number>;
      out.dispose();
      const got = samples.map(([n, c, y, xx]) => all[((n * outC + c) * o + y) * o + xx]);
      const c = kernelCheck(relErr(got, want));
      surf.tidy(() => {
        forward().backward(g);
      });
      const sums: number[] = [];
      for (const t of w ? [x, w] : [x]) {
        const s = t.grad.abs().sum();
        sums.push(await s.item());
        s.dispose();
      }
      clearGrads();
      if (!sums.every((v) => Number.isFinite(v) && v > 0))
        return { ...c, ok: false, note: `gradients not finite and nonzero: ${sums.join(', ')}` };
      return c;
    },
    dispose: () => {
      clearGrads();
      for (const t of own) t.dispose();
    },
  };
}
