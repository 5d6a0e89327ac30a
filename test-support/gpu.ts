import { WebGPUBackend, WebGPUBackendOptions, createWebGPUBackend } from '@surf/webgpu';

/**
 * WebGPU in the tests, one policy for every package: test-support/global-setup.mjs probes for
 * an adapter once per jest run, before tests register, and WebGPU tests are registered with
 * testGpu / describeGpu / testEach / describeEach, which become test.skip / describe.skip when
 * there is none, so they show as skipped, not passed. With CI set, a missing adapter fails the
 * run instead (in the global setup, test-support/gpu-policy.mjs), and a test file that would
 * register its WebGPU tests as skipped under CI throws here: no WebGPU test can skip in CI.
 */
const probed = process.env.SURF_TEST_WEBGPU;
const ciValue = process.env.CI;
// The same reading of CI as gpu-policy.mjs (which jest's CJS transform cannot import).
const underCi = ciValue !== undefined && ciValue !== '' && ciValue !== '0' && ciValue.toLowerCase() !== 'false';
if (underCi && probed !== undefined && probed !== 'yes')
  throw new Error(
    `CI is set but SURF_TEST_WEBGPU is '${probed}': WebGPU tests may not be skipped in CI (give the run a WebGPU adapter)`,
  );
/** Whether WebGPU tests run in this jest run (true when nothing was probed: they then fail loudly). */
export const gpuAvailable: boolean = probed === undefined || probed === 'yes';
const unavailableReason = probed?.replace(/^no: /, '') ?? '';

/** `test` when WebGPU is available, else `test.skip`. */
export const testGpu: jest.It = gpuAvailable ? test : test.skip;
/** `describe` when WebGPU is available, else `describe.skip`. */
export const describeGpu: jest.Describe = gpuAvailable ? describe : describe.skip;

export type BackendKind = 'cpu' | 'webgpu';

/** test.each over backend kinds ('%s' in the name is the kind); the webgpu row skips without an adapter. */
export function testEach<K extends string>(
  kinds: readonly K[],
  name: string,
  fn: (kind: K) => unknown,
  timeout?: number,
): void {
  for (const k of kinds)
    (k === 'webgpu' ? testGpu : test)(name.replace('%s', k), () => fn(k) as Promise<void>, timeout);
}

/** describe.each over backend kinds ('%s' in the name is the kind); the webgpu block skips without an adapter. */
export function describeEach<K extends string>(kinds: readonly K[], name: string, fn: (kind: K) => void): void {
  for (const k of kinds) (k === 'webgpu' ? describeGpu : describe)(name.replace('%s', k), () => fn(k));
}

/**
 * A WebGPU backend for tests registered with testGpu/describeGpu (their hooks do not run when
 * they are skipped). Throws when there is no adapter: a WebGPU test registered with plain
 * `test` then fails instead of passing.
 */
export async function gpuBackend(opts?: WebGPUBackendOptions): Promise<WebGPUBackend> {
  if (!gpuAvailable)
    throw new Error(
      `no WebGPU adapter (${unavailableReason}): register WebGPU tests with testGpu/describeGpu from test-support/gpu.ts so they are skipped`,
    );
  return createWebGPUBackend(opts);
}

/** @deprecated The old name of gpuBackend (it never returns null now). */
export const gpuOrSkip: (opts?: WebGPUBackendOptions) => Promise<WebGPUBackend> = gpuBackend;
