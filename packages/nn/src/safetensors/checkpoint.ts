import { ValueError, parseOptions, showValue } from '@surf/core';
import { Tensor } from '@surf/autograd';
import { Module } from '../module';
import { BaseOptions, Optimizer, OptimizerStateDict } from '../optim/optimizer';
import { SchedulerStateDict } from '../optim/schedulers';
import { META_KEY, OptimizerMeta, paramIndex, readMeta, writeMeta } from './checkpoint-meta';
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

/** The parts both directions take; a misspelt key (`optimzer`) is an error, not a part left out. */
const PART_RULES = {
  model: 'any',
  loader: (v: unknown, where: string) => {
    if (!(v instanceof DataLoader)) throw new ValueError(`${where} must be a DataLoader; got ${showValue(v)}`);
  },
  optimizer: (v: unknown, where: string) => {
    if (!(v instanceof Optimizer)) throw new ValueError(`${where} must be an Optimizer; got ${showValue(v)}`);
  },
  scheduler: (v: unknown, where: string) => {
    const s = v as Partial<Scheduler> | null;
    if (typeof s?.stateDict !== 'function' || typeof s.loadStateDict !== 'function')
      throw new ValueError(`${where} must be a scheduler (with stateDict and loadStateDict); got ${showValue(v)}`);
  },
} as const;

/** Serialises model, optimizer, scheduler and step to safetensors bytes (reads the device back). */
export async function saveCheckpoint(parts: CheckpointParts): Promise<Uint8Array> {
  parseOptions<CheckpointParts>('saveCheckpoint', parts, { ...PART_RULES, step: 'nonnegint', extra: 'any' });
  if (!(parts?.model instanceof Module))
    throw new ValueError('saveCheckpoint: expected { model: Module, optimizer?, scheduler?, step?, extra? }');
  // The random state (and loader position) as of this call, before anything awaits.
  const rng = rngMetadata(parts.loader);
  const tensors = new Map<string, Tensor>();
  for (const [k, t] of Object.entries(parts.model.stateDict())) tensors.set(`model.${k}`, t);
  const owned: Tensor[] = [];
  let optimizer: Parameters<typeof writeMeta>[0]['optimizer'] = null;
  if (parts.optimizer) {
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
  try {
    const meta = writeMeta({ step: parts.step ?? null, extra: parts.extra ?? null, optimizer, scheduler });
    return await save(tensors, { [META_KEY]: meta, ...rng });
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
  parseOptions<Omit<CheckpointParts, 'step' | 'extra'>>('loadCheckpoint', parts, PART_RULES);
  if (!(parts?.model instanceof Module))
    throw new ValueError('loadCheckpoint: expected { model: Module, optimizer?, scheduler? } as the second argument');
  const metadata = loadMetadata(bytes);
  const raw = metadata?.[META_KEY];
  if (raw === undefined)
    throw new ValueError(
      `loadCheckpoint: these bytes have no '${META_KEY}' metadata; they are not a checkpoint from saveCheckpoint() (a plain state dict loads with load())`,
    );
  const meta = readMeta(raw);
  const restoreRng = rngRestorer(metadata, parts.loader);
  const all = load(bytes);
  try {
    const { model, optState } = splitTensors(all);
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
    if (parts.optimizer && meta.optimizer) parts.optimizer.loadStateDict(optimizerStateDict(meta.optimizer, optState));
    if (parts.scheduler && meta.scheduler) parts.scheduler.loadStateDict(meta.scheduler);
    restoreRng();
  } finally {
    // The model and optimizer copied what they keep; the loaded tensors are ours to free.
    Object.values(all).forEach((t) => t.dispose());
  }
  return { step: meta.step, extra: meta.extra };
}

/**
 * Splits the file's tensors by prefix into Maps: names come from the file, so they are never
 * property keys of plain objects (load() has already refused prototype segments).
 */
function splitTensors(all: Record<string, Tensor>): {
  model: Map<string, Tensor>;
  optState: Map<number, Map<string, Tensor>>;
} {
  const model = new Map<string, Tensor>();
  const optState = new Map<number, Map<string, Tensor>>();
  for (const k of Object.keys(all)) {
    const t = all[k];
    if (k.startsWith('model.')) model.set(k.slice(6), t);
    else if (k.startsWith('optimizer.')) {
      const parts = k.split('.');
      if (parts.length !== 3 || parts[2] === '' || parts[2] === 'step')
        throw new ValueError(
          `loadCheckpoint: tensor '${k}' is not of the form optimizer.<parameter index>.<state name>`,
        );
      const i = paramIndex(parts[1], `tensor '${k}': parameter index`);
      let m = optState.get(i);
      if (!m) optState.set(i, (m = new Map()));
      m.set(parts[2], t);
    } else throw new ValueError(`loadCheckpoint: tensor '${k}' is neither model.* nor optimizer.*`);
  }
  return { model, optState };
}

/** The optimizer's state dict from the checked metadata and the state tensors, in null-prototype objects. */
function optimizerStateDict(
  meta: OptimizerMeta,
  optState: Map<number, Map<string, Tensor>>,
): OptimizerStateDict<BaseOptions> {
  const state = Object.create(null) as Record<number, { step: number } & Record<string, Tensor | number>>;
  const indices = new Set([...meta.steps.keys(), ...optState.keys()]);
  for (const i of indices) {
    const entry = Object.create(null) as { step: number } & Record<string, Tensor | number>;
    for (const [name, t] of optState.get(i) ?? []) entry[name] = t;
    const step = meta.steps.get(i);
    if (step === undefined)
      throw new ValueError(`loadCheckpoint: optimizer state tensors for parameter ${i}, but no step count for it`);
    entry.step = step;
    state[i] = entry;
  }
  return { state, paramGroups: meta.paramGroups } as unknown as OptimizerStateDict<BaseOptions>;
}
