// The generic min-label traversal (BFS, SSSP) as ONE persistent kernel per run, single device:
// the round loop runs on the device, phases are separated by a grid-wide barrier instead of a
// kernel launch and a control-block read-back. Mirror of crates/groute-worklist/src/traversal/
// fused.rs; an algorithm instantiates it next to GROUTE_TRAVERSAL_KERNELS (kernels/bfs.cu).
//
// Launch: cooperatively (cuLaunchCooperativeKernel), grid <= max resident blocks of this kernel,
// blockDim.x a multiple of 32. The cooperative launch is what makes the grid barrier safe: the
// driver refuses a grid whose blocks cannot all be resident at once, so every block that a
// barrier waits for is running and will arrive.
//
// Phase loop. The state block holds the PHASE to run next and its inputs (batch [START, END),
// threshold, low list); every block reads them after a barrier, runs the phase, and arrives at
// the next barrier, whose action (thread 0 of the block that arrives last, every other block
// waiting) accounts for the phase and picks the next one:
//   EXPAND     the grid expands [START, END) (block/warp/thread granularity; hubs are listed;
//              with soft priority, kept items at or above the threshold go to the low list).
//              Action: rounds += 1, processed += END - START, START := END, END := wl end.
//   SOLO       single-block mode: block 0 alone runs levels back to back, separated by
//              __syncthreads() (no grid barrier), while the other blocks wait at the barrier;
//              it leaves when the next batch exceeds solo_max items, is empty, listed hubs, or
//              overflowed, and writes START, END, rounds and processed itself before arriving.
//   HUBS       the grid relaxes the listed hubs in tiles (traversal_expand_hubs).
//              Action: hub counter := 0, END := wl end.
//   REEXAMINE  soft priority, after the threshold advanced: the grid moves the live items of
//              the taken low list that are now below the threshold to the worklist, defers the
//              others to the other low list, drops superseded ones (traversal_reexamine).
//              Action: epochs += 1, the lists swap, END := wl end.
//   DONE/STOP  every block returns.
// Next phase (fused_next): STOP on an overflow or an abort; HUBS after EXPAND/SOLO when the
// hub counter is nonzero; else SOLO or EXPAND while the batch is not empty (SOLO when it has
// at most solo_max items); else, when the low list holds items, the threshold advances (to the
// end of the band of the smallest deferred priority, at least one band: PriorityCounter's
// rule), the list is taken and REEXAMINE runs; else DONE: no item exists anywhere (one device
// holds every item, and an improved vertex is appended before the barrier that closes its
// phase).
//
// Why every decision is grid-uniform: blocks read only state words, which only actions (and
// block 0 in SOLO, before it arrives, while every other block waits at the barrier) write,
// and an action runs only after every block has arrived, i.e. after every block has read the
// previous values. The live counters in ctrl are read by actions only (the kron21 hang of the
// first version: blocks read the live hub counter after a barrier, when a block released early
// could already list the next round's hubs in it, so blocks disagreed about the hub phase and
// their barriers mixed).
//
// Why SOLO is race-free: the other blocks sit in the barrier (spinning on the generation word)
// and touch neither the worklist, the values, the low list nor the state until released, so
// block 0 is the only writer (a late block may read START/END while block 0 rewrites them,
// but SOLO does not use them off block 0); __syncthreads() orders its own levels (appends, atomicMin on the
// values, the control words it rereads). Hand-over: block 0's writes precede its arrival
// (__syncthreads, __threadfence, arrival atomic); the releasing block fences before bumping the
// generation and every released block fences after seeing it, so the grid sees everything
// block 0 wrote. Entering SOLO, the barrier that chose it orders every block's writes before
// block 0's reads the same way.
//
// Overflow: a worklist or low-list append past the capacity records the needed size in
// ctrl[CTRL_WL_OVERFLOW] / ctrl[CTRL_LOW_OVERFLOW] and writes nothing; the next action sees it
// and stops the kernel; the host reports CapacityExceeded naming wl_capacity. Nothing is lost
// silently. Abort: the host may set *abort (device-mapped pinned host memory; the time limit);
// actions poll it every FUSED_ABORT_POLL phases and SOLO every FUSED_ABORT_POLL levels (a PCIe
// read, kept off the per-level path).
//
// The state block `fused` (FUSED_WORDS u32 of device memory, zeroed by the host except
// FUSED_PHASE, FUSED_END = the number of seeds and FUSED_THRESHOLD) keeps the barrier words on
// cache lines of their own.
#pragma once

