#!/usr/bin/env bash
# Runs the estimate-accuracy benchmark on a machine with an NVIDIA GPU and PyTorch, and stores the results
# under bench/results/ with the date, GPU and driver in the file name.
# Usage: bench/gpu/run-estimate-accuracy.sh [--quick]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
gpu="$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '-')"
driver="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
out="$root/bench/results/estimate-accuracy-$(date +%Y-%m-%d)-$gpu-$driver.json"
npm --prefix "$root" run build >/dev/null
python3 "$here/estimate-accuracy.py" --gpumem "node $root/dist/cli/bin.js" --out "$out" "$@"
echo "results: $out"
