import { NDArray, ValueError, withDefaults } from '@surf/core';
import { Tensor } from '@surf/autograd';
import { BaseOptions, Optimizer, OptimizerSpec, ParamsArg } from './optimizer';

export interface LBFGSOptions extends BaseOptions {
  /** Iterations per step() (default 20). */
  maxIter: number;
  /** Closure evaluations per step() (default maxIter·1.25). */
  maxEval: number;
  /** Stop when max |g| ≤ this (default 1e-7). */
  toleranceGrad: number;
  /** Stop when the step or the loss change is below this (default 1e-9). */
  toleranceChange: number;
  /** Curvature pairs kept (default 100). */
  historySize: number;
  /** Only null (a fixed step of lr): PyTorch's 'strong_wolfe' is not offered. */
  lineSearchFn: null;
}

const dot = (a: Float64Array, b: Float64Array): number => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
};
const absMax = (a: Float64Array): number => a.reduce((m, v) => Math.max(m, Math.abs(v)), 0);

/**
 * torch.optim.LBFGS without line search: `await opt.step(closure)` runs up to maxIter
 * iterations of the two-loop recursion over the last historySize curvature pairs, calling the
 * closure (which zeroes the gradients, computes the loss, calls backward and returns the
 * loss) once per iteration, with PyTorch's stopping rules. The flat gradient and the history
 * live on the host (the stopping rules read the loss and gradient back every iteration
 * anyway); parameters are written back once per iteration. Returns the first loss.
 */
export class LBFGS extends Optimizer<LBFGSOptions> {
  private d: Float64Array | null = null;
  private t = 0;
  private oldDirs: Float64Array[] = [];
  private oldStps: Float64Array[] = [];
  private ro: number[] = [];
  private hDiag = 1;
  private prevFlatGrad: Float64Array | null = null;
  private prevLoss = 0;
  /** Iterations over all step() calls (PyTorch's state n_iter). */
  nIter = 0;
  /** Closure evaluations over all step() calls (PyTorch's state func_evals). */
  funcEvals = 0;

  constructor(params: ParamsArg<LBFGSOptions>, opts: Partial<LBFGSOptions> = {}) {
    const o = withDefaults<Omit<LBFGSOptions, 'maxEval'> & { maxEval: number | undefined }>(
      'LBFGS',
      opts,
      {
        lr: 'positive',
        maxIter: 'posint',
        maxEval: 'posint',
        toleranceGrad: 'nonnegative',
        toleranceChange: 'nonnegative',
        historySize: 'posint',
        lineSearchFn: (v: unknown, where: string) => {
          if (v !== null)
            throw new ValueError(`${where}: only null (no line search) is supported; 'strong_wolfe' is not offered`);
        },
        initialLr: 'any',
      },
      {
        lr: 1,
        maxIter: 20,
        maxEval: undefined,
        toleranceGrad: 1e-7,
        toleranceChange: 1e-9,
        historySize: 100,
        lineSearchFn: null,
      },
    );
    // The options were parsed above (maxEval's default depends on maxIter): the base takes them as defaults.
    const all = { ...o, maxEval: o.maxEval ?? Math.floor((o.maxIter * 5) / 4) } as LBFGSOptions;
    const spec = Object.fromEntries(Object.keys(all).map((k) => [k, 'any'])) as unknown as OptimizerSpec<LBFGSOptions>;
    super('LBFGS', params, undefined, all, spec);
    if (this.paramGroups.length !== 1)
      throw new ValueError("LBFGS: supports one parameter group only (as PyTorch's LBFGS)");
  }

  protected validate(): void {}

  protected update(): { param: NDArray; arrays: Record<string, NDArray> } {
    throw new ValueError('LBFGS: call await opt.step(closure)');
  }

  private get params(): Tensor[] {
    return this.paramGroups[0].params;
  }

  private async flatGrad(): Promise<Float64Array> {
    const out = new Float64Array(this.params.reduce((a, p) => a + p.numel, 0));
    let k = 0;
    for (const p of this.params) {
      if (p.grad) out.set((await p.grad.data()) as Float32Array, k);
      k += p.numel;
    }
    return out;
  }

  private async flatParams(): Promise<Float64Array> {
    const out = new Float64Array(this.params.reduce((a, p) => a + p.numel, 0));
    let k = 0;
    for (const p of this.params) {
      out.set((await p.data()) as Float32Array, k);
      k += p.numel;
    }
    return out;
  }

