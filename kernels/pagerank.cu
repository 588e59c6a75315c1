// Residual-push PageRank kernels for the distributed worklist (non-fused mode: one launch per
// round). The device mirror of crates/groute-pagerank/src/host.rs and split.rs.
//
// State per device: `residual` is full length (the residual of owned vertices; for the
// others, the halo accumulation not yet sent), `rank` covers the owned range only.
//
// pagerank_sweep:   a topology-driven round over the owned range [owned_begin, owned_end) as
//                   a range (no worklist): pushes every vertex whose residual exceeds `floor`
//                   (a plain volatile load first: no atomic on the vertices left alone). The
//                   first round (floor 0) and, when the pending items are a large fraction of
//                   the owned range, a round that replaces them all (floor epsilon: every
//                   pending vertex has a residual above it). Counts its pushes in
//                   ctrl[CTRL_PUSHED].
// pagerank_expand:  a round over the worklist range [first, first + count).
//   Both push each vertex v: rho = atomicExch(residual[v], 0); rank[v] += rho; each out-arc
//   v -> w gets alpha * rho / outdeg(v) with atomicAdd(float*). An owned w whose residual
//   crossed epsilon (old <= eps < old + share) is appended to the local worklist; a remote w
//   whose halo slot was empty (old == 0) is appended to the remote list (one entry per remote
//   vertex per round). Adjacency lists are load-balanced as in bfs.cu: degree >=
//   HubList::MIN_DEGREE -> listed as a hub (the thread that took rho stores the share per
//   arc in the hub list, hubs.cuh) and pushed by pagerank_push_hubs over the whole grid;
//   >= blockDim.x -> the whole block; >= 32 -> one warp; else the owning thread, which pushes
//   BATCH arcs before one warp reservation per destination (warp_reserve_n).
// pagerank_push_hubs: launched after a sweep or expand: pushes the listed hubs' arcs in
//   tiles of HubList::TILE arcs, block b taking tiles b, b + gridDim.x, ...
// pagerank_pack_remote: merge before send: for each vertex of the remote list, takes its
//   halo accumulation (atomicExch with 0) into a VertexResidual of the send buffer. The list's
//   length is read on the device (written by the round's kernels before it, in stream order),
//   so the host launches it right after them, with no read-back in between.
// pagerank_split_receive: SplitReceive: an owner adds the residual and keeps the vertex if it
//   crossed epsilon (else drops it: the mass waits in the residual); a non-owner passes it.
// pagerank_pull_take, pagerank_pull_gather: a PULL sweep, the alternative to pagerank_sweep
//   without atomics on the local arcs (two launches; crates/groute-pagerank/src/sweep.rs):
//   pass 1 (take) over the owned range takes every residual above `floor` into the rank and
//   stores share[v] = alpha * rho / outdeg(v) (0 for a vertex not taken or dangling); it
//   pushes share along the CUT arcs only (a per-device CSR of the owned vertices' arcs to
//   non-owned heads, full length, empty rows elsewhere; has_cut 0 on one device) with the
//   push machinery above (halo slots, remote list, hubs: pagerank_push_hubs then runs over
//   the cut CSR). Pass 2 (gather) over the owned range adds to residual[v] the shares of its
//   in-neighbours (the in-CSR: the CSR itself on a symmetric graph, else its transpose);
//   `share` is full length and 0 outside the owned range, so remote in-neighbours add
//   nothing (their mass arrives through their owner's cut push). A vertex whose residual
//   crosses epsilon is appended to the worklist. Together: exactly one synchronous push
//   sweep. In-lists of at least PULL_HUB_DEGREE arcs (hubs, listed with their tiles at
//   upload) are summed before the gather by pagerank_pull_hub_tiles over the whole grid.
//
// Control block (u32 words of wl.ctrl, mirrored in crates/groute-pagerank/src/cuda.rs):
// 0..3 the worklist's and the send buffer's, 4..5 the remote list's, 6 dropped, 7 pushed
// (CTRL_PUSHED), 8..9 the hub list's 64-bit counter (CTRL_HUB_COUNTER), 10 the worklist end a
// sweep started from (copied there by the host's stream, CTRL_ROUND_FIRST), then from word
// CTRL_HUB_SLOTS the `hub_capacity` hub slots. The host zeroes words 7..9 before a round.
//
// Overflow of any buffer records the size needed in `*overflow` and writes nothing; the host
// checks it after the kernel and fails the run naming the setting. Nothing is lost silently.
// Self-contained (NVRTC, no toolkit headers). Launch with blockDim.x a multiple of 32, <= 1024.
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
};

