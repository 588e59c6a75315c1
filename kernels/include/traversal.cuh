// The generic min-label traversal (BFS, SSSP) on the device, non-fused mode: one expand
// launch per round and one split launch per batch of received packets. Mirror of
// crates/groute-worklist/src/traversal/mod.rs; an algorithm instantiates the two templates
// with its Relax functor in its own .cu file (kernels/bfs/bfs.cu).
//
// traversal_expand<Relax, WEIGHTED>: consumes worklist positions [first, first + count);
//   relaxes every out-arc of each item (plain load first, atomicMin only when it improves,
//   on the full-length value array: the halo filter); an improved head is appended to the
//   local worklist when owned, else packed as a VertexValue into the outgoing buffer.
//   Adjacency lists are load-balanced at three granularities (Merrill-style, nested):
//   degree >= blockDim.x -> the whole block, >= 32 -> one warp, else the item's thread.
//   At every granularity a thread relaxes THREAD_ARCS arcs per step (the lanes of a block or
//   a warp take arcs strided by its width, so that each of the step's loads is coalesced;
//   the item's own thread consecutive ones) with the step's loads and atomics issued together
//   and one worklist reservation per warp and step (relax_thread_arcs): a dependent chain of
//   round trips (targets, head value, atomicMin) per THREAD_ARCS arcs instead of per arc.
//   Worklist appends are warp-aggregated (one atomic per warp); soft priority's deferred
//   heads gather in the block's stage (block_stage.cuh) and reach the low list once per round
//   or hub tile, and so do the sent heads where the build stages sends (STAGE_SENDS: the
//   device-driven members and the host-driven kernels; the other fused builds append to the
//   outgoing buffer one atomic per warp and arc of a step).
//   Hubs (degree >= hub_min_degree, HUB_MIN_DEGREE by default; the host lowers it to
//   SMALL_GRID_HUB_MIN_DEGREE for launches smaller than the resident grid, so that a round
//   of a few hundred long lists is spread over the whole grid instead of running on the
//   few blocks its item count gives) are not expanded here: the item's thread records the hub
//   (vertex, first tile) in the hub list after the control block (one 64-bit atomicAdd on
//   ctrl[CTRL_HUB_COUNT..+2] that returns both the slot and the prefix of the hub tiles), and
//   the launch that follows, traversal_expand_hubs, spreads the hubs' arcs over the whole grid
//   in tiles of HUB_TILE arcs. A hub that finds the list full is expanded by its block here.
// traversal_expand_hubs<Relax, WEIGHTED>: block b relaxes hub tiles b, b + gridDim.x, ...;
//   the tile's hub is found by a 32-ary warp search over the (sorted) tile prefixes. The
//   host resets the hub counter before each expand launch. Each thread relaxes THREAD_ARCS
//   arcs of the tile per step (relax_thread_arcs: their loads and atomics in flight
//   together, one worklist reservation per warp): strided by blockDim.x (coalesced), or
//   with BATCHED consecutive ones.
// traversal_split_receive: SplitReceive (on_receive of split.cuh) on a received packet.
//
// Launch with blockDim.x a multiple of 32, at most 1024. Self-contained (NVRTC).
#pragma once

#include "block_stage.cuh"
#include "list_claim.cuh"
#include "low_list.cuh"
#include "reexamine.cuh"

#include "hubs.cuh"
#include "predicated.cuh"
#include "split.cuh"
#include "warp_append.cuh"
#include "worklist.cuh"

// The hub tile of traversal_expand_hubs: 2048 arcs by default; include/direction_fused.cuh sets
// 1024 (see there).
#ifndef GROUTE_HUB_TILE
#define GROUTE_HUB_TILE 2048
#endif

