export * from '../../../../test-support/gpu';

/**
 * Collects promise rejections nobody handled while a test file runs: a GPU error or a
 * device-loss promise that escapes the library shows up here.
 */
export function watchUnhandled(): { list: unknown[]; stop(): void } {
  const list: unknown[] = [];
  const on = (e: unknown) => {
    list.push(e);
  };
  process.on('unhandledRejection', on);
  return {
    list,
    stop: () => {
      process.off('unhandledRejection', on);
    },
  };
}
