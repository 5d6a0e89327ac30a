import type { PooledBuffer } from '../pool';
import { RebindOp, rebind } from './rebind';

interface ArgSet {
  /** Bind groups per parity, per op (null: the op binds no argument), once made. */
  bgs: ((GPUBindGroup | null)[] | null)[];
}

/** Argument sets remembered per program: a loader cycling through a few dozen batches fits. */
const SETS = 48;

/**
 * Binds a compiled replay's arguments where the step reads them instead of copying them into
 * the program's own input buffers (two copies, ~10 µs of Dawn host time per SGD step).
 * New bind groups cost more than the copies (createBindGroup 11-21 µs there), so a set of
 * argument buffers is bound in place only from its second sighting on: a loop that passes
 * fresh tensors every step keeps copying and makes no bind groups, and one that cycles through
 * uploaded batches makes each set's bind groups once. Sets are remembered least recently used
 * first out (a cache of 8 thrashed on 8 batches x 2 parities).
 */
export class ArgBinder {
  /** Keyed by the argument buffers' ids; a value of null: seen once. */
  private sets = new Map<string, ArgSet | null>();

  constructor(
    private readonly create: (layout: GPUBindGroupLayout, entries: GPUBindGroupEntry[]) => GPUBindGroup,
    private readonly ops: readonly (RebindOp | null)[],
    private readonly inBufs: readonly PooledBuffer[],
    /** The program's own buffers: an argument held in one of them is copied (its value may change under the step). */
    private readonly programBufs: ReadonlySet<GPUBuffer>,
  ) {}

  /**
   * Per op, the bind group binding `args` in place (null where the op binds none), or null
   * when the arguments must be copied this run.
   */
  lookup(args: readonly PooledBuffer[], parity: number): readonly (GPUBindGroup | null)[] | null {
    let key = '';
    for (let i = 0; i < args.length; i++) {
      const b = args[i];
      if (b.bytes !== this.inBufs[i].bytes || this.programBufs.has(b.buffer)) return null;
      key += `${b.id},`;
    }
    const sets = this.sets;
    let set = sets.get(key);
    if (set === undefined) {
      sets.set(key, null);
      if (sets.size > SETS) sets.delete(sets.keys().next().value!);
      return null;
    }
    // Most recently used last.
    sets.delete(key);
    if (set === null) set = { bgs: [null, null] };
    sets.set(key, set);
    return (set.bgs[parity] ??= this.make(args, parity));
  }

  private make(args: readonly PooledBuffer[], parity: number): (GPUBindGroup | null)[] {
    const swap = new Map<GPUBuffer, GPUBuffer>();
    this.inBufs.forEach((b, i) => swap.set(b.buffer, args[i].buffer));
    return rebind(this.ops, parity, swap, this.create);
  }
}
