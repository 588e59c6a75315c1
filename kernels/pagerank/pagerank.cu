// Residual-push PageRank kernels for the distributed worklist (non-fused mode: one launch per
// round). The device form of PageRank's residual push (crates/groute-pagerank/src/algorithm.rs)
// as the worklist's host executor runs it (crates/groute-worklist/src/algorithm/host.rs).
//
// State per device: `residual` is full length (the residual of owned vertices; for the
// others, the halo accumulation not yet sent), `rank` covers the owned range only. The graph
// (`offsets`, `targets`, and the pull sweep's `in_offsets`, `in_sources`) holds only the rows
// of the owned vertices (groute_worklist::DeviceCsr): the pointers are rebased so that the
// kernels index them by global vertex and arc ids, and no kernel reads another vertex's row
// (a push expands owned items only, a gather sums into owned vertices only, and the shares a
// gather reads come from the full-length `share` array, not from the in-neighbours' rows).
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
// pagerank_pull_take, pagerank_pull_cut, pagerank_pull_gather: a PULL sweep, the alternative
//   to pagerank_sweep without atomics on the local arcs (crates/groute-pagerank/src/sweep.rs):
//   pass 1 (take) over the owned range takes every residual above `floor` into the rank and
//   stores share[v] = alpha * rho / outdeg(v) (0 for a vertex not taken or dangling), and
//   pushes nothing. On several devices, pagerank_pull_cut then pushes the cut vertices'
//   shares along their CUT arcs only (CutLists: the owned vertices with arcs to non-owned
//   heads, compact) with the push machinery above (halo slots, remote list, hubs:
//   pagerank_push_hubs then runs over the cut lists' offsets and targets, the hubs recorded
//   by their index there). Pass 2 (gather) over the owned range adds to residual[v] the shares of its
//   in-neighbours (the in-CSR: the CSR itself on a symmetric graph, else its transpose);
//   `share` is full length and 0 outside the owned range, so remote in-neighbours add
//   nothing (their mass arrives through their owner's cut push). A vertex whose residual
//   crosses epsilon is appended to the worklist. Together: exactly one synchronous push
//   sweep. In-lists of at least PULL_HUB_DEGREE arcs (hubs, listed with their tiles at
//   upload) are summed before the gather by pagerank_pull_hub_tiles over the whole grid.
//   pagerank_pull_gather_tiles: pass 2 of a range of the rounds by vertex ranges, by tiles
//   of consecutive vertices whose in-arcs are sorted by source (or, few destinations of
//   many arcs, by destination), each summed in a block's shared memory (in place of the hub
//   tiles and the gather).
//
// pagerank_mark_taken: before the gather (and the hub tiles) of a sweep whose storage keeps
//   a bitmap of the vertices taken, one bit per vertex set where its share is above 0 (the
//   take's, the peers' and the other processes' alike): the gather then reads only those
//   shares (kernels/include/pull_gather.cuh).
//
// pagerank_push_taken, pagerank_push_big, pagerank_absorb: a PUSH round of the synchronous
//   sweeps, the alternative to the gather where a round takes few arcs
//   (crates/groute-pagerank/src/ranks/sweeps.rs): after the take, each vertex taken adds its
//   share to every out-arc's head with an atomic (heads of other devices in this device's
//   slots of them; hubs spread over the whole grid), the slots of each peer's vertices are
//   copied to it, and the absorb adds them and collects the vertices left above epsilon.
//   The same synchronous sweep as the gather's, in the order of its float additions aside.
//
// pagerank_pack_words, pagerank_unpack_words: the boundary exchange of PageRank across
//   processes (crates/groute-pagerank/src/ranks.rs): pack copies the shares of a process's
//   boundary vertices (those with arcs to other processes) into its send buffer, dst[i] =
//   src[index[i]]; unpack stores another process's received shares at its boundary vertices,
//   dst[index[i]] = src[i]; i < count, grid-stride.
//
// Control block (u32 words of wl.ctrl, mirrored in crates/groute-pagerank/src/cuda/launch.rs):
// 0..3 the worklist's and the send buffer's, 4..5 the remote list's, 6 dropped, 7 pushed
// (CTRL_PUSHED), 8..9 the hub list's 64-bit counter (CTRL_HUB_COUNTER), 10 the worklist end a
// sweep started from (copied there by the host's stream, CTRL_ROUND_FIRST), 12..13 the 64-bit
// count of the arcs a pull take took (CTRL_TAKEN_ARCS), 14 the hubs a push round listed
// (CTRL_PUSH_BIG), then from word CTRL_HUB_SLOTS the `hub_capacity` hub slots. The host zeroes
// words 7..9 before a round (the synchronous sweeps zero every word before a take).
//
// Overflow of any buffer records the size needed in `*overflow` and writes nothing; the host
// checks it after the kernel and fails the run naming the setting. Nothing is lost silently.
// Self-contained (NVRTC, no toolkit headers). Launch with blockDim.x a multiple of 32, <= 1024.
#include "pagerank_push.cuh"
#include "pull_sweep_gather.cuh"
#include "gather_tiles.cuh"
#include "grid_dependency.cuh"

