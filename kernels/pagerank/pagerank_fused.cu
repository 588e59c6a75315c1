// Device-driven PageRank: ONE persistent cooperative kernel per device runs every round of the
// run (crates/groute-pagerank/src/cuda/device_driven.rs launches it on every device of a
// PeerGroup, with no host in the loop). The rounds are the host-driven worker's
// (kernels/pagerank/pagerank.cu), their bodies the same functions
// (kernels/include/pagerank_push.cuh, kernels/include/pull_sweep_gather.cuh); phases are
// separated by grid barriers (grid_barrier of grid_barrier.cuh) and the devices by
// cross-device all-reduces
// (peer_post_allreduce_sum of peer_post.cuh: each device posts into its peers' postboxes and
// polls only its own; the start gate and the failure word stay in the group's mailbox).
//
// Sweeps pull across devices through MIRRORS. A sweep takes every owned residual above its
// floor into the share array, then posts, for every peer o, the shares of its owned vertices
// that have an out-arc to o's vertices (its mirrors for o, listed at upload, ascending) into
// o's share array at the vertices' own ids: one value per (vertex, peer) and sweep, however
// many arcs the vertex has into o. After barrier X, an exchange that makes every device's posts
// visible, each device gathers over the in-arcs of its owned vertices exactly as on one device,
// a remote in-neighbour's share read where its owner posted it. No atomic on any arc, no cut
// list, and, but for a chained gather's takes (below), nothing left in flight after the round:
// the gather delivers every arc's mass in the sweep that took it. A sweep is therefore
// collective: every device sweeps in the same rounds (the exchange of barrier E picks the
// kind from the global sums, below).
//
// Worklist rounds push, and a contribution to another device's vertex goes straight to its
// owner (PeerHalo): a push to a vertex w of device o atomically adds the share to o's
// incoming halo slot of w (halo[o][parity][w - begin(o)], system-scope atomics over NVLink)
// and, when the slot was empty (the round's first contribution to w: old value 0), appends w
// to o's inbox of that parity (a system-scope atomic on o's tail; capacity: o's in-cut
// vertices, those with an in-arc from another device, so it cannot overflow; checked anyway,
// the needed size recorded in PRF_INBOX_OVERFLOW). Every writing thread then executes
// __threadfence_system() after each add, or, with PRF_FLAG_FENCE_PER_ROUND
// (--fused-fence-per-round), every thread once per round, right before barrier E (what the
// exchange's visibility argument needs: every peer write of the thread ordered before its
// block's arrival at the barrier whose action runs the exchange; the barriers inside the
// round publish nothing to peers). The parity is the round's (round & 1).
//
// A round (every block, grid-uniform control flow; the record of the last barrier says what):
//   SWEEP     pull take over the owned range (floor 0 in round 0, epsilon later; shares
//             stored, nothing pushed) | barrier T (a chained or delivering sweep has neither:
//             the last gather took) | several devices: the mirror post, a
//             system fence, barrier X (its action: an exchange with every peer) | the pull
//             hubs' tiles and barrier H (only on a device with pull hubs) | pull gather.
//   WORKLIST  push round over the record's [first, first + count) of the worklist (possibly
//             empty: every device runs every round) | barrier and the listed hubs (when the
//             device has hubs).
//   then barrier E, whose action (thread 0 of the last block) accounts for the round (pushed
//   count, hub counter and pushed word zeroed, overflow and abort checks) and, on several
//   devices, runs an exchange (peer_post_allreduce_sum over (pending items, items sent this
//   round, stop, vertices its chained gather took)): every device's peer writes of the round
//   are visible after it and every device sees the same sums. A stop anywhere -> HALT; a
//   chained gather took anywhere -> the chained or delivering sweep (below); nothing pending
//   and nothing sent anywhere -> DONE (nothing is in flight: every earlier round's inbox was
//   drained). Else, on one device, the action picks the next round by the host mode's rule
//   on its pending items: SWEEP (floor epsilon, consuming every pending item) when pending *
//   sweep_divisor >= owned, else WORKLIST over min(pending, max_batch) items. On several, the
//   same rule over the sums (pending items and items in flight, against every vertex) fixes
//   the next kind for every device; every block DRAINs this device's inbox of the round's
//   parity (each listed vertex's halo slot taken with atomicExch and added to its residual; a
//   vertex that crosses epsilon is appended to the worklist: the host mode's receive rule),
//   and barrier D's action zeroes the drained tail and starts the agreed kind (sweeps stay
//   collective; a worklist round covers the device's own pending items, possibly none).
//
// Chained sweeps (no device with pull hubs: pull.share_next set on every device, and every
// peer's in the peers block): a sweep's gather takes at once every residual it leaves above
// epsilon (take_gathered of pull_sweep_gather.cuh), storing the shares into the other share
// array, and barrier E counts them (PRF_CHAIN_TAKEN; summed over the devices by its
// exchange). While they are at least the vertices over the sweep divisor, the next round is a
// CHAINED sweep: no take pass (on several devices, the mirror post reads that array and posts
// into the peers' arrays of the same role), its gather reads that array and takes into the
// first; once fewer, a DELIVER sweep gathers them without taking, listing the vertices that
// cross epsilon for the worklist rounds (REC_SHARE says which array a sweep reads, REC_FORM
// which form it runs; on several devices barrier E's exchange picks for all, through the
// drain). A sweep then costs one pass over the vertices and one barrier fewer: the take moves
// into the gather, which already reads and writes each vertex's residual. A chained take
// takes what the next sweep's take (floor epsilon) would have; where the unchained loop would
// follow a sweep with worklist rounds, the chain pays one more gather (the DELIVER sweep) to
// hand over the shares it already took.
//
// Double buffering: peers fill parity p in round k; the owner drains it after exchange k,
// while faster peers may already fill parity 1 - p in round k + 1; parity p is written again
// in round k + 2, after exchange k + 1, which the owner reaches only after its drain and the
// reset of the tail. Mirror posts need no parity: a device posts in a sweep only after every
// device passed the previous sweep's barrier X and barrier E (where the last gather ended).
//
// State block `state` (PRF_WORDS u32, zeroed by the host): the barrier's words
// (grid_barrier.cuh's FUSED_BARRIER_COUNT, FUSED_BARRIER_GEN, FUSED_RECORD), then the PRF_*
// words below, read and written by barrier actions only (one thread at a time, ordered by the
// barriers), except the counters that PeerHalo (sent, inbox overflow), the mirror post
// (PRF_MIRROR_SENT) and a chained gather (PRF_CHAIN_TAKEN, read and zeroed by barrier E's
// action) add to with atomics.
//
// Phase times (PRF_T_*, u64 ns of %globaltimer per device, 64-bit words): the action of every
// barrier stamps the time and adds the interval since the previous stamp (block 0 stamps the
// start before its first arrival) to the phase that the barrier closes: a sweep's take (to
// barrier T), its mirror post with the wait for every peer's (to the end of barrier X's
// exchange), its hub tiles (to barrier H), its gather (to barrier E; a chained gather's takes
// with it); a worklist round's push (to its hub barrier, or to E) and its hubs (to E); the
// exchange (inside barrier E's action); the drain with the next round's pick (to barrier D).
// A phase's interval runs from the previous action's stamp (before that release) to the
// arrival of its last block: the phase's slowest block plus a release. A few stamps per round.
//
// Stop reasons (PRF_STOP): PRF_STOP_OVERFLOW (this device's worklist or a peer's inbox:
// ctrl[CTRL_WL_OVERFLOW] / PRF_INBOX_OVERFLOW hold the size needed), PRF_STOP_PEER (another
// device stopped), PRF_STOP_ABORTED (the host's abort word), PRF_STOP_EXCHANGE (an exchange
// failed: PRF_PEER_STATUS holds its PeerStatus). The host fails the run on any of them.
// Launch cooperatively, blockDim.x = PRF_BLOCK (256), grid <= the resident maximum.
#include "abi_pagerank.h"
#include "grid_barrier.cuh"
#include "peer_group.cuh"
#include "peer_post.cuh"
#include "pagerank_push.cuh"
#include "pull_sweep_gather.cuh"

