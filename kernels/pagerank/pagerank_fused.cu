// STATUS (issue #7, 2026-11-22): on road-usa, 2 x H200, the fastest driver: 14.49-14.53 ms on
// 1 GPU and 8.38-8.40 on 2 (1.73x; host-driven 14.90-15.21 / 10.60-10.87), with the entry
// point held to 8 blocks per SM (pagerank_fused_b8, the default). Three changes took the
// 2-GPU run from 10.78 to 8.38 ms: the cut arcs in compact lists pushed by their own pass
// (push_cut_grid; full-length cut offsets cost the take 8 bytes and a block-wide list claim
// per owned vertex), every pass over the owned range started at a multiple of 32 (rank 1,
// whose range began off one, took its take 30% and its gather 25% longer: every warp's loads
// straddled two lines) with the rank array padded to match, and the cut pushes made
// reductions with an in-cut drain (PeerHaloPost: no round trip on the gather's path). The
// exchanges are peer_post_allreduce_sum. On kron21, where half the arcs are cut (about 90 per
// distinct head), 150 ms on 2 GPUs with the cut sends merged per head (386 without) against
// ~122 host-driven: --driver auto runs it host-driven.
//
// Device-driven PageRank: ONE persistent cooperative kernel per device runs every round of the
// run (crates/groute-pagerank/src/cuda_fused.rs launches it on every device of a PeerGroup, with no
// host in the loop). The rounds are the host-driven worker's (kernels/pagerank/pagerank.cu), their
// bodies the same functions (kernels/include/pagerank_push.cuh); phases are separated by grid
// barriers (grid_barrier of grid_barrier.cuh) and the devices by cross-device all-reduces
// (peer_post_allreduce_sum of peer_post.cuh: each device posts into its peers' postboxes and
// polls only its own; the start gate and the failure word stay in the group's mailbox).
//
// Remote contributions go straight to their owner. In a worklist round (PeerHalo), a push to
// a vertex w of device o atomically adds the share to o's incoming halo slot of w
// (halo[o][parity][w - begin(o)], system-scope atomics over NVLink) and, when the slot was
// empty (the round's first contribution to w: old value 0), appends w to o's inbox of that
// parity (a system-scope atomic on o's tail; capacity: o's in-cut vertices, so it cannot
// overflow; checked anyway, the needed size recorded in PRF_INBOX_OVERFLOW). Every writing
// thread then executes __threadfence_system() after each add, or, with
// PRF_FLAG_FENCE_PER_ROUND (--fused-fence-per-round), every thread once per round, right
// before barrier E (what the exchange's visibility argument needs: every peer write of the
// thread ordered before its block's arrival at the barrier whose action runs the exchange;
// the barriers inside the round publish nothing to peers). A sweep's cut pushes
// (PeerHaloPost) only add, by reductions nobody waits for, and list nothing: they count
// their arcs (PRF_CUT_ROUND), every thread of the sweep fences once before barrier E, and
// after the exchange every device whose peers pushed cut arcs drains the slots of all its
// in-cut vertices (drain_in_cut). On road-usa that took the cut pushes off the gather's
// critical path: each was a chain of round trips (the add's old value, the tail, the
// fence) that held its block ~15 us per sweep. Where the cut arcs are many per distinct
// head (CutArcs::merged_heads: kron's block partition, ~90 per head), the cut pass adds into
// a local slot per head instead (LocalMerge, the lists' heads translated to head indices at
// upload) and, after barrier M, send_merged adds each head's sum to its owner's halo once:
// one remote reduction per head and sweep instead of one per arc (merge before send). The
// parity is the round's (round & 1).
//
// A round (every block, grid-uniform control flow; the record of the last barrier says what):
//   SWEEP     pull take over the owned range (floor 0 in round 0, epsilon later; shares
//             stored, nothing pushed) | barrier | the cut vertices' shares pushed along their
//             cut arcs through PeerHaloPost (push_cut_grid over the compact CutLists; lists of
//             hub length recorded) and the pull hubs' tiles | barrier H (only on a device with
//             pull hubs or cut lists of hub length), then the recorded cut hubs pushed
//             (push_hubs_grid over the cut lists) | pull gather, in the same phase as the cut
//             push (or the cut hubs): the cut arcs write peers' halos only, the gather this
//             device's residuals. With merged cut sends the cut pass writes local merge
//             slots instead, and barrier M then send_merged follow the gather.
//   WORKLIST  push round over the record's [first, first + count) of the worklist (possibly
//             empty: every device runs every round) | barrier and the listed hubs (when the
//             device has hubs).
//   then barrier E, whose action (thread 0 of the last block) accounts for the round (pushed
//   count, hub counter and pushed word zeroed, overflow and abort checks) and, on several
//   devices, runs exchange k (peer_post_allreduce_sum over (pending items, items sent this
//   round, stop, cut arcs pushed)): every device's peer writes of the round are visible after
//   it and every device sees the same sums. A stop anywhere -> HALT; nothing pending and
//   nothing sent anywhere (cut arcs count as sent) -> DONE (nothing is in flight: every
//   earlier round's inbox, and its in-cut slots where cut arcs were pushed, was drained).
//   Else, on one device, the action picks the next round; on several, every block DRAINs
//   this device's inbox of the round's parity (each listed vertex's halo slot taken with
//   atomicExch and added to its residual; a vertex that crosses epsilon is appended to the
//   worklist: the host mode's receive rule), and its in-cut vertices' slots when a peer
//   pushed cut arcs, and barrier D's action zeroes the drained tail and picks the next round.
//   The pick is the host mode's rule on this device's pending items: SWEEP (floor
//   epsilon, consuming every pending item) when pending * sweep_divisor >= owned, else
//   WORKLIST over min(pending, max_batch) items. One exchange per round on every device,
//   whatever the kinds.
//
// Double buffering: peers fill parity p in round k; the owner drains it after exchange k,
// while faster peers may already fill parity 1 - p in round k + 1; parity p is written again
// in round k + 2, after exchange k + 1, which the owner reaches only after its drain and the
// reset of the tail.
//
// State block `state` (PRF_WORDS u32, zeroed by the host): the barrier's words
// (grid_barrier.cuh's FUSED_BARRIER_COUNT, FUSED_BARRIER_GEN, FUSED_RECORD), then the PRF_*
// words below, read and written by barrier actions only (one thread at a time, ordered by the
// barriers), except the counters that PeerHalo (sent, inbox overflow), the cut pass
// (PRF_CUT_ROUND) and the in-cut drain (PRF_CUT_DRAINED) add to with atomics.
//
// Phase times (PRF_T_*, u64 ns of %globaltimer per device, 64-bit words): the action of every
// barrier stamps the time and adds the interval since the previous stamp (block 0 stamps the
// start before its first arrival) to the phase that the barrier closes: a sweep's take (to its
// first barrier), its hub phase (cut push and pull hub tiles, to barrier H), its gather (to
// barrier E; with the cut push when there is no barrier H, with the cut hubs' push when there
// is); a worklist round's push (to its hub barrier, or to E) and its hubs (to E); the
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

