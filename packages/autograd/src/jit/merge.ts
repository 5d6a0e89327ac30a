import { PlanStep } from './plan';

/**
 * Runs of a plan's elementwise calls that a compiled replay may issue as one
 * Backend.elementwiseGroups call (an optimizer's per-parameter updates: one kernel instead of
 * one per parameter). A run is elementwise calls with nothing between them but host effects
 * and frees, none reading a result of an earlier one. The merged call goes at the run's first
 * position: every input of a later member exists by then (only frees and effects come
 * between), and the frees between, left in place, still come after their storages' last use.
 * Only compiled replays merge: they read their dynamic constants on the host in record order
 * beforehand, so moving a later update before a host effect (Adam's step count) changes no
 * value it reads. Returns, per step index, the members of the run it starts (absent for none).
 */
export function elementwiseRuns(steps: readonly PlanStep[]): Map<number, readonly number[]> {
  const runs = new Map<number, readonly number[]>();
  let run: number[] = [];
  let made = new Set<number>();
  const close = () => {
    if (run.length > 1) runs.set(run[0], run);
    run = [];
    made = new Set();
  };
  steps.forEach((st, j) => {
    const e = st.entry;
    if (e.kind !== 'op') return;
    if (e.method !== 'elementwise') return close();
    const reads = st.leaves.some((l) => l.k === 's' && l.b.k === 'new' && made.has(l.b.slot));
    if (reads) close();
    run.push(j);
    for (const s of st.slots) made.add(s);
  });
  close();
  return runs;
}
