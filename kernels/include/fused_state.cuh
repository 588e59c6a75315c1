// The fused traversal's state (fused.cuh): the words of the state block, the phases, flags
// and release record, the state held in registers (FusedState) and the kernel's parameters
// (FusedArgs).

#pragma once

#include "abi_traversal.h"
#include "cluster_solo.cuh"
#include "grid_barrier.cuh"
#include "peer_group.cuh"
#include "solo_frontier.cuh"
#include "traversal.cuh"

namespace groute {

// The words of the state block (FUSED_*, FusedWord) are abi_traversal.h's FusedStateBlock,
// where each is described; words [0, FUSED_BARRIER_WORDS) are the grid barrier's.

// The phases, stop codes and kernel flags (FusedPhase, FusedStop, FusedKernelFlag) are
// abi_traversal.h's: the host sets and reads them.

// Soft priority's next threshold when no high-priority item is left: at least one band above
// `threshold`, and the end of the band holding `min_deferred` (no empty epochs); saturating
// (the last epoch, at 0xFFFFFFFF, defers nothing). PriorityCounter::report's rule.
__device__ __forceinline__ unsigned int next_threshold(unsigned int threshold,
                                                       unsigned int delta,
                                                       unsigned int min_deferred) {
    const unsigned int d = delta == 0u ? 1u : delta;
    const unsigned long long band = static_cast<unsigned long long>(threshold) + d;
    const unsigned long long bucket =
        (static_cast<unsigned long long>(min_deferred / d) + 1ull) * d;
    const unsigned long long next = band > bucket ? band : bucket;
    return next > 0xFFFFFFFFull ? 0xFFFFFFFFu : static_cast<unsigned int>(next);
}

// The state words [FUSED_PHASE, FUSED_WORDS) held in registers: `at(FUSED_X)` is word X.
struct FusedState {
    unsigned int w[FUSED_WORDS - FUSED_PHASE];

    __device__ __forceinline__ unsigned int& at(unsigned int word) { return w[word - FUSED_PHASE]; }

    __device__ __forceinline__ void add_u64(unsigned int word, unsigned long long n) {
        const unsigned long long v =
            (static_cast<unsigned long long>(at(word + 1u)) << 32 | at(word)) + n;
        at(word) = static_cast<unsigned int>(v);
        at(word + 1u) = static_cast<unsigned int>(v >> 32);
    }

    // What every block needs to run the phase this state holds (FusedRecordWord order).
    __device__ __forceinline__ FusedRecord record() {
        return FusedRecord{{at(FUSED_PHASE), at(FUSED_START), at(FUSED_END),
                            at(FUSED_THRESHOLD), at(FUSED_LOW_CURRENT), at(FUSED_LOW_TAKEN),
                            at(FUSED_IN_BEGIN), at(FUSED_IN_END), at(FUSED_PUBLISHED)}};
    }
};

// The words of the fused kernel's release record.
enum FusedRecordWord : unsigned int {
    RECORD_PHASE = 0,
    RECORD_START = 1,
    RECORD_END = 2,
    RECORD_THRESHOLD = 3,
    RECORD_LOW_CURRENT = 4,
    RECORD_LOW_TAKEN = 5,
    RECORD_IN_BEGIN = 6,
    RECORD_IN_END = 7,
    RECORD_PUBLISHED = 8,
};

// The fused kernel's buffers and settings, as the kernel uses them (built from its FusedParams).
struct FusedArgs {
    MinSplitOps ops;
    const unsigned long long* offsets;
    const unsigned int* targets;
    const unsigned int* weights;
    unsigned int* wl_data;
    unsigned int wl_mask;
    unsigned int* ctrl;
    unsigned int* fused;
    const unsigned int* abort;  // the host's abort word (load_abort)
    VertexValue* low[2];  // null when soft priority is off
    unsigned int low_capacity;
    unsigned int prio_delta;
    unsigned int solo_max;
    FusedBarrierConfig barrier;
    // Bounded runs (several devices, one launch per batch of levels between the host's
    // exchanges): the outgoing buffer (vertices other devices own), the levels after which
    // the kernel returns (0: unbounded, one device), and the outgoing items at which it
    // returns early so the host can send them.
    VertexValue* send_data;
    unsigned int send_capacity;
    unsigned int send_base;
    unsigned int level_budget;
    unsigned int send_yield;
    // Device-driven runs (several devices, one persistent kernel each: `peer.size` > 1; see
    // fused.cuh's file comment): the group (mailbox with the termination count PEER_PENDING, start
    // gate, failure word, abort word, timeout), this device's inbox (send_data is the next
    // device's, in its memory) and the next device's ctrl[CTRL_INBOX_PUBLISHED].
    // The inbox is a ring of inbox_capacity items (a power of two), as is the next device's
    // (send_capacity); recv_freed is the previous device's ctrl[CTRL_SEND_FREED], where this
    // device stores the inbox positions it has read.
    PeerGroup peer;
    const VertexValue* inbox;
    unsigned int* send_published;
    unsigned int inbox_capacity;
    unsigned int* recv_freed;

    __device__ __forceinline__ bool bounded() const { return level_budget != 0u; }

    __device__ __forceinline__ bool peered() const { return peer.size > 1u; }

    // PEERED: the device-driven build (the entry macro's; false compiles those paths out).
    template <bool PEERED>
    __device__ __forceinline__ SendBuffer send_buffer(unsigned int* counters) const {
        return SendBuffer{send_data, send_capacity, send_base, counters,
                          PEERED ? ctrl + CTRL_SEND_FREED : nullptr};
    }

    __device__ __forceinline__ LowList low_list(unsigned int index, unsigned int threshold) const {
        return LowList{low[index], low_capacity, threshold, ctrl};
    }

    __device__ __forceinline__ bool filter_loads() const {
        return (barrier.flags & FUSED_DIRECT_MIN) == 0u;
    }

    __device__ __forceinline__ bool solo_filter_loads() const {
        return (barrier.flags & (FUSED_DIRECT_MIN | FUSED_SOLO_DIRECT_MIN)) == 0u;
    }

    // Entries of the single-block mode's shared frontier: its bound, at most
    // SOLO_FRONTIER_ROUNDS per thread (and the build's arrays: SoloFrontierArrays); 0 when
    // FUSED_SOLO_SHARED is off.
    __device__ __forceinline__ unsigned int solo_frontier_capacity() const {
        if ((barrier.flags & FUSED_SOLO_SHARED) == 0u) {
            return 0u;
        }
        const unsigned int rounds = SOLO_FRONTIER_ROUNDS * blockDim.x;
        return solo_max < rounds ? solo_max : rounds;
    }
};

}  // namespace groute
