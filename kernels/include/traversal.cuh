// The generic min-label traversal (BFS, SSSP) on the device, non-fused mode: one expand
// launch per round and one split launch per batch of received packets. Mirror of
// crates/groute-worklist/src/traversal.rs; an algorithm instantiates the two templates with
// its Relax functor in its own .cu file (kernels/bfs.cu).
//
// traversal_expand<Relax, WEIGHTED>: consumes worklist positions [first, first + count);
//   relaxes every out-arc of each item (plain load first, atomicMin only when it improves,
//   on the full-length value array: the halo filter); an improved head is appended to the
//   local worklist when owned, else packed as a VertexValue into the outgoing buffer.
//   Adjacency lists are load-balanced at three granularities (Merrill-style, nested):
//   degree >= blockDim.x -> the whole block, >= 32 -> one warp, else the item's thread.
//   Appends are warp-aggregated (one atomic per warp per destination).
//   Hubs (degree >= HUB_MIN_DEGREE) are not expanded here: the item's thread records the hub
//   (vertex, first tile) in the hub list after the control block (one 64-bit atomicAdd on
//   ctrl[CTRL_HUB_COUNT..+2] that returns both the slot and the prefix of the hub tiles), and
//   the launch that follows, traversal_expand_hubs, spreads the hubs' arcs over the whole grid
//   in tiles of HUB_TILE arcs. A hub that finds the list full is expanded by its block here.
// traversal_expand_hubs<Relax, WEIGHTED>: block b relaxes hub tiles b, b + gridDim.x, ...;
//   the tile's hub is found by a 32-ary warp search over the (sorted) tile prefixes. The
//   host resets the hub counter before each expand launch.
// traversal_split_receive: SplitReceive (on_receive of split.cuh) on a received packet.
//
// Launch with blockDim.x a multiple of 32, at most 1024. Self-contained (NVRTC).
#pragma once

#include "split.cuh"
#include "warp_append.cuh"
#include "worklist.cuh"

