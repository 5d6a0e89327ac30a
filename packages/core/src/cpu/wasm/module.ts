import { Bytes, str, u32, vec } from './encoding';
import { MAX_PAGES, canShareMemory } from './shared-memory';

/** Value types of the binary format. */
export const I32 = 0x7f;
export const F32 = 0x7d;
export const V128 = 0x7b;
export type ValType = typeof I32 | typeof F32 | typeof V128;

export interface FuncDef {
  name: string;
  params: ValType[];
  results: ValType[];
  /** Extra locals after the params, in order. */
  locals: ValType[];
  /** Instruction bytes, without the final `end`. */
  body: Bytes;
  exported: boolean;
}

/**
 * Assembles a module that imports one linear memory ("env", "memory") and defines functions.
 * Functions are numbered in the order they are added (no function imports), so a body can
 * `call` any function by the index `add` returned, including ones added later.
 */
export class ModuleBuilder {
  private funcs: FuncDef[] = [];

  /**
   * `shared`: import a shared memory (what worker threads run on); it must match the memory
   * the module is instantiated with, so it defaults to what the arena uses.
   */
  constructor(
    private readonly memoryPages = 1,
    private readonly shared = canShareMemory(),
  ) {}

  /** Reserves the next function index; define it with `define`. */
  declare(name: string): number {
    this.funcs.push({ name, params: [], results: [], locals: [], body: [], exported: false });
    return this.funcs.length - 1;
  }

  define(index: number, def: Omit<FuncDef, 'name'>): void {
    this.funcs[index] = { ...def, name: this.funcs[index].name };
  }

  add(def: FuncDef): number {
    const i = this.declare(def.name);
    this.define(i, def);
    return i;
  }

  toBytes(): Uint8Array<ArrayBuffer> {
    const typeKey = (f: FuncDef) => `${f.params.join(',')}>${f.results.join(',')}`;
    // One type entry per distinct signature.
    const keys: string[] = [];
    const reps: FuncDef[] = [];
    const typeOf = this.funcs.map((f) => {
      const key = typeKey(f);
      if (!keys.includes(key)) {
        keys.push(key);
        reps.push(f);
      }
      return keys.indexOf(key);
    });
    const typeBytes = reps.map((f) => [0x60, ...vec(f.params.map((t) => [t])), ...vec(f.results.map((t) => [t]))]);
    // Import: module "env", name "memory", kind memory (0x02), limits min only (0x00) or
    // shared with min and max (0x03).
    const limits = this.shared ? [0x03, ...u32(this.memoryPages), ...u32(MAX_PAGES)] : [0x00, ...u32(this.memoryPages)];
    const importBytes = vec([[...str('env'), ...str('memory'), 0x02, ...limits]]);
    const funcBytes = vec(typeOf.map((t) => u32(t)));
    const exports = this.funcs.map((f, i) => ({ f, i })).filter(({ f }) => f.exported);
    const exportBytes = vec(exports.map(({ f, i }) => [...str(f.name), 0x00, ...u32(i)]));
    const codeBytes = vec(
      this.funcs.map((f) => {
        // Locals are run-length grouped by type.
        const groups: Bytes[] = [];
        let j = 0;
        while (j < f.locals.length) {
          let e = j;
          while (e < f.locals.length && f.locals[e] === f.locals[j]) e++;
          groups.push([...u32(e - j), f.locals[j]]);
          j = e;
        }
        const body = [...vec(groups), ...f.body, 0x0b];
        return [...u32(body.length), ...body];
      }),
    );
    const section = (id: number, content: Bytes) => [id, ...u32(content.length), ...content];
    return new Uint8Array([
      0x00,
      0x61,
      0x73,
      0x6d,
      0x01,
      0x00,
      0x00,
      0x00,
      ...section(1, vec(typeBytes)),
      ...section(2, importBytes),
      ...section(3, funcBytes),
      ...section(7, exportBytes),
      ...section(10, codeBytes),
    ]);
  }
}
