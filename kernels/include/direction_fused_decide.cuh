// The device-driven direction-optimizing BFS's barrier actions
// (kernels/include/direction_fused.cuh): the members of DoRun (direction_fused_run.cuh) that one
// thread runs while every block waits at a grid barrier: the exchanges across the devices (of
// a push's list lengths and of the level counters) and the decide, which accounts the step
// just taken and picks the next.

#pragma once

#include "direction_fused_run.cuh"

namespace groute {

// The exchange after a push on several devices (one thread): every device's number of
// appends (a sparse push's list length) travels with it, summed into DO_RECEIVED by rank.
// False when it failed.
__device__ inline bool DoRun::exchange_lengths(unsigned int appends) const {
    unsigned long long mine[PEER_MAX_DEVICES];
    unsigned long long sums[PEER_MAX_DEVICES];
    for (unsigned int d = 0; d < group.size; ++d) {
        mine[d] = d == group.rank ? appends : 0ull;
    }
    if (!exchange(mine, sums, group.size)) {
        return false;
    }
    for (unsigned int d = 0; d < group.size; ++d) {
        set(DO_RECEIVED + d, sums[d]);
    }
    return true;
}

// An exchange of `count` values (none: a barrier across the devices), posted into every
// peer's postbox (peer_post.cuh); false when it failed (DO_STATUS set). One thread.
__device__ inline bool DoRun::exchange(const unsigned long long* mine, unsigned long long* sums,
                                       unsigned int count) const {
    const unsigned long long index = get(DO_EXCHANGES);
    set(DO_EXCHANGES, index + 1ull);
    const unsigned int exchange = static_cast<unsigned int>(index);
    const unsigned int status =
        peer_post_allreduce_sum(group, postboxes, exchange, mine, sums, count);
    if (status != PEER_OK) {
        set(DO_STATUS, status);
        return false;
    }
    return true;
}

// The action of the barrier after a step has built the next frontier (one thread, every
// block waiting): see the header of kernels/include/direction_fused.cuh. Returns the next step
// as a record; notes what the step of trace row `row` found and stamps its end.
// `own`: DO_COUNTED_HERE (the counters count this device's owned finds: they are summed
// over the devices) or this device's next frontier, the counters already global (a push
// that sent lists: no exchange).
__device__ inline FusedRecord DoRun::decide(const DirectionTrace& trace, unsigned int row,
                                            unsigned int own) const {
    trace.stamp(row, TRACE_SCAN_END);
    trace.count_rows(row + 1u);
    const FusedRecord record = decide_next(own);
    trace.note(row, TRACE_FOUND, get(DO_FRONTIER));
    trace.note(row, TRACE_FOUND_HERE, record.w[DO_R_COUNT]);
    trace.stamp(row, TRACE_DECIDE_END);
    return record;
}

// decide() in the action of the barrier after a pull on several devices, its exchange of
// the counters also the one that makes the pull's stored words visible (the trace's decide
// phase reads 0: its stamp precedes the apply pass's), and after the source's push on several
// devices (the trace's exchange phase holds the count of the appends and the exchange).
__device__ inline FusedRecord DoRun::decide_folded(const DirectionTrace& trace,
                                                   unsigned int row) const {
    trace.count_rows(row + 1u);
    const FusedRecord record = decide_next(DO_COUNTED_HERE);
    trace.stamp(row, TRACE_EXCHANGE_END);
    trace.note(row, TRACE_FOUND, get(DO_FRONTIER));
    trace.note(row, TRACE_FOUND_HERE, record.w[DO_R_COUNT]);
    trace.stamp(row, TRACE_DECIDE_END);
    return record;
}

// decide() without the trace.
__device__ inline FusedRecord DoRun::decide_next(unsigned int own) const {
    unsigned long long mine[DIRECTION_COUNTERS];
    for (unsigned int i = 0; i < DIRECTION_COUNTERS; ++i) {
        mine[i] = get(DO_COUNTERS + i);
        set(DO_COUNTERS + i, 0ull);
    }
    unsigned long long sums[DIRECTION_COUNTERS];
    const FusedRecord stop{{DO_STOP, 0u, 0u, 0u, 0u, 0u}};
    if (several && own == DO_COUNTED_HERE) {
        if (!exchange(mine, sums, DIRECTION_COUNTERS)) {
            return stop;
        }
    } else {
        for (unsigned int i = 0; i < DIRECTION_COUNTERS; ++i) {
            sums[i] = mine[i];
        }
    }
    // Exchanges poll the abort word only while they wait: poll it here too.
    if (get(DO_LEVELS) % DO_ABORT_POLL == DO_ABORT_POLL - 1u &&
        peer_load_abort(group.abort) != 0u) {
        set(DO_STATUS, PEER_ABORTED);
        if (several) {
            peer_store_relaxed(group.mailbox + PEER_FAILED, PEER_ABORTED);  // peers leave
        }
        return stop;
    }
    const unsigned long long frontier = sums[DIRECTION_FRONTIER];
    const unsigned long long in = sums[DIRECTION_IN_ARCS];
    unsigned long long level = 0;
    unsigned long long previous = 0;
    unsigned long long unvisited_in = 0;
    bool pulling = false;
    if (get(DO_STARTED) == 0ull) {
        set(DO_STARTED, 1ull);
        unvisited_in = in_arcs > in ? in_arcs - in : 0ull;
        set(DO_REACHED, frontier);
    } else {
        // Account the step just taken (run_levels and MemberSteps).
        pulling = get(DO_PULLING) != 0ull;
        const unsigned long long reached = get(DO_REACHED);
        previous = get(DO_FRONTIER);
        const unsigned long long items = pulling ? n - reached : previous;
        const unsigned long long read = pulling ? 0ull : get(DO_FRONTIER_OUT);
        set(DO_LEVELS, get(DO_LEVELS) + 1ull);
        set(DO_ITEMS, get(DO_ITEMS) + items);
        set(DO_ARCS, get(DO_ARCS) + read + sums[DIRECTION_EXAMINED]);
        const unsigned long long before = get(DO_UNVISITED_IN);
        unvisited_in = before > in ? before - in : 0ull;
        set(DO_REACHED, reached + frontier);
        level = get(DO_LEVEL) + 1ull;
    }
    set(DO_UNVISITED_IN, unvisited_in);
    set(DO_PREVIOUS, previous);
    set(DO_FRONTIER, frontier);
    set(DO_FRONTIER_OUT, sums[DIRECTION_OUT_ARCS]);
    set(DO_LEVEL, level);
    if (frontier == 0ull) {
        return FusedRecord{{DO_DONE, 0u, 0u, 0u, 0u, 0u}};
    }
    pulling = direction_pulls(alpha, beta, gamma, pulling, frontier, sums[DIRECTION_OUT_ARCS],
                              previous, unvisited_in, n);
    set(DO_PULLING, pulling ? 1ull : 0ull);
    if (pulling) {
        set(DO_PULL_LEVELS, get(DO_PULL_LEVELS) + 1ull);
    }
    // This device's frontier: its owned finds, or `own` where the counters are global.
    const unsigned int count = own != DO_COUNTED_HERE
                                   ? own
                                   : static_cast<unsigned int>(mine[DIRECTION_FRONTIER]);
    if (pulling) {
        // The pull appends the next frontier from the worklist's start.
        store_relaxed(wl.ctrl + CTRL_WL_END, 0u);
    }
    const bool sparse = !pulling && several &&
                        saturating_mul(sums[DIRECTION_OUT_ARCS], SPARSE_DIVISOR) <= n;
    return FusedRecord{{pulling ? DO_PULL : DO_PUSH, static_cast<unsigned int>(level), count,
                        push_hub_min_degree(count), sparse ? 1u : 0u, 0u}};
}

}  // namespace groute
