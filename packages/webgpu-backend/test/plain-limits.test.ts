import { gpuBackend, testGpu } from './gpu';

// The backend reads its limits on every op from a plain copy (limits.ts): the copy must say
// what the device says, field by field.
testGpu("the backend's limits are a plain copy of the device's", async () => {
  const gpu = await gpuBackend();
  try {
    const copy = gpu.limits as unknown as Record<string, number>;
    const dev = gpu.device.limits as unknown as Record<string, number>;
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    for (const k of [
      'maxStorageBuffersPerShaderStage',
      'maxBufferSize',
      'maxStorageBufferBindingSize',
      'maxComputeWorkgroupSizeX',
      'minUniformBufferOffsetAlignment',
    ])
      expect(k in copy).toBe(true);
    for (const k of Object.keys(copy)) expect([k, copy[k]]).toEqual([k, dev[k]]);
  } finally {
    gpu.destroy();
  }
});
