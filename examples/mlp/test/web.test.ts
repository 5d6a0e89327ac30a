import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { digitAt, SIDE } from '../src/data/digits';
import { loadMnist } from '../src/data/mnist-node';
import { RunningServer, startServer } from '../src/web/server';
import { CHROMIUM, CHROMIUM_ARGS, chromiumAvailable, testBrowser, testBrowserGpu } from '../../../test-support/browser';

// The browser page end to end in headless Chromium (WebGPU on SwiftShader here): train a
// short run in the page's Web Worker while the main thread keeps drawing frames, watch the
// plotted loss fall and accuracy rise, draw a real test digit on the pad with the mouse and
// read the prediction. Then the same page with WebGPU taken away (in the worker too) must say
// so and train on the CPU. Without Chromium (or, for the WebGPU part, a WebGPU adapter) the
// tests are skipped, unless CI is set, where they fail.
const OUT = resolve(__dirname, '../../../test-output');

interface Series {
  loss: { step: number; value: number }[];
  accuracy: { step: number; value: number }[];
}

let server: RunningServer;
let browser: Browser | null = null;

beforeAll(async () => {
  server = await startServer({ port: 0 });
  if (!chromiumAvailable) return;
  const { chromium } = await import('playwright-core');
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [...CHROMIUM_ARGS, '--enable-unsafe-webgpu'],
  });
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function openPage(query: string, withoutWebGPU = false): Promise<{ page: Page; errors: string[] }> {
  const page = await browser!.newPage({ viewport: { width: 1180, height: 720 } });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  if (withoutWebGPU) {
    await page.addInitScript(() => Object.defineProperty(Navigator.prototype, 'gpu', { get: () => undefined }));
    // Init scripts do not run in workers: the worker's script gets the same line in front.
    await page.context().route('**/worker.js', async (route) => {
      const res = await route.fetch();
      await route.fulfill({
        response: res,
        body: `Object.defineProperty(WorkerNavigator.prototype, 'gpu', { get: () => undefined });\n${await res.text()}`,
      });
    });
  }
  await page.goto(`${server.url}${query}`);
  await page.waitForFunction(() => ['ready', 'training', 'done', 'error'].includes(window.__mlp?.status), undefined, {
    timeout: 60_000,
  });
  expect(await page.evaluate(() => window.__mlp.error)).toBeNull();
  return { page, errors };
}

/** Where the page says training runs: the worker's own report of its global scope. */
async function expectWorker(page: Page, gpu: boolean): Promise<void> {
  expect(await page.evaluate(() => window.__mlp.worker)).toEqual({
    scope: 'DedicatedWorkerGlobalScope',
    isDedicatedWorker: true,
    hasNavigatorGpu: gpu,
  });
}

