/**
 * The run's environment: Dawn (the `webgpu` npm package) set up once for every framework in
 * the process, and the facts each figure is labelled with (machine, adapter, versions, date).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface AdapterFacts {
  vendor: string;
  architecture: string;
  device: string;
  description: string;
  features: string[];
  /** True when the adapter is a CPU rasteriser (SwiftShader): numbers are not GPU numbers. */
  software: boolean;
}

export interface MachineFacts {
  hostname: string;
  os: string;
  cpu: string;
  cores: number;
  memoryGiB: number;
  gpu: string | null;
  node: string;
  date: string;
}

export interface GpuEnv {
  gpu: GPU;
  adapter: GPUAdapter;
  facts: AdapterFacts;
}

const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json';

/**
 * Creates Dawn's GPU object, falls back to SwiftShader when no adapter is found, and publishes
 * it as `navigator.gpu` so that TF.js and jax-js (imported afterwards) find the same adapter.
 */
export async function setupWebGPU(log: (s: string) => void): Promise<GpuEnv | { error: string }> {
  let webgpu: { create: (flags: string[]) => GPU; globals: Record<string, unknown> };
  try {
    webgpu = (await import('webgpu')) as unknown as typeof webgpu;
  } catch (e) {
    return { error: `the 'webgpu' package (Dawn) did not load: ${(e as Error).message}` };
  }
  Object.assign(globalThis, webgpu.globals);
  // Vulkan loaders complain without it; harmless where it is set.
  process.env.XDG_RUNTIME_DIR ??= '/tmp';
  let gpu = webgpu.create([]);
  let adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  if (!adapter && existsSync(SWIFTSHADER_ICD)) {
    log('no WebGPU adapter found; retrying with SwiftShader (CPU Vulkan): GPU rows measure a CPU');
    process.env.VK_ICD_FILENAMES = SWIFTSHADER_ICD;
    gpu = webgpu.create([]);
    adapter = await gpu.requestAdapter();
  }
  if (!adapter) return { error: 'no WebGPU adapter (Dawn found none, SwiftShader included)' };
  const info = adapter.info;
  const facts: AdapterFacts = {
    vendor: info.vendor,
    architecture: info.architecture,
    device: info.device,
    description: info.description,
    features: [...adapter.features].map(String).sort(),
    software: /swiftshader|llvmpipe|lavapipe/i.test(`${info.vendor} ${info.architecture} ${info.description}`),
  };
  // jax-js reads navigator.userAgent; Node 20 has no navigator at all.
  const nav = (globalThis as { navigator?: object }).navigator ?? {};
  Object.defineProperty(globalThis, 'navigator', {
    value: Object.assign(Object.create(nav), {
      gpu,
      userAgent: (nav as { userAgent?: string }).userAgent ?? `Node.js/${process.version}`,
    }),
    configurable: true,
    writable: true,
  });
  return { gpu, adapter, facts };
}

export function adapterLabel(f: AdapterFacts): string {
  const parts = [f.vendor, f.architecture, f.description || f.device].filter((s) => s && s.length > 0);
  return parts.join(' / ') + (f.software ? ' (software)' : '');
}

function nvidiaSmi(): string | null {
  try {
    const out = execFileSync('nvidia-smi', ['--query-gpu=name,driver_version,memory.total', '--format=csv,noheader'], {
      encoding: 'utf8',
      timeout: 10_000,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const lines = out.trim().split('\n').filter(Boolean);
    return lines.length ? lines.map((l) => l.trim()).join('; ') : null;
  } catch {
    return null;
  }
}

export function machineFacts(): MachineFacts {
  const cpus = os.cpus();
  return {
    hostname: os.hostname(),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    cpu: cpus[0]?.model.trim() ?? 'unknown',
    cores: cpus.length,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    gpu: nvidiaSmi(),
    node: process.version,
    date: new Date().toISOString(),
  };
}

/** Where this bundle lives: `.out/` under `npm run bench`, `.bench/` on the GPU host. */
export function bundleDir(): string {
  return dirname(fileURLToPath(import.meta.url));
}

/**
 * Versions of the peers. The GPU-host bundle carries them in versions.json (written by
 * build.sh); a development run reads them from node_modules.
 */
export function peerVersions(): Record<string, string> {
  const file = join(bundleDir(), 'versions.json');
  if (existsSync(file)) {
    try {
      return JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
    } catch {
      /* fall through */
    }
  }
  const out: Record<string, string> = {};
  const req = createRequire(join(process.cwd(), 'package.json'));
  for (const p of [
    '@tensorflow/tfjs-core',
    '@tensorflow/tfjs-backend-webgpu',
    '@tensorflow/tfjs-backend-wasm',
    '@tensorflow/tfjs-backend-cpu',
    '@jax-js/jax',
    'webgpu',
  ]) {
    try {
      const dir = findPackageDir(req, p);
      if (dir) out[p] = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version;
    } catch {
      /* unknown */
    }
  }
  return out;
}

/** A package's folder, found from its main entry (packages with `exports` hide package.json). */
export function findPackageDir(req: NodeRequire, name: string): string | null {
  let entry: string;
  try {
    entry = req.resolve(name);
  } catch {
    return null;
  }
  let dir = dirname(entry);
  while (dir !== dirname(dir)) {
    const pj = join(dir, 'package.json');
    if (existsSync(pj)) {
      try {
        if ((JSON.parse(readFileSync(pj, 'utf8')) as { name?: string }).name === name) return dir;
      } catch {
        /* keep walking */
      }
    }
    dir = dirname(dir);
  }
  return null;
}
