/**
 * WebGPU in Node through the `webgpu` npm package (Dawn). Kept out of browser bundles: it is
 * only reached through a dynamic import when `navigator.gpu` is missing, and it names Node
 * modules only through `require`/`import()` calls made at run time.
 *
 * Without a GPU on Linux, Dawn's Vulkan backend finds no adapter unless the Vulkan loader
 * is pointed at a software driver; Debian's chromium ships SwiftShader's ICD. When the first
 * adapter request comes back empty we point VK_ICD_FILENAMES at it and ask a fresh instance
 * (the loader reads the variable when an instance is created).
 */
interface DawnModule {
  create(flags: string[]): GPU;
  globals: Record<string, unknown>;
}

export const SWIFTSHADER_ICDS = [
  '/usr/lib/chromium/vk_swiftshader_icd.json',
  '/usr/lib/chromium-browser/vk_swiftshader_icd.json',
  '/usr/lib64/chromium-browser/vk_swiftshader_icd.json',
];

let dawn: Promise<DawnModule> | null = null;
/** Where the native addon was loaded from (CommonJS only), for the quiet probe below. */
let dawnPath: string | null = null;

// Called through an alias so bundlers do not try to resolve Node modules for the browser.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const nodeRequire: any = typeof require === 'function' ? require : undefined;

function loadDawn(): Promise<DawnModule> {
  dawn ??= (async () => {
    // CommonJS (jest, bundles with a require shim): load the native addon directly, because
    // the package's entry is an ES module that CommonJS cannot require.
    if (nodeRequire) {
      try {
        const path = nodeRequire('path');
        const dir = path.dirname(nodeRequire.resolve('webgpu/package.json'));
        const arch = process.platform === 'darwin' ? 'universal' : process.arch;
        const file = path.join(dir, 'dist', `${process.platform}-${arch}`, 'dawn.node');
        const mod = nodeRequire(file) as DawnModule;
        dawnPath = file;
        return mod;
      } catch {
        /* fall through to the ES module entry */
      }
    }
    const name = 'webgpu';
    const mod = (await import(/* @vite-ignore */ name)) as DawnModule;
    dawnPath = await esmDawnPath();
    return mod;
  })();
  dawn.catch(() => {
    dawn = null;
  });
  return dawn;
}

function fileExists(p: string): boolean {
  try {
    if (nodeRequire) return nodeRequire('fs').existsSync(p);
  } catch {
    /* ignore */
  }
  return false;
}

async function fileExistsAsync(p: string): Promise<boolean> {
  if (fileExists(p)) return true;
  try {
    const fsName = 'node:fs';
    const fs = (await import(/* @vite-ignore */ fsName)) as { existsSync(p: string): boolean };
    return fs.existsSync(p);
  } catch {
    return false;
  }
}

/**
 * The environments to set a variable in. The Vulkan loader reads the C environment; in
 * Node, assigning process.env calls setenv, but jest hands tests a copy of process.env that
 * never reaches it. Jest's copy lives in a vm sandbox whose core modules come from the outer
 * realm, so the outer realm's real `process` is reachable through their Function.
 */
function envs(): Record<string, string | undefined>[] {
  const list: Record<string, string | undefined>[] = [process.env];
  try {
    const outer = nodeRequire?.('path').constructor.constructor('return process')() as NodeJS.Process | undefined;
    if (outer?.env && outer.env !== process.env) list.push(outer.env);
  } catch {
    /* not in a sandbox */
  }
  return list;
}

function setEnv(name: string, value: string | undefined): void {
  for (const env of envs()) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
}

