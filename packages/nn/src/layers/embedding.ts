import { DTypeError, ValueError } from '@surf/core';
import { Tensor, tidy, zeros } from '@surf/autograd';
import { normal } from '../init';
import { Module, parameter } from '../module';

/** A lookup table [numEmbeddings, embeddingDim], initialised N(0, 1) as in PyTorch. */
export class Embedding extends Module {
  readonly weight: Tensor;

  constructor(
    readonly numEmbeddings: number,
    readonly embeddingDim: number,
  ) {
    super();
    for (const [k, v] of [
      ['numEmbeddings', numEmbeddings],
      ['embeddingDim', embeddingDim],
    ] as const) {
      if (!Number.isInteger(v) || v <= 0) throw new ValueError(`Embedding: ${k} must be a positive integer; got ${v}`);
    }
    this.weight = parameter(normal(zeros([numEmbeddings, embeddingDim])));
  }

  /** Rows for an int32 index tensor of any shape: the result is [...index.shape, embeddingDim]. */
  forward(index: Tensor): Tensor {
    if (!(index instanceof Tensor) || index.dtype !== 'int32') {
      throw new DTypeError(
        `Embedding: index must be an int32 Tensor (pass { dtype: 'int32' } to tensor() or an Int32Array); got ${index instanceof Tensor ? `dtype ${index.dtype}` : typeof index}`,
      );
    }
    // Indices on the device are not read back to validate them: out-of-range rows read as 0.
    return tidy(() => this.weight.indexSelect(0, index.reshape([-1])).reshape([...index.shape, this.embeddingDim]));
  }

  protected override extraRepr(): string {
    return `${this.numEmbeddings}, ${this.embeddingDim}`;
  }
}