#include "traversal.cuh"

namespace groute {

enum FusedWord : unsigned int {
    FUSED_BARRIER_COUNT = 0,   // blocks arrived at the current barrier (own 128-byte line)
    FUSED_BARRIER_GEN = 32,    // barrier generation, bumped to release (own line)
    FUSED_PHASE = 64,          // the phase to run next (FusedPhase)
    FUSED_STOP = 65,           // why the kernel stopped early (FusedStop; 0: it did not)
    FUSED_ROUNDS = 66,         // expand levels run (grid and single-block)
    FUSED_START = 67,          // batch start
    FUSED_PROCESSED = 68,      // items expanded, 64-bit (words 68, 69)
    FUSED_END = 70,            // batch end
    FUSED_THRESHOLD = 71,      // soft priority's threshold (0xFFFFFFFF: nothing deferred)
    FUSED_LOW_CURRENT = 72,    // index (0, 1) of the low list being appended to
    FUSED_LOW_TAKEN = 73,      // items of the other list that REEXAMINE reads
    FUSED_LOW_BASE = 74,       // items the last REEXAMINE left in the current list
    FUSED_EPOCHS = 75,         // threshold advances
    FUSED_DEFERRED = 76,       // items expansions deferred, 64-bit (words 76, 77)
    FUSED_STALE = 78,          // superseded deferred items dropped, 64-bit (words 78, 79)
    FUSED_SOLO_ROUNDS = 80,    // of FUSED_ROUNDS, the levels run in single-block mode
    FUSED_PHASES = 81,         // phases run (abort polling)
    FUSED_SOLO_ABORT = 82,     // SOLO saw the abort word set
    FUSED_WORDS = 96,
};

enum FusedPhase : unsigned int {
    FUSED_PHASE_DONE = 0,
    FUSED_PHASE_EXPAND = 1,
    FUSED_PHASE_SOLO = 2,
    FUSED_PHASE_HUBS = 3,
    FUSED_PHASE_REEXAMINE = 4,
    FUSED_PHASE_STOP = 5,
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

__device__ __forceinline__ void add_u64(volatile unsigned int* fused, unsigned int word,
                                        unsigned long long n) {
    *reinterpret_cast<volatile unsigned long long*>(fused + word) += n;
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
                __nanosleep(20);
            }
            __threadfence();
        }
    }
    __syncthreads();
}

// Soft priority's next threshold when no high-priority item is left: at least one band above
// `threshold`, and the end of the band holding `min_deferred` (no empty epochs); saturating
// (the last epoch, at 0xFFFFFFFF, defers nothing). PriorityCounter::report's rule.
__device__ __forceinline__ unsigned int next_threshold(unsigned int threshold,
                                                       unsigned int delta,
                                                       unsigned int min_deferred) {
    const unsigned int d = delta == 0u ? 1u : delta;
    const unsigned long long band = static_cast<unsigned long long>(threshold) + d;
    const unsigned long long bucket = (static_cast<unsigned long long>(min_deferred / d) + 1ull) * d;
    const unsigned long long next = band > bucket ? band : bucket;
    return next > 0xFFFFFFFFull ? 0xFFFFFFFFu : static_cast<unsigned int>(next);
}

