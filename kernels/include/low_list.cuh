// Soft priority's low list on the device (LowList) and its block-staged form
// (StagedLowList), which the expand, hub and re-examine phases defer through. Part of the
// generic min-label traversal (traversal.cuh).
#pragma once

#include "abi_traversal.h"
#include "split.cuh"
#include "warp_append.cuh"

namespace groute {

// What a reservation returns when it refuses the warp's items (append_kept_warp).
constexpr unsigned int REFUSED = 0xFFFFFFFFu;

// Appends the items (items[k], prio[k]) that keep[k] marks (K < 8 per lane) with one
// reservation for the warp: reserve(total), on lane 0, returns the first of `total` slots (or
// REFUSED: nothing is stored, and the call returns false); note_least(least), on lane 0,
// records the warp's least kept priority; store(slot, item) stores each item. Returns true
// (also when no lane keeps any). Call with all 32 lanes.
template <unsigned int K, typename Reserve, typename NoteLeast, typename Store>
__device__ __forceinline__ bool append_kept_warp(const unsigned int (&items)[K],
                                                 const unsigned int (&prio)[K],
                                                 const bool (&keep)[K], Reserve reserve,
                                                 NoteLeast note_least, Store store) {
    static_assert(K < 8u, "warp_reserve_n<3> counts at most 7 items per lane");
    unsigned int n = 0;
    unsigned int least = 0xFFFFFFFFu;
#pragma unroll
    for (unsigned int k = 0; k < K; ++k) {
        n += keep[k] ? 1u : 0u;
        least = keep[k] && prio[k] < least ? prio[k] : least;
    }
    unsigned int total;
    unsigned int base;
    unsigned int slot = warp_reserve_n_by<3>(n, total, base, reserve);
    if (total == 0) {
        return true;
    }
    if (base == REFUSED) {
        return false;
    }
    least = __reduce_min_sync(0xFFFFFFFFu, least);
    if (lane_id() == 0) {
        note_least(least);
    }
#pragma unroll
    for (unsigned int k = 0; k < K; ++k) {
        if (keep[k]) {
            VertexValue p;
            p.vertex = items[k];
            p.value = prio[k];
            store(slot, p);
            ++slot;
        }
    }
    return true;
}

// Soft priority: a device's low-priority list of (vertex, value when deferred). A kept item
// whose priority (its value) is not below `threshold` is deferred here instead of entering
// the worklist (groute_worklist::defers). `data == nullptr` (a zero-initialised LowList, the
// default argument of the kernels' helpers): soft priority off, nothing deferred.
// Overflow: like the worklist's, the needed size goes to ctrl[CTRL_LOW_OVERFLOW] and the host
// fails the run naming wl_capacity (--wl-capacity).
struct LowList {
    VertexValue* data;
    unsigned int capacity;
    unsigned int threshold;
    unsigned int* ctrl;

    // Whether anything can be deferred: a list, and a threshold.
    __device__ __forceinline__ bool active() const {
        return data != nullptr && threshold != 0xFFFFFFFFu;
    }

    __device__ __forceinline__ bool defers(unsigned int prio) const {
        return active() && prio >= threshold;
    }

    // Appends `p` where `keep`, one atomicAdd and one atomicMin per warp (call from
    // warp-uniform control flow).
    __device__ __forceinline__ void append_warp(const VertexValue& p, bool keep) const {
        const unsigned int active = __activemask();
        if (__ballot_sync(active, keep) == 0) {
            return;
        }
        const unsigned int least = __reduce_min_sync(active, keep ? p.value : 0xFFFFFFFFu);
        unsigned int total;
        const unsigned int slot = warp_reserve(ctrl + CTRL_LOW_END, keep, total);
        if (!keep) {
            return;
        }
        if (slot >= capacity) {
            atomicMax(ctrl + CTRL_LOW_OVERFLOW, slot + 1u);
            return;
        }
        data[slot] = p;
        if (p.value == least) {
            atomicMin(ctrl + CTRL_LOW_MIN, least);
        }
    }

    // Appends (items[k], prio[k]) for every k where keep[k], K < 8 per lane: one atomicAdd and
    // one atomicMin per warp for all of them. Call with all 32 lanes.
    template <unsigned int K>
    __device__ __forceinline__ void append_warp_n(const unsigned int (&items)[K],
                                                  const unsigned int (&prio)[K],
                                                  const bool (&keep)[K]) const {
        append_kept_warp(
            items, prio, keep, [&](unsigned int t) { return atomicAdd(ctrl + CTRL_LOW_END, t); },
            [&](unsigned int least) { atomicMin(ctrl + CTRL_LOW_MIN, least); },
            [&](unsigned int at, const VertexValue& p) {
                if (at < capacity) {
                    data[at] = p;
                } else {
                    atomicMax(ctrl + CTRL_LOW_OVERFLOW, at + 1u);
                }
            });
    }
};

// A block's low list: its deferred items gather in shared memory (one shared compare-and-swap
// and atomicMin per warp and step) and reach the global list once per tile of hubs or round
// of the block's items, with one global atomicAdd and one atomicMin for the block
// (flush_reserve, flush_copy; flush does both with their barriers).
//
// Why: the global list's counter and its least priority are one address each, which every
// warp's append hits. On a power-law graph the early rounds defer about one head in 30, so
// nearly every warp step appends, and those atomics on one L2 slice set the phase's pace.
// Staged, the slice sees two atomics per flush and block. The arrays are static shared memory
// (`of`): one stage per block and kernel, which every phase that defers shares.
//
// A warp whose items do not fit in the stage's STAGE_ITEMS entries appends them to the global
// list itself (LowList::append_warp_n), so any block size and tile length is served; its
// refused reservation leaves the stage's count as it was. Protocol: `stage` zeroes the words
// (thread 0) before a __syncthreads that precedes the first appends; appends between two
// flushes; a flush is flush_reserve after a __syncthreads that follows the appends, then a
// __syncthreads, then flush_copy, and a __syncthreads (flush's own last one, or the next
// tile's or round's first) before the next appends overwrite the entries it reads.
struct StagedLowList {
    enum : unsigned int { STAGE_ITEMS = 1024u };
    // The shared words: staged count, least staged priority, the global slot of entry 0, and
    // the count being flushed.
    enum : unsigned int { COUNT, LEAST, FIRST, FLUSHING, WORDS };

