/** A compiled replay's dispatch as far as its bind group goes (replay/program.ts). */
export interface RebindOp {
  readonly layout: GPUBindGroupLayout;
  /** The bind group's entries at a parity (0: as recorded, 1: state pairs exchanged). */
  entriesAt(parity: number): readonly GPUBindGroupEntry[];
}

// Small ids for GPU objects, to key the bind groups ops share.
const gpuIds = new WeakMap<object, number>();
let nextGpuId = 0;
const gid = (o: object): number => {
  let id = gpuIds.get(o);
  if (id === undefined) gpuIds.set(o, (id = nextGpuId++));
  return id;
};

const bufOf = (e: GPUBindGroupEntry): GPUBuffer => (e.resource as GPUBufferBinding).buffer;

/**
 * Per op, a bind group over its entries at `parity` with every buffer in `swap` replaced (null
 * where the op binds none of them); ops that end up binding the same buffers share one, as at
 * compile time. The odd runs' bind groups (state pairs exchanged) and arguments bound in place
 * are both made here.
 */
export function rebind(
  ops: readonly (RebindOp | null)[],
  parity: number,
  swap: ReadonlyMap<GPUBuffer, GPUBuffer>,
  create: (layout: GPUBindGroupLayout, entries: GPUBindGroupEntry[]) => GPUBindGroup,
): (GPUBindGroup | null)[] {
  const made = new Map<string, GPUBindGroup>();
  return ops.map((op) => {
    if (!op) return null;
    const entries = op.entriesAt(parity);
    if (!entries.some((e, n) => n > 0 && swap.has(bufOf(e)))) return null;
    const next = entries.map((e, n) =>
      n === 0 ? e : { binding: e.binding, resource: { buffer: swap.get(bufOf(e)) ?? bufOf(e) } },
    );
    const pb = entries[0].resource as GPUBufferBinding;
    const k = `${gid(op.layout)}:${pb.offset}:${pb.size}:${next.map((e) => gid(bufOf(e))).join(',')}`;
    let bg = made.get(k);
    if (!bg) made.set(k, (bg = create(op.layout, next)));
    return bg;
  });
}
