// Residual-push PageRank kernels for the distributed worklist (non-fused mode: one launch per
// round). The device mirror of crates/groute-pagerank/src/host.rs and split.rs.
//
// State per device: `residual` is full length (the residual of owned vertices; for the
// others, the halo accumulation not yet sent), `rank` covers the owned range only.
//
// pagerank_sweep:   the first round, over the owned range [owned_begin, owned_end) as a range
//                   (no worklist of every vertex).
// pagerank_expand:  a round over the worklist range [first, first + count).
//   Both push each vertex v: rho = atomicExch(residual[v], 0); rank[v] += rho; each out-arc
//   v -> w gets alpha * rho / outdeg(v) with atomicAdd(float*). An owned w whose residual
//   crossed epsilon (old <= eps < old + share) is appended to the local worklist; a remote w
//   whose halo slot was empty (old == 0) is appended to the remote list (one entry per remote
//   vertex per round). Adjacency lists are load-balanced as in bfs.cu: degree >= blockDim.x
//   -> the whole block, >= 32 -> one warp, else the owning thread. Appends are warp-aggregated.
// pagerank_pack_remote: merge before send: for each vertex of the remote list, takes its
//   halo accumulation (atomicExch with 0) into a VertexResidual of the send buffer.
// pagerank_split_receive: SplitReceive: an owner adds the residual and keeps the vertex if it
//   crossed epsilon (else drops it: the mass waits in the residual); a non-owner passes it.
//
// Overflow of any buffer records the size needed in `*overflow` and writes nothing; the host
// checks it after the kernel and fails the run naming the setting. Nothing is lost silently.
// Self-contained (NVRTC, no toolkit headers). Launch with blockDim.x a multiple of 32, <= 1024.
#include "warp_append.cuh"
#include "worklist.cuh"
#include "split.cuh"

namespace {

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

// A bounded array with a warp-aggregated append and an overflow word.
template <typename T>
struct AppendBuffer {
    T* data;
    unsigned int capacity;
    unsigned int* count;
    unsigned int* overflow;

