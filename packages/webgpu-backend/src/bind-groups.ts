import type { PooledBuffer } from './pool';

interface Node {
  bg: GPUBindGroup | null;
  next: Map<number, Node> | null;
}

/**
 * Bind groups by layout, parameter-block size and the ids of the buffers bound, as a tree of
 * small maps walked one buffer at a time: a dispatch finds its group without building a key
 * string (the string cost about a microsecond per small eager op).
 */
export class BindGroupCache {
  private roots = new Map<GPUBindGroupLayout, Map<number, Node>>();
  size = 0;

  private walk(
    layout: GPUBindGroupLayout,
    paramBytes: number,
    bufs: readonly PooledBuffer[],
    make: boolean,
  ): Node | null {
    let byBytes = this.roots.get(layout);
    if (!byBytes) {
      if (!make) return null;
      this.roots.set(layout, (byBytes = new Map()));
    }
    let node: Node | undefined = byBytes.get(paramBytes);
    if (!node) {
      if (!make) return null;
      byBytes.set(paramBytes, (node = { bg: null, next: null }));
    }
    for (let i = 0; i < bufs.length; i++) {
      const id = bufs[i].id;
      let n: Node | undefined = node.next?.get(id);
      if (!n) {
        if (!make) return null;
        (node.next ??= new Map()).set(id, (n = { bg: null, next: null }));
      }
      node = n;
    }
    return node;
  }

  get(layout: GPUBindGroupLayout, paramBytes: number, bufs: readonly PooledBuffer[]): GPUBindGroup | null {
    return this.walk(layout, paramBytes, bufs, false)?.bg ?? null;
  }

  set(layout: GPUBindGroupLayout, paramBytes: number, bufs: readonly PooledBuffer[], bg: GPUBindGroup): void {
    this.walk(layout, paramBytes, bufs, true)!.bg = bg;
    this.size++;
  }

  clear(): void {
    this.roots.clear();
    this.size = 0;
  }
}