// quiet adapter probing. When the Vulkan loader's default drivers have no usable GPU
// (a GPU-less Linux box with Mesa's lavapipe, say), Dawn writes warnings such as "Vulkan
// shaderUniform*ArrayDynamicIndexing required. - While initializing adapter" straight to the
// process's stderr, where no JS code can catch them. So the first, default probe runs in a
// short-lived child process whose stderr is a pipe; only its answer comes back. Its messages
// are shown with SURF_DEBUG=1. Returns null when the probe cannot run (then probe in-process).
async function quietDefaultProbe(flags: string[]): Promise<boolean | null> {
  if (process.platform !== 'linux' || !dawnPath) return null;
  try {
    let cp: typeof import('node:child_process');
    try {
      cp = nodeRequire('child_process');
    } catch {
      // An ES-module bundle's require shim may refuse built-ins; import them instead.
      const cpName = 'node:child_process';
      cp = (await import(/* @vite-ignore */ cpName)) as typeof import('node:child_process');
    }
    const script =
      `const d=require(${JSON.stringify(dawnPath)});process.env.XDG_RUNTIME_DIR||='/tmp';` +
      `d.create(${JSON.stringify(flags)}).requestAdapter().then((a)=>{process.stdout.write(a?'1':'0');process.exit(0)},()=>{process.stdout.write('0');process.exit(0)})`;
    const r = cp.spawnSync(process.execPath, ['-e', script], {
      encoding: 'utf8',
      timeout: 30000,
      env: { ...process.env, XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR || '/tmp' },
    });
    if (process.env.SURF_DEBUG && r.stderr) console.debug(`[surf] Dawn adapter probe:\n${r.stderr}`); // eslint-disable-line no-console
    if (r.status !== 0 || (r.stdout !== '0' && r.stdout !== '1')) return null;
    return r.stdout === '1';
  } catch {
    return null;
  }
}

/** In an ES module (no require), the native addon's path as the app resolves 'webgpu'. */
async function esmDawnPath(): Promise<string | null> {
  try {
    const modName = 'node:module';
    const pathName = 'node:path';
    const { createRequire } = (await import(/* @vite-ignore */ modName)) as typeof import('node:module');
    const path = (await import(/* @vite-ignore */ pathName)) as typeof import('node:path');
    const req = createRequire(path.join(process.cwd(), 'index.js'));
    const dir = path.dirname(req.resolve('webgpu/package.json'));
    const arch = process.platform === 'darwin' ? 'universal' : process.arch;
    return path.join(dir, 'dist', `${process.platform}-${arch}`, 'dawn.node');
  } catch {
    return null;
  }
}

export interface NodeAdapter {
  gpu: GPU;
  adapter: GPUAdapter | null;
  /** Why no adapter was found, for the error message. */
  note: string;
}

// One Dawn instance per flag set: creating one initialises Vulkan (slow on SwiftShader).
const instances = new Map<string, GPU>();

export async function nodeAdapter(
  flags: string[],
  powerPreference: GPUPowerPreference | undefined,
): Promise<NodeAdapter> {
  const cached = instances.get(flags.join('\n'));
  if (cached) {
    const adapter = await cached.requestAdapter({ powerPreference });
    if (adapter) return { gpu: cached, adapter, note: '' };
  }
  let mod: DawnModule;
  try {
    mod = await loadDawn();
  } catch (e) {
    throw new Error(
      `the 'webgpu' npm package could not be loaded (${(e as Error).message}); install it with 'npm install webgpu'`,
    );
  }
  Object.assign(globalThis, mod.globals);
  // Silences the Vulkan loader's complaint about a missing runtime dir.
  if (!process.env.XDG_RUNTIME_DIR) setEnv('XDG_RUNTIME_DIR', '/tmp');
  // Without VK_ICD_FILENAMES, ask a quiet child first: when it finds nothing, go straight to
  // SwiftShader and never run the noisy default probe here.
  const defaultFinds = process.env.VK_ICD_FILENAMES ? true : await quietDefaultProbe(flags);
  let gpu = mod.create(flags);
  let adapter = defaultFinds === false ? null : await gpu.requestAdapter({ powerPreference });
  let note = '';
  if (!adapter && !process.env.VK_ICD_FILENAMES) {
    for (const icd of SWIFTSHADER_ICDS) {
      if (!(await fileExistsAsync(icd))) continue;
      setEnv('VK_ICD_FILENAMES', icd);
      gpu = mod.create(flags);
      adapter = await gpu.requestAdapter({ powerPreference });
      if (adapter) break;
      setEnv('VK_ICD_FILENAMES', undefined);
      note = ` (tried SwiftShader at ${icd}; is libvulkan1 installed?)`;
    }
  }
  if (adapter) instances.set(flags.join('\n'), gpu);
  return { gpu, adapter, note };
}