namespace {

// The state block's words (PrfWord), stop codes (PrfStop) and flags (PrfFlag) are
// abi_pagerank.h's (PageRankStateBlock).
using namespace groute;

// What the blocks run next. PRF_DRAIN (several devices, after barrier E): the inbox of the
// round that just ended (and its in-cut slots: REC_DRAIN_CUT), then the barrier that picks
// the next round.
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
    // In a PRF_DRAIN record (the word of REC_HUBS, unused between rounds): a peer pushed cut
    // arcs in the round, so the drain takes every in-cut vertex's slot too.
    REC_DRAIN_CUT = 5,
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

// Remote policy of a sweep's cut pushes (push_cut_grid and the cut hubs): the share is added
// to the owner's halo slot by a reduction, whose old value nobody waits for (no round trip
// over the link: the warp goes on with its gather at once), and nothing is listed. The owner
// drains the slots of all its in-cut vertices after the exchange of a round in which any
// device pushed cut arcs (drain_in_cut). Visibility: every thread of such a sweep runs
// __threadfence_system() before barrier E (the exchange's argument, header comment).
struct PeerHaloPost {
    const FusedPeers* peers;
    unsigned int size;
    unsigned int parity;

    static constexpr bool ALL_REMOTE = false;

    __device__ __forceinline__ bool add(unsigned int w, float share) const {
        unsigned int o = 0;
        atomicAdd_system(halo_slot(peers, size, parity, w, o), share);  // result unused: red
        return false;  // nothing to list locally
    }
    __device__ __forceinline__ void append_warp(unsigned int, bool) const {}
    __device__ __forceinline__ void append_heads(const unsigned int (&)[BATCH], unsigned int) const {}
};

// Remote policy of a sweep's cut pass when the cut sends are merged: `w` is the head's index
// in the distinct cut heads (the cut lists' targets translated at upload), and the share is
// added to this device's merge slot of that head; send_merged then adds each slot to its
// owner's halo once (PeerHaloPost). Nothing is listed.
struct LocalMerge {
    float* merge;

