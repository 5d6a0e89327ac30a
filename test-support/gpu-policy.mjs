// Whether this jest run has WebGPU, decided once in the global setup (global-setup.mjs) and handed
// to every worker as SURF_TEST_WEBGPU ('yes', or 'no: <reason>'). Kept apart from the setup so its
// rules can be tested without a probe (scripts/test/gpu-policy.test.ts).

/** True when the CI variable asks for a CI run ('false', '0' and '' do not). */
export function isCi(env) {
  const v = env.CI;
  return v !== undefined && v !== '' && v !== '0' && v.toLowerCase() !== 'false';
}

/**
 * The value of SURF_TEST_WEBGPU for this run. CI is checked first: under CI nothing may skip the
 * WebGPU tests, neither a preset SURF_TEST_WEBGPU nor a failed probe (both throw). Outside CI a
 * preset value is kept (to skip the probe), else the probe decides.
 * `probe` is an async function returning `{ ok: boolean, reason?: string }`.
 */
export async function decideWebGpu(env, probe) {
  const preset = env.SURF_TEST_WEBGPU;
  if (isCi(env)) {
    if (preset !== undefined && preset !== 'yes')
      throw new Error(
        `CI is set, so the WebGPU tests may not be skipped, but SURF_TEST_WEBGPU is '${preset}': unset it (or unset CI to run without WebGPU)`,
      );
    const r = await probe();
    if (!r.ok) throw new Error(`CI is set and no WebGPU adapter was found: ${r.reason}`);
    return 'yes';
  }
  if (preset !== undefined) return preset;
  const r = await probe();
  return r.ok ? 'yes' : `no: ${r.reason}`;
}
