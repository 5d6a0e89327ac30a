import { Backend, CpuBackend, E, NDArray, TypedArray, randomArray } from '@surf/core';

export const cpu = new CpuBackend();

/** The same float data uploaded to the GPU backend and to the CPU reference. */
export function twin(gpu: Backend, shape: number[], seed: number, lo = -1, hi = 1): [NDArray, NDArray] {
  const n = shape.reduce((a, b) => a * b, 1);
  const data = randomArray('uniform', n, seed, lo, hi);
  return [NDArray.fromData(gpu, data, shape), NDArray.fromData(cpu, data, shape)];
}

/** Asserts |got - want| <= atol + rtol·scale elementwise, where scale defaults to |want|. */
export function expectClose(
  got: TypedArray,
  want: TypedArray,
  rtol: number,
  atol: number,
  what: string,
  scale?: ArrayLike<number>,
): void {
  expect(got.length).toBe(want.length);
  for (let i = 0; i < want.length; i++) {
    const g = got[i];
    const w = want[i];
    if (Number.isNaN(w) && Number.isNaN(g)) continue;
    const allowed = atol + rtol * (scale ? scale[i] : Math.abs(w));
    if (!(Math.abs(g - w) <= allowed) && g !== w) {
      throw new Error(`${what}: element ${i} is ${g}, the CPU says ${w} (allowed error ${allowed})`);
    }
  }
}

/**
 * Twin operands of a matmul test (GPU, CPU): a [...lead, m, k], its transposed layout,
 * b [k, n] (broadcast over the batch) and its transposed layout, a bias [n], a full
 * [...lead, m, n] array, and two epilogues reading them.
 */
export function matmulTwins(gpu: Backend, m: number, k: number, n: number, batch: number, seed: number) {
  const lead = batch > 1 ? [batch] : [];
  const [ag, ac] = twin(gpu, [...lead, m, k], seed);
  const [atg, atc] = twin(gpu, [...lead, k, m], seed + 1);
  const [bg, bc] = twin(gpu, [k, n], seed + 2);
  const [btg, btc] = twin(gpu, [n, k], seed + 3);
  const [biasg, biasc] = twin(gpu, [n], seed + 4);
  const [fullg, fullc] = twin(gpu, [...lead, m, n], seed + 5);
  const epis = [
    { expr: E.max(E.add(E.in(0), E.in(1)), E.f(0)), g: [biasg], c: [biasc] },
    { expr: E.sub(E.mul(E.in(0), E.in(2)), E.in(1)), g: [biasg, fullg], c: [biasc, fullc] },
  ];
  return {
    ag,
    ac,
    atg,
    atc,
    bg,
    bc,
    btg,
    btc,
    tr: batch > 1 ? [0, 2, 1] : [1, 0],
    epis,
    all: [ag, ac, atg, atc, bg, bc, btg, btc, biasg, biasc, fullg, fullc],
  };
}

/**
 * A twin set's two layouts (plain, and both operands transposed), GPU operands a1, b1 and CPU
 * ones a2, b2, with |a|·|b| from the CPU: the scale of the f32 tolerance per output element.
 */
export async function twinLayouts(
  t: ReturnType<typeof matmulTwins>,
): Promise<{ name: string; a1: NDArray; b1: NDArray; a2: NDArray; b2: NDArray; scale: Float32Array }[]> {
  const abs = (x: NDArray) => x.map(E.max(E.in(0), E.neg(E.in(0))));
  const layouts: [string, NDArray, NDArray, NDArray, NDArray][] = [
    ['a b', t.ag, t.bg, t.ac, t.bc],
    ['aT bT', t.atg.permute(t.tr), t.btg.permute([1, 0]), t.atc.permute(t.tr), t.btc.permute([1, 0])],
  ];
  const out = [];
  // CPU temporaries (the |x| arrays) are garbage-collected.
  for (const [name, a1, b1, a2, b2] of layouts)
    out.push({ name, a1, b1, a2, b2, scale: (await abs(a2).matmul(abs(b2)).data()) as Float32Array });
  return out;
}
