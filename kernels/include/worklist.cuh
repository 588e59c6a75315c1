// Device local worklist: a bounded multi-producer single-consumer circular buffer, the device
// mirror of groute_worklist::local_worklist (crates/groute-worklist/src/local.rs).
//
// Counters (all 32-bit, monotone, positions taken modulo `capacity`):
//   start   - first item not yet consumed; moved by the consumer only (pop advances it,
//             prepend moves it back);
//   alloc   - end of the reserved range: producers reserve with one atomicAdd per warp;
//   end     - end of the published range: the host (or the consumer kernel) advances it to
//             `alloc` after the producing kernels have completed (stream order), so the
//             consumer never reads a slot still being written;
//   pending - items reserved by prepend for the consumer's own output (start moves back by
//             `pending` once the producing kernel is done).
// Capacity must be a power of two (positions wrap at 2^32 and are taken modulo capacity).
// Overflow: a producer that reserves past `start + capacity` records the needed size in
// `overflow` and writes nothing; the host checks `overflow` after every kernel and fails the
// run with CapacityExceeded naming wl_capacity (--wl-capacity). Nothing is ever lost silently.
#pragma once

#include "warp_append.cuh"

namespace groute {

struct DeviceWorklist {
    unsigned int* data;
    unsigned int capacity;
    unsigned int* start;
    unsigned int* alloc;
    unsigned int* end;
    unsigned int* pending;
    unsigned int* overflow;

    // Appends `item` where `keep`, one atomic per warp (call from warp-uniform control flow).
    __device__ __forceinline__ void append_warp(unsigned int item, bool keep) const {
        unsigned int total;
        const unsigned int slot = warp_reserve(alloc, keep, total);
        if (!keep) {
            return;
        }
        const unsigned int used = slot + 1u - *((volatile unsigned int*)start);
        if (used > capacity) {
            atomicMax(overflow, used);
            return;
        }
        data[slot % capacity] = item;
    }

    // Prepends `item` where `keep` (consumer's own output): reserves below `start`, one atomic
    // per warp on `pending`; the host moves `start` back by `*pending` after the kernel.
    __device__ __forceinline__ void prepend_warp(unsigned int item, bool keep) const {
        unsigned int total;
        const unsigned int k = warp_reserve(pending, keep, total);
        if (!keep) {
            return;
        }
        const unsigned int s = *((volatile unsigned int*)start);
        const unsigned int used = *((volatile unsigned int*)alloc) - s + k + 1u;
        if (used > capacity) {
            atomicMax(overflow, used);
            return;
        }
        // Slot s - 1 - k (mod capacity), computed without underflow.
        data[(s + capacity - 1u - (k % capacity)) % capacity] = item;
    }

    // Item `i` of the consumed range [start, end).
    __device__ __forceinline__ unsigned int at(unsigned int i) const { return data[i % capacity]; }
};

}  // namespace groute
