// Direction-optimizing BFS on one device (Beamer et al. 2012), launched by groute-bfs
// (crates/groute-bfs/src/direction/cuda.rs). Level-synchronous: the frontier of level L is
// the worklist range [first, ctrl[CTRL_WL_END]); a step appends level L + 1 behind it.
//
// A top-down (push) step is bfs_expand + bfs_expand_hubs of kernels/bfs/bfs.cu over the frontier
// (one device owns every vertex, so nothing is sent). The kernels here are:
//
// bfs_pull_step: the bottom-up (pull) step of one device. Every vertex v of [begin, end) still
//   UNREACHED scans its in-neighbours (the pull CSR: the graph itself when symmetric, else
//   its transpose) for one at `level` and stops at the first; a hit sets levels[v] =
//   level + 1 and appends v to the worklist (block-aggregated). Vertices set during the step
//   hold level + 1, never `level`, so the step reads no value it writes. counters[2] += arcs
//   scanned.
// bfs_frontier_arcs: counters[0] += out-degrees and counters[1] += in-degrees of the
//   worklist items [from, ctrl[CTRL_WL_END]) (the new frontier): what the host's switching
//   rule decides on.
//
//
// Several devices (crates/groute-bfs/src/direction/multi/) count each level's frontier (their
// owned vertices at the new level) as they find it, and list it only for a push step:
//
// bfs_pull_count: bfs_pull_step over the device's owned range, counting its finds (their
//   number in counters[3], their out- and in-degrees in counters[0] and [1]) instead of
//   appending them and, where `bitmap` is not null, storing them as the bitmap words that
//   cover the range (whole words: what bfs_level_bitmap would write there after it).
// bfs_pull_listed: bfs_pull_count where the frontier is kept as bitmaps: in-neighbours are
//   tested against `front`, the bitmap of the frontier at `level` (every device's), instead
//   of their levels (4 bytes a vertex, read at random), and the pull scans pull lists instead
//   of the owned range (pull_lists.cuh; the first pull of a run, `first` != 0, scans
//   `pullable`). A find gets its bit in `next` (the bitmap of level + 1, which the host
//   cleared). Launch with the grid the lists were sized for, the same for every pull of a
//   run.
// bfs_push_finds: after a push step, whose heads (owned and not) were appended once each as
//   worklist items [from, ctrl[CTRL_WL_END]): counts the owned ones as bfs_pull_count does
//   and, where `bitmap` is not null, sets every one's bit in it (zeroed before): the bitmap
//   of the step's discoveries without a pass over the levels.
// bfs_level_bitmap: bitmap[w] (w in [word_begin, word_end)) = the bits of the vertices
//   32w..32w+31 whose level is `mark` (one ballot per warp): what this device discovered at
//   the level (or, on a rank leader, its whole process), sent to every other device.
// bfs_apply: a received bitmap of `words` words starting at word `word_offset` (`list` 0), or
//   a received list of `words` words (`list` 1: its number of vertices, then at most
//   words - 1 of them, out of bfs_list_heads): every vertex it sets whose level is UNREACHED
//   gets `mark`, counted where owned. Where `front` is not null (the bitmap of the frontier at
//   `mark`, which holds every vertex the device set at `mark`), the vertices not in it are
//   the ones new here: their levels are stored without being read and `front` gets them
//   (apply_fresh, apply_list); else a bitmap's levels are read (apply_levels).
// bfs_frontier_count: counts the vertices of [begin, end) at level `mark` (the source's
//   level, once per run).
// bfs_frontier_list: appends the vertices of [begin, end) at level `mark` to the worklist
//   from the end word (the frontier a push step expands), one atomic per warp and 1024
//   vertices.
// bfs_frontier_list_bits: bfs_frontier_list from `front`, the bitmap of the frontier at the
//   level, instead of the levels (n / 8 bytes read instead of 4n): one atomic per block.
// bfs_list_heads: after a push step whose heads (every vertex it set, owned or not) were
//   appended once each as worklist items [from, ctrl[CTRL_WL_END]): writes their number to
//   out[0] and at most `cap` of them after it, the list a rank gathers instead of a bitmap
//   after a push with few out-arcs (which bound the heads: more records their number in
//   ctrl[CTRL_WL_OVERFLOW], which fails the run).
//
// counters: four u64, cumulative over a run (the host takes differences). Launch with
// blockDim.x a multiple of 32. Self-contained (NVRTC).
//
// The step bodies are kernels/include/direction.cuh's (its counters and helpers shared with
// the device-driven kernel of kernels/include/direction_fused.cuh).
#include "direction.cuh"
#include "frontier_words.cuh"
#include "pull_lists.cuh"
#include "traversal.cuh"

