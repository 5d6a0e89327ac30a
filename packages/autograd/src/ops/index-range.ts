import { E, NDArray, ValueError } from '@surf/core';
import { readSync } from '../move';
import { Tensor } from '../tensor';

/**
 * The range check of every index operand (gather, scatter, indexSelect, embedding, oneHot,
 * nllLoss): an index outside [0, hi) is a ValueError, never a silent 0 or a dropped write, as
 * in PyTorch. The CPU backend reads the indices and raises at once; a backend that cannot read
 * them without a stall (WebGPU) queues its device-side assert (Backend.checkIndices), which
 * raises at the next readback or sync(), as CUDA's device asserts do.
 *
 * `ignore`: one value that is valid whatever the range (a loss's ignoreIndex).
 */
export interface IndexRange {
  /** The operand's name in messages ('index', 'target'). */
  name: string;
  /** Exclusive upper bound. */
  hi: number;
  /** Inclusive lower bound: 0 unless negative entries count from the end (then −n). */
  lo?: number;
  /** How the range reads in a message: "dim 1 of size 4 in shape [2,4]". */
  range: string;
  ignore?: number;
}

export function checkIndexRange(op: string, index: Tensor | NDArray, r: IndexRange): void {
  const nd = index instanceof Tensor ? index.nd(op) : index;
  if (nd.size === 0) return;
  const lo = r.lo ?? 0;
  const host = readSync(nd, false);
  if (host) {
    for (let i = 0; i < host.length; i++) {
      const v = host[i];
      if ((v < lo || v >= r.hi) && v !== r.ignore)
        throw new ValueError(
          `${op}: ${r.name}[${i}] = ${v} is outside [${lo}, ${r.hi}) (${r.range}); expected indices in range, as PyTorch requires`,
        );
    }
    return;
  }
  const b = nd.backend;
  if (!b.checkIndices)
    throw new ValueError(`${op}: backend '${b.name}' can neither read the ${r.name} now nor check it on the device`);
  // The device check takes a 1-d view; an ignored value is mapped to 0 (always in range) first.
  const flat = nd.view.mask || !nd.view.isContiguous ? nd.contiguous() : nd.share();
  const line = flat.reshape([flat.size]);
  flat.dispose();
  const checked = r.ignore === undefined ? line : line.map(E.where(E.eq(E.in(0), E.i(r.ignore)), E.i(lo), E.in(0)));
  b.checkIndices(checked.strided, lo, r.hi, { op, name: r.name, range: `[${lo}, ${r.hi}) (${r.range})` });
  if (checked !== line) checked.dispose();
  line.dispose();
}
