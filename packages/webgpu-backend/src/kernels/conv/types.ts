import type { PooledBuffer } from '../../pool';

/** The conv paths' tunables (defaults and the shape rules in conv.ts). */
export interface ConvConfig {
  tileM: number;
  tileN: number;
  tileK: number;
  threadM: number;
  threadN: number;
  /** Floats of padding per k-row of the staged weight tile (meant to spread its stores over banks; 4 measured slower). */
  padA: number;
  /** Unroll the tileK loop (software adapters compile rolled loops far faster). */
  unroll: boolean;
  /** Split k until about this many workgroups run (0: never split). */
  splitGroups: number;
  /** The least k per split. */
  minChunk: number;
  /** Winograd (conv/winograd*.ts) for stride-1, undilated, ungrouped 5x5 convs and their weight gradients of at least this many direct MFLOP (0: never). */
  wino: number;
  /** Also 3x3 kernels (F(4x4, 3x3) or F(2x2, 3x3) by winoTile; the weight gradient F(3x3, winoBlock²)). */
  wino3: boolean;
  /** The F(2x2) GEMM's and the weight-gradient GEMM's tile: rows (output channels; 32 when there are at most 32), tiles, channels per step, registers. */
  winoTM: number;
  winoTN: number;
  winoTK: number;
  winoRM: number;
  winoRN: number;
  /** The forward path's output tile: 2 (F(2x2, r x r), GEMM with the output transform folded in) or 4 (F(4x4, r x r) through the batched matmul). */
  winoTile: number;
  /** The weight-gradient path's kernel block: 2 (F(m x m, 2x2)) or 4 (F(m x m, 4x4)). */
  winoBlock: number;
}

/** A 4-d operand [d0, d1, H, W]: its buffer, offset and strides (H stride 0 for 1-d). */
export interface ConvOperand {
  buf: PooledBuffer;
  offset: number;
  strides: readonly number[];
}

/** Geometry, all lifted to 2-d. */
export interface ConvGeometry {
  n: number;
  c: number;
  h: number;
  w: number;
  o: number;
  kH: number;
  kW: number;
  oH: number;
  oW: number;
  stride: [number, number];
  dilation: [number, number];
  lhsDilation: [number, number];
  /** Low padding per dim (the high side only bounds the output size). */
  padLo: [number, number];
  groups: number;
}
