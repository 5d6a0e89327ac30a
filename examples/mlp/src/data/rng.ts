/**
 * A tiny seeded generator (mulberry32) for the data split and the browser's sample picks.
 * The split must not depend on the tensor library's random stream, so that changing how
 * weights are initialised never changes which digits are held out for testing.
 */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A Fisher-Yates permutation of 0..n-1 driven by `seed`. */
export function seededPermutation(n: number, seed: number): Int32Array {
  const rand = mulberry32(seed);
  const p = new Int32Array(n);
  for (let i = 0; i < n; i++) p[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    const t = p[i];
    p[i] = p[j];
    p[j] = t;
  }
  return p;
}
