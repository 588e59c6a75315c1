// The generic min-label traversal (BFS, SSSP) as ONE persistent kernel per run, single device:
// the round loop runs on the device, rounds are separated by a grid-wide barrier instead of a
// kernel launch and a control-block read-back. Mirror of crates/groute-worklist/src/traversal/
// fused.rs; an algorithm instantiates it next to GROUTE_TRAVERSAL_KERNELS (kernels/bfs.cu).
//
// Launch: cooperatively (cuLaunchCooperativeKernel), grid <= max resident blocks of this kernel,
// blockDim.x a multiple of 32. The cooperative launch is what makes the grid barrier safe: the
// driver refuses a grid whose blocks cannot all be resident at once, so every block that a
// barrier waits for is running and will arrive.
//
// Round loop (every thread runs it with the same values, so all control flow around the
// barriers is grid-uniform):
//   batch = worklist [start, batch_end)   batch_end: the snapshot taken at the last barrier
//   stop or empty batch -> return
//   traversal_expand over the batch (block/warp/thread granularity; hubs are listed)
//   barrier A       action: batch_end := ctrl[CTRL_WL_END], rounds += 1, processed += batch,
//                           stop := overflow / abort
//   if hubs listed: traversal_expand_hubs (hub tiles over the whole grid)
//                   barrier B   action: hub counter := 0, batch_end := ctrl[CTRL_WL_END], stop
//   start := old batch_end
// The hub decision reads the snapshot FUSED_HUBS that A's action took of the hub counter, never
// the counter itself: with no hubs in round r, a block released early from A runs round r + 1's
// expand and may list hubs in the counter while a late block has not decided yet; deciding on
// the live counter let the late block take the hub path and arrive at B while the early one
// arrived at round r + 1's A, so the barriers of the two groups mixed and the grid hung (kron21:
// hubs appear in a round that follows a hub-free one). The snapshot is overwritten only by the
// next action, after every block has arrived, so the decision is grid-uniform. The hub counter
// itself is read by traversal_expand_hubs between A and B, when nothing writes it.
// An action runs on thread 0 of the block that arrives last, after every block has
// arrived and before any is released, so it sees every append of the phase and nobody appends
// while it snapshots. Snapshots are read after the barrier and before the next arrival, and the
// next action overwrites them only after every block has arrived again.
//
// Overflow: a worklist append past the capacity records the needed size in
// ctrl[CTRL_WL_OVERFLOW] (worklist.cuh) and writes nothing; the next action sees it and stops
// the kernel; the host reports CapacityExceeded naming wl_capacity. Nothing is lost silently.
// Abort: the host may set *abort (device-mapped pinned host memory; the time limit); the action
// polls it every FUSED_ABORT_POLL rounds (a PCIe read, kept off the per-round path).
//
// The state block `fused` (FUSED_WORDS u32 of device memory, zeroed by the host except
// FUSED_BATCH_END = the number of seeds) keeps the barrier words on cache lines of their own.
#pragma once

#include "traversal.cuh"

