// Words of a bitmap of a level's vertices (a bit per vertex, word w holding vertices
// 32w..32w+31), as the direction-optimizing BFS on several devices uses them, host-driven
// (kernels/bfs/bfs_direction.cu) and device-driven (DoRun of direction_fused_run.cuh): the
// owned bits of a word, the levels of a word's vertices stored a lane per bit, and the owned
// vertices of a bitmap appended to the worklist.
#pragma once

#include "block_count.cuh"
#include "grid_barrier.cuh"
#include "worklist.cuh"

namespace groute {

// The bits of word `w` that are vertices of [begin, end) (the caller clamps `end` to n).
__device__ __forceinline__ unsigned int owned_word_bits(unsigned int w, unsigned int begin,
                                                        unsigned int end) {
    const unsigned int first = w * 32u;
    if (end <= first || begin >= first + 32u) {
        return 0u;
    }
    const unsigned int low = begin > first ? begin - first : 0u;  // < 32
    const unsigned int high = end - first < 32u ? end - first : 32u;
    const unsigned int below_high = high == 32u ? 0xFFFFFFFFu : (1u << high) - 1u;
    return below_high & ~((1u << low) - 1u);
}

// Stores `mark` as the level of every vertex that a lane's word `w` sets in `bits` (vertices
// below n), a lane per bit of each such word: one line per word, stores only. All 32 lanes
// call it.
__device__ __forceinline__ void store_word_levels(unsigned int* levels, unsigned int w,
                                                  unsigned int bits, unsigned int mark) {
    const unsigned int lane = lane_id();
    unsigned int pending = __ballot_sync(0xFFFFFFFFu, bits != 0u);
    while (pending != 0u) {
        const int from = __ffs(pending) - 1;
        pending &= pending - 1u;
        const unsigned int word = __shfl_sync(0xFFFFFFFFu, w, from);
        const unsigned int set = __shfl_sync(0xFFFFFFFFu, bits, from);
        if (((set >> lane) & 1u) != 0u) {
            levels[word * 32u + lane] = mark;
        }
    }
}

// Appends the vertices of [begin, end) (end clamped to n) whose bits `bits` sets to `wl`, from
// its end word. Each warp counts the bits of its words (a lane per word), the block reserves
// its warps' slots with one atomic (a pass with an atomic per warp would queue thousands on
// the one end word), and each warp then writes its vertices. The words are read volatile:
// where the same kernel set them (atomics at L2, stores of other SMs), never an L1 line. Every
// thread of the grid calls it.
__device__ __forceinline__ void append_owned_bits(const unsigned int* bits, unsigned int begin,
                                                  unsigned int end, const DeviceWorklist& wl) {
    const unsigned int warps = gridDim.x * blockDim.x / 32u;
    const unsigned int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32u;
    const unsigned int lane = lane_id();
    const unsigned int first = begin / 32u;
    const unsigned int last = (end + 31u) / 32u;
    const auto owned_word = [&](unsigned int w) {
        return w < last ? load_volatile(bits + w) & owned_word_bits(w, begin, end) : 0u;
    };
    unsigned int count = 0u;
    // Warp-uniform trip counts: `base` is the warp's first word.
    for (unsigned int base = first + warp * 32u; base < last; base += warps * 32u) {
        count += static_cast<unsigned int>(__popc(owned_word(base + lane)));
    }
    count = __reduce_add_sync(0xFFFFFFFFu, count);
    unsigned int slot = block_reserve_warps(wl.ctrl + CTRL_WL_END, count);
    if (count == 0u) {
        return;  // warp-uniform
    }
    for (unsigned int base = first + warp * 32u; base < last; base += warps * 32u) {
        const unsigned int w = base + lane;
        const unsigned int word = owned_word(w);
        unsigned int total;
        // At most 32 vertices per lane: 6 bits.
        unsigned int at = slot + warp_prefix_n<6>(static_cast<unsigned int>(__popc(word)), total);
        for (unsigned int rest = word; rest != 0u; rest &= rest - 1u) {
            wl.put(at, w * 32u + static_cast<unsigned int>(__ffs(rest)) - 1u);
            ++at;
        }
        slot += total;
    }
}

}  // namespace groute