namespace {

// The state block's words (PrfWord), stop codes (PrfStop) and flags (PrfFlag) are
// abi_pagerank.h's (PageRankStateBlock).
using namespace groute;

// What the blocks run next. PRF_DRAIN (several devices, after barrier E): the inbox of the
// round that just ended, then the barrier that starts the next round (REC_DRAIN_SWEEP).
enum PrfKind : unsigned int {
    PRF_DONE = 0,
    PRF_SWEEP = 1,
    PRF_WORKLIST = 2,
    PRF_HALT = 3,
    PRF_DRAIN = 4,
};

// The release record: what every block runs next.
enum PrfRecordWord : unsigned int {
    REC_KIND = 0,   // PrfKind
    REC_FIRST = 1,  // worklist round: first item; sweep: the worklist's first unconsumed slot
    REC_COUNT = 2,  // worklist round: items
    REC_FLOOR = 3,  // sweep: the floor (f32 bits)
    REC_ROUND = 4,  // the round's index (its parity picks the halo and inbox)
    REC_HUBS = 5,   // after a round's first barrier: hubs were listed
    // In a PRF_DRAIN record (the word of REC_HUBS, unused between rounds): the next round the
    // devices agreed on (a PrfPick: PICK_SWEEP, PICK_WORKLIST, PICK_CHAINED, PICK_DELIVER).
    REC_DRAIN_SWEEP = 5,
    REC_SHARE = 6,  // sweep: its gather reads pull.share (0) or pull.share_next (1)
    REC_FORM = 7,   // sweep: a SweepForm
};

// How a sweep runs (REC_FORM). Chained sweeps run only where pull.share_next is set (no
// device with pull hubs): their gathers take at once (see the header comment).
enum SweepForm : unsigned int {
    FORM_TAKE = 0,     // the take, then the gather (chained: taking into the other array)
    FORM_CHAINED = 1,  // the last sweep's gather took: gather and take into the other array
    FORM_DELIVER = 2,  // the last sweep's gather took: gather only, listing the crossings
};

// The peers block, the pull topology and the settings are abi_pagerank.h's (PageRankPeers,
// PageRankPull, PageRankSettings), named here as the kernel's parameters.
using FusedPeers = groute::PageRankPeers;
using FusedPull = groute::PageRankPull;
using FusedSettings = groute::PageRankSettings;
static_assert(sizeof(FusedPeers::halo) / sizeof(FusedPeers::halo[0]) == groute::PEER_MAX_DEVICES,
              "PageRankPeers holds PEER_MAX_DEVICES devices");

// The owner of w (a vertex of another device) and w's incoming halo slot of `parity` there.
__device__ __forceinline__ float* halo_slot(const FusedPeers* peers, unsigned int size,
                                            unsigned int parity, unsigned int w,
                                            unsigned int& o) {
    o = 0;
    while (o + 1u < size && w >= peers->bounds[o + 1u]) {
        ++o;
    }
    const unsigned int begin = peers->bounds[o];
    const unsigned int owned = peers->bounds[o + 1u] - begin;
    return peers->halo[o] + static_cast<unsigned long long>(parity) * owned + (w - begin);
}

// Remote policy of the fused loop's worklist rounds: the share goes to the owner's halo, the
// first contribution of the round lists the vertex in the owner's inbox (see the header
// comment).
struct PeerHalo {
    const FusedPeers* peers;
    unsigned int size;
    unsigned int parity;
    unsigned int* state;
    bool fence_each;  // __threadfence_system() after every add (else once per round)

