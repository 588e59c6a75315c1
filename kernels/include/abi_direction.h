// The device-driven direction-optimizing BFS's shared data (kernels/bfs/bfs_direction_fused.cu,
// direction_fused_words.cuh, direction_fused_run.cuh, direction_fused_decide.cuh): its state
// block and its parameter. Mirrored by groute_kernels::abi (kernels/abi/direction.rs);
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
    unsigned long long received[8];      // sparse pushes: the list lengths sent, by rank
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

// The parameter of the entry points (GROUTE_DIRECTION_FUSED_ENTRY in bfs_direction_fused.cu),
// filled by the typed launch in crates/groute-bfs/src/direction/fused/member.rs, with its
// alignment gaps named.
struct DirectionParams {
    unsigned int* levels;                       // the level of every vertex
    const unsigned long long* push_offsets;     // out-arc offsets by global vertex id
    const unsigned int* push_targets;           // out-arc heads by global arc id
    const unsigned long long* pull_offsets;     // in-arc offsets (the push CSR's if symmetric)
    const unsigned int* pull_sources;           // in-arc tails
    unsigned int n;                             // vertices
    unsigned int owned_begin;                   // the vertices this device owns
    unsigned int owned_end;
    unsigned int source;                        // the run's source (several: level 0's push)
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
    unsigned long long gamma;                   // and gamma (0: no bound)
    struct PeerGroup group;                     // this member's group
    unsigned long long* trace_words;            // the level trace, or null
    unsigned long long* const* postboxes;       // every member's postbox
    const unsigned int* source_targets;         // the source owner's out-arc heads (several)
    unsigned int* front_bits;                   // two frontier bitmaps, or null (see DoRun)
    unsigned int* pull_lists;                   // the pull lists (with front_bits; DoRun)
    unsigned long long pull_list_words;         // their length in u32
    const unsigned int* pullable;               // the owned vertices with in-arcs (with lists)
    unsigned long long pullable_count;          // how many
};

#ifdef __cplusplus
}  // namespace groute
#endif

#endif  // GROUTE_ABI_DIRECTION_H
