import { dropout } from '../../random';
import { manualSeed } from '../../seed';
import type { GradcheckCase } from '../case';

/**
 * dropout's gradient: the function reseeds on every evaluation, so each finite difference sees
 * the same mask, and the gradient must be the mask times 1/(1 − p).
 */
export function randomCases(): GradcheckCase[] {
  return [
    {
      name: 'dropout p 0.4 (seeded: the same elements dropped each evaluation)',
      op: 'dropout',
      inputs: [{ shape: [3, 5] }],
      fn: (x) => {
        manualSeed('dropout case');
        return dropout(x, 0.4);
      },
    },
  ];
}
