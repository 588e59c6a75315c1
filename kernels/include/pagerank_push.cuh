// The round bodies of residual-push PageRank, shared by the host-driven kernels
// (kernels/pagerank/pagerank.cu, one launch per pass) and the device-driven loop
// (kernels/pagerank/pagerank_fused.cu, every pass of every round in one persistent kernel): the take
// and push of a sweep or worklist round (push_round, with the nested load balancing of
// list_claim.cuh), the hubs' tiles (push_hubs_grid), and the pull sweep's take, cut pass and
// hub tiles (pull_take_grid, push_cut_grid, pull_hub_tiles_grid; its gather is
// pull_sweep_gather.cuh's).
// Every body is grid-stride over gridDim.x blocks.
//
// Where a push's contribution to a vertex of ANOTHER device goes is a policy (`Remote`):
// `HaloList` (host-driven: this device's halo slot in the full-length residual, the vertex
// listed for pagerank_pack_remote when its slot was empty) or the fused loop's PeerHalo (the
// owner's incoming halo over NVLink, listed in its inbox) and PeerHaloPost (the same halo,
// unlisted: a sweep's cut pass). A Remote provides
//   static constexpr bool ALL_REMOTE            // true: every arc goes to add (see add_share)
//   bool add(unsigned int w, float share)       // adds; true: list w (append_warp / heads)
//   void append_warp(unsigned int w, bool keep) // warp-uniform; lists w where keep
//   void append_heads(const unsigned int (&heads)[BATCH], unsigned int keep)
// See kernels/pagerank/pagerank.cu for the state, the control block and the overflow rules.
// Self-contained (NVRTC, no toolkit headers). blockDim.x a multiple of 32, <= 1024.
#pragma once

#include "hubs.cuh"
#include "list_claim.cuh"
#include "warp_append.cuh"
#include "worklist.cuh"
#include "split.cuh"
#include "pull_gather.cuh"

namespace {

// Control block words beyond the worklist's (see the header comment).
constexpr unsigned int CTRL_PUSHED = 7;
constexpr unsigned int CTRL_HUB_COUNTER = 8;  // two words, 8-byte aligned
constexpr unsigned int CTRL_TAKEN_ARCS = 12;   // two words, 8-byte aligned
constexpr unsigned int CTRL_HUB_SLOTS = 16;
// Arcs a thread pushes before its warp reserves worklist and remote slots for them.
constexpr unsigned int BATCH = 4;
constexpr unsigned int BATCH_BITS = 3;  // BATCH < 2^BATCH_BITS

// Packed item: 8 bytes, vertex first (groute_pagerank::VertexResidual).
struct VertexResidual {
    unsigned int vertex;
    float residual;
};

// One device's PageRank state (groute_pagerank::cuda::PageRankArgs).
struct PageRankOps {
    unsigned int owned_begin;
    unsigned int owned_end;
    float* residual;  // full length
    float* rank;      // owned_end - owned_begin
    float alpha;
    float epsilon;

    __device__ __forceinline__ bool mine(unsigned int v) const {
        return v >= owned_begin && v < owned_end;
    }

    // The share each of a vertex's `out_degree` out-arcs carries when `rho` is taken from it:
    // 0 for a dangling vertex, whose mass leaves the system (unnormalised PageRank).
    __device__ __forceinline__ float share_per_arc(float rho,
                                                   unsigned long long out_degree) const {
        return out_degree == 0ull ? 0.0f : alpha * rho / static_cast<float>(out_degree);
    }
};

// Where a pass over the owned range starts: owned_begin rounded down to a multiple of 32, so
// that each warp covers 32 vertices of one aligned span and its loads of per-vertex arrays
// (u32 residuals and shares, u64 offsets) fill whole 128-byte lines. Started at owned_begin
// itself, every warp of a device whose range begins off a multiple of 32 (any device but the
// first, in general) would straddle two lines per load, making its pull take and gather
// markedly slower than the first device's. The lanes below owned_begin do nothing.
__device__ __forceinline__ unsigned int warp_aligned_begin(const PageRankOps& ops) {
    return ops.owned_begin & ~31u;
}

// A pass over the owned range from warp_aligned_begin, grid-stride, with a trip count
// (`rounds`) uniform across the grid, so that block-wide reservations may run in it: in
// round r this thread's vertex is base + index(r) (dealt out over the blocks:
// base + r * stride + first(true)), owned where its index is below `span` and the vertex
// at or above owned_begin.
struct OwnedPass {
    unsigned int base;
    unsigned int span;
    unsigned int stride;
    unsigned int rounds;