// Pull sweep pass 1: where the share of each taken vertex goes (`share`, full length) and
// the cut arcs it is still pushed along (`cut_offsets`: full-length offsets of the cut CSR,
// null when the device has no cut arcs). Unused (all null) by the push rounds.
struct PullTake {
    float* share;
    const unsigned long long* cut_offsets;
};

// A bounded array with warp-aggregated appends and an overflow word.
template <typename T>
struct AppendBuffer {
    T* data;
    unsigned int capacity;
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
        const unsigned int used = slot + 1u - wl.first;
        if (used > wl.mask + 1u) {
            atomicMax(wl.ctrl + groute::CTRL_WL_OVERFLOW, used);
            return;
        }
        wl.data[slot & wl.mask] = item;
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
    if (end == begin) {
        return 0.0f;  // dangling: its mass leaves the system (unnormalised PageRank)
    }
    return ops.alpha * rho / static_cast<float>(end - begin);
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
    if (end == begin) {
        return 0.0f;  // dangling: its mass leaves the system (unnormalised PageRank)
    }
    return ops.alpha * rho / static_cast<float>(end - begin);
}

// Adds `share` to w's residual; sets `local` (an owned w crossed epsilon) or `far` (a remote
// w's halo slot was empty).
__device__ __forceinline__ void add_share(const PageRankOps& ops, unsigned int w, float share,
                                          bool& local, bool& far) {
    const float old = atomicAdd(ops.residual + w, share);
    if (ops.mine(w)) {
        local = old <= ops.epsilon && old + share > ops.epsilon;
    } else {
        far = old == 0.0f;
    }
}

// Pushes `share` along arc e (where `active`) and schedules the head (warp-aggregated).
__device__ __forceinline__ void push_arc(const PageRankOps& ops, const unsigned int* targets,
                                         unsigned long long e, bool active, float share,
                                         const groute::DeviceWorklist& wl,
                                         const AppendBuffer<unsigned int>& remote) {
    bool local = false;
    bool far = false;
    unsigned int w = 0;
    if (active) {
        w = targets[e];
        add_share(ops, w, share, local, far);
    }
    wl.append_warp(w, local);
    remote.append_warp(w, far);
}

// Pushes `share` along arcs [e, min(e + BATCH, end)) of this lane's own list, then schedules
// the heads with one reservation per warp per destination (call with all 32 lanes). On
// low-degree graphs (road networks: degree <= 4) a list takes one batch: two reservations
// per warp instead of two per arc step.
__device__ __forceinline__ void push_batch(const PageRankOps& ops, const unsigned int* targets,
                                           unsigned long long e, unsigned long long end,
                                           float share, const groute::DeviceWorklist& wl,
                                           const AppendBuffer<unsigned int>& remote) {
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
            add_share(ops, heads[k], share, l, f);
            local |= static_cast<unsigned int>(l) << k;
            far |= static_cast<unsigned int>(f) << k;
        }
    }
    append_batch(WorklistSink{wl, wl.ctrl + groute::CTRL_WL_END}, heads, local);
    append_batch(remote, heads, far);
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

