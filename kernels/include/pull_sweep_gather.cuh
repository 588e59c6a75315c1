// Pull sweep pass 2 of residual-push PageRank, the gather, shared by the host-driven kernels
// (kernels/pagerank/pagerank.cu) and the device-driven loop (kernels/pagerank/pagerank_fused.cu):
// every owned vertex adds its in-neighbours' shares to its residual (pull_gather_grid), and in
// the device-driven loop's chained sweeps also takes at once what it leaves above epsilon
// (ChainTake; gather_take_short where every in-list is short). The take, the cut pass and the
// hub tiles are pagerank_push.cuh's. Grid-stride over gridDim.x blocks; blockDim.x a multiple
// of 32, <= 1024. Self-contained (NVRTC, no toolkit headers).
#pragma once

#include "abi_pagerank.h"
#include "pagerank_push.cuh"

namespace {

// Where a gather takes the residuals it leaves above epsilon at once (the device-driven loop's
// chained sweeps where no device has pull hubs, pagerank_fused.cu): `next` is the share
// array the next sweep's gather reads (null: the gather takes nothing and lists the vertices
// that cross epsilon), `out_offsets` the out-CSR's rows (the out-degrees; on a symmetric graph
// the same rows as the gather's in-CSR), `taken` the counter of the vertices taken.
struct ChainTake {
    float* next;
    const unsigned long long* out_offsets;
    unsigned int* taken;

    // Whether the out-CSR's rows are the gather's in-CSR's `in_offsets` (a symmetric graph),
    // so that an out-degree is its in-list's length.
    __device__ __forceinline__ bool same_rows(const unsigned long long* in_offsets) const {
        return out_offsets == in_offsets;
    }

    // v's out-degree, its in-list being `in_length` long: that length where `same_rows`,
    // else read.
    __device__ __forceinline__ unsigned long long out_degree(unsigned int v, bool same_rows,
                                                             unsigned long long in_length) const {
        return same_rows ? in_length : out_offsets[v + 1u] - out_offsets[v];
    }
};

// The end of a chained gather for owned v, whose residual was `residual` (loaded by the
// caller, early): `sum` added to its residual and, where that is above epsilon, taken at once
// into v's rank, its share per out-arc stored in next[v] for the next sweep's gather (0 where
// not taken: every owned share of `next` is written, so that the next gather never reads one
// of an earlier sweep). True where taken. The rank is read here, where taken only (see
// gather_take_short_rows for why not beside the residual). Plain loads and stores: only this
// thread touches v's residual, rank and share in the pass.
__device__ __forceinline__ bool take_gathered(const PageRankOps& ops, unsigned int v,
                                              float residual, float sum,
                                              unsigned long long out_degree, float* next) {
    const float rho = residual + sum;
    if (!(rho > ops.epsilon)) {
        if (sum > 0.0f) {
            ops.residual[v] = rho;
        }
        next[v] = 0.0f;
        return false;
    }
    ops.residual[v] = 0.0f;
    ops.rank[v - ops.owned_begin] += rho;
    next[v] = ops.share_per_arc(rho, out_degree);
    return true;
}

// In-lists shorter than this are summed by their own thread in every gather (list_claim.cuh
// hands longer ones to a warp): where every owned list is, a chained gather can run
// gather_take_short.
constexpr unsigned int SHORT_LIST_ARCS = groute::PRF_SHORT_LIST_ARCS;
// Arcs of each list whose tails, then shares, gather_take_short loads together.
constexpr unsigned int SHORT_LIST_BATCH = 4;

// A chained gather (ChainTake, `chain.next` not null) over owned vertices whose in-lists are
// all shorter than SHORT_LIST_ARCS (road networks): each thread sums its vertex's list alone,
// as gather_sum would and in the same order, but loads the first SHORT_LIST_BATCH tails of the
// list together, then their shares together, with the vertex's residual loaded beside its
// offsets, so that a vertex costs three round trips to memory instead of one for the offsets
// and two per arc; no block synchronisation but the final count. `rows`: the in-CSR's rows,
// 64-bit (PageRankPull::in_offsets) or 32-bit (PageRankPull::in_offsets32, 4 bytes a vertex
// fewer), widened once loaded. The device-driven kernel is capped at 32 registers a thread
// and spills, so the order of these loads moves its allocation: of five forms measured on
// road grids on one H200 (32- or 64-bit rows, kept 32-bit or widened, the rank loaded beside
// the residual or only where taken), these 32-bit rows, widened, with the rank read where
// taken ran fastest, 3 to 7% faster than 64-bit rows with the rank loaded early, and the
// other three between 4% faster and 14% slower than that. Each block takes consecutive vertices,
// a thread one at a time: two or four at once, their loads interleaved, made road networks'
// runs 1.5 to 1.7 and 2.5 to 3.1 times slower on one H200 (a batch that outgrows the
// registers).
template <typename Offset>
__device__ __forceinline__ void gather_take_short_rows(const PageRankOps& ops,
                                                       const Offset* rows, bool same_rows,
                                                       const unsigned int* in_sources,
                                                       const float* share, ChainTake chain) {
    const unsigned int stride = gridDim.x * blockDim.x;
    const unsigned int base = warp_aligned_begin(ops);
    const unsigned int span = ops.owned_end - base;
    unsigned int taken_here = 0;
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < span; i += stride) {
        const unsigned int v = base + i;
        if (v < ops.owned_begin) {
            continue;
        }
        const unsigned long long begin = rows[v];
        const unsigned long long end = rows[v + 1u];
        const float residual = ops.residual[v];
        unsigned int tail[SHORT_LIST_BATCH];
#pragma unroll
        for (unsigned int k = 0; k < SHORT_LIST_BATCH; ++k) {
            tail[k] = begin + k < end ? in_sources[begin + k] : 0u;
        }
        float sum = 0.0f;
#pragma unroll
        for (unsigned int k = 0; k < SHORT_LIST_BATCH; ++k) {
            sum += begin + k < end ? share[tail[k]] : 0.0f;
        }
        for (unsigned long long e = begin + SHORT_LIST_BATCH; e < end; ++e) {
            sum += share[in_sources[e]];
        }
        const unsigned long long degree = chain.out_degree(v, same_rows, end - begin);
        taken_here += take_gathered(ops, v, residual, sum, degree, chain.next) ? 1u : 0u;
    }
    add_block_count(taken_here, chain.taken);
}