// The action of every barrier: accounts for the phase `done` that just ended and picks the
// next one (see the file comment). Runs on one thread with every block waiting.
// State and control words are accessed volatile (L2): they were last written on other SMs.
__device__ __forceinline__ void fused_next(volatile unsigned int* fused,
                                           volatile unsigned int* ctrl,
                                           const volatile unsigned int* abort,
                                           unsigned int done, unsigned int prio_delta,
                                           unsigned int solo_max) {
    const unsigned int wl_end = ctrl[CTRL_WL_END];
    unsigned int end = fused[FUSED_END];
    if (done == FUSED_PHASE_EXPAND) {
        fused[FUSED_ROUNDS] += 1u;
        add_u64(fused, FUSED_PROCESSED, end - fused[FUSED_START]);
        fused[FUSED_START] = end;
        end = wl_end;
    } else if (done == FUSED_PHASE_HUBS) {
        *reinterpret_cast<volatile unsigned long long*>(ctrl + CTRL_HUB_COUNT) = 0ull;
        end = wl_end;
    } else if (done == FUSED_PHASE_REEXAMINE) {
        const unsigned int still_low = ctrl[CTRL_LOW_END];
        const unsigned int moved = wl_end - end;
        fused[FUSED_EPOCHS] += 1u;
        add_u64(fused, FUSED_STALE, fused[FUSED_LOW_TAKEN] - moved - still_low);
        fused[FUSED_LOW_BASE] = still_low;
        fused[FUSED_LOW_CURRENT] ^= 1u;
        end = wl_end;
    }
    // SOLO: block 0 wrote START, END and its counters before arriving.
    fused[FUSED_END] = end;
    const unsigned int start = fused[FUSED_START];
    const unsigned int phases = ++fused[FUSED_PHASES];
    unsigned int stop = FUSED_STOP_NONE;
    if (ctrl[CTRL_WL_OVERFLOW] != 0u || ctrl[CTRL_LOW_OVERFLOW] != 0u) {
        stop = FUSED_STOP_OVERFLOW;
    } else if (fused[FUSED_SOLO_ABORT] != 0u ||
               (phases % FUSED_ABORT_POLL == 0u && *abort != 0u)) {
        stop = FUSED_STOP_ABORTED;
    }
    fused[FUSED_STOP] = stop;
    const unsigned int hubs = ctrl[CTRL_HUB_COUNT];
    const unsigned int low = ctrl[CTRL_LOW_END];
    unsigned int next;
    if (stop != FUSED_STOP_NONE) {
        next = FUSED_PHASE_STOP;
    } else if ((done == FUSED_PHASE_EXPAND || done == FUSED_PHASE_SOLO) && hubs != 0u) {
        next = FUSED_PHASE_HUBS;
    } else if (end != start) {
        next = end - start <= solo_max ? FUSED_PHASE_SOLO : FUSED_PHASE_EXPAND;
    } else if (low != 0u) {
        add_u64(fused, FUSED_DEFERRED, low - fused[FUSED_LOW_BASE]);
        fused[FUSED_THRESHOLD] =
            next_threshold(fused[FUSED_THRESHOLD], prio_delta, ctrl[CTRL_LOW_MIN]);
        fused[FUSED_LOW_TAKEN] = low;
        ctrl[CTRL_LOW_END] = 0u;
        ctrl[CTRL_LOW_MIN] = 0xFFFFFFFFu;
        next = FUSED_PHASE_REEXAMINE;
    } else {
        next = FUSED_PHASE_DONE;
    }
    fused[FUSED_PHASE] = next;
}

// The fused kernel's buffers and settings (the kernel's parameters).
struct FusedArgs {
    MinSplitOps ops;
    const unsigned long long* offsets;
    const unsigned int* targets;
    const unsigned int* weights;
    unsigned int* wl_data;
    unsigned int wl_mask;
    unsigned int* ctrl;
    unsigned int* fused;
    const volatile unsigned int* abort;
    VertexValue* low[2];  // null when soft priority is off
    unsigned int low_capacity;
    unsigned int prio_delta;
    unsigned int solo_max;

    __device__ __forceinline__ LowList low_list(unsigned int index, unsigned int threshold) const {
        return LowList{low[index], low_capacity, threshold, ctrl};
    }
};

// SOLO on block 0: levels back to back from [start, end) until the next batch is larger than
// solo_max, empty, listed hubs or overflowed (or the host asked to stop); then publishes the
// batch and its counters in the state block. Every thread of block 0 calls it.
template <typename Relax, bool WEIGHTED>
__device__ void fused_solo(const FusedArgs& a, unsigned int start, unsigned int end,
                           const LowList& low) {
    __shared__ unsigned int next_end;
    __shared__ unsigned int leave;
    const SendBuffer send{nullptr, 0u, 0u, a.ctrl};
    unsigned int levels = 0;
    unsigned long long processed = 0;
    while (true) {
        const unsigned int count = end - start;
        const DeviceWorklist wl{a.wl_data, a.wl_mask, start, a.ctrl};
        traversal_expand<Relax, WEIGHTED>(a.ops, a.offsets, a.targets, a.weights, wl, count, send,
                                          low, GridShape{1u, 0u});
        ++levels;
        processed += count;
        __syncthreads();  // every append of the level done (this block is the only writer)
        if (threadIdx.x == 0) {
            const unsigned int e = load_volatile(a.ctrl + CTRL_WL_END);
            bool stop = load_volatile(a.ctrl + CTRL_HUB_COUNT) != 0u ||
                        load_volatile(a.ctrl + CTRL_WL_OVERFLOW) != 0u ||
                        load_volatile(a.ctrl + CTRL_LOW_OVERFLOW) != 0u || e == end ||
                        e - end > a.solo_max;
            if (!stop && levels % FUSED_ABORT_POLL == 0u && *a.abort != 0u) {
                *const_cast<volatile unsigned int*>(a.fused + FUSED_SOLO_ABORT) = 1u;
                stop = true;
            }
            next_end = e;
            leave = stop ? 1u : 0u;
        }
        __syncthreads();  // everyone read the decision before the next level appends
        start = end;
        end = next_end;
        if (leave != 0u) {
            break;
        }
    }
    if (threadIdx.x == 0) {
        volatile unsigned int* state = a.fused;
        state[FUSED_START] = start;
        state[FUSED_END] = end;
        state[FUSED_ROUNDS] += levels;
        state[FUSED_SOLO_ROUNDS] += levels;
        add_u64(state, FUSED_PROCESSED, processed);
    }
}

