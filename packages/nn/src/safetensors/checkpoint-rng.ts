import { ValueError } from '@surf/core';
import { parseJson } from './untrusted';
import { RngState, getRngState, setRngState } from '@surf/autograd';
import { DataLoader, DataLoaderState } from '../data/dataloader';

/**
 * The checkpoint's random-state section: the global Philox stream (getRngState) and, when a
 * loader is given, its position (DataLoader.state), as JSON in the `surf.rng` metadata entry.
 * With both restored, training resumes on the very batches and Dropout masks it would have
 * drawn without the interruption.
 */
export const RNG_META_KEY = 'surf.rng';

interface RngMeta {
  rng: RngState;
  loader: DataLoaderState | null;
}

/** The section's metadata entry, taken now (before the save awaits anything). */
export function rngMetadata(loader: DataLoader | undefined): Record<string, string> {
  if (loader !== undefined && !(loader instanceof DataLoader))
    throw new ValueError('saveCheckpoint: loader is not a DataLoader');
  const meta: RngMeta = { rng: getRngState(), loader: loader ? loader.state() : null };
  return { [RNG_META_KEY]: JSON.stringify(meta) };
}

/**
 * Checks the section against what the caller wants restored; returns the restore to run once
 * every other part has been checked (a checkpoint without the section restores nothing).
 */
export function rngRestorer(
  metadata: Record<string, string> | null | undefined,
  loader: DataLoader | undefined,
): () => void {
  if (loader !== undefined && !(loader instanceof DataLoader))
    throw new ValueError('loadCheckpoint: loader is not a DataLoader');
  const raw = metadata?.[RNG_META_KEY];
  if (raw === undefined) {
    if (loader)
      throw new ValueError('loadCheckpoint: the checkpoint holds no loader position (save it with { loader })');
    return () => {};
  }
  // Bytes from a file: parsed without trusting them; setRngState and loadState check the values.
  const meta = parseJson('loadCheckpoint', `'${RNG_META_KEY}' metadata`, raw) as RngMeta;
  if (meta === null || typeof meta !== 'object' || typeof meta.rng !== 'object')
    throw new ValueError(
      `loadCheckpoint: the '${RNG_META_KEY}' metadata is not a random state; got ${raw.slice(0, 40)}`,
    );
  if (loader && !meta.loader)
    throw new ValueError('loadCheckpoint: the checkpoint holds no loader position (save it with { loader })');
  return () => {
    setRngState(meta.rng);
    if (loader && meta.loader) loader.loadState(meta.loader);
  };
}
