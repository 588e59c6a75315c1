// The single-block mode on a thread-block cluster (fused.cuh, SOLO in the `_cluster` build):
// the SOLO_CLUSTER blocks of cluster 0 run levels back to back, separated by the cluster's
// hardware barrier instead of a grid barrier, while the other blocks wait in the grid barrier.
//
// Why. A road network's BFS is a chain of thousands of levels of a few hundred to a few
// thousand items, each level bound by latency. One block (SOLO) is cheap per level but its one
// multiprocessor saturates on levels of more than a few hundred items; the grid pays a grid
// barrier (about 6,000 cycles) per level. A cluster of 4 blocks on 4 multiprocessors pays a
// cluster barrier (hardware, inside one GPC) and spreads a level over 4 multiprocessors.
// Measured with a stand-alone prototype on one H200 (road grid 2048 x 2048, p = 0.6, 4,183
// levels, whole BFS in one block or one cluster, median of 5): one block 28.5 ms (levels of
// more than 1,024 items cost 19,000 cycles), a cluster of 2 / 4 / 8 blocks 21.8 / 19.4 / 20.1
// ms with the filtering load and 19.5 / 16.4 / 16.6 ms without it (the atomicMin goes out
// right after the targets load). So the cluster relaxes without the filter.
//
// Positions. A level's items are the worklist positions [start, end) (relative position
// r = position - start); its appends reserve relative slots on one counter in block 0's
// shared memory (one atomic per warp, through distributed shared memory), are written to the
// worklist at position end + r (every item, as in SOLO: leaving the mode needs no copy), and,
// for the first SOLO_CLUSTER x capacity slots, to the frontier entry r / SOLO_CLUSTER of block
// r % SOLO_CLUSTER, with the vertex's adjacency range (loaded beside the atomicMin). So every
// block of the next level expands the relative positions congruent to its rank, from its own
// shared memory: the level is split evenly whatever warp found its items. Positions past the
// cached ones (a level of more items than the frontiers hold) are read from the worklist.
//
// Race-freedom. The frontier has two buffers per block: level l reads buffer l & 1 and its
// appends write buffer (l + 1) & 1, whose entries the blocks read during level l - 1, before
// its closing cluster barrier. The appends' counters are three words used in turn: level l
// appends to counter l % 3; every thread reads it after level l's closing barrier (the
// barrier's release/acquire orders the appends before the reads); block 0's thread 0 clears
// counter (l + 1) % 3 during level l, after level l - 1's barrier, by which every read of its
// previous use (level l - 2's count, read before arriving at barrier l - 1) is done, and before
// level l's barrier, after which level l + 1 appends to it. The stop and abort words only go
// from 0 to nonzero during a phase, and are read after a barrier by every block, so every block
// takes the same decision at the same level. Block 0's words are cleared at the phase's start,
// before a cluster barrier; no block leaves the phase while another may still read them (they
// are next written at the next phase's start, after a grid barrier every block arrives at after
// its reads).
//
// What the mode leaves to the grid. A level of more than `bound` items, an empty one, a
// worklist overflow (the stop word; the overflow itself is recorded in ctrl as for any append),
// a low-list overflow or the host's abort word (both polled by block 0 every `poll_every`
// levels) end it. It expands every item at thread granularity (THREAD_ARCS arcs per step), so
// the host runs it only on graphs whose longest adjacency list is short (the host's bound:
// CLUSTER_MAX_DEGREE in fused_tuning.rs) and whose arc positions fit 32 bits (the frontier
// keeps 32-bit ranges, as SOLO's).
//
// Launch: the build's kernel has __cluster_dims__(SOLO_CLUSTER, 1, 1) (compute capability 9.0
// or later), a 1D grid, blockDim.x a multiple of 32. Self-contained (NVRTC).
#pragma once

#include "peer_group.cuh"
#include "solo_frontier.cuh"
#include "traversal.cuh"

