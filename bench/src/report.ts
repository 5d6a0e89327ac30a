/**
 * Results: one record per (row, framework), the ratios Surf/peer, the text tables and the JSON.
 */
import type { Check, FrameworkId } from './framework';
import { Row, Unit, higherIsBetter } from './rows';

export interface Measured {
  value: number;
  secondsPerIter: number;
  iters: number;
  repeats: number;
  samples: number[];
  check: Check;
}
export type Outcome = Measured | { na: string };

export function isMeasured(o: Outcome | undefined): o is Measured {
  return !!o && 'value' in o;
}

export interface RowResult {
  row: Row;
  results: Partial<Record<FrameworkId, Outcome>>;
}

export const SURF_OF: Record<'gpu' | 'cpu', FrameworkId> = { gpu: 'surf-webgpu', cpu: 'surf-cpu' };
export const PEERS_OF: Record<'gpu' | 'cpu', FrameworkId[]> = {
  gpu: ['tfjs-webgpu', 'jax-webgpu', 'torch-cuda'],
  cpu: ['tfjs-cpu', 'tfjs-wasm', 'jax-wasm', 'ort-cpu'],
};
export const LABELS: Record<FrameworkId, string> = {
  'surf-webgpu': 'Surf',
  'tfjs-webgpu': 'TF.js',
  'jax-webgpu': 'jax-js',
  'torch-cuda': 'PyTorch',
  'surf-cpu': 'Surf cpu',
  'tfjs-cpu': 'TF.js cpu',
  'tfjs-wasm': 'TF.js wasm',
  'jax-wasm': 'jax-js wasm',
  'ort-cpu': 'ORT cpu',
};

/** How many times faster Surf is than the peer (> 1: Surf faster), whatever the unit's direction. */
export function speedRatio(unit: Unit, surf: number, peer: number): number {
  if (!(surf > 0 && peer > 0)) return NaN;
  return higherIsBetter(unit) ? surf / peer : peer / surf;
}

export function ratios(r: RowResult): Partial<Record<FrameworkId, number>> {
  const s = r.results[SURF_OF[r.row.device]];
  const out: Partial<Record<FrameworkId, number>> = {};
  if (!isMeasured(s)) return out;
  for (const p of PEERS_OF[r.row.device]) {
    const o = r.results[p];
    if (isMeasured(o)) out[p] = speedRatio(r.row.unit, s.value, o.value);
  }
  return out;
}

export function fmtNum(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  const a = Math.abs(v);
  if (a >= 1000) return Math.round(v).toLocaleString('en-US');
  if (a >= 100) return v.toFixed(0);
  if (a >= 10) return v.toFixed(1);
  if (a >= 1) return v.toFixed(2);
  return v.toPrecision(2);
}

function cell(o: Outcome | undefined): string {
  if (!o) return '-';
  if (!isMeasured(o)) return 'n/a';
  return fmtNum(o.value) + (o.check.ok ? '' : ' WRONG');
}

function pad(s: string, w: number, right = false): string {
  const len = [...s].length;
  return right ? ' '.repeat(Math.max(0, w - len)) + s : s + ' '.repeat(Math.max(0, w - len));
}

/** A plain-text table (also valid Markdown) of one device class's rows. */
export function table(results: RowResult[], device: 'gpu' | 'cpu', present: Set<FrameworkId>): string {
  const rows = results.filter((r) => r.row.device === device);
  if (!rows.length) return '';
  const peers = PEERS_OF[device].filter((p) => present.has(p));
  const head = ['row', 'unit', LABELS[SURF_OF[device]], ...peers.flatMap((p) => [LABELS[p], `Surf/${LABELS[p]}`])];
  const body = rows.map((r) => {
    const rat = ratios(r);
    return [
      r.row.label,
      r.row.unit,
      cell(r.results[SURF_OF[device]]),
      ...peers.flatMap((p) => [cell(r.results[p]), rat[p] !== undefined ? `${rat[p]!.toFixed(2)}x` : '-']),
    ];
  });
  const widths = head.map((h, i) => Math.max([...h].length, ...body.map((b) => [...b[i]].length)));
  const line = (cols: string[]) => '| ' + cols.map((c, i) => pad(c, widths[i], i >= 2)).join(' | ') + ' |';
  const sep = '|' + widths.map((w, i) => (i >= 2 ? '-'.repeat(w + 1) + ':' : '-'.repeat(w + 2))).join('|') + '|';
  return [line(head), sep, ...body.map(line)].join('\n');
}

/** n/a reasons and failed checks, one line each, so the table stays narrow. */
export function notes(results: RowResult[]): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const r of results) {
    for (const [fw, o] of Object.entries(r.results) as [FrameworkId, Outcome][]) {
      if (!isMeasured(o)) {
        const key = `${fw}: ${o.na}`;
        if (seen.has(key)) continue;
        seen.add(key);
        out.push(
          `n/a  ${LABELS[fw]} (${r.row.id}${sameReasonCount(results, fw, o.na) > 1 ? ' and others' : ''}): ${o.na}`,
        );
      } else if (!o.check.ok) {
        out.push(`WRONG ${LABELS[fw]} ${r.row.id}: ${o.check.note ?? `relative error ${o.check.relErr}`}`);
      }
    }
  }
  return out;
}

function sameReasonCount(results: RowResult[], fw: FrameworkId, why: string): number {
  return results.filter((r) => {
    const o = r.results[fw];
    return o && !isMeasured(o) && o.na === why;
  }).length;
}

/** The JSON form of a row (ratios included). */
export function rowJson(r: RowResult): Record<string, unknown> {
  const { row } = r;
  return { ...row, results: r.results, ratios: ratios(r) };
}
