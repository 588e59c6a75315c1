// Direction-optimizing BFS driven by the devices: ONE persistent cooperative launch per device
// runs every level of a run, on 1..PEER_MAX_DEVICES GPUs, with no host in the loop. Launched
// by groute-bfs (crates/groute-bfs/src/direction/fused/). The steps are the host-driven ones
// (kernels/include/direction.cuh, the push expand of traversal.cuh); the grid barrier is the
// fused worklist kernel's (grid_barrier.cuh); the devices meet in peer_allreduce_sum
// (peer_group.cuh).
//
// Every device holds the whole CSR (and the transpose of a directed graph) and a full-length
// level array that is globally consistent up to the current level; it owns the vertices
// [owned_begin, owned_end). Its frontier is its owned vertices at the current level, worklist
// positions [0, count). A level L on every device:
//
//   1. step: push expands the frontier over all its out-arcs (traversal_expand, every vertex
//      "owned" so every improved head is appended; hubs listed and expanded by the grid in a
//      second phase when there are any); pull scans the owned unvisited vertices' in-neighbours
//      (direction_pull). Grid barrier; its action rewinds the worklist.
//   2. send (several devices): the bitmap words of the vertices this device set to L + 1 (all
//      words after a push, its owned words after a pull), each nonzero word stored straight
//      into every peer's inbox (peer stores, then __threadfence_system). Grid barrier whose
//      action is an exchange (peer_allreduce_sum of no values: a barrier across the devices
//      that makes the stores visible).
//   3. apply and scan, one pass, a warp per bitmap word: every received bit of an UNREACHED
//      vertex sets it to L + 1 (and the inbox word is cleared for the next level); the owned
//      vertices at L + 1 become the next frontier, their degrees and number added to the
//      level counters (DIRECTION_*); after a pull, whose received bits lie only in the
//      peers' owned vertices, the inbox words of the wholly owned words are not read.
//      Grid barrier whose action (`decide`) reads the counters,
//      sums them over the devices (peer_allreduce_sum, 4 values), accounts the step exactly
//      as the host's run_levels does, applies Beamer's rule (direction_pulls, the port of
//      SwitchRule::pulls) to the global counts and publishes the next step (or DONE when the
//      global frontier is empty) in the barrier's record. Every device sees the same sums, so
//      every device decides alike and they make the same sequence of exchanges.
// Level 0 is the scan of the source's level (nothing received) and its decide.
//
// Variants (`flags`, DoFlag, for A/B runs): DO_FLAG_PULL_FRONTIER fuses a pull step with its
// send and scan: the pull appends its finds as the next frontier (the decide that chose the
// pull rewound the worklist; the pull does not read the frontier), adds their degrees to the
// counters and stores each warp's ballot of finds (32 consecutive vertices from a
// word-aligned start: one bitmap word) into the peers' inboxes. Then, on several devices, the
// exchange and a pass that only applies the received words; on one, the decide at once. Two
// grid barriers and two full passes fewer per pull level on several devices, one and one on
// one device. Exact: after a pull a device's owned vertices at L + 1 are its own finds.
//
// DO_FLAG_PUSH_FRONTIER (one device): a push's appends are the next frontier, where they lie
// in the ring worklist (`front`); count_frontier sums their degrees instead of a scan.
// DO_FLAG_WARP_RESERVE: the scan and that pull count their finds per warp and reserve the
// worklist slots once per block (append_marked, block_count.cuh), then append in a second
// sweep. DO_FLAG_SCAN_BATCH: apply_and_scan keeps SCAN_BATCH words' loads in flight
// per warp. DO_FLAG_POST_EXCHANGE: the exchanges are peer_post_allreduce_sum over
// `postboxes` (every device's, by rank; peer_post.cuh) instead of peer_allreduce_sum. The
// entry point bfs_direction_fused_occupancy is the same kernel capped at 32 registers.
//
// DO_FLAG_HUB_BATCH: the hub phase relaxes 4 consecutive arcs per thread and step.
// DO_FLAG_SPARSE_PUSH (several devices): a push level whose global frontier has at most
// n / SPARSE_DIVISOR out-arcs sends the list of its appends (into the inbox slot, the length
// with the exchange) and builds the next frontier from its owned appends and the received
// lists; no pass over all words. DO_FLAG_ONE_EXCHANGE (several devices): with
// DO_FLAG_PULL_FRONTIER, a pull's counters go with its words' exchange, whose action
// decides, the received words applied behind a grid barrier of the device alone; with
// DO_FLAG_SPARSE_PUSH, every device counts a sparse push's finds globally (the union of all
// the lists, each vertex once) and decides alone.
//
// Trace (`trace_words`, null: off; kernels/include/direction_trace.cuh): the thread running
// each barrier's action stamps the end of the phase before it, for the trace row of the
// current step (row 0: the source's scan), and notes the step's kind, level, finds and hubs;
// thread 0 of block 0 stamps the kernel's start and end.
//
// Inboxes: two halves of (size - 1) * words u32 per device, the discoveries at level M of a
// level that stores (every level but a replicated one, DO_FLAG_REPLICATE) in half
// (M + replicated levels so far) & 1, so consecutive storing levels alternate (slot s of a
// half holds the words, or a sparse push's list, of the s-th other device in rank order),
// zeroed by the host before a run and kept zero between levels by the receiver. Why the
// reuse is race-free: a storing level S stores during itself (at the latest in its send
// pass; a DO_FLAG_LISTED_PUSH during the push), so after the first exchange of the storing
// level S - 1 before it (every storing level makes at least one exchange; replicated levels
// between them make none); the half's previous contents, from the storing level S - 2, were
// cleared by the receiver in that level's apply pass, which it finishes (with a
// __threadfence_system of each clearing thread) before it arrives at any exchange of level
// S - 1. With replicated levels alternating by level instead, a pull, a replicated level
// and a push would store into the same half with no exchange between the receiver's
// clearing and the push's stores.
//
// Failures: an exchange that returns a PeerStatus other than PEER_OK (the host's abort word, a
// peer's failure, or the group's timeout) stops the kernel with DO_STATUS set; every decide
// also polls the abort word every DO_ABORT_POLL levels (an exchange polls it only while it
// waits, and one device makes none); a device that stops there leaves its peers waiting at
// their next exchange, where they see the abort word too. The host reports either as an error
// and discards the levels. Worklist overflow (it cannot: 2n slots) is left in ctrl as usual.
//
// The pull CSR is the push CSR for a symmetric graph (the same pointers). state: DO_WORDS u64,
// zeroed by the host. barrier: at least FUSED_BARRIER_WORDS u32 (grid_barrier.cuh), zeroed
// by the host. Launch
// cooperatively with blockDim.x = 256 (a multiple of 32) and a grid of at most the resident
// maximum.
// Hub tiles of 1024 arcs, one block step of the batched hub phase at DO_BLOCK (256) threads
// (THREAD_ARCS arcs each): kron21's largest hub (209,642 arcs) spreads over 205 blocks instead
// of 103 running two dependent steps each; its hub phase took 11.7 us against 19.1 on one
// H200. The fused traversal keeps 2048 (kron21 SSSP: 7.77-7.80 ms against 7.88 with 1024).
#define GROUTE_HUB_TILE 1024

