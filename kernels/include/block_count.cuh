// Block-aggregated counters and reservations: one global atomic per block where the
// warp-aggregated versions (warp_append.cuh) take one per warp.
//
// Why: a grid-stride pass of a persistent kernel runs every warp of the resident grid
// (thousands of warps on a large GPU), and a warp-aggregated count sends one atomic per warp to
// the same word. Atomics on one word are serialised at its L2 slice, so a pass over a few
// thousand items ends in thousands of queued atomics on each of its counters, and splitting
// the pass over more devices does not shorten that queue. Summed over the block in
// shared memory first, a pass sends one atomic per block and counter.
//
// Requirements: every thread of the block calls these, from block-uniform control flow (they
// synchronise the block); blockDim.x a multiple of 32, at most 1024. Self-contained (NVRTC).
#pragma once

#include "warp_append.cuh"

namespace groute {

// Adds the block's sum of x[k] to counters[k], k < N: one atomic per block and nonzero sum.
template <unsigned int N>
__device__ __forceinline__ void block_add_u64(unsigned long long* counters,
                                              const unsigned long long (&x)[N]) {
    static_assert(N <= 32u, "one thread per counter flushes the sums");
    __shared__ unsigned long long sums[N];
    // Thread k zeroes and later flushes sum k: its previous flush precedes this store in its
    // own order, and the barrier below orders the store before every warp's addition.
    if (threadIdx.x < N) {
        sums[threadIdx.x] = 0ull;
    }
    __syncthreads();
#pragma unroll
    for (unsigned int k = 0; k < N; ++k) {
        const unsigned long long warp = warp_sum_u64(x[k]);
        if (lane_id() == 0u && warp != 0ull) {
            atomicAdd(&sums[k], warp);
        }
    }
    __syncthreads();
    if (threadIdx.x < N) {
        const unsigned long long total = sums[threadIdx.x];
        if (total != 0ull) {
            atomicAdd(counters + threadIdx.x, total);
        }
    }
}

// Reserves `count` consecutive slots for each warp in `*counter` (the same `count` on all 32
// lanes of the warp) with one atomicAdd per block; returns the warp's first slot on every lane
// (meaningful only where count > 0). Warps of the block get their slots in warp order.
__device__ __forceinline__ unsigned int block_reserve_warps(unsigned int* counter,
                                                            unsigned int count) {
    __shared__ unsigned int warp_first[32];
    __shared__ unsigned int block_first;
    const unsigned int warp = threadIdx.x / 32u;
    if (lane_id() == 0u) {
        warp_first[warp] = count;
    }
    __syncthreads();
    if (threadIdx.x == 0u) {
        unsigned int total = 0;
        for (unsigned int w = 0; w < blockDim.x / 32u; ++w) {
            const unsigned int c = warp_first[w];
            warp_first[w] = total;
            total += c;
        }
        block_first = total == 0u ? 0u : atomicAdd(counter, total);
    }
    __syncthreads();
    const unsigned int first = block_first + warp_first[warp];
    __syncthreads();  // every warp has read its slot before the next call writes them
    return first;
}

// Reserves one slot per thread with `keep` in `*counter`, one atomicAdd per block (a sweep
// may append most of its vertices: a per-warp reservation would queue tens of thousands of
// atomics on one address). Returns this thread's slot (meaningful only where `keep`); the
// order inside the block follows the thread order.
__device__ __forceinline__ unsigned int block_reserve(unsigned int* counter, bool keep) {
    const unsigned int ballot = __ballot_sync(0xFFFFFFFFu, keep);
    const unsigned int first =
        block_reserve_warps(counter, static_cast<unsigned int>(__popc(ballot)));
    return first + static_cast<unsigned int>(__popc(ballot & lanemask_lt()));
}

}  // namespace groute
