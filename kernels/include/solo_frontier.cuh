// The single-block mode's shared-memory frontier (fused.cuh, SOLO with FUSED_SOLO_SHARED):
// while block 0 runs levels alone, every vertex it appends to the worklist is also written,
// with its adjacency range [offsets[v], offsets[v + 1]), to an entry of a shared-memory array,
// so the next level reads its items there and starts at the targets loads instead of paying
// the worklist load and then the offsets loads (two dependent L2 round trips of the chain
// item -> offsets -> targets -> head value -> atomicMin -> append). The producer loads the
// range beside its atomicMin (HeadRanges of traversal.cuh: issued before the atomics, so
// both are in flight together), only for heads the relaxation may improve.
//
// Protocol. Entry j holds the item at worklist position `next + j`, where `next` is the end
// of the level's batch (the next batch starts there): the appender computes j from the slot
// it reserved, so the entries need no counter of their own, and the entries of the next
// batch [next, next + min(count, capacity)) are exactly the ones written. The worklist keeps
// every item as before (the entries are only a faster copy): leaving SOLO (to the grid, to
// the host in bounded rounds, on an overflow, a hub or an abort) needs no change, and a level
// whose items are not all cached (more than `capacity`, or the first level of a SOLO phase,
// whose items the grid or the host appended) reads the others from the worklist.
//
// Capacity: up to SOLO_FRONTIER_ROUNDS (2) entries per thread, so a SOLO bound of twice the
// block (--fused-solo-max) runs its second round from the frontier too.
//
// Why race-free. One block runs SOLO, so the level's readers and writers are its threads:
// every thread reads its entries of both rounds (and the previous level's decision, which the
// level's appends change) before the level's first __syncthreads_or (solo_expand: round 1's
// entry waits in registers), and every append, entry write and control-word update of the
// level comes after it; the level's closing __syncthreads (fused_solo) orders the appends
// before the next level's reads. Rounds after the second read no entries (capacity <=
// SOLO_FRONTIER_ROUNDS * blockDim.x), so no append rewrites an entry still to be read. A
// vertex appended twice in a level (two improvements) has two entries, both expanded, as two
// worklist items are; the expansion rereads the item's value (FreshValue, at its arcs), so a
// stale copy relaxes with the current value.
//
// Launch with blockDim.x a multiple of 32, at most 1024. Self-contained (NVRTC).
#pragma once

#include "traversal.cuh"

namespace groute {

// Rounds of a SOLO level (blockDim.x items each) whose items the frontier can hold.
enum : unsigned int { SOLO_FRONTIER_ROUNDS = 2 };

// What a worklist that KEEPS_RANGES (SoloWorklist, ClusterWorklist) shares: the
// graph's offsets, from which HeadRanges (traversal.cuh) loads an appended head's range.
struct KeptRanges {
    const unsigned long long* offsets;

    static constexpr bool KEEPS_RANGES = true;

    // The low word of offsets[v]: the arc position itself for graphs of fewer than 2^32 arcs
    // (the frontiers' 32-bit ranges; the host keeps them off for larger graphs).
    __device__ __forceinline__ unsigned int offset(unsigned int v) const {
        const unsigned int* words = reinterpret_cast<const unsigned int*>(offsets);
        return words[2u * static_cast<unsigned long long>(v)];
    }
};

// The entries (shared memory): vertex[j], and its range [begin[j], end[j]) as 32-bit arc
// positions (the host turns the frontier off for graphs of 2^32 arcs or more: the low words
// of the offsets are then not the offsets; 32 bits halve the registers that hold the ranges
// between the producer's loads and its append, which the wide build's 64 have no room for).
struct SoloFrontier {
    unsigned int* vertex;
    unsigned int* begin;
    unsigned int* end;
    // Entries (at most SOLO_FRONTIER_ROUNDS * blockDim.x); 0: the frontier is off, nothing
    // is written or read.
    unsigned int capacity;
};

// The worklist of a SOLO level: appends go to the worklist (its control words in block 0's
// shared copy) and, for positions [next, next + capacity), to the frontier.
struct SoloWorklist : KeptRanges {
    DeviceWorklist wl;
    SoloFrontier frontier;
    unsigned int next;  // worklist position of entry 0: the level's batch end

    __device__ __forceinline__ void put(unsigned int slot, unsigned int item, unsigned int begin,
                                        unsigned int end) const {
        const unsigned int j = slot - next;
        if (j < frontier.capacity) {
            frontier.vertex[j] = item;
            frontier.begin[j] = begin;
            frontier.end[j] = end;
        }
    }

    // The appends outside relax_thread_arcs (keep_or_defer's: received items): the range is
    // loaded after the improvement, only when the entry is cached.
    __device__ __forceinline__ void append_warp(unsigned int item, bool keep) const {
        wl.append_warp(item, keep, [&](unsigned int slot) {
            if (slot - next < frontier.capacity) {
                put(slot, item, offset(item), offset(item + 1u));
            }
        });
    }