    __device__ __forceinline__ explicit OwnedPass(const PageRankOps& ops)
        : base(warp_aligned_begin(ops)),
          span(ops.owned_end - warp_aligned_begin(ops)),
          stride(gridDim.x * blockDim.x),
          rounds((ops.owned_end - warp_aligned_begin(ops) + gridDim.x * blockDim.x - 1u) /
                 (gridDim.x * blockDim.x)) {}

    __device__ __forceinline__ unsigned int index(unsigned int r) const {
        return r * stride + blockIdx.x * blockDim.x + threadIdx.x;
    }

    // This thread's index in round 0 of the pass, index(r) being r * stride + first(...):
    // blockIdx.x * blockDim.x + threadIdx.x, or, `interleave`d, the same indices dealt out
    // thread by thread over the blocks: in round r, thread t of block b takes
    // (r * blockDim.x + t) * gridDim.x + b. Where the vertices come in order of decreasing
    // degree, consecutive indices give the first blocks every long list and the last ones
    // only short lists; dealt out, every block gets its share of each. The per-vertex loads
    // of a warp then fall on 32 lines instead of one, which costs little where those arrays
    // stay in the L2.
    __device__ __forceinline__ static unsigned int first(bool interleave) {
        return interleave ? threadIdx.x * gridDim.x + blockIdx.x
                          : blockIdx.x * blockDim.x + threadIdx.x;
    }

    // first(...) for the indices dealt out warp by warp (blockDim.x a multiple of 32): warp w
    // of block b takes the 32 from (w * gridDim.x + b) * 32, a lane each. A pass over fewer
    // vertices than the grid has threads (all of a gather into one of the sweeps' vertex
    // ranges may be) then keeps every block busy, where given consecutive indices the blocks
    // past its end would idle while the first ones sum every list; and a warp's per-vertex
    // loads still fill whole lines.
    __device__ __forceinline__ static unsigned int first_by_warps() {
        return ((threadIdx.x / 32u) * gridDim.x + blockIdx.x) * 32u + (threadIdx.x & 31u);
    }
};

// The cut arcs of a device's owned range, compact (pull sweeps on several devices): cut
// vertex i is vertices[i], an owned vertex with arcs to other devices' vertices, and those
// arcs are targets[offsets[i] .. offsets[i + 1]). A road network's block partition cuts a few
// thousand of millions of vertices, so the pass over them (push_cut_grid) costs a few
// microseconds, where full-length cut offsets cost the take pass 8 bytes per owned vertex
// and a block-wide list claim per vertex.
struct CutLists {
    const unsigned int* vertices;
    const unsigned long long* offsets;
    const unsigned int* targets;
    unsigned int count;
};

// A bounded array with warp-aggregated appends and an overflow word; a kernel parameter
// (mirrored by `AppendArgs` in crates/groute-pagerank/src/cuda/launch.rs: 32 bytes, the
// padding word named).
template <typename T>
struct AppendBuffer {
    T* data;
    unsigned int capacity;
    unsigned int unused;
    unsigned int* count;
    unsigned int* overflow;

    __device__ __forceinline__ void put(unsigned int slot, const T& x) const {
        if (slot >= capacity) {
            atomicMax(overflow, slot + 1u);
            return;
        }
        data[slot] = x;
    }

    __device__ __forceinline__ void append_warp(const T& x, bool keep) const {
        unsigned int total;
        const unsigned int slot = groute::warp_reserve(count, keep, total);
        if (keep) {
            put(slot, x);
        }
    }
};

// The local worklist as a slot sink of append_batch.
struct WorklistSink {
    groute::DeviceWorklist wl;
    unsigned int* count;

