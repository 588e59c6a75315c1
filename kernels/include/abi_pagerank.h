// The device-driven PageRank's shared data (kernels/pagerank/pagerank_fused.cu): its state
// block, stop codes and flags, the peers block and the parameters it takes as structs.
// Mirrored by groute_kernels::abi (kernels/abi/pagerank.rs); see abi.h.
#ifndef GROUTE_ABI_PAGERANK_H
#define GROUTE_ABI_PAGERANK_H

#include "abi.h"

#ifdef __cplusplus
namespace groute {
#endif

// The state block, zeroed by the host: the grid barrier's words, then the run's counters. The
// 64-bit counters are pairs of words, low word first.
struct PageRankStateBlock {
    struct GridBarrierWords barrier;
    unsigned int rounds;               // rounds run
    unsigned int sweeps;               // of which sweep rounds
    unsigned long long pushed;         // vertices pushed
    unsigned int start;                // first unconsumed worklist position
    unsigned int exchanges;            // peer exchanges made
    unsigned long long sent;           // items listed in peers' inboxes
    unsigned long long received;       // inbox items drained
    unsigned int stop;                 // why the kernel stopped early (PrfStop; 0: it did not)
    unsigned int peer_status;          // the failed exchange's PeerStatus
    unsigned int inbox_overflow;       // size a peer's inbox needed (0: none overflowed)
    unsigned int unused;
    unsigned long long sent_seen;      // `sent` at the end of the last round
    // Phase times, ns: sweep takes, hub phases, gathers, worklist pushes, exchanges, drains.
    unsigned long long times[6];
    unsigned long long last_stamp;     // the last time stamp
    unsigned long long cut_round;      // cut arcs pushed in this round's sweep
    unsigned long long cut_sent;       // cut arcs pushed by sweeps
    unsigned long long cut_drained;    // in-cut halo slots drained nonzero
};

// PageRankStateBlock by word.
GROUTE_ENUM(PrfWord){
    PRF_ROUNDS = 64,
    PRF_SWEEPS = 65,
    PRF_PUSHED = 66,
    PRF_START = 68,
    PRF_EXCHANGES = 69,
    PRF_SENT = 70,
    PRF_RECEIVED = 72,
    PRF_STOP = 74,
    PRF_PEER_STATUS = 75,
    PRF_INBOX_OVERFLOW = 76,
    PRF_SENT_SEEN = 78,
    PRF_T_TAKE = 80,
    PRF_T_HUBS = 82,
    PRF_T_GATHER = 84,
    PRF_T_WORKLIST = 86,
    PRF_T_EXCHANGE = 88,
    PRF_T_DRAIN = 90,
    PRF_T_LAST = 92,
    PRF_CUT_ROUND = 94,
    PRF_CUT_SENT = 96,
    PRF_CUT_DRAINED = 98,
    PRF_WORDS = 100,
};
GROUTE_WORD_AT(PageRankStateBlock, rounds, PRF_ROUNDS);
GROUTE_WORD_AT(PageRankStateBlock, rounds, FUSED_BARRIER_WORDS);
GROUTE_WORD_AT(PageRankStateBlock, sweeps, PRF_SWEEPS);
GROUTE_WORD_AT(PageRankStateBlock, pushed, PRF_PUSHED);
GROUTE_WORD_AT(PageRankStateBlock, start, PRF_START);
GROUTE_WORD_AT(PageRankStateBlock, exchanges, PRF_EXCHANGES);
GROUTE_WORD_AT(PageRankStateBlock, sent, PRF_SENT);
GROUTE_WORD_AT(PageRankStateBlock, received, PRF_RECEIVED);
GROUTE_WORD_AT(PageRankStateBlock, stop, PRF_STOP);
GROUTE_WORD_AT(PageRankStateBlock, peer_status, PRF_PEER_STATUS);
GROUTE_WORD_AT(PageRankStateBlock, inbox_overflow, PRF_INBOX_OVERFLOW);
GROUTE_WORD_AT(PageRankStateBlock, sent_seen, PRF_SENT_SEEN);
GROUTE_WORD_AT(PageRankStateBlock, times, PRF_T_TAKE);
GROUTE_WORD_AT(PageRankStateBlock, times[1], PRF_T_HUBS);
GROUTE_WORD_AT(PageRankStateBlock, times[2], PRF_T_GATHER);
GROUTE_WORD_AT(PageRankStateBlock, times[3], PRF_T_WORKLIST);
GROUTE_WORD_AT(PageRankStateBlock, times[4], PRF_T_EXCHANGE);
GROUTE_WORD_AT(PageRankStateBlock, times[5], PRF_T_DRAIN);
GROUTE_WORD_AT(PageRankStateBlock, last_stamp, PRF_T_LAST);
GROUTE_WORD_AT(PageRankStateBlock, cut_round, PRF_CUT_ROUND);
GROUTE_WORD_AT(PageRankStateBlock, cut_sent, PRF_CUT_SENT);
GROUTE_WORD_AT(PageRankStateBlock, cut_drained, PRF_CUT_DRAINED);
GROUTE_WORD_COUNT(PageRankStateBlock, PRF_WORDS);

// Why the kernel stopped early (PageRankStateBlock::stop).
GROUTE_ENUM(PrfStop){
    PRF_STOP_NONE = 0,
    PRF_STOP_OVERFLOW = 1,   // this device's worklist or a peer's inbox overflowed
    PRF_STOP_PEER = 2,       // another device stopped the run
    PRF_STOP_ABORTED = 3,    // the host's abort word
    PRF_STOP_EXCHANGE = 4,   // a cross-device exchange failed (peer_status says how)
    PRF_ABORT_POLL = 16,     // rounds between two polls of the abort word
};

// PageRankSettings::flags.
GROUTE_ENUM(PrfFlag){
    PRF_FLAG_FENCE_PER_ROUND = 1,  // one system fence per thread per round, before barrier E
};

// Every device's incoming halo, inbox and tails, and the partition: a small block of device
// memory on each device, read through the cache (8 = PEER_MAX_DEVICES).
struct PageRankPeers {
    float* halo[8];              // owner o: 2 x owned(o) f32, parity-major
    unsigned int* inbox[8];      // owner o: 2 x capacity[o] vertices
    unsigned int* tails[8];      // owner o: 2 u32, one per parity
    unsigned int bounds[9];      // device o owns [bounds[o], bounds[o + 1])
    unsigned int capacity[8];    // inbox entries per parity
    unsigned int unused;
};

// The pull sweep's topology.
struct PageRankPull {
    const unsigned long long* in_offsets;
    const unsigned int* in_sources;
    float* share;
    const unsigned int* cut_vertices;       // CutLists (pagerank_push.cuh); count 0: no cut arc
    const unsigned long long* cut_offsets;
    const unsigned int* cut_targets;
    const unsigned int* hubs;               // pull hubs (in-degree >= hub_degree)
    const unsigned long long* tiles;
    float* hub_sum;
    unsigned long long hub_degree;
    const unsigned int* in_cut;  // owned vertices with an in-arc from another device
    // Merged cut sends (null when off): the cut arcs' heads as indices into `cut_heads` (the
    // distinct heads), and one f32 per head, 0 between sweeps.
    const unsigned int* cut_head_of_arc;
    const unsigned int* cut_heads;
    float* cut_merge;
    unsigned int hub_count;
    unsigned int tile_count;
    unsigned int cut_count;
    unsigned int cut_hubs;  // nonzero: a cut list may be listed as a hub (barrier H runs)
    unsigned int in_cut_count;
    unsigned int cut_head_count;  // distinct heads; 0: cut pushes go straight to the peers
};

// The scalar settings.
struct PageRankSettings {
    unsigned int sweep_divisor;
    unsigned int max_batch;
    unsigned int hub_capacity;
    unsigned int spin_ns;
    unsigned int barrier_flags;
    unsigned int flags;  // PrfFlag bits
};

#ifdef __cplusplus
}  // namespace groute
#endif

#endif  // GROUTE_ABI_PAGERANK_H
