#!/usr/bin/env bash
# compute-sanitizer (memcheck, racecheck, synccheck) over the GPU test suites and the four
# examples, on a machine with a GPU. Prints one line per run (a suite, or with --per-test a
# test, or an example) with the sanitizer's error count and a summary; exits 1 if any run
# reported an error, failed, timed out or was not started within --budget.
#
# Usage: tools/sanitize.sh [options]
#   --manifest FILE   binaries staged for a machine without Rust: a TSV of
#                     `kind name package_dir binary` rows (kind: test|example; binary relative
#                     to the manifest's folder, or under its bin/); without it, the release
#                     test and example binaries are built here with cargo
#   --tools LIST      comma-separated sanitizer tools (default memcheck,racecheck,synccheck)
#   --tests REGEX     test binaries to run (default: every suite and unit-test binary that
#                     exercises CUDA)
#   --test-filter STR run only the tests whose name contains STR (the harness's filter;
#                     repeat it to run the tests that match any)
#   --per-test        one sanitized run per test of each suite (listed with `--list`), so a
#                     long suite is cut into runs that each fit the timeout
#   --jobs N          sanitized runs at once (default 1); they share the GPU, and the
#                     persistent kernels of one run spin through the time slices of the
#                     others: past 2 or 3 jobs every run slows about in proportion (the
#                     cluster-mode and members suites most: see --alone)
#   --alone REGEX     runs whose label matches (e.g. 'cluster|device_driven|device-driven')
#                     run one after another in a lane of their own, beside the other runs
#                     (which share the remaining jobs): persistent kernels that wait in grid
#                     barriers make no progress while another sanitized process holds the GPU
#   --budget SECS     start no run after SECS seconds (from the first run); the runs left are
#                     listed as not started
#   --resume FILE     an earlier sweep's results.tsv (in its log dir): its passed runs are
#                     skipped and carried into this sweep's results.tsv, so sweeps chain
#   --examples REGEX  examples to run (default: bfs|sssp|pagerank|cc)
#   --members LIST    device counts for the examples (default 1,2: two members share a GPU)
#   --executions LIST the examples' execution modes (default device-driven,host-driven)
#   --graph SPEC      the examples' input (default road:side=64, generated)
#   --timeout SECS    limit for one sanitized run (default 900)
#   --log-dir DIR     full sanitizer output per run (default: a temporary folder, kept)
#   --full-size       racecheck runs the suites on their full inputs too (see below)
#
# Sanitized kernels run 10-100x slower: the examples use a small generated graph, and the
# suites' CUDA tests run with GROUTE_TEST_CUDA=1 and their time limits stretched
# (GROUTE_TEST_TIME_SCALE, default 100). Racecheck, the slowest, runs them on reduced inputs
# (GROUTE_TEST_REDUCED=1, groute_core::testing::reduced): every executor, mode, variant and
# device count up to 3 each long test covers, on fewer and smaller graphs; --full-size turns
# that off. Memcheck and synccheck run the full inputs.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
manifest=""
tools="memcheck,racecheck,synccheck"
tests_re='^(api|bfs|components|cuda_backend|cuda_staged|cuda_transfer|device_time|device_timer|direction|direction_fused|direction_storage|engine|fused|fused_barrier|fused_beside_host_runs|fused_driver|fused_shared_gpu|hook|host_events|kernels_compile|link_copy_method|link_costs|link_release_paths|pagerank|partitioned_storage|pbf_cuda|peer_group|pull_sweep|solver_reuse|sssp|stream_fill|groute_core|groute_worklist|groute_bfs|groute_sssp|groute_pagerank)$'
examples_re='^(bfs|sssp|pagerank|cc)$'
members="1,2"
test_filter=()
per_test=0
jobs=1
alone_re=""
budget=0
resume=/dev/null
executions="device-driven,host-driven"
graph="road:side=64"
limit=900
logs=""
full_size=0

