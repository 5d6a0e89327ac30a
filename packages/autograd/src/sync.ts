import { getBackend } from './context';
import { flushPending } from './fusion/pending';

/**
 * Waits until the current backend has finished all queued work (torch.cuda.synchronize):
 * pending fused results are computed first, the batch is submitted, and a device-side check
 * that failed meanwhile (a cross-entropy class index out of range on WebGPU) raises its
 * ValueError here. Immediate on the CPU backend, which checks at once.
 */
export async function sync(): Promise<void> {
  flushPending();
  const b = getBackend();
  b.flush();
  await b.sync();
}
