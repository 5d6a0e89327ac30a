// The CPU GEMM's implementation switch and raw kernel, for the benchmarks that compare the
// plain-JS loop with the WebAssembly SIMD kernels (bench/src/cpu-matmul.ts, cpu-mlp-step.ts).
// Tools, not runtime API: that is why they live in the testing entry.
export { matmulInto, setMatmulImpl } from '../cpu/matmul';
export type { MatmulImpl } from '../cpu/matmul';
