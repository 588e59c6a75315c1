// The fused traversal's state (fused.cuh): the words of the state block, the phases, flags
// and release record, the state held in registers (FusedState) and the kernel's parameters
// (FusedArgs).

#pragma once

#include "cluster_solo.cuh"
#include "grid_barrier.cuh"
#include "peer_group.cuh"
#include "solo_frontier.cuh"
#include "solo_queue.cuh"
#include "traversal.cuh"

namespace groute {

// Words [0, FUSED_BARRIER_WORDS) are the grid barrier's (grid_barrier.cuh, FusedBarrierWord).
enum FusedWord : unsigned int {
    FUSED_PHASE = FUSED_BARRIER_WORDS,  // the phase to run next (FusedPhase)
    FUSED_STOP = 65,           // why the kernel stopped early (FusedStop; 0: it did not)
    FUSED_ROUNDS = 66,         // expand levels run (grid and single-block)
    FUSED_START = 67,          // batch start
    FUSED_PROCESSED = 68,      // items expanded, 64-bit (words 68, 69)
    FUSED_END = 70,            // batch end
    FUSED_THRESHOLD = 71,      // soft priority's threshold (0xFFFFFFFF: nothing deferred)
    FUSED_LOW_CURRENT = 72,    // index (0, 1) of the low list being appended to
    FUSED_LOW_TAKEN = 73,      // items of the other list that REEXAMINE reads
    FUSED_LOW_BASE = 74,       // items the last REEXAMINE left in the current list
    FUSED_EPOCHS = 75,         // threshold advances
    FUSED_DEFERRED = 76,       // items expansions deferred, 64-bit (words 76, 77)
    FUSED_STALE = 78,          // superseded deferred items dropped, 64-bit (words 78, 79)
    FUSED_SOLO_ROUNDS = 80,    // of FUSED_ROUNDS, the levels run in single-block mode
    FUSED_PHASES = 81,         // phases run (abort polling)
    FUSED_UNLISTED = 82,       // items produced that the worklist's end does not count, 64-bit
                               // two's complement (words 82, 83): SOLO-ASYNC's ring items
                               // less its entry items written again (solo_queue.cuh)
    FUSED_IN_BEGIN = 84,       // device-driven runs: the inbox items [IN_BEGIN, IN_END) the
    FUSED_IN_END = 85,         // next phase receives; IN_END: every item taken so far
    FUSED_PUBLISHED = 86,      // device-driven runs: outgoing items published to the next device
    FUSED_PEER_GO = 87,        // device-driven runs: this member passed the start gate
    // Words [FUSED_SOLO_WORDS, FUSED_WORDS) are block 0's in SOLO (the others the actions'):
    FUSED_SOLO_WORDS = 88,
    FUSED_SOLO_START = 88,     // the batch SOLO left: start
    FUSED_SOLO_END = 89,       // and end
    FUSED_SOLO_LEVELS = 90,    // levels of the last SOLO phase
    FUSED_SOLO_ABORT = 91,     // SOLO saw the abort word set
    FUSED_SOLO_PROCESSED = 92, // items of the last SOLO phase, 64-bit (words 92, 93)
    FUSED_SOLO_UNLISTED = 94,  // items it produced and expanded without listing them:
                               // SOLO-ASYNC's ring items, the cluster mode's levels (0 for
                               // SOLO levels on one block)
    FUSED_SOLO_RELISTED = 95,  // SOLO-ASYNC: entry items it wrote again (0 otherwise)
    // Device-driven runs (the peer builds):
    FUSED_SOLO_PUBLISHED = 96, // the sends it counted (FUSED_PUBLISHED)
    FUSED_SOLO_TAKEN = 97,     // the inbox items it took (FUSED_IN_END)
    FUSED_SOLO_US = 98,        // GROUTE_TRACE_CLUSTER builds: the cluster mode's phases'
                               // time, global-timer microseconds (block 0's thread 0 adds
                               // each phase's)
    FUSED_TRACE_LEVEL = 99,    // GROUTE_TRACE_LEVEL builds: the first cluster phase that ran
                               // N levels: SM MHz << 20 | microseconds from its start to then
    FUSED_WORDS = 100,
};

enum FusedPhase : unsigned int {
    FUSED_PHASE_DONE = 0,
    FUSED_PHASE_EXPAND = 1,
    FUSED_PHASE_SOLO = 2,
    FUSED_PHASE_HUBS = 3,
    FUSED_PHASE_REEXAMINE = 4,
    FUSED_PHASE_STOP = 5,
};

enum FusedStop : unsigned int {
    FUSED_STOP_NONE = 0,
    FUSED_STOP_OVERFLOW = 1,
    FUSED_STOP_ABORTED = 2,
    // Device-driven runs: FUSED_STOP_PEER + the PeerStatus of a failed wait (a peer failed,
    // the abort word, the group's timeout, a cancelled start).
    FUSED_STOP_PEER = 16,
    FUSED_ABORT_POLL = 64,
};

// Flags of the fused traversal carried in the grid barrier's flag word (FusedBarrierConfig's
// `flags`, beside grid_barrier.cuh's FusedBarrierFlag bits).
enum FusedKernelFlag : unsigned int {
    // The thread-granularity relaxation of the fused kernel's expands tries atomicMin at once,
    // without the filtering plain load (traversal_expand's filter_loads = false).
    FUSED_DIRECT_MIN = 4u,
    // The single-block mode keeps its next level's items in a shared-memory frontier
    // (solo_frontier.cuh) instead of reading them and their offsets from global memory.
    FUSED_SOLO_SHARED = 8u,
    // The single-block mode relaxes without the filtering load (FUSED_DIRECT_MIN for SOLO
    // levels only).
    FUSED_SOLO_DIRECT_MIN = 16u,
    // The single-block mode runs SOLO-ASYNC (solo_queue.cuh: a barrier-free FIFO work queue
    // in shared memory) instead of levels, where it can: the wide build, one device
    // (unbounded), soft priority off; SOLO levels elsewhere.
    FUSED_SOLO_ASYNC = 32u,
};

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

// The fused kernel's buffers and settings (the kernel's parameters).
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

    // Whether a SOLO phase runs SOLO-ASYNC (FUSED_SOLO_ASYNC, in a build with a ring).
    __device__ __forceinline__ bool solo_async() const {
        return (barrier.flags & FUSED_SOLO_ASYNC) != 0u && !bounded() && !peered();
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
