import { BackendError, parseOptions } from '@surf/core';

export interface DeviceRequest {
  device?: GPUDevice;
  adapter?: GPUAdapter;
  powerPreference?: GPUPowerPreference;
  /** Dawn (Node) instance flags; bare names become `enable-dawn-features=a,b`. */
  dawnToggles?: string[];
  /** Optional features to request when the adapter has them (the caller checks device.features). */
  features?: GPUFeatureName[];
}

export interface Acquired {
  device: GPUDevice;
  adapter: GPUAdapter | null;
  info: GPUAdapterInfo | null;
  /** True when we created the device, so destroy() should destroy it. */
  owned: boolean;
  /** Keeps Dawn's instance alive as long as the device. */
  instance: unknown;
}

const isNode = typeof process !== 'undefined' && !!process.versions?.node;

// the advice fits the platform: browsers get browser advice, Node gets driver advice
// (Linux install commands only on Linux).
/** What to do when no adapter is found, for a browser or for Node on `platform`. */
export function installHint(node: boolean, platform?: string): string {
  if (!node)
    return 'This browser does not expose WebGPU (navigator.gpu): use Chrome or Edge 113+, Safari 26+, or Firefox 141+ (Windows), or enable WebGPU in its settings; Surf falls back to its CPU backend meanwhile.';
  return (
    "In Node, the 'webgpu' npm package needs a Vulkan, Metal or D3D12 driver" +
    (platform === 'linux'
      ? "; on Linux without a GPU install Debian's 'chromium' and 'libvulkan1' packages (apt-get install chromium libvulkan1), which bring the SwiftShader " +
        'software driver (found automatically at /usr/lib/chromium/vk_swiftshader_icd.json), or set VK_ICD_FILENAMES to a Vulkan ICD file.'
      : '.')
  );
}

const INSTALL_HINT = installHint(isNode, typeof process !== 'undefined' ? process.platform : undefined);

function dawnFlags(toggles: readonly string[] | undefined): string[] {
  if (!toggles?.length) return [];
  const raw = mergeFlags(toggles.filter((t) => t.includes('=')));
  const names = toggles.filter((t) => !t.includes('='));
  return names.length ? [...raw, `enable-dawn-features=${names.join(',')}`] : raw;
}

/** Joins repeated `key=a` and `key=b` flags into `key=a,b` (Dawn keeps only one of each). */
function mergeFlags(flags: readonly string[]): string[] {
  const byKey = new Map<string, string[]>();
  for (const f of flags) {
    const i = f.indexOf('=');
    const k = f.slice(0, i);
    const v = byKey.get(k) ?? [];
    v.push(f.slice(i + 1));
    byKey.set(k, v);
  }
  return [...byKey].map(([k, v]) => `${k}=${v.join(',')}`);
}

/**
 * Finds a WebGPU adapter: navigator.gpu in browsers, Dawn (the `webgpu` package) in Node,
 * with SwiftShader as the fallback on Linux. Throws a BackendError naming what to install.
 */
export async function requestWebGPUAdapter(
  opts: Pick<DeviceRequest, 'powerPreference' | 'dawnToggles'> = {},
): Promise<GPUAdapter> {
  opts = parseOptions<Pick<DeviceRequest, 'powerPreference' | 'dawnToggles'>>('requestWebGPUAdapter', opts, {
    powerPreference: ['low-power', 'high-performance'],
    dawnToggles: 'array',
  });
  const { adapter } = await findAdapter(opts);
  return adapter;
}

async function findAdapter(
  req: Pick<DeviceRequest, 'powerPreference' | 'dawnToggles'>,
): Promise<{ adapter: GPUAdapter; instance: unknown }> {
  let adapter: GPUAdapter | null = null;
  let instance: unknown = null;
  let note = '';
  {
    const nav = typeof navigator !== 'undefined' ? (navigator as Navigator & { gpu?: GPU }).gpu : undefined;
    if (nav) {
      adapter = await nav.requestAdapter({ powerPreference: req.powerPreference });
    } else if (isNode) {
      try {
        const { nodeAdapter } = await import('./node-gpu');
        const r = await nodeAdapter(dawnFlags(req.dawnToggles), req.powerPreference);
        adapter = r.adapter;
        instance = r.gpu;
        note = r.note;
      } catch (e) {
        throw new BackendError(`createWebGPUBackend: ${(e as Error).message}. ${INSTALL_HINT}`);
      }
    }
  }
  if (!adapter) throw new BackendError(`createWebGPUBackend: no WebGPU adapter found${note}. ${INSTALL_HINT}`);
  return { adapter, instance };
}

/** Finds an adapter unless given, and requests a device with the adapter's real limits. */
export async function acquireDevice(req: DeviceRequest): Promise<Acquired> {
  if (req.device) {
    return {
      device: req.device,
      adapter: req.adapter ?? null,
      info: req.adapter?.info ?? (req.device as { adapterInfo?: GPUAdapterInfo }).adapterInfo ?? null,
      owned: false,
      instance: null,
    };
  }
  let adapter = req.adapter ?? null;
  let instance: unknown = null;
  if (!adapter) ({ adapter, instance } = await findAdapter(req));
  const L = adapter.limits;
  const want: Record<string, number> = {};
  for (const name of [
    'maxStorageBufferBindingSize',
    'maxBufferSize',
    'maxComputeInvocationsPerWorkgroup',
    'maxComputeWorkgroupSizeX',
    'maxComputeWorkgroupSizeY',
    'maxComputeWorkgroupStorageSize',
    'maxStorageBuffersPerShaderStage',
    'maxComputeWorkgroupsPerDimension',
    'maxUniformBufferBindingSize',
    'maxBindingsPerBindGroup',
  ] as const) {
    const v = (L as unknown as Record<string, number>)[name];
    if (typeof v === 'number') want[name] = v;
  }
  let device: GPUDevice;
  try {
    // subgroups: the attention forward reduces row maxima with shuffles when the device has them.
    const requiredFeatures = [...new Set([...(req.features ?? []), 'subgroups' as GPUFeatureName])].filter((f) =>
      adapter!.features.has(f),
    );
    device = await adapter.requestDevice({ requiredLimits: want, requiredFeatures, label: 'surf' });
  } catch (e) {
    throw new BackendError(
      `createWebGPUBackend: the adapter refused a device with its own limits: ${(e as Error).message}`,
    );
  }
  return { device, adapter, info: adapter.info ?? null, owned: true, instance };
}

let available: Promise<boolean> | null = null;

/** True when a WebGPU adapter can be found here (cached after the first call). */
export function isWebGPUAvailable(): Promise<boolean> {
  available ??= (async () => {
    try {
      const a = await acquireDevice({});
      a.device.destroy();
      return true;
    } catch {
      return false;
    }
  })();
  return available;
}