extern "C" __global__ void bfs_pull_step(unsigned int* levels,
                                         const unsigned long long* pull_offsets,
                                         const unsigned int* pull_sources,
                                         unsigned int begin, unsigned int end,
                                         unsigned int level, unsigned int* wl_data,
                                         unsigned int wl_mask, unsigned int first,
                                         unsigned int* ctrl, unsigned long long* counters) {
    const groute::DeviceWorklist wl{wl_data, wl_mask, first, ctrl};
    const auto at_level = [&](unsigned int u) { return levels[u] == level; };
    groute::direction_pull<false>(levels, nullptr, pull_offsets, pull_sources, begin, end, level,
                                  at_level, wl, counters, nullptr);
}

extern "C" __global__ void bfs_pull_count(unsigned int* levels,
                                          const unsigned long long* push_offsets,
                                          const unsigned long long* pull_offsets,
                                          const unsigned int* pull_sources, unsigned int begin,
                                          unsigned int end, unsigned int level,
                                          unsigned long long* counters, unsigned int* bitmap) {
    const groute::DeviceWorklist none{nullptr, 0u, 0u, nullptr};
    const auto at_level = [&](unsigned int u) { return levels[u] == level; };
    groute::direction_pull<true>(levels, push_offsets, pull_offsets, pull_sources, begin, end,
                                 level, at_level, none, counters, bitmap);
}

extern "C" __global__ void bfs_pull_listed(unsigned int level, unsigned int first,
                                           unsigned int* levels,
                                           const unsigned long long* push_offsets,
                                           const unsigned long long* pull_offsets,
                                           const unsigned int* pull_sources,
                                           const unsigned int* front,
                                           unsigned int* next, unsigned int* lists,
                                           unsigned long long list_words,
                                           const unsigned int* pullable,
                                           unsigned long long pullable_count,
                                           unsigned long long* counters) {
    const groute::PullLists pull{lists, list_words, pullable, pullable_count};
    if (!pull.fit(gridDim.x * blockDim.x / 32u)) {
        return;  // grid-uniform; the host sizes the lists for its grid (never taken)
    }
    groute::FrontierCounts finds;
    unsigned long long examined = 0;
    pull.pull(level, first != 0u, levels, push_offsets, pull_offsets, pull_sources, front, next,
              finds, examined);
    groute::warp_add_u64(counters + groute::DIRECTION_EXAMINED, examined);
    finds.flush(counters);
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
                                            unsigned int word_begin, unsigned int word_end) {
    const unsigned int warps = gridDim.x * blockDim.x / 32u;
    const unsigned int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32u;
    for (unsigned int w = word_begin + warp; w < word_end; w += warps) {
        const unsigned int bits = groute::level_bits(levels, n, w, mark);
        if (groute::lane_id() == 0) {
            bitmap[w] = bits;
        }
    }
}

extern "C" __global__ void bfs_push_finds(const unsigned int* wl_data, unsigned int wl_mask,
                                          unsigned int from, const unsigned int* ctrl,
                                          unsigned int n, unsigned int owned_begin,
                                          unsigned int owned_end,
                                          const unsigned long long* push_offsets,
                                          const unsigned long long* pull_offsets,
                                          unsigned long long* counters, unsigned int* bitmap) {
    const unsigned int count = ctrl[groute::CTRL_WL_END] - from;
    const unsigned int stride = gridDim.x * blockDim.x;
    const unsigned int rounds = (min(count, wl_mask + 1u) + stride - 1u) / stride;
    groute::FrontierCounts finds;
    for (unsigned int r = 0; r < rounds; ++r) {
        const unsigned int i = r * stride + blockIdx.x * blockDim.x + threadIdx.x;
        if (i < count && i <= wl_mask) {
            const unsigned int v = wl_data[(from + i) & wl_mask];
            if (v < n && bitmap != nullptr) {
                atomicOr(bitmap + v / 32u, 1u << (v % 32u));
            }
            if (v >= owned_begin && v < owned_end) {
                finds.add(push_offsets, pull_offsets, v);
            }
        }
    }
    finds.flush(counters);
}