/** Starts counting the main thread's animation frames (and the longest gap between two). */
async function countFrames(page: Page): Promise<void> {
  await page.evaluate(() => {
    const f = { n: 0, last: performance.now(), maxGap: 0 };
    (window as unknown as { __frames: typeof f }).__frames = f;
    const tick = (now: number) => {
      f.maxGap = Math.max(f.maxGap, now - f.last);
      f.last = now;
      f.n++;
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
}

const frames = (page: Page) =>
  page.evaluate(() => ({ ...(window as unknown as { __frames: { n: number; maxGap: number } }).__frames }));

/** Draws a 28x28 digit on the pad the way a hand would: one mouse stroke per run of ink in each row. */
async function drawDigit(page: Page, digit: Float32Array): Promise<void> {
  const box = (await page.locator('#pad').boundingBox())!;
  const cell = box.width / SIDE;
  const at = (x: number, y: number) => [box.x + (x + 0.5) * cell, box.y + (y + 0.5) * cell] as const;
  for (let y = 0; y < SIDE; y++) {
    for (let x = 0; x < SIDE; x++) {
      if (digit[y * SIDE + x] < 0.5) continue;
      let end = x;
      while (end + 1 < SIDE && digit[y * SIDE + end + 1] >= 0.5) end++;
      await page.mouse.move(...at(x, y));
      await page.mouse.down();
      await page.mouse.move(...at(end, y), { steps: 2 });
      await page.mouse.up();
      x = end;
    }
  }
}

test("the page's main-thread script carries no Surf: training can only run in its worker", async () => {
  const [app, worker] = await Promise.all(
    ['app.js', 'worker.js'].map(async (f) => (await fetch(`${server.url}${f}`)).text()),
  );
  // The worker starts from the page's script; Surf's backend and train loop are in the worker's alone.
  expect(app).toContain('/worker.js');
  for (const [text, inside] of [
    [app, false],
    [worker, true],
  ] as const) {
    expect(/requestAdapter/.test(text)).toBe(inside);
    expect(/softmaxCrossEntropy|crossEntropy: target/.test(text)).toBe(inside);
  }
});

testBrowserGpu(
  'the page trains on WebGPU, plots falling loss and rising accuracy, and reads a drawn digit',
  async () => {
    if (!browser) throw new Error(`no Chromium at ${CHROMIUM}`);
    // backend=webgpu: 'auto' would skip a software adapter (headless Chromium's SwiftShader).
    const { page, errors } = await openPage('?epochs=2&steps=40&evalEvery=10&backend=webgpu');
    const backend = await page.evaluate(() => window.__mlp.backend);
    // Dawn found an adapter (else this test is skipped), so Chromium should too.
    if (backend !== 'webgpu')
      throw new Error(`Chromium found no WebGPU adapter (${await page.evaluate(() => window.__mlp.backendLine)})`);
    expect(await page.locator('#backend').textContent()).toMatch(/^WebGPU · \S.* \(in a worker\)$/);
    // Surf runs in a dedicated worker with its own navigator.gpu.
    await expectWorker(page, true);

    await countFrames(page);
    const t0 = Date.now();
    await page.click('#start');
    await page.waitForFunction(() => window.__mlp.series.accuracy.length >= 3, undefined, { timeout: 240_000 });
    await page.waitForFunction(() => ['done', 'error'].includes(window.__mlp.status), undefined, { timeout: 240_000 });
    const trainMs = Date.now() - t0;
    const f = await frames(page);
    // The main thread kept drawing frames all through training (at 10+ per second on average,
    // and never stalled for a training step's length), because no step ran on it.
    expect(f.n).toBeGreaterThan((trainMs / 1000) * 10);
    expect(f.maxGap).toBeLessThan(500);
    const s = (await page.evaluate(() => window.__mlp.series)) as Series;
    expect(await page.evaluate(() => window.__mlp.error)).toBeNull();
    // 2 epochs of 40 steps, the loss read every 5 steps and the accuracy every 10.
    expect(s.accuracy.map((p) => p.step)).toEqual([10, 20, 30, 40, 50, 60, 70, 80]);
    expect(s.loss.length).toBeGreaterThanOrEqual(16);
    expect(s.loss[0].value).toBeGreaterThan(1.9);
    const lateLoss = (s.loss[s.loss.length - 1].value + s.loss[s.loss.length - 2].value) / 2;
    expect(lateLoss).toBeLessThan(0.4 * s.loss[0].value);
    const acc = s.accuracy.map((p) => p.value);
    expect(acc[acc.length - 1]).toBeGreaterThan(acc[0] + 10);
    expect(acc[acc.length - 1]).toBeGreaterThan(75);
    // The chart's data attributes carry the same series the page plotted.
    expect(JSON.parse((await page.locator('#chart').getAttribute('data-accuracy'))!)).toEqual(acc);
    expect(await page.locator('#rate').textContent()).toMatch(/^\d+\.\d$/);

    const test = loadMnist().test;
    const index = Array.from(test.labels).indexOf(0);
    await drawDigit(page, digitAt(test, index));
    await page.waitForFunction(() => window.__mlp.prediction !== null, undefined, { timeout: 30_000 });
    await page.waitForTimeout(300);
    const pred = (await page.evaluate(() => window.__mlp.prediction))!;
    expect(pred.probs).toHaveLength(10);
    expect(pred.probs.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 4);
    expect(await page.locator('#prediction').textContent()).toContain(`Prediction: ${pred.digit}`);
    expect(await page.locator('.bar-row.best .bar-label').textContent()).toBe(String(pred.digit));
    mkdirSync(OUT, { recursive: true });
    await page.screenshot({ path: resolve(OUT, 'mlp-web.png') });
    // The hand-drawn copy of the test set's first "0" is read as a 0.
    expect(pred.digit).toBe(0);
    expect(errors).toEqual([]);
    await page.close();
  },
);

testBrowser('without WebGPU the page says so and trains on the CPU backend; Stop stops', async () => {
  if (!browser) throw new Error(`no Chromium at ${CHROMIUM}`);
  const { page, errors } = await openPage('?epochs=1&steps=20&evalEvery=10&autostart', true);
  expect(await page.evaluate(() => window.__mlp.backend)).toBe('cpu');
  expect(await page.locator('#backend').textContent()).toContain('WebGPU is not available');
  // The CPU fallback is in the worker too.
  await expectWorker(page, false);
  await page.waitForFunction(() => ['done', 'error'].includes(window.__mlp.status), undefined, { timeout: 120_000 });
  const s = (await page.evaluate(() => window.__mlp.series)) as Series;
  expect(s.accuracy.map((p) => p.step)).toEqual([10, 20]);
  expect(s.accuracy[1].value).toBeGreaterThan(50);
  expect(errors).toEqual([]);
  await page.close();

  // Stop ends a long run between steps and keeps what was learned.
  const long = await openPage('?epochs=20&evalEvery=10', true);
  await long.page.click('#start');
  await long.page.waitForFunction(() => window.__mlp.series.accuracy.length >= 2, undefined, { timeout: 120_000 });
  // A digit drawn while the worker trains is read between its steps.
  const test = loadMnist().test;
  await drawDigit(long.page, digitAt(test, Array.from(test.labels).indexOf(1)));
  await long.page.waitForFunction(() => window.__mlp.prediction !== null, undefined, { timeout: 60_000 });
  expect(await long.page.evaluate(() => window.__mlp.status)).toBe('training');
  expect((await long.page.evaluate(() => window.__mlp.prediction))!.probs.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 4);
  await long.page.click('#stop');
  await long.page.waitForFunction(() => window.__mlp.status === 'stopped', undefined, { timeout: 60_000 });
  const steps = Number(await long.page.locator('#step').textContent());
  expect(steps).toBeGreaterThanOrEqual(20);
  expect(steps).toBeLessThan(20 * 125);
  expect(await long.page.locator('#status').textContent()).toMatch(/^stopped: \d+\.\d% after \d+ steps/);
  expect(await long.page.locator('#start').isEnabled()).toBe(true);
  expect(long.errors).toEqual([]);
  await long.page.close();
});

testBrowser('the page trains the CNN (here on the CPU) and draws its first-layer filters as they learn', async () => {
  if (!browser) throw new Error(`no Chromium at ${CHROMIUM}`);
  const { page, errors } = await openPage('?model=cnn&epochs=1&steps=16&batch=32&evalEvery=16&autostart', true);
  expect(await page.locator('#filters-box').isVisible()).toBe(true);
  expect(await page.locator('#hidden').isVisible()).toBe(false);
  await page.waitForFunction(() => ['done', 'error'].includes(window.__mlp.status), undefined, { timeout: 180_000 });
  expect(await page.evaluate(() => window.__mlp.error)).toBeNull();
  const s = (await page.evaluate(() => window.__mlp.series)) as Series;
  expect(s.accuracy.map((p) => p.step)).toEqual([16]);
  expect(s.accuracy[0].value).toBeGreaterThan(35);
  const { filters, filtersFirst } = await page.evaluate(() => ({
    filters: window.__mlp.filters,
    filtersFirst: window.__mlp.filtersFirst,
  }));
  // The initial weights were drawn at step 0 and the learned ones after the last step: 16 3x3 filters that moved.
  expect(filtersFirst!.step).toBe(0);
  expect(filters!.step).toBe(16);
  expect(filters!.shape).toEqual([16, 1, 3, 3]);
  const moved = filters!.values.reduce((a, v, i) => a + Math.abs(v - filtersFirst!.values[i]), 0) / 144;
  expect(moved).toBeGreaterThan(1e-3);
  // The canvas shows them: 2 rows of 8 cells of 36 px with 6 px gaps, and colour where a weight is far from 0.
  const px = await page.evaluate(() => {
    const c = document.getElementById('filters') as HTMLCanvasElement;
    const d = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
    let coloured = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 0 && (d[i] < 200 || d[i + 2] < 200)) coloured++;
    return { w: c.width, h: c.height, coloured };
  });
  expect([px.w, px.h]).toEqual([8 * 36 + 7 * 6, 2 * 36 + 6]);
  expect(px.coloured).toBeGreaterThan(100);
  mkdirSync(OUT, { recursive: true });
  await page.screenshot({ path: resolve(OUT, 'cnn-web.png') });
  expect(errors).toEqual([]);
  await page.close();
});
