import { BackendError } from '../../errors';
import type { Arena } from './arena';

/** The error for a kernel that needs linear memory past the arena's limit (never a raw RangeError). */
export function memoryLimitError(arena: Arena, what: string): BackendError {
  const gib = (arena.limitBytes / 2 ** 30).toFixed(arena.limitBytes >= 2 ** 30 ? 0 : 3);
  return new BackendError(
    `CPU backend memory limit ${gib} GiB reached (${what}; ${arena.allocatedBytes} bytes held by live tensors); dispose tensors or use tidy`,
  );
}