namespace groute {

struct BfsRelax {
    __device__ __forceinline__ static unsigned int relax(unsigned int value, unsigned int) {
        return value == 0xFFFFFFFEu ? value : value + 1u;  // saturate below UNREACHED
    }
};

// Connected components by label propagation: a vertex offers its label unchanged.
struct LabelRelax {
    __device__ __forceinline__ static unsigned int relax(unsigned int value, unsigned int) {
        return value;
    }
};

struct SsspRelax {
    __device__ __forceinline__ static unsigned int relax(unsigned int value, unsigned int w) {
        const unsigned int s = value + w;
        return (s < value || s == 0xFFFFFFFFu) ? 0xFFFFFFFEu : s;
    }
};

// Hub list: ctrl[CTRL_HUB_COUNT] (low word: hubs recorded, high word: their tiles, one 64-bit
// counter), ctrl[CTRL_HUB_CAP] (slots, set by the host), slots of (vertex, first tile) from
// ctrl + TRAVERSAL_CTRL_WORDS. Soft priority's low list: ctrl[CTRL_LOW_END] (append counter),
// ctrl[CTRL_LOW_OVERFLOW] (needed size on overflow), ctrl[CTRL_LOW_MIN] (smallest priority
// deferred since the host last reset it). ctrl[CTRL_INBOX_PUBLISHED]: a device-driven fused
// run's inbox (fused.cuh). The host reads words [0, TRAVERSAL_CTRL_WORDS) back.
// The control words (CTRL_*) are abi_traversal.h's TraversalCtrl.
enum : unsigned int {
    HUB_MIN_DEGREE = 2048,
    SMALL_GRID_HUB_MIN_DEGREE = 32,
    // Arcs per hub tile (a kernel may set GROUTE_HUB_TILE before including this header).
    HUB_TILE = GROUTE_HUB_TILE,
};

// The value of an item the grid is about to expand (KnownValue's): a volatile (L2) load, never
// a stale L1 line. In the fused kernel the value may have been lowered earlier in the same
// launch, by another block; expanding with a stale, larger value would relax its heads with
// worse candidates, work that the lowering's own worklist entry then redoes, while the heads'
// filter loads may be stale (the atomicMin decides). FreshValue reads at a level's arcs with
// weaker loads, for the reason it gives, under the same rule.
__device__ __forceinline__ unsigned int item_value(const MinSplitOps& ops, unsigned int v) {
    return *const_cast<const volatile unsigned int*>(ops.values + v);
}

// Where relax_thread_arcs gets the value of the item it relaxes, and how it loads the arcs'
// targets and weights: the value known when the item was taken (KnownValue, plain arc loads),
// or read at each step beside the step's arc loads (FreshValue, the frontier modes').
//
// Why FreshValue reads it there: a value loaded before the arcs loop is used before the loop,
// so the targets loads would wait for the value's round trip and the two would run one after
// the other; read at the step, both are in flight together. That needs the arc loads issued
// before the value's first use, which the program order of plain loads does not fix: ptxas may
// issue the value first, consume it, and only then issue the targets loads into a register the
// value freed. It does so with plain loads in the device-driven members' cluster builds
// (`_peer_cluster`, one more round trip a level) and in their SSSP weights loads, while the
// one-device builds of the same source overlap them. So FreshValue loads the targets, the
// weights and then the value with CTA-scope relaxed loads (load_relaxed_cta), which ptxas
// issues in program order, all before any result is used, in every build (a speed matter
// only: any order is correct). They may be served by L1, as plain loads. The value read is
// at least the one that put the item in the frontier: that write is ordered before the read by the
// level's cluster barrier, the grid barrier before the mode, the block's __syncthreads
// between levels. A later improvement the step misses appended its own entry (worklist or
// frontier), which is expanded with it
// (item_value's rule).
struct KnownValue {
    unsigned int value;

    __device__ __forceinline__ unsigned int get(bool) const { return value; }
    __device__ __forceinline__ static unsigned int load_arc(const unsigned int* p) { return *p; }
};

struct FreshValue {
    const unsigned int* value;  // the item's entry of the values array

    __device__ __forceinline__ unsigned int get(bool have) const {
        return have ? load_relaxed_cta(value) : 0xFFFFFFFFu;
    }
    __device__ __forceinline__ static unsigned int load_arc(const unsigned int* p) {
        return load_relaxed_cta(p);
    }
};

// The blocks that share one expand: every block of the launch (the default), or block 0 alone
// (the fused kernel's single-block mode, `GridShape{1, 0}` on block 0).
struct GridShape {
    unsigned int blocks;
    unsigned int block;