    // The thread granularity's appends, with the ranges the caller loaded (HeadRanges).
    template <unsigned int K>
    __device__ __forceinline__ void append_warp_n(const unsigned int (&items)[K],
                                                  const bool (&keep)[K], unsigned int n,
                                                  const unsigned int (&begin)[K],
                                                  const unsigned int (&end)[K]) const {
        wl.append_warp_n(items, keep, n, [&](unsigned int k, unsigned int slot) {
            put(slot, items[k], begin[k], end[k]);
        });
    }
};

// The frontier's ENTRIES entries (static shared memory of the build, SOLO_FRONTIER_ROUNDS per
// thread of its largest block; none when ENTRIES is 0).
template <unsigned int ENTRIES>
struct SoloFrontierArrays {
    unsigned int vertex[ENTRIES];
    unsigned int begin[ENTRIES];
    unsigned int end[ENTRIES];

    __device__ __forceinline__ SoloFrontier frontier(unsigned int capacity) {
        return SoloFrontier{vertex, begin, end, capacity < ENTRIES ? capacity : ENTRIES};
    }
};

template <>
struct SoloFrontierArrays<0> {
    __device__ __forceinline__ SoloFrontier frontier(unsigned int) {
        return SoloFrontier{nullptr, nullptr, nullptr, 0u};
    }
};

// The worklist a SOLO level appends to: with frontier arrays, a SoloWorklist (its ranges
// kept); without (a build that keeps no frontier), the worklist alone.
template <unsigned int ENTRIES>
struct SoloAppends {
    __device__ __forceinline__ static SoloWorklist make(const DeviceWorklist& wl,
                                                        const SoloFrontier& frontier,
                                                        unsigned int next,
                                                        const unsigned long long* offsets) {
        return SoloWorklist{{offsets}, wl, frontier, next};
    }
};

template <>
struct SoloAppends<0> {
    __device__ __forceinline__ static DeviceWorklist make(const DeviceWorklist& wl,
                                                          const SoloFrontier&, unsigned int,
                                                          const unsigned long long*) {
        return wl;
    }
};

// One SOLO level on block 0: expands worklist positions [items.first, + count), the first
// `cached` of them (at most frontier.capacity <= SOLO_FRONTIER_ROUNDS * blockDim.x) from the
// frontier, the others from the worklist, with the nested load balancing of
// traversal_expand, appending through `appends` (a hub has no slot in SOLO: it is counted,
// which ends the mode, and expanded by the block). Every thread of the block calls it.
template <typename Relax, bool WEIGHTED, typename Appends>
__device__ __forceinline__ void solo_expand(const MinSplitOps ops,
                                            const unsigned long long* offsets,
                                            const unsigned int* targets,
                                            const unsigned int* weights,
                                            const DeviceWorklist items, const Appends appends,
                                            const SoloFrontier frontier, unsigned int count,
                                            unsigned int cached, const SendBuffer send,
                                            const LowList low, bool filter_loads) {
    static_assert(SOLO_FRONTIER_ROUNDS == 2u, "round 1's entry is the one kept in registers");
    // Round 1's entry, read before round 0's vote: round 0's appends rewrite the frontier.
    const unsigned int second = blockDim.x + threadIdx.x;
    unsigned int second_vertex = 0;
    unsigned int second_begin = 0;
    unsigned int second_end = 0;
    if (second < cached) {
        second_vertex = frontier.vertex[second];
        second_begin = frontier.begin[second];
        second_end = frontier.end[second];
    }
    // No division on the usual path (a batch of at most one round): it costs a warp about 20
    // instructions, some 5% of a level's.
    const unsigned int rounds =
        count <= blockDim.x ? (count != 0u ? 1u : 0u) : (count + blockDim.x - 1u) / blockDim.x;
    for (unsigned int r = 0; r < rounds; ++r) {
        const unsigned int i = r * blockDim.x + threadIdx.x;
        bool have = i < count;
        unsigned int v = 0;
        unsigned long long begin = 0;
        unsigned long long end = 0;
        if (have) {
            if (i < cached && r == 0u) {
                v = frontier.vertex[i];
                begin = frontier.begin[i];
                end = frontier.end[i];
            } else if (i < cached) {
                v = second_vertex;
                begin = second_begin;
                end = second_end;
            } else {
                v = items.at(items.first + i);
                begin = offsets[v];
                end = offsets[v + 1];
            }
        }
        // Every entry and the previous level's decision are read before any thread appends
        // (see the file comment); the vote also answers claim_block_lists' question.
        const bool block_lists = __syncthreads_or(have && end - begin >= blockDim.x) != 0;
        have = have && end > begin;
        if (have && end - begin >= HUB_MIN_DEGREE && record_hub(items.ctrl, v, end - begin)) {
            have = false;  // never in SOLO (no hub slots), kept for the invariant
        }
        // The item's value is read at its arcs (FreshValue: an unreached item, never queued,
        // relaxes nothing, relax_thread_arcs checks).
        expand_item_lists<Relax, WEIGHTED>(ops, targets, weights, appends, send, low, have, v,
                                           begin, end, FreshValue{ops.values + v},
                                           filter_loads, block_lists);
    }
}

}  // namespace groute
