// Soft priority's re-examination (the fused traversal's REEXAMINE phase, the host-driven
// NAME##_reexamine launch): the items deferred to the low list, sorted again after the
// threshold advanced. Part of the generic min-label traversal (traversal.cuh).
#pragma once

#include "block_stage.cuh"
#include "low_list.cuh"
#include "worklist.cuh"

namespace groute {

// Re-examination (soft priority, after an epoch advance): every item of `taken` (the previous
// low list, `count` items) whose vertex still has the value it was deferred with goes to the
// worklist if that value is below the new threshold, else back to `low` (the other buffer);
// an item whose vertex improved since is dropped: the improvement queued a newer copy.
//
// Each thread takes ITEMS items a round (strided by blockDim.x, so a warp's loads stay
// coalesced), all their loads issued before the first use: a pass is a chain of two dependent
// loads per item (the item, then its vertex's value at a random address), and with one item
// a thread a round most of the memory system waited while every round paid its stage flush
// (three block barriers): on a Kronecker graph SSSP's re-examinations, which read again every
// item still deferred, took a sixth of the fused kernel's time so. ITEMS < 8 (the warps'
// appends count at most 7 items a lane). The host-driven NAME##_reexamine takes one. `count`
// is at most 2^30 (the host's low lists hold no more), so no index below wraps.
template <unsigned int ITEMS>
__device__ __forceinline__ void traversal_reexamine(const unsigned int* values,
                                                    const VertexValue* taken, unsigned int count,
                                                    const DeviceWorklist wl, const LowList low) {
    static_assert(ITEMS >= 1u && ITEMS < 8u, "1 to 7 items a thread");
    constexpr unsigned int K = ITEMS;
    const unsigned int stride = gridDim.x * blockDim.x * K;
    const unsigned int rounds = (count + stride - 1u) / stride;
    // The re-deferred items go through the block's stage, flushed after each round (flush's
    // last barrier orders the copy before the next round's appends).
    const BlockStage<false> staged = BlockStage<false>::of(low, SendBuffer{});
    const bool staging = staged.active();
    staged.stage();
    __syncthreads();
    for (unsigned int r = 0; r < rounds; ++r) {
        const unsigned int first = r * stride + blockIdx.x * blockDim.x * K + threadIdx.x;
        if constexpr (K == 1u) {
            bool live = false;
            VertexValue p;
            p.vertex = 0;
            p.value = 0;
            if (first < count) {
                p = taken[first];
                live = values[p.vertex] >= p.value;  // values only decrease: equal, not superseded
            }
            keep_or_defer(wl, staged.deferred(), p.vertex, p.value, live);
        } else {
            unsigned int vertex[K];
            unsigned int prio[K];
            bool listed[K];
#pragma unroll
            for (unsigned int k = 0; k < K; ++k) {
                const unsigned int i = first + k * blockDim.x;
                listed[k] = i < count;
                VertexValue p;
                p.vertex = 0;
                p.value = 0;
                if (listed[k]) {
                    p = taken[i];
                }
                vertex[k] = p.vertex;
                prio[k] = p.value;
            }
            bool kept[K];
            bool deferred[K];
            unsigned int moved = 0;
#pragma unroll
            for (unsigned int k = 0; k < K; ++k) {
                const bool live = listed[k] && values[vertex[k]] >= prio[k];
                deferred[k] = live && low.defers(prio[k]);
                kept[k] = live && !deferred[k];
                moved += kept[k] ? 1u : 0u;
            }
            wl.append_warp_n(vertex, kept, moved);
            staged.deferred().append_warp_n(vertex, prio, deferred);
        }
        if (staging) {
            staged.flush();
        }
    }
}

}  // namespace groute
