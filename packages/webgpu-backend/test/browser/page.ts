// The browser page of browser.test.ts: runs the quick cases of the shared op table against
// the WebGPU backend through navigator.gpu and leaves a report on window.
import { opCases, runCase } from '@surf/core/testing';
import { createWebGPUBackend } from '@surf/webgpu';

interface PageReport {
  adapter: string;
  results: { name: string; ok: boolean; message: string }[];
  error?: string;
}

async function main(): Promise<PageReport> {
  const backend = await createWebGPUBackend();
  const results: PageReport['results'] = [];
  try {
    for (const c of opCases({ quick: true })) {
      const r = await runCase(c, backend);
      results.push({ name: r.name, ok: r.ok, message: r.ok ? '' : r.message });
    }
  } finally {
    backend.destroy();
  }
  return { adapter: backend.description, results };
}

const w = window as unknown as { __surfReport?: PageReport };
main().then(
  (r) => {
    w.__surfReport = r;
  },
  (e: Error) => {
    w.__surfReport = { adapter: '', results: [], error: `${e.name}: ${e.message}` };
  },
);