#include "block_count.cuh"
#include "direction.cuh"
#include "direction_trace.cuh"
#include "grid_barrier.cuh"
#include "peer_group.cuh"
#include "peer_post.cuh"
#include "push_appends.cuh"
#include "traversal.cuh"

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
    // holds the whole graph and the same level array): every device finds the same vertices,
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

// The run's constants and this device's buffers.
struct DoRun {
    unsigned int* levels;
    const unsigned long long* push_offsets;
    const unsigned int* push_targets;
    const unsigned long long* pull_offsets;
    const unsigned int* pull_sources;
    unsigned int n;
    unsigned int owned_begin;
    unsigned int owned_end;
    DeviceWorklist wl;
    unsigned long long* state;
    unsigned int* const* inboxes;  // every device's inbox, by rank
    unsigned int* inbox;           // this device's
    unsigned long long in_arcs;
    unsigned long long alpha;
    unsigned long long beta;
    PeerGroup group;
    unsigned int flags;                      // DoFlag
    unsigned long long* const* postboxes;  // every device's postbox, by rank (POST_WORDS)
    // Replicated levels so far (DO_FLAG_REPLICATE; alike on every device, kept by every
    // thread): the inbox halves alternate between the levels that store into them.
    unsigned int replicated_levels;
    // The run has several devices: a compile-time false in the one-device build (its code
    // holds none of the peer steps) and a compile-time true in the several build.
    bool several;

    __device__ unsigned int words() const { return (n + 31u) / 32u; }

    // DO_FLAG_PUSH_BITMAP's discovery bitmap: words() u32 behind the inbox halves (the host
    // allocates them with the inbox and zeroes them with it; send_marks clears them).
    __device__ unsigned int* marks() const {
        return inbox + 2u * (group.size - 1u) * words();
    }

    // The offset of the inbox half that carries the discoveries at `mark`: the halves
    // alternate between the levels that store (every level but a replicated one; see the
    // header's "Inboxes").
    __device__ unsigned int half(unsigned int mark) const {
        return ((mark + replicated_levels) & 1u) * (group.size - 1u) * words();
    }

    // The slot of this device's words in the inbox of the device of rank `peer`.
    __device__ unsigned int slot_at(unsigned int peer) const {
        return inbox_slot(group.rank, peer);
    }

    // Adds a thread's finds (`found` vertices, `out` out-arcs and `in` in-arcs) and the arcs
    // it `examined` to the level counters, one atomic per block and counter
    // (block_count.cuh). Every thread of the block calls it, from block-uniform control flow.
    __device__ void count_found(unsigned long long out, unsigned long long in,
                                unsigned long long found,
                                unsigned long long examined = 0ull) const {
        unsigned long long x[DIRECTION_COUNTERS];
        x[DIRECTION_OUT_ARCS] = out;
        x[DIRECTION_IN_ARCS] = in;
        x[DIRECTION_EXAMINED] = examined;
        x[DIRECTION_FRONTIER] = found;
        block_add_u64(state + DO_COUNTERS, x);
    }

    // Stores this device's discoveries at `mark` (words [begin, end)) into every peer's inbox.
    __device__ void send(unsigned int mark, unsigned int begin, unsigned int end) const {
        const unsigned int warps = gridDim.x * blockDim.x / 32u;
        const unsigned int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32u;
        const unsigned int lane = lane_id();
        const unsigned int total = words();
        const unsigned int slot = slot_at(lane);
        const unsigned int offset = half(mark);
        const bool sends = lane < group.size && lane != group.rank;
        bool stored = false;
        // SEND_BATCH words per warp and iteration: their level loads are all in flight
        // before the first ballot.
        for (unsigned int base = begin + warp; base < end; base += SEND_BATCH * warps) {
            unsigned int bits[SEND_BATCH];
#pragma unroll
            for (unsigned int k = 0; k < SEND_BATCH; ++k) {
                const unsigned int w = base + k * warps;
                bits[k] = w < end ? level_bits(levels, n, w, mark) : 0u;
            }
#pragma unroll
            for (unsigned int k = 0; k < SEND_BATCH; ++k) {
                if (bits[k] != 0u && sends) {
                    inboxes[lane][offset + slot * total + base + k * warps] = bits[k];
                    stored = true;
                }
            }
        }
        if (stored) {
            __threadfence_system();
        }
    }

    // Appends the owned vertices at `mark` of the words first_word + warp + k * warps (below
    // last_word) to the worklist: this warp's `count` of them (its hits in the pass that
    // found them over the same words, which no other warp changed) in slots reserved with one
    // atomic per block (block_count.cuh). Every thread of the block calls it, from
    // block-uniform control flow.
    __device__ void append_marked(unsigned int mark, unsigned int first_word,
                                  unsigned int last_word, unsigned int count) const {
        const unsigned int warps = gridDim.x * blockDim.x / 32u;
        const unsigned int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32u;
        const unsigned int lane = lane_id();
        unsigned int slot = block_reserve_warps(wl.ctrl + CTRL_WL_END, count);
        if (count == 0u) {
            return;  // warp-uniform
        }
        for (unsigned int w = first_word + warp; w < last_word; w += warps) {
            const unsigned int v = w * 32u + lane;
            const bool hit = v >= owned_begin && v < owned_end && v < n && levels[v] == mark;
            const unsigned int bits = __ballot_sync(0xFFFFFFFFu, hit);
            if (hit) {
                wl.put(slot + static_cast<unsigned int>(__popc(bits & lanemask_lt())), v);
            }
            slot += static_cast<unsigned int>(__popc(bits));
        }
    }

    // Applies the received words (when `receive`) and, when `scan`, scans the owned vertices
    // at `mark` into the worklist and the level counters (DO_FLAG_SCAN_BATCH: SCAN_BATCH
    // words per warp and iteration, their loads all in flight before the first is used).
    // `pulled`: the step was a pull, so received bits lie only in the peers' owned vertices:
    // the inbox words of the words wholly owned by this device are not read (nor, when not
    // scanning, those words visited at all).
    __device__ void apply_and_scan(unsigned int mark, bool receive, bool scan,
                                   bool pulled) const {
        if (receive && pulled && !scan) {
            apply_pulled(mark, false);
        } else if ((flags & DO_FLAG_SCAN_BATCH) != 0u) {
            apply_and_scan_in<SCAN_BATCH>(mark, receive, scan, pulled);
        } else {
            apply_and_scan_in<1u>(mark, receive, scan, pulled);
        }
    }

