import { DType, ShapeError, SurfError, ValueError, fmtShape } from '@surf/core';
import { Tensor, noGrad, setBackend, tidy, zeros } from '@surf/autograd';
import type { Module } from './module';

/** One line of a summary: a module, where it sits in the tree, what it output, its parameters. */
export interface SummaryRow {
  /** Dotted name in the tree ('' for the model itself). */
  name: string;
  /** The class name (Linear, Sequential, ...). */
  type: string;
  /** 0 for the model, 1 for its children, ... */
  depth: number;
  /** Shape of the first output it gave in the forward pass; null when it was not called. */
  outputShape: number[] | number[][] | null;
  /** Parameter elements of this module and its descendants (as torchinfo counts them). */
  params: number;
}

export interface ModelSummary {
  rows: SummaryRow[];
  inputShapes: number[][];
  totalParams: number;
  trainableParams: number;
  /** Bytes the parameters and persistent buffers occupy. */
  stateBytes: number;
  /** The table, as torchinfo prints it. */
  toString(): string;
}

export interface SummaryOptions {
  /** dtype of the zero inputs (default float32; int32 for an Embedding's indices). */
  dtype?: DType;
}

const BYTES: Record<DType, number> = { float32: 4, int32: 4, bool: 1 };

function shapeOf(v: unknown): number[] | number[][] | null {
  if (v instanceof Tensor) return v.shape.slice();
  if (Array.isArray(v) && v.length && v.every((x) => x instanceof Tensor)) return v.map((x: Tensor) => x.shape.slice());
  return null;
}

function isShape(s: unknown): s is number[] {
  return Array.isArray(s) && s.every((d) => Number.isInteger(d) && d >= 0);
}

/**
 * torchinfo's summary: runs one forward pass on zeros of `inputShape` (an array of shapes for a
 * module with several inputs) under noGrad, in eval mode so BatchNorm's running statistics stay
 * untouched, on the backend the model's parameters live on, and records every module's output.
 */
export function summarize(model: Module, inputShape: number[] | number[][], opts: SummaryOptions = {}): ModelSummary {
  const op = `${model.constructor.name}.summary`;
  const shapes: number[][] = isShape(inputShape)
    ? [inputShape]
    : Array.isArray(inputShape) && inputShape.length && inputShape.every(isShape)
      ? (inputShape as number[][])
      : [];
  if (!shapes.length)
    throw new ValueError(
      `${op}: inputShape must be a shape such as [1, 784], or an array of shapes for several inputs; got ${JSON.stringify(inputShape)}`,
    );
  const dtype = opts.dtype ?? 'float32';
  if (!(dtype in BYTES)) throw new ValueError(`${op}: dtype must be float32, int32 or bool; got ${String(dtype)}`);

  const named = model.namedModules();
  const outputs = new Map<Module, number[] | number[][] | null>();
  const training = named.map(([, m]) => m.training);
  const first = model.parameters()[0] ?? model.buffers()[0];
  const prev = first ? setBackend(first.ndarray.backend) : null;
  // Each module's forward is wrapped by an own property for the pass, then the property is
  // deleted so the class's forward shows through again.
  const own = named.map(([, m]) => Object.getOwnPropertyDescriptor(m, 'forward'));
  for (const [, m] of named) {
    const original = m.forward;
    (m as { forward: Module['forward'] }).forward = (...args: unknown[]) => {
      const out = original.apply(m, args);
      if (!outputs.has(m)) outputs.set(m, shapeOf(out));
      return out;
    };
  }
  try {
    model.eval();
    tidy(() => noGrad(() => model.forward(...shapes.map((s) => zeros(s, { dtype })))));
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    throw e instanceof SurfError && !(e instanceof ShapeError)
      ? e
      : new ShapeError(`${op}: the forward pass on zeros of shape ${shapes.map(fmtShape).join(', ')} failed: ${why}`);
  } finally {
    named.forEach(([, m], i) => {
      delete (m as { forward?: unknown }).forward;
      if (own[i]) Object.defineProperty(m, 'forward', own[i]);
    });
    named.forEach(([, m], i) => {
      m.training = training[i];
    });
    if (prev) setBackend(prev);
  }

  const names = new Set(named.map(([n]) => n));
  const rows: SummaryRow[] = named.map(([name, m]) => ({
    name,
    type: m.constructor.name,
    depth: depthOf(name, names),
    outputShape: outputs.get(m) ?? null,
    params: m.numParameters(),
  }));
  const params = model.parameters();
  const totalParams = params.reduce((a, p) => a + p.numel, 0);
  const trainableParams = params.filter((p) => p.requiresGrad).reduce((a, p) => a + p.numel, 0);
  const stateBytes = Object.values(model.stateDict()).reduce((a, t) => a + t.numel * BYTES[t.dtype], 0);
  return {
    rows,
    inputShapes: shapes,
    totalParams,
    trainableParams,
    stateBytes,
    toString: () => format(rows, shapes, totalParams, trainableParams, stateBytes),
  };
}

/**
 * The number of modules above this one: 'blocks.0' is one level below the model when `blocks`
 * is a plain array field (no module is named 'blocks'), as the dots alone would not say.
 */
function depthOf(name: string, names: Set<string>): number {
  if (name === '') return 0;
  const parts = name.split('.');
  let depth = 1;
  for (let k = 1; k < parts.length; k++) if (names.has(parts.slice(0, k).join('.'))) depth++;
  return depth;
}

function format(rows: SummaryRow[], inputs: number[][], total: number, trainable: number, bytes: number): string {
  const fmtOut = (s: SummaryRow['outputShape']) =>
    s === null ? '--' : Array.isArray(s[0]) ? (s as number[][]).map(fmtShape).join(', ') : fmtShape(s as number[]);
  const cells = rows.map((r) => [
    `${r.depth ? `${'│  '.repeat(r.depth - 1)}├─ ` : ''}${r.type}${r.name ? ` (${r.name})` : ''}`,
    fmtOut(r.outputShape),
    r.params.toLocaleString('en-US'),
  ]);
  const head = ['Layer (type (name))', 'Output shape', 'Param #'];
  const w = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (c: string[]) => `${c[0].padEnd(w[0])}  ${c[1].padEnd(w[1])}  ${c[2].padStart(w[2])}`;
  const rule = (ch: string) => ch.repeat(w[0] + w[1] + w[2] + 4);
  return [
    rule('='),
    line(head),
    rule('='),
    ...cells.map(line),
    rule('='),
    `Total params: ${total.toLocaleString('en-US')}`,
    `Trainable params: ${trainable.toLocaleString('en-US')}`,
    `Non-trainable params: ${(total - trainable).toLocaleString('en-US')}`,
    `Input shape: ${inputs.map(fmtShape).join(', ')}`,
    `State size (MB): ${(bytes / 1e6).toFixed(2)}`,
    rule('='),
  ].join('\n');
}
