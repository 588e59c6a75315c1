#!/usr/bin/env bash
# The multi-process tests: groute-dist's MPI job under mpirun with 2, 3 and 4 ranks (host
# backend, jittered), then the examples under mpirun against one process. Needs Open MPI
# (`mpirun`) and the binaries built with `--features mpi`; `.ci/run` installs and builds.
set -euo pipefail
cd "$(dirname "$0")/.."
# CI runs as root on 2 cores.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
target="${CARGO_TARGET_DIR:-target}/debug"
job=$(cargo test -p groute-dist --features mpi --test mpi_ranks --locked --no-run --message-format=json 2>/dev/null |
  sed -n 's/.*"executable":"\([^"]*mpi_ranks[^"]*\)".*/\1/p' | tail -1)
for np in 2 3 4; do
  echo "--- mpirun -np $np mpi_ranks"
  timeout 600 mpirun -np "$np" "$job"
done

# The examples under mpirun write the same --output as one process (PageRank: the same
# vertices, ranks within 1e-3 in L1 relative to their sum; each run validated on its own).
examples="${CARGO_TARGET_DIR:-target}/debug/examples"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# Caches: ranks other than 0 load only their parts' rows of them (a directed graph's too, but
# CC and PageRank, which need arcs both ways, load a directed cache whole).
"$examples/graphinfo" --gen kron:scale=10,ef=8,sym --write "$out/kron.grc" >/dev/null
"$examples/graphinfo" --gen random:n=3000,m=20000,seed=3,weights=1..50:2 \
  --write "$out/random.grc" >/dev/null
for graph in "" "--gen road:side=40,p=0.6" "--gen kron:scale=10,ef=8,sym" \
  "--graph datasets/tiny-weighted.gr" "--graph $out/kron.grc" "--graph $out/random.grc"; do
  for example in bfs sssp cc pagerank; do
    # shellcheck disable=SC2086
    "$examples/$example" $graph --validate --output "$out/one.txt" >/dev/null
    for np in 2 3; do
      echo "--- mpirun -np $np $example $graph"
      # shellcheck disable=SC2086
      timeout 300 mpirun -np "$np" "$examples/$example" $graph --devices 2 --validate \
        --output "$out/ranks.txt" >/dev/null
      if [ "$example" = pagerank ]; then
        paste -d' ' "$out/one.txt" "$out/ranks.txt" | awk '
          $1 != $3 { print "vertex " NR ": " $1 " vs " $3; bad = 1 }
          { d = $2 - $4; l1 += (d < 0 ? -d : d); sum += $2 }
          END { if (bad || l1 > 1e-3 * sum) { print "L1 " l1 " of " sum; exit 1 } }'
      else
        cmp "$out/one.txt" "$out/ranks.txt"
      fi
    done
  done
done
echo "--- ranks other than 0 load only their rows of a cache (the report says so)"
timeout 300 mpirun -np 3 "$examples/bfs" --graph "$out/kron.grc" --json "$out/report.json" >/dev/null
grep -q '"ranks_loading_own_rows": 2' "$out/report.json"
# BFS of a dense symmetric graph is direction-optimizing across the ranks, as in one process.
grep -q 'direction-optimizing BFS over 3 MPI ranks' "$out/report.json"
# CC across the ranks is hook and compress with rounds of label exchange.
timeout 300 mpirun -np 3 "$examples/cc" --graph "$out/kron.grc" --devices 2 --json "$out/report.json" >/dev/null
grep -q "hook and compress over 3 MPI ranks" "$out/report.json"
# PageRank across the ranks is synchronous pull sweeps, the shares gathered each round.
timeout 300 mpirun -np 3 "$examples/pagerank" --graph "$out/random.grc" --devices 2 \
  --json "$out/report.json" >/dev/null
grep -q "synchronous pull sweeps over 3 MPI ranks" "$out/report.json"
# The worklist's host executor counts its traffic: the report's comm has every counter.
timeout 300 mpirun -np 3 "$examples/bfs" --graph "$out/kron.grc" --direction push \
  --json "$out/report.json" >/dev/null
grep -q '"cut_arcs_traversed": [0-9]' "$out/report.json"
# Runs a job that must fail: a non-zero status within 120 s (124 is the timeout: a hang).
must_fail() {
  local what=$1 status=0
  shift
  timeout 120 mpirun "$@" >/dev/null 2>&1 || status=$?
  if [ "$status" = 0 ] || [ "$status" = 124 ]; then
    echo "$what: exit status $status (0: it did not fail, 124: it hung)" >&2
    exit 1
  fi
}
echo "--- a bad argument ends every rank (exit status, no hang)"
must_fail "a bad --source under mpirun" -np 2 "$examples/bfs" --source 999999999
echo "--- a rank killed mid-run ends the job (exit status, no hang)"
# Rank 1 is killed after 3 s of a run of 100 repetitions (tens of seconds): mpirun must end
# rank 0 too.
# shellcheck disable=SC2016
must_fail "a job whose rank 1 was killed" -np 2 bash -c \
  'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then exec timeout -s KILL 3 "$0" "$@"; fi; exec "$0" "$@"' \
  "$examples/bfs" --gen road:side=1000,p=0.6 --repeat 100

echo "--- tools/ranks-gpu.sh on the host backend: 1 device, 2 devices and 2 ranks, outputs compared"
# Its binaries through a manifest (the debug examples), its records into the report's ranks
# section. The memory-limit runs leave PageRank out here: its router's links keep 8 MiB of
# packet buffers per device whatever the graph, more than a quarter of a CI-sized graph (on
# kron scale 25 its 2 GPUs peak at 58% of one GPU's).
mkdir -p "$out/manifest/bin"
for example in bfs sssp cc pagerank graphinfo; do
  ln -s "$PWD/$examples/$example" "$out/manifest/bin/example-$example"
  printf 'example\t%s\t.\texample-%s\n' "$example" "$example" >>"$out/manifest/manifest.tsv"
done
ranks_gpu=(bash tools/ranks-gpu.sh --manifest "$out/manifest/manifest.tsv" --no-job --repeat 2
  --graphs "k=kron:scale=14,ef=8,sym" --work "$out/ranks-work")
timeout 600 "${ranks_gpu[@]}" --out "$out/ranks"
timeout 600 "${ranks_gpu[@]}" --algorithms bfs,sssp,cc --memory-limit k:0.75 --out "$out/ranks-limit"
cat "$out/ranks/ranks.jsonl" "$out/ranks-limit/ranks.jsonl" >"$out/ranks.jsonl"
"${CARGO_TARGET_DIR:-target}/debug/examples/report" --input docs/scaling-h200.json \
  --ranks "$out/ranks.jsonl" --out "$out/report" >/dev/null
grep -q '^## One process and several ranks' "$out/report/performance.md"
grep -q '| refused | 2 |' "$out/report/performance.md"
