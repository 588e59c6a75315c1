// Load-balanced gather: for each thread's vertex, the sum of `share[sources[e]]` over its
// arc range [begin, end) of an in-CSR (pull PageRank's second pass; see kernels/pagerank/pagerank.cu).
//
// Lists are split by length as in the push rounds: >= blockDim.x arcs -> the whole block
// (one list at a time, reduced through shared memory), >= 32 -> one warp (shuffle
// reduction), else the owning thread. No atomics on global memory. (Lists of hubs, listed
// at upload, are summed by the whole grid in tiles before: pagerank_pull_hub_tiles.)
//
// `taken` (null: none) is one bit per vertex, set where the vertex's share may be nonzero
// (pagerank_mark_taken): a share whose bit is clear is not read. In a sweep that takes few
// vertices most in-arcs lead from vertices not taken, and their reads of the vertex-long
// share array (a sector of DRAM each, at random) become reads of a bitmap 32 times smaller,
// which stays in the L2. Skipping a share of 0 changes no sum.
//
// Requirements: call with the whole block, from a loop whose trip count is uniform across
// the block (the block stage synchronises it); blockDim.x a multiple of 32, <= 1024.
// Self-contained: no toolkit headers.
#pragma once

#include "list_claim.cuh"

#include "block_count.cuh"
#include "warp_append.cuh"

namespace groute {

// Sum of `x` over the 32 lanes, on every lane (call with all 32 lanes).
__device__ __forceinline__ float warp_sum(float x) {
#pragma unroll
    for (unsigned int offset = 16; offset > 0; offset >>= 1) {
        x += __shfl_xor_sync(0xFFFFFFFFu, x, offset);
    }
    return x;
}

// Sum of `x` over the block, on every thread (call with the whole block; `total` a __shared__
// float that no other code uses between the calls' synchronisations).
__device__ __forceinline__ float block_sum(float x, float& total) {
    if (threadIdx.x == 0) {
        total = 0.0f;
    }
    __syncthreads();
    x = warp_sum(x);
    if (lane_id() == 0) {
        atomicAdd(&total, x);
    }
    __syncthreads();
    const float result = total;
    __syncthreads();  // everyone has read it before the next call resets it
    return result;
}

// `share[u]`, or 0 without reading it where `taken` is not null and has u's bit clear.
__device__ __forceinline__ float taken_share(const float* share, const unsigned int* taken,
                                             unsigned int u) {
    if (taken != nullptr && ((__ldg(taken + (u >> 5)) >> (u & 31u)) & 1u) == 0u) {
        return 0.0f;
    }
    return share[u];
}

// Sum of `share[sources[e]]` through `taken` for e = first, first + step, ... below `end`, in
// that order. BATCH tails are loaded before their shares are, so that a thread has BATCH
// loads in flight instead of one: the loop is bound by the latency of its loads, not by the
// bandwidth they use. BATCH 1 is the plain loop. With BATCH > 1 (the synchronous sweeps'
// gathers and hub tiles) the tails are loaded streamed (`ld.global.cs`, evicted first), so
// that they push fewer of the heavy vertices' shares, which many arcs read again, out of
// the L1: on one H200, PageRank on a Kronecker graph of scale 25 ran 2.5% faster so, scale
// 21 1%. Where a thread sums a short list of its own, its next batch may read the same line
// of tails again; the device-driven loop's gathers (BATCH 1, road networks, short lists
// only) ran 3% slower with streamed tails.
template <unsigned int BATCH>
__device__ __forceinline__ float strided_share_sum(const unsigned int* sources,
                                                   const float* share,
                                                   const unsigned int* taken,
                                                   unsigned long long first,
                                                   unsigned long long end,
                                                   unsigned long long step) {
    float sum = 0.0f;
    for (unsigned long long e = first; e < end; e += BATCH * step) {
        unsigned int tail[BATCH];
        bool valid[BATCH];
#pragma unroll
        for (unsigned int k = 0; k < BATCH; ++k) {
            const unsigned long long at = e + k * step;
            valid[k] = at < end;
            tail[k] = !valid[k] ? 0u : BATCH > 1 ? __ldcs(sources + at) : sources[at];
        }
#pragma unroll
        for (unsigned int k = 0; k < BATCH; ++k) {
            if (valid[k]) {
                sum += taken_share(share, taken, tail[k]);
            }
        }
    }
    return sum;
}

// Sum of `share[sources[e]]` for e in [begin, end) where `active`, else 0 (shares whose
// `taken` bit is clear read as 0), each thread keeping BATCH loads in flight
// (strided_share_sum; the sums are the same for every BATCH).
template <unsigned int BATCH>
__device__ __forceinline__ float gather_sum(const unsigned int* sources, const float* share,
                                            const unsigned int* taken,
                                            unsigned long long begin, unsigned long long end,
                                            bool active) {
    __shared__ float block_total;
    const unsigned int lane = lane_id();
    float mine = 0.0f;
    bool have = active && end > begin;
    // (1) Block granularity: long lists, one at a time, by the whole block.
    claim_block_lists(have, begin, end, 0u,
                      [&](unsigned long long bb, unsigned long long be, unsigned int,
                          unsigned int owner) {
                          float part = strided_share_sum<BATCH>(sources, share, taken,
                                                                bb + threadIdx.x, be,
                                                                blockDim.x);
                          part = block_sum(part, block_total);
                          if (owner == threadIdx.x) {
                              mine = part;
                          }
                      });
    // (2) Warp granularity: medium lists, by one warp each.
    claim_warp_lists(have, begin, end, 0u,
                     [&](unsigned long long wb, unsigned long long we, unsigned int,
                         unsigned int leader) {
                         float part =
                             strided_share_sum<BATCH>(sources, share, taken, wb + lane, we, 32u);
                         part = warp_sum(part);
                         if (lane == leader) {
                             mine = part;
                         }
                     });
    // (3) Thread granularity: the short lists.
    if (have) {
        mine += strided_share_sum<BATCH>(sources, share, taken, begin, end, 1u);
    }
    return mine;
}

}  // namespace groute
