// Warp-aggregated append: every lane that keeps an element writes it to a shared output
// array, with ONE atomicAdd per warp on the output counter instead of one per element.
//
// Protocol: the lanes of a warp that call `warp_append` together vote with __ballot_sync;
// the lowest voting lane reserves __popc(ballot) slots with a single atomicAdd and
// broadcasts the base index with __shfl_sync; each voting lane writes at base + the number
// of voting lanes below it. The order of elements inside one warp's chunk follows lane
// order; the order of chunks across warps is whatever order the atomics happen in.
//
// Requirements: every lane of `__activemask()` at the call must reach the call (call it
// from warp-uniform control flow, as in a grid-stride loop whose trip count is uniform per
// warp); `counter` is a device (or mapped host) address visible to all writers; the output
// has room for every kept element (callers size it, or check the returned index).
//
// Shared by kernels/pbf/pbf.cu and the worklist/BFS kernels. Self-contained: no toolkit headers.
#pragma once

namespace groute {

// Lane index inside the warp (valid for any block shape).
__device__ __forceinline__ unsigned int lane_id() {
    unsigned int lane;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    return lane;
}

// Bit mask of the lanes below this one.
__device__ __forceinline__ unsigned int lanemask_lt() {
    unsigned int mask;
    asm volatile("mov.u32 %0, %%lanemask_lt;" : "=r"(mask));
    return mask;
}

// Reserves one slot per lane with `keep`: `reserve(total)` (called on one lane, the lowest
// that keeps, only where some lane keeps) reserves the warp's `total` slots and returns the
// first: an atomicAdd on a global counter (warp_reserve), a distributed-shared-memory add, a
// queue's tail. Returns this lane's slot (meaningful only where `keep`); `total` receives the
// warp's number of kept elements and `base` what `reserve` returned (0 where nothing is
// kept), on every lane. Call from warp-uniform control flow (the lanes of __activemask()).
template <typename Reserve>
__device__ __forceinline__ unsigned int warp_reserve_by(bool keep, unsigned int& total,
                                                        unsigned int& base, Reserve reserve) {
    const unsigned int active = __activemask();
    const unsigned int ballot = __ballot_sync(active, keep);
    total = __popc(ballot);
    base = 0;
    if (ballot == 0) {
        return 0;
    }
    const int leader = __ffs(ballot) - 1;
    unsigned int first = 0;
    if (lane_id() == static_cast<unsigned int>(leader)) {
        first = reserve(total);
    }
    base = __shfl_sync(active, first, leader);
    return base + __popc(ballot & lanemask_lt());
}

// Reserves one slot per lane with `keep` in `*counter`, one atomicAdd per warp. Returns this
// lane's slot (meaningful only where `keep`). `total` receives the warp's number of kept
// elements on every lane.
__device__ __forceinline__ unsigned int warp_reserve(unsigned int* counter, bool keep,
                                                     unsigned int& total) {
    unsigned int base;
    return warp_reserve_by(keep, total, base,
                           [&](unsigned int n) { return atomicAdd(counter, n); });
}

// The lane's exclusive prefix of `n` over the warp (n < 2^BITS), summed bit-plane by
// bit-plane (BITS ballots, no shuffle scan); `total` receives the warp's sum on every lane.
// Call with all 32 lanes of the warp.
template <unsigned int BITS>
__device__ __forceinline__ unsigned int warp_prefix_n(unsigned int n, unsigned int& total) {
    const unsigned int below = lanemask_lt();
    unsigned int prefix = 0;
    total = 0;
#pragma unroll
    for (unsigned int b = 0; b < BITS; ++b) {
        const unsigned int plane = __ballot_sync(0xFFFFFFFFu, ((n >> b) & 1u) != 0);
        prefix += static_cast<unsigned int>(__popc(plane & below)) << b;
        total += static_cast<unsigned int>(__popc(plane)) << b;
    }
    return prefix;
}

// Reserves `n` consecutive slots per lane (n < 2^BITS): `reserve(total)` (called on lane 0,
// only where the warp's total is not 0) reserves the warp's slots and returns the first.
// Returns this lane's first slot (meaningful only where n > 0; warp_prefix_n's lane prefix);
// `total` and `base` as warp_reserve_by's. Call with all 32 lanes of the warp.
template <unsigned int BITS, typename Reserve>
__device__ __forceinline__ unsigned int warp_reserve_n_by(unsigned int n, unsigned int& total,
                                                          unsigned int& base, Reserve reserve) {
    const unsigned int prefix = warp_prefix_n<BITS>(n, total);
    base = 0;
    if (total == 0) {
        return 0;
    }
    unsigned int first = 0;
    if (lane_id() == 0) {
        first = reserve(total);
    }
    base = __shfl_sync(0xFFFFFFFFu, first, 0);
    return base + prefix;
}

// Reserves `n` consecutive slots per lane (n < 2^BITS) in `*counter`, one atomicAdd per
// warp; returns this lane's first slot (meaningful only where n > 0; warp_prefix_n's lane
// prefix). `total` receives the warp's number of slots on every lane. Call with all 32 lanes
// of the warp.
template <unsigned int BITS>
__device__ __forceinline__ unsigned int warp_reserve_n(unsigned int* counter, unsigned int n,
                                                       unsigned int& total) {
    unsigned int base;
    return warp_reserve_n_by<BITS>(n, total, base,
                                   [&](unsigned int t) { return atomicAdd(counter, t); });
}

// Appends `value` to `out` where `keep`, counting in `*counter` (one atomic per warp).
template <typename T>
__device__ __forceinline__ void warp_append(T* out, unsigned int* counter, const T& value,
                                            bool keep) {
    unsigned int total;
    const unsigned int slot = warp_reserve(counter, keep, total);
    if (keep) {
        out[slot] = value;
    }
}

// Sum of `x` over the 32 lanes, on every lane (call with all 32 lanes).
__device__ __forceinline__ unsigned long long warp_sum_u64(unsigned long long x) {
#pragma unroll
    for (unsigned int offset = 16; offset > 0; offset >>= 1) {
        x += __shfl_xor_sync(0xFFFFFFFFu, x, offset);
    }
    return x;
}

// Adds the warp's sum of `x` to `*counter` (one atomic per warp; all 32 lanes call it).
__device__ __forceinline__ void warp_add_u64(unsigned long long* counter, unsigned long long x) {
    x = warp_sum_u64(x);
    if (lane_id() == 0 && x != 0) {
        atomicAdd(counter, x);
    }
}

}  // namespace groute
