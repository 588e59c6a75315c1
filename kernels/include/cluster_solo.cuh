// The single-block mode on a thread-block cluster (fused.cuh, SOLO in the `_cluster` build):
// the SOLO_CLUSTER blocks of cluster 0 run levels back to back, separated by the cluster's
// hardware barrier instead of a grid barrier, while the other blocks wait in the grid barrier.
//
// Why. A road network's BFS is a chain of thousands of levels of a few hundred to a few
// thousand items, each level bound by latency. One block (SOLO) is cheap per level but its one
// multiprocessor saturates on levels of more than a few hundred items; the grid pays a grid
// barrier (about 6,000 cycles) per level. A cluster of 4 blocks on 4 multiprocessors pays a
// cluster barrier (hardware, inside one GPC) and spreads a level over 4 multiprocessors.
// A whole BFS run in one cluster of 4 is much faster than in one block (whose levels of more
// than 1,024 items take several passes), faster than in a cluster of 2 and no slower than in
// one of 8; and every cluster size runs faster without the filtering load (the atomicMin goes
// out right after the targets load). So the cluster relaxes without the filter. With a step's
// atomics and range loads issued back to back (predicated.cuh) and the item's value read
// beside the targets loads (FreshValue), the cluster runs a road grid's BFS markedly faster
// than one block (docs/device-protocol.md, "The single-block mode on a cluster").
//
// Where items live. The first level expands the batch [start, end) from the worklist, block
// b taking the positions start + b, start + b + SOLO_CLUSTER, ... Every later level's items are
// frontier entries in the blocks' shared memory: each warp appends to one destination block,
// (warp + rank) % SOLO_CLUSTER, reserving entries on that block's counter (one
// distributed-shared-memory atomic per warp) and writing the vertex and its adjacency range
// (loaded beside the atomicMin) there, and each block expands its own entries. So a level is
// split over the cluster whatever warps found its items, and its items never touch global
// memory: the mode lists nothing but the batch it leaves, which each block copies to the
// worklist after [start, end)'s end. Their count goes to the host as unlisted (produced, never
// in the worklist). An entry past a block's capacity spills to
// the worklist (a global atomic on CTRL_WL_END, which is `end` during the mode) and stops the
// mode after the level; the batch it leaves is then the spills followed by the entries.
//
// Race-freedom. The frontier has two buffers per block: level l reads buffer l & 1 and its
// appends write buffer (l + 1) & 1, whose entries their block read during level l - 1, before
// its closing cluster barrier. Each block's appends counters are three words used in turn:
// level l appends to counter l % 3; every warp of the cluster reads every block's counter after
// level l's closing barrier (the barrier's release/acquire orders the appends before the
// reads); the owner's thread 0 clears counter (l + 1) % 3 during level l, after level l - 1's
// barrier, by which every read of its previous use (level l - 2's counts, read before arriving
// at barrier l - 1) is done, and before level l's barrier, after which level l + 1 appends to
// it. So every warp reads the same counts of a level, and every block takes the same decision
// at the same level; a spill is among them (a counter past the capacity). Block 0's flag
// words (a low list's or the sends' overflow, the host's abort word: ClusterFlag) are three
// words used in turn as the counters are, with one writer, block 0's thread 0: during level
// l it clears the flags of level l + 1 (word (l + 1) % 3, whose last readers read level
// l - 2's flags before arriving at barrier l - 1) and, where its poll sees a stop or an
// abort, sets level l's (word l % 3, cleared during level l - 1 or at the phase's start);
// every warp reads level l's flags after level l's barrier. So a warp still reading level
// l's flags (a faster warp may already be in level l + 1) reads a word that no later level
// writes before barrier l + 1, and every warp stops at the level whose poll saw the stop.
// (A single word that a later level could set would let a warp still reading see a later
// level's stop, leave the phase a level early and leave the others waiting at a barrier it
// never reaches; compute-sanitizer's racecheck reports such a write and read as a hazard.)
// The words are set at the phase's start (counters and flags 0), before a cluster barrier;
// the phase ends with the exit barrier (see cluster_solo_run), which no block passes before
// every read of the last level's words is done, so the next phase's setup follows them. Each
// block's copy of the batch's start, end and bound (CLUSTER_START, _END, _BOUND) is written
// by that block before the phase's first cluster barrier and read only by its own threads.
//
// What the mode leaves to the grid. A level of more than `bound` items, an empty one, a spill
// (a counter past the capacity), a low-list or send overflow or the host's abort word (polled
// by block 0 every `poll_every` levels) end it, and so does a phase whose unlisted items near
// 2^31 (their report is 32-bit). A worklist overflow (a spill or the hand-over past the
// capacity) is recorded in ctrl as for any append, and the next barrier's action stops the
// kernel on it.
// It expands every item at thread granularity (THREAD_ARCS arcs per step), so
// the host runs it only on graphs whose longest adjacency list is short (the host's bound:
// CLUSTER_MAX_DEGREE in fused_tuning.rs) and whose arc positions fit 32 bits (the frontier
// keeps 32-bit ranges, as SOLO's).
//
// Launch: the build's kernel has __cluster_dims__(SOLO_CLUSTER, 1, 1) (compute capability 9.0
// or later), a 1D grid, blockDim.x a multiple of 32 (in the members' build at least 64: the
// peer warp expands nothing, so block 0 needs another warp; the host runs the mode on blocks
// of more than 256 threads only). Self-contained (NVRTC).
#pragma once