    // DO_FLAG_PUSH_BITMAP, after a dense push: stores every nonzero word of the discovery
    // bitmap (this device's discoveries at `mark`) into every peer's inbox and clears it, a
    // thread per word (coalesced loads of 4 bytes per 32 vertices, where send reads every
    // vertex's level).
    __device__ void send_marks(unsigned int mark) const {
        const unsigned int stride = gridDim.x * blockDim.x;
        const unsigned int total = words();
        const unsigned int offset = half(mark);
        unsigned int* const bitmap = marks();
        bool stored = false;
        for (unsigned int w = blockIdx.x * blockDim.x + threadIdx.x; w < total; w += stride) {
            // Set by reductions at L2 (other SMs): never an L1 line.
            const unsigned int bits = load_volatile(bitmap + w);
            if (bits == 0u) {
                continue;
            }
            bitmap[w] = 0u;  // the next dense push's reductions come after grid barriers
            for (unsigned int d = 0; d < group.size; ++d) {
                if (d != group.rank) {
                    inboxes[d][offset + slot_at(d) * total + w] = bits;
                    stored = true;
                }
            }
        }
        if (stored) {
            __threadfence_system();
        }
    }

    // apply_and_scan after a pull, nothing scanned (`append`: the received vertices join the
    // frontier too, DO_FLAG_REPLICATE): every received bit is a vertex that a
    // peer found at `mark` among its owned vertices, so it was UNREACHED here (the level
    // arrays agree below `mark`, and a pull sets owned vertices only): its level is stored
    // without being read. The words wholly owned here are skipped (nothing is received there
    // after a pull). Each lane loads one inbox word (a warp's 32 loads coalesced, one round
    // trip per grid-stride step, where a warp per word waited for two per word), clears it
    // when nonzero, and the warp then stores the levels of each nonzero word together, a
    // lane per bit (one line per word, as the warp-per-word pass stored them).
    __device__ void apply_pulled(unsigned int mark, bool append) const {
        const unsigned int stride = gridDim.x * blockDim.x;
        const unsigned int lane = lane_id();
        const unsigned int total = words();
        const unsigned int inner_begin = (owned_begin + 31u) / 32u;
        const unsigned int inner_end = owned_end >= n ? total : owned_end / 32u;
        const unsigned int inner = inner_end > inner_begin ? inner_end - inner_begin : 0u;
        const unsigned int limit = total - inner;
        unsigned int* const box = inbox + half(mark);
        bool cleared = false;
        // Warp-uniform trip count: `base` is the warp's first index.
        for (unsigned int base = blockIdx.x * blockDim.x + (threadIdx.x & ~31u); base < limit;
             base += stride) {
            const unsigned int j = base + lane;
            const unsigned int w = j < inner_begin ? j : j + inner;
            unsigned int bits = 0;
            if (j < limit) {
                for (unsigned int s = 0; s + 1u < group.size; ++s) {
                    // Written by a peer (over the link): never an L1 line.
                    const unsigned int word = load_volatile(box + s * total + w);
                    if (word != 0u) {
                        box[s * total + w] = 0u;
                        cleared = true;
                        bits |= word;
                    }
                }
            }
            unsigned int pending = __ballot_sync(0xFFFFFFFFu, bits != 0u);
            while (pending != 0u) {
                const int from = __ffs(pending) - 1;
                pending &= pending - 1u;
                const unsigned int word = __shfl_sync(0xFFFFFFFFu, w, from);
                const unsigned int set = __shfl_sync(0xFFFFFFFFu, bits, from);
                const bool got = ((set >> lane) & 1u) != 0u;
                if (got) {
                    levels[word * 32u + lane] = mark;  // a peer's vertex: below n
                }
            }
            if (append) {
                append_bits(w, bits);
            }
        }
        if (cleared) {
            __threadfence_system();
        }
    }

    // Appends the vertices of each lane's word `w` set in `bits` to the worklist, with one
    // reservation for the warp (warp_reserve_n: a prefix of the lanes' counts), each lane
    // writing its own vertices. All 32 lanes call it.
    __device__ void append_bits(unsigned int w, unsigned int bits) const {
        unsigned int total;
        // At most 32 vertices per lane: 6 bits.
        unsigned int slot = warp_reserve_n<6>(wl.ctrl + CTRL_WL_END,
                                              static_cast<unsigned int>(__popc(bits)), total);
        for (unsigned int rest = bits; rest != 0u; rest &= rest - 1u) {
            wl.put(slot, w * 32u + static_cast<unsigned int>(__ffs(rest)) - 1u);
            ++slot;
        }
    }

    // apply_and_scan over BATCH words per warp and iteration.
    template <unsigned int BATCH>
    __device__ void apply_and_scan_in(unsigned int mark, bool receive, bool scan,
                                      bool pulled) const {
        const unsigned int warps = gridDim.x * blockDim.x / 32u;
        const unsigned int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32u;
        const unsigned int lane = lane_id();
        const unsigned int total = words();
        const unsigned int own_begin = owned_begin / 32u;
        const unsigned int own_end = (owned_end + 31u) / 32u;
        const unsigned int first = receive ? 0u : own_begin;
        const unsigned int last = receive ? total : own_end;
        unsigned int* const box = inbox + half(mark);
        unsigned long long out = 0;
        unsigned long long in = 0;
        unsigned long long found = 0;
        bool cleared = false;
        const bool reserve = (flags & DO_FLAG_WARP_RESERVE) != 0u;
        const auto owns_word = [&](unsigned int w) {
            return scan && w < last && w >= own_begin && w < own_end;
        };
        // The words wholly owned (nothing received there after a pull): [inner_begin,
        // inner_end), skipped by the word index when only applying.
        const unsigned int inner_begin = (owned_begin + 31u) / 32u;
        const unsigned int inner_end = owned_end >= n ? total : owned_end / 32u;
        const unsigned int inner = pulled && inner_end > inner_begin ? inner_end - inner_begin : 0u;
        const unsigned int skip = scan ? 0u : inner;
        const auto word_at = [&](unsigned int j) { return j < inner_begin ? j : j + skip; };
        const auto received_at = [&](unsigned int w) {
            return receive && w < last && !(w >= inner_begin && w - inner_begin < inner);
        };
        for (unsigned int base = first + warp; base < last - skip; base += BATCH * warps) {
            unsigned int loaded[BATCH];
            unsigned int received[BATCH];
#pragma unroll
            for (unsigned int k = 0; k < BATCH; ++k) {
                const unsigned int w = word_at(base + k * warps);
                const unsigned int v = w * 32u + lane;
                // An owned word's levels are loaded with the inbox words, not after them.
                loaded[k] = owns_word(w) && v < n ? levels[v] : 0u;
                received[k] = 0u;
                if (received_at(w)) {
                    for (unsigned int s = 0; s + 1u < group.size; ++s) {
                        // Written by a peer (over the link): never an L1 line.
                        const unsigned int bits = load_volatile(box + s * total + w);
                        received[k] |= bits;
                        if (bits != 0u && lane == 0u) {
                            box[s * total + w] = 0u;
                            cleared = true;
                        }
                    }
                }
            }
#pragma unroll
            for (unsigned int k = 0; k < BATCH; ++k) {
                const unsigned int w = word_at(base + k * warps);
                const bool owned_word = owns_word(w);
                if (received[k] == 0u && !owned_word) {
                    continue;  // warp-uniform
                }
                const unsigned int v = w * 32u + lane;
                unsigned int level = loaded[k];
                if (!owned_word && v < n) {
                    level = levels[v];
                }
                if (((received[k] >> lane) & 1u) != 0u && level == 0xFFFFFFFFu) {
                    levels[v] = mark;
                    level = mark;
                }
                const bool hit = scan && v >= owned_begin && v < owned_end && level == mark;
                if (hit) {
                    add_degrees(push_offsets, pull_offsets, v, out, in);
                    ++found;
                }
                if (!reserve) {
                    wl.append_warp(v, hit);
                }
            }
        }
        if (cleared) {
            __threadfence_system();
        }
        if (reserve && scan) {
            const unsigned int hits =
                __reduce_add_sync(0xFFFFFFFFu, static_cast<unsigned int>(found));
            append_marked(mark, first, last, hits);
        }
        count_found(out, in, found);
    }

