#!/usr/bin/env bash
# The GPU validation suite, run ON the GPU machine after a staging script (`cargo build --release
# --all-targets`, then the test, bench and example binaries copied with a run.sh) staged the
# release binaries in .gpu/ (that machine has CUDA but no Rust):
#
#   bash .ci/gpu-suite.sh [OUTDIR]
#
# Runs every staged test binary with GROUTE_TEST_CUDA=1 (CUDA mandatory: no GPU = failure) on
# one GPU (several virtual devices share it) and on all GPUs, then the examples with
# validation. Logs go to OUTDIR (default $OUT, else /tmp/groute-gpu); the last lines printed
# are a summary table.
set -uo pipefail
out=${1:-${OUT:-/tmp/groute-gpu}}
mkdir -p "$out"
export GROUTE_TEST_CUDA=1 NCCL_NVLS_ENABLE=0 RUST_BACKTRACE=1
summary=()
step() { # step NAME COMMAND...
  local name=$1; shift
  local t0=$SECONDS
  if "$@" >>"$out/suite.log" 2>&1; then r=ok; else r="FAILED($?)"; fi
  summary+=("$(printf '%-44s %-10s %4ss' "$name" "$r" $((SECONDS - t0)))")
  echo "=== $name: $r" >>"$out/suite.log"
}
nvidia-smi -L >"$out/gpus.txt" 2>&1
ngpu=$(grep -c '^GPU' "$out/gpus.txt" || true)
echo "GPUs: $ngpu" >"$out/suite.log"
step "tests, 1 GPU" env CUDA_VISIBLE_DEVICES=0 bash .gpu/run.sh tests
[[ $ngpu -ge 2 ]] && step "tests, $ngpu GPUs" bash .gpu/run.sh tests
run_example() { # NAME ARGS... -> JSON lines in examples.jsonl
  local name=$1; shift
  bash .gpu/run.sh example "$name" -- "$@" --json 2>>"$out/suite.log" | tee -a "$out/examples.jsonl" >/dev/null
}
if grep -q $'^example\tpbf' .gpu/manifest.tsv; then
  for d in 1 2; do step "pbf, $d devices" run_example pbf --backend cuda --devices "$d" --size 100000000; done
fi
if grep -q $'^example\ttopology' .gpu/manifest.tsv; then
  step "topology" bash .gpu/run.sh example topology
fi
for ex in bfs sssp cc; do
  grep -q $'^example\t'"$ex" .gpu/manifest.tsv || continue
  extra=()
  [[ $ex == sssp ]] && extra=(--gen-weights 1..100:7)
  [[ $ex != cc ]] && extra+=(--partition block)
  for g in kron21.sym road:side=2048,p=0.6; do
    for d in 1 2 4 8; do
      [[ $d -le $ngpu ]] || continue
      step "$ex $g, $d devices" run_example "$ex" --backend cuda --gen "$g" --devices "$d" --check --repeat 5 "${extra[@]}"
    done
  done
done
if [[ ${GROUTE_SUITE_BENCH:-1} == 1 ]] && grep -q $'^bench\tlink' .gpu/manifest.tsv; then
  step "bench link" bash -c "bash .gpu/run.sh bench link -- --bench --noplot > '$out/bench-link.txt' 2>&1"
fi
if [[ ${GROUTE_SUITE_BENCH:-1} == 1 ]] && grep -q $'^bench\tscaling' .gpu/manifest.tsv; then
  # The strong-scaling report's input: one JSON line per (algorithm, graph, devices); turn it
  # into docs/performance.md here with `cargo run --release --example report -- --input ...`.
  step "bench scaling" bash -c "GROUTE_BENCH_JSON='$out/scaling.json' GROUTE_BENCH_MEASURE_MS=200 bash .gpu/run.sh bench scaling -- --bench --noplot > '$out/bench-scaling.txt' 2>&1"
fi
printf '%s\n' "${summary[@]}" | tee "$out/summary.txt"
