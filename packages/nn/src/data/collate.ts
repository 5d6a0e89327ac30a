import { ValueError } from '@surf/core';
import { Tensor, stack, tensor } from '@surf/autograd';

/**
 * PyTorch's default_collate: a batch of samples becomes one sample of batched values.
 * Tensors are stacked on a new first dim; JS numbers become a float32 tensor [B] (Surf's
 * number rule: JS cannot tell 1 from 1.0; give labels as Int32Array or int32 tensors);
 * Float32Array/Int32Array samples stack to [B, n] of their dtype; arrays (tuples) and plain
 * objects are collated position by position and key by key; strings stay a list.
 */
export function defaultCollate(batch: readonly unknown[]): unknown {
  if (!Array.isArray(batch) || batch.length === 0) throw new ValueError('defaultCollate: expected a non-empty batch');
  const first = batch[0];
  const same = (pred: (v: unknown) => boolean, what: string) => {
    batch.forEach((v, i) => {
      if (!pred(v)) throw new ValueError(`defaultCollate: sample ${i} is not ${what} like sample 0`);
    });
  };
  if (first instanceof Tensor) {
    same((v) => v instanceof Tensor, 'a Tensor');
    return stack(batch as Tensor[], 0);
  }
  if (typeof first === 'number') {
    same((v) => typeof v === 'number', 'a number');
    return tensor(Float32Array.from(batch as number[]));
  }
  if (typeof first === 'boolean') {
    same((v) => typeof v === 'boolean', 'a boolean');
    return tensor(batch as boolean[]);
  }
  if (typeof first === 'string') {
    same((v) => typeof v === 'string', 'a string');
    return [...batch];
  }
  if (first instanceof Float32Array || first instanceof Int32Array) {
    const Ctor = first.constructor as Float32ArrayConstructor | Int32ArrayConstructor;
    same((v) => v instanceof Ctor && v.length === first.length, `a ${Ctor.name} of length ${first.length}`);
    const out = new Ctor(batch.length * first.length);
    batch.forEach((v, i) => out.set(v as Float32Array & Int32Array, i * first.length));
    return tensor(out).reshape([batch.length, first.length]);
  }
  if (Array.isArray(first)) {
    same((v) => Array.isArray(v) && v.length === first.length, `an array of length ${first.length}`);
    return first.map((_, k) => defaultCollate(batch.map((v) => (v as unknown[])[k])));
  }
  if (first !== null && typeof first === 'object' && Object.getPrototypeOf(first) === Object.prototype) {
    const keys = Object.keys(first);
    same(
      (v) =>
        v !== null &&
        typeof v === 'object' &&
        Object.keys(v).length === keys.length &&
        keys.every((k) => k in (v as object)),
      `an object with keys ${keys.join(', ')}`,
    );
    return Object.fromEntries(
      keys.map((k) => [k, defaultCollate(batch.map((v) => (v as Record<string, unknown>)[k]))]),
    );
  }
  throw new ValueError(
    `defaultCollate: cannot batch a sample of type ${first === null ? 'null' : typeof first === 'object' ? (first.constructor?.name ?? 'object') : typeof first}; pass a collate function`,
  );
}
