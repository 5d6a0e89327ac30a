#!/usr/bin/env bash
# Bundles the GPU-host scripts (correctness check, kernel probe) into .gpu-run/ and packs the
# runtime the host lacks (.gpu-host/). Then: run with carry [".gpu-host", ".gpu-run"] and
#   source .gpu-host/unpack.sh; node .gpu-run/check.mjs; node .gpu-run/probe.mjs
#   node .gpu-run/soak.mjs --steps 10000 --backend webgpu; node .gpu-run/train-probe.mjs
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
grep -qxF '/.gpu-run/' .git/info/exclude || echo '/.gpu-run/' >> .git/info/exclude
banner="import { createRequire as __cr } from 'module'; const require = __cr(import.meta.url);"
for s in check probe train-probe; do
  npx esbuild "scripts/gpu/$s.ts" --bundle --platform=node --format=esm --external:webgpu \
    --outfile=".gpu-run/$s.mjs" --banner:js="$banner" --log-level=warning
done
# The memory soak (issue 8) from the bench, for a 10,000-step run on the GPU.
npx esbuild bench/src/soak.ts --bundle --platform=node --format=esm --external:webgpu \
  --outfile=.gpu-run/soak.mjs --banner:js="$banner" --log-level=warning
[ -d .gpu-host ] || bash ../shared/gpu-host/pack.sh
echo "built .gpu-run/"
