// The fused traversal's SOLO phase on several devices (fused.cuh): the peer warp, the block's
// last warp, which receives, counts and releases while the other warps run the levels
// (SoloPeerWarp).

#pragma once

#include "fused_next.cuh"

namespace groute {

// Device-driven runs, SOLO: how often block 0 counts and releases what it sent (levels).
// A release is a system-scope fence, which every level would pay; releasing less often sends
// later, and the receiver then re-expands more. Every 4 levels balances the two.
enum : unsigned int { SOLO_RELEASE_LEVELS = 4 };

// The same in the cluster mode, where the release follows the peer warp's arrival at the
// level's barrier (SoloPeerWarp::after_arrive) and so is off the level's path: releasing every
// level costs no more than every few, and publishes sooner. GROUTE_CLUSTER_RELEASE_LEVELS
// overrides it at compile time, for comparisons.
#ifndef GROUTE_CLUSTER_RELEASE_LEVELS
#define GROUTE_CLUSTER_RELEASE_LEVELS 1
#endif
enum : unsigned int { CLUSTER_RELEASE_LEVELS = GROUTE_CLUSTER_RELEASE_LEVELS };

// Device-driven runs, SOLO: SplitReceive by one warp (SOLO's peer warp) on the inbox items
// [from, to), appending kept items through `appends` (the level's worklist and frontier),
// passing the others on. Every lane of the warp calls it.
template <typename Appends>
__device__ __forceinline__ void solo_receive(const FusedArgs& a, unsigned int from,
                                             unsigned int to, const Appends& appends,
                                             const SendBuffer& send, const LowList& low) {
    const unsigned int count = to - from;
    const unsigned int mask = a.inbox_capacity - 1u;
    for (unsigned int first = 0; first < count; first += 32u) {
        const unsigned int i = first + lane_id();
        unsigned int flags = SF_DROP;
        VertexValue p;
        p.vertex = 0;
        p.value = 0;
        if (i < count) {
            p = a.inbox[(from + i) & mask];
            flags = a.ops.on_receive(p);
        }
        keep_or_defer(appends, low, p.vertex, p.value, (flags & SF_KEEP) != 0u);
        send.append_warp(p, (flags & SF_PASS) != 0u);
    }
}

// Device-driven runs: the peer warp's share of the protocol in a SOLO phase (the block's last
// warp: of block 0 in fused_solo, of the cluster's block 0 in the cluster mode). Each level
// its lane 0 reads (read_level) the inbox's published end (relaxed), the sends' end and the
// inbox positions the finished levels read. In fused_solo the warp also expands its share of
// the level: it reads at the level's start (before_level), so that the round trips overlap
// the level, and receives after its share (after_expand). In the cluster mode it expands
// nothing and runs a loop of its own beside the level loop (cluster_solo_run): it reads and
// receives at once (turn), while the other warps expand the level. Receiving: if the inbox's
// end moved, the warp fences (acquire) and receives up to it (solo_receive; __syncwarp
// carries the fence to the other lanes) into the level's appends, then takes the items out
// of PEER_PENDING. Lane 0 also frees the positions the finished levels read and counts and
// releases the sends (settle): in fused_solo before receiving, every SOLO_RELEASE_LEVELS
// levels; in the cluster mode every CLUSTER_RELEASE_LEVELS levels between its arrival at the
// level's closing barrier and its wait (after_arrive), off the path of the other blocks'
// wait. The words it keeps across levels are in shared memory
// (`words`), lane 0's reads of a level in SoloPeerReads, which the caller passes from the
// read to the settle; every word it writes is read after a closing barrier (the report; in the
// cluster mode after a block barrier that follows the last cluster barrier, since it writes
// after arriving there) or by its lane 0 alone.
//
// Which sends a release may cover: only those whose items are written. In fused_solo the
// level's appends start after solo_expand's vote, so the end read before it is complete
// (LAGGED false). In the cluster mode the other warps may already append the level's sends
// when lane 0 reads the end, so it releases the end it read a level before (LAGGED true):
// every reservation that end counts is of a level before, whose items were written before
// that level's closing cluster barrier.
struct SoloPeerWords {
    unsigned int taken;    // inbox items received (the end taken)
    unsigned int freed;    // inbox positions freed to the sender
    unsigned int counted;  // sends counted in PEER_PENDING and released
    unsigned int seen;     // LAGGED: the sends' end read a level before
};

// Lane 0's reads of one level (read_level; zero on the other threads): the inbox's published
// end, the sends' end to release and the inbox positions the finished levels read. The caller
// holds them from the read to the settle of the same level only: kept in the object, they
// would be live through every level on every thread (the other lanes never overwrite theirs),
// and in the cluster build they would push the destination's addresses out to local memory,
// reloaded after each barrier, whose acquire invalidates the L1, before anything else of the
// level. Held by the caller, BFS's member build spills nothing, and runs faster for it.
// SSSP's would still spill the addresses, so its members map them at use (ClusterWorklist).
// (The cluster mode's peer warp runs a loop of its own, and the level loop holds no reads.)
struct SoloPeerReads {
    unsigned int now = 0u;
    unsigned int sent = 0u;
    unsigned int read = 0u;
};

// Every thread holds the object through the levels, so it keeps nothing but the two
// references (the kernel's arguments and a shared-memory address): which warp is the peer
// warp is recomputed where asked, and the sends' counter is the one of the level's SendBuffer.
template <bool PEERED, bool LAGGED>
struct SoloPeerWarp {
    const FusedArgs& a;
    SoloPeerWords& words;