#include "peer_group.cuh"
#include "solo_frontier.cuh"
#include "traversal.cuh"

namespace groute {

// Blocks of the cluster that runs the mode (cluster 0: blocks 0 .. SOLO_CLUSTER - 1).
enum : unsigned int { SOLO_CLUSTER = 4 };

// The words of the mode (each block's shared memory).
enum ClusterSoloWord : unsigned int {
    CLUSTER_COUNT = 0,  // three appends counters (every block's), used in turn by the levels
    CLUSTER_FLAGS = 3,  // block 0's three flag words (ClusterFlag), used in turn by the levels
    CLUSTER_START = 6,  // every block's copy of the phase's batch start, end and bound (read
    CLUSTER_END = 7,    // from shared memory where used, so that the level loop keeps no
    CLUSTER_BOUND = 8,  // register for them: see cluster_solo_run)
    CLUSTER_WORDS = 9,
};

// A level's flag word (block 0's), set by the poll of that level (ClusterLevelEnd::flags).
enum ClusterFlag : unsigned int {
    CLUSTER_STOPPED = 1,  // a low list's or the sends' overflow
    CLUSTER_ABORTED = 2,  // the host's abort word
};

// This block's rank in its cluster.
__device__ __forceinline__ unsigned int cluster_rank() {
    unsigned int rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    return rank;
}

// Every thread of every block of the cluster; release/acquire at cluster scope (shared memory
// of the cluster and global memory written before it are visible after it).
__device__ __forceinline__ void cluster_sync() {
    asm volatile(
        "barrier.cluster.arrive.release.aligned;\n\t"
        "barrier.cluster.wait.acquire.aligned;" ::
            : "memory");
}

// cluster_sync in two halves, for work between a thread's arrival and its wait that nothing
// the barrier orders depends on (every thread of the warp calls both).
__device__ __forceinline__ void cluster_arrive() {
    asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
}

__device__ __forceinline__ void cluster_wait() {
    asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// This block's shared-memory variable `p` at its shared address.
__device__ __forceinline__ unsigned int shared_address(const void* p) {
    return static_cast<unsigned int>(__cvta_generic_to_shared(p));
}

// `local` (an address of this block's shared memory) at its shared::cluster address in block
// `rank` (mapa; volatile, so that the compiler neither hoists nor merges it).
__device__ __forceinline__ unsigned int cluster_map(unsigned int local, unsigned int rank) {
    unsigned int mapped;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(mapped) : "r"(local), "r"(rank));
    return mapped;
}

// This block's shared-memory variable `p` at its shared::cluster address in block `rank`.
__device__ __forceinline__ unsigned int cluster_address(const void* p, unsigned int rank) {
    return cluster_map(shared_address(p), rank);
}

__device__ __forceinline__ unsigned int cluster_add(unsigned int address, unsigned int v) {
    unsigned int old;
    asm volatile("atom.shared::cluster.add.u32 %0, [%1], %2;"
                 : "=r"(old)
                 : "r"(address), "r"(v)
                 : "memory");
    return old;
}

__device__ __forceinline__ void cluster_store(unsigned int address, unsigned int v) {
    asm volatile("st.shared::cluster.u32 [%0], %1;" ::"r"(address), "r"(v) : "memory");
}

__device__ __forceinline__ unsigned int cluster_load(unsigned int address) {
    unsigned int v;
    asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(v) : "r"(address) : "memory");
    return v;
}

