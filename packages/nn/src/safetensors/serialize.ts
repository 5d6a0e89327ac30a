import { NDArray, ValueError } from '@surf/core';
import { Tensor, getBackend } from '@surf/autograd';
import { Module, StateDict } from '../module';
import { RawTensor, decodeSafetensors, encodeSafetensors } from './format';

export type Saveable = Module | StateDict | Map<string, Tensor>;

function entriesOf(x: Saveable): [string, Tensor][] {
  if (x instanceof Module) return Object.entries(x.stateDict());
  if (x instanceof Map) return [...x.entries()];
  if (x !== null && typeof x === 'object') return Object.entries(x);
  throw new ValueError(
    `save: expected a Module, or an object or Map of tensors; got ${x === null ? 'null' : typeof x}`,
  );
}

/**
 * Serialises a module's state dict (or a dict of tensors) to safetensors bytes, loadable by
 * PyTorch's safetensors.torch.load. Reads every tensor back from the device, hence async.
 */
export async function save(x: Saveable, metadata?: Record<string, string>): Promise<Uint8Array> {
  const entries = entriesOf(x);
  const raw: [string, RawTensor][] = [];
  for (const [name, t] of entries) {
    if (!(t instanceof Tensor))
      throw new ValueError(`save: '${name}' is ${t === null ? 'null' : typeof t}; expected a Tensor`);
    raw.push([name, { dtype: t.dtype, shape: t.shape, data: await t.data() }]);
  }
  return encodeSafetensors(raw, metadata);
}

/** Parses safetensors bytes into a dict of tensors on the current backend (no grad). */
export function load(bytes: Uint8Array): StateDict {
  const { tensors } = decodeSafetensors(bytes);
  const backend = getBackend();
  const out: StateDict = {};
  for (const [name, t] of tensors) out[name] = Tensor.fromNDArray(NDArray.fromData(backend, t.data, t.shape, t.dtype));
  return out;
}

/** The `__metadata__` strings of a safetensors buffer (undefined when it has none). */
export function loadMetadata(bytes: Uint8Array): Record<string, string> | undefined {
  return decodeSafetensors(bytes).metadata;
}
