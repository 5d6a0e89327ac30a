import type { Expr } from '../../expr';
import { NDArray } from '../../ndarray';
import { CaseContext } from '../case';
import { EXACT, Tolerance } from '../compare';
import { refElementwise } from '../ref-expr';
import { RefArray, refCrop, refExpand, refFlip, refPad, refPermute, refReshape } from '../reference';

/**
 * An NDArray on the backend next to its reference twin: every movement op is applied to
 * both (View on one side, naive loops on the other), so a case can build any strided input
 * and still know exactly what it holds.
 */
export class Pair {
  constructor(
    readonly t: CaseContext,
    readonly nd: NDArray,
    readonly ref: RefArray,
  ) {}

  static of(t: CaseContext, ref: RefArray): Pair {
    return new Pair(t, t.upload(ref), ref);
  }

  private next(nd: NDArray, ref: RefArray): Pair {
    return new Pair(this.t, this.t.keep(nd), ref);
  }

  get shape(): readonly number[] {
    return this.ref.shape;
  }
  permute(order: readonly number[]): Pair {
    return this.next(this.nd.permute(order), refPermute(this.ref, order));
  }
  expand(shape: readonly number[]): Pair {
    return this.next(this.nd.expand(shape), refExpand(this.ref, shape));
  }
  crop(ranges: readonly (readonly [number, number])[]): Pair {
    return this.next(this.nd.crop(ranges), refCrop(this.ref, ranges));
  }
  pad(widths: readonly (readonly [number, number])[]): Pair {
    return this.next(this.nd.pad(widths), refPad(this.ref, widths));
  }
  flip(axes: readonly number[]): Pair {
    return this.next(this.nd.flip(axes), refFlip(this.ref, axes));
  }
  reshape(shape: readonly number[]): Pair {
    return this.next(this.nd.reshape(shape), refReshape(this.ref, shape));
  }
}

/** Runs outs on the backend over the pairs and checks each output against the reference. */
export async function checkExprs(
  t: CaseContext,
  label: string,
  outs: readonly Expr[],
  inputs: readonly Pair[],
  tol: Tolerance = EXACT,
): Promise<void> {
  const got = t.keep(
    NDArray.elementwise(
      outs,
      inputs.map((p) => p.nd),
    ),
  );
  const want = refElementwise(
    outs,
    inputs.map((p) => p.ref),
  );
  for (let i = 0; i < outs.length; i++)
    await t.check(outs.length > 1 ? `${label} out${i}` : label, got[i], want[i], tol);
}

/** Reads a pair back through its view (a copy kernel) and checks it exactly. */
export async function checkRead(t: CaseContext, label: string, p: Pair): Promise<void> {
  await t.check(label, p.nd, p.ref, EXACT);
}