// The appends of one warp in a level of the mode (a Worklist of relax_thread_arcs that
// KEEPS_RANGES): to the entries of one destination block, whose counter reserves them; an
// entry past its capacity spills to the worklist (and so stops the mode after the level).
//
// MAP_AT_USE: whether `count` and `vertex` are shared::cluster addresses computed
// once per phase (false), or this block's own shared addresses (compile-time constants plus
// the level's offsets), mapped to the destination block (`dest`) by a
// mapa beside each use (true). Mapped once, the two mapped bases are live through every level;
// where a loop has no registers left for them under the 64 of a 1,024-thread block (the
// device-driven members' loop, with the send ring's code), the build spills them and reloads
// both at each level's start, after the barrier's acquire has invalidated the L1: an L2 round
// trip before the level's first load. Mapped at use, nothing of the level's path is reloaded.
// The one-device build keeps them mapped once: there it has the registers, and mapping at use
// makes road BFS slower (docs/device-protocol.md, "The single-block mode on a cluster"). With
// the peer warp in its own loop, the members' BFS build mapped once spills nothing and SSSP's
// level loop 3 loads and a store; the two ways then run alike within the loop's layout noise,
// so the members keep mapping at use.
template <bool MAP_AT_USE>
struct ClusterWorklist : KeptRanges {
    unsigned int count;   // the destination's counter of the level
    unsigned int vertex;  // its entries of the buffer the level writes
    unsigned int array_bytes;  // from the vertex array to the begin array, and begin to end
    unsigned int capacity;     // entries per block and buffer
    DeviceWorklist wl;      // spills: reserved at ctrl[CTRL_WL_END], bounds-checked
    unsigned int dest;      // the destination block (MAP_AT_USE)

    // `address` (count, or an entry's vertex + 4 * slot) in the destination block, as a
    // shared::cluster address.
    __device__ __forceinline__ unsigned int mapped(unsigned int address) const {
        return MAP_AT_USE ? cluster_map(address, dest) : address;
    }

    __device__ __forceinline__ void put(unsigned int slot, unsigned int item, unsigned int b,
                                        unsigned int e) const {
        if (slot < capacity) {
            // Two spellings of the same three stores: the one-device build keeps its own
            // (written as the mapped one, its SASS moves to another layout).
            if constexpr (MAP_AT_USE) {
                const unsigned int to = mapped(vertex + 4u * slot);
                cluster_store(to, item);
                cluster_store(to + array_bytes, b);
                cluster_store(to + 2u * array_bytes, e);
            } else {
                cluster_store(vertex + 4u * slot, item);
                cluster_store(vertex + array_bytes + 4u * slot, b);
                cluster_store(vertex + 2u * array_bytes + 4u * slot, e);
            }
            return;
        }
        wl.put(atomicAdd(wl.ctrl + CTRL_WL_END, 1u), item);
    }

    // One item per lane where `keep` (a warp's receipts in device-driven runs), its range
    // loaded here. Call with all 32 lanes of the warp.
    __device__ __forceinline__ void append_warp(unsigned int item, bool keep) const {
        unsigned int total;
        unsigned int base;
        const unsigned int slot = warp_reserve_by(
            keep, total, base, [&](unsigned int n) { return cluster_add(mapped(count), n); });
        if (keep) {
            put(slot, item, offset(item), offset(item + 1u));
        }
    }

    // The thread granularity's appends, with the ranges the caller loaded (HeadRanges).
    template <unsigned int K>
    __device__ __forceinline__ void append_warp_n(const unsigned int (&items)[K],
                                                  const bool (&keep)[K], unsigned int n,
                                                  const unsigned int (&b)[K],
                                                  const unsigned int (&e)[K]) const {
        static_assert(K < 8u, "warp_prefix_n<3> counts at most 7 items per lane");
        unsigned int total;
        unsigned int base;
        unsigned int slot = warp_reserve_n_by<3>(
            n, total, base, [&](unsigned int t) { return cluster_add(mapped(count), t); });
        if (total == 0u) {
            return;
        }
#pragma unroll
        for (unsigned int k = 0; k < K; ++k) {
            if (keep[k]) {
                put(slot, items[k], b[k], e[k]);
                ++slot;
            }
        }
    }
};