    LowList global;
    VertexValue* entries;  // shared, STAGE_ITEMS
    unsigned int* words;   // shared, WORDS

    // The block's stage (one per block and kernel: the arrays are static shared memory) over
    // `low`.
    __device__ __forceinline__ static StagedLowList of(const LowList& low) {
        __shared__ VertexValue stage_entries[STAGE_ITEMS];
        __shared__ unsigned int stage_words[WORDS];
        return StagedLowList{low, stage_entries, stage_words};
    }

    // Whether anything can be deferred (a list, and a threshold).
    __device__ __forceinline__ bool active() const {
        return global.active();
    }

    __device__ __forceinline__ bool defers(unsigned int prio) const {
        return global.defers(prio);
    }

    // LowList::append_warp's contract (from warp-uniform control flow with all 32 lanes).
    __device__ __forceinline__ void append_warp(const VertexValue& p, bool keep) const {
        const unsigned int items[1] = {p.vertex};
        const unsigned int prio[1] = {p.value};
        const bool kept[1] = {keep};
        append_warp_n(items, prio, kept);
    }

    // Thread 0, before the first __syncthreads of the tile loop.
    __device__ __forceinline__ void stage() const {
        if (threadIdx.x == 0) {
            words[COUNT] = 0;
            words[LEAST] = 0xFFFFFFFFu;
        }
    }

    // LowList::append_warp_n's contract, into the stage (into the global list where the
    // warp's items do not fit).
    template <unsigned int K>
    __device__ __forceinline__ void append_warp_n(const unsigned int (&items)[K],
                                                  const unsigned int (&prio)[K],
                                                  const bool (&keep)[K]) const {
        const bool staged = append_kept_warp(
            items, prio, keep,
            [&](unsigned int t) {
                // Compare-and-swap, so that a refused warp never moves the count: an add
                // undone later would let another warp reserve past the staged items.
                unsigned int count = *const_cast<const volatile unsigned int*>(words + COUNT);
                while (count + t <= STAGE_ITEMS) {
                    const unsigned int seen = atomicCAS(words + COUNT, count, count + t);
                    if (seen == count) {
                        return count;
                    }
                    count = seen;
                }
                return REFUSED;
            },
            [&](unsigned int least) { atomicMin(words + LEAST, least); },
            [&](unsigned int at, const VertexValue& p) { entries[at] = p; });
        if (!staged) {
            global.append_warp_n(items, prio, keep);
        }
    }

    // Thread 0, after a __syncthreads that follows the appends: reserves the staged items'
    // slots in the global list and empties the stage's count.
    __device__ __forceinline__ void flush_reserve() const {
        if (threadIdx.x == 0) {
            const unsigned int n = words[COUNT];
            words[FLUSHING] = n;
            if (n != 0) {
                words[FIRST] = atomicAdd(global.ctrl + CTRL_LOW_END, n);
                atomicMin(global.ctrl + CTRL_LOW_MIN, words[LEAST]);
            }
            words[COUNT] = 0;
            words[LEAST] = 0xFFFFFFFFu;
        }
    }

    // Every thread, from block-uniform control flow, after the block's appends: moves the
    // staged items to the global list (three barriers: after the appends, after the
    // reservation, after the copy, so that the next appends may reuse the entries).
    __device__ __forceinline__ void flush() const {
        __syncthreads();
        flush_reserve();
        __syncthreads();
        flush_copy();
        __syncthreads();
    }

    // Every thread, after a __syncthreads that follows flush_reserve: copies the staged items.
    __device__ __forceinline__ void flush_copy() const {
        const unsigned int n = words[FLUSHING];
        const unsigned int first = words[FIRST];
        for (unsigned int i = threadIdx.x; i < n; i += blockDim.x) {
            const unsigned int slot = first + i;
            if (slot < global.capacity) {
                global.data[slot] = entries[i];
            } else if (i + 1u == n) {
                atomicMax(global.ctrl + CTRL_LOW_OVERFLOW, slot + 1u);
            }
        }
    }
};

}  // namespace groute