template <typename Relax, bool WEIGHTED>
__device__ void fused_traversal(const FusedArgs& a) {
    // One device owns every vertex: the send buffer is never appended to (capacity 0; an append
    // would be recorded as a send overflow, never written).
    const SendBuffer send{nullptr, 0u, 0u, a.ctrl};
    unsigned int* fused = a.fused;
    while (true) {
        const unsigned int phase = load_volatile(fused + FUSED_PHASE);
        if (phase == FUSED_PHASE_DONE || phase == FUSED_PHASE_STOP) {
            return;
        }
        const unsigned int start = load_volatile(fused + FUSED_START);
        const unsigned int end = load_volatile(fused + FUSED_END);
        const unsigned int threshold = load_volatile(fused + FUSED_THRESHOLD);
        const unsigned int current = load_volatile(fused + FUSED_LOW_CURRENT);
        const LowList low = a.low_list(current, threshold);
        const DeviceWorklist wl{a.wl_data, a.wl_mask, start, a.ctrl};
        if (phase == FUSED_PHASE_EXPAND) {
            traversal_expand<Relax, WEIGHTED>(a.ops, a.offsets, a.targets, a.weights, wl,
                                              end - start, send, low);
        } else if (phase == FUSED_PHASE_SOLO) {
            if (blockIdx.x == 0) {
                fused_solo<Relax, WEIGHTED>(a, start, end, low);
            }
        } else if (phase == FUSED_PHASE_HUBS) {
            traversal_expand_hubs<Relax, WEIGHTED>(a.ops, a.offsets, a.targets, a.weights, wl,
                                                   send, low);
        } else {  // FUSED_PHASE_REEXAMINE: the taken list into the other one
            traversal_reexamine(a.ops.values, a.low[current],
                                load_volatile(fused + FUSED_LOW_TAKEN), wl,
                                a.low_list(current ^ 1u, threshold));
        }
        grid_barrier(fused, [&] {
            fused_next(fused, a.ctrl, a.abort, phase, a.prio_delta, a.solo_max);
        });
    }
}

}  // namespace groute

// The extern "C" entry point of one algorithm's fused traversal:
//   NAME##_fused(values, offsets, targets, weights, wl_data, wl_mask, ctrl, fused, abort,
//                owned_begin, owned_end, low0, low1, low_capacity, prio_delta, solo_max)
// (mirrored by the typed wrapper in crates/groute-worklist/src/traversal/fused.rs). low0/low1
// null: soft priority off.
#define GROUTE_FUSED_TRAVERSAL_KERNEL(NAME, RELAX, WEIGHTED)                                   \
    extern "C" __global__ void NAME##_fused(                                                   \
        unsigned int* values, const unsigned long long* offsets, const unsigned int* targets,  \
        const unsigned int* weights, unsigned int* wl_data, unsigned int wl_mask,              \
        unsigned int* ctrl, unsigned int* fused, const unsigned int* abort,                    \
        unsigned int owned_begin, unsigned int owned_end, groute::VertexValue* low0,           \
        groute::VertexValue* low1, unsigned int low_capacity, unsigned int prio_delta,         \
        unsigned int solo_max) {                                                               \
        const groute::FusedArgs a{groute::MinSplitOps{owned_begin, owned_end, values},         \
                                  offsets, targets, weights, wl_data, wl_mask, ctrl, fused,    \
                                  abort, {low0, low1}, low_capacity, prio_delta, solo_max};    \
        groute::fused_traversal<RELAX, WEIGHTED>(a);                                           \
    }