namespace groute {

enum FusedWord : unsigned int {
    FUSED_BARRIER_COUNT = 0,   // blocks arrived at the current barrier (own 128-byte line)
    FUSED_BARRIER_GEN = 32,    // barrier generation, bumped to release (own line)
    FUSED_BATCH_END = 64,      // snapshot of ctrl[CTRL_WL_END]
    FUSED_STOP = 65,           // snapshot: FUSED_STOP_* (0: keep going)
    FUSED_ROUNDS = 66,         // rounds run
    FUSED_PROCESSED = 68,      // items expanded, 64-bit (words 68, 69)
    FUSED_HUBS = 70,           // snapshot: hubs the round listed (low word of the counter)
    FUSED_WORDS = 96,
};

enum FusedStop : unsigned int {
    FUSED_STOP_NONE = 0,
    FUSED_STOP_OVERFLOW = 1,
    FUSED_STOP_ABORTED = 2,
    FUSED_ABORT_POLL = 64,
};

__device__ __forceinline__ unsigned int load_volatile(const unsigned int* p) {
    return *const_cast<const volatile unsigned int*>(p);
}

// Grid-wide barrier (sense by generation). Every thread of every block calls it from
// grid-uniform control flow. Thread 0 of the last block to arrive runs `action()` with every
// other block waiting, then releases them. Release/acquire: each block fences before arriving
// and after being released (the pattern of cooperative groups' grid sync).
template <typename Action>
__device__ __forceinline__ void grid_barrier(unsigned int* fused, Action action) {
    __syncthreads();
    if (threadIdx.x == 0) {
        // The generation cannot move before this block arrives, so this is the current one.
        const unsigned int gen = load_volatile(fused + FUSED_BARRIER_GEN);
        __threadfence();
        const unsigned int arrived = atomicAdd(fused + FUSED_BARRIER_COUNT, 1u);
        if (arrived == gridDim.x - 1u) {
            __threadfence();
            // Nobody arrives at the next barrier before the release below.
            atomicExch(fused + FUSED_BARRIER_COUNT, 0u);
            action();
            __threadfence();
            atomicExch(fused + FUSED_BARRIER_GEN, gen + 1u);
        } else {
            while (load_volatile(fused + FUSED_BARRIER_GEN) == gen) {
                __nanosleep(32);
            }
            __threadfence();
        }
    }
    __syncthreads();
}

// The action shared by both barriers: snapshot the worklist end and decide whether to stop.
// `poll_abort`: also read the host's abort word (a PCIe read: not every round).
__device__ __forceinline__ void fused_snapshot(unsigned int* fused, const unsigned int* ctrl,
                                               const volatile unsigned int* abort,
                                               bool poll_abort) {
    fused[FUSED_BATCH_END] = load_volatile(ctrl + CTRL_WL_END);
    unsigned int stop = FUSED_STOP_NONE;
    if (load_volatile(ctrl + CTRL_WL_OVERFLOW) != 0u) {
        stop = FUSED_STOP_OVERFLOW;
    } else if (poll_abort && *abort != 0u) {
        stop = FUSED_STOP_ABORTED;
    }
    fused[FUSED_STOP] = stop;
}

template <typename Relax, bool WEIGHTED>
__device__ void fused_traversal(const MinSplitOps ops, const unsigned long long* offsets,
                                const unsigned int* targets, const unsigned int* weights,
                                unsigned int* wl_data, unsigned int wl_mask, unsigned int* ctrl,
                                unsigned int* fused, const volatile unsigned int* abort) {
    // One device owns every vertex: the send buffer is never appended to (capacity 0; an append
    // would be recorded as a send overflow, never written).
    const SendBuffer send{nullptr, 0u, 0u, ctrl};
    unsigned int start = 0;
    unsigned int rounds = 0;
    while (true) {
        const unsigned int end = load_volatile(fused + FUSED_BATCH_END);
        if (load_volatile(fused + FUSED_STOP) != FUSED_STOP_NONE || end == start) {
            return;
        }
        const unsigned int count = end - start;
        const DeviceWorklist wl{wl_data, wl_mask, start, ctrl};
        traversal_expand<Relax, WEIGHTED>(ops, offsets, targets, weights, wl, count, send);
        ++rounds;
        grid_barrier(fused, [&] {
            fused[FUSED_ROUNDS] = rounds;
            fused[FUSED_HUBS] = load_volatile(ctrl + CTRL_HUB_COUNT);
            atomicAdd(reinterpret_cast<unsigned long long*>(fused + FUSED_PROCESSED),
                      static_cast<unsigned long long>(count));
            fused_snapshot(fused, ctrl, abort, rounds % FUSED_ABORT_POLL == 0u);
        });
        // The snapshot, not ctrl[CTRL_HUB_COUNT]: a block released early may already list
        // the next round's hubs there while a late one has not read it yet.
        if (load_volatile(fused + FUSED_HUBS) != 0u) {
            if (load_volatile(fused + FUSED_STOP) != FUSED_STOP_NONE) {
                return;
            }
            traversal_expand_hubs<Relax, WEIGHTED>(ops, offsets, targets, weights, wl, send);
            grid_barrier(fused, [&] {
                *reinterpret_cast<volatile unsigned long long*>(ctrl + CTRL_HUB_COUNT) = 0ull;
                fused[FUSED_HUBS] = 0u;
                fused_snapshot(fused, ctrl, abort, false);
            });
        }
        start = end;
    }
}

}  // namespace groute

// The extern "C" entry point of one algorithm's fused traversal:
//   NAME##_fused(values, offsets, targets, weights, wl_data, wl_mask, ctrl, fused, abort,
//                owned_begin, owned_end)
// (mirrored by the typed wrapper in crates/groute-worklist/src/traversal/fused.rs).
#define GROUTE_FUSED_TRAVERSAL_KERNEL(NAME, RELAX, WEIGHTED)                                   \
    extern "C" __global__ void NAME##_fused(                                                   \
        unsigned int* values, const unsigned long long* offsets, const unsigned int* targets,  \
        const unsigned int* weights, unsigned int* wl_data, unsigned int wl_mask,              \
        unsigned int* ctrl, unsigned int* fused, const unsigned int* abort,                    \
        unsigned int owned_begin, unsigned int owned_end) {                                    \
        const groute::MinSplitOps ops{owned_begin, owned_end, values};                         \
        groute::fused_traversal<RELAX, WEIGHTED>(ops, offsets, targets, weights, wl_data,      \
                                                 wl_mask, ctrl, fused, abort);                 \
    }