extern "C" __global__ void pagerank_sweep(PageRankOps ops, const unsigned long long* offsets,
                                          const unsigned int* targets, groute::DeviceWorklist wl,
                                          float floor, unsigned int hub_capacity,
                                          AppendBuffer<unsigned int> remote_list) {
    const HaloList remote{ops.residual, remote_list};
    const RangeItems items{ops.owned_begin};
    push_round<true>(ops, offsets, targets, items, ops.owned_end - ops.owned_begin, floor, wl,
                     hub_list(wl, hub_capacity), remote);
}

extern "C" __global__ void pagerank_expand(PageRankOps ops, const unsigned long long* offsets,
                                           const unsigned int* targets,
                                           groute::DeviceWorklist wl, unsigned int first,
                                           unsigned int count, unsigned int hub_capacity,
                                           AppendBuffer<unsigned int> remote_list) {
    const HaloList remote{ops.residual, remote_list};
    const WorklistItems items{wl, first};
    push_round<false>(ops, offsets, targets, items, count, 0.0f, wl, hub_list(wl, hub_capacity),
                      remote);
}

extern "C" __global__ void pagerank_push_hubs(PageRankOps ops, const unsigned long long* offsets,
                                              const unsigned int* targets,
                                              groute::DeviceWorklist wl,
                                              unsigned int hub_capacity,
                                              AppendBuffer<unsigned int> remote_list) {
    const HaloList remote{ops.residual, remote_list};
    push_hubs_grid(ops, offsets, targets, wl, hub_list(wl, hub_capacity), remote);
}

extern "C" __global__ void pagerank_pack_remote(PageRankOps ops,
                                                AppendBuffer<unsigned int> remote,
                                                AppendBuffer<VertexResidual> send) {
    // The round's kernels wrote the count before this launch (stream order); an overflowed
    // list holds only `remote.capacity` entries (the overflow word fails the run).
    const unsigned int count = min(*remote.count, remote.capacity);
    const unsigned int stride = gridDim.x * blockDim.x;
    const unsigned int rounds = (count + stride - 1u) / stride;
    for (unsigned int r = 0; r < rounds; ++r) {
        const unsigned int i = r * stride + blockIdx.x * blockDim.x + threadIdx.x;
        VertexResidual p;
        p.vertex = 0;
        p.residual = 0.0f;
        if (i < count) {
            p.vertex = remote.data[i];
            p.residual = atomicExch(ops.residual + p.vertex, 0.0f);
        }
        send.append_warp(p, i < count);
    }
}

