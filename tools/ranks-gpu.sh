#!/usr/bin/env bash
# The CUDA runs across MPI ranks, on a machine with GPUs, Open MPI and NCCL: groute-dist's
# NCCL job (BFS, SSSP, CC, PageRank against their references) under `mpirun -np RANKS`, then
# the examples on each graph: one process of 1 device, one process of RANKS devices and RANKS
# ranks of 1 device; BFS, SSSP and CC outputs compared with the 1-device run, PageRank's ranks
# validated against the reference. With --memory-limit, the examples on one graph again
# under a device memory limit below the 1-device run's peak: 1 device must stop with the
# limit's error (exit 1 or 2), RANKS devices must finish with the 1-device result. Each step's
# log and JSON report go to the output folder as soon as the step ends, with one line per step
# in its summary.tsv, and at the end one JSON line per example run in ranks.jsonl
# (tools/ranks-record.py; the `report` example's --ranks); exits 1 if a step failed, timed
# out or differed. GROUTE_TUNING, where set, reaches every example run, on every rank.
#
# Usage: tools/ranks-gpu.sh [options]
#   --manifest FILE  binaries staged for a machine without Rust (gpu-stage's manifest.tsv:
#                    `kind name package_dir binary` rows, the binary under the manifest's bin/);
#                    without it: target/release (`cargo build --release --features mpi,nccl
#                    --examples` and the nccl_ranks test built with the same features)
#   --ranks N        ranks (default 2). More ranks than GPUs (CUDA_VISIBLE_DEVICES's, where
#                    set) share them: each rank then gets its own NCCL_HOSTID and
#                    NCCL_SOCKET_IFNAME=lo (NCCL's socket transport)
#   --graphs LIST    `name=spec` pairs separated by semicolons (a spec has commas; default
#                    `kron21=kron21.sym;road=road:side=2048,p=0.6`), generated once into
#                    --work as .grc caches
#   --algorithms L   examples to run (default bfs,sssp,cc,pagerank)
#   --repeat N       timed runs per example (default 10)
#   --no-job         skip groute-dist's NCCL job (a later call over more graphs)
#   --memory-limit NAME:FRACTION
#                    the memory-limit runs on graph NAME (one of --graphs) with the limit at
#                    FRACTION (below 1, e.g. 0.75) of the 1-device run's device peak
#   --timeout SECS   limit for one step (default 300)
#   --work DIR       graphs and outputs (default /dev/shm/groute-ranks)
#   --out DIR        logs, reports and summary.tsv (default ./ranks-gpu-out)
#   --archive FILE   also rewrite FILE (.tar.gz of --out) after every step, so that a run cut
#                    short by a time limit still leaves one file with everything so far
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
manifest="" ranks=2 repeat=10 timeout_s=300 archive="" memory_limit="" run_job=1
graphs="kron21=kron21.sym;road=road:side=2048,p=0.6"
algorithms="bfs,sssp,cc,pagerank" work=/dev/shm/groute-ranks out=$PWD/ranks-gpu-out
while [[ $# -gt 0 ]]; do
  case $1 in
    --manifest) manifest=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --graphs) graphs=$2; shift 2 ;;
    --algorithms) algorithms=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --memory-limit) memory_limit=$2; shift 2 ;;
    --no-job) run_job=0; shift ;;
    --timeout) timeout_s=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --archive) archive=$2; shift 2 ;;
    -h | --help) sed -n '2,35p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
