/**
 * The messages between the page (main.ts: drawing, the chart, the controls) and its training
 * worker (worker.ts: Surf, the model, the data it trains on). Typed arrays travel as
 * transferables where the sender no longer needs them.
 */
export type ModelKind = 'mlp' | 'cnn';

export interface TrainSettings {
  model: ModelKind;
  hidden: number[];
  channels: number[];
  batchSize: number;
  lr: number;
  epochs: number;
  seed: number;
  shift?: number;
  evalEvery: number;
  maxStepsPerEpoch?: number;
}

export type ToWorker =
  | { type: 'init'; backend: 'auto' | 'cpu' | 'webgpu' }
  | { type: 'data'; bytes: ArrayBuffer }
  | { type: 'train'; settings: TrainSettings }
  | { type: 'stop' }
  | { type: 'predict'; id: number; digit: Float32Array };

/** Where the worker runs, as it sees itself (the browser test checks it). */
export interface WorkerScope {
  /** The global scope's class, 'DedicatedWorkerGlobalScope' in a dedicated worker. */
  scope: string;
  isDedicatedWorker: boolean;
  /** Whether the worker's navigator has WebGPU. */
  hasNavigatorGpu: boolean;
}

export type FromWorker =
  | {
      type: 'ready';
      backend: string;
      description: string;
      software: boolean;
      fallbackReason?: string;
      where: WorkerScope;
    }
  | { type: 'loaded'; train: number; test: number }
  | { type: 'started' }
  | { type: 'loss'; epoch: number; globalStep: number; stepsPerSec: number; loss: number }
  | { type: 'eval'; globalStep: number; accuracy: number }
  | { type: 'filters'; step: number; shape: number[]; values: Float32Array }
  | { type: 'done'; stopped: boolean; testAccuracy: number; steps: number }
  | { type: 'prediction'; id: number; probs: Float32Array | null }
  | { type: 'error'; message: string };
