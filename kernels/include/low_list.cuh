// Soft priority's low list on the device (LowList), which the grid phases defer to through
// their block's stage (block_stage.cuh) and the single-block modes directly. Part of the
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

// Puts kept vertex `v` of priority `prio` in the worklist, or defers it to `low`.
template <typename Worklist, typename Low>
__device__ __forceinline__ void keep_or_defer(const Worklist& wl, const Low& low,
                                              unsigned int v, unsigned int prio, bool keep) {
    const bool deferred = keep && low.defers(prio);
    wl.append_warp(v, keep && !deferred);
    VertexValue p;
    p.vertex = v;
    p.value = prio;
    low.append_warp(p, deferred);
}

}  // namespace groute
