// The two cooperative levels of the nested load balancing of adjacency lists (the traversal
// expand, PageRank's push rounds, the pull gather): a thread holding a list of at least
// blockDim.x elements hands it to its whole block, one of at least a warp's width to its
// warp; what remains is expanded by its own thread. A claim broadcasts the list's range
// [begin, end) and a payload (the vertex, its share, ...) through shared memory and clears
// the claimant's `has`; the body runs on every thread of the block (or warp) with the
// claimant's index.
#pragma once

#include "warp_append.cuh"

namespace groute {

// Block level: while some thread of the block `has` a list of blockDim.x elements or more,
// the whole block runs `body(begin, end, payload, owner)` on one such list (`owner`: the
// claimant's threadIdx.x, the lowest one). Call with every thread of the block (a multiple
// of 32 threads), from block-uniform control flow: it synchronises the block (once, when no
// thread holds such a list).
template <typename Payload, typename Body>
__device__ __forceinline__ void claim_block_lists(bool& has, unsigned long long begin,
                                                  unsigned long long end,
                                                  const Payload& payload, Body body) {
    __shared__ unsigned int claimed_by;
    __shared__ unsigned long long claimed_begin;
    __shared__ unsigned long long claimed_end;
    __shared__ Payload claimed_payload;
    // Most calls find no such list (road networks never do): one barrier answers that.
    if (__syncthreads_or(has && end - begin >= blockDim.x) == 0) {
        return;
    }
    while (true) {
        if (threadIdx.x == 0) {
            claimed_by = 0xFFFFFFFFu;
        }
        __syncthreads();
        // The lowest claimant of each warp bids with a shared-memory atomicMin, so the lowest
        // claimant of the block wins and no two threads store to one word (a write-write
        // race, which compute-sanitizer's racecheck reports, on hub-heavy graphs).
        const bool claims = has && end - begin >= blockDim.x;
        const unsigned int claimants = __ballot_sync(0xFFFFFFFFu, claims);
        if (claims && lane_id() == static_cast<unsigned int>(__ffs(claimants) - 1)) {
            atomicMin(&claimed_by, threadIdx.x);
        }
        __syncthreads();
        const unsigned int owner = claimed_by;
        if (owner == 0xFFFFFFFFu) {
            break;
        }
        if (owner == threadIdx.x) {
            claimed_begin = begin;
            claimed_end = end;
            claimed_payload = payload;
            has = false;
        }
        __syncthreads();
        body(claimed_begin, claimed_end, claimed_payload, owner);
        __syncthreads();  // every thread read the claim before the next one overwrites it
    }
}

// Warp level: while some lane of the warp `has` a list of 32 elements or more, the whole warp
// runs `body(begin, end, payload, leader)` on one such list (`leader`: the claimant's lane,
// the lowest one). Call with all 32 lanes of the warp.
template <typename Payload, typename Body>
__device__ __forceinline__ void claim_warp_lists(bool& has, unsigned long long begin,
                                                 unsigned long long end,
                                                 const Payload& payload, Body body) {
    __shared__ unsigned long long claimed_begin[32];
    __shared__ unsigned long long claimed_end[32];
    __shared__ Payload claimed_payload[32];
    const unsigned int lane = lane_id();
    const unsigned int warp = threadIdx.x / 32u;
    while (true) {
        const unsigned int ballot = __ballot_sync(0xFFFFFFFFu, has && end - begin >= 32u);
        if (ballot == 0u) {
            break;
        }
        const unsigned int leader = __ffs(ballot) - 1u;
        if (lane == leader) {
            claimed_begin[warp] = begin;
            claimed_end[warp] = end;
            claimed_payload[warp] = payload;
            has = false;
        }
        __syncwarp();
        const unsigned long long b = claimed_begin[warp];
        const unsigned long long e = claimed_end[warp];
        const Payload p = claimed_payload[warp];
        __syncwarp();  // every lane read the claim before the next one overwrites it
        body(b, e, p, leader);
    }
}

}  // namespace groute
