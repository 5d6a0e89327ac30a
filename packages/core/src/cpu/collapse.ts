/**
 * Merges adjacent dims that every operand walks as one (stride[d] = stride[d+1]·shape[d+1],
 * which also holds for two broadcast dims of stride 0) and drops size-1 dims. A contiguous
 * elementwise op becomes one flat loop; a bias add over [64, 128] stays two dims. Operands
 * must have no masks. Keeps at least one dim.
 */
export function collapseDims(shape: readonly number[], strides: readonly (readonly number[])[]): { shape: number[]; strides: number[][] } {
  const outShape: number[] = [];
  const outStrides: number[][] = strides.map(() => []);
  for (let d = 0; d < shape.length; d++) {
    if (shape[d] === 1) continue;
    const last = outShape.length - 1;
    if (last >= 0 && strides.every((s, i) => outStrides[i][last] === s[d] * shape[d])) {
      outShape[last] *= shape[d];
      strides.forEach((s, i) => { outStrides[i][last] = s[d]; });
    } else {
      outShape.push(shape[d]);
      strides.forEach((s, i) => outStrides[i].push(s[d]));
    }
  }
  if (outShape.length === 0) {
    outShape.push(1);
    outStrides.forEach((s) => s.push(0));
  }
  return { shape: outShape, strides: outStrides };
}
