// Top self-time functions of the .cpuprofile files in a folder (node --cpu-prof). Usage: node scripts/perf/prof-top.mjs <dir> [count]
import { readFileSync, readdirSync } from 'node:fs';
const dir = process.argv[2];
const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
for (const f of files) {
  const p = JSON.parse(readFileSync(dir + '/' + f, 'utf8'));
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map();
  let total = 0;
  const dt = p.timeDeltas;
  for (let i = 0; i < p.samples.length; i++) {
    const n = byId.get(p.samples[i]);
    const cf = n.callFrame;
    const k = `${cf.functionName || '(anon)'} ${cf.url.split('/').slice(-2).join('/')}:${cf.lineNumber + 1}`;
    self.set(k, (self.get(k) ?? 0) + (dt[i] ?? 0));
    total += dt[i] ?? 0;
  }
  console.log(f, 'total ms', (total / 1000).toFixed(0));
  [...self]
    .sort((a, b) => b[1] - a[1])
    .slice(0, +(process.argv[3] ?? 30))
    .forEach(([k, v]) =>
      console.log((v / 1000).toFixed(0).padStart(7), ((100 * v) / total).toFixed(1).padStart(5) + '%', k),
    );
}
