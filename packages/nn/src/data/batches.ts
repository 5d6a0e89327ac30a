import { ValueError, randomArray } from '@surf/core';

/**
 * The host-side half of the DataLoader: which rows go in which batch. Only these small
 * int32 index lists travel to the device; the data stays there.
 */

/** A seeded Fisher–Yates permutation of 0..n-1 (same seed, same order, on every backend). */
export function permutation(n: number, seed: string | number): Int32Array {
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) out[i] = i;
  const u = randomArray('uniform', n, seed);
  for (let i = n - 1; i > 0; i--) {
    // u < 1, so j <= i; Math.min guards f32 rounding of values just below 1.
    const j = Math.min(i, Math.floor(u[i] * (i + 1)));
    const t = out[i];
    out[i] = out[j];
    out[j] = t;
  }
  return out;
}

/** Splits an order of rows into batches of `batchSize`, dropping a short last one if asked. */
export function batchIndices(order: Int32Array, batchSize: number, dropLast: boolean): Int32Array[] {
  if (!(Number.isInteger(batchSize) && batchSize > 0))
    throw new ValueError(`DataLoader: batchSize ${batchSize} is not a positive integer`);
  const out: Int32Array[] = [];
  for (let s = 0; s < order.length; s += batchSize) {
    const e = Math.min(order.length, s + batchSize);
    if (dropLast && e - s < batchSize) break;
    out.push(order.subarray(s, e));
  }
  return out;
}

/** How many batches an epoch of n rows has. */
export function batchCount(n: number, batchSize: number, dropLast: boolean): number {
  return dropLast ? Math.floor(n / batchSize) : Math.ceil(n / batchSize);
}