    __device__ __forceinline__ void put(unsigned int slot, unsigned int item) const {
        wl.put(slot, item);
    }
};

// Appends items[k] for every bit k of `keep`, one reservation per warp for the whole batch
// (call with all 32 lanes).
template <typename Sink>
__device__ __forceinline__ void append_batch(const Sink& sink, const unsigned int (&items)[BATCH],
                                             unsigned int keep) {
    unsigned int total;
    unsigned int slot = groute::warp_reserve_n<BATCH_BITS>(sink.count, __popc(keep), total);
#pragma unroll
    for (unsigned int k = 0; k < BATCH; ++k) {
        if ((keep >> k) & 1u) {
            sink.put(slot, items[k]);
            ++slot;
        }
    }
}

// Takes v's residual into its rank; returns the share per out-arc (0: nothing to push) and
// sets `pushed` when a residual was taken. SWEEP: a plain volatile load first, and only a
// residual above `floor` is taken (the others keep theirs, without an atomic). The load is
// volatile (served by L2, never a stale L1 line): a vertex pending before the sweep has a
// residual above epsilon until it is taken, and the sweep must see it.
template <bool SWEEP>
__device__ __forceinline__ float take_and_share(const PageRankOps& ops, unsigned int v,
                                                unsigned long long begin,
                                                unsigned long long end, float floor,
                                                bool& pushed) {
    if (!ops.mine(v)) {
        return 0.0f;
    }
    if (SWEEP && !(*static_cast<volatile const float*>(ops.residual + v) > floor)) {
        return 0.0f;
    }
    const float rho = atomicExch(ops.residual + v, 0.0f);
    if (!(rho > 0.0f)) {
        return 0.0f;
    }
    pushed = true;
    atomicAdd(ops.rank + (v - ops.owned_begin), rho);
    return ops.share_per_arc(rho, end - begin);
}

// take_and_share for pull sweep pass 1: plain loads and stores, since v is owned (a range
// item) and no other thread of the launch touches its residual or rank (cut arcs lead to
// non-owned vertices; receives run in stream order, never during it).
__device__ __forceinline__ float take_owned(const PageRankOps& ops, unsigned int v,
                                            unsigned long long begin, unsigned long long end,
                                            float floor, bool& pushed) {
    const float rho = ops.residual[v];
    if (!(rho > floor) || !(rho > 0.0f)) {
        return 0.0f;
    }
    ops.residual[v] = 0.0f;
    pushed = true;
    ops.rank[v - ops.owned_begin] += rho;
    return ops.share_per_arc(rho, end - begin);
}

// Adds `share` to w's residual (owned w: sets `local` when it crossed epsilon) or hands it to
// `remote` (sets `far` when the remote policy lists w). A policy whose `ALL_REMOTE` is true
// gets every arc: its lists hold no vertex ids of this device, but its own indices (the
// fused loop's LocalMerge: the cut heads' indices, which ops.mine would misread).
template <typename Remote>
__device__ __forceinline__ void add_share(const PageRankOps& ops, const Remote& remote,
                                          unsigned int w, float share, bool& local, bool& far) {
    if (!Remote::ALL_REMOTE && ops.mine(w)) {
        const float old = atomicAdd(ops.residual + w, share);
        local = old <= ops.epsilon && old + share > ops.epsilon;
    } else {
        far = remote.add(w, share);
    }
}

// Host-driven mode's Remote: this device's halo slot of w in the full-length residual; w is
// listed (one entry per remote vertex per round) when its slot was empty.
struct HaloList {
    float* residual;
    AppendBuffer<unsigned int> list;

    static constexpr bool ALL_REMOTE = false;

