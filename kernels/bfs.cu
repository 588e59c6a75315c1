// BFS kernels for the distributed worklist (non-fused mode: one launch per round).
//
// bfs_expand: one round over the worklist range [first, first + count): relaxes every out-arc
//   with atomicMin(level + 1) on the device's full-length level array (the halo filter), then
//   splits each improved vertex: mine -> prepended to the local worklist, remote -> appended
//   to the send buffer as a VertexValue. Adjacency lists are load-balanced at three
//   granularities (nested, as in Groute/Merrill): degree >= blockDim.x -> the whole block,
//   degree >= 32 -> one warp, else the owning thread. Appends are warp-aggregated.
// bfs_split_receive: SplitReceive on the high-priority stream: on_receive on each received
//   VertexValue; keep -> local worklist, pass -> send buffer, drop -> counted for termination.
//
// Self-contained (NVRTC, no toolkit headers). Launch with blockDim.x a multiple of 32, <= 1024.
#include "warp_append.cuh"
#include "worklist.cuh"
#include "split.cuh"

namespace {

struct SendBuffer {
    groute::VertexValue* data;
    unsigned int capacity;
    unsigned int* count;
    unsigned int* overflow;

    __device__ __forceinline__ void append_warp(const groute::VertexValue& p, bool keep) const {
        unsigned int total;
        const unsigned int slot = groute::warp_reserve(count, keep, total);
        if (!keep) {
            return;
        }
        if (slot >= capacity) {
            atomicMax(overflow, slot + 1u);
            return;
        }
        data[slot] = p;
    }
};

// Relaxes arc e of a vertex at `level` and splits the head if it improved (warp-aggregated).
__device__ __forceinline__ void relax_and_split(const groute::MinSplitOps& ops,
                                                const unsigned int* targets, unsigned long long e,
                                                bool active, unsigned int level,
                                                const groute::DeviceWorklist& wl,
                                                const SendBuffer& send) {
    bool improved = false;
    unsigned int u = 0;
    if (active) {
        u = targets[e];
        improved = atomicMin(ops.values + u, level + 1u) > level + 1u;
    }
    const bool local = improved && ops.mine(u);
    const bool remote = improved && !ops.mine(u);
    wl.prepend_warp(u, local);
    groute::VertexValue p;
    p.vertex = u;
    p.value = level + 1u;
    send.append_warp(p, remote);
}

}  // namespace

extern "C" __global__ void bfs_expand(groute::MinSplitOps ops, const unsigned long long* offsets,
                                      const unsigned int* targets, groute::DeviceWorklist wl,
                                      unsigned int first, unsigned int count,
                                      groute::VertexValue* send_data, unsigned int send_capacity,
                                      unsigned int* send_count, unsigned int* send_overflow) {
    const SendBuffer send{send_data, send_capacity, send_count, send_overflow};
    __shared__ unsigned int block_owner;
    __shared__ unsigned int block_vertex;
    __shared__ unsigned int warp_vertex[32];
    const unsigned int lane = groute::lane_id();
    const unsigned int warp = threadIdx.x / 32u;
    const unsigned int stride = gridDim.x * blockDim.x;
    // Grid-stride over the items, with a trip count uniform across the block.
    const unsigned int rounds = (count + stride - 1u) / stride;
    for (unsigned int r = 0; r < rounds; ++r) {
        const unsigned int i = r * stride + blockIdx.x * blockDim.x + threadIdx.x;
        bool have = i < count;
        unsigned int v = 0;
        unsigned long long begin = 0;
        unsigned long long end = 0;
        unsigned int level = 0xFFFFFFFFu;
        if (have) {
            v = wl.at(first + i);
            level = ops.values[v];
            begin = offsets[v];
            end = offsets[v + 1];
            have = level != 0xFFFFFFFFu;
        }
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
                block_vertex = v;
                have = false;
            }
            __syncthreads();
            const unsigned int bv = block_vertex;
            const unsigned int bl = ops.values[bv];
            const unsigned long long bb = offsets[bv];
            const unsigned long long be = offsets[bv + 1];
            for (unsigned long long base = bb; base < be; base += blockDim.x) {
                const unsigned long long e = base + threadIdx.x;
                relax_and_split(ops, targets, e, e < be, bl, wl, send);
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
                warp_vertex[warp] = v;
                have = false;
            }
            __syncwarp();
            const unsigned int wv = warp_vertex[warp];
            const unsigned int wlvl = ops.values[wv];
            const unsigned long long wb = offsets[wv];
            const unsigned long long we = offsets[wv + 1];
            for (unsigned long long base = wb; base < we; base += 32u) {
                const unsigned long long e = base + lane;
                relax_and_split(ops, targets, e, e < we, wlvl, wl, send);
            }
            __syncwarp();
        }
        // (3) Thread granularity: the remaining low-degree lists, lanes in lockstep.
        unsigned long long e = begin;
        while (__any_sync(0xFFFFFFFFu, have && e < end)) {
            const bool active = have && e < end;
            relax_and_split(ops, targets, e, active, level, wl, send);
            ++e;
        }
    }
}

extern "C" __global__ void bfs_split_receive(groute::MinSplitOps ops,
                                             const groute::VertexValue* received,
                                             unsigned int count, groute::DeviceWorklist wl,
                                             groute::VertexValue* send_data,
                                             unsigned int send_capacity,
                                             unsigned int* send_count,
                                             unsigned int* send_overflow,
                                             unsigned int* dropped) {
    const SendBuffer send{send_data, send_capacity, send_count, send_overflow};
    const unsigned int stride = gridDim.x * blockDim.x;
    const unsigned int rounds = (count + stride - 1u) / stride;
    for (unsigned int r = 0; r < rounds; ++r) {
        const unsigned int i = r * stride + blockIdx.x * blockDim.x + threadIdx.x;
        unsigned int flags = groute::SF_DROP;
        groute::VertexValue p;
        p.vertex = 0;
        p.value = 0;
        if (i < count) {
            p = received[i];
            flags = ops.on_receive(p);
        }
        wl.append_warp(ops.unpack(p), (flags & groute::SF_KEEP) != 0);
        send.append_warp(p, (flags & groute::SF_PASS) != 0);
        const unsigned int ballot = __ballot_sync(0xFFFFFFFFu, i < count && flags == groute::SF_DROP);
        if (groute::lane_id() == 0 && ballot != 0) {
            atomicAdd(dropped, static_cast<unsigned int>(__popc(ballot)));
        }
    }
}