    __device__ __forceinline__ void append_warp(const T& x, bool keep) const {
        unsigned int total;
        const unsigned int slot = groute::warp_reserve(count, keep, total);
        if (!keep) {
            return;
        }
        if (slot >= capacity) {
            atomicMax(overflow, slot + 1u);
            return;
        }
        data[slot] = x;
    }
};

// Takes v's residual into its rank; returns the share per out-arc (0: nothing to push).
__device__ __forceinline__ float take_and_share(const PageRankOps& ops, unsigned int v,
                                                unsigned long long begin,
                                                unsigned long long end) {
    if (!ops.mine(v)) {
        return 0.0f;
    }
    const float rho = atomicExch(ops.residual + v, 0.0f);
    if (!(rho > 0.0f)) {
        return 0.0f;
    }
    atomicAdd(ops.rank + (v - ops.owned_begin), rho);
    if (end == begin) {
        return 0.0f;  // dangling: its mass leaves the system (unnormalised PageRank)
    }
    return ops.alpha * rho / static_cast<float>(end - begin);
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
        const float old = atomicAdd(ops.residual + w, share);
        if (ops.mine(w)) {
            local = old <= ops.epsilon && old + share > ops.epsilon;
        } else {
            far = old == 0.0f;
        }
    }
    wl.append_warp(w, local);
    remote.append_warp(w, far);
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

template <typename Items>
__device__ __forceinline__ void push_round(const PageRankOps& ops,
                                           const unsigned long long* offsets,
                                           const unsigned int* targets, const Items& items,
                                           unsigned int count, const groute::DeviceWorklist& wl,
                                           const AppendBuffer<unsigned int>& remote) {
    __shared__ unsigned int block_owner;
    __shared__ unsigned long long block_begin;
    __shared__ unsigned long long block_end;
    __shared__ float block_share;
    __shared__ unsigned long long warp_begin[32];
    __shared__ unsigned long long warp_end[32];
    __shared__ float warp_share[32];
    const unsigned int lane = groute::lane_id();
    const unsigned int warp = threadIdx.x / 32u;
    const unsigned int stride = gridDim.x * blockDim.x;
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
            share = take_and_share(ops, v, begin, end);
        }
        bool have = share > 0.0f;
        // (1) Block granularity: high-degree lists, one at a time, by the whole block.
        while (true) {
            if (threadIdx.x == 0) {
                block_owner = 0xFFFFFFFFu;
            }
            __syncthreads();
            if (have && end - begin >= blockDim.x) {
                block_owner = threadIdx.x;  // any claimant wins
            }
            __syncthreads();
            if (block_owner == 0xFFFFFFFFu) {
                break;
            }
            if (block_owner == threadIdx.x) {
                block_begin = begin;
                block_end = end;
                block_share = share;
                have = false;
            }
            __syncthreads();
            const unsigned long long bb = block_begin;
            const unsigned long long be = block_end;
            const float bs = block_share;
            for (unsigned long long base = bb; base < be; base += blockDim.x) {
                const unsigned long long e = base + threadIdx.x;
                push_arc(ops, targets, e, e < be, bs, wl, remote);
            }
            __syncthreads();
        }
        // (2) Warp granularity: medium-degree lists, by one warp each.
        while (true) {
            const bool claim = have && end - begin >= 32u;
            const unsigned int ballot = __ballot_sync(0xFFFFFFFFu, claim);
            if (ballot == 0) {
                break;
            }
            const unsigned int leader = __ffs(ballot) - 1u;
            if (lane == leader) {
                warp_begin[warp] = begin;
                warp_end[warp] = end;
                warp_share[warp] = share;
                have = false;
            }
            __syncwarp();
            const unsigned long long wb = warp_begin[warp];
            const unsigned long long we = warp_end[warp];
            const float ws = warp_share[warp];
            for (unsigned long long base = wb; base < we; base += 32u) {
                const unsigned long long e = base + lane;
                push_arc(ops, targets, e, e < we, ws, wl, remote);
            }
            __syncwarp();
        }
        // (3) Thread granularity: the remaining low-degree lists, lanes in lockstep.
        unsigned long long e = begin;
        while (__any_sync(0xFFFFFFFFu, have && e < end)) {
            const bool active = have && e < end;
            push_arc(ops, targets, e, active, share, wl, remote);
            ++e;
        }
    }
}

}  // namespace

extern "C" __global__ void pagerank_sweep(PageRankOps ops, const unsigned long long* offsets,
                                          const unsigned int* targets, groute::DeviceWorklist wl,
                                          unsigned int* remote_data, unsigned int remote_capacity,
                                          unsigned int* remote_count,
                                          unsigned int* remote_overflow) {
    const AppendBuffer<unsigned int> remote{remote_data, remote_capacity, remote_count,
                                            remote_overflow};
    const RangeItems items{ops.owned_begin};
    push_round(ops, offsets, targets, items, ops.owned_end - ops.owned_begin, wl, remote);
}

extern "C" __global__ void pagerank_expand(PageRankOps ops, const unsigned long long* offsets,
                                           const unsigned int* targets,
                                           groute::DeviceWorklist wl, unsigned int first,
                                           unsigned int count, unsigned int* remote_data,
                                           unsigned int remote_capacity,
                                           unsigned int* remote_count,
                                           unsigned int* remote_overflow) {
    const AppendBuffer<unsigned int> remote{remote_data, remote_capacity, remote_count,
                                            remote_overflow};
    const WorklistItems items{wl, first};
    push_round(ops, offsets, targets, items, count, wl, remote);
}

extern "C" __global__ void pagerank_pack_remote(PageRankOps ops, const unsigned int* remote,
                                                unsigned int count, VertexResidual* send_data,
                                                unsigned int send_capacity,
                                                unsigned int* send_count,
                                                unsigned int* send_overflow) {
    const AppendBuffer<VertexResidual> send{send_data, send_capacity, send_count, send_overflow};
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
