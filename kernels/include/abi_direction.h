// The device-driven direction-optimizing BFS's shared data (kernels/bfs/bfs_direction_fused.cu,
// direction_fused_words.cuh, direction_fused_run.cuh, direction_fused_decide.cuh): its state
// block, its parameter and its flags. Mirrored by groute_kernels::abi (kernels/abi/direction.rs);
// see abi.h.
#ifndef GROUTE_ABI_DIRECTION_H
#define GROUTE_ABI_DIRECTION_H

#include "abi.h"

#ifdef __cplusplus
namespace groute {
#endif

// The state block, 32 u64 words zeroed by the host: the level counters of this device (zeroed by
// every decide), the run's totals (what the host reads back) and the rule's position.
struct DirectionStateBlock {
    unsigned long long counters[4];      // DIRECTION_COUNTERS words (direction.cuh)
    unsigned long long levels;           // level steps run
    unsigned long long pull_levels;      // of them, pull steps
    unsigned long long items;            // vertices worked on
    unsigned long long arcs;             // arcs read
    unsigned long long status;           // PeerStatus of a failed exchange (0: none)
    unsigned long long exchanges;        // exchanges made (the next one's index)
    unsigned long long started;          // the source's level was decided
    unsigned long long pulling;          // the last step pulled
    unsigned long long previous;         // the previous frontier's vertices (global)
    unsigned long long unvisited_in;     // in-arcs left on unvisited vertices (global)
    unsigned long long reached;          // vertices reached (global)
    unsigned long long frontier;         // the current frontier's vertices (global)
    unsigned long long frontier_out;     // the current frontier's out-arcs (global)
    unsigned long long level;            // the current frontier's level
    unsigned long long unused[6];
    unsigned long long received[8];      // DO_FLAG_SPARSE_PUSH: the list lengths sent, by rank
};

// DirectionStateBlock by u64 word.
GROUTE_ENUM(DoWord){
    DO_COUNTERS = 0,
    DO_LEVELS = 4,
    DO_PULL_LEVELS = 5,
    DO_ITEMS = 6,
    DO_ARCS = 7,
    DO_STATUS = 8,
    DO_EXCHANGES = 9,
    DO_STARTED = 10,
    DO_PULLING = 11,
    DO_PREVIOUS = 12,
    DO_UNVISITED_IN = 13,
    DO_REACHED = 14,
    DO_FRONTIER = 15,
    DO_FRONTIER_OUT = 16,
    DO_LEVEL = 17,
    DO_RECEIVED = 24,
    DO_WORDS = 32,
};
GROUTE_WORD64_AT(DirectionStateBlock, counters, DO_COUNTERS);
GROUTE_WORD64_AT(DirectionStateBlock, levels, DO_LEVELS);
GROUTE_WORD64_AT(DirectionStateBlock, pull_levels, DO_PULL_LEVELS);
GROUTE_WORD64_AT(DirectionStateBlock, items, DO_ITEMS);
GROUTE_WORD64_AT(DirectionStateBlock, arcs, DO_ARCS);
GROUTE_WORD64_AT(DirectionStateBlock, status, DO_STATUS);
GROUTE_WORD64_AT(DirectionStateBlock, exchanges, DO_EXCHANGES);
GROUTE_WORD64_AT(DirectionStateBlock, started, DO_STARTED);
GROUTE_WORD64_AT(DirectionStateBlock, pulling, DO_PULLING);
GROUTE_WORD64_AT(DirectionStateBlock, previous, DO_PREVIOUS);
GROUTE_WORD64_AT(DirectionStateBlock, unvisited_in, DO_UNVISITED_IN);
GROUTE_WORD64_AT(DirectionStateBlock, reached, DO_REACHED);
GROUTE_WORD64_AT(DirectionStateBlock, frontier, DO_FRONTIER);
GROUTE_WORD64_AT(DirectionStateBlock, frontier_out, DO_FRONTIER_OUT);
GROUTE_WORD64_AT(DirectionStateBlock, level, DO_LEVEL);
GROUTE_WORD64_AT(DirectionStateBlock, received, DO_RECEIVED);
GROUTE_WORD64_COUNT(DirectionStateBlock, DO_WORDS);

// The kernel's `flags` (variants the host can A/B; 0: the steps as described above).
GROUTE_ENUM(DoFlag){
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
    // the frontier where it lies in the (ring) worklist. Several devices, with
    // DO_FLAG_PUSH_BITMAP: after a dense push, the pass that applies the received words
    // builds the next frontier from them and the discovery bitmap (apply_marks), reading no
    // level, where apply_and_scan reads the level of every owned vertex.
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
    // without level loads, a warp per nonzero word, is slower than apply_and_scan on a dense
    // level.)
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

// The parameter of the entry points (GROUTE_DIRECTION_FUSED_ENTRY in bfs_direction_fused.cu),
// filled by the typed launch in crates/groute-bfs/src/direction/fused/member.rs. The fields keep
// the order (and so the parameter offsets) of the entry points' former argument lists, with
// their alignment gaps named.
struct DirectionParams {
    unsigned int* levels;                       // the level of every vertex
    const unsigned long long* push_offsets;     // out-arc offsets by global vertex id
    const unsigned int* push_targets;           // out-arc heads by global arc id
    const unsigned long long* pull_offsets;     // in-arc offsets (the push CSR's if symmetric)
    const unsigned int* pull_sources;           // in-arc tails
    unsigned int n;                             // vertices
    unsigned int owned_begin;                   // the vertices this device owns
    unsigned int owned_end;
    unsigned int gap0;
    unsigned int* wl_data;                      // the worklist: wl_mask + 1 vertex ids
    unsigned int wl_mask;
    unsigned int gap1;
    unsigned int* ctrl;                         // the control block (TraversalCtrl), hub slots
    unsigned int* barrier;                      // the grid barrier's block (GridBarrierWords)
    unsigned long long* state;                  // the state block (DirectionStateBlock)
    unsigned int* const* inboxes;               // every member's inbox
    unsigned long long in_arcs;                 // arcs in all (the rule's unvisited in-arcs)
    unsigned long long alpha;                   // the direction rule's alpha (0: push only)
    unsigned long long beta;                    // and beta
    struct PeerGroup group;                     // this member's group
    unsigned long long* trace_words;            // the level trace, or null
    unsigned int flags;                         // DoFlag bits
    unsigned int gap2;
    unsigned long long* const* postboxes;       // every member's postbox
};

#ifdef __cplusplus
}  // namespace groute
#endif

#endif  // GROUTE_ABI_DIRECTION_H
