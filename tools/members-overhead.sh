#!/usr/bin/env bash
# The cost of splitting a run into members that share one GPU, without a link to blame: each
# example on each graph with 1 member, then with 2 (or --members) virtual devices on the same
# GPU, same binary, same call. Prints a table of device-time medians (the solver clock's on the
# host backend), the ratio to one member, what Auto picked and the traffic the run counted
# (`comm` of the examples' JSON).
#
# Usage: tools/members-overhead.sh [options]
#   --manifest FILE   binaries staged for a machine without Rust (a TSV of
#                     `kind name package_dir binary` rows, binaries under the manifest's bin/);
#                     without it, target/release/examples (cargo build --release --examples)
#   --graphs LIST     `;`-separated generator specs (default "kron21.sym;kron:scale=25,ef=16,sym")
#   --examples LIST   comma-separated examples (default pagerank,sssp)
#   --members LIST    comma-separated member counts (default 1,2; the first is the baseline)
#   --repeat N        timed runs per row after one warm-up (default 10; the table gives medians)
#   --validate        also check every result against the sequential reference (slow on
#                     large graphs: a host reference over every arc)
#   --out DIR         the JSON of every row and table.md (default $OUT, else /tmp/members-overhead)
#   --timeout SECS    limit for one row (default 600)
#   --backend NAME    the examples' --backend (default cuda; host runs the table without a GPU)
#   --tabulate DIR    run nothing: print the tables of the JSON reports an earlier run left
#                     in DIR
#
# A second table splits the device-driven PageRank runs' time into their phases (the JSON's
# per-device `fused_phases_ms`, the slowest device's): sweeps and worklist rounds, and the
# milliseconds per sweep of the take, hub tiles and gather together.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
manifest="" graphs="kron21.sym;kron:scale=25,ef=16,sym" examples="pagerank,sssp" members="1,2"
repeat=10 validate="" out=${OUT:-/tmp/members-overhead} timeout_s=600 backend=cuda tabulate=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --manifest) manifest=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); shift 2 ;;
    --graphs) graphs=$2; shift 2 ;;
    --examples) examples=$2; shift 2 ;;
    --members) members=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --validate) validate=--validate; shift ;;
    --out) out=$2; shift 2 ;;
    --timeout) timeout_s=$2; shift 2 ;;
    --backend) backend=$2; shift 2 ;;
    --tabulate) tabulate=$2; shift 2 ;;
    -h | --help) awk 'NR > 1 && !/^#/ {exit} NR > 1 {sub(/^# ?/, ""); print}' "$0"; exit 0 ;;
    *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
if ! [[ $repeat =~ ^[1-9][0-9]*$ ]]; then
  echo "--repeat $repeat: give a positive count of timed runs" >&2
  exit 2
fi
[[ -n $tabulate ]] || mkdir -p "$out"

example_binary() { # name
  if [[ -n $manifest ]]; then
    local b
    b=$(awk -F'\t' -v n="$1" '$1=="example" && $2==n {print $4; exit}' "$manifest")
    [[ -n $b ]] && echo "$(dirname "$manifest")/bin/$b"
  else
    echo "$root/target/release/examples/$1"
  fi
}

export NCCL_NVLS_ENABLE=0
status=0
if [[ -n $tabulate ]]; then
  out=$tabulate
else
  IFS=";" read -ra graph_list <<<"$graphs"
  IFS="," read -ra example_list <<<"$examples"
  IFS="," read -ra member_list <<<"$members"
  for example in "${example_list[@]}"; do
    bin=$(example_binary "$example")
    if [[ ! -x $bin ]]; then
      echo "example $example: no binary (${bin:-not in the manifest}); build or stage it first" >&2
      exit 2
    fi
    for g in "${!graph_list[@]}"; do
      for m in "${member_list[@]}"; do
        json="$out/$example-g$g-m$m.json"
        echo "--- $example --gen ${graph_list[$g]} --devices $m" >&2
        # The examples read their inputs relative to the repository, as under cargo.
        if ! (cd "$root" && timeout "$timeout_s" "$bin" --backend "$backend" --gen "${graph_list[$g]}" \
          --devices "$m" --repeat "$repeat" $validate --json "$json" >"$json.log" 2>&1); then
          echo "$example on ${graph_list[$g]} with $m members failed: see $json.log" >&2
          rm -f "$json"
          status=1
        fi
      done
    done
  done