    // Its `w` are head indices, not vertex ids: never routed to this device's residuals.
    static constexpr bool ALL_REMOTE = true;

    __device__ __forceinline__ bool add(unsigned int head, float share) const {
        atomicAdd(merge + head, share);
        return false;
    }
    __device__ __forceinline__ void append_warp(unsigned int, bool) const {}
    __device__ __forceinline__ void append_heads(const unsigned int (&)[BATCH], unsigned int) const {}
};

// The merged cut sends of a sweep (after the barrier that ends its cut pass): each distinct
// head's merged share, taken from its slot (left 0), added to its owner's halo slot.
__device__ __forceinline__ void send_merged(const FusedPull& pull, const PeerHaloPost& post) {
    const unsigned int stride = gridDim.x * blockDim.x;
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < pull.cut_head_count;
         i += stride) {
        const float share = pull.cut_merge[i];
        if (share > 0.0f) {
            pull.cut_merge[i] = 0.0f;
            post.add(pull.cut_heads[i], share);
        }
    }
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

// Drains the halo slots of `parity` of this device's in-cut vertices (the owned vertices with
// an in-arc from another device), after an exchange whose round had cut pushes
// (PeerHaloPost). A slot may also be listed in the inbox (a peer's worklist round): see
// drain_slots. Counts the slots found nonzero in PRF_CUT_DRAINED.
__device__ __forceinline__ void drain_in_cut(const PageRankOps& ops, const FusedPeers* peers,
                                             unsigned int rank, unsigned int parity,
                                             const unsigned int* in_cut, unsigned int count,
                                             const groute::DeviceWorklist& wl,
                                             unsigned int* state) {
    const unsigned int held =
        drain_slots(ops, own_halo(ops, peers, rank, parity), in_cut, count, wl);
    groute::warp_add_u64(reinterpret_cast<unsigned long long*>(state + PRF_CUT_DRAINED), held);
}

// The next round of this device after the last one (`round`) was accounted for: the host
// mode's rule on this device's pending items (worklist end - PRF_START). Runs in a barrier
// action (one thread, every block waiting).
__device__ __forceinline__ groute::FusedRecord next_round(const groute::FusedRecord& round,
                                                          const PageRankOps& ops,
                                                          const FusedSettings& settings,
                                                          const unsigned int* ctrl,
                                                          unsigned int* state) {
    groute::FusedRecord r = round;
    const unsigned int owned = ops.owned_end - ops.owned_begin;
    const unsigned int start = state_load(state, PRF_START);
    const unsigned int end = groute::load_volatile(ctrl + groute::CTRL_WL_END);
    const unsigned int pending = end - start;
    r.w[REC_HUBS] = 0;
    if (settings.sweep_divisor != 0u && owned != 0u &&
        static_cast<unsigned long long>(pending) * settings.sweep_divisor >= owned) {
        // Every pending vertex is above epsilon until taken: the sweep covers them all.
        r.w[REC_KIND] = PRF_SWEEP;
        r.w[REC_FIRST] = end;
        r.w[REC_COUNT] = 0;
        r.w[REC_FLOOR] = __float_as_uint(ops.epsilon);
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
    const CutLists cut{pull.cut_vertices, pull.cut_offsets, pull.cut_targets, pull.cut_count};
    const bool has_cut = pull.cut_count != 0u;
    // Merged cut sends: the same lists with heads as indices into the distinct heads.
    const bool merged = has_cut && pull.cut_head_count != 0u;
    const CutLists merged_cut{pull.cut_vertices, pull.cut_offsets, pull.cut_head_of_arc,
                              pull.cut_count};
    const LocalMerge merge{pull.cut_merge};
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
    }
    __syncthreads();
    const auto keep = [](const groute::FusedRecord&) {};
    const auto nothing = [] {};
    const auto copy = [&](const groute::FusedRecord& r) { rec = r; };
    while (rec.w[REC_KIND] == PRF_SWEEP || rec.w[REC_KIND] == PRF_WORKLIST) {
        const groute::FusedRecord round = rec;
        const unsigned int parity = round.w[REC_ROUND] & 1u;
        const PeerHalo remote{peers, group.size, parity, state, !fence_per_round};
        const PeerHaloPost post{peers, group.size, parity};
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
            pull_take_grid(ops, offsets, pull.share, __uint_as_float(round.w[REC_FLOOR]), rwl);
            groute::grid_barrier(
                state, gen, config,
                [&] {
                    stamp_phase(state, PRF_T_TAKE);
                    return round;
                },
                keep, nothing);
            // The shares are in place: the cut arcs (to peers' halos only) and the pull hubs'
            // tiles, then (after barrier H where needed) the gather, beside the cut hubs.
            if (has_cut) {
                const unsigned long long arcs =
                    merged ? push_cut_grid(ops, merged_cut, pull.share, rwl, hubs, merge)
                           : push_cut_grid(ops, cut, pull.share, rwl, hubs, post);
                groute::warp_add_u64(reinterpret_cast<unsigned long long*>(state + PRF_CUT_ROUND),
                                     arcs);
            }
            if (pull.tile_count != 0u) {
                pull_hub_tiles_grid(pull.tiles, pull.tile_count, pull.in_sources, pull.share,
                                    pull.hub_sum);
            }
            if (pull.cut_hubs != 0u || pull.tile_count != 0u) {
                // Barrier H: the hubs' tile sums are complete before the gather reads them,
                // and the cut hubs are listed.
                groute::grid_barrier(
                    state, gen, config,
                    [&] {
                        stamp_phase(state, PRF_T_HUBS);
                        return hubs_listed();
                    },
                    copy, nothing);
                if (rec.w[REC_HUBS] != 0u) {
                    if (merged) {
                        push_hubs_grid(ops, cut.offsets, pull.cut_head_of_arc, rwl, hubs, merge);
                    } else {
                        push_hubs_grid(ops, cut.offsets, cut.targets, rwl, hubs, post);
                    }
                }
            }
            pull_gather_grid(ops, pull.in_offsets, pull.in_sources, pull.share, rwl, pull.hubs,
                             pull.hub_count, pull.hub_sum, pull.hub_degree);
            if (merged) {
                // Barrier M: every cut share is in its merge slot; then one send per head.
                groute::grid_barrier(
                    state, gen, config,
                    [&] {
                        stamp_phase(state, PRF_T_GATHER);
                        return round;
                    },
                    keep, nothing);
                send_merged(pull, post);
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
        // After this thread's last peer write of the round. PeerHaloPost's reductions rely on
        // this fence alone, so they may be used only where it runs: a sweep on a device with
        // cut lists (the condition is uniform over the grid: every thread that pushed fences).
        if (fence_per_round || (has_cut && round.w[REC_KIND] == PRF_SWEEP)) {
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
                unsigned int stop = end_round(round, wl.ctrl, state, group);
                const unsigned int start = state_load(state, PRF_START);
                const unsigned int pending =
                    groute::load_volatile(wl.ctrl + groute::CTRL_WL_END) - start;
                // The sweep's cut arcs, unlisted (PeerHaloPost): in flight like the items
                // listed, and the peers drain their in-cut slots.
                const unsigned long long cut_arcs = state_load_u64(state, PRF_CUT_ROUND);
                *reinterpret_cast<volatile unsigned long long*>(state + PRF_CUT_ROUND) = 0ull;
                state_add_u64(state, PRF_CUT_SENT, cut_arcs);
                // Items sent this round: they wait in their owners' inboxes and halos.
                const unsigned long long sent_total = state_load_u64(state, PRF_SENT);
                const unsigned long long sent =
                    sent_total - state_load_u64(state, PRF_SENT_SEEN) + cut_arcs;
                *reinterpret_cast<volatile unsigned long long*>(state + PRF_SENT_SEEN) = sent_total;
                unsigned long long sums[4] = {pending, sent, stop != PRF_STOP_NONE ? 1ull : 0ull,
                                              cut_arcs};
                if (several) {
                    const unsigned int exchange = state_load(state, PRF_EXCHANGES);
                    groute::store_relaxed(state + PRF_EXCHANGES, exchange + 1u);
                    const unsigned long long mine[4] = {sums[0], sums[1], sums[2], sums[3]};
                    const unsigned int status = groute::peer_post_allreduce_sum(
                        group, postboxes, exchange, mine, sums, 4u);
                    if (status != groute::PEER_OK) {
                        groute::store_relaxed(state + PRF_PEER_STATUS, status);
                        stop = PRF_STOP_EXCHANGE;
                        sums[2] = 1ull;
                    }
                    stamp_phase(state, PRF_T_EXCHANGE);
                }
                groute::FusedRecord r = round;
                r.w[REC_ROUND] = round.w[REC_ROUND] + 1u;
                r.w[REC_HUBS] = 0;
                if (sums[2] != 0ull) {
                    groute::store_relaxed(state + PRF_STOP,
                                          stop != PRF_STOP_NONE ? stop : PRF_STOP_PEER);
                    r.w[REC_KIND] = PRF_HALT;
                } else if (sums[0] == 0ull && sums[1] == 0ull) {
                    r.w[REC_KIND] = PRF_DONE;  // nothing pending, nothing in flight
                } else if (several) {
                    r.w[REC_KIND] = PRF_DRAIN;
                    // A PEER pushed cut arcs (this device's own went to the others).
                    r.w[REC_DRAIN_CUT] = sums[3] != cut_arcs ? 1u : 0u;
                } else {
                    r = next_round(r, ops, settings, wl.ctrl, state);
                }
                return r;
            },
            copy, nothing);
        if (rec.w[REC_KIND] != PRF_DRAIN) {
            continue;  // the next round, or the loop's end
        }
        // Several devices: drain what the peers sent this round (parity `parity`; they may
        // already fill the other one), then pick the next round from the pending items.
        drain_inbox(ops, peers, group.rank, parity, rwl);
        if (rec.w[REC_DRAIN_CUT] != 0u) {
            drain_in_cut(ops, peers, group.rank, parity, pull.in_cut, pull.in_cut_count, rwl,
                         state);
        }
        groute::grid_barrier(
            state, gen, config,
            [&] {
                stamp_phase(state, PRF_T_DRAIN);
                unsigned int* tail = peers->tails[group.rank] + parity;
                state_add_u64(state, PRF_RECEIVED,
                              min(groute::load_volatile(tail), peers->capacity[group.rank]));
                groute::store_relaxed(tail, 0u);
                const groute::FusedRecord drained = rec;  // barrier E's record
                return next_round(drained, ops, settings, wl.ctrl, state);
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
