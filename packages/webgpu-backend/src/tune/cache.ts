import type { TunedTable } from './table';

/**
 * Where tuned tables persist: in Node a JSON file `{ [adapterKey]: table }` (several
 * adapters share one file); in a browser the string names a localStorage key holding the
 * same object. Failures to read or write only cost a re-tune, so they are swallowed.
 * Node's fs is imported under a computed name so browser bundles never include it.
 */
type Store = Record<string, TunedTable>;
interface KV {
  getItem(k: string): string | null;
  setItem(k: string, v: string): void;
}

const isNode = typeof process !== 'undefined' && !!process.versions?.node;

interface Fs {
  readFileSync(p: string, enc: 'utf8'): string;
  writeFileSync(p: string, s: string): void;
  renameSync(a: string, b: string): void;
}

async function fs(): Promise<Fs> {
  const name = 'node:fs';
  return (await import(/* @vite-ignore */ name)) as Fs;
}

async function readStore(where: string): Promise<Store> {
  try {
    if (isNode) return JSON.parse((await fs()).readFileSync(where, 'utf8')) as Store;
    const ls = (globalThis as { localStorage?: KV }).localStorage;
    const s = ls?.getItem(where);
    return s ? (JSON.parse(s) as Store) : {};
  } catch {
    return {};
  }
}

export async function readTuneCache(where: string, key: string): Promise<TunedTable | null> {
  return (await readStore(where))[key] ?? null;
}

export async function writeTuneCache(where: string, key: string, t: TunedTable): Promise<void> {
  const store = await readStore(where);
  store[key] = t;
  const text = JSON.stringify(store, null, 1);
  try {
    if (isNode) {
      // Write then rename, so a concurrent reader never sees half a file.
      const f = await fs();
      f.writeFileSync(`${where}.tmp`, text);
      f.renameSync(`${where}.tmp`, where);
    } else {
      (globalThis as { localStorage?: KV }).localStorage?.setItem(where, text);
    }
  } catch {
    /* a cache that cannot be written only costs a re-tune */
  }
}
