import { CpuBackend } from '@surf/core';
import { setBackend } from '../context';
import { GradNode } from '../node';
import { Tensor } from '../tensor';
import type { GradcheckCase } from './case';
import { hostValues, makeInput } from './inputs';

/**
 * Which ops of the API the gradient-check suite covers, derived from the code: the API is
 * every public method and getter of Tensor plus every function the package exports; an op is
 * covered when a suite case names it or when running a case records a graph node of that
 * name. What is not differentiable is listed below with the reason, so a new op is checked
 * unless someone says why it need not be.
 */
export const NOT_DIFFERENTIABLE: Readonly<Record<string, string>> = {
  // Tensor: results that carry no gradient (integer or boolean outputs).
  argmax: 'integer result',
  argmin: 'integer result',
  int: 'integer result',
  eq: 'boolean result',
  ne: 'boolean result',
  lt: 'boolean result',
  le: 'boolean result',
  gt: 'boolean result',
  ge: 'boolean result',
  // Tensor: graph control, memory and host access.
  backward: 'runs the graph',
  detach: 'cuts the graph',
  requiresGrad_: 'flag',
  assign: 'in-place replacement outside the graph',
  dispose: 'memory',
  nd: 'raw storage access',
  toString: 'formatting',
  data: 'host read',
  item: 'host read',
  toArray: 'host read',
  shape: 'metadata',
  ndim: 'metadata',
  numel: 'metadata',
  dtype: 'metadata',
  isDisposed: 'metadata',
  isLeaf: 'metadata',
  requiresGrad: 'metadata',
  grad: 'the gradient itself',
  ndarray: 'raw storage access',
  // Package functions: creation (leaves), backends, grad mode, memory scopes, the checker itself.
  tensor: 'creates a leaf',
  zeros: 'creates a leaf',
  ones: 'creates a leaf',
  full: 'creates a leaf',
  zerosLike: 'creates a leaf',
  onesLike: 'creates a leaf',
  fullLike: 'creates a leaf',
  arange: 'creates a leaf',
  linspace: 'creates a leaf',
  eye: 'creates a leaf',
  rand: 'creates a leaf',
  randn: 'creates a leaf',
  randint: 'creates a leaf',
  manualSeed: 'random state',
  init: 'backend choice',
  getBackend: 'backend choice',
  setBackend: 'backend choice',
  sync: 'waits for the backend',
  noGrad: 'grad mode',
  enableGrad: 'grad mode',
  isGradEnabled: 'grad mode',
  tidy: 'memory scope',
  keep: 'memory scope',
  memory: 'memory report',
  // the memory policy for loops without tidy.
  configureMemory: 'memory policy',
  collectGarbage: 'memory policy',
  promoteTypes: 'dtype rule',
  checkTensor: 'argument check',
  checkIndexRange: 'argument check',
  Tensor: 'the class',
  gradcheck: 'the checker',
  gradcheckSuite: 'the checker',
  runGradcheckSuite: 'the checker',
  // Issue-17 ops with integer, boolean or sampled results.
  any: 'boolean result',
  all: 'boolean result',
  argsort: 'integer result',
  oneHot: 'integer result',
  multinomial: 'sampled integer result',
  // moving between backends (a new leaf, not recorded), printing, random state.
  to: 'moves data (a new leaf)',
  toAsync: 'moves data (a new leaf)',
  device: 'metadata',
  resolveBackend: 'backend choice',
  moveInPlace: 'moves data outside the graph',
  moveInPlaceAsync: 'moves data outside the graph',
  print: 'formatting',
  toStringAsync: 'formatting',
  toJSON: 'formatting',
  nextSeed: 'random state',
  // bitwise ops take and give int32 or bool only.
  bitwiseAnd: 'integer or boolean result',
  bitwiseOr: 'integer or boolean result',
  bitwiseXor: 'integer or boolean result',
  // jit: captures and replays whole functions; the hooks mark host state for replays.
  jit: 'captures a function (tested against the eager loop)',
  JitError: 'the error class',
  hostEffect: 'jit hook',
  dynamicConst: 'jit hook',
  dynamicData: 'jit hook',
  isRecording: 'jit hook',
  // rng: the stream's state and draws without a gradient.
  getRngState: 'random state',
  setRngState: 'random state',
  bernoulli: 'sampled result (no gradient, as PyTorch)',
  randperm: 'integer result',
  permutation: 'host array',
  // Tensor ops with boolean, integer or host results.
  isnan: 'boolean result',
  isinf: 'boolean result',
  isfinite: 'boolean result',
  isclose: 'boolean result',
  allclose: 'host boolean',
  logicalAnd: 'boolean result',
  logicalOr: 'boolean result',
  logicalXor: 'boolean result',
  logicalNot: 'boolean result',
  unique: 'host-side, no gradient (as PyTorch)',
  // Autograd control.
  registerHook: 'graph control',
  bumpStateEpoch: 'jit guard bookkeeping',
  guardField: 'jit guard bookkeeping',
  trackStateOwner: 'jit guard bookkeeping',
  gradTap: 'graph control (the identity; its function sees the gradient)',
  retainGrad: 'graph control',
  retainsGrad: 'metadata',
};