// bfs_apply of a bitmap where the device keeps the bitmap of the frontier at `mark`, `front`,
// which holds every vertex it set at `mark` (its step's finds and the packets applied
// before): a bit of the packet not in it is a vertex UNREACHED here (no vertex of a packet is
// below `mark` anywhere: the sender's levels agreed with these up to mark - 1), so its level
// is stored without being read, counted where owned, and the packet ORed into `front`. A
// thread per packet word; then its warp stores the levels of its 32 words, a lane per bit.
__device__ __forceinline__ void apply_fresh(unsigned int* levels, const unsigned int* bitmap,
                                            unsigned int word_offset, unsigned int words,
                                            unsigned int mark, unsigned int owned_begin,
                                            unsigned int owned_end,
                                            const unsigned long long* push_offsets,
                                            const unsigned long long* pull_offsets,
                                            unsigned long long* counters, unsigned int* front) {
    const unsigned int stride = gridDim.x * blockDim.x;
    const unsigned int rounds = (words + stride - 1u) / stride;
    groute::FrontierCounts finds;
    for (unsigned int r = 0; r < rounds; ++r) {
        const unsigned int i = r * stride + blockIdx.x * blockDim.x + threadIdx.x;
        const unsigned int w = word_offset + i;
        unsigned int fresh = 0u;
        if (i < words) {
            const unsigned int mine = bitmap[i];
            if (mine != 0u) {
                const unsigned int known = front[w];
                fresh = mine & ~known;
                if (fresh != 0u) {
                    front[w] = known | mine;  // this thread's word alone
                }
            }
        }
        for (unsigned int own = fresh & groute::owned_word_bits(w, owned_begin, owned_end);
             own != 0u; own &= own - 1u) {
            finds.add(push_offsets, pull_offsets, w * 32u + __ffs(own) - 1u);
        }
        groute::store_word_levels(levels, w, fresh, mark);
    }
    finds.flush(counters);
}

// bfs_apply where the device keeps no bitmap of the frontier: a warp loads 32 words at once
// and visits only the nonzero ones, a lane per bit (coalesced level accesses), each vertex
// whose level is UNREACHED getting `mark`.
__device__ __forceinline__ void apply_levels(unsigned int* levels, unsigned int n,
                                             const unsigned int* bitmap,
                                             unsigned int word_offset, unsigned int words,
                                             unsigned int mark, unsigned int owned_begin,
                                             unsigned int owned_end,
                                             const unsigned long long* push_offsets,
                                             const unsigned long long* pull_offsets,
                                             unsigned long long* counters) {
    const unsigned int lane = groute::lane_id();
    const unsigned int warps = gridDim.x * blockDim.x / 32u;
    const unsigned int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32u;
    groute::FrontierCounts finds;
    const unsigned long long rounds = (words + 32ull * warps - 1u) / (32ull * warps);
    for (unsigned long long r = 0; r < rounds; ++r) {
        const unsigned long long base = 32ull * (r * warps + warp);
        const unsigned long long w = base + lane;
        const unsigned int mine = w < words ? bitmap[w] : 0u;
        unsigned int nonzero = __ballot_sync(0xFFFFFFFFu, mine != 0u);
        while (nonzero != 0u) {
            const unsigned int src = __ffs(nonzero) - 1u;
            nonzero &= nonzero - 1u;
            const unsigned int bits = __shfl_sync(0xFFFFFFFFu, mine, src);
            if ((bits >> lane) & 1u) {
                const unsigned long long v = 32ull * (word_offset + base + src) + lane;
                if (v < n && levels[v] == 0xFFFFFFFFu) {
                    levels[v] = mark;
                    if (v >= owned_begin && v < owned_end) {
                        finds.add(push_offsets, pull_offsets, static_cast<unsigned int>(v));
                    }
                }
            }
        }
    }
    finds.flush(counters);
}

// bfs_apply of a list (its number of vertices, then at most `cap` of them): every listed
// vertex UNREACHED here gets `mark`. Where `front` is not null, a vertex is new here where its
// bit was not set (atomicOr sets it).
__device__ __forceinline__ void apply_list(unsigned int* levels, unsigned int n,
                                           const unsigned int* list, unsigned int cap,
                                           unsigned int mark, unsigned int owned_begin,
                                           unsigned int owned_end,
                                           const unsigned long long* push_offsets,
                                           const unsigned long long* pull_offsets,
                                           unsigned long long* counters, unsigned int* front) {
    const unsigned int count = min(list[0], cap);
    const unsigned int stride = gridDim.x * blockDim.x;
    const unsigned int rounds = (count + stride - 1u) / stride;
    groute::FrontierCounts finds;
    for (unsigned int r = 0; r < rounds; ++r) {
        const unsigned int i = r * stride + blockIdx.x * blockDim.x + threadIdx.x;
        const unsigned int v = i < count ? list[1u + i] : n;
        if (v < n) {
            bool fresh;
            if (front != nullptr) {
                const unsigned int bit = 1u << (v % 32u);
                fresh = (atomicOr(front + v / 32u, bit) & bit) == 0u;
                if (fresh) {
                    levels[v] = mark;
                }
            } else {
                fresh = atomicCAS(levels + v, 0xFFFFFFFFu, mark) == 0xFFFFFFFFu;
            }
            if (fresh && v >= owned_begin && v < owned_end) {
                finds.add(push_offsets, pull_offsets, v);
            }
        }
    }
    finds.flush(counters);
}

