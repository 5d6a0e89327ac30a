/**
 * Objects whose fields hold tensors a traced function may read (modules): registered weakly
 * at construction, walked only when a recording ends, to find which field holds each tensor
 * a replay binds. Reassigning such a field (`model.fc.weight = t`) then fails the replay's
 * guard instead of replaying the old tensor (guards.ts).
 */
const owners: WeakRef<object>[] = [];
let sinceSweep = 0;

/** Registers an object whose own fields (and arrays in them) may hold state tensors. */
export function trackStateOwner(o: object): void {
  if (typeof WeakRef !== 'function') return;
  owners.push(new WeakRef(o));
  // Drop collected entries now and then, so a program that makes many short-lived modules
  // keeps this list near its live size.
  if (++sinceSweep >= 1024 && owners.length > 2 * 1024) {
    sinceSweep = 0;
    let w = 0;
    for (const r of owners) if (r.deref()) owners[w++] = r;
    owners.length = w;
  }
}

/** A field that held a guarded tensor: `obj[key]`, or `obj[key][index]` for arrays. */
export interface FieldSlot {
  // Weak, as the guarded tensors: a record keeps neither the module nor the tensor alive.
  readonly obj: WeakRef<Record<string, unknown>>;
  readonly key: string;
  readonly index: number;
  readonly value: WeakRef<object>;
}

/** The fields of live owners that hold one of `targets`. */
export function fieldsHolding(targets: ReadonlySet<object>): FieldSlot[] {
  const out: FieldSlot[] = [];
  if (targets.size === 0) return out;
  for (const r of owners) {
    const obj = r.deref() as Record<string, unknown> | undefined;
    if (!obj) continue;
    for (const key of Object.keys(obj)) {
      const v = obj[key];
      if (v === null || typeof v !== 'object') continue;
      if (targets.has(v)) out.push({ obj: new WeakRef(obj), key, index: -1, value: new WeakRef(v) });
      else if (Array.isArray(v))
        v.forEach((x, index) => {
          if (x !== null && typeof x === 'object' && targets.has(x))
            out.push({ obj: new WeakRef(obj), key, index, value: new WeakRef(x) });
        });
    }
  }
  return out;
}

/** True while the field still holds the tensor it held when the recording ended. */
export function slotHolds(s: FieldSlot): boolean {
  const obj = s.obj.deref();
  const want = s.value.deref();
  if (!obj || !want) return false;
  const v = obj[s.key];
  return (s.index < 0 ? v : Array.isArray(v) ? v[s.index] : undefined) === want;
}
