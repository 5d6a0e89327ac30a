import { newFinalizationRegistry } from './host-gc';

/**
 * A FinalizationRegistry whose registrations wait for the end of the current job (a
 * microtask), for objects usually disposed by hand within it: tidy()'s intermediates and the
 * arrays inside ops never pay V8's register + unregister pair (about 1 µs, tens of times per
 * training step). Until the flush the objects are held strongly, so none escapes the safety
 * net: one dropped before the flush is registered by it and collected as before. A collector
 * that runs gc() itself calls flushDeferredRegistrations() first, so nothing waits a cycle.
 */
export class DeferredRegistry<T extends object, H> {
  private readonly registry: FinalizationRegistry<H>;
  private objs: T[] = [];
  private helds: H[] = [];
  private scheduled = false;
  private readonly flushNow = (): void => this.flush();

  /**
   * `alive(obj, held)`: false once obj was disposed (then it is not registered); `registered`
   * marks obj as registered, so its disposal knows to unregister it.
   */
  constructor(
    cleanup: (held: H) => void,
    private readonly alive: (obj: T, held: H) => boolean,
    private readonly registered: (obj: T, held: H) => void,
    private readonly max = 4096,
  ) {
    this.registry = newFinalizationRegistry(cleanup);
    instances.push(this);
  }

  register(obj: T, held: H): void {
    this.objs.push(obj);
    this.helds.push(held);
    if (this.objs.length >= this.max) this.flush();
    else if (!this.scheduled) {
      this.scheduled = true;
      queueMicrotask(this.flushNow);
    }
  }

  /** For an object `registered` marked: drops its registration. */
  unregister(obj: T): void {
    this.registry.unregister(obj);
  }

  flush(): void {
    this.scheduled = false;
    const objs = this.objs,
      helds = this.helds;
    if (objs.length === 0) return;
    this.objs = [];
    this.helds = [];
    for (let i = 0; i < objs.length; i++) {
      const o = objs[i];
      if (!this.alive(o, helds[i])) continue;
      this.registry.register(o, helds[i], o);
      this.registered(o, helds[i]);
    }
  }
}

const instances: { flush(): void }[] = [];

/** Registers every object still waiting (before a forced garbage collection). */
export function flushDeferredRegistrations(): void {
  for (const r of instances) r.flush();
}