    // Whether a peer warp exists (device-driven builds).
    static constexpr bool ACTIVE = PEERED;

    __device__ __forceinline__ SoloPeerWarp(const FusedArgs& args, SoloPeerWords& w)
        : a(args), words(w) {}

    // This thread's warp is the peer warp: block 0's last (warp-uniform).
    __device__ __forceinline__ static bool warp() {
        return PEERED && blockIdx.x == 0u && threadIdx.x / 32u == (blockDim.x - 1u) / 32u;
    }

    // The cluster mode: the threads of the block of rank `rank` in cluster 0 that expand
    // items, from thread 0 (all of them but the peer warp, which expands none; cluster 0's
    // rank 0 is block 0). On the rank, not blockIdx.x: the same test on blockIdx.x moves the
    // members' BFS build to a slower code layout, and on the rank its SASS keeps the fast
    // one.
    __device__ __forceinline__ static unsigned int expanders(unsigned int rank) {
        return PEERED && rank == 0u ? (blockDim.x - 1u) / 32u * 32u : blockDim.x;
    }

    // And this thread is its lane 0.
    __device__ __forceinline__ static bool lane() { return warp() && lane_id() == 0u; }

    // Thread 0 of the block whose last warp is the peer warp, before the phase's first
    // barrier: the inbox items taken and the sends counted so far.
    __device__ __forceinline__ void start(unsigned int inbox_taken, unsigned int sends_counted) {
        words.taken = inbox_taken;
        words.freed = inbox_taken;
        words.counted = sends_counted;
        words.seen = sends_counted;
    }

    // fused_solo, at the level's start: the reads, so that the round trips overlap the level
    // (after_expand takes them).
    __device__ __forceinline__ SoloPeerReads before_level(const SendBuffer& send) const {
        static_assert(!LAGGED, "the cluster mode's peer warp reads in turn");
        return read_level(send.ctrl);
    }

    // fused_solo, after the warp's share of level `levels` (counted from 1), before the
    // level's closing barrier: free and release the `before` reads, and receive.
    template <typename Appends>
    __device__ __forceinline__ void after_expand(unsigned int levels, const Appends& appends,
                                                 const SendBuffer& send, const LowList& low,
                                                 const SoloPeerReads& before) const {
        static_assert(!LAGGED, "the cluster mode's peer warp calls turn and after_arrive");
        if (!warp()) {
            return;
        }
        settle(levels, before);
        receive(before, appends, send, low);
    }

