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
    unsigned int chain_taken;          // vertices the round's chained gather takes (0 between)
    unsigned long long sent_seen;      // `sent` at the end of the last round
    // Phase times, ns: sweep takes, mirror posts (with the wait for the peers' posts), hub
    // phases, gathers, worklist pushes, exchanges, drains.
    unsigned long long times[7];
    unsigned long long last_stamp;     // the last time stamp
    unsigned long long mirror_sent;    // share values posted to peers by sweeps
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
    PRF_CHAIN_TAKEN = 77,
    PRF_SENT_SEEN = 78,
    PRF_T_TAKE = 80,
    PRF_T_MIRROR = 82,
    PRF_T_HUBS = 84,
    PRF_T_GATHER = 86,
    PRF_T_WORKLIST = 88,
    PRF_T_EXCHANGE = 90,
    PRF_T_DRAIN = 92,
    PRF_T_LAST = 94,
    PRF_MIRROR_SENT = 96,
    PRF_WORDS = 98,
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
GROUTE_WORD_AT(PageRankStateBlock, chain_taken, PRF_CHAIN_TAKEN);
GROUTE_WORD_AT(PageRankStateBlock, sent_seen, PRF_SENT_SEEN);
GROUTE_WORD_AT(PageRankStateBlock, times, PRF_T_TAKE);
GROUTE_WORD_AT(PageRankStateBlock, times[1], PRF_T_MIRROR);
GROUTE_WORD_AT(PageRankStateBlock, times[2], PRF_T_HUBS);
GROUTE_WORD_AT(PageRankStateBlock, times[3], PRF_T_GATHER);
GROUTE_WORD_AT(PageRankStateBlock, times[4], PRF_T_WORKLIST);
GROUTE_WORD_AT(PageRankStateBlock, times[5], PRF_T_EXCHANGE);
GROUTE_WORD_AT(PageRankStateBlock, times[6], PRF_T_DRAIN);
GROUTE_WORD_AT(PageRankStateBlock, last_stamp, PRF_T_LAST);
GROUTE_WORD_AT(PageRankStateBlock, mirror_sent, PRF_MIRROR_SENT);
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
    PRF_FLAG_FENCE_PER_ROUND = 1,    // one system fence per thread per round, before barrier E
    PRF_FLAG_GATHER_INTERLEAVE = 2,  // the gather deals its vertices out over the blocks
};

// The chained sweeps' short-list gather (pull_sweep_gather.cuh) runs where every owned in-list
// is shorter than this; the host uploads 32-bit row offsets for it (PageRankPull).
GROUTE_ENUM(PrfShortList){
    PRF_SHORT_LIST_ARCS = 32,
};

// Every device's incoming halo, inbox, tails and share array, and the partition: a small block
// of device memory on each device, read through the cache (8 = PEER_MAX_DEVICES).
struct PageRankPeers {
    float* halo[8];              // owner o: 2 x owned(o) f32, parity-major
    float* share[8];             // device o's share array (one f32 per vertex of the graph)
    float* share_next[8];        // its second one, of the chained sweeps (null: none)
    unsigned int* inbox[8];      // owner o: 2 x capacity[o] vertices
    unsigned int* tails[8];      // owner o: 2 u32, one per parity
    unsigned int bounds[9];      // device o owns [bounds[o], bounds[o + 1])
    unsigned int capacity[8];    // inbox entries per parity
    unsigned int unused;
};

// The pull sweep's topology and the mirrors this device posts to its peers.
struct PageRankPull {
    const unsigned long long* in_offsets;
    // The same rows as 32-bit arc positions, where every owned in-list is shorter than
    // PRF_SHORT_LIST_ARCS and the positions fit (null elsewhere): the short-list gather's.
    const unsigned int* in_offsets32;
    const unsigned int* in_sources;
    float* share;
    // Where no device has pull hubs: the second share array of the chained sweeps (their
    // gathers take at once, into the other array); null elsewhere.
    float* share_next;
    const unsigned int* hubs;               // pull hubs (in-degree >= hub_degree)
    const unsigned long long* tiles;
    float* hub_sum;
    unsigned long long hub_degree;
    // The owned vertices with an out-arc to device o's vertices, ascending, for every peer o:
    // mirrors[mirror_bounds[o] .. mirror_bounds[o + 1]) (an empty range for this device).
    const unsigned int* mirrors;
    unsigned int mirror_bounds[9];
    unsigned int hub_count;
    unsigned int tile_count;
    unsigned int max_in_degree;  // at least the in-degree of every owned vertex (saturated)
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
