#!/usr/bin/env bash
# GPU checks and benchmarks in one script: run it on a machine with a CUDA GPU and copy its
# output into benchmarks/RESULTS.md. Budget: under 8 minutes on an H200.
#
#   bash benchmarks/gpu.sh            # writes gpu-results.md (or $OUT/gpu-results.md when $OUT is set)
#   GPU_SH_DRY_RUN=1 bash benchmarks/gpu.sh   # the same steps on the CPU with small sizes (~2 min):
#                                              # checks the script itself before spending GPU time
#
# Needs torch with CUDA, gpytorch, botorch, linear_operator, pytest and hypothesis importable; the
# package itself is taken from this checkout (PYTHONPATH), so no install is needed on the machine.
# On the device tool: run(command="bash benchmarks/gpu.sh", timeout_s=540); the file comes back
# from $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" MPLBACKEND=Agg PYTHONUNBUFFERED=1
# the lent H200 image has python3 (with torch, gpytorch, botorch, pytest, hypothesis) and maybe no `python`
PY="${PYTHON:-$(command -v python3 || command -v python)}"
out="${OUT:-.}/gpu-results.md"
if [ -n "${GPU_SH_DRY_RUN:-}" ]; then
  dev=cpu exact_sizes="500 1000" scale_args="--part scaling precision --rounds 1 --scaling-sizes 10000"
else
  dev=cuda exact_sizes="1000 2000 4000 10000" scale_args="--rounds 3 --scaling-sizes 100000 1000000"
  "$PY" - <<'PY' || { echo "no CUDA device visible to torch: nothing to do"; exit 1; }
import torch
assert torch.cuda.is_available()
print("GPU:", torch.cuda.get_device_name(0), "| torch", torch.__version__)
PY
fi
{
  echo "# GPU run $(date -u +%Y-%m-%dT%H:%MZ)${GPU_SH_DRY_RUN:+ (dry run on the CPU: not a GPU result)}"
  echo
  echo '## CUDA tests (every device-parametrised test, CUDA variant)'
  echo '```'
  timeout 180 "$PY" -m pytest -q -p no:cacheprovider -k cuda tests 2>&1 | tail -15
  echo '```'
  echo
  echo "## 1. Exact kernelized Exp3 against the dense floor ($dev)"
  # shellcheck disable=SC2086  # the sizes are separate arguments
  timeout 120 "$PY" benchmarks/bench_exact_round.py --device "$dev" --sizes $exact_sizes --reps 3 2>&1
  echo
  echo "## 2–3. Exact / low-rank / RLS-Nyström at n = 10⁴; scaling to 10⁵ and 10⁶; float32 and TF32 precision ($dev)"
  # shellcheck disable=SC2086
  timeout 240 "$PY" benchmarks/bench_scale.py --device "$dev" $scale_args 2>&1
} | tee "$out"
echo "written: $out"