extern "C" __global__ void bfs_apply(unsigned int* levels, unsigned int n,
                                     const unsigned int* packet, unsigned int word_offset,
                                     unsigned int words, unsigned int list, unsigned int mark,
                                     unsigned int owned_begin, unsigned int owned_end,
                                     const unsigned long long* push_offsets,
                                     const unsigned long long* pull_offsets,
                                     unsigned long long* counters, unsigned int* front) {
    owned_end = min(owned_end, n);
    if (list != 0u) {
        apply_list(levels, n, packet, words - 1u, mark, owned_begin, owned_end, push_offsets,
                   pull_offsets, counters, front);
    } else if (front != nullptr) {
        apply_fresh(levels, packet, word_offset, words, mark, owned_begin, owned_end,
                    push_offsets, pull_offsets, counters, front);
    } else {
        apply_levels(levels, n, packet, word_offset, words, mark, owned_begin, owned_end,
                     push_offsets, pull_offsets, counters);
    }
}

extern "C" __global__ void bfs_frontier_count(const unsigned int* levels,
                                              const unsigned long long* push_offsets,
                                              const unsigned long long* pull_offsets,
                                              unsigned int begin, unsigned int end,
                                              unsigned int mark,
                                              unsigned long long* counters) {
    const unsigned int stride = gridDim.x * blockDim.x;
    const unsigned int span = end > begin ? end - begin : 0u;
    const unsigned int rounds = (span + stride - 1u) / stride;
    groute::FrontierCounts found;
    for (unsigned int r = 0; r < rounds; ++r) {
        const unsigned int i = r * stride + blockIdx.x * blockDim.x + threadIdx.x;
        const unsigned int v = begin + i;
        if (i < span && levels[v] == mark) {
            found.add(push_offsets, pull_offsets, v);
        }
    }
    found.flush(counters);
}

extern "C" __global__ void bfs_frontier_list(const unsigned int* levels, unsigned int begin,
                                             unsigned int end, unsigned int mark,
                                             unsigned int* wl_data, unsigned int wl_mask,
                                             unsigned int* ctrl) {
    const groute::DeviceWorklist wl{wl_data, wl_mask, 0u, ctrl};
    const unsigned int lane = groute::lane_id();
    const unsigned int warps = gridDim.x * blockDim.x / 32u;
    const unsigned int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32u;
    const unsigned long long span = end > begin ? end - begin : 0u;
    const unsigned long long rounds = (span + 1024ull * warps - 1u) / (1024ull * warps);
    for (unsigned long long r = 0; r < rounds; ++r) {
        // Lane k holds the ballot of the chunk's 32-vertex group k.
        const unsigned long long base = 1024ull * (r * warps + warp);
        unsigned int mine = 0;
        for (unsigned int k = 0; k < 32u; ++k) {
            const unsigned long long i = base + 32u * k + lane;
            const unsigned int ballot =
                __ballot_sync(0xFFFFFFFFu, i < span && levels[begin + i] == mark);
            if (lane == k) {
                mine = ballot;
            }
        }
        unsigned int total;
        unsigned int slot =
            groute::warp_reserve_n<6>(ctrl + groute::CTRL_WL_END, __popc(mine), total);
        const unsigned int group = begin + static_cast<unsigned int>(base) + 32u * lane;
        while (mine != 0u) {
            const unsigned int b = __ffs(mine) - 1u;
            mine &= mine - 1u;
            wl.put(slot++, group + b);
        }
    }
}

extern "C" __global__ void bfs_frontier_list_bits(const unsigned int* front, unsigned int begin,
                                                  unsigned int end, unsigned int* wl_data,
                                                  unsigned int wl_mask, unsigned int* ctrl) {
    const groute::DeviceWorklist wl{wl_data, wl_mask, 0u, ctrl};
    groute::append_owned_bits(front, begin, end, wl);
}

extern "C" __global__ void bfs_list_heads(const unsigned int* wl_data, unsigned int wl_mask,
                                          unsigned int from, unsigned int* ctrl,
                                          unsigned int* out, unsigned int cap) {
    const unsigned int count = ctrl[groute::CTRL_WL_END] - from;
    const unsigned int listed = min(count, cap);
    const unsigned int first = blockIdx.x * blockDim.x + threadIdx.x;
    if (first == 0u) {
        out[0] = count;
        if (count > cap) {
            atomicMax(ctrl + groute::CTRL_WL_OVERFLOW, count);
        }
    }
    for (unsigned int i = first; i < listed; i += gridDim.x * blockDim.x) {
        out[1u + i] = wl_data[(from + i) & wl_mask];
    }
}
