import { ValueError } from '@surf/core';
import { Tensor } from '@surf/autograd';
import { Module } from '../module';
import { checkOptions } from '../options';
import { BaseOptions, Optimizer, OptimizerStateDict } from '../optim/optimizer';
import { SchedulerStateDict } from '../optim/schedulers';
import { load, loadMetadata, save } from './serialize';
import { DataLoader } from '../data/dataloader';
import { rngMetadata, rngRestorer } from './checkpoint-rng';

/**
 * Training checkpoints: the model's state dict, the optimizer's state (moments, momentum
 * buffers, step counts, hyperparameters), a scheduler's state and the step, in ONE
 * safetensors file. Tensors are stored under `model.<name>` and `optimizer.<param index>.<state
 * name>`; everything else is JSON in the `surf.checkpoint` metadata entry. The model part is
 * an ordinary state dict, so `model.*` keys load into PyTorch after stripping the prefix.
 */
export interface Scheduler {
  stateDict(): SchedulerStateDict;
  loadStateDict(sd: SchedulerStateDict): void;
}

export interface CheckpointParts {
  model: Module;
  optimizer?: Optimizer<BaseOptions>;
  scheduler?: Scheduler;
  /** The training step (or epoch) reached. */
  step?: number;
  /** Anything else JSON-serialisable to keep (e.g. the best loss). */
  extra?: unknown;
  /** A DataLoader whose position (epoch, batch, shuffle seed) to save and restore. */
  loader?: DataLoader;
}

const META_KEY = 'surf.checkpoint';
const VERSION = 1;

interface Meta {
  version: number;
  step: number | null;
  extra: unknown;
  optimizer: { name: string; paramGroups: unknown[]; steps: Record<string, number> } | null;
  scheduler: SchedulerStateDict | null;
}

/** Serialises model, optimizer, scheduler and step to safetensors bytes (reads the device back). */
export async function saveCheckpoint(parts: CheckpointParts): Promise<Uint8Array> {
  checkOptions('saveCheckpoint', parts, '{ model, optimizer?, scheduler?, step?, extra?, loader? }');
  if (!(parts?.model instanceof Module))
    throw new ValueError('saveCheckpoint: expected { model: Module, optimizer?, scheduler?, step?, extra? }');
  // The random state (and loader position) as of this call, before anything awaits.
  const rng = rngMetadata(parts.loader);
  const tensors = new Map<string, Tensor>();
  for (const [k, t] of Object.entries(parts.model.stateDict())) tensors.set(`model.${k}`, t);
  const owned: Tensor[] = [];
  let optimizer: Meta['optimizer'] = null;
  if (parts.optimizer) {
    if (!(parts.optimizer instanceof Optimizer)) throw new ValueError('saveCheckpoint: optimizer is not an Optimizer');
    const sd = parts.optimizer.stateDict();
    const steps: Record<string, number> = {};
    for (const [i, entry] of Object.entries(sd.state)) {
      steps[i] = entry.step;
      for (const [k, v] of Object.entries(entry)) {
        if (v instanceof Tensor) {
          tensors.set(`optimizer.${i}.${k}`, v);
          owned.push(v);
        }
      }
    }
    optimizer = { name: parts.optimizer.name, paramGroups: sd.paramGroups, steps };
  }
  const scheduler = parts.scheduler ? parts.scheduler.stateDict() : null;
  const meta: Meta = { version: VERSION, step: parts.step ?? null, extra: parts.extra ?? null, optimizer, scheduler };
  try {
    return await save(tensors, { [META_KEY]: JSON.stringify(meta), ...rng });
  } finally {
    owned.forEach((t) => t.dispose());
  }
}

/**
 * Restores what saveCheckpoint() wrote into an existing model (strict), optimizer and
 * scheduler built the same way; returns the step and extra. Each part is checked before
 * anything is written into it. The global random state saved with the checkpoint is restored
 * too (setRngState), and the loader's position when a loader is given.
 */
export function loadCheckpoint(
  bytes: Uint8Array,
  parts: Omit<CheckpointParts, 'step' | 'extra'>,
): { step: number | null; extra: unknown } {
  checkOptions('loadCheckpoint', parts, '{ model, optimizer?, scheduler?, loader? }');
  if (!(parts?.model instanceof Module))
    throw new ValueError('loadCheckpoint: expected { model: Module, optimizer?, scheduler? } as the second argument');
  const metadata = loadMetadata(bytes);
  const raw = metadata?.[META_KEY];
  if (raw === undefined)
    throw new ValueError(
      `loadCheckpoint: these bytes have no '${META_KEY}' metadata; they are not a checkpoint from saveCheckpoint() (a plain state dict loads with load())`,
    );
  const meta = JSON.parse(raw) as Meta;
  if (meta.version !== VERSION)
    throw new ValueError(`loadCheckpoint: checkpoint version ${meta.version}; this Surf reads version ${VERSION}`);
  const restoreRng = rngRestorer(metadata, parts.loader);
  const all = load(bytes);
  const model: Record<string, Tensor> = {};
  const optState: Record<string, Record<string, Tensor | number>> = {};
  for (const [k, t] of Object.entries(all)) {
    if (k.startsWith('model.')) model[k.slice(6)] = t;
    else if (k.startsWith('optimizer.')) {
      const [, i, name] = k.split('.');
      (optState[i] ??= {})[name] = t;
    }
  }
  try {
    if (parts.optimizer && !meta.optimizer)
      throw new ValueError('loadCheckpoint: the checkpoint holds no optimizer state');
    if (parts.scheduler && !meta.scheduler)
      throw new ValueError('loadCheckpoint: the checkpoint holds no scheduler state');
    if (parts.optimizer && meta.optimizer && parts.optimizer.name !== meta.optimizer.name) {
      throw new ValueError(
        `loadCheckpoint: the checkpoint's optimizer is ${meta.optimizer.name}; got ${parts.optimizer.name}`,
      );
    }
    parts.model.loadStateDict(model);
    if (parts.optimizer && meta.optimizer) {
      for (const [i, step] of Object.entries(meta.optimizer.steps)) (optState[i] ??= {}).step = step;
      const sd = {
        state: optState,
        paramGroups: meta.optimizer.paramGroups,
      } as unknown as OptimizerStateDict<BaseOptions>;
      parts.optimizer.loadStateDict(sd);
    }
    if (parts.scheduler && meta.scheduler) parts.scheduler.loadStateDict(meta.scheduler);
    restoreRng();
  } finally {
    // The model and optimizer copied what they keep; the loaded tensors are ours to free.
    Object.values(all).forEach((t) => t.dispose());
  }
  return { step: meta.step, extra: meta.extra };
}
