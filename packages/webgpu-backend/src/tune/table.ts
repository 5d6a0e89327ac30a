import type { Backend } from '@surf/core';
import type { MatmulConfig } from '../kernels/matmul/plan';
import type { MatmulConfigOption } from './choose';

/** What the tuner needs of a backend: the WebGPU backend's config hook (kept as an interface so tune/ does not import the backend). */
export interface TunableBackend extends Backend {
  readonly description: string;
  readonly limits: GPUSupportedLimits;
  readonly matmulOption: MatmulConfigOption | undefined;
  setMatmulConfig(opt: MatmulConfigOption | undefined): void;
}

export interface TunedEntry {
  m: number;
  n: number;
  k: number;
  cfg: MatmulConfig;
  ms: number;
  /** Every candidate's time (ms), in the order of the candidates valid on this adapter (NaN: failed to run). */
  times: number[];
}

export interface TunedTable {
  version: number;
  adapter: string;
  entries: TunedEntry[];
}