// A push round over `count` items. PULL (pull sweep pass 1): the share comes from the
// out-degree in `offsets` and is stored in pull.share[v]; the arcs pushed are v's cut arcs
// (`targets` is then the cut CSR's).
template <bool SWEEP, bool PULL, typename Items>
__device__ __forceinline__ void push_round(const PageRankOps& ops,
                                           const unsigned long long* offsets,
                                           const unsigned int* targets, const Items& items,
                                           unsigned int count, float floor,
                                           const groute::DeviceWorklist& wl,
                                           const groute::HubList& hubs,
                                           const AppendBuffer<unsigned int>& remote,
                                           const PullTake& pull) {
    __shared__ unsigned int block_pushed;
    const unsigned int lane = groute::lane_id();
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
            share = PULL ? take_owned(ops, v, begin, end, floor, pushed)
                         : take_and_share<SWEEP>(ops, v, begin, end, floor, pushed);
            pushed_here += pushed ? 1u : 0u;
            if (PULL) {
                pull.share[v] = share;  // every owned vertex: 0 when not taken
                begin = 0;
                end = 0;
                if (pull.cut_offsets != nullptr) {
                    begin = pull.cut_offsets[v];
                    end = pull.cut_offsets[v + 1];
                }
                if (begin == end) {
                    share = 0.0f;  // no cut arc: the gather delivers it all
                }
            }
            if (share > 0.0f && groute::HubList::is_hub(end - begin) &&
                hubs.record(v, end - begin, __float_as_uint(share))) {
                share = 0.0f;  // pushed by pagerank_push_hubs
            }
        }
        bool have = share > 0.0f;
        if (PULL && pull.cut_offsets == nullptr) {
            continue;  // no cut arc on this device (uniform over the grid): nothing to push
        }
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
    if (SWEEP) {
        // One atomic per block on the pushed count (statistics of the sweep).
        if (threadIdx.x == 0) {
            block_pushed = 0;
        }
        __syncthreads();
        const unsigned int warp_pushed = __reduce_add_sync(0xFFFFFFFFu, pushed_here);
        if (lane == 0 && warp_pushed != 0) {
            atomicAdd(&block_pushed, warp_pushed);
        }
        __syncthreads();
        if (threadIdx.x == 0 && block_pushed != 0) {
            atomicAdd(wl.ctrl + CTRL_PUSHED, block_pushed);
        }
    }
}

}  // namespace

extern "C" __global__ void pagerank_sweep(PageRankOps ops, const unsigned long long* offsets,
                                          const unsigned int* targets, groute::DeviceWorklist wl,
                                          float floor, unsigned int hub_capacity,
                                          unsigned int* remote_data, unsigned int remote_capacity,
                                          unsigned int* remote_count,
                                          unsigned int* remote_overflow) {
    const AppendBuffer<unsigned int> remote{remote_data, remote_capacity, remote_count,
                                            remote_overflow};
    const RangeItems items{ops.owned_begin};
    push_round<true, false>(ops, offsets, targets, items, ops.owned_end - ops.owned_begin, floor,
                            wl, hub_list(wl, hub_capacity), remote, PullTake{nullptr, nullptr});
}

extern "C" __global__ void pagerank_expand(PageRankOps ops, const unsigned long long* offsets,
                                           const unsigned int* targets,
                                           groute::DeviceWorklist wl, unsigned int first,
                                           unsigned int count, unsigned int hub_capacity,
                                           unsigned int* remote_data,
                                           unsigned int remote_capacity,
                                           unsigned int* remote_count,
                                           unsigned int* remote_overflow) {
    const AppendBuffer<unsigned int> remote{remote_data, remote_capacity, remote_count,
                                            remote_overflow};
    const WorklistItems items{wl, first};
    push_round<false, false>(ops, offsets, targets, items, count, 0.0f, wl,
                             hub_list(wl, hub_capacity), remote, PullTake{nullptr, nullptr});
}

