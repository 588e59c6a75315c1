// The tiled gather of PageRank's rounds by vertex ranges (crates/groute-pagerank/src/
// gather_tiles.rs builds the tiles; pagerank_pull_gather_tiles in kernels/pagerank/pagerank.cu
// is the entry point).
//
// Tile t's destinations are the vertices spans[2 t] .. spans[2 t] + count, count the low 31
// bits of spans[2 t + 1] (at most `max_dests`); its arcs are arc_starts[t] .. arc_starts[t + 1]
// of `sources` and `dests` (each a source and its destination's offset in the tile). A tile
// comes in one of two orders, chosen by the host (TILE_BY_DESTINATION, bit 31 of the count):
//   by source: the arcs of all its destinations merged by source, so neighbouring threads read
//     neighbouring shares; each arc adds its share to its destination's sum in shared memory
//     with an atomic;
//   by destination: each destination's arcs together (its in-list), for tiles of few
//     destinations of many arcs each (a vertex split over tiles of its own has one): added by
//     source their atomics would mostly hit the same word, serialised. Each thread sums the run
//     of arcs of one destination in a register and adds it to shared memory when the
//     destination changes, one atomic per run.
// The sums are fixed-point numbers of 32 integer and 32 fraction bits kept in two words
// (`max_dests` low words, then as many high words: the launch's dynamic shared memory) added
// with 32-bit integer atomics, which run natively (a float or 64-bit atomic on shared memory
// is a compare-and-swap loop on sm_90); a share rounds to a multiple of 2^-32, and integer
// addition makes a sum independent of the order of its adds. Then each destination adds its
// sum to its residual with an atomic (a vertex of several tiles gets an add from each) and is
// appended to the worklist where that add took it past epsilon (flush_tile: a tile holds at
// most 32 blockDim.x destinations).
//
// The blocks claim the tiles from a counter (claim[0]), so they are summed in their order,
// which the host makes largest first: the short ones fill the end. The last block to finish
// (claim[1] counts them) sets both words back to 0 for the next launch.
// Self-contained (NVRTC, no toolkit headers). blockDim.x a multiple of 32, <= 1024.
#pragma once

#include "block_count.cuh"
#include "pagerank_push.cuh"

namespace {

// Bit 31 of a tile's destination count: its arcs are ordered by destination.
constexpr unsigned int TILE_BY_DESTINATION = 0x80000000u;
// Arcs each thread loads before it reads their shares.
constexpr unsigned int TILE_LOADS = 8u;
// Destinations whose residual adds each thread of a tile's flush keeps in flight together
// (divides 32: a thread's destinations of a tile are bits of one word).
constexpr unsigned int FLUSH_ADDS = 8u;

// A share in the tiles' fixed point (a multiple of 2^-32, rounded to the nearest).
__device__ __forceinline__ unsigned long long tile_fixed(float share) {
    return __float2ull_rn(share * 0x1p32f);
}

// A tile's sums in shared memory: low and high words of each destination's fixed-point sum.
struct TileSums {
    unsigned int* low;
    unsigned int* high;

    __device__ __forceinline__ void add(unsigned int d, unsigned long long q) const {
        const unsigned int q_low = static_cast<unsigned int>(q);
        const unsigned int old = atomicAdd(low + d, q_low);
        const unsigned int carry = old + q_low < old ? 1u : 0u;
        const unsigned int h = static_cast<unsigned int>(q >> 32) + carry;
        if (h != 0u) {
            atomicAdd(high + d, h);
        }
    }

    __device__ __forceinline__ unsigned long long sum(unsigned int d) const {
        return static_cast<unsigned long long>(high[d]) << 32 | low[d];
    }
};

// Calls consume(destination offset, fixed-point share) for this thread's arcs of [a, end),
// a, a + step, ...: TILE_LOADS arcs at a time (streamed: read once), the next ones loaded while
// the current ones' shares are read and consumed.
template <typename Consume>
__device__ __forceinline__ void tile_arcs(const unsigned int* sources,
                                          const unsigned short* dests, const float* share,
                                          unsigned long long a, unsigned long long end,
                                          unsigned long long step, Consume& consume) {
    unsigned int u[TILE_LOADS];
    unsigned int d[TILE_LOADS];
    bool full = a + (TILE_LOADS - 1u) * step < end;
    if (full) {
#pragma unroll
        for (unsigned int k = 0; k < TILE_LOADS; ++k) {
            u[k] = __ldcs(sources + a + k * step);
            d[k] = __ldcs(dests + a + k * step);
        }
    }
    while (full) {
        const unsigned long long next = a + TILE_LOADS * step;
        const bool next_full = next + (TILE_LOADS - 1u) * step < end;
        float s[TILE_LOADS];
#pragma unroll
        for (unsigned int k = 0; k < TILE_LOADS; ++k) {
            s[k] = share[u[k]];
        }
        unsigned int nu[TILE_LOADS];
        unsigned int nd[TILE_LOADS];
#pragma unroll
        for (unsigned int k = 0; k < TILE_LOADS; ++k) {
            nu[k] = next_full ? __ldcs(sources + next + k * step) : 0u;
            nd[k] = next_full ? __ldcs(dests + next + k * step) : 0u;
        }
#pragma unroll
        for (unsigned int k = 0; k < TILE_LOADS; ++k) {
            consume(d[k], tile_fixed(s[k]));
            u[k] = nu[k];
            d[k] = nd[k];
        }
        a = next;
        full = next_full;
    }
    for (; a < end; a += step) {
        consume(dests[a], tile_fixed(share[sources[a]]));
    }
}

// Adds each arc's share to its destination's sum (a tile by source).
struct AddEach {
    TileSums sums;

