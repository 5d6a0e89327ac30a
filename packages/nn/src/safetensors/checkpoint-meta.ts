import { ValueError } from '@surf/core';
import { SchedulerStateDict } from '../optim/schedulers';
import { brief, isObject, parseJson, rebuild } from './untrusted';

/**
 * The `surf.checkpoint` metadata entry: everything of a checkpoint that is not a tensor, as
 * JSON. Read back, it is untrusted: parsed into fresh objects (no prototype keys), then each
 * section checked for its shape here, and its values by the part that takes them (the
 * optimizer's and scheduler's loadStateDict run the constructors' checks). A new section is
 * one more field in CheckpointMeta, one more reader below, and one more writer in saveCheckpoint.
 */
export const META_KEY = 'surf.checkpoint';
export const VERSION = 1;

export interface OptimizerMeta {
  name: string;
  paramGroups: Record<string, unknown>[];
  /** Step count by parameter index. */
  steps: Map<number, number>;
}

export interface CheckpointMeta {
  version: number;
  step: number | null;
  extra: unknown;
  optimizer: OptimizerMeta | null;
  scheduler: SchedulerStateDict | null;
}

const FN = 'loadCheckpoint';

function bad(key: string, v: unknown, expected: string): never {
  throw new ValueError(`${FN}: checkpoint metadata '${key}' is ${brief(v)}; expected ${expected}`);
}

/** A parameter index as saved: a canonical non-negative integer string. */
export function paramIndex(key: string, where: string): number {
  if (!/^(0|[1-9][0-9]{0,8})$/.test(key))
    throw new ValueError(`${FN}: ${where} '${key}' is not a parameter index (a non-negative integer)`);
  return Number(key);
}

function readOptimizer(v: unknown): OptimizerMeta | null {
  if (v === null || v === undefined) return null;
  if (!isObject(v)) bad('optimizer', v, 'an object { name, paramGroups, steps } or null');
  if (typeof v.name !== 'string') bad('optimizer.name', v.name, 'a string');
  if (!Array.isArray(v.paramGroups) || !v.paramGroups.every(isObject))
    bad('optimizer.paramGroups', v.paramGroups, 'an array of objects');
  v.paramGroups.forEach((g, i) => {
    const params = (g as Record<string, unknown>).params;
    if (!Array.isArray(params) || !params.every((p) => Number.isSafeInteger(p) && (p as number) >= 0))
      bad(`optimizer.paramGroups[${i}].params`, params, 'an array of parameter indices');
  });
  if (!isObject(v.steps)) bad('optimizer.steps', v.steps, 'an object of step counts by parameter index');
  const steps = new Map<number, number>();
  for (const k of Object.keys(v.steps)) {
    const s = v.steps[k];
    if (!Number.isSafeInteger(s) || (s as number) < 0) bad(`optimizer.steps.${k}`, s, 'an integer >= 0');
    steps.set(paramIndex(k, 'optimizer.steps key'), s as number);
  }
  return { name: v.name, paramGroups: v.paramGroups as Record<string, unknown>[], steps };
}

/** Parses and checks the metadata text; every problem is a ValueError naming the key. */
export function readMeta(raw: string): CheckpointMeta {
  const m = parseJson(FN, `checkpoint metadata '${META_KEY}'`, raw);
  if (!isObject(m)) bad(META_KEY, m, 'an object { version, step, extra, optimizer, scheduler }');
  if (m.version !== VERSION)
    throw new ValueError(`${FN}: checkpoint version ${brief(m.version)}; this Surf reads version ${VERSION}`);
  const step = m.step ?? null;
  if (step !== null && (!Number.isSafeInteger(step) || (step as number) < 0))
    bad('step', step, 'an integer >= 0 or null');
  const scheduler = m.scheduler ?? null;
  if (scheduler !== null && !isObject(scheduler)) bad('scheduler', scheduler, 'an object or null');
  return {
    version: VERSION,
    step: step as number | null,
    extra: m.extra ?? null,
    optimizer: readOptimizer(m.optimizer),
    scheduler: scheduler as SchedulerStateDict | null,
  };
}

/** The metadata text saveCheckpoint writes; `extra` must survive readMeta (no prototype keys). */
export function writeMeta(meta: {
  step: number | null;
  extra: unknown;
  optimizer: { name: string; paramGroups: unknown[]; steps: Record<string, number> } | null;
  scheduler: SchedulerStateDict | null;
}): string {
  if (meta.step !== null && (!Number.isSafeInteger(meta.step) || meta.step < 0))
    throw new ValueError(`saveCheckpoint: step must be an integer >= 0; got ${brief(meta.step)}`);
  const text = JSON.stringify({ version: VERSION, ...meta });
  rebuild('saveCheckpoint', 'extra', JSON.parse(text), 0);
  return text;
}
