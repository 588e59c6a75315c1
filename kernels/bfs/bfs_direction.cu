// Direction-optimizing BFS on one device (Beamer et al. 2012), launched by groute-bfs
// (crates/groute-bfs/src/direction/cuda.rs). Level-synchronous: the frontier of level L is
// the worklist range [first, ctrl[CTRL_WL_END]); a step appends level L + 1 behind it.
//
// A top-down (push) step is bfs_expand + bfs_expand_hubs of kernels/bfs/bfs.cu over the frontier
// (one device owns every vertex, so nothing is sent). The kernels here are:
//
// bfs_pull_step: the bottom-up (pull) step. Every vertex v of [begin, end) still UNREACHED
//   (one device: every vertex; several: the device's owned range) scans its
//   in-neighbours (the pull CSR: the graph itself when symmetric, else its transpose) for one
//   at `level` and stops at the first; a hit sets levels[v] = level + 1 and appends v to the
//   worklist (block-aggregated). Vertices set during the step hold level + 1, never `level`,
//   so the step reads no value it writes. counters[2] += arcs scanned.
// bfs_frontier_arcs: counters[0] += out-degrees and counters[1] += in-degrees of the
//   worklist items [from, ctrl[CTRL_WL_END]) (the new frontier): what the host's switching
//   rule decides on.
//
//
// Several devices (crates/groute-bfs/src/direction/multi/) add three kernels around the step:
//
// bfs_level_bitmap: bitmap[w] (w in [word_begin, word_end)) = the bits of the vertices
//   32w..32w+31 whose level is `mark` (one ballot per warp): what this device discovered at
//   the level, sent to every other device. It also rewinds the worklist (ctrl[CTRL_WL_END] =
//   0) for the frontier scan that follows it: the step before it has finished appending.
// bfs_apply_bitmap: a received bitmap of `words` words starting at word `word_offset`: every
//   vertex whose bit is set and whose level is UNREACHED gets `mark`.
// bfs_frontier_scan: appends the vertices of [begin, end) at level `mark` to the worklist
//   (the device's next frontier) and adds their out- and in-degrees to counters[0] and [1]
//   and their number to counters[3] (so one read of the counters tells the host everything).
//
// counters: four u64, cumulative over a run (the host takes differences). Launch with
// blockDim.x a multiple of 32. Self-contained (NVRTC).
//
// The step bodies are kernels/include/direction.cuh's (its counters and helpers shared with
// the device-driven kernel of kernels/bfs/bfs_direction_fused.cu).
#include "direction.cuh"
#include "traversal.cuh"

extern "C" __global__ void bfs_pull_step(unsigned int* levels,
                                         const unsigned long long* pull_offsets,
                                         const unsigned int* pull_sources,
                                         unsigned int begin, unsigned int end,
                                         unsigned int level, unsigned int* wl_data,
                                         unsigned int wl_mask, unsigned int first,
                                         unsigned int* ctrl, unsigned long long* counters) {
    const groute::DeviceWorklist wl{wl_data, wl_mask, first, ctrl};
    groute::direction_pull(levels, pull_offsets, pull_sources, begin, end, level, wl, counters);
}

extern "C" __global__ void bfs_frontier_arcs(const unsigned long long* push_offsets,
                                             const unsigned long long* pull_offsets,
                                             const unsigned int* wl_data, unsigned int wl_mask,
                                             unsigned int from, const unsigned int* ctrl,
                                             unsigned long long* counters) {
    const unsigned int count = ctrl[groute::CTRL_WL_END] - from;
    const unsigned int stride = gridDim.x * blockDim.x;
    const unsigned int rounds = (count + stride - 1u) / stride;
    unsigned long long out = 0;
    unsigned long long in = 0;
    for (unsigned int r = 0; r < rounds; ++r) {
        const unsigned int i = r * stride + blockIdx.x * blockDim.x + threadIdx.x;
        if (i < count) {
            const unsigned int v = wl_data[(from + i) & wl_mask];
            groute::add_degrees(push_offsets, pull_offsets, v, out, in);
        }
    }
    groute::warp_add_u64(counters + groute::DIRECTION_OUT_ARCS, out);
    groute::warp_add_u64(counters + groute::DIRECTION_IN_ARCS, in);
}

extern "C" __global__ void bfs_level_bitmap(const unsigned int* levels, unsigned int n,
                                            unsigned int mark, unsigned int* bitmap,
                                            unsigned int word_begin, unsigned int word_end,
                                            unsigned int* ctrl) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        ctrl[groute::CTRL_WL_END] = 0;
    }
    const unsigned int warps = gridDim.x * blockDim.x / 32u;
    const unsigned int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32u;
    for (unsigned int w = word_begin + warp; w < word_end; w += warps) {
        const unsigned int bits = groute::level_bits(levels, n, w, mark);
        if (groute::lane_id() == 0) {
            bitmap[w] = bits;
        }
    }
}

extern "C" __global__ void bfs_apply_bitmap(unsigned int* levels, unsigned int n,
                                            const unsigned int* bitmap, unsigned int word_offset,
                                            unsigned int words, unsigned int mark) {
    const unsigned int stride = gridDim.x * blockDim.x;
    const unsigned long long bits = 32ull * words;
    for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < bits; i += stride) {
        const unsigned int word = bitmap[i / 32u];
        if ((word >> (i % 32u)) & 1u) {
            const unsigned long long v = 32ull * word_offset + i;
            if (v < n && levels[v] == 0xFFFFFFFFu) {
                levels[v] = mark;
            }
        }
    }
}

extern "C" __global__ void bfs_frontier_scan(const unsigned int* levels,
                                             const unsigned long long* push_offsets,
                                             const unsigned long long* pull_offsets,
                                             unsigned int begin, unsigned int end,
                                             unsigned int mark, unsigned int* wl_data,
                                             unsigned int wl_mask, unsigned int* ctrl,
                                             unsigned long long* counters) {
    const groute::DeviceWorklist wl{wl_data, wl_mask, 0u, ctrl};
    groute::direction_frontier_scan(levels, push_offsets, pull_offsets, begin, end, mark, wl,
                                    counters);
}