    // The cluster mode (LAGGED), the peer warp's whole share of a level before its closing
    // barrier (it expands none of the level's items): reads and receives into the level's
    // appends (`appends`: the warp's destination's). Returns the reads that after_arrive
    // settles. Called by the peer warp only, all 32 lanes.
    template <typename Appends>
    __device__ __forceinline__ SoloPeerReads turn(const Appends& appends,
                                                  const SendBuffer& send,
                                                  const LowList& low) const {
        static_assert(LAGGED, "fused_solo's peer warp calls before_level and after_expand");
        const SoloPeerReads reads = read_level(send.ctrl);
        receive(reads, appends, send, low);
        return reads;
    }

    // The cluster mode (LAGGED), between the peer warp's arrival at level `levels`' closing
    // barrier and its wait there: free and release (`reads`: turn's). Nothing the level's
    // barrier orders depends on them, so the system-scope fence of a release (which waits for
    // the termination count's remote reductions) overlaps the barrier and the next level's
    // start instead of delaying every block's wait. Called by the peer warp only, all 32
    // lanes; it reconverges before returning (the barrier's wait is .aligned).
    __device__ __forceinline__ void after_arrive(unsigned int levels,
                                                 const SoloPeerReads& reads) const {
        static_assert(LAGGED, "fused_solo's peer warp settles in after_expand");
        settle(levels, reads);
        __syncwarp();
    }

  private:
    // Receives the inbox items [reads.read, reads.now) (lane 0's reads) into `appends`. The
    // fence pattern's acquire (the load observed the sender's release), paid only when the
    // end moved: ld.acquire would invalidate the SM's L1 every level.
    template <typename Appends>
    __device__ __forceinline__ void receive(const SoloPeerReads& reads, const Appends& appends,
                                            const SendBuffer& send, const LowList& low) const {
        const unsigned int to = __shfl_sync(0xFFFFFFFFu, reads.now, 0);
        const unsigned int from = __shfl_sync(0xFFFFFFFFu, reads.read, 0);
        if (to != from) {
            if (lane()) {
                peer_fence_acquire();
            }
            __syncwarp();
            solo_receive(a, from, to, appends, send, low);
            if (lane()) {
                peer_count(a, 0ull - static_cast<unsigned long long>(to - from));
                words.taken = to;
            }
        }
    }

    // Lane 0: the inbox's published end, the sends' end (LAGGED: the one read a level before,
    // keeping this one for the next level) and the inbox positions the finished levels read.
    // `ctrl`: the control words holding the sends' end (the level's SendBuffer's).
    __device__ __forceinline__ SoloPeerReads read_level(const unsigned int* ctrl) const {
        SoloPeerReads reads;
        if (lane()) {
            reads.now = peer_load_relaxed_u32(a.ctrl + CTRL_INBOX_PUBLISHED);
            const unsigned int sends_end =
                *const_cast<const volatile unsigned int*>(ctrl + CTRL_SEND_END);
            if (LAGGED) {
                reads.sent = words.seen;
                words.seen = sends_end;
            } else {
                reads.sent = sends_end;
            }
            reads.read = words.taken;
        }
        return reads;
    }

    // Lane 0: frees the inbox positions the finished levels read; every `release_levels`
    // levels counts and releases the sends' end read_level took.
    __device__ __forceinline__ void settle(unsigned int levels, const SoloPeerReads& reads) const {
        if (!lane()) {
            return;
        }
        if (reads.read != words.freed) {
            peer_store_relaxed_u32(a.recv_freed, reads.read);
            words.freed = reads.read;
        }
        constexpr unsigned int release_levels =
            LAGGED ? CLUSTER_RELEASE_LEVELS : SOLO_RELEASE_LEVELS;
        if (reads.sent != words.counted && levels % release_levels == 0u) {
            peer_count(a, reads.sent - words.counted);
            peer_count_batch(a);
            peer_release(a, reads.sent);
            words.counted = reads.sent;
        }
    }
};

}  // namespace groute
