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

// Sum of `share[sources[e]]` for e in [begin, end) where `active`, else 0 (shares whose
// `taken` bit is clear read as 0).
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
                          float part = 0.0f;
                          for (unsigned long long e = bb + threadIdx.x; e < be;
                               e += blockDim.x) {
                              part += taken_share(share, taken, sources[e]);
                          }
                          part = block_sum(part, block_total);
                          if (owner == threadIdx.x) {
                              mine = part;
                          }
                      });
    // (2) Warp granularity: medium lists, by one warp each.
    claim_warp_lists(have, begin, end, 0u,
                     [&](unsigned long long wb, unsigned long long we, unsigned int,
                         unsigned int leader) {
                         float part = 0.0f;
                         for (unsigned long long e = wb + lane; e < we; e += 32u) {
                             part += taken_share(share, taken, sources[e]);
                         }
                         part = warp_sum(part);
                         if (lane == leader) {
                             mine = part;
                         }
                     });
    // (3) Thread granularity: the short lists.
    if (have) {
        for (unsigned long long e = begin; e < end; ++e) {
            mine += taken_share(share, taken, sources[e]);
        }
    }
    return mine;
}

}  // namespace groute
