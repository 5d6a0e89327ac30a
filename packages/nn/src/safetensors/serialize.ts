import { NDArray, ValueError, parseOptions } from '@surf/core';
import { Tensor, getBackend } from '@surf/autograd';
import { Module, StateDict } from '../module';
import { StoreDType } from './dtypes';
import { RawTensor, TensorHeader, decodeSafetensors, encodeSafetensors } from './format';

export type Saveable = Module | StateDict | Map<string, Tensor>;

export interface SaveOptions {
  /**
   * How float32 tensors are stored: 'float32' (default), 'float16' or 'bfloat16' (rounded to
   * nearest even, as PyTorch's .half()/.bfloat16()), for all of them or per tensor name (names
   * not listed stay float32). Int32 and bool tensors are stored as they are.
   */
  dtype?: StoreDType | Record<string, StoreDType>;
}

const STORE: readonly StoreDType[] = ['float32', 'float16', 'bfloat16'];

function entriesOf(x: Saveable): [string, Tensor][] {
  if (x instanceof Module) return Object.entries(x.stateDict());
  if (x instanceof Map) return [...x.entries()];
  if (x !== null && typeof x === 'object') return Object.entries(x);
  throw new ValueError(
    `save: expected a Module, or an object or Map of tensors; got ${x === null ? 'null' : typeof x}`,
  );
}

/** The store dtype of each tensor, checked: a per-name map must name float32 tensors that exist. */
function storesOf(entries: [string, Tensor][], dtype: SaveOptions['dtype']): (name: string, t: Tensor) => StoreDType {
  if (dtype === undefined || typeof dtype === 'string') return () => dtype ?? 'float32';
  const map = new Map<string, StoreDType>();
  const byName = new Map(entries);
  for (const name of Object.keys(dtype)) {
    const d = dtype[name];
    if (!STORE.includes(d))
      throw new ValueError(
        `save: option 'dtype' for '${name}' is ${JSON.stringify(d)}; expected one of ${STORE.join(', ')}`,
      );
    const t = byName.get(name);
    if (!t) throw new ValueError(`save: option 'dtype' names '${name}', which is not among the tensors saved`);
    if (t instanceof Tensor && t.dtype !== 'float32' && d !== 'float32')
      throw new ValueError(
        `save: option 'dtype' asks for ${d} for '${name}', a ${t.dtype} tensor; only float32 tensors convert`,
      );
    map.set(name, d);
  }
  return (name) => map.get(name) ?? 'float32';
}

function checkDType(v: unknown, where: string): void {
  if (typeof v === 'string' && STORE.includes(v as StoreDType)) return;
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) return;
  throw new ValueError(
    `${where} must be one of ${STORE.join(', ')}, or an object of them by tensor name; got ${JSON.stringify(v)}`,
  );
}

/**
 * Serialises a module's state dict (or a dict of tensors) to safetensors bytes, loadable by
 * PyTorch's safetensors.torch.load. Reads every tensor back from the device, hence async.
 */
export async function save(x: Saveable, metadata?: Record<string, string>, opts?: SaveOptions): Promise<Uint8Array> {
  const { dtype } = parseOptions<SaveOptions>('save', opts, { dtype: checkDType });
  const entries = entriesOf(x);
  const storeOf = storesOf(entries, dtype);
  const raw: [string, RawTensor][] = [];
  for (const [name, t] of entries) {
    if (!(t instanceof Tensor))
      throw new ValueError(`save: '${name}' is ${t === null ? 'null' : typeof t}; expected a Tensor`);
    raw.push([name, { dtype: t.dtype, shape: t.shape, data: await t.data(), store: storeOf(name, t) }]);
  }
  return encodeSafetensors(raw, metadata);
}

/**
 * Parses safetensors bytes into a dict of tensors on the current backend (no grad). The dict
 * has a null prototype: its keys come from the file. Any Uint8Array works, a Node Buffer from
 * readFileSync included (a view at an offset into a shared pool).
 */
export function load(bytes: Uint8Array): StateDict {
  const { tensors } = decodeSafetensors(bytes);
  const backend = getBackend();
  const out = Object.create(null) as StateDict;
  try {
    for (const [name, t] of tensors)
      out[name] = Tensor.fromNDArray(NDArray.fromData(backend, t.data, t.shape, t.dtype));
  } catch (e) {
    Object.values(out).forEach((t) => t.dispose());
    throw e;
  }
  return out;
}

/** The `__metadata__` strings of a safetensors buffer (undefined when it has none; a null-prototype object). */
export function loadMetadata(bytes: Uint8Array): Record<string, string> | undefined {
  return decodeSafetensors(bytes, false).metadata;
}

/**
 * What a safetensors buffer holds, without loading it: each tensor's stored dtype (F32, F16,
 * I64, ...) and shape by name, and the metadata. The whole file is validated as load() does.
 * A loader that builds a model from a config in the metadata checks the config against these
 * shapes first, so a file cannot make it build more than the file itself holds.
 */
export function loadHeader(bytes: Uint8Array): {
  tensors: Map<string, TensorHeader>;
  metadata: Record<string, string> | undefined;
} {
  const { headers, metadata } = decodeSafetensors(bytes, false);
  return { tensors: headers, metadata };
}