    static constexpr bool ALL_REMOTE = false;

    __device__ __forceinline__ bool add(unsigned int w, float share) const {
        unsigned int o = 0;
        float* slot = halo_slot(peers, size, parity, w, o);
        if (atomicAdd_system(slot, share) == 0.0f) {
            const unsigned int cap = peers->capacity[o];
            const unsigned int at = atomicAdd_system(peers->tails[o] + parity, 1u);
            if (at < cap) {
                peers->inbox[o][static_cast<unsigned long long>(parity) * cap + at] = w;
            } else {
                atomicMax(state + PRF_INBOX_OVERFLOW, at + 1u);
            }
            atomicAdd(reinterpret_cast<unsigned long long*>(state + PRF_SENT), 1ull);
        }
        if (fence_each) {
            __threadfence_system();
        }
        return false;  // nothing to list locally
    }
    __device__ __forceinline__ void append_warp(unsigned int, bool) const {}
    __device__ __forceinline__ void append_heads(const unsigned int (&)[BATCH], unsigned int) const {}
};

// A sweep's mirror post (several devices, after its take or the last gather's chained one):
// for every peer o, the share of
// each owned vertex with an out-arc to o's vertices (pull.mirrors), stored into o's share
// array at the vertex's own id, where o's gather reads it like a share of its own. Every
// mirror is posted, 0 included (a vertex not taken this sweep), so a peer never reads a
// share of an earlier sweep. `share` is this device's array the sweep's gathers read
// (pull.share, or with chained sweeps pull.share_next where `second`), posted into each peer's
// array of the same role. Returns the values this thread stored.
__device__ __forceinline__ unsigned int post_mirrors(const FusedPull& pull,
                                                     const FusedPeers* peers,
                                                     unsigned int size, const float* share,
                                                     bool second) {
    const unsigned int stride = gridDim.x * blockDim.x;
    unsigned int posted = 0;
    // Unrolled over the peers so that every index into the parameter's mirror_bounds is a
    // constant: a runtime index would make the compiler copy the whole parameter struct to
    // local memory, and every pointer read from that copy would then load through generic
    // addresses (LD instead of LDG), in the gather too.
#pragma unroll
    for (unsigned int o = 0; o < groute::PEER_MAX_DEVICES; ++o) {
        if (o < size) {
            float* peer_share = second ? peers->share_next[o] : peers->share[o];
            const unsigned int end = pull.mirror_bounds[o + 1u];
            for (unsigned int i = pull.mirror_bounds[o] + blockIdx.x * blockDim.x + threadIdx.x;
                 i < end; i += stride) {
                const unsigned int u = pull.mirrors[i];
                peer_share[u] = share[u];
                ++posted;
            }
        }
    }
    return posted;
}

__device__ __forceinline__ unsigned int state_load(const unsigned int* state, unsigned int w) {
    return groute::load_volatile(state + w);
}

__device__ __forceinline__ unsigned long long state_load_u64(const unsigned int* state,
                                                              unsigned int w) {
    return *reinterpret_cast<const volatile unsigned long long*>(state + w);
}

__device__ __forceinline__ void state_add_u64(unsigned int* state, unsigned int w,
                                              unsigned long long n) {
    *reinterpret_cast<volatile unsigned long long*>(state + w) = state_load_u64(state, w) + n;
}

// The %globaltimer (ns).
__device__ __forceinline__ unsigned long long globaltimer_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// In a barrier action: adds the time since the last stamp to the phase timer `word`.
__device__ __forceinline__ void stamp_phase(unsigned int* state, unsigned int word) {
    const unsigned long long now = globaltimer_ns();
    const unsigned long long last = state_load_u64(state, PRF_T_LAST);
    state_add_u64(state, word, now - last);
    *reinterpret_cast<volatile unsigned long long*>(state + PRF_T_LAST) = now;
}

// This device's incoming halo of `parity` (slot of owned v at v - owned_begin).
__device__ __forceinline__ float* own_halo(const PageRankOps& ops, const FusedPeers* peers,
                                           unsigned int rank, unsigned int parity) {
    const unsigned int owned = ops.owned_end - ops.owned_begin;
    return peers->halo[rank] + static_cast<unsigned long long>(parity) * owned;
}

// Takes the halo slots of the `count` owned vertices in `list` into their residuals (one
// atomicExch each: of two threads that take the same slot, one gets its mass and the other
// adds 0, which add_owned ignores), appending the vertices that crossed epsilon. Returns how
// many of this thread's slots held mass. `List`: a pointer, volatile where peers wrote it.
template <typename List>
__device__ __forceinline__ unsigned int drain_slots(const PageRankOps& ops, float* halo,
                                                    List list, unsigned int count,
                                                    const groute::DeviceWorklist& wl) {
    const unsigned int stride = gridDim.x * blockDim.x;
    const unsigned int rounds = (count + stride - 1u) / stride;
    unsigned int held = 0;
    for (unsigned int r = 0; r < rounds; ++r) {
        const unsigned int i = r * stride + blockIdx.x * blockDim.x + threadIdx.x;
        unsigned int v = 0;
        bool crossed = false;
        if (i < count) {
            v = list[i];
            const float h = atomicExch(halo + (v - ops.owned_begin), 0.0f);
            held += h > 0.0f ? 1u : 0u;
            crossed = add_owned(ops, v, h);
        }
        wl.append_warp(v, crossed);
    }
    return held;
}

// Drains this device's inbox of `parity` (after the exchange that made the round's peer
// writes visible): each listed vertex's halo slot is taken and added to its residual.
__device__ __forceinline__ void drain_inbox(const PageRankOps& ops, const FusedPeers* peers,
                                            unsigned int rank, unsigned int parity,
                                            const groute::DeviceWorklist& wl) {
    const unsigned int cap = peers->capacity[rank];
    const unsigned int count = min(groute::load_volatile(peers->tails[rank] + parity), cap);
    const volatile unsigned int* inbox =
        peers->inbox[rank] + static_cast<unsigned long long>(parity) * cap;
    drain_slots(ops, own_halo(ops, peers, rank, parity), inbox, count, wl);
}

// How the next round's kind is picked: by this device's pending items (one device), or as
// every device agreed at the exchange (several: a sweep needs every device's mirror post;
// after a chained gather, a chained or a delivering sweep: chained_sweep).
enum PrfPick : unsigned int {
    PICK_LOCAL = 0,
    PICK_SWEEP = 1,
    PICK_WORKLIST = 2,
    PICK_CHAINED = 3,
    PICK_DELIVER = 4,
};

// Whether `pending` items (of every device, with the items in flight to them) over `owned`
// vertices call for a sweep: the host mode's rule.
__device__ __forceinline__ bool sweep_due(unsigned long long pending, unsigned int owned,
                                          const FusedSettings& settings) {
    return settings.sweep_divisor != 0u && owned != 0u &&
           pending * settings.sweep_divisor >= owned;
}

// The next round of this device after the last one (`round`) was accounted for: a SWEEP
// (floor epsilon, consuming every pending item) where `pick` says so (PICK_LOCAL: when
// pending * sweep_divisor >= owned, on this device's pending items, worklist end -
// PRF_START), else a WORKLIST round over min(pending, max_batch) items. Runs in a barrier
// action (one thread, every block waiting).
__device__ __forceinline__ groute::FusedRecord next_round(const groute::FusedRecord& round,
                                                          const PageRankOps& ops,
                                                          const FusedSettings& settings,
                                                          const unsigned int* ctrl,
                                                          unsigned int* state, PrfPick pick) {
    groute::FusedRecord r = round;
    const unsigned int owned = ops.owned_end - ops.owned_begin;
    const unsigned int start = state_load(state, PRF_START);
    const unsigned int end = groute::load_volatile(ctrl + groute::CTRL_WL_END);
    const unsigned int pending = end - start;
    r.w[REC_HUBS] = 0;
    const bool sweep = pick == PICK_LOCAL ? sweep_due(pending, owned, settings) : pick == PICK_SWEEP;
    if (sweep) {
        // Every pending vertex is above epsilon until taken: the sweep covers them all.
        r.w[REC_KIND] = PRF_SWEEP;
        r.w[REC_FIRST] = end;
        r.w[REC_COUNT] = 0;
        r.w[REC_FLOOR] = __float_as_uint(ops.epsilon);
        r.w[REC_FORM] = FORM_TAKE;
        groute::store_relaxed(state + PRF_START, end);
    } else {
        // Possibly empty: every device runs every round.
        const unsigned int count = min(pending, settings.max_batch);
        r.w[REC_KIND] = PRF_WORKLIST;
        r.w[REC_FIRST] = start;
        r.w[REC_COUNT] = count;
        groute::store_relaxed(state + PRF_START, start + count);
    }
    return r;
}

// The sweep after one whose gathers took vertices (their shares wait in the other share
// array): `chain`ed (the caller's pick: while the vertices taken, on every device, are at
// least the vertices over the sweep divisor), its gather takes every residual above epsilon
// and so consumes every pending item; else a sweep that only delivers them, its gather
// listing the vertices that cross epsilon for the worklist rounds after it. Runs in a barrier
// action.
__device__ __forceinline__ groute::FusedRecord chained_sweep(const groute::FusedRecord& round,
                                                             const unsigned int* ctrl,
                                                             unsigned int* state, bool chain) {
    groute::FusedRecord r = round;
    const unsigned int end = groute::load_volatile(ctrl + groute::CTRL_WL_END);
    r.w[REC_HUBS] = 0;  // in a drain's record, the pick
    r.w[REC_KIND] = PRF_SWEEP;
    r.w[REC_FIRST] = end;
    r.w[REC_COUNT] = 0;
    r.w[REC_SHARE] = round.w[REC_SHARE] ^ 1u;
    r.w[REC_FORM] = chain ? FORM_CHAINED : FORM_DELIVER;
    if (chain) {
        groute::store_relaxed(state + PRF_START, end);
    }
    return r;
}

// Accounts for the round that just ended (every block arrived): its pushes, its hubs and its
// kind; returns this device's stop flag (overflow, or the host's abort word).
__device__ __forceinline__ unsigned int end_round(const groute::FusedRecord& round,
                                                  unsigned int* ctrl, unsigned int* state,
                                                  const groute::PeerGroup& group) {
    const bool sweep = round.w[REC_KIND] == PRF_SWEEP;
    const unsigned int pushed =
        sweep ? groute::load_volatile(ctrl + CTRL_PUSHED) : round.w[REC_COUNT];
    state_add_u64(state, PRF_PUSHED, pushed);
    groute::store_relaxed(ctrl + CTRL_PUSHED, 0u);
    *reinterpret_cast<volatile unsigned long long*>(ctrl + CTRL_HUB_COUNTER) = 0ull;
    const unsigned int rounds = state_load(state, PRF_ROUNDS) + 1u;
    groute::store_relaxed(state + PRF_ROUNDS, rounds);
    if (sweep) {
        groute::store_relaxed(state + PRF_SWEEPS, state_load(state, PRF_SWEEPS) + 1u);
    }
    if (groute::load_volatile(ctrl + groute::CTRL_WL_OVERFLOW) != 0u ||
        state_load(state, PRF_INBOX_OVERFLOW) != 0u) {
        return PRF_STOP_OVERFLOW;
    }
    if (rounds % PRF_ABORT_POLL == 0u && group.abort != nullptr &&
        groute::load_abort(group.abort) != 0u) {
        return PRF_STOP_ABORTED;
    }
    return PRF_STOP_NONE;
}

// The kernel (the entry points below): parameters by value, as the kernel's own.
__device__ __forceinline__ void pagerank_fused_body(
    PageRankOps ops, const unsigned long long* offsets, const unsigned int* targets,
    groute::DeviceWorklist wl, FusedPull pull, const FusedPeers* peers, FusedSettings settings,
    unsigned int* state, groute::PeerGroup group, unsigned long long* const* postboxes) {
    __shared__ groute::FusedRecord rec;
    const groute::FusedBarrierConfig config{settings.spin_ns, settings.barrier_flags};
    const unsigned int owned = ops.owned_end - ops.owned_begin;
    const groute::HubList hubs = hub_list(wl, settings.hub_capacity);
    const bool several = group.size > 1u;
    // Once per thread and round (before barrier E) instead of after every add (several
    // devices only).
    const bool fence_per_round = several && (settings.flags & PRF_FLAG_FENCE_PER_ROUND) != 0u;
    unsigned int gen = 0;
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        // The start gate (peer_group.cuh): exchange 0 completes only once every member runs.
        groute::peer_start_arrive(group);
        // The first phase's start (ordered before the first action by block 0's arrival).
        *reinterpret_cast<volatile unsigned long long*>(state + PRF_T_LAST) = globaltimer_ns();
    }
    if (threadIdx.x == 0) {
        rec.w[REC_KIND] = owned == 0u && !several ? PRF_DONE : PRF_SWEEP;
        rec.w[REC_FIRST] = 0;
        rec.w[REC_COUNT] = 0;
        rec.w[REC_FLOOR] = __float_as_uint(0.0f);
        rec.w[REC_ROUND] = 0;
        rec.w[REC_HUBS] = 0;
        rec.w[REC_SHARE] = 0;
        rec.w[REC_FORM] = FORM_TAKE;
    }
    __syncthreads();
    const auto keep = [](const groute::FusedRecord&) {};
    const auto nothing = [] {};
    const auto copy = [&](const groute::FusedRecord& r) { rec = r; };
    // In a barrier action: the next exchange with every peer (an all-reduce of `count`
    // values, also a barrier of the group); on failure the stop word says why and the record
    // `r` becomes a HALT. Returns the exchange's status.
    const auto exchange = [&](const unsigned long long* mine, unsigned long long* sums,
                              unsigned int count, groute::FusedRecord& r) {
        const unsigned int k = state_load(state, PRF_EXCHANGES);
        groute::store_relaxed(state + PRF_EXCHANGES, k + 1u);
        const unsigned int status =
            groute::peer_post_allreduce_sum(group, postboxes, k, mine, sums, count);
        if (status != groute::PEER_OK) {
            groute::store_relaxed(state + PRF_PEER_STATUS, status);
            groute::store_relaxed(state + PRF_STOP, PRF_STOP_EXCHANGE);
            r.w[REC_KIND] = PRF_HALT;
        }
        return status;
    };
    while (rec.w[REC_KIND] == PRF_SWEEP || rec.w[REC_KIND] == PRF_WORKLIST) {
        const groute::FusedRecord round = rec;
        const unsigned int parity = round.w[REC_ROUND] & 1u;
        const PeerHalo remote{peers, group.size, parity, state, !fence_per_round};
        groute::DeviceWorklist rwl = wl;
        rwl.first = round.w[REC_FIRST];
        // In a barrier's action: whether the round listed hubs.
        const auto hubs_listed = [&] {
            groute::FusedRecord r = round;
            r.w[REC_HUBS] = *reinterpret_cast<const volatile unsigned long long*>(
                                wl.ctrl + CTRL_HUB_COUNTER) != 0ull
                                ? 1u
                                : 0u;
            return r;
        };
        if (round.w[REC_KIND] == PRF_SWEEP) {
            // The share array this sweep's take (or the last one's chained gather) filled and
            // its gather reads, and where a chained gather takes into: the other one.
            const bool second = round.w[REC_SHARE] != 0u;
            float* const share = second ? pull.share_next : pull.share;
            float* const next = second ? pull.share : pull.share_next;
            const unsigned int form = round.w[REC_FORM];
            // Never beside hubs (the host does not chain there): a hub's share would not be
            // written into `next`.
            const bool chains = pull.share_next != nullptr && pull.hub_count == 0u;
            const ChainTake chain{chains && form != FORM_DELIVER ? next : nullptr, offsets,
                                  state + PRF_CHAIN_TAKEN};
            if (form == FORM_TAKE) {
                pull_take_grid(ops, offsets, share, __uint_as_float(round.w[REC_FLOOR]), rwl);
                groute::grid_barrier(
                    state, gen, config,
                    [&] {
                        stamp_phase(state, PRF_T_TAKE);
                        return round;
                    },
                    keep, nothing);
            }
            if (several) {
                // The shares are in place: post the mirrors, then barrier X, whose exchange
                // makes every device's posts visible before any gather reads them.
                const unsigned int posted = post_mirrors(pull, peers, group.size, share, second);
                groute::warp_add_u64(reinterpret_cast<unsigned long long*>(state + PRF_MIRROR_SENT),
                                     posted);
                __threadfence_system();
                groute::grid_barrier(
                    state, gen, config,
                    [&] {
                        groute::FusedRecord r = round;
                        const unsigned long long none[1] = {0ull};
                        unsigned long long sums[1] = {0ull};
                        exchange(none, sums, 1u, r);
                        stamp_phase(state, PRF_T_MIRROR);
                        return r;
                    },
                    copy, nothing);
                if (rec.w[REC_KIND] == PRF_HALT) {
                    break;
                }
            }
            if (pull.tile_count != 0u) {
                // The pull hubs' tiles, then barrier H: their sums are complete before the
                // gather reads them.
                pull_hub_tiles_grid<1>(pull.tiles, pull.tile_count, pull.in_sources,
                                       pull.share, nullptr, pull.hub_sum);
                groute::grid_barrier(
                    state, gen, config,
                    [&] {
                        stamp_phase(state, PRF_T_HUBS);
                        return round;
                    },
                    keep, nothing);
            }
            if (chain.next != nullptr && pull.max_in_degree < SHORT_LIST_ARCS) {
                gather_take_short(ops, pull.in_offsets, pull.in_offsets32, pull.in_sources, share,
                                  chain);
            } else {
                pull_gather_grid<1>(ops, pull.in_offsets, pull.in_sources, share, nullptr, rwl,
                                    pull.hubs, pull.hub_count, pull.hub_sum, pull.hub_degree,
                                    (settings.flags & PRF_FLAG_GATHER_INTERLEAVE) != 0u, chain);
            }
        } else {
            push_round<false>(ops, offsets, targets, WorklistItems{rwl, round.w[REC_FIRST]},
                              round.w[REC_COUNT], 0.0f, rwl, hubs, remote);
            if (settings.hub_capacity != 0u) {
                groute::grid_barrier(
                    state, gen, config,
                    [&] {
                        stamp_phase(state, PRF_T_WORKLIST);
                        return hubs_listed();
                    },
                    copy, nothing);
                if (rec.w[REC_HUBS] != 0u) {
                    push_hubs_grid(ops, offsets, targets, rwl, hubs, remote);
                }
            }
        }
        // After this thread's last peer write of the round (a worklist round's PeerHalo adds;
        // a sweep writes its peers only in its mirror post, fenced before barrier X).
        if (fence_per_round) {
            __threadfence_system();
        }
        // The phase barrier E closes.
        const unsigned int closing = round.w[REC_KIND] == PRF_SWEEP ? PRF_T_GATHER
                                     : settings.hub_capacity != 0u ? PRF_T_HUBS
                                                                   : PRF_T_WORKLIST;
        // Barrier E: account for the round and agree on the global counts (exchange k: every
        // device's peer writes of the round become visible). One device: pick the next round.
        groute::grid_barrier(
            state, gen, config,
            [&] {
                stamp_phase(state, closing);
                const unsigned int stop = end_round(round, wl.ctrl, state, group);
                // The vertices this round's chained gather took (0 in any other round).
                const unsigned int chained = state_load(state, PRF_CHAIN_TAKEN);
                groute::store_relaxed(state + PRF_CHAIN_TAKEN, 0u);
                state_add_u64(state, PRF_PUSHED, chained);
                const unsigned int start = state_load(state, PRF_START);
                const unsigned int pending =
                    groute::load_volatile(wl.ctrl + groute::CTRL_WL_END) - start;
                // Items sent this round: they wait in their owners' inboxes and halos.
                const unsigned long long sent_total = state_load_u64(state, PRF_SENT);
                const unsigned long long sent = sent_total - state_load_u64(state, PRF_SENT_SEEN);
                *reinterpret_cast<volatile unsigned long long*>(state + PRF_SENT_SEEN) = sent_total;
                unsigned long long sums[4] = {pending, sent, stop != PRF_STOP_NONE ? 1ull : 0ull,
                                              chained};
                groute::FusedRecord r = round;
                r.w[REC_ROUND] = round.w[REC_ROUND] + 1u;
                r.w[REC_HUBS] = 0;
                if (several) {
                    const unsigned long long mine[4] = {sums[0], sums[1], sums[2], sums[3]};
                    if (exchange(mine, sums, 4u, r) != groute::PEER_OK) {
                        sums[2] = 1ull;
                    }
                    stamp_phase(state, PRF_T_EXCHANGE);
                }
                if (sums[2] != 0ull) {
                    if (stop != PRF_STOP_NONE) {
                        groute::store_relaxed(state + PRF_STOP, stop);
                    } else if (state_load(state, PRF_STOP) == PRF_STOP_NONE) {
                        groute::store_relaxed(state + PRF_STOP, PRF_STOP_PEER);
                    }
                    r.w[REC_KIND] = PRF_HALT;
                } else if (sums[3] != 0ull && several) {
                    // Shares the gathers took are in flight: every device agrees on a chained
                    // or a delivering sweep next, from the same sum.
                    r.w[REC_KIND] = PRF_DRAIN;
                    r.w[REC_DRAIN_SWEEP] =
                        sweep_due(sums[3], peers->bounds[group.size], settings) ? PICK_CHAINED
                                                                                 : PICK_DELIVER;
                } else if (sums[3] != 0ull) {
                    r = chained_sweep(r, wl.ctrl, state, sweep_due(chained, owned, settings));
                } else if (sums[0] == 0ull && sums[1] == 0ull) {
                    r.w[REC_KIND] = PRF_DONE;  // nothing pending, nothing in flight
                } else if (several) {
                    // Every device agrees on the next round's kind from the same sums: the
                    // items pending anywhere and those in flight to their owners. (Counting
                    // the items in flight sweeps more often than the pending items after the
                    // drain would: a sweep costs no atomic across devices, a worklist round one
                    // per remote arc, so the run is faster on dense graphs.)
                    r.w[REC_KIND] = PRF_DRAIN;
                    r.w[REC_DRAIN_SWEEP] =
                        sweep_due(sums[0] + sums[1], peers->bounds[group.size], settings)
                            ? PICK_SWEEP
                            : PICK_WORKLIST;
                } else {
                    r = next_round(r, ops, settings, wl.ctrl, state, PICK_LOCAL);
                }
                return r;
            },
            copy, nothing);
        if (rec.w[REC_KIND] != PRF_DRAIN) {
            continue;  // the next round, or the loop's end
        }
        // Several devices: drain what the peers sent this round (parity `parity`; they may
        // already fill the other one), then start the round every device agreed on.
        drain_inbox(ops, peers, group.rank, parity, rwl);
        groute::grid_barrier(
            state, gen, config,
            [&] {
                stamp_phase(state, PRF_T_DRAIN);
                unsigned int* tail = peers->tails[group.rank] + parity;
                state_add_u64(state, PRF_RECEIVED,
                              min(groute::load_volatile(tail), peers->capacity[group.rank]));
                groute::store_relaxed(tail, 0u);
                const groute::FusedRecord drained = rec;  // barrier E's record
                const unsigned int pick = drained.w[REC_DRAIN_SWEEP];
                if (pick == PICK_CHAINED || pick == PICK_DELIVER) {
                    return chained_sweep(drained, wl.ctrl, state, pick == PICK_CHAINED);
                }
                return next_round(drained, ops, settings, wl.ctrl, state,
                                  static_cast<PrfPick>(pick));
            },
            copy, nothing);
    }
}

}  // namespace

