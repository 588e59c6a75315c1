// The device-driven direction-optimizing BFS's pull step (DoRun of direction_fused_run.cuh):
// the search of every owned unreached vertex's in-arcs for a parent in the frontier, against a
// bitmap of the frontier where the run keeps them (DoRun::frontier_bits), and the passes
// around it.
//
// Pull lists. A pull over every owned vertex reads each one's level and in-arc offsets, and on
// a Kronecker graph half of them have no in-arcs at all, and after the first pull few of the
// rest are still unreached. Where the run keeps bitmaps, the pulls therefore scan lists: the
// first pull of a run scans `pullable` (the owned vertices with in-arcs, ascending, which the
// host lists once), and every pull keeps the listed vertices it did not reach (and that no
// push reached since) for the next one. The lists are warp-private, with no atomics: warp w
// of the grid (of W) takes the w-th slice of list_region() entries of `pullable` in the first
// pull, and keeps what it does not reach in its own region of as many entries, at
// pull_lists + W + w * list_region(), their number at pull_lists[w]; a later pull has warp w
// scan its region and compact it in place (a kept entry is written at or below the position
// it was read from, after the whole warp read its 32). The same warp of the same launch
// writes and reads a region, so the lists need no synchronisation of their own. A listed
// pull finds scattered vertices: it sets their bits in the bitmap of the next level (its
// owned words cleared first) one at a time, appends nothing to the worklist (append_found
// lists the next frontier from the bitmap where a push follows), and on several devices
// send_found sends the bitmap's owned words to the peers. Its counts equal those of a pull
// over every owned vertex: the vertices it skips have no in-arcs or are reached.

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

// The entries of a warp's slice of `pullable` and of its region of the pull lists.
__device__ unsigned int DoRun::list_region() const {
    const unsigned long long warps = gridDim.x * blockDim.x / 32u;
    return static_cast<unsigned int>((pullable_count + warps - 1ull) / warps);
}

// Whether the run keeps pull lists and they hold a region for every warp of this grid.
__device__ bool DoRun::lists_fit() const {
    const unsigned long long warps = gridDim.x * blockDim.x / 32u;
    return pull_lists != nullptr && pullable != nullptr && pullable_count < (1ull << 32) &&
           warps + warps * list_region() <= pull_list_words;
}

// This warp's region of the pull lists (lists_fit()).
__device__ unsigned int* DoRun::warp_list() const {
    const unsigned int warps = gridDim.x * blockDim.x / 32u;
    const unsigned int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32u;
    return pull_lists + warps + static_cast<unsigned long long>(warp) * list_region();
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
        bool found = false;
        if (v >= owned_begin && v < end && levels[v] == 0xFFFFFFFFu) {
            const auto in_frontier = [&](unsigned int u) {
                return bitmap ? ((from[u / 32u] >> (u % 32u)) & 1u) != 0u : levels[u] == level;
            };
            found = pull_finds_parent(in_frontier, pull_offsets, pull_sources, v, examined);
            if (found) {
                levels[v] = level + 1u;
                add_degrees(push_offsets, pull_offsets, v, out, in);
                ++found_count;
            }
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

// A pull over this warp's pull list (`first`: its slice of `pullable`; else the region an
// earlier pull left; the frontier at `level` is in frontier_bits(level)): each listed vertex
// still UNREACHED (a push may have reached it) with an in-neighbour in the frontier gets
// level + 1 and its bit in frontier_bits(level + 1) (whose owned words clear_owned_bits
// cleared), and is counted; the others stay listed, in the warp's region.
__device__ void DoRun::pull_listed(unsigned int level, bool first) const {
    const unsigned int lane = lane_id();
    const unsigned int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32u;
    const unsigned int region = list_region();
    unsigned int* const list = warp_list();
    const unsigned long long start = static_cast<unsigned long long>(warp) * region;
    const unsigned long long left = pullable_count > start ? pullable_count - start : 0ull;
    const unsigned int* const entries = first ? pullable + start : list;
    // Warp-uniform: the slice's length, or the region's (this warp's lane 0 stored it).
    const unsigned int count = first ? (left < region ? static_cast<unsigned int>(left) : region)
                                     : pull_lists[warp];
    const unsigned int* const from = frontier_bits(level);
    unsigned int* const into = frontier_bits(level + 1u);
    const auto in_frontier = [&](unsigned int u) {
        return ((from[u / 32u] >> (u % 32u)) & 1u) != 0u;
    };
    unsigned long long examined = 0;
    unsigned long long out = 0;
    unsigned long long in = 0;
    unsigned long long found_count = 0;
    unsigned int listed = 0u;  // warp-uniform
    for (unsigned int i = 0; i < count; i += 32u) {
        unsigned int v = 0u;
        bool keep = false;
        if (i + lane < count) {
            v = entries[i + lane];
            if (levels[v] == 0xFFFFFFFFu) {
                if (pull_finds_parent(in_frontier, pull_offsets, pull_sources, v, examined)) {
                    levels[v] = level + 1u;
                    atomicOr(into + v / 32u, 1u << (v % 32u));
                    add_degrees(push_offsets, pull_offsets, v, out, in);
                    ++found_count;
                } else {
                    keep = true;
                }
            }
        }
        // Every lane has read its entry: the kept ones move down, to at most i + lane.
        const unsigned int kept = __ballot_sync(0xFFFFFFFFu, keep);
        if (keep) {
            list[listed + static_cast<unsigned int>(__popc(kept & lanemask_lt()))] = v;
        }
        listed += static_cast<unsigned int>(__popc(kept));
    }
    if (lane == 0u) {
        pull_lists[warp] = listed;
    }
    count_found(out, in, found_count, examined);
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
// (the decide that chose the pull rewound it). Each warp counts the bits of its words (a lane
// per word), the block reserves its warps' slots with one atomic, and each warp then writes
// its vertices (a pass with an atomic per warp would queue thousands on the one end word).
// Every thread calls it.
__device__ void DoRun::append_found(unsigned int mark) const {
    const unsigned int warps = gridDim.x * blockDim.x / 32u;
    const unsigned int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32u;
    const unsigned int lane = lane_id();
    const unsigned int* const bits = frontier_bits(mark);
    const unsigned int first = owned_begin / 32u;
    const unsigned int last = owned_words_end();
    const auto owned_word = [&](unsigned int w) {
        // Set by atomics at L2 or stored by other SMs: never an L1 line.
        return w < last ? load_volatile(bits + w) & owned_bits(w) : 0u;
    };
    unsigned int count = 0u;
    // Warp-uniform trip counts: `base` is the warp's first word.
    for (unsigned int base = first + warp * 32u; base < last; base += warps * 32u) {
        count += static_cast<unsigned int>(__popc(owned_word(base + lane)));
    }
    count = __reduce_add_sync(0xFFFFFFFFu, count);
    unsigned int slot = block_reserve_warps(wl.ctrl + CTRL_WL_END, count);
    if (count == 0u) {
        return;  // warp-uniform
    }
    for (unsigned int base = first + warp * 32u; base < last; base += warps * 32u) {
        const unsigned int w = base + lane;
        const unsigned int word = owned_word(w);
        unsigned int total;
        // At most 32 vertices per lane: 6 bits.
        unsigned int at = slot + warp_prefix_n<6>(static_cast<unsigned int>(__popc(word)), total);
        for (unsigned int rest = word; rest != 0u; rest &= rest - 1u) {
            wl.put(at, w * 32u + static_cast<unsigned int>(__ffs(rest)) - 1u);
            ++at;
        }
        slot += total;
    }
}

}  // namespace groute
