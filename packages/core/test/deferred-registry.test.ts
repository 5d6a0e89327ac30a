import { DeferredRegistry, flushDeferredRegistrations } from '@surf/core';

// Registration waits for the end of the job; objects disposed before it are never registered,
// the rest are, and a forced flush registers them at once.
interface Obj {
  alive: boolean;
  registered: boolean;
}
const make = (max?: number) =>
  new DeferredRegistry<Obj, string>(
    () => undefined,
    (o) => o.alive,
    (o) => {
      o.registered = true;
    },
    max,
  );
const obj = (): Obj => ({ alive: true, registered: false });

test('only objects still alive at the end of the job are registered', async () => {
  const r = make();
  const [a, b, c] = [obj(), obj(), obj()];
  r.register(a, 'a');
  r.register(b, 'b');
  r.register(c, 'c');
  b.alive = false; // disposed within the job
  expect([a, b, c].map((o) => o.registered)).toEqual([false, false, false]);
  await Promise.resolve();
  expect([a, b, c].map((o) => o.registered)).toEqual([true, false, true]);
  r.unregister(a);
});

test('a full queue flushes at once, and flushDeferredRegistrations() flushes every registry', () => {
  const r = make(2);
  const [a, b, c] = [obj(), obj(), obj()];
  r.register(a, 'a');
  expect(a.registered).toBe(false);
  r.register(b, 'b');
  expect([a.registered, b.registered]).toEqual([true, true]);
  r.register(c, 'c');
  flushDeferredRegistrations();
  expect(c.registered).toBe(true);
});