namespace groute {

struct BfsRelax {
    __device__ __forceinline__ static unsigned int relax(unsigned int value, unsigned int) {
        return value == 0xFFFFFFFEu ? value : value + 1u;  // saturate below UNREACHED
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
// ctrl + CTRL_WORDS.
enum : unsigned int {
    CTRL_HUB_COUNT = 4,
    CTRL_HUB_CAP = 6,
    HUB_MIN_DEGREE = 2048,
    HUB_TILE = 2048,
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
    unsigned int* hubs = ctrl + CTRL_WORDS;
    hubs[2u * slot] = v;
    hubs[2u * slot + 1u] = static_cast<unsigned int>(old >> 32);
    return true;
}

template <typename Relax, bool WEIGHTED>
__device__ __forceinline__ void relax_arc(const MinSplitOps& ops, const unsigned int* targets,
                                          const unsigned int* weights, unsigned long long e,
                                          bool active, unsigned int value,
                                          const DeviceWorklist& wl, const SendBuffer& send) {
    bool improved = false;
    unsigned int u = 0;
    unsigned int cand = 0;
    if (active) {
        u = targets[e];
        cand = Relax::relax(value, WEIGHTED ? weights[e] : 1u);
        // Plain load first: most heads are already as good (no atomic then).
        if (ops.values[u] > cand) {
            improved = atomicMin(ops.values + u, cand) > cand;
        }
    }
    const bool mine = ops.mine(u);
    wl.append_warp(u, improved && mine);
    VertexValue p;
    p.vertex = u;
    p.value = cand;
    send.append_warp(p, improved && !mine);
}

template <typename Relax, bool WEIGHTED>
__device__ void traversal_expand(const MinSplitOps ops, const unsigned long long* offsets,
                                 const unsigned int* targets, const unsigned int* weights,
                                 const DeviceWorklist wl, unsigned int count,
                                 const SendBuffer send) {
    __shared__ unsigned int block_owner;
    __shared__ unsigned int block_vertex;
    __shared__ unsigned int warp_vertex[32];
    const unsigned int lane = lane_id();
    const unsigned int warp = threadIdx.x / 32u;
    const unsigned int stride = gridDim.x * blockDim.x;
    // Grid-stride over the items, with a trip count uniform across the grid. Consecutive
    // items go to different blocks (item r * stride + t * gridDim.x + b on thread t of block
    // b): worklists list vertices in discovery order, and on power-law graphs the heavy ones
    // come together; interleaving spreads them over the blocks instead of serialising them in
    // one block's block-granularity loop.
    const unsigned int rounds = (count + stride - 1u) / stride;
    for (unsigned int r = 0; r < rounds; ++r) {
        const unsigned int i = r * stride + threadIdx.x * gridDim.x + blockIdx.x;
        bool have = i < count;
        unsigned int v = 0;
        unsigned long long begin = 0;
        unsigned long long end = 0;
        unsigned int value = 0xFFFFFFFFu;
        if (have) {
            v = wl.at(wl.first + i);
            value = ops.values[v];
            begin = offsets[v];
            end = offsets[v + 1];
            have = value != 0xFFFFFFFFu && end > begin;
            if (have && end - begin >= HUB_MIN_DEGREE && record_hub(wl.ctrl, v, end - begin)) {
                have = false;
            }
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
            const unsigned int owner = block_owner;
            if (owner == 0xFFFFFFFFu) {
                break;
            }
            if (owner == threadIdx.x) {
                block_vertex = v;
                have = false;
            }
            __syncthreads();
            const unsigned int bv = block_vertex;
            const unsigned int bval = ops.values[bv];
            const unsigned long long bb = offsets[bv];
            const unsigned long long be = offsets[bv + 1];
            for (unsigned long long base = bb; base < be; base += blockDim.x) {
                const unsigned long long e = base + threadIdx.x;
                relax_arc<Relax, WEIGHTED>(ops, targets, weights, e, e < be, bval, wl, send);
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
            const unsigned int wval = ops.values[wv];
            const unsigned long long wb = offsets[wv];
            const unsigned long long we = offsets[wv + 1];
            for (unsigned long long base = wb; base < we; base += 32u) {
                const unsigned long long e = base + lane;
                relax_arc<Relax, WEIGHTED>(ops, targets, weights, e, e < we, wval, wl, send);
            }
            __syncwarp();
        }
        // (3) Thread granularity: the remaining low-degree lists, lanes in lockstep.
        unsigned long long e = begin;
        while (__any_sync(0xFFFFFFFFu, have && e < end)) {
            const bool active = have && e < end;
            relax_arc<Relax, WEIGHTED>(ops, targets, weights, e, active, value, wl, send);
            ++e;
        }
    }
}

template <typename Relax, bool WEIGHTED>
__device__ void traversal_expand_hubs(const MinSplitOps ops, const unsigned long long* offsets,
                                      const unsigned int* targets, const unsigned int* weights,
                                      const DeviceWorklist wl, const SendBuffer send) {
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
    const unsigned int* hubs = wl.ctrl + CTRL_WORDS;
    const unsigned int lane = lane_id();
    for (unsigned int g = blockIdx.x; g < tiles; g += gridDim.x) {
        if (threadIdx.x < 32u) {
            // Largest slot whose first tile is <= g (slot 0's is 0): 32-ary search.
            unsigned int lo = 0;
            unsigned int hi = n;
            while (hi - lo > 1u) {
                const unsigned int step = (hi - lo + 31u) / 32u;
                const unsigned int idx = lo + lane * step;
                const bool le = idx < hi && hubs[2u * idx + 1u] <= g;
                const unsigned int ballot = __ballot_sync(0xFFFFFFFFu, le);
                const unsigned int last = 31u - __clz(ballot);
                const unsigned int nlo = lo + last * step;
                hi = nlo + step < hi ? nlo + step : hi;
                lo = nlo;
            }
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
                tile_value = ops.values[v];
            }
        }
        __syncthreads();
        const unsigned int val = tile_value;
        const unsigned long long tb = tile_begin;
        const unsigned long long te = tile_end;
        for (unsigned long long base = tb; base < te; base += blockDim.x) {
            const unsigned long long e = base + threadIdx.x;
            relax_arc<Relax, WEIGHTED>(ops, targets, weights, e, e < te, val, wl, send);
        }
        __syncthreads();
    }
}

__device__ __forceinline__ void traversal_split_receive(const MinSplitOps ops,
                                                        const VertexValue* received,
                                                        unsigned int count,
                                                        const DeviceWorklist wl,
                                                        const SendBuffer send) {
    const unsigned int stride = gridDim.x * blockDim.x;
    const unsigned int rounds = (count + stride - 1u) / stride;
    for (unsigned int r = 0; r < rounds; ++r) {
        const unsigned int i = r * stride + blockIdx.x * blockDim.x + threadIdx.x;
        unsigned int flags = SF_DROP;
        VertexValue p;
        p.vertex = 0;
        p.value = 0;
        if (i < count) {
            p = received[i];
            flags = ops.on_receive(p);
        }
        wl.append_warp(ops.unpack(p), (flags & SF_KEEP) != 0);
        send.append_warp(p, (flags & SF_PASS) != 0);
    }
}

}  // namespace groute

// The extern "C" entry points of one algorithm: NAME##_expand, NAME##_expand_hubs (same
// parameters, `count` unused; launched right after NAME##_expand) and NAME##_split_receive.
// Parameters (mirrored by the typed wrappers in crates/groute-worklist/src/traversal/cuda.rs):
//   expand(values, offsets, targets, weights, wl_data, wl_mask, first, count, ctrl,
//          send_data, send_capacity, send_base, owned_begin, owned_end)
//   split_receive(values, received, count, wl_data, wl_mask, first, ctrl,
//                 send_data, send_capacity, send_base, owned_begin, owned_end)
#define GROUTE_TRAVERSAL_KERNELS(NAME, RELAX, WEIGHTED)                                        \
    extern "C" __global__ void NAME##_expand(                                                  \
        unsigned int* values, const unsigned long long* offsets, const unsigned int* targets,  \
        const unsigned int* weights, unsigned int* wl_data, unsigned int wl_mask,              \
        unsigned int first, unsigned int count, unsigned int* ctrl,                            \
        groute::VertexValue* send_data, unsigned int send_capacity, unsigned int send_base,    \
        unsigned int owned_begin, unsigned int owned_end) {                                    \
        const groute::MinSplitOps ops{owned_begin, owned_end, values};                         \
        const groute::DeviceWorklist wl{wl_data, wl_mask, first, ctrl};                        \
        const groute::SendBuffer send{send_data, send_capacity, send_base, ctrl};              \
        groute::traversal_expand<RELAX, WEIGHTED>(ops, offsets, targets, weights, wl, count,   \
                                                  send);                                       \
    }                                                                                          \
    extern "C" __global__ void NAME##_expand_hubs(                                             \
        unsigned int* values, const unsigned long long* offsets, const unsigned int* targets,  \
        const unsigned int* weights, unsigned int* wl_data, unsigned int wl_mask,              \
        unsigned int first, unsigned int, unsigned int* ctrl, groute::VertexValue* send_data,  \
        unsigned int send_capacity, unsigned int send_base, unsigned int owned_begin,          \
        unsigned int owned_end) {                                                              \
        const groute::MinSplitOps ops{owned_begin, owned_end, values};                         \
        const groute::DeviceWorklist wl{wl_data, wl_mask, first, ctrl};                       \
        const groute::SendBuffer send{send_data, send_capacity, send_base, ctrl};              \
        groute::traversal_expand_hubs<RELAX, WEIGHTED>(ops, offsets, targets, weights, wl,     \
                                                       send);                                  \
    }                                                                                          \
    extern "C" __global__ void NAME##_split_receive(                                           \
        unsigned int* values, const groute::VertexValue* received, unsigned int count,         \
        unsigned int* wl_data, unsigned int wl_mask, unsigned int first, unsigned int* ctrl,   \
        groute::VertexValue* send_data, unsigned int send_capacity, unsigned int send_base,    \
        unsigned int owned_begin, unsigned int owned_end) {                                    \
        const groute::MinSplitOps ops{owned_begin, owned_end, values};                         \
        const groute::DeviceWorklist wl{wl_data, wl_mask, first, ctrl};                        \
        const groute::SendBuffer send{send_data, send_capacity, send_base, ctrl};              \
        groute::traversal_split_receive(ops, received, count, wl, send);                       \
    }
