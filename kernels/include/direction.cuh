// The level steps of direction-optimizing BFS as __device__ functions: the host-driven kernels
// of kernels/bfs/bfs_direction.cu (one launch per step) run them; the device-driven kernel of
// kernels/include/direction_fused.cuh (every step of a run in one launch) shares the counters,
// add_degrees and pull_finds_parent. Each one is a grid-stride loop over the whole launch with
// a trip count uniform across the grid (every thread reaches its block-aggregated appends and
// every warp its counter adds together); see bfs/bfs_direction.cu for what each computes.
//
// counters: DIRECTION_COUNTERS u64 (out-arcs and in-arcs of the frontiers scanned, arcs
// examined by pull steps, frontier vertices), added to with one atomic per warp.
#pragma once

#include "worklist.cuh"

namespace groute {

enum : unsigned int {
    DIRECTION_OUT_ARCS = 0,
    DIRECTION_IN_ARCS = 1,
    DIRECTION_EXAMINED = 2,
    DIRECTION_FRONTIER = 3,
    DIRECTION_COUNTERS = 4,
};

// The out- and in-degree of frontier vertex `v`, added to `out` and `in`.
__device__ __forceinline__ void add_degrees(const unsigned long long* push_offsets,
                                            const unsigned long long* pull_offsets,
                                            unsigned int v, unsigned long long& out,
                                            unsigned long long& in) {
    out += push_offsets[v + 1] - push_offsets[v];
    in += pull_offsets[v + 1] - pull_offsets[v];
}

// The bits of the vertices 32w..32w+31 (below n) at level `mark`, on every lane (one ballot;
// all 32 lanes call it).
__device__ __forceinline__ unsigned int level_bits(const unsigned int* levels, unsigned int n,
                                                   unsigned int w, unsigned int mark) {
    const unsigned int v = w * 32u + lane_id();
    return __ballot_sync(0xFFFFFFFFu, v < n && levels[v] == mark);
}

// A thread's share of a frontier's counts (several devices count each level's frontier as
// they find it): its vertices and their out- and in-degrees.
struct FrontierCounts {
    unsigned long long out = 0;
    unsigned long long in = 0;
    unsigned long long vertices = 0;

    __device__ __forceinline__ void add(const unsigned long long* push_offsets,
                                        const unsigned long long* pull_offsets, unsigned int v) {
        add_degrees(push_offsets, pull_offsets, v, out, in);
        ++vertices;
    }

    // Adds the warp's counts to `counters` (all 32 lanes call).
    __device__ __forceinline__ void flush(unsigned long long* counters) const {
        warp_add_u64(counters + DIRECTION_OUT_ARCS, out);
        warp_add_u64(counters + DIRECTION_IN_ARCS, in);
        warp_add_u64(counters + DIRECTION_FRONTIER, vertices);
    }
};

// Whether vertex `v`, where `live` (UNREACHED), has an in-neighbour in the frontier
// (`in_frontier(u)`: its level is the one pulled from), scanning its in-arcs up to the first
// such one (`examined` += arcs scanned). A search is a chain of dependent loads (level, in-arc
// offsets, first in-arc, the frontier's word or level) and most end at the first in-arc: it
// is tested apart from the rest of the row, none of the chain's loads behind a branch that
// only a later one needs.
template <typename InFrontier>
__device__ __forceinline__ bool pull_finds_parent(const InFrontier& in_frontier,
                                                  const unsigned long long* pull_offsets,
                                                  const unsigned int* pull_sources,
                                                  unsigned int v, bool live,
                                                  unsigned long long& examined) {
    const unsigned long long e = live ? pull_offsets[v] : 0ull;
    const unsigned long long last = live ? pull_offsets[v + 1u] : 0ull;
    bool found = e < last && in_frontier(pull_sources[e]);
    examined += e < last ? 1ull : 0ull;
    for (unsigned long long a = e + 1u; !found && a < last; ++a) {
        ++examined;
        found = in_frontier(pull_sources[a]);
    }
    return found;
}

// Whether vertex `u` is in the frontier held as the bitmap `bits` (a bit per vertex).
__device__ __forceinline__ bool frontier_bit(const unsigned int* bits, unsigned int u) {
    return ((bits[u / 32u] >> (u % 32u)) & 1u) != 0u;
}

// Pull step: every vertex of [begin, end) still UNREACHED with an in-neighbour in the frontier
// at `level` (`in_frontier(u)`: its level is `level`, or its bit is set in a bitmap of the
// frontier) gets level + 1; counters[DIRECTION_EXAMINED] += arcs scanned. COUNT false: each
// find is appended to `wl` (one device: the next frontier; every thread of the grid must
// call, the appends synchronise each block). COUNT true (several devices, whose frontiers are
// listed from the levels when a push needs them): the finds are counted instead, their number
// and out- and in-degrees added to the counters (`push_offsets` is read only then). Where
// `bitmap` is not null, every word covering [begin, end) gets the bits of the finds (a warp
// takes the 32 vertices of one word, from begin rounded down to a word, and stores its
// ballot whole): the bitmap of the step's discoveries without a pass over the levels.
template <bool COUNT, typename InFrontier>
__device__ __forceinline__ void direction_pull(unsigned int* levels,
                                               const unsigned long long* push_offsets,
                                               const unsigned long long* pull_offsets,
                                               const unsigned int* pull_sources,
                                               unsigned int begin, unsigned int end,
                                               unsigned int level,
                                               const InFrontier& in_frontier,
                                               const DeviceWorklist& wl,
                                               unsigned long long* counters,
                                               unsigned int* bitmap) {
    const unsigned int stride = gridDim.x * blockDim.x;
    const unsigned int first = begin & ~31u;
    const unsigned int span = end > first ? end - first : 0u;
    const unsigned int rounds = (span + stride - 1u) / stride;
    unsigned long long examined = 0;
    FrontierCounts finds;
    for (unsigned int r = 0; r < rounds; ++r) {
        const unsigned int i = r * stride + blockIdx.x * blockDim.x + threadIdx.x;
        const unsigned int v = first + i;
        const bool live = i < span && v >= begin && levels[v] == 0xFFFFFFFFu;
        const bool found =
            pull_finds_parent(in_frontier, pull_offsets, pull_sources, v, live, examined);
        if (found) {
            levels[v] = level + 1u;
            if (COUNT) {
                finds.add(push_offsets, pull_offsets, v);
            }
        }
        if (!COUNT) {
            wl.append_block(v, found);
        }
        if (bitmap != nullptr) {
            // A warp's 32 vertices are one word's (first and stride are multiples of 32):
            // its ballot is the word, stored whole.
            const unsigned int bits = __ballot_sync(0xFFFFFFFFu, found);
            if (lane_id() == 0u && i < span) {
                bitmap[v / 32u] = bits;
            }
        }
    }
    warp_add_u64(counters + DIRECTION_EXAMINED, examined);
    if (COUNT) {
        finds.flush(counters);
    }
}

}  // namespace groute
