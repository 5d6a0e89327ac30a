// Self time per step, by function, of two --cpu-prof runs (first profile in each folder), largest differences first. Usage: node scripts/perf/prof-diff.mjs <dirA> <dirB> (N=3000 steps assumed)
import { readFileSync, readdirSync } from 'node:fs';
function load(dir) {
  const f = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .sort()[0];
  const p = JSON.parse(readFileSync(dir + '/' + f, 'utf8'));
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const s = new Map();
  for (let i = 0; i < p.samples.length; i++) {
    const cf = byId.get(p.samples[i]).callFrame;
    let k = cf.functionName || '(anon)';
    if (cf.url.startsWith('wasm')) k = 'wasm:' + k;
    else if (k === '(anon)') k += '@' + cf.url.split('/').pop() + ':' + cf.lineNumber;
    s.set(k, (s.get(k) ?? 0) + (p.timeDeltas[i] ?? 0));
  }
  return s;
}
const a = load(process.argv[2]),
  b = load(process.argv[3]);
const N = +(process.env.PN ?? 3000);
const keys = new Set([...a.keys(), ...b.keys()]);
const rows = [...keys].map((k) => [k, (a.get(k) ?? 0) / 1000 / N, (b.get(k) ?? 0) / 1000 / N]);
let ta = 0,
  tb = 0;
rows.forEach((r) => {
  ta += r[1];
  tb += r[2];
});
console.log('total ms/step base', ta.toFixed(3), 'new', tb.toFixed(3));
rows
  .sort((x, y) => Math.abs(y[2] - y[1]) - Math.abs(x[2] - x[1]))
  .slice(0, 30)
  .forEach((r) =>
    console.log(
      r[0].padEnd(40),
      r[1].toFixed(3),
      r[2].toFixed(3),
      (r[2] - r[1] >= 0 ? '+' : '') + (r[2] - r[1]).toFixed(3),
    ),
  );