    __device__ __forceinline__ static GridShape launch() { return GridShape{gridDim.x, blockIdx.x}; }
};

// Records hub `v` of degree `degree`; false when the list is full (the caller expands it).
__device__ __forceinline__ bool record_hub(unsigned int* ctrl, unsigned int v,
                                           unsigned long long degree) {
    const unsigned long long tiles = (degree + HUB_TILE - 1u) / HUB_TILE;
    const unsigned long long old = atomicAdd(
        reinterpret_cast<unsigned long long*>(ctrl + CTRL_HUB_COUNT), (tiles << 32) | 1ull);
    const unsigned int slot = static_cast<unsigned int>(old);
    if (slot >= ctrl[CTRL_HUB_CAP]) {
        return false;  // its tiles stay counted; the hub kernel finds them empty
    }
    unsigned int* hubs = ctrl + TRAVERSAL_CTRL_WORDS;
    hubs[2u * slot] = v;
    hubs[2u * slot + 1u] = static_cast<unsigned int>(old >> 32);
    return true;
}

// The adjacency ranges [begin, end) of the heads a thread may append in one step, for a
// worklist that KEEPS_RANGES (the single-block mode's, solo_frontier.cuh: its next level then
// starts at the targets loads); nothing for the others.
template <bool KEEPS, unsigned int K>
struct HeadRanges {
    template <typename Worklist>
    __device__ __forceinline__ void load(const Worklist&, unsigned int, unsigned int, bool,
                                         unsigned int) {}

    template <typename Worklist>
    __device__ __forceinline__ void append_warp_n(const Worklist& wl,
                                                  const unsigned int (&items)[K],
                                                  const bool (&keep)[K], unsigned int n) const {
        wl.append_warp_n(items, keep, n);
    }
};

template <unsigned int K>
struct HeadRanges<true, K> {
    unsigned int begin[K];
    unsigned int end[K];

    // Loads head `u`'s range into entry k where `wanted` (a relaxation that may improve it)
    // and `u` is owned (the device holds offsets only for its rows, indexed by global ids),
    // the first owned row's start where not: `first` (owned_begin), read twice, so that a
    // part of no rows (one offset) is in bounds too. The loads are unconditional, so no branch
    // separates one head's loads from the next (predicated.cuh says why), and the entry keeps
    // what was loaded: only the heads kept for the worklist, all of them wanted and owned,
    // read it (append_warp_n). A `wanted ? b : 0` here was a use of the loads before the
    // step's atomics, and the SSSP members' cluster build waited for the range loads there
    // before issuing the atomics (one more round trip a level).
    template <typename Worklist>
    __device__ __forceinline__ void load(const Worklist& wl, unsigned int k, unsigned int u,
                                         bool wanted, unsigned int first) {
        const unsigned int at = wanted ? u : first;
        begin[k] = wl.offset(at);
        end[k] = wl.offset(wanted ? u + 1u : first);
    }