extern "C" __global__ void pagerank_split_receive(PageRankOps ops,
                                                  const VertexResidual* received,
                                                  unsigned int count, groute::DeviceWorklist wl,
                                                  AppendBuffer<VertexResidual> send,
                                                  unsigned int* dropped) {
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

// Pull sweep pass 1: pull_take_grid. Launched dependent in the rounds by vertex ranges
// (grid_dependency.cuh).
extern "C" __global__ void pagerank_pull_take(PageRankOps ops, const unsigned long long* offsets,
                                              float* share, groute::DeviceWorklist wl,
                                              float floor) {
    groute::wait_for_prior_grid();
    groute::let_dependents_launch();
    pull_take_grid(ops, offsets, share, floor, wl);
}

// Pull sweep, the cut arcs (after pagerank_pull_take, several devices): push_cut_grid.
extern "C" __global__ void pagerank_pull_cut(PageRankOps ops, const unsigned int* cut_vertices,
                                             const unsigned long long* cut_offsets,
                                             const unsigned int* cut_targets,
                                             unsigned int cut_count, const float* share,
                                             groute::DeviceWorklist wl,
                                             unsigned int hub_capacity,
                                             AppendBuffer<unsigned int> remote_list) {
    const HaloList remote{ops.residual, remote_list};
    const CutLists cut{cut_vertices, cut_offsets, cut_targets, cut_count};
    push_cut_grid(ops, cut, share, wl, hub_list(wl, hub_capacity), remote);
}

// The loads each thread of the `_batched` pull kernels keeps in flight (pull_gather.cuh's
// strided_share_sum): a hub tile is 2048 arcs, 8 per thread of a 256-thread block, all loaded
// at once; the gather's lists are shorter. The gathers through a `taken` bitmap run them
// (their arcs mostly read a bit and no share, so the tails' loads bound them), and so do the
// synchronous sweeps' gathers. The plain kernels keep one load in flight: the host-driven
// rounds' gathers, which read every share, run faster so (crates/groute-pagerank/src/cuda/
// pull_launch.rs chooses).
constexpr unsigned int BATCHED_HUB_TILE_LOADS = 8u;
constexpr unsigned int BATCHED_GATHER_LOADS = 4u;

// Pull sweep, hubs (before pagerank_pull_gather): pull_hub_tiles_grid, one load in flight.
extern "C" __global__ void pagerank_pull_hub_tiles(const unsigned long long* tiles,
                                                   unsigned int tile_count,
                                                   const unsigned int* in_sources,
                                                   const float* share,
                                                   const unsigned int* taken, float* hub_sum) {
    pull_hub_tiles_grid<1>(tiles, tile_count, in_sources, share, taken, hub_sum);
}

// pagerank_pull_hub_tiles with BATCHED_HUB_TILE_LOADS in flight.
extern "C" __global__ void pagerank_pull_hub_tiles_batched(const unsigned long long* tiles,
                                                           unsigned int tile_count,
                                                           const unsigned int* in_sources,
                                                           const float* share,
                                                           const unsigned int* taken,
                                                           float* hub_sum) {
    pull_hub_tiles_grid<BATCHED_HUB_TILE_LOADS>(tiles, tile_count, in_sources, share, taken,
                                                hub_sum);
}

// Pull sweep pass 2: pull_gather_grid with BATCH loads in flight per thread, its vertices
// dealt out over the blocks thread by thread where INTERLEAVE, else warp by warp. One entry
// point per pair, each compiled for its own constants: a runtime flag costs the gather three
// registers, and with them a quarter of its resident threads, whose latency hiding the gather
// lives on. (The device-driven loop's gather, kernels/pagerank/pagerank_fused.cu, gives each
// block consecutive vertices instead: it runs on road networks, whose passes span many times
// its grid, and was slower there dealt warp by warp.)
#define PAGERANK_PULL_GATHER(NAME, BATCH, INTERLEAVE)                                        \
    extern "C" __global__ void NAME(PageRankOps ops, const unsigned long long* in_offsets,   \
                                    const unsigned int* in_sources, const float* share,      \
                                    const unsigned int* taken, groute::DeviceWorklist wl,    \
                                    const unsigned int* hubs, unsigned int hub_count,        \
                                    float* hub_sum, unsigned long long hub_degree) {         \
        pull_gather_grid<BATCH, true>(ops, in_offsets, in_sources, share, taken, wl, hubs,   \
                                      hub_count, hub_sum, hub_degree, INTERLEAVE);           \
    }

PAGERANK_PULL_GATHER(pagerank_pull_gather, 1, false)
PAGERANK_PULL_GATHER(pagerank_pull_gather_interleaved, 1, true)
PAGERANK_PULL_GATHER(pagerank_pull_gather_batched, BATCHED_GATHER_LOADS, false)
PAGERANK_PULL_GATHER(pagerank_pull_gather_batched_interleaved, BATCHED_GATHER_LOADS, true)

// Pull sweep pass 2 by tiles (crates/groute-pagerank/src/gather_tiles.rs, in place of the hub
// tiles and pagerank_pull_gather): gather_tiles_grid (kernels/include/gather_tiles.cuh). The
// launch's dynamic shared memory holds 2 * max_dests words; `claim` two words, 0 at launch
// (and left so). Launched dependent (grid_dependency.cuh).
extern "C" __global__ void __launch_bounds__(1024, 1)
    pagerank_pull_gather_tiles(PageRankOps ops, const unsigned long long* arc_starts,
                               const unsigned int* spans, unsigned int tile_count,
                               const unsigned int* sources, const unsigned short* dests,
                               const float* share, groute::DeviceWorklist wl,
                               unsigned int max_dests, unsigned int* claim) {
    extern __shared__ unsigned int tile_sums[];
    groute::wait_for_prior_grid();
    groute::let_dependents_launch();
    gather_tiles_grid(ops, arc_starts, spans, tile_count, sources, dests, share, wl, max_dests,
                      claim, tile_sums);
}

// Pull sweep, before the hub tiles and the gather where they skip the shares of vertices not
// taken: bit v of taken[v / 32] set where share[v] > 0, for v < n (the bits past n clear).
// One warp per word, grid-stride.
extern "C" __global__ void pagerank_mark_taken(const float* share, unsigned int n,
                                               unsigned int* taken) {
    const unsigned int words = n / 32u + (n % 32u != 0u ? 1u : 0u);
    const unsigned int warps = gridDim.x * (blockDim.x / 32u);
    for (unsigned int w = blockIdx.x * (blockDim.x / 32u) + threadIdx.x / 32u; w < words;
         w += warps) {
        const unsigned int v = w * 32u + groute::lane_id();
        const unsigned int bits = __ballot_sync(0xFFFFFFFFu, v < n && share[v] > 0.0f);
        if (groute::lane_id() == 0u) {
            taken[w] = bits;
        }
    }
}

// Adds `s` to the residual of the head of every arc e, e + step, ... below `end`, with an
// atomic each (a push round's spread of one list over a thread, a warp, a block or the grid).
__device__ __forceinline__ void add_along_arcs(float* residual, const unsigned int* targets,
                                               unsigned long long e, unsigned long long end,
                                               unsigned long long step, float s) {
    for (; e < end; e += step) {
        atomicAdd(residual + targets[e], s);
    }
}

// Lists of at least this many arcs are pushed by the whole grid in a push round.
constexpr unsigned long long PUSH_GRID_DEGREE = 2048;
// Control word counting the hubs pagerank_push_taken listed for pagerank_push_big.
constexpr unsigned int CTRL_PUSH_BIG = 14;

// Push round of the synchronous sweeps, after the take: each of the `count` vertices of
// `items` (the owned vertices the take took: those the last round left above epsilon; an
// item outside the owned range is skipped) adds its share to the residual of every head of
// its out-arcs, owned or not, with an atomic; the residual is full length, so a head of
// another device collects in this device's slot of it (zeroed before the launch), which
// pagerank_absorb on its owner then adds. Lists by the nested load balancing of
// list_claim.cuh, but those of at least PUSH_GRID_DEGREE arcs (a block would take them one
// after the other, a step per blockDim.x arcs) are listed in `big` (counted in
// ctrl[CTRL_PUSH_BIG]; at most the owned arcs over PUSH_GRID_DEGREE of them, the capacity,
// else the overflow word says so) for pagerank_push_big. Nothing else is counted or
// appended: the absorb collects the vertices above epsilon once every share is in.
extern "C" __global__ void pagerank_push_taken(PageRankOps ops,
                                               const unsigned long long* offsets,
                                               const unsigned int* targets, const float* share,
                                               const unsigned int* items, unsigned int count,
                                               unsigned int* big, unsigned int big_capacity,
                                               unsigned int* ctrl) {
    const unsigned int stride = gridDim.x * blockDim.x;
    const unsigned int rounds = (count + stride - 1u) / stride;
    const auto spread = [&](unsigned long long e, unsigned long long end,
                            unsigned long long step, float s) {
        add_along_arcs(ops.residual, targets, e, end, step, s);
    };
    for (unsigned int r = 0; r < rounds; ++r) {
        const unsigned int i = r * stride + blockIdx.x * blockDim.x + threadIdx.x;
        bool have = false;
        unsigned long long begin = 0;
        unsigned long long end = 0;
        float s = 0.0f;
        const unsigned int v = i < count ? items[i] : 0u;
        if (i < count && ops.mine(v)) {
            s = share[v];
            begin = offsets[v];
            end = offsets[v + 1];
            have = s > 0.0f && end > begin;
            if (have && end - begin >= PUSH_GRID_DEGREE) {
                // A hub: listed for pagerank_push_big, which spreads it over the grid.
                const unsigned int slot = atomicAdd(ctrl + CTRL_PUSH_BIG, 1u);
                if (slot < big_capacity) {
                    big[slot] = v;
                } else {
                    atomicMax(ctrl + groute::CTRL_WL_OVERFLOW, slot + 1u);
                }
                have = false;
            }
        }
        groute::claim_block_lists(
            have, begin, end, s,
            [&](unsigned long long bb, unsigned long long be, float bs, unsigned int) {
                spread(bb + threadIdx.x, be, blockDim.x, bs);
            });
        groute::claim_warp_lists(
            have, begin, end, s,
            [&](unsigned long long wb, unsigned long long we, float ws, unsigned int) {
                spread(wb + groute::lane_id(), we, 32u, ws);
            });
        if (have) {
            spread(begin, end, 1u, s);
        }
    }
}

// Push round of the synchronous sweeps, after pagerank_push_taken: the hubs it listed (the
// first ctrl[CTRL_PUSH_BIG] of `big`, those owned), one after the other, each spread over the
// whole grid.
extern "C" __global__ void pagerank_push_big(PageRankOps ops, const unsigned long long* offsets,
                                             const unsigned int* targets, const float* share,
                                             const unsigned int* big, unsigned int big_capacity,
                                             const unsigned int* ctrl) {
    const unsigned int listed = ctrl[CTRL_PUSH_BIG];
    const unsigned int count = listed < big_capacity ? listed : big_capacity;
    const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
    for (unsigned int k = 0; k < count; ++k) {
        const unsigned int v = big[k];
        if (!ops.mine(v)) {
            continue;  // not written by pagerank_push_taken: a stale count
        }
        add_along_arcs(ops.residual, targets, offsets[v] + blockIdx.x * blockDim.x + threadIdx.x,
                       offsets[v + 1], stride, share[v]);
    }
}

// Push round of the synchronous sweeps, after the pushes: every owned vertex adds
// `incoming[v]` (a peer's slots of this device's vertices, copied here; null: none) to its
// residual, and where `collect`, those left above epsilon are appended to the worklist (its
// end counts them: the vertices the next take takes). With several peers, one launch per
// peer, `collect` on the last.
extern "C" __global__ void pagerank_absorb(PageRankOps ops, const float* incoming,
                                           groute::DeviceWorklist wl, unsigned int collect) {
    const WorklistSink sink{wl, wl.ctrl + groute::CTRL_WL_END};
    const OwnedPass pass(ops);
    for (unsigned int r = 0; r < pass.rounds; ++r) {
        const unsigned int i = pass.index(r);
        const unsigned int v = pass.base + i;
        bool above = false;
        if (i < pass.span && v >= ops.owned_begin) {
            float residual = ops.residual[v];
            if (incoming != nullptr) {
                const float add = incoming[v];
                if (add > 0.0f) {
                    residual += add;
                    ops.residual[v] = residual;
                }
            }
            above = collect != 0u && residual > ops.epsilon;
        }
        const unsigned int slot = groute::block_reserve(sink.count, above);
        if (above) {
            sink.put(slot, v);
        }
    }
}

// The boundary exchange's pack: dst[i] = src[index[i]] for i < count.
extern "C" __global__ void pagerank_pack_words(const unsigned int* index, unsigned int count,
                                               const unsigned int* src, unsigned int* dst) {
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += gridDim.x * blockDim.x) {
        dst[i] = src[index[i]];
    }
}

// The boundary exchange's unpack: dst[index[i]] = src[i] for i < count.
extern "C" __global__ void pagerank_unpack_words(const unsigned int* index, unsigned int count,
                                                 const unsigned int* src, unsigned int* dst) {
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += gridDim.x * blockDim.x) {
        dst[index[i]] = src[i];
    }
}
