// The device-driven direction-optimizing BFS's pull step (DoRun of direction_fused_run.cuh):
// the search of every owned unreached vertex's in-arcs for a parent in the frontier, against a
// bitmap of the frontier where the run keeps them (DoRun::frontier_bits), and the passes
// around it.
//
// Pull lists (pull_lists.cuh says why and how they are laid out). Where the run keeps
// bitmaps, the pulls scan lists: the first pull of a run scans `pullable`, every later one
// what the earlier ones did not reach. A listed pull appends nothing to the worklist
// (append_found lists the next frontier from the bitmap where a push follows), and on
// several devices send_found sends the bitmap's owned words to the peers.

#pragma once

#include "direction_fused_run.cuh"

namespace groute {

__device__ void DoRun::list_front(unsigned int level) const {
    // A thread per word, its 32 levels read in 8 vector loads in flight together.
    const unsigned int stride = gridDim.x * blockDim.x;
    const unsigned int total = words();
    const unsigned int full = n / 32u;  // words of 32 vertices below n
    unsigned int* const bits = frontier_bits(level);
    for (unsigned int w = blockIdx.x * blockDim.x + threadIdx.x; w < total; w += stride) {
        unsigned int word = 0u;
        if (w < full) {
            // 128 bytes from a 128-byte boundary (the level array's base is aligned).
            const uint4* four = reinterpret_cast<const uint4*>(levels + w * 32u);
            uint4 q[8];
#pragma unroll
            for (unsigned int k = 0; k < 8u; ++k) {
                q[k] = four[k];
            }
#pragma unroll
            for (unsigned int k = 0; k < 8u; ++k) {
                word |= (q[k].x == level ? 1u : 0u) << (4u * k);
                word |= (q[k].y == level ? 1u : 0u) << (4u * k + 1u);
                word |= (q[k].z == level ? 1u : 0u) << (4u * k + 2u);
                word |= (q[k].w == level ? 1u : 0u) << (4u * k + 3u);
            }
        } else {
            for (unsigned int b = 0; b < 32u && w * 32u + b < n; ++b) {
                word |= (levels[w * 32u + b] == level ? 1u : 0u) << b;
            }
        }
        bits[w] = word;
    }
}

__device__ void DoRun::clear_owned_bits(unsigned int level) const {
    unsigned int* const bits = frontier_bits(level);
    const unsigned int last = owned_words_end();
    for (unsigned int w = owned_begin / 32u + blockIdx.x * blockDim.x + threadIdx.x; w < last;
         w += gridDim.x * blockDim.x) {
        bits[w] = 0u;
    }
}

// Every owned UNREACHED vertex with an in-neighbour at `level` (in frontier_bits(level) where
// there are bitmaps, else in the level array) gets level + 1, is appended to the worklist
// (the next frontier: rewound by the decide; the warps count their finds and reserve their
// slots once per block, append_marked) and counted; each warp's ballot of finds (32
// consecutive vertices from a word-aligned start: one bitmap word) is stored into the peers'
// inboxes and into frontier_bits(level + 1).
__device__ void DoRun::pull_frontier(unsigned int level) const {
    const unsigned int stride = gridDim.x * blockDim.x;
    const unsigned int begin = owned_begin & ~31u;
    const unsigned int end = owned_end < n ? owned_end : n;
    const unsigned int span = end > begin ? end - begin : 0u;
    const unsigned int rounds = (span + stride - 1u) / stride;
    const unsigned int lane = lane_id();
    const unsigned int total = words();
    const unsigned int slot = slot_at(lane);
    const unsigned int offset = half(level + 1u);
    const bool sends = several && lane < group.size && lane != group.rank;
    const bool bitmap = bitmaps;
    const unsigned int* const from = bitmap ? frontier_bits(level) : nullptr;
    unsigned int* const into = bitmap ? frontier_bits(level + 1u) : nullptr;
    unsigned long long examined = 0;
    unsigned long long out = 0;
    unsigned long long in = 0;
    unsigned long long found_count = 0;
    bool stored = false;
    for (unsigned int r = 0; r < rounds; ++r) {
        const unsigned int v = begin + r * stride + blockIdx.x * blockDim.x + threadIdx.x;
        const bool live = v >= owned_begin && v < end && levels[v] == 0xFFFFFFFFu;
        const auto in_frontier = [&](unsigned int u) {
            return bitmap ? frontier_bit(from, u) : levels[u] == level;
        };
        const bool found =
            pull_finds_parent(in_frontier, pull_offsets, pull_sources, v, live, examined);
        if (found) {
            levels[v] = level + 1u;
            add_degrees(push_offsets, pull_offsets, v, out, in);
            ++found_count;
        }
        if (several || bitmap) {
            // The warp's 32 vertices from a word boundary: its ballot is one word.
            const unsigned int bits = __ballot_sync(0xFFFFFFFFu, found);
            const unsigned int first = v - lane;
            if (bitmap && lane == 0u && first < end) {
                into[first / 32u] = bits;  // the words holding an owned vertex, each once
            }
            if (several && bits != 0u && sends) {
                inboxes[lane][offset + slot * total + first / 32u] = bits;
                stored = true;
            }
        }
    }
    if (stored) {
        __threadfence_system();
    }
    const unsigned int finds =
        __reduce_add_sync(0xFFFFFFFFu, static_cast<unsigned int>(found_count));
    append_marked(level + 1u, begin / 32u, (end + 31u) / 32u, finds);
    count_found(out, in, found_count, examined);
}

// A pull over this warp's pull list (PullLists::pull; the frontier at `level` is in
// frontier_bits(level), and clear_owned_bits cleared the owned words of the next one).
__device__ void DoRun::pull_listed(unsigned int level, bool first) const {
    FrontierCounts finds;
    unsigned long long examined = 0;
    pull_lists_of_run().pull(level, first, levels, push_offsets, pull_offsets, pull_sources,
                             frontier_bits(level), frontier_bits(level + 1u), finds,
                             examined);
    count_found(finds.out, finds.in, finds.vertices, examined);
}

// After pull_listed on several devices, behind a grid barrier: stores the nonzero owned words
// of frontier_bits(mark) (this device's finds) into every peer's inbox, as the pull over every
// owned vertex stores its ballots.
__device__ void DoRun::send_found(unsigned int mark) const {
    const unsigned int offset = half(mark);
    const unsigned int* const bits = frontier_bits(mark);
    const unsigned int last = owned_words_end();
    bool stored = false;
    for (unsigned int w = owned_begin / 32u + blockIdx.x * blockDim.x + threadIdx.x; w < last;
         w += gridDim.x * blockDim.x) {
        // Set by atomics at L2 (other SMs): never an L1 line.
        const unsigned int word = load_volatile(bits + w) & owned_bits(w);
        if (word != 0u) {
            stored |= store_to_peers(offset, w, word);
        }
    }
    if (stored) {
        __threadfence_system();
    }
}

// Before a push that follows pull_listed (which appended nothing): appends the owned vertices
// of frontier_bits(mark) (the frontier at `mark`, the push's) to the worklist, from its start
// (the decide that chose the pull rewound it): append_owned_bits. Every thread calls it.
__device__ void DoRun::append_found(unsigned int mark) const {
    append_owned_bits(frontier_bits(mark), owned_begin, owned_end < n ? owned_end : n, wl);
}

}  // namespace groute