    // Pull step of DO_FLAG_PULL_FRONTIER: every owned UNREACHED vertex with an in-neighbour
    // at `level` gets level + 1, is appended to the worklist (the next frontier: rewound by
    // the decide) and counted; with peers, each warp's ballot of finds (32 consecutive
    // vertices from a word-aligned start: one bitmap word) is stored into their inboxes.
    __device__ void pull_frontier(unsigned int level, bool several) const {
        const unsigned int stride = gridDim.x * blockDim.x;
        const unsigned int begin = owned_begin & ~31u;
        const unsigned int end = owned_end < n ? owned_end : n;
        const unsigned int span = end > begin ? end - begin : 0u;
        const unsigned int rounds = (span + stride - 1u) / stride;
        const unsigned int lane = lane_id();
        const unsigned int total = words();
        const unsigned int slot = slot_at(lane);
        const unsigned int offset = half(level + 1u);
        const bool sends = several && lane < group.size && lane != group.rank;
        unsigned long long examined = 0;
        unsigned long long out = 0;
        unsigned long long in = 0;
        unsigned long long found_count = 0;
        bool stored = false;
        const bool reserve = (flags & DO_FLAG_WARP_RESERVE) != 0u;
        for (unsigned int r = 0; r < rounds; ++r) {
            const unsigned int v = begin + r * stride + blockIdx.x * blockDim.x + threadIdx.x;
            bool found = false;
            if (v >= owned_begin && v < end && levels[v] == 0xFFFFFFFFu) {
                found = pull_finds_parent(levels, pull_offsets, pull_sources, v, level, examined);
                if (found) {
                    levels[v] = level + 1u;
                    add_degrees(push_offsets, pull_offsets, v, out, in);
                    ++found_count;
                }
            }
            if (!reserve) {
                wl.append_warp(v, found);
            }
            if (several) {
                const unsigned int bits = __ballot_sync(0xFFFFFFFFu, found);
                if (bits != 0u && sends) {
                    inboxes[lane][offset + slot * total + (v - lane_id()) / 32u] = bits;
                    stored = true;
                }
            }
        }
        if (stored) {
            __threadfence_system();
        }
        if (reserve) {
            const unsigned int finds =
                __reduce_add_sync(0xFFFFFFFFu, static_cast<unsigned int>(found_count));
            append_marked(level + 1u, begin / 32u, (end + 31u) / 32u, finds);
        }
        count_found(out, in, found_count, examined);
    }

    // DO_FLAG_PUSH_FRONTIER: adds the degrees and number of the frontier at worklist
    // positions [begin, end) to the level counters.
    __device__ void count_frontier(unsigned int begin, unsigned int end) const {
        const unsigned int stride = gridDim.x * blockDim.x;
        unsigned long long out = 0;
        unsigned long long in = 0;
        unsigned long long found = 0;
        for (unsigned int p = begin + blockIdx.x * blockDim.x + threadIdx.x; p < end;
             p += stride) {
            add_degrees(push_offsets, pull_offsets, wl.at(p), out, in);
            ++found;
        }
        count_found(out, in, found);
    }

    // DO_FLAG_SPARSE_PUSH, after a push: stores its appends at worklist positions [begin,
    // end) (every vertex this device set to `mark`, each once; fewer than words()) as a list
    // into this device's slot of every peer's inbox (unless `listed`: the push stored them,
    // DO_FLAG_LISTED_PUSH), and appends the owned ones behind them (the next frontier),
    // their degrees and number added to the level counters (`global`: of every append, owned
    // or not; see apply_lists). All threads call it.
    __device__ void send_appends(unsigned int mark, unsigned int begin, unsigned int end,
                                 bool global, bool listed) const {
        const unsigned int stride = gridDim.x * blockDim.x;
        const unsigned int thread = blockIdx.x * blockDim.x + threadIdx.x;
        const unsigned int count = end - begin;
        const unsigned int rounds = (count + stride - 1u) / stride;
        const unsigned int total = words();
        const unsigned int offset = half(mark);
        unsigned long long out = 0;
        unsigned long long in = 0;
        unsigned long long found = 0;
        for (unsigned int r = 0; r < rounds; ++r) {
            const unsigned int i = r * stride + thread;
            unsigned int v = 0;
            bool hit = false;
            if (i < count) {
                v = wl.at(begin + i);
                for (unsigned int d = 0; d < group.size && !listed; ++d) {
                    if (d != group.rank) {
                        inboxes[d][offset + slot_at(d) * total + i] = v;
                    }
                }
                hit = v >= owned_begin && v < owned_end;
                if (hit || global) {
                    add_degrees(push_offsets, pull_offsets, v, out, in);
                    ++found;
                }
            }
            wl.append_warp(v, hit);
        }
        if (thread < count && !listed) {
            __threadfence_system();
        }
        count_found(out, in, found);
    }

    // DO_FLAG_SPARSE_PUSH, after the exchange: applies every peer's list of vertices at
    // `mark` (its length in DO_RECEIVED + its rank) and clears it; a vertex whose level this
    // device sets first (from UNREACHED) and owns joins the next frontier and the counters.
    // `global` (DO_FLAG_ONE_EXCHANGE): every vertex whose level it sets first is counted,
    // owned or not: with send_appends' global counts, each vertex of the union of all the
    // devices' appends counted once, so the counters are the global ones on every device
    // (no exchange of counters). All threads call it.
    __device__ void apply_lists(unsigned int mark, bool global) const {
        const unsigned int stride = gridDim.x * blockDim.x;
        const unsigned int thread = blockIdx.x * blockDim.x + threadIdx.x;
        const unsigned int total = words();
        unsigned int* const box = inbox + half(mark);
        unsigned long long out = 0;
        unsigned long long in = 0;
        unsigned long long found = 0;
        bool cleared = false;
        for (unsigned int d = 0; d < group.size; ++d) {
            if (d == group.rank) {
                continue;
            }
            unsigned int* const list = box + (d < group.rank ? d : d - 1u) * total;
            const unsigned long long length = get(DO_RECEIVED + d);
            const unsigned int count = length < total ? static_cast<unsigned int>(length) : total;
            const unsigned int rounds = (count + stride - 1u) / stride;
            for (unsigned int r = 0; r < rounds; ++r) {
                const unsigned int i = r * stride + thread;
                unsigned int v = 0;
                bool hit = false;
                if (i < count) {
                    // Written by a peer (over the link): never an L1 line.
                    v = load_volatile(list + i);
                    list[i] = 0u;
                    cleared = true;
                    if (v < n && atomicCAS(levels + v, 0xFFFFFFFFu, mark) == 0xFFFFFFFFu) {
                        hit = v >= owned_begin && v < owned_end;
                        if (hit || global) {
                            add_degrees(push_offsets, pull_offsets, v, out, in);
                            ++found;
                        }
                    }
                }
                wl.append_warp(v, hit);
            }
        }
        if (cleared) {
            __threadfence_system();
        }
        count_found(out, in, found);
    }