namespace groute {

// Blocks of the cluster that runs the mode (cluster 0: blocks 0 .. SOLO_CLUSTER - 1).
enum : unsigned int { SOLO_CLUSTER = 4 };

// Block 0's words of the mode (shared memory).
enum ClusterSoloWord : unsigned int {
    CLUSTER_COUNT = 0,  // three appends counters, used in turn by the levels
    CLUSTER_STOP = 3,   // nonzero: an append found the worklist full, or a low list overflowed
    CLUSTER_ABORT = 4,  // nonzero: block 0's poll saw the host's abort word
    CLUSTER_WORDS = 8,
};

// This block's rank in its cluster.
__device__ __forceinline__ unsigned int cluster_rank() {
    unsigned int rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    return rank;
}

// The generic address of `p` (a variable in this block's shared memory) in the shared memory
// of block `rank` of the cluster (distributed shared memory: loads, stores and atomics work on
// it as on any generic address).
template <typename T>
__device__ __forceinline__ T* cluster_map(T* p, unsigned int rank) {
    unsigned long long mapped;
    asm volatile("mapa.u64 %0, %1, %2;"
                 : "=l"(mapped)
                 : "l"(reinterpret_cast<unsigned long long>(p)), "r"(rank));
    return reinterpret_cast<T*>(mapped);
}

// Every thread of every block of the cluster; release/acquire at cluster scope (shared memory
// of the cluster and global memory written before it are visible after it).
__device__ __forceinline__ void cluster_sync() {
    asm volatile(
        "barrier.cluster.arrive.release.aligned;\n\t"
        "barrier.cluster.wait.acquire.aligned;" ::
            : "memory");
}

// The worklist of a level of the mode (a Worklist of relax_thread_arcs that KEEPS_RANGES).
struct ClusterWorklist {
    DeviceWorklist wl;    // first: the level's start (the overflow check's)
    unsigned int next;    // worklist position of relative slot 0: the level's end
    unsigned int* count;  // block 0's counter of the level (distributed shared memory)
    unsigned int* stop;   // block 0's CLUSTER_STOP
    // This block's entries of the buffer the level writes (mapped to each slot's block).
    unsigned int* vertex;
    unsigned int* begin;
    unsigned int* end;
    unsigned int capacity;  // entries per block and buffer
    const unsigned long long* offsets;

    static constexpr bool KEEPS_RANGES = true;

    // The low word of offsets[v] (below 2^32: see the file comment).
    __device__ __forceinline__ unsigned int offset(unsigned int v) const {
        const unsigned int* words = reinterpret_cast<const unsigned int*>(offsets);
        return words[2u * static_cast<unsigned long long>(v)];
    }

    __device__ __forceinline__ void put(unsigned int slot, unsigned int item, unsigned int b,
                                        unsigned int e) const {
        if (!wl.put(next + slot, item)) {
            *stop = 1u;
            return;
        }
        const unsigned int j = slot / SOLO_CLUSTER;
        if (j < capacity) {
            const unsigned int owner = slot % SOLO_CLUSTER;
            cluster_map(vertex, owner)[j] = item;
            cluster_map(begin, owner)[j] = b;
            cluster_map(end, owner)[j] = e;
        }
    }

