/**
 * A plain-object copy of a device's limits. In Node (Dawn) every read of a GPUSupportedLimits
 * field is a native getter costing about a microsecond, and ops read limits on every call
 * (the host cost of a small eager op); a device's limits never change, so they are read once here.
 */
export function plainLimits(lim: GPUSupportedLimits): GPUSupportedLimits {
  const out: Record<string, number> = {};
  for (let p: object | null = lim; p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
    for (const k of Object.getOwnPropertyNames(p)) {
      if (k in out || k === 'constructor') continue;
      const v = (lim as unknown as Record<string, unknown>)[k];
      if (typeof v === 'number') out[k] = v;
    }
  }
  return Object.freeze(out) as unknown as GPUSupportedLimits;
}
