import { ValueError } from '@surf/core';
import { StateDict } from '../module';
import { SaveOptions, Saveable, load, save } from './serialize';
import { CheckpointParts, loadCheckpoint, saveCheckpoint } from './checkpoint';

/**
 * File helpers for Node. `node:fs` is imported only when they run, through a specifier the
 * bundler cannot see, so browser bundles of @surf/nn never pull it in.
 */
const FS = 'node:fs/promises';

async function fs(op: string): Promise<typeof import('node:fs/promises')> {
  try {
    return (await import(/* webpackIgnore: true */ /* @vite-ignore */ FS)) as typeof import('node:fs/promises');
  } catch (e) {
    throw new ValueError(
      `${op}: needs Node's fs module (${(e as Error).message}); in a browser use save()/load() with bytes`,
    );
  }
}

/** Writes safetensors bytes of a module or dict of tensors to `path`. */
export async function saveFile(
  path: string,
  x: Saveable,
  metadata?: Record<string, string>,
  opts?: SaveOptions,
): Promise<void> {
  const bytes = await save(x, metadata, opts);
  await (await fs('saveFile')).writeFile(path, bytes);
}

/** Reads a safetensors file into a dict of tensors on the current backend. */
export async function loadFile(path: string): Promise<StateDict> {
  const buf = await (await fs('loadFile')).readFile(path);
  return load(new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength));
}

/** saveCheckpoint() to a file. */
export async function saveCheckpointFile(path: string, parts: CheckpointParts): Promise<void> {
  const bytes = await saveCheckpoint(parts);
  await (await fs('saveCheckpointFile')).writeFile(path, bytes);
}

/** loadCheckpoint() from a file. */
export async function loadCheckpointFile(
  path: string,
  parts: Omit<CheckpointParts, 'step' | 'extra'>,
): Promise<{ step: number | null; extra: unknown }> {
  const buf = await (await fs('loadCheckpointFile')).readFile(path);
  return loadCheckpoint(new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength), parts);
}
