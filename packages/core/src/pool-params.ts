/** The parameter block of the contract's windowed pooling (the scheme in pool.ts). */
export interface PoolParams {
  readonly kind: 'max' | 'avg';
  readonly kernel: readonly [number, number];
  readonly stride: readonly [number, number];
  readonly padding: readonly [number, number];
  readonly dilation: readonly [number, number];
  readonly out: readonly [number, number];
  readonly countIncludePad: boolean;
}