fi

python3 - "$out" "$members" <<'PY' | tee "$out/table.md"
import glob, json, os, sys
out, members = sys.argv[1], [int(m) for m in sys.argv[2].split(",")]
rows = {}
for path in sorted(glob.glob(os.path.join(out, "*.json"))):
    r = json.load(open(path))
    key = (r["algorithm"], r["graph"]["name"])
    rows.setdefault(key, {})[len(r["devices"])] = r
def median_ms(r):
    """The device-time median, else (host backend) the solver clock's, with which clock."""
    for field, clock in (("device_ms", "device"), ("run_ms", "host")):
        spread = r["times"].get(field)
        if spread and spread.get("median") is not None:
            return spread["median"], clock
    return None, "-"

print("| algorithm | graph | members | ms (median) | clock | vs 1 | engine | rounds | bytes | remote updates | cut arcs | updates per cut arc |")
print("|---|---|---:|---:|---|---:|---|---:|---:|---:|---:|---:|")
for (algorithm, graph), by_members in sorted(rows.items()):
    base = by_members.get(members[0])
    base_ms = median_ms(base)[0] if base else None
    for m in members:
        r = by_members.get(m)
        if r is None:
            print(f"| {algorithm} | `{graph}` | {m} | failed | | | | | | | | |")
            continue
        ms, clock = median_ms(r)
        ratio = f"{ms / base_ms:.2f}x" if ms and base_ms else "-"
        stats = r.get("algorithm_stats") or {}
        comm = r.get("comm") or {}
        cut = comm.get("cut_arcs_traversed")
        upd = comm.get("remote_updates")
        per_cut = f"{upd / cut:.3f}" if cut and upd is not None else "-"
        cells = [algorithm, f"`{graph}`", m, f"{ms:.3f}" if ms else "-", clock, ratio,
                 r["execution"]["engine"], stats.get("rounds", "-"), comm.get("bytes", "-"),
                 upd if upd is not None else "-", cut if cut is not None else "-", per_cut]
        print("| " + " | ".join(str(c) for c in cells) + " |")

# Device-driven PageRank: where the time goes, on the device whose phases add up the most.
phased = []
for (algorithm, graph), by_members in sorted(rows.items()):
    for m in members:
        r = by_members.get(m)
        devices = ((r or {}).get("algorithm_stats") or {}).get("per_device") or []
        timed = [d for d in devices if d.get("fused_phases_ms")]
        if timed:
            d = max(timed, key=lambda d: d["fused_phases_ms"].get("total", 0))
            phased.append((algorithm, graph, m, d))
if phased:
    names = ["sweep_take", "mirror", "hubs", "gather", "worklist", "exchange", "drain", "total"]
    print()
    print("| algorithm | graph | members | sweeps | worklist rounds | "
          + " | ".join(f"{n} ms" for n in names) + " | ms per sweep (take, hubs, gather) |")
    print("|---|---|---:|---:|---:|" + "---:|" * len(names) + "---:|")
    for algorithm, graph, m, d in phased:
        t = d["fused_phases_ms"]
        sweeps = d.get("sweep_rounds", 0)
        per_sweep = (t.get("sweep_take", 0) + t.get("hubs", 0) + t.get("gather", 0)) / sweeps if sweeps else None
        cells = [algorithm, f"`{graph}`", m, sweeps, d.get("worklist_rounds", "-")]
        cells += [f"{t[n]:.1f}" if n in t else "-" for n in names]
        cells.append(f"{per_sweep:.2f}" if per_sweep is not None else "-")
        print("| " + " | ".join(str(c) for c in cells) + " |")
PY
exit $status