// The entry points, one body: pagerank_fused (256 threads, registers unbounded: ptxas decides
// how many blocks fit an SM) and pagerank_fused_b6 / _b8, held to 6 / 8 blocks of 256 per SM
// (at most 40 / 32 registers, spilling the rest) for the phases bound by memory latency (the
// gather). FusedKernel::load picks one (PageRankOptions::fused_blocks_per_sm).
#define GROUTE_PAGERANK_FUSED_ENTRY(NAME, BOUNDS)                                                 \
    extern "C" __global__ void BOUNDS NAME(                                                      \
        PageRankOps ops, const unsigned long long* offsets, const unsigned int* targets,         \
        groute::DeviceWorklist wl, FusedPull pull, const FusedPeers* peers,                      \
        FusedSettings settings, unsigned int* state, groute::PeerGroup group,                    \
        unsigned long long* const* postboxes) {                                                  \
        pagerank_fused_body(ops, offsets, targets, wl, pull, peers, settings, state, group,      \
                            postboxes);                                                          \
    }

GROUTE_PAGERANK_FUSED_ENTRY(pagerank_fused, __launch_bounds__(256))
GROUTE_PAGERANK_FUSED_ENTRY(pagerank_fused_b6, __launch_bounds__(256, 6))
GROUTE_PAGERANK_FUSED_ENTRY(pagerank_fused_b8, __launch_bounds__(256, 8))