IFS=";" read -ra graph_list <<<"$graphs"
for pair in "${graph_list[@]}"; do
  # The list was once comma-separated: a second `name=spec:` after a comma is that form.
  if [[ $pair != *=* || ${pair#*=} =~ ,[A-Za-z0-9_.-]+=[a-z-]+: ]]; then
    echo "--graphs: '$pair' is not one name=spec pair: separate the graphs with ';'" >&2
    exit 2
  fi
done
limit_graph=${memory_limit%%:*} limit_fraction=${memory_limit#*:}
if [[ -n $memory_limit && ! ( $memory_limit == *:* && $limit_fraction =~ ^0?\.[0-9]*[1-9][0-9]*$ && ";$graphs" == *";$limit_graph="* ) ]]; then
  echo "--memory-limit: '$memory_limit' is not NAME:FRACTION with NAME one of --graphs and FRACTION between 0 and 1 (e.g. kron25:0.75)" >&2
  exit 2
fi
if [[ -n $memory_limit ]] && ((ranks < 2)); then
  echo "--memory-limit needs --ranks 2 or more: the limit runs compare 1 device with RANKS devices" >&2
  exit 2
fi
mkdir -p "$work" "$out"
summary=$out/summary.tsv
: >"$summary"

# The path of a binary: from the manifest, or cargo's release folder.
binary() { # kind name
  if [[ -n $manifest ]]; then
    local b
    b=$(awk -F'\t' -v k="$1" -v n="$2" '$1==k && $2==n {print $4; exit}' "$manifest")
    [[ -n $b ]] && echo "$(dirname "$manifest")/bin/$b"
  elif [[ $1 == example ]]; then
    echo "$root/target/release/examples/$2"
  else
    ls -t "$root"/target/release/deps/"$2"-* 2>/dev/null | grep -v '\.d$' | head -1
  fi
}

# The GPUs the ranks see: CUDA_VISIBLE_DEVICES's list where it is set (CUDA_VISIBLE_DEVICES=0
# makes every rank share GPU 0), else every GPU of the machine.
if [[ -n ${CUDA_VISIBLE_DEVICES:-} ]]; then
  gpus=$(tr ',' '\n' <<<"$CUDA_VISIBLE_DEVICES" | grep -c .)
else
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0 GROUTE_TEST_CUDA=1
wrapper=$work/rank-env.sh
if ((ranks > gpus)); then
  printf '#!/bin/sh\nexport NCCL_HOSTID=groute-rank-$OMPI_COMM_WORLD_RANK NCCL_SOCKET_IFNAME=lo\nexec "$@"\n' >"$wrapper"
else
  printf '#!/bin/sh\nexec "$@"\n' >"$wrapper"
fi
mpi=(mpirun -np "$ranks" --oversubscribe --bind-to none -x GROUTE_TEST_CUDA ${CUDA_VISIBLE_DEVICES:+-x CUDA_VISIBLE_DEVICES} ${GROUTE_TUNING:+-x GROUTE_TUNING} sh "$wrapper")
echo "$gpus GPUs, $ranks ranks$( ((ranks > gpus)) && echo ' (sharing GPUs over NCCL sockets)')"

failed=0
# step NAME COMMAND...: runs with the timeout, logs to $out/NAME.log, one summary row.
step() {
  local name=$1; shift
  local start=$SECONDS rc
  # A report left by an earlier invocation must not stand for this one's run.
  rm -f "$out/$name.json"
  timeout "$timeout_s" "$@" >"$out/$name.log" 2>&1
  rc=$?
  printf '%s\t%s\t%ss\n' "$name" "$rc" "$((SECONDS - start))" | tee -a "$summary"
  [[ -z $archive ]] || tar czf "$archive" -C "$(dirname "$out")" "$(basename "$out")"
  ((rc == 0)) || failed=1
  return $rc
}

job=$(binary test nccl_ranks)
if ((run_job == 0)); then
  :
elif [[ -x $job ]]; then
  (cd "$root/crates/groute-dist" && step nccl_ranks "${mpi[@]}" "$job")
  grep -q $'^nccl_ranks\t0' "$summary" || failed=1
else
  echo "nccl_ranks: not built (test binary of groute-dist with --features mpi,nccl)" | tee -a "$summary"
  failed=1
fi

for pair in "${graph_list[@]}"; do
  name=${pair%%=*} spec=${pair#*=}
  [[ -f $work/$name.grc ]] || step "generate-$name" "$(binary example graphinfo)" --gen "$spec" --write "$work/$name.grc"
done
# compared NAME COMMAND...: `step` with the run's --output and --json, then one summary row
# saying whether its output equals the 1-device run's ($tag-1process) or, for PageRank (the
# run validates itself: $check), that it was validated.
compared() {
  local name=$1; shift
  step "$name" "$@" "${check[@]}" --output "$work/$name.txt" --json "$out/$name.json" || return
  if [[ $alg == pagerank ]]; then
    printf '%s\tvalidated\n' "$name" | tee -a "$summary"
  elif cmp -s "$work/$tag-1process.txt" "$work/$name.txt"; then
    printf '%s\tequal\n' "$name" | tee -a "$summary"
  else
    printf '%s\tDIFFERENT\n' "$name" | tee -a "$summary"
    failed=1
  fi
}

# The largest device peak of a run's JSON report, in bytes (0 where it has none).
device_peak() {
  python3 -c 'import json, sys
m = (json.load(open(sys.argv[1])).get("memory") or {}).get("devices") or []
print(max([d["peak_bytes"] for d in m] or [0]))' "$1" 2>/dev/null || echo 0
}

IFS=, read -ra algorithm_list <<<"$algorithms"
for alg in "${algorithm_list[@]}"; do
  for pair in "${graph_list[@]}"; do
    g=${pair%%=*} tag=$alg-${pair%%=*}
    args=(--graph "$work/$g.grc" --repeat "$repeat")
    # PageRank's asynchronous sums differ in their last bits between runs: its runs on
    # several devices or ranks are validated instead (against the reference, within the
    # a-priori bound; under mpirun rank 0 checks).
    check=(); [[ $alg == pagerank ]] && check=(--validate)
    example=$(binary example "$alg")
    step "$tag-1process" "$example" "${args[@]}" --devices 1 --output "$work/$tag-1process.txt" --json "$out/$tag-1process.json"
    for run in "${ranks}devices" "${ranks}ranks"; do
      launch=("$example" "${args[@]}" --devices "$ranks")
      [[ $run == *ranks ]] && launch=("${mpi[@]}" "$example" "${args[@]}" --devices 1)
      compared "$tag-$run" "${launch[@]}"
    done
    [[ -n $memory_limit && $g == "$limit_graph" ]] || continue
    peak=$(device_peak "$out/$tag-1process.json")
    if ((peak == 0)); then
      printf '%s\tno device peak in %s\n' "$tag-memlimit" "$tag-1process.json" | tee -a "$summary"
      failed=1
      continue
    fi
    limit=$(python3 -c "print(int($peak * $limit_fraction))")
    limited=("$example" --graph "$work/$g.grc" --repeat 1 --device-memory-limit "$limit")
    # 1 device under the limit: a clean refusal naming the limit (its step's exit code is
    # expected not to be 0), not a crash.
    before=$failed
    step "$tag-memlimit-1device" "${limited[@]}" --devices 1
    rc=$?
    failed=$before
    if [[ $rc == 1 || $rc == 2 ]] && grep -q 'memory limit' "$out/$tag-memlimit-1device.log"; then
      printf '%s\trefused cleanly under %s bytes (1-device peak %s)\n' "$tag-memlimit-1device" "$limit" "$peak" | tee -a "$summary"
    else
      printf '%s\tNOT REFUSED CLEANLY (exit %s) under %s bytes\n' "$tag-memlimit-1device" "$rc" "$limit" | tee -a "$summary"
      failed=1
    fi
    compared "$tag-memlimit-${ranks}devices" "${limited[@]}" --devices "$ranks"
  done
done
# One JSON line per example run, for the report's section on processes and ranks.
python3 "$root/tools/ranks-record.py" "$out" >"$out/ranks.jsonl" || failed=1
[[ -z $archive ]] || tar czf "$archive" -C "$(dirname "$out")" "$(basename "$out")"
exit $failed
