// The device-driven direction-optimizing BFS's words (kernels/bfs/bfs_direction_fused.cu): the
// state block's words, phases, flags (DoFlag, with what each measured), replication modes and
// release record, and the direction rule's arithmetic.

#pragma once

#include "direction.cuh"
#include "direction_trace.cuh"
#include "grid_barrier.cuh"
#include "peer_group.cuh"
#include "peer_post.cuh"

namespace groute {

// The u64 words of the state block: the level counters of this device (DIRECTION_*, zeroed by
// every decide), the run's totals (what the host reads back) and the rule's position.
enum DoWord : unsigned int {
    DO_COUNTERS = 0,          // DIRECTION_COUNTERS words
    DO_LEVELS = 4,            // level steps run
    DO_PULL_LEVELS = 5,       // of them, pull steps
    DO_ITEMS = 6,             // vertices worked on
    DO_ARCS = 7,              // arcs read
    DO_STATUS = 8,            // PeerStatus of a failed exchange (0: none)
    DO_EXCHANGES = 9,         // exchanges made (the next one's index)
    DO_STARTED = 10,          // the source's level was decided
    DO_PULLING = 11,          // the last step pulled
    DO_PREVIOUS = 12,         // the previous frontier's vertices (global)
    DO_UNVISITED_IN = 13,     // in-arcs left on unvisited vertices (global)
    DO_REACHED = 14,          // vertices reached (global)
    DO_FRONTIER = 15,         // the current frontier's vertices (global)
    DO_FRONTIER_OUT = 16,     // the current frontier's out-arcs (global)
    DO_LEVEL = 17,            // the current frontier's level
    DO_RECEIVED = 24,         // DO_FLAG_SPARSE_PUSH: the list lengths sent, by rank
    DO_WORDS = 32,
};

enum DoPhase : unsigned int { DO_DONE = 0, DO_PUSH = 1, DO_PULL = 2, DO_STOP = 3 };

enum : unsigned int {
    DO_ABORT_POLL = 4,
    DO_BLOCK = 256,
    SEND_BATCH = 4,
    SCAN_BATCH = 2,
    // decide()'s `own` when the counters count this device's owned finds only.
    DO_COUNTED_HERE = 0xFFFFFFFFu,
    // DO_FLAG_SPARSE_PUSH: a push level is sparse when its frontier's out-arcs (summed over
    // the devices) times this are at most n: it appends at most n / 64 < ceil(n / 32)
    // vertices per device, so a list fits in an inbox slot.
    SPARSE_DIVISOR = 64,
    // DO_FLAG_REPLICATE: a push step is replicated when its frontier's out-arcs times this
    // are at most n. Measured on kron21 (2 x H200): from the first vertex 4 and 64 ran alike
    // (0.306 and 0.309 ms); from the vertex of largest degree, whose first push has 209,642
    // arcs (n / 10), 4 ran 0.221-0.225 ms, 64 0.261-0.266 and 1 0.220.
    REPLICATE_DIVISOR = 4,
};

// The kernel's `flags` (variants the host can A/B; 0: the steps as described above).
enum DoFlag : unsigned int {
    // A pull step builds the next frontier itself (appends its finds, adds their degrees to
    // the counters) and stores its warps' ballots of finds straight into the peers' inboxes:
    // no grid barrier between the pull and the exchange, no send pass, and the pass after
    // the exchange only applies the received words (one device: straight to the decide).
    // Exact: after a pull, a device's owned vertices at L + 1 are exactly its own finds.
    DO_FLAG_PULL_FRONTIER = 1,
    // The passes that build a frontier (the scan, a DO_FLAG_PULL_FRONTIER pull) count their
    // finds per warp and reserve the warp's worklist slots with ONE atomic at the end, then
    // append them in a second sweep over the same words (their levels still in L2), instead
    // of one atomic on the worklist's end per word with finds: up to 32x fewer atomics on
    // that one address on a big frontier.
    DO_FLAG_WARP_RESERVE = 2,
    // The exchanges are peer_post_allreduce_sum (peer_post.cuh: values and a tag stored into
    // every peer's postbox, each device polling its own) instead of peer_allreduce_sum (a
    // system-scope atomic on device 0's mailbox, polled over the link).
    DO_FLAG_POST_EXCHANGE = 4,
    // apply_and_scan handles SCAN_BATCH words per warp and iteration, loading all their
    // levels and inbox words before using the first (more loads in flight per warp).
    DO_FLAG_SCAN_BATCH = 8,
    // One device: a push step's appends (every improved head, each once) are the next
    // frontier: no rewind after the push, no scan over every vertex; a pass over the
    // appended items adds their degrees and number to the counters, and the next push reads
    // the frontier where it lies in the (ring) worklist. Several devices: no effect.
    DO_FLAG_PUSH_FRONTIER = 16,
    // Several devices: a push level whose frontier has few out-arcs (SPARSE_DIVISOR, decided
    // alike on every device from the global counts) sends the list of its appends (every
    // vertex it set to L + 1, each once) instead of the bitmap words of the whole level
    // array, and builds the next frontier from its appends (the owned ones, in the same pass
    // as the send) and the received lists (a vertex whose level the receiver sets first):
    // no pass over every word or every owned vertex. The appends stay in the worklist; the
    // next frontier is appended behind them.
    DO_FLAG_SPARSE_PUSH = 32,
    // Several devices: one exchange per level instead of two where the counters need no
    // exchange of their own. With DO_FLAG_PULL_FRONTIER, a pull level's counters are
    // complete before its exchange (each device finds only owned vertices, none twice), so
    // they travel with that exchange and the decide runs in its action; the received words
    // are applied after it, behind a grid barrier of this device only. With
    // DO_FLAG_SPARSE_PUSH, a sparse push level's counters are counted globally on every
    // device (every vertex of the union of the devices' appends once: its own appends and
    // the received entries whose level it sets first), so the decide needs no exchange.
    // The inboxes are double-buffered by level parity, so a peer already storing the next
    // level's words never meets this level's.
    DO_FLAG_ONE_EXCHANGE = 64,
    // The hub phase relaxes THREAD_ARCS consecutive arcs per thread and step, their loads
    // and atomics in flight together (traversal_expand_hubs<..., BATCHED>), instead of one.
    DO_FLAG_HUB_BATCH = 128,
    // Several devices, with DO_FLAG_SPARSE_PUSH: a sparse push stores each vertex it appends
    // into its list in every peer's inbox as it appends it (PushAppends), so the exchange
    // of the list lengths runs in the action of the step's own grid barrier (or of the hub
    // phase's): no send pass and no grid barrier of its own; the owned appends and the
    // received lists then build the next frontier in one pass.
    DO_FLAG_LISTED_PUSH = 256,
    // Several devices: a dense push (one that sends words, not lists) also sets each vertex
    // it appends in a discovery bitmap of this device (`marks`: words() u32 behind the inbox
    // halves, zero between levels) with a reduction (PushAppends: nothing waits for it), so
    // its send pass reads that bitmap (send_marks, which clears it) instead of the levels of
    // every vertex. (Building the next frontier from the bitmap and the received words
    // without level loads, a warp per nonzero word, was slower than apply_and_scan: 40 µs
    // against 28 on kron21's dense level.)
    DO_FLAG_PUSH_BITMAP = 512,
    // Several devices: replicated levels. A push step whose frontier is on every device's
    // worklist and has few out-arcs (REPLICATE_DIVISOR) runs whole on every device (each
    // holds the same level array; the host uploads the whole graph to every device for
    // this flag, where each otherwise holds its owned rows): every device finds the same vertices,
    // so the next frontier is again on every device, its counters are global, and the step
    // makes no exchange at all. The frontier is on every device at the start (the host puts
    // the source in every worklist), after a replicated step (its appends), and after a pull
    // with DO_FLAG_ONE_EXCHANGE whose decide replicates the next step (the pass that applies
    // the received words appends them too). A step that is not replicated from a frontier
    // on every device expands its owned items only.
    DO_FLAG_REPLICATE = 1024,
};

// What the step of a decide did and built (its trace row's TRACE_REPLICATION word).
enum DoReplication : unsigned int {
    DO_STEP_REPLICATED = 1,   // the step ran whole on every device, no exchange
    DO_FOUND_EVERYWHERE = 2,  // the frontier it found is on every device's worklist
};

// The record of a decide (FusedRecord words).
enum DoRecord : unsigned int {
    DO_R_PHASE = 0,
    DO_R_LEVEL = 1,
    DO_R_COUNT = 2,
    DO_R_HUBS = 3,
    DO_R_SPARSE = 4,  // the push sends lists (DO_FLAG_SPARSE_PUSH)
    DO_R_REPLICATED = 5,  // the push runs whole on every device (DO_FLAG_REPLICATE)
};

__device__ __forceinline__ unsigned long long saturating_mul(unsigned long long a,
                                                             unsigned long long b) {
    return __umul64hi(a, b) != 0ull ? ~0ull : a * b;
}

// SwitchRule::pulls (crates/groute-bfs/src/direction/rule.rs), the reference: whether the step
// after a frontier of `frontier` vertices and `out_arcs` out-arcs pulls.
__device__ __forceinline__ bool direction_pulls(unsigned long long alpha,
                                                unsigned long long beta, bool pulling,
                                                unsigned long long frontier,
                                                unsigned long long out_arcs,
                                                unsigned long long previous_frontier,
                                                unsigned long long unvisited_in_arcs,
                                                unsigned long long n) {
    if (pulling) {
        return frontier >= previous_frontier || saturating_mul(frontier, beta) > n;
    }
    return alpha != 0ull && saturating_mul(out_arcs, alpha) > unvisited_in_arcs;
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
