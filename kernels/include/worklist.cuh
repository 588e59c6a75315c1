// Device local worklist and outgoing buffer of the distributed worklist (non-fused mode).
// Mirror of the CUDA worker in crates/groute-worklist/src/traversal/cuda.rs.
//
// The local worklist is a circular buffer of `mask + 1` (a power of two) vertex ids with
// 32-bit monotone positions taken modulo the capacity. The host owns the consumer side: a
// round consumes [first, first + count) and passes `first` to every kernel that appends; the
// producers reserve slots with one atomicAdd per warp on `ctrl[CTRL_WL_END]` (the end of the
// valid range, persistent across rounds) and the host reads that word back once per step.
// The outgoing buffer is a flat array of VertexValue with a monotone reservation counter
// `ctrl[CTRL_SEND_END]`; the current buffer starts at position `send_base`.
//
// Overflow: a producer that reserves past the capacity writes nothing and records the
// needed size with atomicMax in ctrl[CTRL_WL_OVERFLOW] / ctrl[CTRL_SEND_OVERFLOW]; the host
// checks both words after every step and fails the run with CapacityExceeded naming
// wl_capacity (--wl-capacity) or send_capacity (--send-capacity). Nothing is lost silently.
#pragma once

#include "abi_traversal.h"
#include "split.cuh"
#include "warp_append.cuh"

namespace groute {

// The control block's words are abi_traversal.h's TraversalCtrl (CtrlWord); every CUDA
// worklist shares its first four, PageRank's control block adds its own after them.

struct DeviceWorklist {
    unsigned int* data;
    unsigned int mask;   // capacity - 1, capacity a power of two
    unsigned int first;  // first position still unconsumed (the round's own items included)
    unsigned int* ctrl;

    // Appends take no adjacency ranges of the items (SoloWorklist of solo_frontier.cuh does).
    static constexpr bool KEEPS_RANGES = false;

    // Writes `item` at the reserved position `slot`; a slot past the capacity writes nothing,
    // records the needed size (see "Overflow") and returns false.
    __device__ __forceinline__ bool put(unsigned int slot, unsigned int item) const {
        const unsigned int used = slot + 1u - first;
        if (used > mask + 1u) {
            atomicMax(ctrl + CTRL_WL_OVERFLOW, used);
            return false;
        }
        data[slot & mask] = item;
        return true;
    }

    // Appends `item` where `keep`, one atomic per warp (call from warp-uniform control flow);
    // `stored(slot)` runs for the appended item (its position), not for an overflow.
    template <typename Stored>
    __device__ __forceinline__ void append_warp(unsigned int item, bool keep,
                                                Stored stored) const {
        unsigned int total;
        const unsigned int slot = warp_reserve(ctrl + CTRL_WL_END, keep, total);
        if (keep && put(slot, item)) {
            stored(slot);
        }
    }

    __device__ __forceinline__ void append_warp(unsigned int item, bool keep) const {
        append_warp(item, keep, [](unsigned int) {});
    }

    // Appends `item` where `keep`, one atomic per block: a pass whose every warp keeps items
    // (a pull step that finds much of the graph) would otherwise queue one atomic per warp on
    // the one end word. Call with every thread of the block, in block-uniform control flow (it
    // synchronises the block), blockDim.x a multiple of 32 and at most 1024.
    __device__ __forceinline__ void append_block(unsigned int item, bool keep) const {
        __shared__ unsigned int warp_first[32];
        __shared__ unsigned int block_first;
        const unsigned int warp = threadIdx.x / 32u;
        const unsigned int ballot = __ballot_sync(0xFFFFFFFFu, keep);
        if (lane_id() == 0) {
            warp_first[warp] = __popc(ballot);
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            unsigned int total = 0;
            for (unsigned int w = 0; w < blockDim.x / 32u; ++w) {
                const unsigned int kept = warp_first[w];
                warp_first[w] = total;
                total += kept;
            }
            block_first = total == 0u ? 0u : atomicAdd(ctrl + CTRL_WL_END, total);
        }
        __syncthreads();
        if (keep) {
            put(block_first + warp_first[warp] + __popc(ballot & lanemask_lt()), item);
        }
        // The next call rewrites the shared words.
        __syncthreads();
    }

