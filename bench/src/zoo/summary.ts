/**
 * The zoo's summary: per model, Surf eager and Surf jit against PyTorch eager (and the jit row
 * against PyTorch's CUDA graph), then the geometric means. The targets read from this table:
 * every model's jit >= 1.0x PyTorch eager, eager >= 0.6x, the eager geometric mean >= 0.8x.
 */
import { RowResult, fmtNum, isMeasured } from '../report';

export interface ZooLine {
  name: string;
  surfEager?: number;
  surfJit?: number;
  torchEager?: number;
  torchGraph?: number;
}

function value(r: RowResult | undefined, fw: 'surf-webgpu' | 'torch-cuda'): number | undefined {
  const o = r?.results[fw];
  return isMeasured(o) && o.check.ok ? o.value : undefined;
}

export function zooLines(results: RowResult[]): ZooLine[] {
  const byId = new Map(results.map((r) => [r.row.id, r]));
  const names = [...new Set(results.filter((r) => r.row.kind === 'zoo').map((r) => (r.row as { name: string }).name))];
  return names.map((name) => {
    const eager = byId.get(`zoo/${name}`);
    const jit = byId.get(`zoo/${name}-jit`);
    return {
      name,
      surfEager: value(eager, 'surf-webgpu'),
      surfJit: value(jit, 'surf-webgpu'),
      torchEager: value(eager, 'torch-cuda'),
      torchGraph: value(jit, 'torch-cuda'),
    };
  });
}

const ratio = (a?: number, b?: number) => (a !== undefined && b !== undefined && b > 0 ? a / b : undefined);

function geomean(xs: (number | undefined)[]): number | undefined {
  const ok = xs.filter((x): x is number => x !== undefined && x > 0);
  if (!ok.length || ok.length < xs.length) return undefined;
  return Math.exp(ok.reduce((s, x) => s + Math.log(x), 0) / ok.length);
}

const fx = (x?: number) => (x === undefined ? '?' : `${x.toFixed(2)}x`);
const fv = (x?: number) => (x === undefined ? 'n/a' : fmtNum(x));

/** The summary table (empty when no zoo row ran). */
export function zooSummary(results: RowResult[]): string[] {
  const lines = zooLines(results);
  if (!lines.length) return [];
  const head = ['model', 'Surf eager', 'Surf jit', 'PyTorch eager', 'PyTorch graph', 'eager/PT', 'jit/PT', 'jit/graph'];
  const body = lines.map((l) => [
    l.name,
    fv(l.surfEager),
    fv(l.surfJit),
    fv(l.torchEager),
    fv(l.torchGraph),
    fx(ratio(l.surfEager, l.torchEager)),
    fx(ratio(l.surfJit, l.torchEager)),
    fx(ratio(l.surfJit, l.torchGraph)),
  ]);
  body.push([
    'geomean',
    '',
    '',
    '',
    '',
    fx(geomean(lines.map((l) => ratio(l.surfEager, l.torchEager)))),
    fx(geomean(lines.map((l) => ratio(l.surfJit, l.torchEager)))),
    fx(geomean(lines.map((l) => ratio(l.surfJit, l.torchGraph)))),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((r) => r[i].length)));
  const fmt = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return ['Zoo (steps/s; a WRONG or n/a figure counts as missing):', fmt(head), ...body.map(fmt)];
}
