/**
 * The baseline: a bigram model p(next | current) from the training text's counts with add-α
 * smoothing. α is picked from a few values by the validation loss, so the baseline is the
 * strongest bigram model, not a strawman. Loss in nats per character.
 */
export interface Bigram {
  alpha: number;
  trainLoss: number;
  valLoss: number;
}

function counts(ids: Int32Array, V: number): Float64Array {
  const c = new Float64Array(V * V);
  for (let i = 1; i < ids.length; i++) c[ids[i - 1] * V + ids[i]]++;
  return c;
}

/** Mean -log p(b | a) over the pairs of `ids` under counts `c` smoothed by α. */
export function bigramLoss(c: Float64Array, V: number, alpha: number, ids: Int32Array): number {
  const rowSum = new Float64Array(V);
  for (let a = 0; a < V; a++) for (let b = 0; b < V; b++) rowSum[a] += c[a * V + b];
  let nll = 0;
  for (let i = 1; i < ids.length; i++) {
    const a = ids[i - 1],
      b = ids[i];
    nll -= Math.log((c[a * V + b] + alpha) / (rowSum[a] + alpha * V));
  }
  return nll / Math.max(1, ids.length - 1);
}

export function bigram(train: Int32Array, val: Int32Array, V: number, alphas = [0.001, 0.01, 0.1, 1]): Bigram {
  const c = counts(train, V);
  let best: Bigram | null = null;
  for (const alpha of alphas) {
    const valLoss = bigramLoss(c, V, alpha, val);
    if (!best || valLoss < best.valLoss) best = { alpha, valLoss, trainLoss: bigramLoss(c, V, alpha, train) };
  }
  return best!;
}
