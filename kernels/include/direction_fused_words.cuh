// The device-driven direction-optimizing BFS's words (kernels/include/direction_fused.cuh): the
// state block's words, phases and release record, and the direction rule's arithmetic.

#pragma once

#include "abi_direction.h"
#include "direction.cuh"
#include "direction_trace.cuh"
#include "grid_barrier.cuh"
#include "peer_group.cuh"
#include "peer_post.cuh"

namespace groute {

// The u64 words of the state block (DoWord) are abi_direction.h's DirectionStateBlock.

enum DoPhase : unsigned int { DO_DONE = 0, DO_PUSH = 1, DO_PULL = 2, DO_STOP = 3 };

enum : unsigned int {
    DO_ABORT_POLL = 4,
    DO_BLOCK = 256,
    // decide()'s `own` when the counters count this device's owned finds only.
    DO_COUNTED_HERE = 0xFFFFFFFFu,
    // On several devices a push level is sparse when its frontier's out-arcs (summed over
    // the devices) times this are at most n: it appends at most n / 64 < ceil(n / 32)
    // vertices per device, so a list fits in an inbox slot.
    SPARSE_DIVISOR = 64,
};

// The record of a decide (FusedRecord words; the sixth is unused).
enum DoRecord : unsigned int {
    DO_R_PHASE = 0,
    DO_R_LEVEL = 1,
    DO_R_COUNT = 2,
    DO_R_HUBS = 3,
    DO_R_SPARSE = 4,  // the push sends lists (several devices)
};

__device__ __forceinline__ unsigned long long saturating_mul(unsigned long long a,
                                                             unsigned long long b) {
    return __umul64hi(a, b) != 0ull ? ~0ull : a * b;
}

// SwitchRule::pulls (crates/groute-bfs/src/direction/rule.rs), the reference: whether the step
// after a frontier of `frontier` vertices and `out_arcs` out-arcs pulls.
__device__ __forceinline__ bool direction_pulls(unsigned long long alpha,
                                                unsigned long long beta,
                                                unsigned long long gamma, bool pulling,
                                                unsigned long long frontier,
                                                unsigned long long out_arcs,
                                                unsigned long long previous_frontier,
                                                unsigned long long unvisited_in_arcs,
                                                unsigned long long n) {
    if (pulling) {
        return frontier >= previous_frontier || saturating_mul(frontier, beta) > n;
    }
    return alpha != 0ull && saturating_mul(out_arcs, alpha) > unvisited_in_arcs &&
           (gamma == 0ull || saturating_mul(out_arcs, gamma) >= n);
}

// HubPolicy::min_degree (groute-worklist) of the expand launch the host would make for `count`
// items: the threshold above which push lists are spread over the grid in tiles.
__device__ __forceinline__ unsigned int push_hub_min_degree(unsigned int count) {
    const unsigned int needed = (count + blockDim.x - 1u) / blockDim.x;
    const unsigned int grid = needed < gridDim.x ? needed : gridDim.x;
    if (grid >= gridDim.x) {
        return HUB_MIN_DEGREE;
    }
    if (grid * 8u <= gridDim.x) {
        return SMALL_GRID_HUB_MIN_DEGREE;
    }
    return blockDim.x < HUB_MIN_DEGREE ? blockDim.x : HUB_MIN_DEGREE;
}

}  // namespace groute