    __device__ __forceinline__ bool add(unsigned int w, float share) const {
        return atomicAdd(residual + w, share) == 0.0f;
    }
    __device__ __forceinline__ void append_warp(unsigned int w, bool keep) const {
        list.append_warp(w, keep);
    }
    __device__ __forceinline__ void append_heads(const unsigned int (&heads)[BATCH],
                                                 unsigned int keep) const {
        append_batch(list, heads, keep);
    }
};

// Pushes `share` along arc e (where `active`) and schedules the head (warp-aggregated).
template <typename Remote>
__device__ __forceinline__ void push_arc(const PageRankOps& ops, const unsigned int* targets,
                                         unsigned long long e, bool active, float share,
                                         const groute::DeviceWorklist& wl,
                                         const Remote& remote) {
    bool local = false;
    bool far = false;
    unsigned int w = 0;
    if (active) {
        w = targets[e];
        add_share(ops, remote, w, share, local, far);
    }
    wl.append_warp(w, local);
    remote.append_warp(w, far);
}

// Pushes `share` along arcs [e, min(e + BATCH, end)) of this lane's own list, then schedules
// the heads with one reservation per warp per destination (call with all 32 lanes). On
// low-degree graphs (road networks: degree <= 4) a list takes one batch: two reservations
// per warp instead of two per arc step.
template <typename Remote>
__device__ __forceinline__ void push_batch(const PageRankOps& ops, const unsigned int* targets,
                                           unsigned long long e, unsigned long long end,
                                           float share, const groute::DeviceWorklist& wl,
                                           const Remote& remote) {
    unsigned int heads[BATCH];
    unsigned int local = 0;
    unsigned int far = 0;
#pragma unroll
    for (unsigned int k = 0; k < BATCH; ++k) {
        heads[k] = 0;
        if (e + k < end) {
            heads[k] = targets[e + k];
            bool l = false;
            bool f = false;
            add_share(ops, remote, heads[k], share, l, f);
            local |= static_cast<unsigned int>(l) << k;
            far |= static_cast<unsigned int>(f) << k;
        }
    }
    append_batch(WorklistSink{wl, wl.ctrl + groute::CTRL_WL_END}, heads, local);
    remote.append_heads(heads, far);
}

// Item i of a round: a worklist slot or a vertex of the sweep's range.
struct WorklistItems {
    groute::DeviceWorklist wl;
    unsigned int first;
    __device__ __forceinline__ unsigned int at(unsigned int i) const { return wl.at(first + i); }
};
struct RangeItems {
    unsigned int first;
    __device__ __forceinline__ unsigned int at(unsigned int i) const { return first + i; }
};

// The hub list after the control block.
__device__ __forceinline__ groute::HubList hub_list(const groute::DeviceWorklist& wl,
                                                    unsigned int hub_capacity) {
    return groute::HubList{reinterpret_cast<unsigned long long*>(wl.ctrl + CTRL_HUB_COUNTER),
                           wl.ctrl + CTRL_HUB_SLOTS, hub_capacity};
}

// Pushes each thread's list [begin, end) (where `have`) with `share` per arc: the nested
// load balancing of list_claim.cuh (block, then warp, then thread granularity, BATCH arcs per
// step). Call with every thread of the block.
template <typename Remote>
__device__ __forceinline__ void push_lists(const PageRankOps& ops, const unsigned int* targets,
                                           bool have, unsigned long long begin,
                                           unsigned long long end, float share,
                                           const groute::DeviceWorklist& wl,
                                           const Remote& remote) {
    const unsigned int lane = groute::lane_id();
    // (1) Block granularity: high-degree lists, one at a time, by the whole block.
    groute::claim_block_lists(
        have, begin, end, share,
        [&](unsigned long long bb, unsigned long long be, float bs, unsigned int) {
            for (unsigned long long base = bb; base < be; base += blockDim.x) {
                const unsigned long long e = base + threadIdx.x;
                push_arc(ops, targets, e, e < be, bs, wl, remote);
            }
        });
    // (2) Warp granularity: medium-degree lists, by one warp each.
    groute::claim_warp_lists(
        have, begin, end, share,
        [&](unsigned long long wb, unsigned long long we, float ws, unsigned int) {
            for (unsigned long long base = wb; base < we; base += 32u) {
                const unsigned long long e = base + lane;
                push_arc(ops, targets, e, e < we, ws, wl, remote);
            }
        });
    // (3) Thread granularity: the remaining low-degree lists, BATCH arcs per step.
    const unsigned long long last = have ? end : begin;
    for (unsigned long long e = begin; __any_sync(0xFFFFFFFFu, e < last); e += BATCH) {
        push_batch(ops, targets, e, last, share, wl, remote);
    }
}

// Adds the block's `here` (every thread's own count) to `*counter`: one shared atomic per
// warp, one global atomic per block. Every thread of the block.
__device__ __forceinline__ void add_block_count(unsigned int here, unsigned int* counter) {
    __shared__ unsigned int block_count;
    if (threadIdx.x == 0) {
        block_count = 0;
    }
    __syncthreads();
    const unsigned int warp_count = __reduce_add_sync(0xFFFFFFFFu, here);
    if (groute::lane_id() == 0 && warp_count != 0) {
        atomicAdd(&block_count, warp_count);
    }
    __syncthreads();
    if (threadIdx.x == 0 && block_count != 0) {
        atomicAdd(counter, block_count);
    }
}

// Adds the block's count of vertices taken to control word CTRL_PUSHED (statistics of a
// sweep). Every thread of the block.
__device__ __forceinline__ void add_pushed(unsigned int pushed_here,
                                           const groute::DeviceWorklist& wl) {
    add_block_count(pushed_here, wl.ctrl + CTRL_PUSHED);
}

// A push round over `count` items (a sweep's range or a worklist batch): each item's residual
// taken (SWEEP: only above `floor`) and pushed along its arcs; a hub's list is recorded for
// push_hubs_grid instead.
template <bool SWEEP, typename Items, typename Remote>
__device__ __forceinline__ void push_round(const PageRankOps& ops,
                                           const unsigned long long* offsets,
                                           const unsigned int* targets, const Items& items,
                                           unsigned int count, float floor,
                                           const groute::DeviceWorklist& wl,
                                           const groute::HubList& hubs,
                                           const Remote& remote) {
    const unsigned int stride = gridDim.x * blockDim.x;
    unsigned int pushed_here = 0;
    // Grid-stride over the items, with a trip count uniform across the block.
    const unsigned int rounds = (count + stride - 1u) / stride;
    for (unsigned int r = 0; r < rounds; ++r) {
        const unsigned int i = r * stride + blockIdx.x * blockDim.x + threadIdx.x;
        unsigned long long begin = 0;
        unsigned long long end = 0;
        float share = 0.0f;
        if (i < count) {
            const unsigned int v = items.at(i);
            begin = offsets[v];
            end = offsets[v + 1];
            bool pushed = false;
            share = take_and_share<SWEEP>(ops, v, begin, end, floor, pushed);
            pushed_here += pushed ? 1u : 0u;
            if (share > 0.0f && groute::HubList::is_hub(end - begin) &&
                hubs.record(v, end - begin, __float_as_uint(share))) {
                share = 0.0f;  // pushed by push_hubs_grid
            }
        }
        push_lists(ops, targets, share > 0.0f, begin, end, share, wl, remote);
    }
    if (SWEEP) {
        add_pushed(pushed_here, wl);
    }
}

// Pull sweep pass 1, the take: every owned vertex whose residual exceeds `floor` is taken
// into its rank and its share per out-arc stored in share[v] (0 for the others); the
// vertices taken are added to CTRL_PUSHED and their out-arcs to the 64-bit CTRL_TAKEN_ARCS.
// Nothing is pushed: the gather delivers the shares to owned heads, push_cut_grid to the
// others (or, in a push round of the synchronous sweeps, pagerank_push_taken to every head).
__device__ __forceinline__ void pull_take_grid(const PageRankOps& ops,
                                               const unsigned long long* offsets, float* share,
                                               float floor, const groute::DeviceWorklist& wl) {
    const unsigned int stride = gridDim.x * blockDim.x;
    const unsigned int base = warp_aligned_begin(ops);
    const unsigned int span = ops.owned_end - base;
    unsigned int pushed_here = 0;
    unsigned long long arcs_here = 0;
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < span; i += stride) {
        const unsigned int v = base + i;
        if (v < ops.owned_begin) {
            continue;
        }
        bool pushed = false;
        const unsigned long long begin = offsets[v];
        const unsigned long long end = offsets[v + 1];
        share[v] = take_owned(ops, v, begin, end, floor, pushed);
        pushed_here += pushed ? 1u : 0u;
        arcs_here += pushed ? end - begin : 0ull;
    }
    add_pushed(pushed_here, wl);
    // The out-arcs of the vertices taken: what a push of their shares crosses.
    groute::warp_add_u64(reinterpret_cast<unsigned long long*>(wl.ctrl + CTRL_TAKEN_ARCS),
                         arcs_here);
}

