import { NDArray } from '@surf/core';
import type { WebGPUBackend } from '@surf/webgpu';
import { gpuBackend, testGpu } from '../../gpu';

// The contract's checkIndices on WebGPU (crossEntropy's rows kernel has its own check; this is
// the standalone assert other callers use): valid indices raise nothing; a bad one raises a
// ValueError naming the site at the next read, once, and the strided view is what is checked.
testGpu('checkIndices: a device-side assert raised at the next read, once', async () => {
  const b: WebGPUBackend = await gpuBackend();
  try {
    const site = { op: 'embedding', name: 'indices', range: 'the table of 4 rows' };
    const idx = NDArray.fromData(b, Int32Array.from([0, 3, 9, 1, -2, 2]), [6], 'int32');
    const x = NDArray.fromData(b, [1, 2], [2]);
    b.checkIndices(idx.crop([[0, 2]]).strided, 0, 4, site); // [0, 3]: valid
    await expect(x.data()).resolves.toBeDefined();
    b.checkIndices(idx.strided, 0, 4, site);
    await expect(x.data()).rejects.toThrow(
      /embedding: indices\[2\] is outside the table of 4 rows \(the bad values seen run from -2 to 9\)/,
    );
    await expect(x.data()).resolves.toBeDefined(); // reported once, the slot reset
    b.checkIndices(idx.flip(0).crop([[0, 2]]).strided, 0, 4, site); // [2, -2]
    await expect(b.sync()).rejects.toThrow(/embedding: indices\[1\] = -2 is outside the table of 4 rows/);
    for (const t of [idx, x]) t.dispose();
  } finally {
    b.destroy();
  }
});
