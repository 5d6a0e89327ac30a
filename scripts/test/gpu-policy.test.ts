import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';

/**
 * The WebGPU test policy: test-support/gpu-policy.mjs (the global setup's decision) and the
 * registration check in test-support/gpu.ts. Under CI nothing may turn the WebGPU tests into
 * skips. The policy is ESM and jest runs CJS, so it runs in a child process.
 */
const root = resolve(__dirname, '../..');

interface Outcome {
  value?: string;
  error?: string;
  probed: boolean;
}

function decide(env: Record<string, string>, probeOk: boolean): Outcome {
  const script = `
    import { decideWebGpu } from './test-support/gpu-policy.mjs';
    const [env, ok] = JSON.parse(process.argv[1]);
    let probed = false;
    const probe = async () => ((probed = true), ok ? { ok: true } : { ok: false, reason: 'no adapter here' });
    try {
      console.log(JSON.stringify({ value: await decideWebGpu(env, probe), probed }));
    } catch (e) {
      console.log(JSON.stringify({ error: e.message, probed }));
    }`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script, JSON.stringify([env, probeOk])], {
    cwd: root,
    encoding: 'utf8',
  });
  return JSON.parse(out) as Outcome;
}

test('under CI a preset SURF_TEST_WEBGPU cannot skip the WebGPU tests, and a failed probe fails the run', () => {
  expect(decide({ CI: 'true', SURF_TEST_WEBGPU: 'no: x' }, true)).toEqual({
    error: expect.stringMatching(/CI is set.*SURF_TEST_WEBGPU is 'no: x'/),
    probed: false,
  });
  expect(decide({ CI: '1', SURF_TEST_WEBGPU: 'no: x' }, false).error).toMatch(/may not be skipped/);
  expect(decide({ CI: 'true' }, false)).toEqual({ error: expect.stringMatching(/no WebGPU adapter/), probed: true });
  // 'yes' preset under CI is still probed: CI cannot claim an adapter it does not have.
  expect(decide({ CI: 'true', SURF_TEST_WEBGPU: 'yes' }, false).error).toMatch(/no WebGPU adapter/);
  expect(decide({ CI: 'true' }, true)).toEqual({ value: 'yes', probed: true });
});

test('outside CI a preset value is kept without probing, else the probe decides', () => {
  expect(decide({ SURF_TEST_WEBGPU: 'no: not wanted' }, true)).toEqual({ value: 'no: not wanted', probed: false });
  expect(decide({}, false)).toEqual({ value: 'no: no adapter here', probed: true });
  expect(decide({}, true)).toEqual({ value: 'yes', probed: true });
  expect(decide({ CI: 'false', SURF_TEST_WEBGPU: 'no: x' }, true).value).toBe('no: x');
  expect(decide({ CI: '0' }, false).value).toBe('no: no adapter here');
});

describe('test-support/gpu.ts at registration', () => {
  const saved = { CI: process.env.CI, SURF_TEST_WEBGPU: process.env.SURF_TEST_WEBGPU };
  afterEach(() => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });
  const load = () =>
    jest.isolateModules(() => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      require('../../test-support/gpu');
    });

  test('throws under CI when the WebGPU tests would register as skipped', () => {
    process.env.CI = 'true';
    process.env.SURF_TEST_WEBGPU = 'no: x';
    expect(load).toThrow(/CI is set but SURF_TEST_WEBGPU is 'no: x'/);
  });

  test('loads without CI (the tests then skip), and under CI with an adapter', () => {
    delete process.env.CI;
    process.env.SURF_TEST_WEBGPU = 'no: x';
    expect(load).not.toThrow();
    process.env.CI = 'true';
    process.env.SURF_TEST_WEBGPU = 'yes';
    expect(load).not.toThrow();
  });
});