// gather_take_short_rows over `in_offsets32` where not null, else over `in_offsets`.
__device__ __forceinline__ void gather_take_short(const PageRankOps& ops,
                                                  const unsigned long long* in_offsets,
                                                  const unsigned int* in_offsets32,
                                                  const unsigned int* in_sources,
                                                  const float* share, ChainTake chain) {
    const bool same_rows = chain.same_rows(in_offsets);
    if (in_offsets32 != nullptr) {
        gather_take_short_rows(ops, in_offsets32, same_rows, in_sources, share, chain);
        return;
    }
    gather_take_short_rows(ops, in_offsets, same_rows, in_sources, share, chain);
}

// Pull sweep pass 2: the hubs' sums (taken from hub_sum, left 0), then every other owned
// vertex (in-degree below hub_degree) gathers its in-neighbours' shares (those whose `taken`
// bit is set, every share where `taken` is null: pull_gather.cuh), each thread keeping BATCH
// loads in flight. `interleave`: the vertices are dealt out over the blocks thread by thread
// (OwnedPass::first), for uploads in degree order; else warp by warp where BY_WARPS
// (OwnedPass::first_by_warps), else each block given consecutive ones. `chain.next` not null
// (grid-uniform; only without hubs): every vertex's residual above epsilon after its gather is
// taken (take_gathered) and nothing is listed.
template <unsigned int BATCH, bool BY_WARPS = false>
__device__ __forceinline__ void pull_gather_grid(const PageRankOps& ops,
                                                 const unsigned long long* in_offsets,
                                                 const unsigned int* in_sources,
                                                 const float* share,
                                                 const unsigned int* taken,
                                                 const groute::DeviceWorklist& wl,
                                                 const unsigned int* hubs,
                                                 unsigned int hub_count, float* hub_sum,
                                                 unsigned long long hub_degree,
                                                 bool interleave,
                                                 ChainTake chain = ChainTake{}) {
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
    const OwnedPass pass(ops);
    unsigned int taken_here = 0;
    const unsigned int first =
        BY_WARPS && !interleave ? OwnedPass::first_by_warps() : OwnedPass::first(interleave);
    for (unsigned int r = 0; r < pass.rounds; ++r) {
        const unsigned int i = r * pass.stride + first;
        const unsigned int v = pass.base + i;
        const bool owned = i < pass.span && v >= ops.owned_begin;
        unsigned long long begin = 0;
        unsigned long long end = 0;
        if (owned) {
            begin = in_offsets[v];
            end = in_offsets[v + 1];
        }
        const bool active = owned && end - begin < hub_degree;
        const float sum =
            groute::gather_sum<BATCH>(in_sources, share, taken, begin, end, active);
        if (chain.next != nullptr) {
            if (active) {
                const unsigned long long degree =
                    chain.out_degree(v, chain.same_rows(in_offsets), end - begin);
                taken_here +=
                    take_gathered(ops, v, ops.residual[v], sum, degree, chain.next) ? 1u : 0u;
            }
            continue;
        }
        // Most vertices may cross in a sweep: one reservation per block, not per warp.
        const bool crossed = active && add_owned(ops, v, sum);
        const unsigned int slot = groute::block_reserve(sink.count, crossed);
        if (crossed) {
            sink.put(slot, v);
        }
    }
    if (chain.next != nullptr) {
        add_block_count(taken_here, chain.taken);
    }
}

}  // namespace