  /** p ← p + t·d, written to every parameter. */
  private addGrad(x: Float64Array, t: number, d: Float64Array): void {
    for (let i = 0; i < x.length; i++) x[i] = Math.fround(x[i] + t * d[i]);
    let k = 0;
    for (const p of this.params) {
      const vals = Float32Array.from(x.subarray(k, k + p.numel));
      const nd = NDArray.fromData(p.ndarray.backend, vals, p.shape);
      p.assign(nd);
      nd.dispose();
      k += p.numel;
    }
  }

  override step(closure?: () => Tensor | number): Promise<number> {
    if (typeof closure !== 'function')
      throw new ValueError(
        'LBFGS.step: pass a closure that zeroes the gradients, computes the loss, calls backward() and returns the loss',
      );
    return this.run(closure);
  }

  private async run(closure: () => Tensor | number): Promise<number> {
    const o = this.paramGroups[0];
    const evalLoss = async () => {
      const l = closure();
      return typeof l === 'number' ? l : await l.item();
    };
    const origLoss = await evalLoss();
    let loss = origLoss;
    let currentEvals = 1;
    this.funcEvals++;
    let flatGrad = await this.flatGrad();
    if (absMax(flatGrad) <= o.toleranceGrad) return origLoss;
    const x = await this.flatParams();
    let nIter = 0;
    while (nIter < o.maxIter) {
      nIter++;
      this.nIter++;
      if (this.nIter === 1) {
        this.d = flatGrad.map((v) => -v);
        this.oldDirs = [];
        this.oldStps = [];
        this.ro = [];
        this.hDiag = 1;
      } else {
        const y = flatGrad.map((v, i) => v - this.prevFlatGrad![i]);
        const s = this.d!.map((v) => v * this.t);
        const ys = dot(y, s);
        if (ys > 1e-10) {
          if (this.oldDirs.length === o.historySize) {
            this.oldDirs.shift();
            this.oldStps.shift();
            this.ro.shift();
          }
          this.oldDirs.push(y);
          this.oldStps.push(s);
          this.ro.push(1 / ys);
          this.hDiag = ys / dot(y, y);
        }
        const n = this.oldDirs.length;
        const al = new Array<number>(n);
        const q = flatGrad.map((v) => -v);
        for (let i = n - 1; i >= 0; i--) {
          al[i] = dot(this.oldStps[i], q) * this.ro[i];
          const di = this.oldDirs[i];
          for (let j = 0; j < q.length; j++) q[j] -= al[i] * di[j];
        }
        const r = q.map((v) => v * this.hDiag);
        for (let i = 0; i < n; i++) {
          const be = dot(this.oldDirs[i], r) * this.ro[i];
          const si = this.oldStps[i];
          for (let j = 0; j < r.length; j++) r[j] += (al[i] - be) * si[j];
        }
        this.d = r;
      }
      this.prevFlatGrad = flatGrad.slice();
      this.prevLoss = loss;
      // The first iteration ever scales the step by the gradient's 1-norm, as PyTorch.
      this.t = this.nIter === 1 ? Math.min(1, 1 / flatGrad.reduce((a, v) => a + Math.abs(v), 0)) * o.lr : o.lr;
      const gtd = dot(flatGrad, this.d);
      if (gtd > -o.toleranceChange) break;
      let lsEvals = 0;
      let optCond = false;
      this.addGrad(x, this.t, this.d);
      if (nIter !== o.maxIter) {
        loss = await evalLoss();
        flatGrad = await this.flatGrad();
        optCond = absMax(flatGrad) <= o.toleranceGrad;
        lsEvals = 1;
      }
      currentEvals += lsEvals;
      this.funcEvals += lsEvals;
      if (nIter === o.maxIter) break;
      if (currentEvals >= o.maxEval) break;
      if (optCond) break;
      if (absMax(this.d) * Math.abs(this.t) <= o.toleranceChange) break;
      if (Math.abs(loss - this.prevLoss) < o.toleranceChange) break;
    }
    return origLoss;
  }

  override stateDict(): never {
    throw new ValueError('LBFGS.stateDict: saving the LBFGS history is not supported');
  }

  override loadStateDict(): never {
    throw new ValueError('LBFGS.loadStateDict: saving the LBFGS history is not supported');
  }
}
