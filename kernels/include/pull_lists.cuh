// Pull lists of the direction-optimizing BFS: the owned vertices a pull still has to reach,
// which the pulls scan instead of every owned vertex where the frontier is kept as bitmaps
// (the device-driven DoRun::pull_listed of direction_fused_pull.cuh and the host-driven
// bfs_pull_listed of kernels/bfs/bfs_direction.cu run the same warp loop).
//
// Why. A pull over every owned vertex reads each one's level and in-arc offsets, and on a
// Kronecker graph half of them have no in-arcs at all, and after the first pull few of the
// rest are still unreached. So the first pull of a run scans `pullable` (the owned vertices
// with in-arcs, ascending, which the host lists once), and every pull keeps the listed
// vertices it did not reach (and that no push reached since) for the next one.
//
// Layout. The lists are warp-private, with no atomics: warp w of the grid (of W) takes the
// w-th slice of region(W) entries of `pullable` in the first pull, and keeps what it does not
// reach in its own region of as many entries, at lists + W + w * region(W), their number at
// lists[w]; a later pull has warp w scan its region and compact it in place (a kept entry is
// written at or below the position it was read from, after the whole warp read its 32). The
// same warp of a grid of the same size writes and reads a region, so the lists need no
// synchronisation of their own: every pull of a run launches the same grid.
//
// A listed pull finds scattered vertices: it sets their bits in the bitmap of the next level
// one at a time (atomicOr; the caller cleared the owned words). Its counts equal those of a
// pull over every owned vertex: the vertices it skips have no in-arcs or are reached.
#pragma once

#include "direction.cuh"

namespace groute {

struct PullLists {
    // `words` u32: the count of each warp's region, then the regions (see above).
    unsigned int* lists;
    unsigned long long words;
    // The owned vertices with in-arcs, ascending.
    const unsigned int* pullable;
    unsigned long long pullable_count;

    // The entries of a warp's slice of `pullable` and of its region, for `warps` warps.
    __device__ __forceinline__ unsigned int region(unsigned long long warps) const {
        return static_cast<unsigned int>((pullable_count + warps - 1ull) / warps);
    }

    // Whether the lists hold a region for each of `warps` warps.
    __device__ __forceinline__ bool fit(unsigned long long warps) const {
        return lists != nullptr && pullable != nullptr && pullable_count < (1ull << 32) &&
               warps + warps * region(warps) <= words;
    }

    // A pull from `level` over the calling warp's list (`first`: its slice of `pullable`; else
    // the region an earlier pull left), the frontier at `level` in the bitmap `from`: each
    // listed vertex still UNREACHED (a push may have reached it) with an in-neighbour in the
    // frontier gets level + 1 and its bit in `into` (the bitmap of level + 1), and is added
    // to `finds`; the others stay listed, in the warp's region. `examined` += arcs scanned.
    // Every lane of the warp calls it (fit() of the grid's warps).
    __device__ __forceinline__ void pull(unsigned int level, bool first, unsigned int* levels,
                                         const unsigned long long* push_offsets,
                                         const unsigned long long* pull_offsets,
                                         const unsigned int* pull_sources,
                                         const unsigned int* from, unsigned int* into,
                                         FrontierCounts& finds,
                                         unsigned long long& examined) const {
        const unsigned int lane = lane_id();
        const unsigned int warps = gridDim.x * blockDim.x / 32u;
        const unsigned int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32u;
        const unsigned int size = region(warps);
        unsigned int* const list =
            lists + warps + static_cast<unsigned long long>(warp) * size;
        const unsigned long long start = static_cast<unsigned long long>(warp) * size;
        const unsigned long long left = pullable_count > start ? pullable_count - start : 0ull;
        const unsigned int* const entries = first ? pullable + start : list;
        // Warp-uniform: the slice's length, or the region's (this warp's lane 0 stored it).
        const unsigned int count =
            first ? (left < size ? static_cast<unsigned int>(left) : size) : lists[warp];
        const auto in_frontier = [&](unsigned int u) { return frontier_bit(from, u); };
        unsigned int listed = 0u;  // warp-uniform
        for (unsigned int i = 0; i < count; i += 32u) {
            const unsigned int v = i + lane < count ? entries[i + lane] : 0u;
            const bool live = i + lane < count && levels[v] == 0xFFFFFFFFu;
            const bool found =
                pull_finds_parent(in_frontier, pull_offsets, pull_sources, v, live, examined);
            if (found) {
                levels[v] = level + 1u;
                atomicOr(into + v / 32u, 1u << (v % 32u));
                finds.add(push_offsets, pull_offsets, v);
            }
            // Every lane has read its entry: the kept ones move down, to at most i + lane.
            const bool keep = live && !found;
            const unsigned int kept = __ballot_sync(0xFFFFFFFFu, keep);
            if (keep) {
                list[listed + static_cast<unsigned int>(__popc(kept & lanemask_lt()))] = v;
            }
            listed += static_cast<unsigned int>(__popc(kept));
        }
        if (lane == 0u) {
            lists[warp] = listed;
        }
    }
};

}  // namespace groute