/** The public API names: Tensor's methods and getters (not `_`-prefixed) and the package's function exports. */
export function apiNames(packageExports: Record<string, unknown>): string[] {
  const names = new Set<string>();
  for (const n of Object.getOwnPropertyNames(Tensor.prototype)) {
    if (n !== 'constructor' && !n.startsWith('_')) names.add(n);
  }
  for (const [n, v] of Object.entries(packageExports)) if (typeof v === 'function') names.add(n);
  return [...names].sort();
}

/** The node op names recorded by a graph, from its output back to its leaves. */
function graphOps(y: Tensor, into: Set<string>): void {
  const seen = new Set<GradNode>();
  const stack: Tensor[] = [y];
  while (stack.length) {
    const node = stack.pop()!._node;
    if (!node || seen.has(node)) continue;
    seen.add(node);
    into.add(node.op);
    stack.push(...node.parents);
  }
}

/** The ops the cases name, and every graph node op their functions record (run once on the CPU). */
export function coveredOps(cases: readonly GradcheckCase[]): Set<string> {
  const ops = new Set<string>();
  const cpu = new CpuBackend();
  const prev = setBackend(cpu);
  try {
    for (const c of cases) {
      ops.add(c.op);
      const xs = c.inputs.map((s, i) => makeInput(cpu, s, hostValues(s, `${c.name}/${i}`)));
      try {
        const y = c.fn(...xs);
        graphOps(y, ops);
        y.dispose();
      } finally {
        xs.forEach((x) => x.dispose());
      }
    }
  } finally {
    setBackend(prev);
  }
  return ops;
}

export interface CoverageReport {
  /** Differentiable API names no case covers. */
  missing: string[];
  /** NOT_DIFFERENTIABLE entries that name nothing in the API any more. */
  stale: string[];
  /** NOT_DIFFERENTIABLE entries that a case's graph records as a node (so they are differentiable). */
  contradicted: string[];
}

/** Compares the API (`packageExports`: the package's module namespace) with what the cases cover. */
export function gradcheckCoverage(
  packageExports: Record<string, unknown>,
  cases: readonly GradcheckCase[],
): CoverageReport {
  const api = apiNames(packageExports);
  const covered = coveredOps(cases);
  const apiSet = new Set(api);
  return {
    missing: api.filter((n) => !(n in NOT_DIFFERENTIABLE) && !covered.has(n)),
    stale: Object.keys(NOT_DIFFERENTIABLE).filter((n) => !apiSet.has(n)),
    contradicted: Object.keys(NOT_DIFFERENTIABLE).filter((n) => covered.has(n)),
  };
}
