// Run once per jest run by test-support/global-setup.mjs, in a child process (so Dawn never
// lives in jest's own process): can a WebGPU backend be created here? Prints one JSON line.
import { createWebGPUBackend } from '@surf/webgpu';

createWebGPUBackend().then(
  (b) => {
    console.log(JSON.stringify({ ok: true, description: b.description }));
    b.destroy();
    process.exit(0);
  },
  (e: unknown) => {
    console.log(JSON.stringify({ ok: false, reason: e instanceof Error ? e.message : String(e) }));
    process.exit(0);
  },
);