    // The exchange after a sparse push's send (one thread): every device's list length
    // travels with it, summed into DO_RECEIVED by rank. False when it failed.
    __device__ bool exchange_lengths(unsigned int appends) const {
        unsigned long long mine[PEER_MAX_DEVICES];
        unsigned long long sums[PEER_MAX_DEVICES];
        for (unsigned int d = 0; d < group.size; ++d) {
            mine[d] = d == group.rank ? appends : 0ull;
        }
        if (!exchange(mine, sums, group.size)) {
            return false;
        }
        for (unsigned int d = 0; d < group.size; ++d) {
            set(DO_RECEIVED + d, sums[d]);
        }
        return true;
    }

    __device__ unsigned long long get(unsigned int word) const {
        return load_relaxed_u64(state + word);
    }

    __device__ void set(unsigned int word, unsigned long long v) const {
        store_relaxed_u64(state + word, v);
    }

    // An exchange of `count` values (none: a barrier across the devices); false when it
    // failed (DO_STATUS set). One thread.
    __device__ bool exchange(const unsigned long long* mine, unsigned long long* sums,
                             unsigned int count) const {
        const unsigned long long index = get(DO_EXCHANGES);
        set(DO_EXCHANGES, index + 1ull);
        const unsigned int exchange = static_cast<unsigned int>(index);
        const unsigned int status =
            (flags & DO_FLAG_POST_EXCHANGE) != 0u
                ? peer_post_allreduce_sum(group, postboxes, exchange, mine, sums, count)
                : peer_allreduce_sum(group, exchange, mine, sums, count);
        if (status != PEER_OK) {
            set(DO_STATUS, status);
            return false;
        }
        return true;
    }

    // The action of the barrier after a scan (one thread, every block waiting): see the
    // header. Returns the next step as a record; notes what the step of trace row `row`
    // found and stamps its end.
    // `own`: DO_COUNTED_HERE (the counters count this device's owned finds: they are summed
    // over the devices) or this device's next frontier, the counters already global (a
    // DO_FLAG_ONE_EXCHANGE sparse push: no exchange).
    // `replication`: DoReplication bits of the step (DO_FOUND_EVERYWHERE: the next step may
    // be replicated).
    __device__ FusedRecord decide(const DirectionTrace& trace, unsigned int row,
                                  unsigned int own = DO_COUNTED_HERE,
                                  unsigned int replication = 0u) const {
        trace.stamp(row, TRACE_SCAN_END);
        trace.count_rows(row + 1u);
        const FusedRecord record = decide_next(own, (replication & DO_FOUND_EVERYWHERE) != 0u);
        trace.note(row, TRACE_FOUND, get(DO_FRONTIER));
        trace.note(row, TRACE_FOUND_HERE, record.w[DO_R_COUNT]);
        trace.note(row, TRACE_REPLICATION, replication);
        trace.stamp(row, TRACE_DECIDE_END);
        return record;
    }

    // DO_FLAG_ONE_EXCHANGE: decide() in the action of the barrier after a pull that built
    // the frontier, its exchange also the one that makes the pull's stored words visible.
    // The trace's decide phase reads 0 (its stamp precedes the apply pass's).
    // A replicated next step finds its frontier on every device: apply_pulled appends the
    // received vertices too.
    __device__ FusedRecord decide_folded(const DirectionTrace& trace, unsigned int row) const {
        trace.count_rows(row + 1u);
        const FusedRecord record = decide_next(DO_COUNTED_HERE, true);
        trace.stamp(row, TRACE_EXCHANGE_END);
        trace.note(row, TRACE_FOUND, get(DO_FRONTIER));
        trace.note(row, TRACE_FOUND_HERE, record.w[DO_R_COUNT]);
        trace.note(row, TRACE_REPLICATION,
                   record.w[DO_R_REPLICATED] != 0u ? DO_FOUND_EVERYWHERE : 0u);
        trace.stamp(row, TRACE_DECIDE_END);
        return record;
    }