// Expands `share` items on the first `workers` threads of this block (the threads that call
// it; a multiple of 32), item i's vertex and range from
// entry(i, v, b, e), relaxing without the filtering load. Called with one reader for the
// frontier's entries and one for the worklist's first level, so each has its own copy of the
// loop: in one shared copy the two paths' loads met before the arcs, and the frontier path
// waited on the worklist path's load scoreboard, whose loads it never issued, together with
// the item's value. The item's value is read at its arcs (FreshValue), beside the targets
// loads.
template <typename Relax, bool WEIGHTED, typename Appends, typename Entry>
__device__ __forceinline__ void cluster_expand(const MinSplitOps& ops,
                                               const unsigned int* targets,
                                               const unsigned int* weights,
                                               const Appends& appends,
                                               const SendBuffer& send, const LowList& low,
                                               unsigned int share, unsigned int workers,
                                               const Entry& entry) {
    for (unsigned int first = 0; first < share; first += workers) {  // uniform over workers
        const unsigned int i = first + threadIdx.x;
        const bool listed = i < share;
        unsigned int v = 0;
        unsigned int b = 0;
        unsigned int e = 0;
        if (listed) {
            entry(i, v, b, e);
        }
        const bool have = listed && e > b;
        for (unsigned int arc = b; __any_sync(0xFFFFFFFFu, have && arc < e);
             arc += THREAD_ARCS) {
            relax_thread_arcs<Relax, WEIGHTED>(ops, targets, weights, arc, e, have,
                                               FreshValue{ops.values + v}, appends, send, low,
                                               false);
        }
    }
}

// What every thread reads after a level's closing barrier (cluster_solo_run's level_end).
struct ClusterLevelEnd {
    unsigned int total = 0u;          // the items the level appended, every block's
    unsigned int entries = 0u;        // those kept in the frontier (the others spilled)
    unsigned int entries_below = 0u;  // those of the blocks of lower rank
    unsigned int mine = 0u;           // this block's
    unsigned int flags = 0u;          // ClusterFlag bits: block 0's flag word of the level
    bool last = false;                // the phase ends after this level
};

// What a phase of the mode did (block 0 reports it).
struct ClusterSoloResult {
    unsigned int start;  // the batch it left: [start, end)
    unsigned int end;
    unsigned int levels;
    unsigned int aborted;    // it saw the abort word
    unsigned int unlisted;   // items it produced and expanded without listing them
    unsigned long long processed;
    unsigned int trace;  // GROUTE_TRACE_LEVEL builds: MHz << 20 | microseconds to level N
};

// SoloFrontierArrays keeps its three arrays one after the other, in the order declared
// (ClusterWorklist reaches a destination's begin and end arrays from its vertex array).
template <unsigned int ENTRIES>
__device__ __forceinline__ constexpr unsigned int frontier_array_bytes() {
    static_assert(sizeof(SoloFrontierArrays<ENTRIES>) == 12u * ENTRIES,
                  "three arrays of ENTRIES words, no padding");
    return 4u * ENTRIES;
}

// A phase stops before the items it produced without listing them pass this (their count
// is reported in a 32-bit word).
enum : unsigned int { CLUSTER_MAX_UNLISTED = 0x7FFF0000u };

