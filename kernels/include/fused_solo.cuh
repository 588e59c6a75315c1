// The fused traversal's single-block phases (fused.cuh): SOLO on block 0 (fused_solo) and
// SOLO on cluster 0 (fused_cluster_solo).

#pragma once

#include "fused_solo_peer.cuh"

namespace groute {

// SOLO on block 0: levels back to back from [start, end) until the next batch is larger than
// solo_max, empty, met a hub or overflowed (or the host asked to stop); then publishes the
// batch and its counters in the state block. Every thread of block 0 calls it. ENTRIES: the
// shared frontier's entries (SOLO_FRONTIER_ROUNDS per thread of the build's largest block;
// 0: none).
//
// Block 0 is the only writer of the control words while the other blocks wait, so it works on
// a copy of them in shared memory: appends reserve slots with shared atomics and the end of a
// level reads the counters there (no L2 round trip for either); the copy goes back to ctrl
// before block 0 arrives. The copy has no hub slots (capacity 0), so a hub met in SOLO is
// expanded by the block itself (traversal_expand's full-list fallback) and ends the mode; the
// hub counter is not written back (it stays 0: SOLO starts only after the hubs were run).
// With FUSED_SOLO_SHARED the levels after the first read their items from the shared
// frontier (solo_frontier.cuh). A level costs two __syncthreads: solo_expand's vote (every
// item read, none appended yet) and the one after the appends, after which every thread reads
// the control words and takes the same decision (nothing writes them before the next vote).
//
// Device-driven runs: the block's last warp (the *peer warp*, SoloPeerWarp) also does SOLO's
// share of the protocol, between the level's vote and its closing barrier, so that on levels
// of fewer items than the block has threads (its lanes then have none) the system-scope
// fences and the peer link's round trips overlap the other warps' expansion instead of
// following it. Its lane 0 reads the sends' end before the vote (the level's appends start
// after it) and receives into the level's worklist and frontier.
template <typename Relax, bool WEIGHTED, unsigned int ENTRIES, bool PEERED>
__device__ void fused_solo(const FusedArgs& a, SoloFrontierArrays<ENTRIES>& arrays,
                           unsigned int start, unsigned int end, unsigned int current,
                           unsigned int threshold, unsigned int inbox_taken,
                           unsigned int sends_counted) {
    __shared__ unsigned int abort_seen;
    __shared__ SoloPeerWords peer_words;
    __shared__ __align__(16) unsigned int ctrl[TRAVERSAL_CTRL_WORDS];
    // Device-driven runs: the peer warp (see above).
    SoloPeerWarp<PEERED, false> peer(a, peer_words);
    if (threadIdx.x == 0) {
        unsigned int c[TRAVERSAL_CTRL_WORDS];
        load_words(a.ctrl, c);
#pragma unroll
        for (unsigned int i = 0; i < TRAVERSAL_CTRL_WORDS; ++i) {
            ctrl[i] = c[i];
        }
        ctrl[CTRL_HUB_COUNT] = 0u;
        ctrl[CTRL_HUB_COUNT + 1u] = 0u;
        ctrl[CTRL_HUB_CAP] = 0u;
        peer.start(inbox_taken, sends_counted);
    }
    __syncthreads();
    const SendBuffer send = a.template send_buffer<PEERED>(ctrl);
    const LowList low{a.low[current], a.low_capacity, threshold, ctrl};
    const SoloFrontier frontier = arrays.frontier(a.solo_frontier_capacity());
    const bool filter = a.solo_filter_loads();
    unsigned int levels = 0;
    unsigned int aborted = 0;
    unsigned int cached = 0;  // items of [start, end) in the frontier (none at the first level)
    unsigned long long processed = 0;
    while (true) {
        const unsigned int count = end - start;
        const DeviceWorklist items{a.wl_data, a.wl_mask, start, ctrl};
        const auto appends = SoloAppends<ENTRIES>::make(items, frontier, end, a.offsets);
        const SoloPeerReads reads = peer.before_level(send);
        solo_expand<Relax, WEIGHTED>(a.ops, a.offsets, a.targets, a.weights, items, appends,
                                     frontier, count, cached, send, low, filter);
        ++levels;
        peer.after_expand(levels, appends, send, low, reads);
        processed += count;
        __syncthreads();  // every append of the level done (this block is the only writer)
        const unsigned int e = ctrl[CTRL_WL_END];
        bool stop = ctrl[CTRL_HUB_COUNT] != 0u || ctrl[CTRL_WL_OVERFLOW] != 0u ||
                    ctrl[CTRL_SEND_OVERFLOW] != 0u || ctrl[CTRL_LOW_OVERFLOW] != 0u ||
                    e == end || e - end > a.solo_max ||
                    (a.bounded() && (levels >= a.level_budget ||
                                     ctrl[CTRL_SEND_END] - a.send_base >= a.send_yield));
        if (!stop && levels % FUSED_ABORT_POLL == 0u) {
            // Block-uniform (levels is): one more barrier every FUSED_ABORT_POLL levels.
            if (threadIdx.x == 0) {
                abort_seen = load_abort(a.abort);
            }
            __syncthreads();
            if (abort_seen != 0u) {
                aborted = 1u;
                stop = true;
            }
        }
        cached = e - end < frontier.capacity ? e - end : frontier.capacity;
        start = end;
        end = e;
        if (stop) {
            break;
        }
    }
    if (threadIdx.x == 0) {
        // The control words back (all but the hub words: see above).
        const unsigned int words[] = {CTRL_WL_END,   CTRL_SEND_END,     CTRL_WL_OVERFLOW,
                                      CTRL_SEND_OVERFLOW, CTRL_LOW_END, CTRL_LOW_OVERFLOW,
                                      CTRL_LOW_MIN};
#pragma unroll
        for (const unsigned int w : words) {
            store_relaxed(a.ctrl + w, ctrl[w]);
        }
        // Block 0's report to the next action (words only block 0 writes).
        store4_relaxed(a.fused + FUSED_SOLO_START, make_uint4(start, end, levels, aborted));
        store4_relaxed(a.fused + FUSED_SOLO_PROCESSED,
                       make_uint4(static_cast<unsigned int>(processed),
                                  static_cast<unsigned int>(processed >> 32), 0u, 0u));
        if (PEERED) {
            store_relaxed(a.fused + FUSED_SOLO_PUBLISHED, peer_words.counted);
            store_relaxed(a.fused + FUSED_SOLO_TAKEN, peer_words.taken);
        }
    }
}

// SOLO on the blocks of cluster 0 (the `_cluster` builds, cluster_solo.cuh): fused_solo's
// report plus the items it never listed, the control words' worklist end set (the mode lists
// only the batch it leaves). Every thread of blocks 0 .. SOLO_CLUSTER - 1 calls it. Device-driven
// runs (PEERED, the `_peer_cluster` build): the last warp of block 0 is the peer warp
// (SoloPeerWarp, LAGGED), and block 0's thread 0 reports what it counted and took.
template <typename Relax, bool WEIGHTED, unsigned int ENTRIES, bool PEERED>
__device__ void fused_cluster_solo(const FusedArgs& a, SoloFrontierArrays<ENTRIES>& arrays,
                                   unsigned int start, unsigned int end, unsigned int current,
                                   unsigned int threshold, unsigned int inbox_taken,
                                   unsigned int sends_counted) {
    __shared__ SoloPeerWords peer_words;
    SoloPeerWarp<PEERED, true> peer(a, peer_words);
#ifdef GROUTE_TRACE_CLUSTER
    // A diagnostic build (-DGROUTE_TRACE_CLUSTER): when the phase started (block 0's thread 0;
    // in shared memory, so that no register holds it through the levels). Off by default: its
    // few instructions alone move the one-device SSSP build's code enough to slow it on a
    // road grid.
    __shared__ unsigned long long started_ns;
    if (threadIdx.x == 0u) {
        started_ns = peer_clock_ns();
    }
#endif
    if (SoloPeerWarp<PEERED, true>::lane()) {
        // By the thread that reads and writes the words through the levels (the peer warp's
        // lane 0), so no other thread's access orders against them but the report's, after
        // the block barrier below. (Written by thread 0 and read by the peer warp between
        // its arrival at level 0's barrier and its wait, compute-sanitizer's racecheck
        // reported the pair as a hazard, though the mode's first cluster barrier orders it.)
        peer.start(inbox_taken, sends_counted);
    }
    // Members map the appends' addresses at use (ClusterWorklist says why).
    const ClusterSoloResult r = cluster_solo_run<Relax, WEIGHTED, ENTRIES, PEERED>(
        a.ops, a.offsets, a.targets, a.weights, a.wl_data, a.wl_mask, a.ctrl,
        a.template send_buffer<PEERED>(a.ctrl), a.low_list(current, threshold), arrays, start,
        end, a.solo_max, FUSED_ABORT_POLL, a.abort, peer);
    if (PEERED) {
        // The peer warp's words, read below by thread 0: its last ones were written after
        // its arrival at the last level's cluster barrier (after_arrive); the mode's exit
        // barrier orders them, and this block barrier says so within the block.
        __syncthreads();
    }
    if (blockIdx.x == 0u && threadIdx.x == 0u) {
#ifdef GROUTE_TRACE_CLUSTER
        // A reduction, which nothing waits for (`+=` would put a load's round trip before
        // the report and this block's arrival, once a phase).
        atomicAdd(a.fused + FUSED_SOLO_US,
                  static_cast<unsigned int>((peer_clock_ns() - started_ns) / 1000ull));
#endif
#ifdef GROUTE_TRACE_LEVEL
        if (r.trace != 0u && a.fused[FUSED_TRACE_LEVEL] == 0u) {
            a.fused[FUSED_TRACE_LEVEL] = r.trace;
        }
#endif
        store_relaxed(a.ctrl + CTRL_WL_END, r.end);
        store4_relaxed(a.fused + FUSED_SOLO_START, make_uint4(r.start, r.end, r.levels, r.aborted));
        // Its intermediate levels' items were never listed (FUSED_SOLO_UNLISTED): the host
        // counts them as produced.
        store4_relaxed(a.fused + FUSED_SOLO_PROCESSED,
                       make_uint4(static_cast<unsigned int>(r.processed),
                                  static_cast<unsigned int>(r.processed >> 32), r.unlisted, 0u));
        if (PEERED) {
            store_relaxed(a.fused + FUSED_SOLO_PUBLISHED, peer_words.counted);
            store_relaxed(a.fused + FUSED_SOLO_TAKEN, peer_words.taken);
        }
    }
}

}  // namespace groute