    // decide() without the trace. `everywhere`: the frontier just found is, or (after a
    // pull that built it, decided here) can be made, whole on every device, so the next step
    // may be replicated.
    __device__ FusedRecord decide_next(unsigned int own, bool everywhere) const {
        unsigned long long mine[DIRECTION_COUNTERS];
        for (unsigned int i = 0; i < DIRECTION_COUNTERS; ++i) {
            mine[i] = get(DO_COUNTERS + i);
            set(DO_COUNTERS + i, 0ull);
        }
        unsigned long long sums[DIRECTION_COUNTERS];
        const FusedRecord stop{{DO_STOP, 0u, 0u, 0u, 0u, 0u}};
        if (several && own == DO_COUNTED_HERE) {
            if (!exchange(mine, sums, DIRECTION_COUNTERS)) {
                return stop;
            }
        } else {
            for (unsigned int i = 0; i < DIRECTION_COUNTERS; ++i) {
                sums[i] = mine[i];
            }
        }
        // Exchanges poll the abort word only while they wait: poll it here too.
        if (get(DO_LEVELS) % DO_ABORT_POLL == DO_ABORT_POLL - 1u &&
            peer_load_abort(group.abort) != 0u) {
            set(DO_STATUS, PEER_ABORTED);
            if (several) {
                peer_store_relaxed(group.mailbox + PEER_FAILED, PEER_ABORTED);  // peers leave
            }
            return stop;
        }
        const unsigned long long frontier = sums[DIRECTION_FRONTIER];
        const unsigned long long in = sums[DIRECTION_IN_ARCS];
        unsigned long long level = 0;
        unsigned long long previous = 0;
        unsigned long long unvisited_in = 0;
        bool pulling = false;
        if (get(DO_STARTED) == 0ull) {
            set(DO_STARTED, 1ull);
            unvisited_in = in_arcs > in ? in_arcs - in : 0ull;
            set(DO_REACHED, frontier);
        } else {
            // Account the step just taken (run_levels and MemberSteps).
            pulling = get(DO_PULLING) != 0ull;
            const unsigned long long reached = get(DO_REACHED);
            previous = get(DO_FRONTIER);
            const unsigned long long items = pulling ? n - reached : previous;
            const unsigned long long read = pulling ? 0ull : get(DO_FRONTIER_OUT);
            set(DO_LEVELS, get(DO_LEVELS) + 1ull);
            set(DO_ITEMS, get(DO_ITEMS) + items);
            set(DO_ARCS, get(DO_ARCS) + read + sums[DIRECTION_EXAMINED]);
            const unsigned long long before = get(DO_UNVISITED_IN);
            unvisited_in = before > in ? before - in : 0ull;
            set(DO_REACHED, reached + frontier);
            level = get(DO_LEVEL) + 1ull;
        }
        set(DO_UNVISITED_IN, unvisited_in);
        set(DO_PREVIOUS, previous);
        set(DO_FRONTIER, frontier);
        set(DO_FRONTIER_OUT, sums[DIRECTION_OUT_ARCS]);
        set(DO_LEVEL, level);
        if (frontier == 0ull) {
            return FusedRecord{{DO_DONE, 0u, 0u, 0u, 0u, 0u}};
        }
        pulling = direction_pulls(alpha, beta, pulling, frontier, sums[DIRECTION_OUT_ARCS],
                                  previous, unvisited_in, n);
        set(DO_PULLING, pulling ? 1ull : 0ull);
        if (pulling) {
            set(DO_PULL_LEVELS, get(DO_PULL_LEVELS) + 1ull);
        }
        const bool replicated = !pulling && everywhere && several &&
                                (flags & DO_FLAG_REPLICATE) != 0u &&
                                saturating_mul(sums[DIRECTION_OUT_ARCS], REPLICATE_DIVISOR) <= n;
        // A replicated step's frontier is the global one (a pull's own finds and the received
        // ones, or already global: `own`).
        const unsigned int count =
            own != DO_COUNTED_HERE ? own
            : replicated           ? static_cast<unsigned int>(frontier)
                                   : static_cast<unsigned int>(mine[DIRECTION_FRONTIER]);
        if (pulling &&
            (flags & (DO_FLAG_PULL_FRONTIER | DO_FLAG_PUSH_FRONTIER | DO_FLAG_SPARSE_PUSH)) !=
                0u) {
            // The pull appends the next frontier (or the pushes' appends reached far).
            store_relaxed(wl.ctrl + CTRL_WL_END, 0u);
        }
        const bool sparse = !pulling && !replicated && several &&
                            (flags & DO_FLAG_SPARSE_PUSH) != 0u &&
                            saturating_mul(sums[DIRECTION_OUT_ARCS], SPARSE_DIVISOR) <= n;
        return FusedRecord{{pulling ? DO_PULL : DO_PUSH, static_cast<unsigned int>(level), count,
                            push_hub_min_degree(count), sparse ? 1u : 0u,
                            replicated ? 1u : 0u}};
    }
};

}  // namespace groute

