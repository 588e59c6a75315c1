#!/usr/bin/env bash
# Hostile inputs against the release examples: every one must end within 30 s with exit code 1
# or 2 and a message, under a 4 GB address-space limit, with no panic and no signal. Then
# valid but extreme ones (the most virtual devices a context takes): each must succeed, its
# result validated, within 60 s under the same limit.
#
# Build first: cargo build --release --examples (or pass the debug examples that `cargo test`
# builds, as CI does)
# Usage: tools/hostile-inputs.sh [EXAMPLES_DIR]   (default: $CARGO_TARGET_DIR or target,
#        then release/examples)
set -u

bin=${1:-${CARGO_TARGET_DIR:-target}/release/examples}
for b in bfs sssp pagerank cc pbf graphinfo; do
    if [ ! -x "$bin/$b" ]; then
        echo "missing $bin/$b: build the release examples first" >&2
        exit 2
    fi
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Files whose headers ask for more than they hold or than the machine has.
printf '%%%%MatrixMarket matrix coordinate pattern general\n4294967295 4294967295 1\n' \
    >"$work/header-only.mtx"
printf '%%%%MatrixMarket matrix coordinate pattern general\n4294967295 4294967295 1\n1 1\n' \
    >"$work/one-entry.mtx"
printf 'p sp 4294967295 0\n' >"$work/max-vertices.gr"
printf 'p sp 200000000 00\n' >"$work/18-bytes.gr"
printf 'p sp 3 100000000000\na 1 2 1\n' >"$work/arcs-beyond-file.gr"
printf '2 9223372036854775808\n2\n1\n' >"$work/twice-m-wraps.graph"
mkdir -p "$work/a-directory.grc"

failures=0
total=0

# What `check` wants: an error (exit 1 or 2 and a message) or, for `ok`, a validated result;
# and its time limit in seconds.
want=error
limit=30

# check NAME EXPECTED_TEXT COMMAND...: runs COMMAND under the limits and checks the outcome.
check() {
    local name=$1 expect=$2
    shift 2
    total=$((total + 1))
    local out rc start ms secs
    start=$(date +%s%N)
    out=$(bash -c 'ulimit -v 4000000; exec timeout "$0" "$@"' "$limit" "$@" 2>&1)
    rc=$?
    ms=$((($(date +%s%N) - start) / 1000000))
    secs=$(printf '%d.%d' $((ms / 1000)) $((ms % 1000 / 100)))
    local problem=""
    if [ "$want" = ok ]; then
        if [ "$rc" -ne 0 ]; then
            problem="exit code $rc (want 0; 124 is the ${limit} s timeout, above 128 a signal)"
        elif ! printf '%s' "$out" | grep -q "validated *OK"; then
            problem="no validated result"
        fi
    elif [ "$rc" -ne 1 ] && [ "$rc" -ne 2 ]; then
        problem="exit code $rc (want 1 or 2; 124 is the ${limit} s timeout, above 128 a signal)"
    elif printf '%s' "$out" | grep -q "panicked"; then
        problem="panicked"
    elif ! printf '%s' "$out" | grep -qi "error"; then
        problem="no error message"
    elif [ -n "$expect" ] && ! printf '%s' "$out" | grep -q -- "$expect"; then
        problem="message lacks \"$expect\""
    fi
    if [ -n "$problem" ]; then
        failures=$((failures + 1))
        printf 'FAIL %-28s %6s s  %s\n' "$name" "$secs" "$problem"
        printf '%s\n' "$out" | tail -5 | sed 's/^/     | /'
    else
        local said=error
        [ "$want" = ok ] && said=validated
        printf 'ok   %-28s %6s s  rc %d: %s\n' "$name" "$secs" "$rc" \
            "$(printf '%s' "$out" | grep -i "$said" | head -1 | cut -c1-110)"
    fi
}

host=(--backend host)
check mtx-header-only "header declares" "$bin/bfs" "${host[@]}" --graph "$work/header-only.mtx"
check mtx-u32-max-vertices "out of memory" "$bin/bfs" "${host[@]}" --graph "$work/one-entry.mtx"
check dimacs-u32-max-vertices "out of memory" "$bin/bfs" "${host[@]}" --graph "$work/max-vertices.gr"
check dimacs-18-bytes-200M "" "$bin/bfs" "${host[@]}" --graph "$work/18-bytes.gr"
check dimacs-arcs-beyond-file "header declares" "$bin/bfs" "${host[@]}" --graph "$work/arcs-beyond-file.gr"
check metis-twice-m-wraps "header declares" "$bin/bfs" "${host[@]}" --graph "$work/twice-m-wraps.graph"
check directory-as-grc "is a directory" "$bin/bfs" "${host[@]}" --graph "$work/a-directory.grc"
check gen-random-huge-m "MAX_GENERATED_ARCS" "$bin/bfs" "${host[@]}" --gen random:n=1000,m=100000000000
check gen-kron-scale-31 "MAX_GENERATED_ARCS" "$bin/bfs" "${host[@]}" --gen kron:scale=31
check gen-road-side-65535 "out of memory" "$bin/bfs" "${host[@]}" --gen road:side=65535
check pbf-size-1e11 "lower --size" "$bin/pbf" "${host[@]}" --size 100000000000
check wl-capacity-2e9 "wl_capacity" "$bin/bfs" "${host[@]}" --direction push --wl-capacity 2000000000
check wl-capacity-1 "raise wl_capacity" "$bin/bfs" "${host[@]}" --direction push --wl-capacity 1
check devices-1e5 "at most 256 devices" "$bin/bfs" "${host[@]}" --devices 100000
check graphinfo-u32-max-vertices "out of memory" "$bin/graphinfo" --graph "$work/max-vertices.gr"
check sssp-mtx-header-only "header declares" "$bin/sssp" "${host[@]}" --graph "$work/header-only.mtx"
check pagerank-metis-wraps "header declares" "$bin/pagerank" "${host[@]}" --graph "$work/twice-m-wraps.graph"
check cc-dimacs-u32-max "out of memory" "$bin/cc" "${host[@]}" --graph "$work/max-vertices.gr"
check sssp-weights-max-below-min "must not exceed" "$bin/sssp" "${host[@]}" --gen-weights 5..1
check sssp-source-beyond-graph "is not a vertex" "$bin/sssp" "${host[@]}" --source 99999999999
check pagerank-alpha-1 "out of range" "$bin/pagerank" "${host[@]}" --alpha 1
check pagerank-epsilon-nan "out of range" "$bin/pagerank" "${host[@]}" --epsilon nan
check cc-partition-metis "does not apply to cc" "$bin/cc" "${host[@]}" --partition metis
check tuning-variable-garbage "GROUTE_TUNING" env GROUTE_TUNING=garbage "$bin/bfs" "${host[@]}"

# Valid but extreme: the most virtual devices (256: a direction-optimizing BFS that linked
# every pair of them started some 65,000 threads; device-driven, 256 host members that each
# woke every 50 us kept 2 cores busy waking idle ones).
want=ok
limit=60
check bfs-256-devices "" "$bin/bfs" "${host[@]}" --devices 256 --validate
check cc-256-devices "" "$bin/cc" "${host[@]}" --devices 256 --validate
check cc-256-members "" "$bin/cc" "${host[@]}" --devices 256 --execution device-driven --validate
check sssp-64-devices "" "$bin/sssp" "${host[@]}" --devices 64 --validate
check pagerank-64-devices "" "$bin/pagerank" "${host[@]}" --devices 64 --validate

echo "$((total - failures)) of $total hostile and extreme inputs ended as they should"
[ "$failures" -eq 0 ]
