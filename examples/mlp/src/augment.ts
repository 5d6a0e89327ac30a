import * as surf from '@surf/nn';
import { SIDE } from './data/digits';
import { mulberry32 } from './data/rng';

/**
 * Random translation of a batch of digits by up to `max` pixels each way, done on the device
 * with views (pad, then a shifted crop) and one copy. The batch is cut into `groups` slices
 * with a shift each, so one upload-free kernel chain serves many offsets. With only 8,000
 * training digits the MLP memorises them; shifted copies are what gets it past 95%.
 */
export class RandomShift {
  private readonly rand: () => number;

  constructor(
    readonly max: number,
    seed: number,
    readonly groups = 4,
  ) {
    this.rand = mulberry32(seed ^ 0x5eed);
  }

  apply(x: surf.Tensor): surf.Tensor {
    if (this.max <= 0) return x;
    const n = x.shape[0];
    const m = this.max;
    return surf.tidy(() => {
      const padded = x.reshape([n, SIDE, SIDE]).pad([m, m, m, m]);
      const parts: surf.Tensor[] = [];
      const per = Math.ceil(n / this.groups);
      for (let s = 0; s < n; s += per) {
        const len = Math.min(per, n - s);
        const dy = Math.floor(this.rand() * (2 * m + 1));
        const dx = Math.floor(this.rand() * (2 * m + 1));
        parts.push(padded.narrow(0, s, len).narrow(1, dy, SIDE).narrow(2, dx, SIDE));
      }
      return (parts.length === 1 ? parts[0].contiguous() : surf.cat(parts, 0)).reshape([n, SIDE * SIDE]);
    });
  }
}