// The mode from the batch [start, end) on every thread of the blocks of cluster 0, until a
// level has more than `bound` items or none, spills, or meets a stop or abort, or the phase's
// unlisted items near CLUSTER_MAX_UNLISTED (see the file comment). Spills
// and the batch it leaves go to the worklist `wl_data`/`wl_mask` (ctrl: the global control
// words; CTRL_WL_END is `end` at the start, and the returned end when the mode returns),
// items other devices own to `send` (reserved on ctrl's CTRL_SEND_END), deferred items to
// `low`. `arrays`: the frontier entries (ENTRIES, two buffers of ENTRIES / 2). `peer`: the
// device-driven protocol (fused.cuh's SoloPeerWarp, LAGGED). Where Peer::ACTIVE, its warp
// (Peer::warp(), the last of block 0) expands no item: each level it calls turn(appends,
// send, low) (its receipts join the level's appends; it returns the level's reads) and,
// between its arrival at the level's closing barrier and its wait, after_arrive(levels,
// reads); block 0's other warps (Peer::expanders) expand the block's share. Where not, no
// thread calls it.
// MAP_AT_USE: see ClusterWorklist (the members' builds).
template <typename Relax, bool WEIGHTED, unsigned int ENTRIES, bool MAP_AT_USE, typename Peer>
__device__ ClusterSoloResult cluster_solo_run(
    const MinSplitOps ops, const unsigned long long* offsets, const unsigned int* targets,
    const unsigned int* weights, unsigned int* wl_data, unsigned int wl_mask,
    unsigned int* ctrl, const SendBuffer send, const LowList low,
    SoloFrontierArrays<ENTRIES>& arrays,
    unsigned int start, unsigned int end, unsigned int bound, unsigned int poll_every,
    const unsigned int* abort, Peer& peer) {
    static_assert(ENTRIES >= 2u, "two buffers of entries");
    __shared__ unsigned int words[CLUSTER_WORDS];
    constexpr unsigned int capacity = ENTRIES / 2u;
    const unsigned int rank = cluster_rank();
    if (threadIdx.x < CLUSTER_WORDS) {
        words[threadIdx.x] = threadIdx.x == CLUSTER_START ? start
                             : threadIdx.x == CLUSTER_END ? end
                             : threadIdx.x == CLUSTER_BOUND ? bound
                                                            : 0u;
    }
    cluster_sync();  // every block's words set before any append
    const unsigned int lead = cluster_address(words, 0u);  // block 0's words
    const bool lead_thread = rank == 0u && threadIdx.x == 0u;
#ifdef GROUTE_TRACE_LEVEL
    __shared__ unsigned long long trace_started;
    __shared__ long long trace_cycles;
    __shared__ unsigned int trace_word;
    if (lead_thread) {
        trace_started = peer_clock_ns();
        trace_cycles = clock64();
        trace_word = 0u;
    }
#endif
    // This warp's destination: the warps of every block spread over the cluster.
    const unsigned int dest = (threadIdx.x / 32u + rank) % SOLO_CLUSTER;
    const unsigned int dest_words =
        MAP_AT_USE ? shared_address(words) : cluster_address(words, dest);
    const unsigned int dest_vertex =
        MAP_AT_USE ? shared_address(arrays.vertex) : cluster_address(arrays.vertex, dest);
    // Lane j < SOLO_CLUSTER of every warp reads block j's counters after a level.
    const unsigned int lane = lane_id();
    const DeviceWorklist wl{wl_data, wl_mask, start, ctrl};
    // The loop carries only level, count, mine and unlisted from level to level (besides the
    // worklist and the destination's and block 0's addresses, or with MAP_AT_USE the
    // destination's rank): the result's other fields
    // follow from them at the end, the batch's start, end and bound are reread from shared
    // memory, and the counters read after the barrier are mapped there (mapa, a volatile asm
    // that the compiler does not hoist). Every register the loop frees keeps the level's
    // loads and atomics in flight together rather than spilling (a spilled word's reload
    // after the barrier misses the L1 that the barrier's acquire invalidated). The peer build
    // (device-driven members) maps the destination's addresses at use (MAP_AT_USE, see
    // ClusterWorklist: the two ways run alike there).
    // Measuring a change to this loop: its code layout alone moves its time by a couple of
    // percent (a few NOPs before the arrive do it). A/B both builds in one call, and read
    // smaller differences as layout. The members' peer code compiled into this loop slows it,
    // whether it runs every level or every 16th (hence the peer warp's own loop:
    // docs/device-protocol.md, "Device-driven traversal members").
    // Device-driven members (Peer::ACTIVE): the peer warp runs the protocol's loop below and
    // expands no item; the other warps of its block expand the block's share of each level.
    const unsigned int workers = Peer::expanders(rank);
    const auto appends_of = [&](unsigned int level) {
        return ClusterWorklist<MAP_AT_USE>{{offsets},
                                           dest_words + 4u * (CLUSTER_COUNT + level % 3u),
                                           dest_vertex + 4u * (capacity - (level & 1u) * capacity),
                                           frontier_array_bytes<ENTRIES>(),
                                           capacity,
                                           wl,
                                           dest};
    };
    // After level `level`'s closing barrier, on every thread: every block's count of the
    // level, block 0's flags of the level, and whether the phase ends (`unlisted`: the
    // items of the levels after the first before this one).
    const auto level_end = [&](unsigned int level, unsigned int unlisted) {
        ClusterLevelEnd e;
        unsigned int counted = 0;
        if (lane < SOLO_CLUSTER) {
            counted =
                cluster_load(cluster_address(words + CLUSTER_COUNT + level % 3u, lane));
        } else if (lane == SOLO_CLUSTER) {
            const unsigned int lead_words =
                MAP_AT_USE ? cluster_address(words, 0u) : lead;
            counted = cluster_load(lead_words + 4u * (CLUSTER_FLAGS + level % 3u));
        }
#pragma unroll
        for (unsigned int j = 0; j < SOLO_CLUSTER; ++j) {
            const unsigned int c = __shfl_sync(0xFFFFFFFFu, counted, j);
            const unsigned int kept = c < capacity ? c : capacity;
            e.total += c;
            e.entries += kept;
            e.entries_below += j < rank ? kept : 0u;
            e.mine = j == rank ? kept : e.mine;
        }
        e.flags = __shfl_sync(0xFFFFFFFFu, counted, SOLO_CLUSTER);
        e.last = e.total == 0u || e.total > words[CLUSTER_BOUND] ||
                 e.entries != e.total /* a spill */ || e.flags != 0u ||
                 unlisted + e.total > CLUSTER_MAX_UNLISTED;
        return e;
    };
    // The phase's result after its last level, `level` (every level after the first expanded
    // the previous level's items, all unlisted).
    const auto result = [&](unsigned int level, const ClusterLevelEnd& e, unsigned int unlisted,
                            unsigned int trace) {
        const unsigned int listed = words[CLUSTER_END];
        const unsigned long long processed =
            static_cast<unsigned long long>(listed - words[CLUSTER_START]) + unlisted;
        return ClusterSoloResult{listed,         listed + e.total, level + 1u,
                                 (e.flags & CLUSTER_ABORTED) != 0u ? 1u : 0u, unlisted, processed,
                                 trace};
    };
    // The peer warp: reads and receives into the level's appends while the other warps
    // expand the level, and settles between its arrival at the level's barrier and its wait.
    // Out of the level loop's body: there, its branch would cost every warp's level though
    // taken on one warp only, and the level's barrier would wait for the peer warp's share of
    // the items and then its turn, one after the other. Apart, the members run faster, though
    // over code shifts the gain is smaller (see the comment above the level loop). The vote
    // makes the branch warp-uniform
    // to the compiler: on Peer::warp() alone (a lane's test) the warps after it would not be
    // known converged, and each would execute a WARPSYNC.ALL before its .aligned arrive at
    // every level.
    if constexpr (Peer::ACTIVE) {
        if (__all_sync(0xFFFFFFFFu, Peer::warp())) {
            unsigned int unlisted = 0;
            for (unsigned int level = 0;; ++level) {
                const auto reads = peer.turn(appends_of(level), send, low);
                cluster_arrive();
                peer.after_arrive(level + 1u, reads);
                cluster_wait();
                const ClusterLevelEnd e = level_end(level, unlisted);
                if (e.last) {
                    cluster_sync();  // see the exit barrier in the level loop below
                    return result(level, e, unlisted, 0u);  // the others hand the batch over
                }
                unlisted += e.total;
            }
        }
    }
    unsigned int count = end - start;  // the level's items, all blocks
    unsigned int mine = 0;             // this block's entries (levels after the first)
    unsigned int unlisted = 0;         // items of the levels after the first
    for (unsigned int level = 0;; ++level) {
        const unsigned int read = (level & 1u) * capacity;
        const unsigned int write = capacity - read;
        const ClusterWorklist<MAP_AT_USE> appends = appends_of(level);
        // The first level expands the batch's positions congruent to the block's rank (from
        // the worklist), the others the block's own entries: two readers, so that each has
        // its own copy of the level's loop (see cluster_expand).
        const auto from_frontier = [&](unsigned int i, unsigned int& v, unsigned int& b,
                                       unsigned int& e) {
            v = arrays.vertex[read + i];
            b = arrays.begin[read + i];
            e = arrays.end[read + i];
        };
        const auto from_worklist = [&](unsigned int i, unsigned int& v, unsigned int& b,
                                       unsigned int& e) {
            v = wl.at(words[CLUSTER_START] + i * SOLO_CLUSTER + rank);
            b = appends.offset(v);
            e = appends.offset(v + 1u);
        };
        if (level != 0u) {
            cluster_expand<Relax, WEIGHTED>(ops, targets, weights, appends, send, low, mine,
                                            workers, from_frontier);
        } else {
            const unsigned int share =
                count > rank ? (count - 1u - rank) / SOLO_CLUSTER + 1u : 0u;
            cluster_expand<Relax, WEIGHTED>(ops, targets, weights, appends, send, low, share,
                                            workers, from_worklist);
        }
        if (threadIdx.x == 0u) {
            // This block's next counter and (block 0's are read) next flags.
            words[CLUSTER_COUNT + (level + 1u) % 3u] = 0u;
            words[CLUSTER_FLAGS + (level + 1u) % 3u] = 0u;
        }
        if (lead_thread && (level + 1u) % poll_every == 0u) {
            // The action stops the kernel on an overflow.
            const unsigned int flags =
                (peer_load_abort(abort) != 0u ? CLUSTER_ABORTED : 0u) |
                ((*const_cast<const volatile unsigned int*>(ctrl + CTRL_LOW_OVERFLOW) |
                  *const_cast<const volatile unsigned int*>(ctrl + CTRL_SEND_OVERFLOW)) != 0u
                     ? CLUSTER_STOPPED
                     : 0u);
            if (flags != 0u) {
                words[CLUSTER_FLAGS + level % 3u] = flags;
            }
        }
        // Every append of the level done, in every block.
        cluster_arrive();
        cluster_wait();
#ifdef GROUTE_TRACE_LEVEL
        // A diagnostic build (compiled with -DGROUTE_TRACE_LEVEL=N, GROUTE_NVRTC_OPTIONS): the
        // time from this phase's start to the end of its level N (counted within the phase)
        // and the SM clock over it, reported in the result (fused.cuh's FUSED_TRACE_LEVEL;
        // microseconds saturate at 2^20 - 1).
        if (lead_thread && level + 1u == GROUTE_TRACE_LEVEL) {
            const unsigned long long ns = peer_clock_ns() - trace_started;
            const unsigned long long us = ns / 1000ull < 0xFFFFFull ? ns / 1000ull : 0xFFFFFull;
            const unsigned long long mhz =
                ns == 0ull ? 0ull : (clock64() - trace_cycles) * 1000ull / ns;
            trace_word = static_cast<unsigned int>((mhz < 0xFFFull ? mhz : 0xFFFull) << 20 | us);
        }
#endif
        const ClusterLevelEnd e = level_end(level, unlisted);
        mine = e.mine;
        if (e.last) {
            // The exit barrier: level_end read the other blocks' counters (and block 0's flag
            // words) in their shared memory. No block may leave this function,
            // exit, or start the next phase (whose setup rewrites its words) while another
            // block can still be reading them. `e.last` is the same in every block (it
            // follows from the counters every block reads alike), so every thread of the
            // cluster, the peer warp included, arrives here at the same level.
            cluster_sync();
            // Hand the batch over: the spills are at [listed, listed + spilled); the entries
            // follow, block by block. (The worklist's end: the mode lists only its last batch.)
            const unsigned int listed = words[CLUSTER_END];
            const unsigned int spilled = e.total - e.entries;
            const unsigned int at = listed + spilled + e.entries_below;
            for (unsigned int i = threadIdx.x; i < mine; i += workers) {
                wl.put(at + i, arrays.vertex[write + i]);
            }
            return result(level, e, unlisted,
#ifdef GROUTE_TRACE_LEVEL
                          lead_thread ? trace_word : 0u
#else
                          0u
#endif
            );
        }
        unlisted += e.total;
        count = e.total;
    }
}

}  // namespace groute