// Pull sweep, the cut arcs (after pull_take_grid, with a grid-wide barrier or a launch
// between): each cut vertex's share (share[v], 0 when not taken) pushed along its cut arcs to
// `remote`. A hub's cut list is recorded with its INDEX in `cut` (not its vertex id), so
// push_hubs_grid over (cut.offsets, cut.targets) pushes it. Returns the cut arcs this
// thread's lists pushed a share along (hub lists included).
//
// The lists are spread over the grid, up to one per warp (lane 0 of warp `i` takes list `i`
// when the grid has a warp per list): a remote push that waits for its old value (the
// host-driven HaloList, whose old value decides the listing) is a chain of round trips, and
// the fused loop runs this pass beside the gather, so a warp that pushes overlaps its latency
// with the gather work of the SM's other warps instead of adding it to a few blocks' tails.
template <typename Remote>
__device__ __forceinline__ unsigned long long push_cut_grid(const PageRankOps& ops,
                                                            const CutLists& cut,
                                              const float* share,
                                              const groute::DeviceWorklist& wl,
                                              const groute::HubList& hubs,
                                              const Remote& remote) {
    const unsigned int threads = gridDim.x * blockDim.x;
    // The largest power of two <= threads / count, at most 32: list i on lane 0 of its warp
    // when the grid has a warp per list, else on every spread-th lane.
    const unsigned int room = cut.count == 0u ? 1u : max(1u, min(32u, threads / cut.count));
    const unsigned int spread = 1u << (31u - __clz(room));
    const unsigned long long slots = static_cast<unsigned long long>(cut.count) * spread;
    const unsigned int rounds = static_cast<unsigned int>((slots + threads - 1u) / threads);
    unsigned long long arcs = 0;
    for (unsigned int r = 0; r < rounds; ++r) {
        const unsigned long long t =
            static_cast<unsigned long long>(r) * threads + blockIdx.x * blockDim.x + threadIdx.x;
        unsigned long long begin = 0;
        unsigned long long end = 0;
        float s = 0.0f;
        if (t < slots && t % spread == 0u) {
            const unsigned int i = static_cast<unsigned int>(t / spread);
            s = share[cut.vertices[i]];
            begin = cut.offsets[i];
            end = cut.offsets[i + 1];
            if (s > 0.0f) {
                arcs += end - begin;
            }
            if (s > 0.0f && groute::HubList::is_hub(end - begin) &&
                hubs.record(i, end - begin, __float_as_uint(s))) {
                s = 0.0f;  // pushed by push_hubs_grid
            }
        }
        push_lists(ops, cut.targets, s > 0.0f, begin, end, s, wl, remote);
    }
    return arcs;
}

