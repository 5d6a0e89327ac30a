/**
 * @surf/core/testing: the shared op-test table. Backend-agnostic and free of test-runner
 * imports, so the same cases run under jest against every backend and on a browser page.
 *
 *   for (const c of opCases()) await assertCase(c, backend);
 */
import { OpCase } from './case';
import { backendCases } from './cases/backend';
import { attentionCases } from './cases/attention';
import { castCases } from './cases/cast';
// conv
import { convCases } from './cases/conv';
import { elementwiseCases } from './cases/elementwise';
import { gatherCases } from './cases/gather';
import { ieeeCases } from './cases/ieee';
import { matmulCases } from './cases/matmul';
import { movementCases } from './cases/movement';
import { reduceCases } from './cases/reduce';
import { scatterCases } from './cases/scatter';
import { sortCases } from './cases/sort';

export * from './case';
export * from './compare';
export * from './reference';
export * from './ref-expr';
export * from './inputs';
export { Pair, checkExprs, checkRead } from './cases/pair';
export { refAttention } from './cases/attention';
export { refConv } from './cases/conv';

export interface CaseFilter {
  /** Only the representative subset. */
  quick?: boolean;
  /** Only these groups (elementwise, cast, ieee, movement, reduce, matmul, gather, backend). */
  groups?: readonly string[];
}

/** Every case of the table, in a stable order. */
export function opCases(filter: CaseFilter = {}): OpCase[] {
  const all = [
    ...elementwiseCases(),
    ...castCases(),
    ...ieeeCases(),
    ...movementCases(),
    ...reduceCases(),
    ...matmulCases(),
    ...gatherCases(),
    ...backendCases(),
    ...scatterCases(),
    ...sortCases(),
    ...attentionCases(),
    ...convCases(),
  ];
  const names = new Set<string>();
  for (const c of all) {
    if (names.has(c.name)) throw new Error(`opCases: duplicate case name ${c.name}`);
    names.add(c.name);
  }
  return all.filter((c) => (!filter.quick || c.quick) && (!filter.groups || filter.groups.includes(c.group)));
}

/** The group names, in table order. */
export function opCaseGroups(): string[] {
  return [...new Set(opCases().map((c) => c.group))];
}

// boundaries: CPU GEMM switches for the benchmarks (they imported core's src/ before).
export * from './cpu-gemm';
