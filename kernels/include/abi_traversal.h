// The min traversals' shared data (traversal.cuh, fused.cuh; BFS and SSSP, and the
// direction-optimizing BFS's worklist): the control block, the fused kernel's state block and
// its parameters. Mirrored by groute_kernels::abi (kernels/abi/traversal.rs); see abi.h.
#ifndef GROUTE_ABI_TRAVERSAL_H
#define GROUTE_ABI_TRAVERSAL_H

#include "abi.h"

#ifdef __cplusplus
namespace groute {
#endif

// A traversal's control block: 16 words, followed in the same buffer by the hub list's slots
// (traversal.cuh). The producers reserve with atomics on the ends; an append past a capacity
// writes nothing and records the size it needed in the matching overflow word.
struct TraversalCtrl {
    unsigned int wl_end;             // the local worklist's end (monotone positions)
    unsigned int send_end;           // the outgoing buffer's end (monotone)
    unsigned int wl_overflow;        // the worklist capacity an append needed
    unsigned int send_overflow;      // the outgoing capacity an append needed
    unsigned long long hub_counts;   // low word: hubs recorded; high word: their tiles
    unsigned int hub_capacity;       // hub slots (set by the host)
    unsigned int send_freed;         // device-driven runs: positions of this device's outgoing
                                     // ring the next device has read (stored by it)
    unsigned int low_end;            // soft priority: the low list's append counter
    unsigned int low_overflow;       // the low list capacity an append needed
    unsigned int low_min;            // the smallest priority deferred since the host reset it
    unsigned int inbox_published;    // device-driven runs: items the previous device has
                                     // published into this device's inbox (stored by it)
    unsigned int send_batches;       // device-driven runs: batches of sends counted and
                                     // published to the next device (its messages)
    unsigned int unused[3];
};

// TraversalCtrl by word (the kernels index the control block as words: the hub slots follow
// it, and ctrl + CTRL_SEND_FREED is a peer's store target).
GROUTE_ENUM(CtrlWord){
    CTRL_WL_END = 0,
    CTRL_SEND_END = 1,
    CTRL_WL_OVERFLOW = 2,
    CTRL_SEND_OVERFLOW = 3,
    CTRL_HUB_COUNT = 4,
    CTRL_HUB_CAP = 6,
    CTRL_SEND_FREED = 7,
    CTRL_LOW_END = 8,
    CTRL_LOW_OVERFLOW = 9,
    CTRL_LOW_MIN = 10,
    CTRL_INBOX_PUBLISHED = 11,
    CTRL_SEND_BATCHES = 12,
    TRAVERSAL_CTRL_WORDS = 16,
};
GROUTE_WORD_AT(TraversalCtrl, wl_end, CTRL_WL_END);
GROUTE_WORD_AT(TraversalCtrl, send_end, CTRL_SEND_END);
GROUTE_WORD_AT(TraversalCtrl, wl_overflow, CTRL_WL_OVERFLOW);
GROUTE_WORD_AT(TraversalCtrl, send_overflow, CTRL_SEND_OVERFLOW);
GROUTE_WORD_AT(TraversalCtrl, hub_counts, CTRL_HUB_COUNT);
GROUTE_WORD_AT(TraversalCtrl, hub_capacity, CTRL_HUB_CAP);
GROUTE_WORD_AT(TraversalCtrl, send_freed, CTRL_SEND_FREED);
GROUTE_WORD_AT(TraversalCtrl, low_end, CTRL_LOW_END);
GROUTE_WORD_AT(TraversalCtrl, low_overflow, CTRL_LOW_OVERFLOW);
GROUTE_WORD_AT(TraversalCtrl, low_min, CTRL_LOW_MIN);
GROUTE_WORD_AT(TraversalCtrl, inbox_published, CTRL_INBOX_PUBLISHED);
GROUTE_WORD_AT(TraversalCtrl, send_batches, CTRL_SEND_BATCHES);
GROUTE_WORD_COUNT(TraversalCtrl, TRAVERSAL_CTRL_WORDS);

// The fused traversal's state block (fused.cuh): the grid barrier's words, then the run's
// state, which the kernel keeps in registers between phases (FusedState) and stores for the
// host. The 64-bit counters are pairs of words, low word first.
struct FusedStateBlock {
    struct GridBarrierWords barrier;
    unsigned int phase;                  // the phase to run next (FusedPhase)
    unsigned int stop;                   // why the kernel stopped early (FusedStop; 0: it did not)
    unsigned int rounds;                 // expand levels run (grid and single-block)
    unsigned int start;                  // batch start
    unsigned long long processed;        // items expanded
    unsigned int end;                    // batch end
    unsigned int threshold;              // soft priority's threshold (0xFFFFFFFF: none deferred)
    unsigned int low_current;            // index (0, 1) of the low list being appended to
    unsigned int low_taken;              // items of the other list that REEXAMINE reads
    unsigned int low_base;               // items the last REEXAMINE left in the current list
    unsigned int epochs;                 // threshold advances
    unsigned long long deferred;         // items expansions deferred
    unsigned long long stale;            // superseded deferred items dropped
    unsigned int solo_rounds;            // of `rounds`, the levels run in single-block mode
    unsigned int phases;                 // phases run (abort polling)
    // Items produced that the worklist's end does not count: the cluster mode's intermediate
    // levels (cluster_solo.cuh).
    unsigned long long unlisted;
    unsigned int in_begin;               // device-driven runs: the inbox items [in_begin, in_end)
    unsigned int in_end;                 // the next phase receives; in_end: all taken so far
    unsigned int published;              // device-driven runs: items published to the next device
    unsigned int peer_go;                // device-driven runs: this member passed the start gate
    // From here on block 0's words in the single-block mode (SOLO); the others the actions'.
    unsigned int solo_start;             // the batch SOLO left: start
    unsigned int solo_end;               // and end
    unsigned int solo_levels;            // levels of the last SOLO phase
    unsigned int solo_abort;             // SOLO saw the abort word set
    unsigned long long solo_processed;   // items of the last SOLO phase
    // Items SOLO produced and expanded without listing them: the cluster mode's levels (0 for
    // SOLO levels on one block).
    unsigned int solo_unlisted;
    unsigned int solo_pad;               // 0: completes the quad SOLO stores from solo_processed
    unsigned int solo_published;         // device-driven runs: the sends it counted (`published`)
    unsigned int solo_taken;             // device-driven runs: the inbox items it took (`in_end`)
    // GROUTE_TRACE_CLUSTER builds: the cluster mode's phases' time, global-timer microseconds
    // (block 0's thread 0 adds each phase's).
    unsigned int solo_us;
    // GROUTE_TRACE_LEVEL builds: the first cluster phase that ran N levels:
    // SM MHz << 20 | microseconds from its start to then.
    unsigned int trace_level;
};

// FusedStateBlock by word (the kernel keeps [FUSED_PHASE, FUSED_WORDS) in registers: FusedState).
GROUTE_ENUM(FusedWord){
    FUSED_PHASE = 64,
    FUSED_STOP = 65,
    FUSED_ROUNDS = 66,
    FUSED_START = 67,
    FUSED_PROCESSED = 68,
    FUSED_END = 70,
    FUSED_THRESHOLD = 71,
    FUSED_LOW_CURRENT = 72,
    FUSED_LOW_TAKEN = 73,
    FUSED_LOW_BASE = 74,
    FUSED_EPOCHS = 75,
    FUSED_DEFERRED = 76,
    FUSED_STALE = 78,
    FUSED_SOLO_ROUNDS = 80,
    FUSED_PHASES = 81,
    FUSED_UNLISTED = 82,
    FUSED_IN_BEGIN = 84,
    FUSED_IN_END = 85,
    FUSED_PUBLISHED = 86,
    FUSED_PEER_GO = 87,
    // Words [FUSED_SOLO_WORDS, FUSED_WORDS) are block 0's in SOLO (the others the actions',
    // which fused_next.cuh stores four at a time: both ends on 16-byte boundaries).
    FUSED_SOLO_WORDS = 88,
    FUSED_SOLO_START = 88,
    FUSED_SOLO_END = 89,
    FUSED_SOLO_LEVELS = 90,
    FUSED_SOLO_ABORT = 91,
    FUSED_SOLO_PROCESSED = 92,
    FUSED_SOLO_UNLISTED = 94,
    FUSED_SOLO_PAD = 95,
    FUSED_SOLO_PUBLISHED = 96,
    FUSED_SOLO_TAKEN = 97,
    FUSED_SOLO_US = 98,
    FUSED_TRACE_LEVEL = 99,
    FUSED_WORDS = 100,
};
GROUTE_WORD_AT(FusedStateBlock, phase, FUSED_PHASE);
GROUTE_WORD_AT(FusedStateBlock, phase, FUSED_BARRIER_WORDS);
GROUTE_WORD_AT(FusedStateBlock, stop, FUSED_STOP);
GROUTE_WORD_AT(FusedStateBlock, rounds, FUSED_ROUNDS);
GROUTE_WORD_AT(FusedStateBlock, start, FUSED_START);
GROUTE_WORD_AT(FusedStateBlock, processed, FUSED_PROCESSED);
GROUTE_WORD_AT(FusedStateBlock, end, FUSED_END);
GROUTE_WORD_AT(FusedStateBlock, threshold, FUSED_THRESHOLD);
GROUTE_WORD_AT(FusedStateBlock, low_current, FUSED_LOW_CURRENT);
GROUTE_WORD_AT(FusedStateBlock, low_taken, FUSED_LOW_TAKEN);
GROUTE_WORD_AT(FusedStateBlock, low_base, FUSED_LOW_BASE);
GROUTE_WORD_AT(FusedStateBlock, epochs, FUSED_EPOCHS);
GROUTE_WORD_AT(FusedStateBlock, deferred, FUSED_DEFERRED);
GROUTE_WORD_AT(FusedStateBlock, stale, FUSED_STALE);
GROUTE_WORD_AT(FusedStateBlock, solo_rounds, FUSED_SOLO_ROUNDS);
GROUTE_WORD_AT(FusedStateBlock, phases, FUSED_PHASES);
GROUTE_WORD_AT(FusedStateBlock, unlisted, FUSED_UNLISTED);
GROUTE_WORD_AT(FusedStateBlock, in_begin, FUSED_IN_BEGIN);
GROUTE_WORD_AT(FusedStateBlock, in_end, FUSED_IN_END);
GROUTE_WORD_AT(FusedStateBlock, published, FUSED_PUBLISHED);
GROUTE_WORD_AT(FusedStateBlock, peer_go, FUSED_PEER_GO);
GROUTE_WORD_AT(FusedStateBlock, solo_start, FUSED_SOLO_WORDS);
GROUTE_WORD_AT(FusedStateBlock, solo_start, FUSED_SOLO_START);
GROUTE_WORD_AT(FusedStateBlock, solo_end, FUSED_SOLO_END);
GROUTE_WORD_AT(FusedStateBlock, solo_levels, FUSED_SOLO_LEVELS);
GROUTE_WORD_AT(FusedStateBlock, solo_abort, FUSED_SOLO_ABORT);
GROUTE_WORD_AT(FusedStateBlock, solo_processed, FUSED_SOLO_PROCESSED);
GROUTE_WORD_AT(FusedStateBlock, solo_unlisted, FUSED_SOLO_UNLISTED);
GROUTE_WORD_AT(FusedStateBlock, solo_pad, FUSED_SOLO_PAD);
GROUTE_WORD_AT(FusedStateBlock, solo_published, FUSED_SOLO_PUBLISHED);
GROUTE_WORD_AT(FusedStateBlock, solo_taken, FUSED_SOLO_TAKEN);
GROUTE_WORD_AT(FusedStateBlock, solo_us, FUSED_SOLO_US);
GROUTE_WORD_AT(FusedStateBlock, trace_level, FUSED_TRACE_LEVEL);
GROUTE_WORD_COUNT(FusedStateBlock, FUSED_WORDS);

// The fused kernel's phases, stop codes and flags (groute_kernels::abi's constants of the
// same names).
GROUTE_ENUM(FusedPhase){
    FUSED_PHASE_DONE = 0,
    FUSED_PHASE_EXPAND = 1,
    FUSED_PHASE_SOLO = 2,
    FUSED_PHASE_HUBS = 3,
    FUSED_PHASE_REEXAMINE = 4,
    FUSED_PHASE_STOP = 5,
};

GROUTE_ENUM(FusedStop){
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
GROUTE_ENUM(FusedKernelFlag){
    // The thread-granularity relaxation of the fused kernel's expands tries atomicMin at once,
    // without the filtering plain load (traversal_expand's filter_loads = false).
    FUSED_DIRECT_MIN = 4,
    // The single-block mode keeps its next level's items in a shared-memory frontier
    // (solo_frontier.cuh) instead of reading them and their offsets from global memory.
    FUSED_SOLO_SHARED = 8,
    // The single-block mode relaxes without the filtering load (FUSED_DIRECT_MIN for SOLO
    // levels only).
    FUSED_SOLO_DIRECT_MIN = 16,
};

// The parameter of the fused traversal's entry points (GROUTE_FUSED_TRAVERSAL_ENTRY in
// fused.cuh), filled by the host's typed launch (groute-worklist, traversal/fused/launch.rs).
// The fields keep the order (and so the parameter offsets) of the entry points' former
// argument lists, with their alignment gaps named.
struct FusedParams {
    unsigned int* values;                // the value of every vertex (full length)
    const unsigned long long* offsets;   // the owned rows' offsets, rebased to global vertex ids
    const unsigned int* targets;         // their arcs' heads, rebased to global arc ids
    const unsigned int* weights;         // their weights (SSSP), or null
    unsigned int* wl_data;               // the worklist: wl_mask + 1 vertex ids
    unsigned int wl_mask;                // worklist capacity - 1 (a power of two)
    unsigned int gap0;
    unsigned int* ctrl;                  // the control block (TraversalCtrl) and hub slots
    unsigned int* fused;                 // the state block (FusedStateBlock)
    const unsigned int* abort;           // the host's abort word (load_abort)
    unsigned int owned_begin;            // the vertices this device owns
    unsigned int owned_end;
    struct VertexValue* low[2];          // soft priority's low lists; null when it is off
    unsigned int low_capacity;           // items of each low list
    unsigned int prio_delta;             // soft priority's band width
    unsigned int solo_max;               // batches of at most this many run in one block
    unsigned int spin_ns;                // the grid barrier's sleep between polls
    unsigned int barrier_flags;          // FusedBarrierFlag and FusedKernelFlag bits
    unsigned int gap1;
    // Bounded runs: the outgoing buffer (vertices other devices own). Device-driven runs: the
    // next device's inbox ring, in its memory.
    struct VertexValue* send_data;
    unsigned int send_capacity;          // items of send_data (a ring's: a power of two)
    unsigned int send_base;              // bounded runs: the outgoing buffer's first position
    unsigned int level_budget;           // bounded runs: levels of one launch (0: unbounded)
    unsigned int send_yield;             // bounded runs: outgoing items that end a launch early
    struct PeerGroup peer;               // device-driven runs' group; size 1 otherwise
    const struct VertexValue* inbox;     // device-driven runs: this device's inbox ring
    unsigned int* send_published;        // the next device's TraversalCtrl::inbox_published
    unsigned int inbox_capacity;         // items of the inbox ring (a power of two)
    unsigned int gap2;
    unsigned int* recv_freed;            // the previous device's TraversalCtrl::send_freed
};

#ifdef __cplusplus
}  // namespace groute
#endif

#endif  // GROUTE_ABI_TRAVERSAL_H
