import seedrandom from 'seedrandom';
import { ValueError } from './errors';

/**
 * Seeded host-side random arrays (seedrandom): test inputs, the tuner's operands, the data
 * loader's shuffles. Random tensors (rand, randn, Dropout, ...) do not come from here: they are
 * Philox draws made by the backends (rng/), from the global stream the frontend keeps.
 */
export type RandomKind = 'uniform' | 'normal';

export function randomArray(
  kind: RandomKind,
  n: number,
  seed: string | number,
  a = kind === 'uniform' ? 0 : 0,
  b = 1,
): Float32Array {
  if (typeof seed !== 'string' && !Number.isFinite(seed))
    throw new ValueError(`random: seed ${seed} is not a finite number or a string`);
  if (kind !== 'uniform' && kind !== 'normal')
    throw new ValueError(`random: unknown kind ${JSON.stringify(kind)}; expected uniform or normal`);
  checkCount('random', n);
  const rng = seedrandom(String(seed));
  const out = new Float32Array(n);
  if (kind === 'uniform') {
    for (let i = 0; i < n; i++) out[i] = a + (b - a) * rng();
  } else {
    // Box-Muller, both values used; a = mean, b = std.
    for (let i = 0; i < n; i += 2) {
      const u1 = 1 - rng();
      const u2 = rng();
      const r = Math.sqrt(-2 * Math.log(u1));
      out[i] = a + b * r * Math.cos(2 * Math.PI * u2);
      if (i + 1 < n) out[i + 1] = a + b * r * Math.sin(2 * Math.PI * u2);
    }
  }
  return out;
}

/** Uniform integers in [low, high). */
export function randomInts(n: number, low: number, high: number, seed: string | number): Int32Array {
  if (!(Number.isInteger(low) && Number.isInteger(high) && high > low))
    throw new ValueError(`randint: bad range [${low}, ${high}); expected integers with high > low`);
  checkCount('randint', n);
  if (typeof seed !== 'string' && !Number.isFinite(seed))
    throw new ValueError(`randint: seed ${seed} is not a finite number or a string`);
  const rng = seedrandom(String(seed));
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) out[i] = low + Math.floor(rng() * (high - low));
  return out;
}

function checkCount(op: string, n: number): void {
  if (!(Number.isInteger(n) && n >= 0)) throw new ValueError(`${op}: count ${n}; expected a non-negative integer`);
}
