/** A stand-in GPUDevice for the buffer pool's tests: it counts the buffers made and destroyed. */
export function fakeDevice(): { device: GPUDevice; counts: { created: number; destroyed: number } } {
  const counts = { created: 0, destroyed: 0 };
  const device = {
    createBuffer: ({ size }: { size: number }) => {
      counts.created++;
      return {
        size,
        destroy: () => {
          counts.destroyed++;
        },
      };
    },
  } as unknown as GPUDevice;
  return { device, counts };
}
