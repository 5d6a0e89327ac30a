#!/usr/bin/env bash
# Bundles the kernel labs (reduce-lab, mm-lab, check) into .bench/ of this checkout, to be
# carried to the GPU host beside .gpu-host/ (see docs/tuning-log.md, run 8).
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
banner="import { createRequire as __cr } from 'module'; const require = __cr(import.meta.url);"
for s in "$@"; do
  npx esbuild "scripts/gpu/$s.ts" --bundle --platform=node --format=esm --external:webgpu \
    --outfile=".bench/$s.mjs" --banner:js="$banner" --log-level=warning
done