namespace groute {

// A push step's hub phase (`batched`: DO_FLAG_HUB_BATCH), appending through `appends`.
template <typename Appends>
__device__ __forceinline__ void push_hubs(bool batched, const MinSplitOps& ops,
                                          const unsigned long long* offsets,
                                          const unsigned int* targets,
                                          const DeviceWorklist& frontier,
                                          const Appends& appends) {
    const SendBuffer none{nullptr, 0u, 0u, frontier.ctrl};
    if (batched) {
        traversal_expand_hubs_into<BfsRelax, false, true>(ops, offsets, targets, nullptr,
                                                          frontier, appends, none, LowList{});
    } else {
        traversal_expand_hubs_into<BfsRelax, false, false>(ops, offsets, targets, nullptr,
                                                           frontier, appends, none, LowList{});
    }
}

// The kernel's body. SEVERAL false compiles a one-device kernel, which holds none of the
// peer steps; FIXED nonzero compiles a kernel for those DoFlag bits only (the `flags`
// argument is ignored), which holds none of the other variants; both together compile a
// kernel for several devices only (`several` a compile-time true, so the one-device steps
// are left out too: the host launches it on 2 or more members only). Either way the
// registers and code of the steps a run takes are not shaped by steps it never takes.
template <bool SEVERAL, unsigned int FIXED>
__device__ __forceinline__ void direction_fused(
    unsigned int* levels, const unsigned long long* push_offsets,
    const unsigned int* push_targets, const unsigned long long* pull_offsets,
    const unsigned int* pull_sources, unsigned int n, unsigned int owned_begin,
    unsigned int owned_end, unsigned int* wl_data, unsigned int wl_mask, unsigned int* ctrl,
    unsigned int* barrier, unsigned long long* state, unsigned int* const* inboxes,
    unsigned long long in_arcs, unsigned long long alpha, unsigned long long beta,
    const PeerGroup& group, unsigned long long* trace_words, unsigned int flags_arg,
    unsigned long long* const* postboxes) {
    const unsigned int flags = FIXED != 0u ? FIXED : flags_arg;
    const DeviceWorklist wl{wl_data, wl_mask, 0u, ctrl};
    DoRun run{levels,  push_offsets, push_targets, pull_offsets, pull_sources,
              n,       owned_begin,  owned_end,    wl,           state,
              inboxes, inboxes[group.rank], in_arcs, alpha, beta,
              group,   flags,        postboxes,    0u, SEVERAL && (FIXED != 0u || group.size > 1u)};
    const DirectionTrace trace{trace_words};
    const bool tracer = blockIdx.x == 0u && threadIdx.x == 0u;
    if (tracer) {
        // The start gate (peer_group.cuh): exchange 0 completes only once every member runs.
        peer_start_arrive(group);
        trace.stamp_header(TRACE_START);
    }
    const FusedBarrierConfig config{0u, 0u};
    __shared__ FusedRecord shared_record;
    unsigned int gen = 0;
    const auto publish = [&](const FusedRecord& r) { shared_record = r; };
    const auto settle = [] {};
    const auto rewind = [&] {
        store_relaxed(ctrl + CTRL_WL_END, 0u);
        return FusedRecord{{0u, 0u, 0u, 0u, 0u, 0u}};
    };
    const bool several = run.several;
    const bool pull_frontier = (flags & DO_FLAG_PULL_FRONTIER) != 0u;
    const bool push_frontier = (flags & DO_FLAG_PUSH_FRONTIER) != 0u && !several;
    const bool one_exchange = (flags & DO_FLAG_ONE_EXCHANGE) != 0u && several && pull_frontier;
    const bool replicate = (flags & DO_FLAG_REPLICATE) != 0u && several;
    unsigned int front = 0;  // the worklist position of the frontier's first item
    unsigned int row = 0;  // the trace row: the level steps run so far
    // DO_FLAG_REPLICATE: the frontier in the worklist is the whole one, alike on every device.
    bool everywhere = replicate;

    if (replicate) {
        // The host put the source at worklist position 0 of every device: the counters of
        // its one-vertex frontier are global as counted here.
        run.count_frontier(0u, 1u);
        grid_barrier(
            barrier, gen, config,
            [&] { return run.decide(trace, row, 1u, DO_FOUND_EVERYWHERE); }, publish, settle);
    } else {
        run.apply_and_scan(0u, false, true, false);
        grid_barrier(barrier, gen, config, [&] { return run.decide(trace, row); }, publish,
                     settle);
    }
    FusedRecord next = shared_record;
    while (next.w[DO_R_PHASE] == DO_PUSH || next.w[DO_R_PHASE] == DO_PULL) {
        ++row;
        const unsigned int level = next.w[DO_R_LEVEL];
        const bool push = next.w[DO_R_PHASE] == DO_PUSH;
        // DO_FLAG_REPLICATE: this push runs whole on every device (decided alike everywhere).
        const bool replicated = push && next.w[DO_R_REPLICATED] != 0u;
        // A step that is not replicated from a frontier on every device expands its own items.
        const VertexRange items = everywhere && !replicated
                                      ? VertexRange{owned_begin, owned_end}
                                      : VertexRange{0u, 0xFFFFFFFFu};
        // DO_FLAG_SPARSE_PUSH: this push sends its appends as lists (decided alike everywhere).
        const bool sparse = push && several && next.w[DO_R_SPARSE] != 0u;
        // DO_FLAG_ONE_EXCHANGE: this sparse push's counters are global (decided locally).
        const bool global = sparse && (flags & DO_FLAG_ONE_EXCHANGE) != 0u;
        // DO_FLAG_ONE_EXCHANGE: this pull's counters travel with its words' exchange.
        const bool folded = !push && one_exchange;
        // DO_FLAG_LISTED_PUSH: this sparse push stores its lists as it appends; their
        // lengths' exchange runs in the action of the push's last grid barrier.
        const bool listed = sparse && (flags & DO_FLAG_LISTED_PUSH) != 0u;
        // DO_FLAG_PUSH_BITMAP: this dense push marks its discoveries in the bitmap.
        const bool marked =
            push && several && !sparse && !replicated && (flags & DO_FLAG_PUSH_BITMAP) != 0u;
        unsigned int appends = 0;  // a sparse push's list length
        const auto step_done = [&] {
            trace.stamp(row, TRACE_STEP_END);
            trace.note(row, TRACE_KIND, next.w[DO_R_PHASE]);
            trace.note(row, TRACE_LEVEL, level);
        };
        // Whether the step built the next frontier itself (no scan after the exchange).
        bool built = false;
        // Whether the step's exchange ran in its own barrier's action (listed), or it needs
        // none (replicated).
        bool exchanged = false;
        if (push) {
            const MinSplitOps ops{0u, n, levels};
            const SendBuffer none{nullptr, 0u, 0u, ctrl};
            const DeviceWorklist frontier{wl_data, wl_mask, front, ctrl};
            const unsigned int count = next.w[DO_R_COUNT];
            const unsigned int list_begin = front + count;
            bool stored = false;  // this thread stored list entries (listed)
            // Makes this thread's list entries visible to the peers before the barrier.
            const auto fence_entries = [&] {
                if (stored) {
                    stored = false;
                    __threadfence_system();
                }
            };
            const PushAppends appends_to{frontier,    inboxes,    list_begin,
                                         run.half(level + 1u), run.words(), group.rank,
                                         group.size,  listed,     &stored,
                                         marked ? run.marks() : nullptr};
            traversal_expand_into<BfsRelax, false>(ops, push_offsets, push_targets, nullptr,
                                                   frontier, appends_to, count, none, LowList{},
                                                   GridShape::launch(), next.w[DO_R_HUBS], true,
                                                   items);
            fence_entries();
            // The action lists whether hubs wait (their expansion appends: no rewind yet) and
            // where the appends end; once none wait, a listed push's exchange runs here
            // (word 2: 1 when it succeeded, 2 when it failed).
            const auto appended = [&](unsigned int hubs) {
                if (hubs == 0u && !push_frontier && !sparse && !replicated) {
                    store_relaxed(ctrl + CTRL_WL_END, 0u);
                }
                const unsigned int end = load_volatile(ctrl + CTRL_WL_END);
                unsigned int listed_exchange = 0u;
                if (listed && hubs == 0u) {
                    listed_exchange = run.exchange_lengths(end - list_begin) ? 1u : 2u;
                    trace.stamp(row, TRACE_EXCHANGE_END);
                }
                return FusedRecord{{hubs, end, listed_exchange, 0u, 0u, 0u}};
            };

            grid_barrier(
                barrier, gen, config,
                [&] {
                    step_done();
                    const unsigned int hubs = load_volatile(ctrl + CTRL_HUB_COUNT);
                    trace.note(row, TRACE_HUBS, hubs);
                    return appended(hubs);
                },
                publish, settle);
            if (shared_record.w[0] != 0u) {
                const bool batched = (flags & DO_FLAG_HUB_BATCH) != 0u;
                push_hubs(batched, ops, push_offsets, push_targets, frontier, appends_to);
                fence_entries();
                grid_barrier(
                    barrier, gen, config,
                    [&] {
                        trace.stamp(row, TRACE_HUBS_END);
                        store_relaxed(ctrl + CTRL_HUB_COUNT, 0u);
                        store_relaxed(ctrl + CTRL_HUB_COUNT + 1u, 0u);
                        return appended(0u);
                    },
                    publish, settle);
            }
            if (push_frontier || replicated) {
                // The appends [front + count, end) are the next frontier (replicated: alike on
                // every device, counted whole; nothing to exchange).
                front += count;
                run.count_frontier(front, shared_record.w[1]);
                built = true;
                exchanged = replicated;
            } else if (sparse) {
                // The appends [front + count, end) are sent (listed: were sent, and
                // exchanged); the next frontier goes behind.
                const unsigned int end = shared_record.w[1];
                appends = end - list_begin;
                if (listed) {
                    if (shared_record.w[2] != 1u) {
                        break;  // the exchange failed (DO_STATUS set)
                    }
                    exchanged = true;
                }
                run.send_appends(level + 1u, list_begin, end, global, listed);
                front = end;
                built = true;
            } else {
                front = 0u;
            }
        } else if (pull_frontier) {
            run.pull_frontier(level, several);
            built = true;  // no barrier: the exchange's or the decide's is the next one
            front = 0u;
        } else {
            front = 0u;  // the scan appends the next frontier from 0
            const unsigned int begin = owned_begin;
            const unsigned int end = owned_end < n ? owned_end : n;
            direction_pull(levels, pull_offsets, pull_sources, begin, end, level, wl,
                           state + DO_COUNTERS);
            grid_barrier(
                barrier, gen, config,
                [&] {
                    step_done();
                    return rewind();
                },
                publish, settle);
        }
        if (several && !exchanged) {
            if (!built) {
                const unsigned int words = run.words();
                const unsigned int begin = push ? 0u : owned_begin / 32u;
                const unsigned int end = push ? words : (owned_end + 31u) / 32u;
                if (marked) {
                    run.send_marks(level + 1u);
                } else {
                    run.send(level + 1u, begin, end < words ? end : words);
                }
            }
            grid_barrier(
                barrier, gen, config,
                [&] {
                    if (built && !push) {
                        step_done();  // the pull stored its words itself
                    } else {
                        trace.stamp(row, TRACE_SEND_END);
                    }
                    if (folded) {
                        return run.decide_folded(trace, row);
                    }
                    const bool ok = sparse ? run.exchange_lengths(appends)
                                           : run.exchange(nullptr, nullptr, 0u);
                    trace.stamp(row, TRACE_EXCHANGE_END);
                    return FusedRecord{{ok ? 1u : 0u, 0u, 0u, 0u, 0u, 0u}};
                },
                publish, settle);
            if (folded) {
                // Decided: apply the received words, then the next step (a barrier of this
                // device only: its peers may already store the next level's words, into
                // the other inbox half).
                const FusedRecord decided = shared_record;
                if (decided.w[DO_R_PHASE] != DO_PUSH && decided.w[DO_R_PHASE] != DO_PULL) {
                    // Done (the global frontier is empty: no device stored a word, so there is
                    // nothing to apply and every inbox word is still zero) or stopped (the
                    // run is discarded): no apply pass, no barrier.
                    next = decided;
                    continue;
                }
                // A replicated next step needs the received finds in the frontier too.
                everywhere = decided.w[DO_R_REPLICATED] != 0u;
                run.apply_pulled(level + 1u, everywhere);
                grid_barrier(
                    barrier, gen, config,
                    [&] {
                        trace.stamp(row, TRACE_SCAN_END);
                        return decided;
                    },
                    publish, settle);
                next = shared_record;
                continue;
            }
            if (shared_record.w[0] == 0u) {
                break;
            }
        }
        if (sparse) {
            run.apply_lists(level + 1u, global);
        } else if (!replicated && (several || !built)) {
            run.apply_and_scan(level + 1u, several, !built, !push);
        }
        everywhere = replicated;
        if (replicated) {
            ++run.replicated_levels;  // every thread's copy, alike
        }
        grid_barrier(
            barrier, gen, config,
            [&] {
                if (built && !several && !push) {
                    step_done();  // the pull's stamp: no barrier after it
                }
                if (replicated || global) {
                    // The next frontier: this device's appends from `front` on (replicated:
                    // alike on every device; global: behind the sent ones), the counters
                    // already global.
                    return run.decide(trace, row, load_volatile(ctrl + CTRL_WL_END) - front,
                                      replicated ? DO_STEP_REPLICATED | DO_FOUND_EVERYWHERE
                                                 : 0u);
                }
                return run.decide(trace, row);
            },
            publish, settle);
        next = shared_record;
    }
    if (tracer) {
        trace.stamp_header(TRACE_END);
    }
}

}  // namespace groute

