#!/usr/bin/env bash
# The scaling run of a machine with several GPUs, in one command: the scaling bench over the
# graphs for 1..N devices (its JSON lines: scaling.json), then tools/ranks-gpu.sh over the
# same graphs (one process of 1 and of N devices against N MPI ranks, outputs compared, and
# with --memory-limit the runs under a device memory limit; its JSON lines: ranks.jsonl).
# The report then regenerates docs/performance.md from both files:
#   cargo run --release --example report -- --input DIR/scaling.json --ranks DIR/ranks/ranks.jsonl --out docs --readme README.md
# Exits 1 if the bench or a ranks step failed.
#
# Usage: tools/scaling-gpu.sh --manifest FILE [options]
#   --manifest FILE  binaries staged for a machine without Rust (a manifest.tsv of
#                    `kind name package_dir binary` rows, the binary under the manifest's
#                    bin/): the `scaling` bench, the examples bfs, sssp, pagerank, cc and
#                    graphinfo, and groute-dist's nccl_ranks test, built with
#                    `--features groute/mpi,groute/nccl,groute-dist/mpi,groute-dist/nccl`
#                    and `GROUTE_COMMIT=$(git rev-parse --short HEAD)` in the build's
#                    environment, so that the bench's records name the commit built (this
#                    machine's checkout may be at another)
#   --graphs LIST    `name=spec` pairs separated by semicolons (default: kron21, the road
#                    grid of side 2048, road-usa and kron scale 25)
#   --devices N      the most devices, and the ranks (default: the GPUs present)
#   --memory-limit NAME:FRACTION
#                    passed to ranks-gpu.sh (default `kron25:0.75` when kron25 is a graph
#                    and there are 2 devices or more)
#   --measure-ms MS  the bench's measurement time per benchmark (GROUTE_BENCH_MEASURE_MS,
#                    default 200: at least 10 timed runs each, whatever it is)
#   --skip-bench, --skip-ranks
#                    leave out a part (to run the other in a call of its own)
#   --out DIR        scaling.json (replaced), bench.log and the ranks-gpu.sh folder ranks/
#                    (default ./scaling-gpu-out)
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
manifest="" devices="" memory_limit="unset" measure_ms=200 bench=1 ranks=1 out=$PWD/scaling-gpu-out
graphs="kron21=kron21.sym;road=road:side=2048,p=0.6;usa=road-usa;kron25=kron:scale=25,ef=16,sym"
while [[ $# -gt 0 ]]; do
  case $1 in
    --manifest) manifest=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); shift 2 ;;
    --graphs) graphs=$2; shift 2 ;;
    --devices) devices=$2; shift 2 ;;
    --memory-limit) memory_limit=$2; shift 2 ;;
    --measure-ms) measure_ms=$2; shift 2 ;;
    --skip-bench) bench=0; shift ;;
    --skip-ranks) ranks=0; shift ;;
    --out) out=$2; shift 2 ;;
    -h | --help) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -n $manifest ]] || { echo "--manifest is required (see --help)" >&2; exit 2; }
if [[ -z $devices ]]; then
  devices=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
  ((devices >= 1)) || { echo "no GPU found (nvidia-smi -L); give --devices" >&2; exit 2; }
fi
if [[ $memory_limit == unset ]]; then
  memory_limit=""
  [[ ";$graphs" == *";kron25="* ]] && ((devices >= 2)) && memory_limit=kron25:0.75
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
failed=0

if ((bench)); then
  staged=$(awk -F'\t' '$1=="bench" && $2=="scaling" {print $4; exit}' "$manifest")
  [[ -n $staged ]] || { echo "the manifest has no scaling bench" >&2; exit 2; }
  specs=$(tr ';' '\n' <<<"$graphs" | sed 's/^[^=]*=//' | paste -sd';')
  counts=$(seq -s, 1 "$devices")
  start=$SECONDS
  rm -f "$out/scaling.json" # the bench appends: this run's records only
  (cd "$root" && GROUTE_BENCH_JSON=$out/scaling.json GROUTE_BENCH_DEVICES=$counts \
    GROUTE_BENCH_GRAPHS=$specs GROUTE_BENCH_MEASURE_MS=$measure_ms GROUTE_BENCH_WARM_UP_MS=50 \
    "$(dirname "$manifest")/bin/$staged" --bench --noplot) >"$out/bench.log" 2>&1 || failed=1
  records=0
  [[ -f $out/scaling.json ]] && records=$(grep -c . "$out/scaling.json")
  echo "bench: exit $((failed)), $((SECONDS - start)) s, $records records"
fi
if ((ranks)); then
  bash "$root/tools/ranks-gpu.sh" --manifest "$manifest" --ranks "$devices" --graphs "$graphs" \
    ${memory_limit:+--memory-limit "$memory_limit"} --out "$out/ranks" || failed=1
fi
exit $failed