# The header comment, up to its first line that is not a comment.
usage() { awk 'NR > 1 && !/^#/ {exit} NR > 1 {sub(/^# ?/, ""); print}' "$0"; }
while [[ $# -gt 0 ]]; do
    case $1 in
    --manifest) manifest=$2; shift 2 ;;
    --tools) tools=$2; shift 2 ;;
    --tests) tests_re=$2; shift 2 ;;
    --test-filter) test_filter+=("$2"); shift 2 ;;
    --per-test) per_test=1; shift ;;
    --jobs) jobs=$2; shift 2 ;;
    --alone) alone_re=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --resume) resume=$2; shift 2 ;;
    --examples) examples_re=$2; shift 2 ;;
    --members) members=$2; shift 2 ;;
    --executions) executions=$2; shift 2 ;;
    --graph) graph=$2; shift 2 ;;
    --timeout) limit=$2; shift 2 ;;
    --log-dir) logs=$2; shift 2 ;;
    --full-size) full_size=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done

for n in "$jobs" "$budget" "$limit"; do
    [[ $n =~ ^[0-9]+$ ]] || { echo "--jobs, --budget and --timeout take whole numbers, not '$n'" >&2; exit 2; }
done
if [[ $resume != /dev/null && ! -f $resume ]]; then
    echo "--resume: no such results file: $resume" >&2
    exit 2
fi
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
# One row per run: tool, label, errors, seconds, status (tab-separated). The passed runs of a
# resumed sweep start it; they are not run again.
results="$logs/results.tsv"
passed=$(mktemp)
awk -F'\t' '$5 ~ /^ok/' "$resume" >"$passed"
cp "$passed" "$results"
# Stop the runs in flight when the sweep is interrupted.
trap 'kill $(jobs -p) 2>/dev/null; exit 130' INT TERM
# sanitize TOOL LABEL DIR COMMAND...: one sanitized run; its line goes to stdout and to the
# results file, its output to its log.
sanitize() {
    local tool=$1 label=$2 dir=$3
    shift 3
    local log="$logs/$tool-${label//[^A-Za-z0-9_.=-]/_}.log" start secs rc errors status line
    start=$SECONDS
    # Racecheck runs the suites on reduced inputs unless --full-size.
    local reduced=0
    [[ $tool == racecheck && $full_size -eq 0 ]] && reduced=1
    (cd "$dir" && GROUTE_TEST_REDUCED=$reduced timeout "$limit" compute-sanitizer --tool "$tool" \
        --error-exitcode 99 --print-limit 20 "$@") </dev/null >"$log" 2>&1
    rc=$?
    secs=$((SECONDS - start))
    # memcheck and synccheck close with "ERROR SUMMARY: N errors", racecheck with
    # "RACECHECK SUMMARY: H hazards displayed (N errors, W warnings)".
    errors=$(grep -oE 'ERROR SUMMARY: [0-9]+ error|SUMMARY: [0-9]+ hazards? displayed \([0-9]+ error' "$log" |
        grep -oE '[0-9]+ error' | awk '{s += $1} END {print s + 0}')
    if [[ $rc -eq 124 ]]; then
        status="TIMEOUT after ${limit} s"
    elif [[ $errors -gt 0 || $rc -eq 99 ]]; then
        status="ERRORS"
    elif [[ $rc -ne 0 ]] && grep -q 'terminated before first instrumented API call' "$log" &&
        grep -q '^test result: ok' "$log"; then
        # A test that passed without touching CUDA (a host-backend or argument check).
        status="ok (no CUDA)"
    elif [[ $rc -ne 0 ]] && grep -q '^test result: ok' "$log"; then
        status="FAILED after passing (exit $rc at teardown)"
    elif [[ $rc -ne 0 ]]; then
        status="FAILED (exit $rc)"
    else
        status="ok"
    fi
    report "$tool" "$label" "$errors" "$secs" "$status"
}

