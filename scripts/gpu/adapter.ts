// Adapter report for issue 15: features, limits and, where Dawn exposes it, the experimental
// subgroup-matrix (cooperative matrix) configurations, with and without unsafe APIs allowed.
// Usage on the GPU host: node .gpu-run/adapter.mjs > $OUT/adapter.json
import { createRequire } from 'module';
import * as path from 'path';

const req = createRequire(path.join(process.cwd(), 'x.js'));
const dir = path.dirname(req.resolve('webgpu/package.json'));
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const dawn = req(path.join(dir, 'dist', `${process.platform}-${process.arch}`, 'dawn.node')) as any;
Object.assign(globalThis, dawn.globals);

async function report(flags: string[]): Promise<unknown> {
  const gpu = dawn.create(flags);
  const adapter: GPUAdapter | null = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  if (!adapter) return { flags, adapter: null };
  const info = adapter.info as unknown as Record<string, unknown>;
  const infoOut: Record<string, unknown> = {};
  for (const k of [
    'vendor',
    'architecture',
    'device',
    'description',
    'subgroupMinSize',
    'subgroupMaxSize',
    'isFallbackAdapter',
  ])
    infoOut[k] = info[k];
  // The configs' fields live on the prototype: JSON.stringify of one prints {}.
  const configs = (info.subgroupMatrixConfigs ?? []) as Record<string, unknown>[];
  infoOut.subgroupMatrixConfigs = configs.map((c) =>
    Object.fromEntries(['componentType', 'resultComponentType', 'M', 'N', 'K'].map((k) => [k, c[k]])),
  );
  const limits: Record<string, number> = {};
  for (const k in adapter.limits) limits[k] = (adapter.limits as unknown as Record<string, number>)[k];
  const features = [...adapter.features].sort();
  let deviceWith: unknown = null;
  const want = features.filter((f) => f.includes('subgroup'));
  try {
    const dev = await adapter.requestDevice({ requiredFeatures: want as GPUFeatureName[] });
    deviceWith = { requested: want, ok: true, features: [...dev.features].sort() };
    dev.destroy();
  } catch (e) {
    deviceWith = { requested: want, ok: false, error: String(e) };
  }
  return { flags, info: infoOut, features, limits, deviceWith };
}

const out = [];
out.push(await report([]));
out.push(await report(['enable-dawn-features=allow_unsafe_apis']));
console.log(JSON.stringify(out, null, 1));
process.exit(0);
