#!/usr/bin/env bash
# The staged test binaries on a GPU machine within a time budget: several binaries at once,
# in a chosen order, each with GROUTE_TEST_CUDA=1, its log kept; one summary line per binary
# (exit status, seconds, the harness's `test result` lines) in summary.tsv, and every log
# packed into logs.tar.xz beside it, so that a device call that returns only a few files
# brings everything back. Exits 1 if a binary failed, timed out or was not started.
#
# Usage: tools/gpu-tests.sh --manifest FILE [options]
#   --manifest FILE  binaries staged for a machine without Rust (gpu-stage's manifest.tsv:
#                    `kind name package_dir binary` rows, the binary under the manifest's bin/)
#   --order LIST     `package_dir:name` keys, comma- or space-separated, run first and in this
#                    order (e.g. `crates/groute-bfs:fused,.:api`); the manifest's other test
#                    binaries follow unless --only
#   --only           run only the binaries of --order
#   --jobs N         binaries at once (default 2); they share the GPU
#   --threads N      each binary's --test-threads (default 4)
#   --budget SECS    start no binary after SECS seconds, and stop those still running then
#                    (default 540: a device call's 600 s less the unpacking and packing)
#   --out DIR        summary.tsv, the logs and logs.tar.xz (default $OUT, else ./gpu-tests-out)
#   -- ARGS...       passed to every binary (a name filter, --skip NAME, ...)
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
manifest="" order="" only=0 jobs=2 threads=4 budget=540 out=${OUT:-$PWD/gpu-tests-out}
extra=()
while [[ $# -gt 0 ]]; do
    case $1 in
    --manifest) manifest=$2; shift 2 ;;
    --order) order=$2; shift 2 ;;
    --only) only=1; shift ;;
    --jobs) jobs=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -h | --help) awk 'NR > 1 && !/^#/ {exit} NR > 1 {sub(/^# ?/, ""); print}' "$0"; exit 0 ;;
    *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
for n in "$jobs" "$threads" "$budget"; do
    [[ $n =~ ^[1-9][0-9]*$ ]] || { echo "--jobs, --threads and --budget take positive whole numbers, not '$n'" >&2; exit 2; }
done
if [[ -z $manifest || ! -f $manifest ]]; then
    echo "--manifest: give the staged binaries' manifest.tsv (../shared/tools/gpu-stage writes it)" >&2
    exit 2
fi
bin_dir=$(cd "$(dirname "$manifest")" && pwd)/bin
mkdir -p "$out/logs"
summary=$out/summary.tsv
: >"$summary"

# The keys to run, in order: --order's, then (unless --only) the manifest's other tests.
keys=()
for key in ${order//,/ }; do
    if ! awk -F'\t' -v k="$key" '$1 == "test" && $3 ":" $2 == k {found = 1} END {exit !found}' "$manifest"; then
        echo "--order: no test binary $key in $manifest" >&2
        exit 2
    fi
    keys+=("$key")
done
if [[ $only -eq 0 ]]; then
    while IFS=$'\t' read -r kind name pkgdir _; do
        key="$pkgdir:$name"
        [[ $kind == test && " ${keys[*]} " != *" $key "* ]] && keys+=("$key")
    done <"$manifest"
fi
[[ ${#keys[@]} -gt 0 ]] || { echo "no test binary to run" >&2; exit 2; }

export GROUTE_TEST_CUDA=${GROUTE_TEST_CUDA:-1} NCCL_NVLS_ENABLE=0 RUST_BACKTRACE=1
nvidia-smi -L >"$out/gpus.txt" 2>&1
start=$SECONDS

# run_one KEY: one binary, stopped at the budget's end; its line goes to summary.tsv.
run_one() {
    local key=$1 pkgdir=${1%%:*} name=${1#*:} staged log left t0 rc status
    staged=$(awk -F'\t' -v k="$key" '$1 == "test" && $3 ":" $2 == k {print $4; exit}' "$manifest")
    log="$out/logs/${pkgdir//[^A-Za-z0-9_-]/_}-$name.log"
    left=$((budget - (SECONDS - start)))
    if [[ $left -lt 5 ]]; then
        printf '%s\t-\t0\tnot started (budget)\t\n' "$key" >>"$summary"
        return
    fi
    t0=$SECONDS
    (cd "$root/$pkgdir" && timeout "$left" "$bin_dir/$staged" --test-threads "$threads" "${extra[@]}") \
        </dev/null >"$log" 2>&1
    rc=$?
    case $rc in
    0) status=ok ;;
    124) status="stopped at the budget" ;;
    *) status=FAILED ;;
    esac
    printf '%s\t%s\t%s\t%s\t%s\n' "$key" "$rc" $((SECONDS - t0)) "$status" \
        "$(grep -h '^test result' "$log" | tr '\n' ' ')" >>"$summary"
}

for key in "${keys[@]}"; do
    while [[ $(jobs -rp | wc -l) -ge $jobs ]]; do wait -n; done
    run_one "$key" &
done
wait
tar cJf "$out/logs.tar.xz" -C "$out" logs gpus.txt
column -t -s $'\t' "$summary" 2>/dev/null || cat "$summary"
failed=$(awk -F'\t' '$4 != "ok"' "$summary" | wc -l)
echo "test binaries: ${#keys[@]}, failed, stopped or not started: $failed (logs in $out/logs.tar.xz)"
[[ $failed -eq 0 ]]
