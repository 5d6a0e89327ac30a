/** The parameter block of the contract's convolution (the scheme in conv.ts). */
export interface ConvParams {
  /** One entry per spatial dim, all positive integers. */
  readonly stride: readonly number[];
  /** [low, high] per spatial dim; any integers (negative crops). */
  readonly padding: readonly (readonly [number, number])[];
  readonly dilation: readonly number[];
  readonly lhsDilation: readonly number[];
  readonly groups: number;
}
