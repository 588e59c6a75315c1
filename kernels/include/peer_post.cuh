// A cross-device all-reduce (and barrier) of a PeerGroup by direct posts, the alternative to
// peer_allreduce_sum (peer_group.cuh) that needs no remote atomic and no remote polling: each
// device stores its values, then a tag, into its own slot of every other device's postbox
// (in that device's memory), and polls only its own postbox. A wait is one one-way trip over
// the link instead of a remote atomic's round trip plus remote polls. Same contract as
// peer_allreduce_sum: ONE thread per device calls it, every device makes the same sequence of
// calls, `exchange` is the call's index (0, 1, 2, ...), and the failure checks and statuses
// are the same (peer_wait_for).
//
// Postbox (u64 words in each device's memory, zeroed by the host before each run):
// slots[2][PEER_MAX_DEVICES][POST_STRIDE]: exchange e uses parity e & 1; sender r's slot holds
// its values (PEER_MAX_VALUES words) and, at POST_TAG, the tag e + 1 once they are there.
//
// Why it is race-free:
// - Visibility: the sender's values (and, by cumulativity, every peer store that a grid
//   barrier ordered before the calling thread, each followed by __threadfence_system) precede
//   its __threadfence_system and its release store of the tag; the receiver's acquire load of
//   the tag orders its reads of the values (and, after a grid barrier, of those stores).
// - Slot reuse: sender r next writes the slot of parity e & 1 at exchange e + 2, after its
//   exchange e + 1 completed, i.e. after every device posted e + 1, which each does only after
//   it read the values of exchange e. So a tag seen is e + 1 or e - 1, never beyond.
#pragma once

#include "peer_group.cuh"

namespace groute {

enum : unsigned int {
    POST_STRIDE = 16,  // u64 per slot: 128 bytes
    POST_TAG = PEER_MAX_VALUES,
    POST_WORDS = 2u * PEER_MAX_DEVICES * POST_STRIDE,
};

// The all-reduce of the header comment over the postboxes of every device (by rank; this
// device's is postboxes[g.rank]). `count` <= PEER_MAX_VALUES. Returns PEER_OK or why it gave
// up (the sums are then unspecified).
__device__ unsigned int peer_post_allreduce_sum(const PeerGroup& g,
                                                unsigned long long* const* postboxes,
                                                unsigned int exchange,
                                                const unsigned long long* mine,
                                                unsigned long long* sums, unsigned int count) {
    // The start gate (peer_group.cuh): every member running, or the run cancelled.
    const unsigned int gate = peer_start_verdict(g, exchange);
    if (gate != PEER_OK) {
        return gate;
    }
    const unsigned int parity = exchange & 1u;
    const unsigned long long tag = static_cast<unsigned long long>(exchange) + 1ull;
    const unsigned int own_slot = (parity * PEER_MAX_DEVICES + g.rank) * POST_STRIDE;
    for (unsigned int d = 0; d < g.size; ++d) {
        if (d == g.rank) {
            continue;
        }
        for (unsigned int i = 0; i < count; ++i) {
            peer_store_relaxed(postboxes[d] + own_slot + i, mine[i]);
        }
    }
    __threadfence_system();
    for (unsigned int d = 0; d < g.size; ++d) {
        if (d != g.rank) {
            peer_store_release(postboxes[d] + own_slot + POST_TAG, tag);
        }
    }
    for (unsigned int i = 0; i < count; ++i) {
        sums[i] = mine[i];
    }
    const unsigned long long* own = postboxes[g.rank];
    const unsigned long long started = peer_clock_ns();
    for (unsigned int d = 0; d < g.size; ++d) {
        if (d == g.rank) {
            continue;
        }
        const unsigned long long* slot = own + (parity * PEER_MAX_DEVICES + d) * POST_STRIDE;
        const unsigned int status = peer_wait_for(g, slot + POST_TAG, tag, started);
        if (status != PEER_OK) {
            return status;
        }
        for (unsigned int i = 0; i < count; ++i) {
            sums[i] += peer_load_relaxed(slot + i);
        }
    }
    return PEER_OK;
}

}  // namespace groute