    __device__ __forceinline__ void operator()(unsigned int d, unsigned long long q) {
        sums.add(d, q);
    }
};

// Sums runs of arcs of one destination in a register (a tile by destination); flush() adds
// the last run.
struct AddRuns {
    TileSums sums;
    unsigned int current;
    unsigned long long run;

    __device__ __forceinline__ void operator()(unsigned int d, unsigned long long q) {
        if (d != current) {
            flush();
            current = d;
        }
        run += q;
    }

    __device__ __forceinline__ void flush() {
        if (run != 0u) {
            sums.add(current, run);
            run = 0u;
        }
    }
};

// Claims the next tile for the block (block-uniform result; every thread calls it, and reads
// the result before the block's next barrier).
__device__ __forceinline__ unsigned int claim_tile(unsigned int* claim) {
    __shared__ unsigned int claimed;
    if (threadIdx.x == 0u) {
        claimed = atomicAdd(claim, 1u);
    }
    __syncthreads();
    return claimed;
}

// Marks the block done; the last one sets the claim counter and itself back to 0. A block
// counts itself only once its failed claim has returned, so when the last one does, no block
// touches the counter again. The launches of one range's tiles follow each other on one stream.
__device__ __forceinline__ void finish_claims(unsigned int* claim) {
    if (threadIdx.x == 0u && atomicAdd(claim + 1, 1u) == gridDim.x - 1u) {
        atomicExch(claim, 0u);
        atomicExch(claim + 1, 0u);
    }
}

// Adds a tile's sums to its destinations' residuals and appends those that crossed epsilon.
// Thread t takes destinations t, t + blockDim.x, ... (at most 32: count <= 32 blockDim.x),
// FLUSH_ADDS of them at a time with their atomics in flight together, and notes the ones that
// crossed in a bit mask; the block then reserves every crossing's worklist slot with one
// atomic (where a pass per blockDim.x destinations waits for its atomics and reserves its
// own slots, a tile pays two global round trips and three barriers a pass). Ends with a
// barrier, after which no thread reads the sums: the next tile may zero them.
__device__ __forceinline__ void flush_tile(const PageRankOps& ops, const TileSums& sums,
                                           unsigned int first, unsigned int count,
                                           const WorklistSink& sink) {
    unsigned int crossed = 0u;  // bit p: destination threadIdx.x + p * blockDim.x crossed
    for (unsigned int p0 = 0; p0 * blockDim.x < count; p0 += FLUSH_ADDS) {
        float add[FLUSH_ADDS];
        float old[FLUSH_ADDS];
#pragma unroll
        for (unsigned int k = 0; k < FLUSH_ADDS; ++k) {
            const unsigned int i = (p0 + k) * blockDim.x + threadIdx.x;
            add[k] = 0.0f;
            old[k] = 0.0f;
            if (i < count) {
                const unsigned long long q = sums.sum(i);
                if (q != 0u) {
                    add[k] = static_cast<float>(static_cast<double>(q) * 0x1p-32);
                    old[k] = atomicAdd(ops.residual + first + i, add[k]);
                }
            }
        }
#pragma unroll
        for (unsigned int k = 0; k < FLUSH_ADDS; ++k) {
            const bool over = add[k] != 0.0f && old[k] <= ops.epsilon &&
                              old[k] + add[k] > ops.epsilon;
            crossed |= (over ? 1u : 0u) << (p0 + k);
        }
    }
    unsigned int warp_crossed;
    const unsigned int prefix =
        groute::warp_prefix_n<6>(static_cast<unsigned int>(__popc(crossed)), warp_crossed);
    unsigned int slot = groute::block_reserve_warps(sink.count, warp_crossed) + prefix;
    while (crossed != 0u) {
        const unsigned int p = static_cast<unsigned int>(__ffs(crossed)) - 1u;
        crossed &= crossed - 1u;
        sink.put(slot++, first + p * blockDim.x + threadIdx.x);
    }
}

__device__ __forceinline__ void gather_tiles_grid(
    const PageRankOps& ops, const unsigned long long* arc_starts, const unsigned int* spans,
    unsigned int tile_count, const unsigned int* sources, const unsigned short* dests,
    const float* share, const groute::DeviceWorklist& wl, unsigned int max_dests,
    unsigned int* claim, unsigned int* tile_sums) {
    const TileSums sums{tile_sums, tile_sums + max_dests};
    const WorklistSink sink{wl, wl.ctrl + groute::CTRL_WL_END};
    for (;;) {
        const unsigned int t = claim_tile(claim);
        if (t >= tile_count) {
            break;  // block-uniform
        }
        const unsigned int first = spans[2u * t];
        const unsigned int word = spans[2u * t + 1u];
        const unsigned int count = word & ~TILE_BY_DESTINATION;
        for (unsigned int i = threadIdx.x; i < count; i += blockDim.x) {
            sums.low[i] = 0u;
            sums.high[i] = 0u;
        }
        __syncthreads();
        const unsigned long long a = arc_starts[t] + threadIdx.x;
        const unsigned long long end = arc_starts[t + 1u];
        if ((word & TILE_BY_DESTINATION) != 0u) {
            AddRuns runs{sums, 0u, 0u};
            tile_arcs(sources, dests, share, a, end, blockDim.x, runs);
            runs.flush();
        } else {
            AddEach each{sums};
            tile_arcs(sources, dests, share, a, end, blockDim.x, each);
        }
        __syncthreads();
        flush_tile(ops, sums, first, count, sink);
    }
    finish_claims(claim);
}

}  // namespace
