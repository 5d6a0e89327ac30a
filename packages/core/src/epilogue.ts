import type { Backend, MatmulEpilogue, Storage } from './backend';
import { DTypeError } from './errors';
import { exprDType } from './expr';
import { checkOperand, checkOperandShape } from './validate';
import { View } from './view';

/**
 * The matmul epilogue, decided once for every backend. Its inputs arrive unmasked (NDArray
 * makes masked views contiguous before any contract op but elementwise) and checked here the
 * same way everywhere; a backend fuses the expression into its matmul where it can, and
 * otherwise hands the plain product to `unfusedEpilogue`, the one fallback.
 */
export function checkEpilogueArgs(backend: Backend, epilogue: MatmulEpilogue, shape: readonly number[]): void {
  epilogue.inputs.forEach((x, i) => {
    checkOperandShape('matmul epilogue', `input ${i + 1}`, x, shape);
    checkOperand(backend, 'matmul epilogue', `input ${i + 1}`, x, { mask: false });
  });
  const dt = exprDType(epilogue.expr, ['float32', ...epilogue.inputs.map((x) => x.storage.dtype)], 'matmul epilogue');
  if (dt !== 'float32') throw new DTypeError(`matmul epilogue: expression gives ${dt}; expected float32`);
}

/** Applies the epilogue to a finished product (contiguous, `shape`) as one elementwise pass; frees the product. */
export function unfusedEpilogue(
  backend: Backend,
  product: Storage,
  epilogue: MatmulEpilogue,
  shape: readonly number[],
): Storage {
  const [r] = backend.elementwise(
    [epilogue.expr],
    [{ storage: product, view: View.contiguous(shape) }, ...epilogue.inputs],
    shape,
  );
  backend.dispose(product);
  return r;
}