// Pushes the hubs a round listed (after its push_round, with a grid-wide barrier or a
// launch between): tiles of HubList::TILE arcs, block b taking tiles b, b + gridDim.x, ...
template <typename Remote>
__device__ __forceinline__ void push_hubs_grid(const PageRankOps& ops,
                                               const unsigned long long* offsets,
                                               const unsigned int* targets,
                                               const groute::DeviceWorklist& wl,
                                               const groute::HubList& hubs,
                                               const Remote& remote) {
    __shared__ groute::HubTile tile;
    const unsigned int n = hubs.listed();
    if (n == 0) {
        return;
    }
    const unsigned int tiles = hubs.tiles();
    for (unsigned int g = blockIdx.x; g < tiles; g += gridDim.x) {
        hubs.block_tile(g, n, offsets, tile);
        const float share = __uint_as_float(tile.payload);
        const unsigned long long tb = tile.begin;
        const unsigned long long te = tile.end;
        for (unsigned long long base = tb; base < te; base += blockDim.x) {
            const unsigned long long e = base + threadIdx.x;
            push_arc(ops, targets, e, e < te, share, wl, remote);
        }
        __syncthreads();
    }
}

// Pull sweep, hubs (before the gather): the in-lists of the hubs listed at upload, in tiles
// (tiles[3t] = hub index, tiles[3t + 1 .. 3t + 3) = arc range of the in-CSR), block b taking
// tiles b, b + gridDim.x, ...; each tile's sum is added to hub_sum[hub index] (shares read
// as in the gather: `taken` null or the bitmap of pagerank_mark_taken), each thread keeping
// BATCH loads in flight.
template <unsigned int BATCH>
__device__ __forceinline__ void pull_hub_tiles_grid(const unsigned long long* tiles,
                                                    unsigned int tile_count,
                                                    const unsigned int* in_sources,
                                                    const float* share,
                                                    const unsigned int* taken, float* hub_sum) {
    __shared__ float total;
    for (unsigned int t = blockIdx.x; t < tile_count; t += gridDim.x) {
        const unsigned long long hub = tiles[3ull * t];
        const unsigned long long begin = tiles[3ull * t + 1];
        const unsigned long long end = tiles[3ull * t + 2];
        float part = groute::strided_share_sum<BATCH>(in_sources, share, taken,
                                                      begin + threadIdx.x, end, blockDim.x);
        part = groute::block_sum(part, total);
        if (threadIdx.x == 0) {
            atomicAdd(hub_sum + hub, part);
        }
    }
}


// Adds `sum` to owned v's residual (plain: only this thread writes it in the launch; receives
// run in stream order, never during it; in the fused loop's drain two threads may take the
// same vertex's halo slot, but only one of them gets a sum above 0, and a sum of 0 writes
// nothing); true when it crossed epsilon.
__device__ __forceinline__ bool add_owned(const PageRankOps& ops, unsigned int v, float sum) {
    if (!(sum > 0.0f)) {
        return false;
    }
    const float old = ops.residual[v];
    const float now = old + sum;
    ops.residual[v] = now;
    return old <= ops.epsilon && now > ops.epsilon;
}

}  // namespace