    template <typename Worklist>
    __device__ __forceinline__ void append_warp_n(const Worklist& wl,
                                                  const unsigned int (&items)[K],
                                                  const bool (&keep)[K], unsigned int n) const {
        wl.append_warp_n(items, keep, n, begin, end);
    }
};

// Arcs one thread relaxes per step of traversal_expand's loops and of the hub tiles.
enum : unsigned int { THREAD_ARCS = 4 };

// Relaxes arcs e, e + stride, ... (THREAD_ARCS of them, those below `end`) of an item whose
// value `item` gives (KnownValue or FreshValue; none where !have) with every load and atomic
// of the step issued before the first result is used (the atomics predicated,
// predicated.cuh), and appends the improved heads to the worklist with one reservation: a
// road vertex's two to four arcs, or a group's THREAD_ARCS strided arcs per lane, cost one
// chain of memory round trips instead of one chain per arc. `filter`: a plain load of the
// head's value decides whether to try the atomicMin (fewer atomics on dense frontiers);
// without it the atomicMin goes out at once (one round trip less per step, for
// latency-bound levels). A worklist that KEEPS_RANGES (the single-block mode's, solo_frontier.cuh)
// also gets each appended head's adjacency range, loaded before the atomics so that those
// loads and the atomicMin are in flight together. Call with all 32 lanes.
template <typename Relax, bool WEIGHTED, typename Worklist, typename Value, typename Send,
          typename Low>
__device__ __forceinline__ void relax_thread_arcs(const MinSplitOps& ops,
                                                  const unsigned int* targets,
                                                  const unsigned int* weights,
                                                  unsigned long long e, unsigned long long end,
                                                  bool have, const Value& item,
                                                  const Worklist& wl, const Send& send,
                                                  const Low& low, bool filter,
                                                  unsigned int stride = 1u) {
    bool active[THREAD_ARCS];
    unsigned int u[THREAD_ARCS];
    unsigned int weight[THREAD_ARCS];
#pragma unroll
    for (unsigned int k = 0; k < THREAD_ARCS; ++k) {
        const unsigned long long arc = e + static_cast<unsigned long long>(k) * stride;
        active[k] = have && arc < end;
        u[k] = active[k] ? Value::load_arc(targets + arc) : 0u;
        weight[k] = WEIGHTED && active[k] ? Value::load_arc(weights + arc) : 1u;
    }
    const unsigned int value = item.get(have);  // after the arc loads (FreshValue says why)
    unsigned int cand[THREAD_ARCS];
#pragma unroll
    for (unsigned int k = 0; k < THREAD_ARCS; ++k) {
        cand[k] = Relax::relax(value, weight[k]);
    }
    unsigned int seen[THREAD_ARCS];
    // An item of value 0xFFFFFFFF (unreached: never queued, but the frontier modes do not
    // filter on the value before the targets loads, which must not wait for it) relaxes
    // nothing: `seen` 0 is below every candidate.
    const bool reached = value != 0xFFFFFFFFu;
#pragma unroll
    for (unsigned int k = 0; k < THREAD_ARCS; ++k) {
        // 0xFFFFFFFF is above every candidate (relax saturates below it).
        seen[k] = !(active[k] && reached) ? 0u : filter ? ops.values[u[k]] : 0xFFFFFFFFu;
    }
    HeadRanges<Worklist::KEEPS_RANGES, THREAD_ARCS> ranges;
#pragma unroll
    for (unsigned int k = 0; k < THREAD_ARCS; ++k) {
        ranges.load(wl, k, u[k], active[k] && seen[k] > cand[k] && ops.mine(u[k]),
                    ops.owned_begin);
    }
    bool improved[THREAD_ARCS];
#pragma unroll
    for (unsigned int k = 0; k < THREAD_ARCS; ++k) {
        const bool tried = active[k] && seen[k] > cand[k];
        improved[k] = atomic_min_global_if(ops.values + u[k], cand[k], tried) > cand[k];
    }
    bool to_wl[THREAD_ARCS];
    bool deferred[THREAD_ARCS];
    bool remote[THREAD_ARCS];
    unsigned int n = 0;
    bool elsewhere = false;  // some arc of this lane's step deferred or sent
#pragma unroll
    for (unsigned int k = 0; k < THREAD_ARCS; ++k) {
        const bool mine = ops.mine(u[k]);
        const bool kept = improved[k] && mine;
        deferred[k] = kept && low.defers(cand[k]);
        to_wl[k] = kept && !deferred[k];
        remote[k] = improved[k] && !mine;
        n += to_wl[k] ? 1u : 0u;
        elsewhere = elsewhere || deferred[k] || remote[k];
    }
    ranges.append_warp_n(wl, u, to_wl, n);
    // The low list and the outgoing buffer take one vote of the warp when it has nothing for
    // either (one device without soft priority, or a step inside a partition): not the votes
    // of their appends.
    if (__any_sync(0xFFFFFFFFu, elsewhere)) {
        low.append_warp_n(u, cand, deferred);
        if constexpr (Send::STAGED) {
            send.append_warp_n(u, cand, remote);
        } else {
            // The outgoing buffer itself: one append per arc of the step (builds whose runs
            // send rarely or never: one reservation for the step costs the others more).
#pragma unroll
            for (unsigned int k = 0; k < THREAD_ARCS; ++k) {
                send.append_warp(VertexValue{u[k], cand[k]}, remote[k]);
            }
        }
    }
}

// Expands the items the threads of a block hold (`have`: vertex `v` of value `item` with
// the arcs [begin, end)) with the nested load balancing: (1) lists of at least blockDim.x arcs
// by the whole block, one at a time (skipped when `block_lists` is false: the caller's vote
// found none in the block; claim_block_lists would synchronise to find that out), (2) lists of
// at least 32 by one warp each, (3) the rest by their own thread, THREAD_ARCS arcs per step.
// Call with every thread of the block, from block-uniform control flow.
template <typename Relax, bool WEIGHTED, typename Worklist, typename Value, typename Send,
          typename Low>
__device__ __forceinline__ void expand_item_lists(const MinSplitOps& ops,
                                                  const unsigned int* targets,
                                                  const unsigned int* weights,
                                                  const Worklist& wl, const Send& send,
                                                  const Low& low, bool have, unsigned int v,
                                                  unsigned long long begin,
                                                  unsigned long long end, const Value& item,
                                                  bool filter_loads, bool block_lists) {
    const unsigned int lane = lane_id();
    // (1) Block granularity: high-degree lists, one at a time, by the whole block.
    if (block_lists) {
        claim_block_lists(have, begin, end, v,
                          [&](unsigned long long bb, unsigned long long be, unsigned int bv,
                              unsigned int) {
                              const KnownValue bval{item_value(ops, bv)};
                              for (unsigned long long base = bb; base < be;
                                   base += blockDim.x * THREAD_ARCS) {
                                  const unsigned long long e = base + threadIdx.x;
                                  relax_thread_arcs<Relax, WEIGHTED>(ops, targets, weights, e,
                                                                     be, e < be, bval, wl, send,
                                                                     low, true, blockDim.x);
                              }
                          });
    }
    // (2) Warp granularity: medium-degree lists, by one warp each.
    claim_warp_lists(have, begin, end, v,
                     [&](unsigned long long wb, unsigned long long we, unsigned int wv,
                         unsigned int) {
                         const KnownValue wval{item_value(ops, wv)};
                         for (unsigned long long base = wb; base < we;
                              base += 32u * THREAD_ARCS) {
                             const unsigned long long e = base + lane;
                             relax_thread_arcs<Relax, WEIGHTED>(ops, targets, weights, e, we,
                                                                e < we, wval, wl, send, low,
                                                                true, 32u);
                         }
                     });
    // (3) Thread granularity: the remaining low-degree lists, lanes in lockstep,
    // THREAD_ARCS arcs per lane and step.
    for (unsigned long long e = begin; __any_sync(0xFFFFFFFFu, have && e < end);
         e += THREAD_ARCS) {
        relax_thread_arcs<Relax, WEIGHTED>(ops, targets, weights, e, end, have, item, wl, send,
                                           low, filter_loads);
    }
}

// Expands worklist positions [wl.first, + count) over the grid (`shape`), appending the
// improved heads through `appends` (the worklist itself for traversal_expand; a wrapper that
// also notes them for the peers, as the direction kernel's push does). Lists of at least
// `hub_min_degree` arcs are recorded as hubs (traversal_expand_hubs expands them).

template <typename Relax, bool WEIGHTED, bool STAGE_SENDS = false, typename Appends>
__device__ void traversal_expand_into(const MinSplitOps ops, const unsigned long long* offsets,
                                      const unsigned int* targets, const unsigned int* weights,
                                      const DeviceWorklist wl, const Appends appends,
                                      unsigned int count, const SendBuffer send,
                                      const LowList low, const GridShape shape,
                                      const unsigned int hub_min_degree,
                                      const bool filter_loads) {
    const unsigned int stride = shape.blocks * blockDim.x;
    // Grid-stride over the items, with a trip count uniform across the grid. Consecutive
    // items go to different blocks (item r * stride + t * gridDim.x + b on thread t of block
    // b): worklists list vertices in discovery order, and on power-law graphs the heavy ones
    // come together; interleaving spreads them over the blocks instead of serialising them in
    // one block's block-granularity loop.
    const unsigned int rounds = (count + stride - 1u) / stride;
    // Soft priority's deferred heads and, where STAGE_SENDS, the sent ones go through the block's
    // stage (BlockStage says why), flushed after each round of the block's items. The first round's
    // appends follow the first barrier of its block-list claim (ordering `stage`), a later round's
    // the last barrier of the flush before it.
    const BlockStage<STAGE_SENDS> staged = BlockStage<STAGE_SENDS>::of(low, send);
    const bool staging = staged.active();
    staged.stage();
    for (unsigned int r = 0; r < rounds; ++r) {
        const unsigned int i = r * stride + threadIdx.x * shape.blocks + shape.block;
        bool have = i < count;
        unsigned int v = 0;
        unsigned long long begin = 0;
        unsigned long long end = 0;
        unsigned int value = 0xFFFFFFFFu;
        if (have) {
            v = wl.at(wl.first + i);
            value = item_value(ops, v);
            begin = offsets[v];
            end = offsets[v + 1];
            have = value != 0xFFFFFFFFu && end > begin;
            if (have && end - begin >= hub_min_degree && record_hub(wl.ctrl, v, end - begin)) {
                have = false;
            }
        }
        expand_item_lists<Relax, WEIGHTED>(ops, targets, weights, appends, staged.sent(),
                                           staged.deferred(), have, v, begin, end,
                                           KnownValue{value}, filter_loads, true);
        if (staging) {
            staged.flush();
        }
    }
}

template <typename Relax, bool WEIGHTED, bool STAGE_SENDS = false>
__device__ void traversal_expand(const MinSplitOps ops, const unsigned long long* offsets,
                                 const unsigned int* targets, const unsigned int* weights,
                                 const DeviceWorklist wl, unsigned int count,
                                 const SendBuffer send, const LowList low = LowList{},
                                 const GridShape shape = GridShape::launch(),
                                 const unsigned int hub_min_degree = HUB_MIN_DEGREE,
                                 const bool filter_loads = true) {
    traversal_expand_into<Relax, WEIGHTED, STAGE_SENDS>(ops, offsets, targets, weights, wl, wl,
                                                        count, send, low, shape, hub_min_degree,
                                                        filter_loads);
}

// Expands the hubs recorded in wl.ctrl, a tile of HUB_TILE arcs per block and step (BATCHED:
// THREAD_ARCS consecutive arcs per thread), appending through `appends`.
template <typename Relax, bool WEIGHTED, bool BATCHED, bool STAGE_SENDS = false,
          typename Appends>
__device__ void traversal_expand_hubs_into(const MinSplitOps ops,
                                           const unsigned long long* offsets,
                                           const unsigned int* targets,
                                           const unsigned int* weights, const DeviceWorklist wl,
                                           const Appends appends, const SendBuffer send,
                                           const LowList low) {
    __shared__ unsigned int tile_value;
    __shared__ unsigned long long tile_begin;
    __shared__ unsigned long long tile_end;
    const unsigned long long counter =
        *reinterpret_cast<const unsigned long long*>(wl.ctrl + CTRL_HUB_COUNT);
    const unsigned int recorded = static_cast<unsigned int>(counter);
    const unsigned int cap = wl.ctrl[CTRL_HUB_CAP];
    const unsigned int n = recorded < cap ? recorded : cap;
    const unsigned int tiles = static_cast<unsigned int>(counter >> 32);
    if (n == 0) {
        return;
    }
    const unsigned int* hubs = wl.ctrl + TRAVERSAL_CTRL_WORDS;
    const unsigned int lane = lane_id();
    // Soft priority's deferred heads and, where STAGE_SENDS, the sent ones go through the
    // block's stage (BlockStage says why).
    const BlockStage<STAGE_SENDS> staged = BlockStage<STAGE_SENDS>::of(low, send);
    const bool staging = staged.active();
    staged.stage();
    for (unsigned int g = blockIdx.x; g < tiles; g += gridDim.x) {
        if (threadIdx.x < 32u) {
            // Largest slot whose first tile is <= g (slot 0's is 0).
            const unsigned int lo = hub_slot_of_tile(hubs, 2u, n, g);
            if (lane == 0) {
                const unsigned int v = hubs[2u * lo];
                const unsigned long long t = g - hubs[2u * lo + 1u];
                const unsigned long long vb = offsets[v];
                const unsigned long long ve = offsets[v + 1];
                unsigned long long b = vb + t * HUB_TILE;
                unsigned long long e = b + HUB_TILE;
                if (b > ve) {
                    b = ve;  // a tile of a hub that found the list full: empty
                }
                tile_begin = b;
                tile_end = e < ve ? e : ve;
                tile_value = item_value(ops, v);
            }
        }
        __syncthreads();
        const unsigned int val = tile_value;
        const unsigned long long tb = tile_begin;
        const unsigned long long te = tile_end;
        if (BATCHED) {
            const unsigned long long step = blockDim.x * THREAD_ARCS;
            for (unsigned long long base = tb; base < te; base += step) {
                const unsigned long long e = base + threadIdx.x * THREAD_ARCS;
                relax_thread_arcs<Relax, WEIGHTED>(ops, targets, weights, e, te, e < te,
                                                   KnownValue{val}, appends, staged.sent(),
                                                   staged.deferred(), true);
            }
        } else {
            const unsigned long long step = blockDim.x * THREAD_ARCS;
            for (unsigned long long base = tb; base < te; base += step) {
                const unsigned long long e = base + threadIdx.x;
                relax_thread_arcs<Relax, WEIGHTED>(ops, targets, weights, e, te, e < te,
                                                   KnownValue{val}, appends, staged.sent(),
                                                   staged.deferred(), true, blockDim.x);
            }
        }
        if (staging) {
            staged.flush();
        } else {
            __syncthreads();
        }
    }
}

template <typename Relax, bool WEIGHTED, bool BATCHED = false, bool STAGE_SENDS = false>
__device__ void traversal_expand_hubs(const MinSplitOps ops, const unsigned long long* offsets,
                                      const unsigned int* targets, const unsigned int* weights,
                                      const DeviceWorklist wl, const SendBuffer send,
                                      const LowList low = LowList{}) {
    traversal_expand_hubs_into<Relax, WEIGHTED, BATCHED, STAGE_SENDS>(ops, offsets, targets,
                                                                      weights, wl, wl, send, low);
}

// ITEMS: received items a thread takes a round (as traversal_reexamine's), their loads and
// atomics all issued before the first result is used; ITEMS > 1 needs STAGE_SENDS (the stage
// holds a round's items of a block of up to 1,024 / ITEMS threads). With ITEMS > 1 `count` is
// at most 2^31 (a member's inbox ring holds no more), so no index below wraps.
template <bool STAGE_SENDS, unsigned int ITEMS = 1u>
__device__ __forceinline__ void traversal_split_receive(const MinSplitOps ops,
                                                        const VertexValue* received,
                                                        unsigned int count,
                                                        const DeviceWorklist wl,
                                                        const SendBuffer send,
                                                        const LowList low = LowList{}) {
    static_assert(ITEMS == 1u || (STAGE_SENDS && ITEMS < 8u), "1 to 7 items, staged");
    constexpr unsigned int K = ITEMS;
    const unsigned int stride = gridDim.x * blockDim.x * K;
    const unsigned int rounds = (count + stride - 1u) / stride;
    // Where STAGE_SENDS, the deferred and passed items go through the block's stage, flushed
    // after each round (flush's last barrier orders the copy before the next round's
    // appends); else straight to their lists.
    const BlockStage<STAGE_SENDS> staged = BlockStage<STAGE_SENDS>::of(low, send);
    const bool staging = STAGE_SENDS && staged.active();
    staged.stage();
    __syncthreads();
    for (unsigned int r = 0; r < rounds; ++r) {
        const unsigned int first = r * stride + blockIdx.x * blockDim.x * K + threadIdx.x;
        if constexpr (K == 1u) {
            unsigned int flags = SF_DROP;
            VertexValue p;
            p.vertex = 0;
            p.value = 0;
            if (first < count) {
                p = received[first];
                flags = ops.on_receive(p);
            }
            const bool kept = (flags & SF_KEEP) != 0;
            if constexpr (STAGE_SENDS) {
                keep_or_defer(wl, staged.deferred(), ops.unpack(p), p.value, kept);
            } else {
                keep_or_defer(wl, low, ops.unpack(p), p.value, kept);
            }
            staged.sent().append_warp(p, (flags & SF_PASS) != 0);
        } else {
            VertexValue p[K];
            bool listed[K];
#pragma unroll
            for (unsigned int k = 0; k < K; ++k) {
                const unsigned int i = first + k * blockDim.x;
                listed[k] = i < count;
                p[k].vertex = 0;
                p[k].value = 0;
                if (listed[k]) {
                    p[k] = received[i];
                }
            }
            unsigned int flags[K];
#pragma unroll
            for (unsigned int k = 0; k < K; ++k) {
                flags[k] = listed[k] ? ops.on_receive(p[k]) : SF_DROP;
            }
            unsigned int vertex[K];
            unsigned int value[K];
            bool kept[K];
            bool deferred[K];
            bool passed[K];
            unsigned int n = 0;
#pragma unroll
            for (unsigned int k = 0; k < K; ++k) {
                vertex[k] = ops.unpack(p[k]);
                value[k] = p[k].value;
                const bool keep = (flags[k] & SF_KEEP) != 0;
                deferred[k] = keep && low.defers(value[k]);
                kept[k] = keep && !deferred[k];
                passed[k] = (flags[k] & SF_PASS) != 0;
                n += kept[k] ? 1u : 0u;
            }
            wl.append_warp_n(vertex, kept, n);
            staged.deferred().append_warp_n(vertex, value, deferred);
            staged.sent().append_warp_n(vertex, value, passed);
        }
        if (staging) {
            staged.flush();
        }
    }
}

}  // namespace groute

