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

/** The flags every headless run here uses (DEVELOPERS.md); WebGPU pages add --enable-unsafe-webgpu. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Opens `url` in headless Chromium and waits until the page sets `window.__surfReport`;
 * returns it with the page's uncaught errors. The browser is closed either way.
 */
export async function pageReport<T>(
  url: string,
  opts: { webgpu?: boolean; timeoutMs: number },
): Promise<{ report: T; errors: string[] }> {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: opts.webgpu ? [...CHROMIUM_ARGS, '--enable-unsafe-webgpu'] : CHROMIUM_ARGS,
  });
  try {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(url);
    await page.waitForFunction(
      () => (window as unknown as { __surfReport?: unknown }).__surfReport !== undefined,
      undefined,
      { timeout: opts.timeoutMs },
    );
    const report = (await page.evaluate(() => (window as unknown as { __surfReport: unknown }).__surfReport)) as T;
    return { report, errors };
  } finally {
    await browser.close();
  }
}
