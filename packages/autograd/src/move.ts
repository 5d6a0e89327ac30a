import { Backend, NDArray, TypedArray, ValueError, fmtShape } from '@surf/core';
import { defaultCpuBackend, getBackend } from './context';
import type { Tensor } from './tensor';

/**
 * Moving data between backends (PyTorch's `.to(device)`). Reading a CPU array is synchronous,
 * so moves off the CPU backend have a sync form; moves off a GPU need a readback and are
 * async (`toAsync`). A moved tensor is a new leaf: `to()` is not recorded in the graph.
 */
export type BackendTarget = Backend | 'cpu' | 'webgpu';

/** The backend a target names: 'cpu' is the default CPU backend, 'webgpu' must be current. */
export function resolveBackend(op: string, target: BackendTarget): Backend {
  if (target === 'cpu') {
    const cur = getBackend();
    return cur.name === 'cpu' ? cur : defaultCpuBackend();
  }
  if (target === 'webgpu') {
    const cur = getBackend();
    if (cur.name !== 'webgpu')
      throw new ValueError(
        `${op}: 'webgpu' names the current backend, but that is '${cur.name}'; call await init({ backend: 'webgpu' }) first, or pass a backend object`,
      );
    return cur;
  }
  if (target === null || typeof target !== 'object' || typeof (target as Backend).elementwise !== 'function') {
    throw new ValueError(
      `${op}: expected a backend (getBackend(), 'cpu' or 'webgpu'); got ${target === null ? 'null' : typeof target === 'object' ? 'an object that is not a Backend' : JSON.stringify(target)}`,
    );
  }
  return target;
}

/**
 * The elements of a CPU-backend array, read synchronously (null on other backends). With
 * `copy` false a plain contiguous array is returned without copying: read it at once, never
 * keep or write it (printing does this, so printing a large tensor costs no copy).
 */
export function readSync(nd: NDArray, copy = true): TypedArray | null {
  if (nd.backend.name !== 'cpu') return null;
  const direct = (nd.storage as unknown as { data?: TypedArray }).data;
  if (!copy && direct && nd.view.isPlain && nd.storage.size === nd.size) return direct;
  const c = nd.contiguous();
  try {
    const data = (c.storage as unknown as { data?: TypedArray }).data;
    return data ? data.slice() : null;
  } finally {
    c.dispose();
  }
}

/** A copy of `nd` on `backend` (sync: the source must be on the CPU backend). */
export function moveArray(op: string, nd: NDArray, backend: Backend): NDArray {
  const data = readSync(nd);
  if (!data) {
    throw new ValueError(
      `${op}: a tensor of shape ${fmtShape(nd.shape)} lives on '${nd.backend.name}'; reading it back is asynchronous, so use await toAsync(...) to move it to '${backend.name}'`,
    );
  }
  return NDArray.fromData(backend, data, nd.shape, nd.dtype);
}

export async function moveArrayAsync(nd: NDArray, backend: Backend): Promise<NDArray> {
  const data = await nd.data();
  return NDArray.fromData(backend, data, nd.shape, nd.dtype);
}

function checkMovable(op: string, t: Tensor): void {
  if (t.requiresGrad && !t.isLeaf) {
    throw new ValueError(
      `${op}: the tensor of shape ${fmtShape(t.shape)} was made by an op and requires grad; moving is not recorded in the graph, so detach() it first (or move the leaves)`,
    );
  }
}

/** Replaces the data (and .grad) of a tensor with copies on `backend`, keeping its identity. */
export function moveInPlace(op: string, t: Tensor, backend: Backend): void {
  const nd = t.nd(op);
  if (nd.backend === backend) return;
  const moved = moveArray(op, nd, backend);
  const g = t.grad;
  const movedGrad = g && !g.isDisposed && g.ndarray.backend !== backend ? moveArray(op, g.ndarray, backend) : null;
  t._replace(moved);
  if (movedGrad) g!._replace(movedGrad);
}

export async function moveInPlaceAsync(op: string, t: Tensor, backend: Backend): Promise<void> {
  const nd = t.nd(op);
  if (nd.backend === backend) return;
  const moved = await moveArrayAsync(nd, backend);
  const g = t.grad;
  const movedGrad =
    g && !g.isDisposed && g.ndarray.backend !== backend ? await moveArrayAsync(g.ndarray, backend) : null;
  t._replace(moved);
  if (movedGrad) g!._replace(movedGrad);
}

/** Tensor.to: this tensor when it already lives there, else a new leaf with the same requiresGrad. */
export function toBackend(
  t: Tensor,
  target: BackendTarget,
  make: (nd: NDArray, requiresGrad: boolean) => Tensor,
): Tensor {
  const backend = resolveBackend('to', target);
  const nd = t.nd('to');
  if (nd.backend === backend) return t;
  checkMovable('to', t);
  return make(moveArray('to', nd, backend), t.requiresGrad);
}

export async function toBackendAsync(
  t: Tensor,
  target: BackendTarget,
  make: (nd: NDArray, requiresGrad: boolean) => Tensor,
): Promise<Tensor> {
  const backend = resolveBackend('toAsync', target);
  const nd = t.nd('toAsync');
  if (nd.backend === backend) return t;
  checkMovable('toAsync', t);
  return make(await moveArrayAsync(nd, backend), t.requiresGrad);
}
