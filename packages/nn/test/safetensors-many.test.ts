import { load } from '@surf/nn';
import { backends, describeEach, on } from './helpers';

// A file of many empty tensors (a few bytes of header each) must load and dispose in time
// linear in their number, and leave a bounded pool behind: on WebGPU, dispose once walked every
// pooled buffer and kept every one (200,000 tensors: 213 s, 80,000 pooled buffers).

const B = backends();
beforeAll(B.setup);
afterAll(B.teardown);

function emptyTensors(n: number): Uint8Array {
  const parts: string[] = [];
  for (let i = 0; i < n; i++) parts.push(`"t${i}":{"dtype":"F32","shape":[0],"data_offsets":[0,0]}`);
  const h = Buffer.from(`{${parts.join(',')}}`);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(h.length));
  return new Uint8Array(Buffer.concat([len, h]));
}

describeEach(['cpu', 'webgpu'] as const, 'on %s', (kind) => {
  test('20,000 empty tensors load and dispose, and the pool stays bounded', async () => {
    const backend = kind === 'cpu' ? B.cpu : B.gpu();
    await on(backend, async () => {
      const file = emptyTensors(20_000);
      const sd = load(file);
      expect(Object.keys(sd).length).toBe(20_000);
      for (const k of Object.keys(sd)) sd[k].dispose();
      await backend.sync?.();
      const mem = backend.memory();
      expect(mem.buffers).toBe(0);
      expect(mem.pooledBuffers ?? 0).toBeLessThanOrEqual(1024 + 64);
    });
  });
});
