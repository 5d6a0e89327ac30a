#!/usr/bin/env bash
# Builds everything the benchmark suite needs on the GPU host (no Node, no npm, no network)
# into .bench/ and .gpu-host/ at the project root (both git-ignored):
#   .bench/main.mjs          the suite, one ESM bundle (Surf, TF.js, jax-js inside; Dawn external)
#   .bench/*.wasm            TF.js's wasm binaries (its wasm backend loads them at run time)
#   .bench/bench.py          the PyTorch CUDA rows
#   .bench/mnist.bin         the MNIST example's digits (the example row), when the example exists
#   .bench/versions.json     the peers' versions, for the report
#   .gpu-host/               Node, Dawn and the Vulkan loader (the shared pack.sh)
# Then, on the host: source .gpu-host/unpack.sh; node .bench/main.mjs --json $OUT/bench.json
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
rm -rf .bench
mkdir -p .bench

node bench/gpu-host/build.mjs --outdir .bench   # also copies TF.js's .wasm files

cp bench/torch/bench.py bench/torch/zoo.py .bench/

node -e "
const fs = require('fs'), path = require('path');
const out = {};
for (const p of ['@tensorflow/tfjs-core', '@tensorflow/tfjs-backend-webgpu', '@tensorflow/tfjs-backend-wasm', '@tensorflow/tfjs-backend-cpu', '@jax-js/jax', 'webgpu']) {
  try { out[p] = JSON.parse(fs.readFileSync(path.join('node_modules', p, 'package.json'), 'utf8')).version; } catch {}
}
fs.writeFileSync('.bench/versions.json', JSON.stringify(out, null, 1));
"

if ! node scripts/run-ts.mjs bench/gpu-host/mnist-bin.ts .bench/mnist.bin; then
  echo "build.sh: no .bench/mnist.bin: the MNIST example row will show n/a on the host"
fi

pack=${GPU_HOST_PACK:-/work/shared/gpu-host/pack.sh}
[ -f "$pack" ] || pack="$root/../shared/gpu-host/pack.sh"
if [ "${SKIP_PACK:-0}" != 1 ]; then
  bash "$pack"
fi
du -sh .bench | sed 's/^/build.sh: /'
[ -d .gpu-host ] && du -sh .gpu-host | sed 's/^/build.sh: /'
echo "build.sh: on the GPU host run (carry .gpu-host and .bench): source .gpu-host/unpack.sh; node .bench/main.mjs --deadline=480 --json \$OUT/bench.json"
