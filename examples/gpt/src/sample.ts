import * as surf from '@surf/nn';
import { mulberry32 } from '@surf/example-mlp/data/rng';
import type { Gpt } from './model';

/** A small seeded generator (mulberry32): the same seed gives the same text on every backend. */
export const rng = mulberry32;

export interface SampleOptions {
  /** Divides the logits: < 1 sharper, > 1 flatter (default 1). */
  temperature?: number;
  /** Keep only the k most likely characters (default: all). */
  topK?: number;
}

/**
 * Draws one id from logits on the host: top-k filter, softmax at the temperature, then an
 * inverse-CDF draw. (A private top-k + multinomial: the logits row is tiny and already read
 * back; the ops helper's topk/multinomial can replace it.)
 */
export function sampleFromLogits(logits: ArrayLike<number>, o: SampleOptions, rand: () => number): number {
  const t = o.temperature ?? 1;
  if (!(t > 0)) throw new surf.ValueError(`sample: temperature must be > 0; got ${t}`);
  const V = logits.length;
  const k = Math.min(V, Math.max(1, Math.floor(o.topK ?? V)));
  const order = Array.from({ length: V }, (_, i) => i)
    .sort((a, b) => logits[b] - logits[a])
    .slice(0, k);
  const m = logits[order[0]];
  const w = order.map((i) => Math.exp((logits[i] - m) / t));
  const z = w.reduce((a, b) => a + b, 0);
  let r = rand() * z;
  for (let j = 0; j < k; j++) {
    r -= w[j];
    if (r <= 0) return order[j];
  }
  return order[k - 1];
}

/** Continues `prompt` (ids) by n characters, feeding the last blockSize ids each step. */
export async function generate(
  model: Gpt,
  prompt: readonly number[],
  n: number,
  o: SampleOptions & { seed?: number } = {},
): Promise<number[]> {
  const ids = prompt.length ? prompt.slice() : [0];
  const rand = rng(o.seed ?? 0);
  const wasTraining = model.training;
  model.eval();
  try {
    for (let s = 0; s < n; s++) {
      const ctx = ids.slice(-model.config.blockSize);
      const last = surf.noGrad(() =>
        surf.tidy(() => {
          const logits = model.forward(surf.tensor(Int32Array.from(ctx)).reshape([1, ctx.length]));
          return logits.narrow(1, ctx.length - 1, 1).reshape([-1]);
        }),
      );
      const row = await last.data();
      last.dispose();
      ids.push(sampleFromLogits(row, o, rand));
    }
  } finally {
    model.train(wasTraining);
  }
  return ids.slice(prompt.length ? prompt.length : 1);
}
