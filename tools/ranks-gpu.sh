#!/usr/bin/env bash
# The CUDA runs across MPI ranks, on a machine with GPUs, Open MPI and NCCL: groute-dist's
# NCCL job (BFS, SSSP, CC, PageRank against their references) under `mpirun -np RANKS`, then
# the examples on each graph, one process (1 device) against RANKS ranks of 1 device: BFS,
# SSSP and CC outputs compared, PageRank's ranks validated against the reference. Each step's
# log and JSON report go to the output folder as soon as the step ends, with one line per step
# in its summary.tsv; exits 1 if a step failed, timed out or differed.
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
#   --timeout SECS   limit for one step (default 300)
#   --work DIR       graphs and outputs (default /dev/shm/groute-ranks)
#   --out DIR        logs, reports and summary.tsv (default ./ranks-gpu-out)
#   --archive FILE   also rewrite FILE (.tar.gz of --out) after every step, so that a run cut
#                    short by a time limit still leaves one file with everything so far
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
manifest="" ranks=2 repeat=10 timeout_s=300 archive=""
graphs="kron21=kron21.sym;road=road:side=2048,p=0.6"
algorithms="bfs,sssp,cc,pagerank" work=/dev/shm/groute-ranks out=$PWD/ranks-gpu-out
while [[ $# -gt 0 ]]; do
  case $1 in
    --manifest) manifest=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --graphs) graphs=$2; shift 2 ;;
    --algorithms) algorithms=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --timeout) timeout_s=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --archive) archive=$2; shift 2 ;;
    -h | --help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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
mpi=(mpirun -np "$ranks" --oversubscribe --bind-to none -x GROUTE_TEST_CUDA ${CUDA_VISIBLE_DEVICES:+-x CUDA_VISIBLE_DEVICES} sh "$wrapper")
echo "$gpus GPUs, $ranks ranks$( ((ranks > gpus)) && echo ' (sharing GPUs over NCCL sockets)')"

failed=0
# step NAME COMMAND...: runs with the timeout, logs to $out/NAME.log, one summary row.
step() {
  local name=$1; shift
  local start=$SECONDS rc
  timeout "$timeout_s" "$@" >"$out/$name.log" 2>&1
  rc=$?
  printf '%s\t%s\t%ss\n' "$name" "$rc" "$((SECONDS - start))" | tee -a "$summary"
  [[ -z $archive ]] || tar czf "$archive" -C "$(dirname "$out")" "$(basename "$out")"
  ((rc == 0)) || failed=1
  return $rc
}

job=$(binary test nccl_ranks)
if [[ -x $job ]]; then
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
IFS=, read -ra algorithm_list <<<"$algorithms"
for alg in "${algorithm_list[@]}"; do
  for pair in "${graph_list[@]}"; do
    g=${pair%%=*} tag=$alg-${pair%%=*}
    args=(--graph "$work/$g.grc" --devices 1 --repeat "$repeat")
    step "$tag-1process" "$(binary example "$alg")" "${args[@]}" --output "$work/$tag-1process.txt" --json "$out/$tag-1process.json"
    if [[ $alg == pagerank ]]; then
      # Asynchronous sums differ in their last bits: the ranks' run is validated instead
      # (rank 0 checks the L1 error against the reference within the a-priori bound).
      if step "$tag-${ranks}ranks" "${mpi[@]}" "$(binary example "$alg")" "${args[@]}" --validate --output "$work/$tag-${ranks}ranks.txt" --json "$out/$tag-${ranks}ranks.json"; then
        printf '%s\tvalidated\n' "$tag" | tee -a "$summary"
      fi
      continue
    fi
    step "$tag-${ranks}ranks" "${mpi[@]}" "$(binary example "$alg")" "${args[@]}" --output "$work/$tag-${ranks}ranks.txt" --json "$out/$tag-${ranks}ranks.json"
    if cmp -s "$work/$tag-1process.txt" "$work/$tag-${ranks}ranks.txt"; then
      printf '%s\tequal\n' "$tag" | tee -a "$summary"
    else
      printf '%s\tDIFFERENT\n' "$tag" | tee -a "$summary"
      failed=1
    fi
  done
done
exit $failed