// The entry points, held to 5 blocks of 256 threads per SM (at most 51 registers; unbounded,
// ptxas for sm_90 takes 60-64 and only 4 blocks fit) but for _occupancy:
// - bfs_direction_fused_one: one device, DO_DEFAULT_FLAGS (no peer steps, no other variant);
// - bfs_direction_fused_several: several devices, DO_DEFAULT_FLAGS;
// - bfs_direction_fused: any count, the variants of `flags` (A/B runs);
// - bfs_direction_fused_occupancy: the same capped at 32 registers (some spilled: 8 blocks,
//   every thread slot of an SM), for A/B runs of the phases bound by memory latency.
// The host (FusedDirectionOptions::kernel_name) picks a fixed build when its flags are
// DO_DEFAULT_FLAGS, which must equal FusedDirectionOptions::default()'s (a test reads it
// here).
#define GROUTE_DIRECTION_FUSED_ENTRY(NAME, BOUNDS, SEVERAL, FIXED)                              \
    extern "C" __global__ void BOUNDS NAME(                                                     \
        unsigned int* levels, const unsigned long long* push_offsets,                           \
        const unsigned int* push_targets, const unsigned long long* pull_offsets,               \
        const unsigned int* pull_sources, unsigned int n, unsigned int owned_begin,             \
        unsigned int owned_end, unsigned int* wl_data, unsigned int wl_mask, unsigned int* ctrl, \
        unsigned int* barrier, unsigned long long* state, unsigned int* const* inboxes,         \
        unsigned long long in_arcs, unsigned long long alpha, unsigned long long beta,          \
        groute::PeerGroup group, unsigned long long* trace_words, unsigned int flags,           \
        unsigned long long* const* postboxes) {                                                 \
        groute::direction_fused<SEVERAL, FIXED>(levels, push_offsets, push_targets,             \
                                                pull_offsets, pull_sources, n, owned_begin,     \
                                                owned_end, wl_data, wl_mask, ctrl, barrier,     \
                                                state, inboxes, in_arcs, alpha, beta, group,    \
                                                trace_words, flags, postboxes);                 \
    }

namespace groute {
// FusedDirectionOptions::default()'s kernel flags (crates/groute-bfs/src/direction/fused/
// options.rs): the pull- and push-built frontiers, warp reservations, posted exchanges,
// sparse pushes, one exchange per level, batched hubs, listed sparse pushes, the dense push's
// bitmap, replicated levels.
enum : unsigned int {
    DO_DEFAULT_FLAGS = DO_FLAG_PULL_FRONTIER | DO_FLAG_WARP_RESERVE | DO_FLAG_POST_EXCHANGE |
                       DO_FLAG_PUSH_FRONTIER | DO_FLAG_SPARSE_PUSH | DO_FLAG_ONE_EXCHANGE |
                       DO_FLAG_HUB_BATCH | DO_FLAG_LISTED_PUSH | DO_FLAG_PUSH_BITMAP |
                       DO_FLAG_REPLICATE,
};
// The fixed builds' template arguments. GROUTE_DO_RUNTIME_FLAGS (a diagnostic build, through
// GROUTE_NVRTC_OPTIONS) compiles them as bfs_direction_fused is compiled (every step, `flags`
// read at run time), so that one binary can A/B the fixed builds against the build they
// replace.
#ifdef GROUTE_DO_RUNTIME_FLAGS
constexpr bool DO_ONE_SEVERAL = true;
constexpr unsigned int DO_FIXED_FLAGS = 0u;
#else
constexpr bool DO_ONE_SEVERAL = false;
constexpr unsigned int DO_FIXED_FLAGS = DO_DEFAULT_FLAGS;
#endif
}  // namespace groute

GROUTE_DIRECTION_FUSED_ENTRY(bfs_direction_fused_one, __launch_bounds__(groute::DO_BLOCK, 5),
                             groute::DO_ONE_SEVERAL, groute::DO_FIXED_FLAGS)
GROUTE_DIRECTION_FUSED_ENTRY(bfs_direction_fused_several,
                             __launch_bounds__(groute::DO_BLOCK, 5), true,
                             groute::DO_FIXED_FLAGS)
GROUTE_DIRECTION_FUSED_ENTRY(bfs_direction_fused, __launch_bounds__(groute::DO_BLOCK, 5), true,
                             0u)
GROUTE_DIRECTION_FUSED_ENTRY(bfs_direction_fused_occupancy,
                             __launch_bounds__(groute::DO_BLOCK, 8), true, 0u)
