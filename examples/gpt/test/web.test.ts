import type { Browser, Page } from 'playwright-core';
import { existsSync } from 'node:fs';
import { RunningServer, startServer } from '../src/web/server';
import { CHROMIUM, CHROMIUM_ARGS } from '../../../test-support/browser';

// The page end to end in headless Chromium (WebGPU on SwiftShader here): a short run of a
// tiny model must plot falling training loss and validation points, show the bigram baseline
// and write a sample. Without Chromium or a WebGPU adapter it is skipped, unless CI is set.

interface State {
  status: string;
  backend: string;
  series: { train: { step: number; value: number }[]; val: { step: number; value: number }[]; bigram: number | null };
  samples: string[];
  error: string | null;
}

let server: RunningServer;
let browser: Browser | null = null;

function unavailable(why: string): boolean {
  if (process.env.CI) throw new Error(`browser test cannot run: ${why}`);
  console.warn(`skipping the browser GPT test: ${why}`);
  return true;
}

beforeAll(async () => {
  server = await startServer({ port: 0 });
  if (!existsSync(CHROMIUM)) return;
  const { chromium } = await import('playwright-core');
  browser = await chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS, '--enable-unsafe-webgpu'] });
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

test('the page trains a tiny GPT on WebGPU, plots losses against the bigram line and writes a sample', async () => {
  if (!browser && unavailable(`no Chromium at ${CHROMIUM}`)) return;
  const page: Page = await browser!.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(
    `${server.url}?samples=20&steps=30&layers=1&embd=16&heads=2&block=16&batch=8&lr=0.01&evalEvery=15&evalBatches=2&sampleLength=40&autostart`,
  );
  await page.waitForFunction(() => ['done', 'error'].includes(window.__gpt?.status), undefined, { timeout: 240_000 });
  const s = (await page.evaluate(() => window.__gpt)) as State;
  expect(s.error).toBeNull();
  if (s.backend !== 'webgpu' && unavailable('Chromium found no WebGPU adapter')) return;
  expect(await page.locator('#backend').textContent()).toMatch(/^WebGPU · \S/);
  expect(s.series.train.map((p) => p.step)).toEqual([1, 5, 10, 15, 20, 25, 30]);
  expect(s.series.val.map((p) => p.step)).toEqual([15, 30]);
  expect(s.series.bigram).toBeGreaterThan(2);
  expect(s.series.bigram).toBeLessThan(3);
  expect(s.series.train[s.series.train.length - 1].value).toBeLessThan(s.series.train[0].value - 0.8);
  expect(s.samples[0]).toMatch(/^The/);
  expect(s.samples[0].length).toBe(43);
  expect(await page.locator('#sample').textContent()).toBe(s.samples[0]);
  expect(errors).toEqual([]);
  await page.close();
});