# report TOOL LABEL ERRORS SECS STATUS: a run's line, on stdout and in the results file.
report() {
    printf '%-10s %-60s %6d errors %6d s  %s\n' "$@"
    printf '%s\t%s\t%s\t%s\t%s\n' "$@" >>"$results"
}

# launch TOOL LABEL ARGS...: queues `sanitize TOOL LABEL ARGS...` (one tab-separated line) in
# the lane of its own (--alone) or the shared one, unless it passed in the resumed sweep.
alone_queue=$(mktemp)
shared_queue=$(mktemp)
launch() {
    awk -F'\t' -v t="$1" -v l="$2" '$1 == t && $2 == l {found = 1} END {exit !found}' "$passed" &&
        return
    local queue=$shared_queue
    [[ -n $alone_re && $2 =~ $alone_re ]] && queue=$alone_queue
    (IFS=$'\t'; printf '%s\n' "$*") >>"$queue"
}

# run_queue FILE JOBS: the runs of FILE in order, at most JOBS at once; none started once the
# budget is spent (from the sweep's start).
run_queue() {
    local queue=$1 lane_jobs=$2 run
    while IFS=$'\t' read -r -a run; do
        if [[ $budget -gt 0 && $((SECONDS - sweep_start)) -ge $budget ]]; then
            report "${run[0]}" "${run[1]}" 0 0 "not started (budget)"
            continue
        fi
        if [[ $lane_jobs -le 1 ]]; then
            sanitize "${run[@]}"
            continue
        fi
        while [[ $(jobs -rp | wc -l) -ge $lane_jobs ]]; do wait -n; done
        sanitize "${run[@]}" &
    done <"$queue"
    wait
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
            if [[ $per_test -eq 1 ]]; then
                # `--list --format terse` prints `name: test` per test.
                if ! (cd "$dir" && "$path" --list --format terse "${test_filter[@]}") \
                    >"$logs/list" 2>&1 </dev/null; then
                    report "$tool" "$label" 0 0 "FAILED (listing the tests)"
                    continue
                fi
                sed -n 's/: test$//p' -i "$logs/list"
                while read -r test; do
                    launch "$tool" "$label $test" "$dir" "$path" --exact "$test" --test-threads 1
                done <"$logs/list"
            else
                launch "$tool" "$label" "$dir" "$path" --test-threads 1 "${test_filter[@]}"
            fi
        elif [[ $kind == example && $name =~ $examples_re ]]; then
            for m in "${member_list[@]}"; do
                for e in "${execution_list[@]}"; do
                    launch "$tool" "example $name x$m $e" "$dir" "$path" --backend cuda \
                        --gen "$graph" --devices "$m" --execution "$e" --validate
                done
            done
        fi
    done <"$targets"
done
# The lone runs in a lane of their own, one job beside the others (the shared lane counts it
# among its running jobs while it lasts); with one job, after them.
sweep_start=$SECONDS
if [[ $jobs -gt 1 && -s $alone_queue ]]; then
    run_queue "$alone_queue" 1 &
    run_queue "$shared_queue" "$jobs"
else
    run_queue "$shared_queue" "$jobs"
    run_queue "$alone_queue" 1
fi
wait
rm -f "$targets" "$passed" "$alone_queue" "$shared_queue"
# The last row of each run counts (a resumed sweep's file may hold a run twice).
read -r runs failures no_cuda < <(awk -F'\t' '{s[$1 FS $2] = $5}
    END {for (k in s) {n++; if (s[k] !~ /^ok/) f++; if (s[k] == "ok (no CUDA)") c++}
         print n + 0, f + 0, c + 0}' "$results")
echo "sanitized runs: $runs ($no_cuda of them made no CUDA call), with errors, failures," \
    "timeouts or not started: $failures (logs in $logs)"
[[ $runs -gt 0 ]] || exit 2
[[ $failures -eq 0 ]]
