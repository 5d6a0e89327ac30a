import { ValueError } from '@surf/core';

/**
 * One global seed, as torch.manual_seed. Every random op draws a fresh stream named
 * `${seed}/${counter}`, so a program that seeds once gets the same numbers on every run and
 * on every backend (the numbers are made on the host and uploaded).
 */
let seed: string = '0';
let counter = 0;

export function manualSeed(n: number | string): void {
  if (typeof n !== 'string' && !Number.isFinite(n))
    throw new ValueError(`manualSeed: seed ${n} is not a finite number or a string`);
  seed = String(n);
  counter = 0;
}

/** The seed of the next random op. */
export function nextSeed(): string {
  return `${seed}/${counter++}`;
}