// The extern "C" entry points of one algorithm: NAME##_expand, NAME##_expand_hubs (same
// parameters, `count` unused; launched right after NAME##_expand), NAME##_split_receive and
// NAME##_reexamine. Parameters (mirrored by the typed wrappers in
// crates/groute-worklist/src/traversal/cuda.rs); low_data null: soft priority off:
//   expand(values, offsets, targets, weights, wl_data, wl_mask, first, count, ctrl,
//          send_data, send_capacity, send_base, owned_begin, owned_end,
//          low_data, low_capacity, threshold, hub_min_degree)
//   expand_hubs(the same parameters; count and hub_min_degree unused)
//   split_receive(values, received, count, wl_data, wl_mask, first, ctrl,
//                 send_data, send_capacity, send_base, owned_begin, owned_end,
//                 low_data, low_capacity, threshold)
//   reexamine(values, taken, count, wl_data, wl_mask, first, ctrl,
//             low_data, low_capacity, threshold)
#define GROUTE_TRAVERSAL_KERNELS(NAME, RELAX, WEIGHTED)                                        \
    extern "C" __global__ void NAME##_expand(                                                  \
        unsigned int* values, const unsigned long long* offsets, const unsigned int* targets,  \
        const unsigned int* weights, unsigned int* wl_data, unsigned int wl_mask,              \
        unsigned int first, unsigned int count, unsigned int* ctrl,                            \
        groute::VertexValue* send_data, unsigned int send_capacity, unsigned int send_base,    \
        unsigned int owned_begin, unsigned int owned_end, groute::VertexValue* low_data,       \
        unsigned int low_capacity, unsigned int threshold, unsigned int hub_min_degree) {      \
        const groute::MinSplitOps ops{owned_begin, owned_end, values};                         \
        const groute::DeviceWorklist wl{wl_data, wl_mask, first, ctrl};                        \
        const groute::SendBuffer send{send_data, send_capacity, send_base, ctrl};              \
        const groute::LowList low{low_data, low_capacity, threshold, ctrl};                    \
        groute::traversal_expand<RELAX, WEIGHTED, true>(ops, offsets, targets, weights, wl,    \
                                                        count, send, low,                      \
                                                        groute::GridShape::launch(),           \
                                                        hub_min_degree);                       \
    }                                                                                          \
    extern "C" __global__ void NAME##_expand_hubs(                                             \
        unsigned int* values, const unsigned long long* offsets, const unsigned int* targets,  \
        const unsigned int* weights, unsigned int* wl_data, unsigned int wl_mask,              \
        unsigned int first, unsigned int, unsigned int* ctrl, groute::VertexValue* send_data,  \
        unsigned int send_capacity, unsigned int send_base, unsigned int owned_begin,          \
        unsigned int owned_end, groute::VertexValue* low_data, unsigned int low_capacity,      \
        unsigned int threshold, unsigned int) {                                                \
        const groute::MinSplitOps ops{owned_begin, owned_end, values};                         \
        const groute::DeviceWorklist wl{wl_data, wl_mask, first, ctrl};                        \
        const groute::SendBuffer send{send_data, send_capacity, send_base, ctrl};              \
        const groute::LowList low{low_data, low_capacity, threshold, ctrl};                    \
        groute::traversal_expand_hubs<RELAX, WEIGHTED, false, true>(ops, offsets, targets,     \
                                                                    weights, wl, send, low);   \
    }                                                                                          \
    extern "C" __global__ void NAME##_split_receive(                                           \
        unsigned int* values, const groute::VertexValue* received, unsigned int count,         \
        unsigned int* wl_data, unsigned int wl_mask, unsigned int first, unsigned int* ctrl,   \
        groute::VertexValue* send_data, unsigned int send_capacity, unsigned int send_base,    \
        unsigned int owned_begin, unsigned int owned_end, groute::VertexValue* low_data,       \
        unsigned int low_capacity, unsigned int threshold) {                                   \
        const groute::MinSplitOps ops{owned_begin, owned_end, values};                         \
        const groute::DeviceWorklist wl{wl_data, wl_mask, first, ctrl};                        \
        const groute::SendBuffer send{send_data, send_capacity, send_base, ctrl};              \
        const groute::LowList low{low_data, low_capacity, threshold, ctrl};                    \
        groute::traversal_split_receive<true>(ops, received, count, wl, send, low);            \
    }                                                                                          \
    extern "C" __global__ void NAME##_reexamine(                                               \
        const unsigned int* values, const groute::VertexValue* taken, unsigned int count,      \
        unsigned int* wl_data, unsigned int wl_mask, unsigned int first, unsigned int* ctrl,   \
        groute::VertexValue* low_data, unsigned int low_capacity, unsigned int threshold) {    \
        const groute::DeviceWorklist wl{wl_data, wl_mask, first, ctrl};                       \
        const groute::LowList low{low_data, low_capacity, threshold, ctrl};                    \
        groute::traversal_reexamine<1>(values, taken, count, wl, low);                         \
    }