    // The thread granularity's appends, with the ranges the caller loaded (HeadRanges).
    template <unsigned int K>
    __device__ __forceinline__ void append_warp_n(const unsigned int (&items)[K],
                                                  const bool (&keep)[K], unsigned int n,
                                                  const unsigned int (&b)[K],
                                                  const unsigned int (&e)[K]) const {
        static_assert(K < 8u, "warp_reserve_n<3> counts at most 7 items per lane");
        unsigned int total;
        unsigned int slot = warp_reserve_n<3>(count, n, total);
#pragma unroll
        for (unsigned int k = 0; k < K; ++k) {
            if (keep[k]) {
                put(slot, items[k], b[k], e[k]);
                ++slot;
            }
        }
    }
};

// What a phase of the mode did (block 0 reports it).
struct ClusterSoloResult {
    unsigned int start;  // the batch it left: [start, end)
    unsigned int end;
    unsigned int levels;
    unsigned int aborted;  // it saw the abort word
    unsigned long long processed;
};

// The mode from the batch [start, end) on every thread of the blocks of cluster 0, until a
// level has more than `bound` items or none, or a stop or abort (see the file comment). The
// appends go to the worklist `wl_data`/`wl_mask` (ctrl: the global control words, whose
// CTRL_WL_END the caller sets to the returned end), deferred ones to `low`. `arrays`: the
// frontier entries (ENTRIES, two buffers of ENTRIES / 2).
template <typename Relax, bool WEIGHTED, unsigned int ENTRIES>
__device__ ClusterSoloResult cluster_solo_run(
    const MinSplitOps ops, const unsigned long long* offsets, const unsigned int* targets,
    const unsigned int* weights, unsigned int* wl_data, unsigned int wl_mask,
    unsigned int* ctrl, const SendBuffer send, const LowList low, SoloFrontierArrays<ENTRIES>& arrays,
    unsigned int start, unsigned int end, unsigned int bound, unsigned int poll_every,
    const unsigned int* abort) {
    static_assert(ENTRIES >= 2u, "two buffers of entries");
    __shared__ unsigned int words[CLUSTER_WORDS];
    constexpr unsigned int capacity = ENTRIES / 2u;
    const unsigned int rank = cluster_rank();
    if (rank == 0u && threadIdx.x < CLUSTER_WORDS) {
        words[threadIdx.x] = 0u;
    }
    cluster_sync();  // block 0's words cleared before any append
    unsigned int* const lead = cluster_map(words, 0u);
    const bool lead_thread = rank == 0u && threadIdx.x == 0u;
    ClusterSoloResult r{start, end, 0u, 0u, 0ull};
    unsigned int cached = 0;  // relative positions of the batch in the frontiers
    while (true) {
        const unsigned int count = r.end - r.start;
        const unsigned int level = r.levels;
        const unsigned int read = (level & 1u) * capacity;
        const unsigned int write = capacity - read;
        const DeviceWorklist items{wl_data, wl_mask, r.start, ctrl};
        const ClusterWorklist appends{items,
                                      r.end,
                                      lead + CLUSTER_COUNT + level % 3u,
                                      lead + CLUSTER_STOP,
                                      arrays.vertex + write,
                                      arrays.begin + write,
                                      arrays.end + write,
                                      capacity,
                                      offsets};
        // This block's share: the relative positions congruent to its rank.
        const unsigned int share = count > rank ? (count - 1u - rank) / SOLO_CLUSTER + 1u : 0u;
        for (unsigned int first = 0; first < share; first += blockDim.x) {  // block-uniform
            const unsigned int i = first + threadIdx.x;
            bool have = i < share;
            unsigned int b = 0;
            unsigned int e = 0;
            unsigned int value = 0xFFFFFFFFu;
            if (have) {
                const unsigned int position = i * SOLO_CLUSTER + rank;
                unsigned int v;
                if (position < cached) {
                    v = arrays.vertex[read + i];
                    b = arrays.begin[read + i];
                    e = arrays.end[read + i];
                } else {
                    v = items.at(r.start + position);
                    b = appends.offset(v);
                    e = appends.offset(v + 1u);
                }
                value = item_value(ops, v);
                have = e > b;
            }
            for (unsigned int arc = b; __any_sync(0xFFFFFFFFu, have && arc < e);
                 arc += THREAD_ARCS) {
                relax_thread_arcs<Relax, WEIGHTED>(ops, targets, weights, arc, e, have, value,
                                                   appends, send, low, false);
            }
        }
        if (lead_thread) {
            lead[CLUSTER_COUNT + (level + 1u) % 3u] = 0u;  // the next level's counter
            if ((level + 1u) % poll_every == 0u) {
                if (peer_load_abort(abort) != 0u) {
                    lead[CLUSTER_ABORT] = 1u;
                }
                if (*const_cast<const volatile unsigned int*>(ctrl + CTRL_LOW_OVERFLOW) != 0u) {
                    lead[CLUSTER_STOP] = 1u;  // the action stops the kernel on the overflow
                }
            }
        }
        cluster_sync();  // every append of the level done, in every block
        unsigned int appended = 0;
        unsigned int stopped = 0;
        unsigned int aborted = 0;
        if (lane_id() == 0u) {
            appended = lead[CLUSTER_COUNT + level % 3u];
            stopped = lead[CLUSTER_STOP];
            aborted = lead[CLUSTER_ABORT];
        }
        appended = __shfl_sync(0xFFFFFFFFu, appended, 0);
        stopped = __shfl_sync(0xFFFFFFFFu, stopped, 0);
        aborted = __shfl_sync(0xFFFFFFFFu, aborted, 0);
        r.levels = level + 1u;
        r.processed += count;
        r.start = r.end;
        r.end += appended;
        cached = appended < SOLO_CLUSTER * capacity ? appended : SOLO_CLUSTER * capacity;
        if (aborted != 0u) {
            r.aborted = 1u;
        }
        if (appended == 0u || appended > bound || stopped != 0u || aborted != 0u) {
            return r;
        }
    }
}

}  // namespace groute
