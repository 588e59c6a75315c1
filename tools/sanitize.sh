#!/usr/bin/env bash
# compute-sanitizer (memcheck, racecheck, synccheck) over the GPU test suites and the four
# examples, on a machine with a GPU. Prints one line per (tool, target) with the sanitizer's
# error count and a summary; exits 1 if any run reported an error, failed or timed out.
#
# Usage: tools/sanitize.sh [options]
#   --manifest FILE   binaries staged for a machine without Rust: a TSV of
#                     `kind name package_dir binary` rows (kind: test|example; binary relative
#                     to the manifest's folder, or under its bin/); without it, the release
#                     test and example binaries are built here with cargo
#   --tools LIST      comma-separated sanitizer tools (default memcheck,racecheck,synccheck)
#   --tests REGEX     test binaries to run (default: the suites that exercise CUDA)
#   --test-filter STR run only the tests whose name contains STR (the harness's filter)
#   --examples REGEX  examples to run (default: bfs|sssp|pagerank|cc)
#   --members LIST    device counts for the examples (default 1,2: two members share a GPU)
#   --executions LIST the examples' execution modes (default device-driven,host-driven)
#   --graph SPEC      the examples' input (default road:side=64, generated)
#   --timeout SECS    limit for one sanitized run (default 900)
#   --log-dir DIR     full sanitizer output per run (default: a temporary folder, kept)
#
# Sanitized kernels run 10-100x slower: the examples use a small generated graph, and the
# suites' CUDA tests run as they are (GROUTE_TEST_CUDA=1).
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
manifest=""
tools="memcheck,racecheck,synccheck"
tests_re='^(cuda_backend|cuda_staged|cuda_transfer|peer_group|device_timer|host_events|link_copy_method|stream_fill|fused_barrier|bfs|direction|direction_fused|fused|sssp|components|hook|solver_reuse|fused_driver|fused_beside_host_runs|fused_shared_gpu|pbf_cuda|device_time|api|direction_storage|partitioned_storage)$'
examples_re='^(bfs|sssp|pagerank|cc)$'
members="1,2"
test_filter=()
executions="device-driven,host-driven"
graph="road:side=64"
limit=900
logs=""

usage() { sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; }
while [[ $# -gt 0 ]]; do
    case $1 in
    --manifest) manifest=$2; shift 2 ;;
    --tools) tools=$2; shift 2 ;;
    --tests) tests_re=$2; shift 2 ;;
    --test-filter) test_filter=("$2"); shift 2 ;;
    --examples) examples_re=$2; shift 2 ;;
    --members) members=$2; shift 2 ;;
    --executions) executions=$2; shift 2 ;;
    --graph) graph=$2; shift 2 ;;
    --timeout) limit=$2; shift 2 ;;
    --log-dir) logs=$2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done

if ! command -v compute-sanitizer >/dev/null; then
    echo "compute-sanitizer not found: install the CUDA toolkit or put its bin/ on PATH" >&2
    exit 2
fi
logs=${logs:-$(mktemp -d)}
mkdir -p "$logs"

# The binaries to run, as `kind name package_dir path` rows.
targets=$(mktemp)
if [[ -n $manifest ]]; then
    base=$(cd "$(dirname "$manifest")" && pwd)
    while IFS=$'\t' read -r kind name pkgdir bin; do
        if [[ -x $base/$bin ]]; then path=$base/$bin; else path=$base/bin/$bin; fi
        printf '%s\t%s\t%s\t%s\n' "$kind" "$name" "$root/$pkgdir" "$path"
    done <"$manifest" >"$targets"
else
    (cd "$root" && cargo build --release --tests --examples --message-format=json) |
        python3 -c '
import json, os, sys
for line in sys.stdin:
    try: m = json.loads(line)
    except ValueError: continue
    exe = m.get("executable") if m.get("reason") == "compiler-artifact" else None
    if not exe: continue
    kind = "test" if m["profile"]["test"] else "example" if "example" in m["target"]["kind"] else None
    if kind: print(kind, m["target"]["name"], os.path.dirname(m["manifest_path"]), exe, sep="\t")
' >"$targets" || { echo "cargo build failed" >&2; exit 2; }
fi

# The suites' time limits stretched for sanitized kernels (groute_core::testing::scaled).
export GROUTE_TEST_CUDA=1 NCCL_NVLS_ENABLE=0 GROUTE_TEST_TIME_SCALE=${GROUTE_TEST_TIME_SCALE:-100}
failures=0
runs=0
# sanitize TOOL LABEL DIR COMMAND...: one sanitized run, its line, and its log.
sanitize() {
    local tool=$1 label=$2 dir=$3
    shift 3
    local log="$logs/$tool-${label//[^A-Za-z0-9_.=-]/_}.log" start secs rc errors status
    start=$SECONDS
    (cd "$dir" && timeout "$limit" compute-sanitizer --tool "$tool" --error-exitcode 99 \
        --print-limit 20 "$@") >"$log" 2>&1
    rc=$?
    secs=$((SECONDS - start))
    # memcheck and synccheck close with "ERROR SUMMARY: N errors", racecheck with
    # "RACECHECK SUMMARY: H hazards displayed (N errors, W warnings)".
    errors=$(grep -oE 'ERROR SUMMARY: [0-9]+ error|SUMMARY: [0-9]+ hazards? displayed \([0-9]+ error' "$log" |
        grep -oE '[0-9]+ error' | awk '{s += $1} END {print s + 0}')
    runs=$((runs + 1))
    if [[ $rc -eq 124 ]]; then
        status="TIMEOUT after ${limit} s"
    elif [[ $errors -gt 0 || $rc -eq 99 ]]; then
        status="ERRORS"
    elif [[ $rc -ne 0 ]]; then
        status="FAILED (exit $rc)"
    else
        status="ok"
    fi
    [[ $status == ok ]] || failures=$((failures + 1))
    printf '%-10s %-44s %6d errors %6d s  %s\n' "$tool" "$label" "$errors" "$secs" "$status"
}

IFS=, read -ra tool_list <<<"$tools"
IFS=, read -ra member_list <<<"$members"
IFS=, read -ra execution_list <<<"$executions"
for tool in "${tool_list[@]}"; do
    while IFS=$'\t' read -r kind name dir path; do
        if [[ $kind == test && $name =~ $tests_re ]]; then
            # One test at a time: the suites' CUDA tests share the GPU.
            # Two packages may have a suite of the same name: the label names the package.
            label="test $name"
            [[ $dir != "$root" ]] && label+=" (${dir#"$root"/})"
            sanitize "$tool" "$label" "$dir" "$path" --test-threads 1 "${test_filter[@]}"
        elif [[ $kind == example && $name =~ $examples_re ]]; then
            for m in "${member_list[@]}"; do
                for e in "${execution_list[@]}"; do
                    # CC has host-driven runs only.
                    [[ $name == cc && $e == device-driven ]] && continue
                    sanitize "$tool" "example $name x$m $e" "$dir" "$path" --backend cuda \
                        --gen "$graph" --devices "$m" --execution "$e" --validate
                done
            done
        fi
    done <"$targets"
done
rm -f "$targets"
echo "sanitized runs: $runs, with errors, failures or timeouts: $failures (logs in $logs)"
[[ $runs -gt 0 ]] || exit 2
[[ $failures -eq 0 ]]