    // Appends the items[k] with keep[k] (`n` of them on this lane, n < 8), one atomic per
    // warp for all of them; call with all 32 lanes of the warp. `stored(k, slot)` runs for
    // every appended item (not for an overflow).
    template <unsigned int K, typename Stored>
    __device__ __forceinline__ void append_warp_n(const unsigned int (&items)[K],
                                                  const bool (&keep)[K], unsigned int n,
                                                  Stored stored) const {
        static_assert(K < 8u, "warp_reserve_n<3> counts at most 7 items per lane");
        unsigned int total;
        unsigned int slot = warp_reserve_n<3>(ctrl + CTRL_WL_END, n, total);
#pragma unroll
        for (unsigned int k = 0; k < K; ++k) {
            if (keep[k]) {
                if (put(slot, items[k])) {
                    stored(k, slot);
                }
                ++slot;
            }
        }
    }

    template <unsigned int K>
    __device__ __forceinline__ void append_warp_n(const unsigned int (&items)[K],
                                                  const bool (&keep)[K], unsigned int n) const {
        append_warp_n(items, keep, n, [](unsigned int, unsigned int) {});
    }

    // Item at position `pos`.
    __device__ __forceinline__ unsigned int at(unsigned int pos) const { return data[pos & mask]; }
};

// The outgoing buffer: flat (`freed` null: position p at data[p - base]) or, in device-driven
// fused runs, a ring of `capacity` (a power of two) items in the next device's memory
// (position p at data[p & (capacity - 1)]), whose positions below *freed (stored by the
// receiver once it has read them) may be written again. `freed` is ctrl[CTRL_SEND_FREED] of
// the sender's control words; `ctrl` may be a copy of them (the single-block mode's, in shared
// memory), whose freed word is then an older value of *freed: the word only grows, so any
// value read is a lower bound, and a send within `capacity` of it needs no read of *freed
// (a round trip to L2 on the sending warp's path).
struct SendBuffer {
    // Appends go straight to the buffer (block_stage.cuh's Sent view stages them).
    static constexpr bool STAGED = false;
    VertexValue* data;
    unsigned int capacity;
    unsigned int base;  // position of data[0] (flat)
    unsigned int* ctrl;
    const unsigned int* freed;  // ring: positions the receiver has read (null: flat)

    // Writes `p` at the reserved position `position`; a position past the ring's free space
    // (or the flat buffer's capacity) writes nothing and records the needed size (Overflow).
    __device__ __forceinline__ void store_at(unsigned int position, const VertexValue& p) const {
        // A ring's free positions: the control words' value first (any value read is safe:
        // the word only grows), *freed itself only where that one says the ring is full.
        unsigned int from = base;
        if (freed != nullptr) {
            from = ctrl[CTRL_SEND_FREED];
            if (position - from >= capacity) {
                from = *const_cast<const volatile unsigned int*>(freed);
            }
        }
        const unsigned int slot = position - from;
        if (slot >= capacity) {
            atomicMax(ctrl + CTRL_SEND_OVERFLOW, slot + 1u);
            return;
        }
        data[freed == nullptr ? slot : position & (capacity - 1u)] = p;
    }

    // Appends `p` where `keep`, one atomic per warp (call from warp-uniform control flow).
    __device__ __forceinline__ void append_warp(const VertexValue& p, bool keep) const {
        unsigned int total;
        const unsigned int position = warp_reserve(ctrl + CTRL_SEND_END, keep, total);
        if (keep) {
            store_at(position, p);
        }
    }

    // Appends (items[k], values[k]) for every k where keep[k], K < 8 per lane, with one
    // reservation for the warp. Call with all 32 lanes.
    template <unsigned int K>
    __device__ __forceinline__ void append_warp_n(const unsigned int (&items)[K],
                                                  const unsigned int (&values)[K],
                                                  const bool (&keep)[K]) const {
        static_assert(K < 8u, "warp_reserve_n_by<3> counts at most 7 items per lane");
        unsigned int n = 0;
#pragma unroll
        for (unsigned int k = 0; k < K; ++k) {
            n += keep[k] ? 1u : 0u;
        }
        unsigned int total;
        unsigned int first;
        unsigned int position = warp_reserve_n_by<3>(
            n, total, first, [&](unsigned int t) { return atomicAdd(ctrl + CTRL_SEND_END, t); });
#pragma unroll
        for (unsigned int k = 0; k < K; ++k) {
            if (keep[k]) {
                store_at(position, VertexValue{items[k], values[k]});
                ++position;
            }
        }
    }
};

}  // namespace groute
