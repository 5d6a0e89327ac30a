import { existsSync } from 'node:fs';
import { gpuAvailable } from './gpu';

/**
 * Headless-Chromium tests, decided before they register (as test-support/gpu.ts does for
 * WebGPU): without Chromium they show as skipped; with CI set they run and fail instead.
 */
export const CHROMIUM: string = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const chromiumAvailable: boolean = existsSync(CHROMIUM);

/** `test` when Chromium is here (or CI is set), else `test.skip`. */
export const testBrowser: jest.It = chromiumAvailable || process.env.CI ? test : test.skip;
/** `test` when Chromium and a WebGPU adapter are here (or CI is set), else `test.skip`. */
export const testBrowserGpu: jest.It = (chromiumAvailable && gpuAvailable) || process.env.CI ? test : test.skip;