extern "C" __global__ void pagerank_push_hubs(PageRankOps ops, const unsigned long long* offsets,
                                              const unsigned int* targets,
                                              groute::DeviceWorklist wl,
                                              unsigned int hub_capacity,
                                              unsigned int* remote_data,
                                              unsigned int remote_capacity,
                                              unsigned int* remote_count,
                                              unsigned int* remote_overflow) {
    __shared__ groute::HubTile tile;
    const AppendBuffer<unsigned int> remote{remote_data, remote_capacity, remote_count,
                                            remote_overflow};
    const groute::HubList hubs = hub_list(wl, hub_capacity);
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

extern "C" __global__ void pagerank_pack_remote(PageRankOps ops, const unsigned int* remote,
                                                unsigned int remote_capacity,
                                                const unsigned int* remote_count,
                                                VertexResidual* send_data,
                                                unsigned int send_capacity,
                                                unsigned int* send_count,
                                                unsigned int* send_overflow) {
    const AppendBuffer<VertexResidual> send{send_data, send_capacity, send_count, send_overflow};
    // The round's kernels wrote the count before this launch (stream order); an overflowed
    // list holds only `remote_capacity` entries (the overflow word fails the run).
    const unsigned int count = min(*remote_count, remote_capacity);
    const unsigned int stride = gridDim.x * blockDim.x;
    const unsigned int rounds = (count + stride - 1u) / stride;
    for (unsigned int r = 0; r < rounds; ++r) {
        const unsigned int i = r * stride + blockIdx.x * blockDim.x + threadIdx.x;
        VertexResidual p;
        p.vertex = 0;
        p.residual = 0.0f;
        if (i < count) {
            p.vertex = remote[i];
            p.residual = atomicExch(ops.residual + p.vertex, 0.0f);
        }
        send.append_warp(p, i < count);
    }
}

extern "C" __global__ void pagerank_split_receive(PageRankOps ops,
                                                  const VertexResidual* received,
                                                  unsigned int count, groute::DeviceWorklist wl,
                                                  VertexResidual* send_data,
                                                  unsigned int send_capacity,
                                                  unsigned int* send_count,
                                                  unsigned int* send_overflow,
                                                  unsigned int* dropped) {
    const AppendBuffer<VertexResidual> send{send_data, send_capacity, send_count, send_overflow};
    const unsigned int stride = gridDim.x * blockDim.x;
    const unsigned int rounds = (count + stride - 1u) / stride;
    for (unsigned int r = 0; r < rounds; ++r) {
        const unsigned int i = r * stride + blockIdx.x * blockDim.x + threadIdx.x;
        unsigned int flags = groute::SF_DROP;
        VertexResidual p;
        p.vertex = 0;
        p.residual = 0.0f;
        if (i < count) {
            p = received[i];
            if (!ops.mine(p.vertex)) {
                flags = groute::SF_PASS;
            } else {
                const float old = atomicAdd(ops.residual + p.vertex, p.residual);
                if (old <= ops.epsilon && old + p.residual > ops.epsilon) {
                    flags = groute::SF_KEEP;
                }
            }
        }
        wl.append_warp(p.vertex, (flags & groute::SF_KEEP) != 0);
        send.append_warp(p, (flags & groute::SF_PASS) != 0);
        const unsigned int ballot =
            __ballot_sync(0xFFFFFFFFu, i < count && flags == groute::SF_DROP);
        if (groute::lane_id() == 0 && ballot != 0) {
            atomicAdd(dropped, static_cast<unsigned int>(__popc(ballot)));
        }
    }
}

extern "C" __global__ void pagerank_pull_take(PageRankOps ops, const unsigned long long* offsets,
                                              const unsigned long long* cut_offsets,
                                              const unsigned int* cut_targets,
                                              unsigned int has_cut, float* share,
                                              groute::DeviceWorklist wl, float floor,
                                              unsigned int hub_capacity,
                                              unsigned int* remote_data,
                                              unsigned int remote_capacity,
                                              unsigned int* remote_count,
                                              unsigned int* remote_overflow) {
    const AppendBuffer<unsigned int> remote{remote_data, remote_capacity, remote_count,
                                            remote_overflow};
    const RangeItems items{ops.owned_begin};
    const PullTake pull{share, has_cut != 0u ? cut_offsets : nullptr};
    push_round<true, true>(ops, offsets, cut_targets, items, ops.owned_end - ops.owned_begin,
                           floor, wl, hub_list(wl, hub_capacity), remote, pull);
}

// Adds `sum` to owned v's residual (plain: only this thread writes it in the launch; receives
// run in stream order, never during it); true when it crossed epsilon.
__device__ __forceinline__ bool add_owned(const PageRankOps& ops, unsigned int v, float sum) {
    if (!(sum > 0.0f)) {
        return false;
    }
    const float old = ops.residual[v];
    const float now = old + sum;
    ops.residual[v] = now;
    return old <= ops.epsilon && now > ops.epsilon;
}

// Pull sweep, hubs (before pagerank_pull_gather): the in-lists of the hubs listed at upload,
// in tiles (tiles[3t] = hub index, tiles[3t + 1 .. 3t + 3) = arc range of the in-CSR), block
// b taking tiles b, b + gridDim.x, ...; each tile's sum is added to hub_sum[hub index].
extern "C" __global__ void pagerank_pull_hub_tiles(const unsigned long long* tiles,
                                                   unsigned int tile_count,
                                                   const unsigned int* in_sources,
                                                   const float* share, float* hub_sum) {
    __shared__ float total;
    for (unsigned int t = blockIdx.x; t < tile_count; t += gridDim.x) {
        const unsigned long long hub = tiles[3ull * t];
        const unsigned long long begin = tiles[3ull * t + 1];
        const unsigned long long end = tiles[3ull * t + 2];
        float part = 0.0f;
        for (unsigned long long e = begin + threadIdx.x; e < end; e += blockDim.x) {
            part += share[in_sources[e]];
        }
        part = groute::block_sum(part, total);
        if (threadIdx.x == 0) {
            atomicAdd(hub_sum + hub, part);
        }
    }
}

// Pull sweep pass 2: the hubs' sums (taken from hub_sum, left 0), then every other owned
// vertex (in-degree below hub_degree) gathers its in-neighbours' shares.
extern "C" __global__ void pagerank_pull_gather(PageRankOps ops,
                                                const unsigned long long* in_offsets,
                                                const unsigned int* in_sources,
                                                const float* share, groute::DeviceWorklist wl,
                                                const unsigned int* hubs, unsigned int hub_count,
                                                float* hub_sum,
                                                unsigned long long hub_degree) {
    const unsigned int stride = gridDim.x * blockDim.x;
    const unsigned int hub_rounds = (hub_count + stride - 1u) / stride;
    for (unsigned int r = 0; r < hub_rounds; ++r) {
        const unsigned int i = r * stride + blockIdx.x * blockDim.x + threadIdx.x;
        unsigned int v = 0;
        bool crossed = false;
        if (i < hub_count) {
            v = hubs[i];
            crossed = add_owned(ops, v, hub_sum[i]);
            hub_sum[i] = 0.0f;
        }
        wl.append_warp(v, crossed);
    }
    const WorklistSink sink{wl, wl.ctrl + groute::CTRL_WL_END};
    const unsigned int count = ops.owned_end - ops.owned_begin;
    const unsigned int rounds = (count + stride - 1u) / stride;
    for (unsigned int r = 0; r < rounds; ++r) {
        const unsigned int i = r * stride + blockIdx.x * blockDim.x + threadIdx.x;
        const unsigned int v = ops.owned_begin + i;
        unsigned long long begin = 0;
        unsigned long long end = 0;
        if (i < count) {
            begin = in_offsets[v];
            end = in_offsets[v + 1];
        }
        const bool active = i < count && end - begin < hub_degree;
        const float sum = groute::gather_sum(in_sources, share, begin, end, active);
        // Most vertices may cross in a sweep: one reservation per block, not per warp.
        const bool crossed = active && add_owned(ops, v, sum);
        const unsigned int slot = groute::block_reserve(sink.count, crossed);
        if (crossed) {
            sink.put(slot, v);
        }
    }
}
