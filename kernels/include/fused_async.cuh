// The generic min-label traversal (BFS, SSSP) as ONE persistent kernel per run without any
// barrier (single device): the asynchronous worklist of the Groute model, where an improved
// vertex is expanded as soon as some warp picks it up instead of in the next level. Mirror of
// crates/groute-worklist/src/traversal/fused_async.rs.
//
// Worklist. The positions [0, capacity) of `wl` are filled once each, in order of
// reservation: the seeds at [0, k) by the host, every other position is ASYNC_EMPTY until the
// producer that reserved it (atomicAdd on ASYNC_TAIL) stores its vertex there. There is no
// wrap-around: a reservation past the capacity stores nothing, records the positions needed
// in ASYNC_OVERFLOW and stops the kernel (the host fails the run with CapacityExceeded naming
// wl_capacity). Every lane claims one position at a time (atomicAdd on ASYNC_HEAD, one per
// warp for the lanes that need one), waits until its position holds a vertex, expands it and
// claims the next. Lanes claim positions ahead of the tail and wait there: each position is
// claimed by exactly one lane, so every stored vertex is expanded exactly once.
//
// Expansion. Label correcting, as the non-fused rounds: an arc improves its head by atomicMin
// (after a filtering plain load unless ASYNC_DIRECT_MIN) and an improved head is appended. A
// vertex may be appended more than once (improved again before its copy was expanded); a copy
// reads the vertex's current value when it is expanded, so a stale copy only repeats
// relaxations that fail. Adjacency lists of 32 arcs or more are expanded by the whole warp,
// one list at a time; shorter ones by their lane, THREAD_ARCS arcs per step.
//
// Termination (race-free by construction). ASYNC_PENDING counts the vertices appended or
// seeded and not yet completely expanded: the host sets it to k; an expanding warp adds the
// number of vertices it is about to append BEFORE storing them, and subtracts its expanded
// items only after their last appends. So while any vertex is stored and unexpanded, or
// being expanded, the count is positive; once it reads 0 nobody holds a vertex and nobody can
// append one again: it stays 0. A warp whose lanes all wait for empty positions reads the
// count (and the stop word) and leaves when it is 0 (or a stop is set); positions claimed
// past the last append stay empty.
//
// Abort: warps poll the host's abort word (load_abort, device-mapped pinned memory) every
// ASYNC_ABORT_POLL idle steps and every ASYNC_BUSY_ABORT_POLL x ASYNC_STOP_POLL busy steps; a
// set word, or an overflow, stores a FusedStop reason in
// ASYNC_STOP (first one wins), which every warp reads at each idle step and every
// ASYNC_STOP_POLL steps while busy, and then leaves.
//
// Ordering: an append stores its vertex with a release after the atomicMin that improved it,
// and the claiming lane loads its position with an acquire, so it reads the improved value
// (or a later one) when it expands the vertex.
//
// Launch: cooperatively (every block resident: waiting warps never hold a multiprocessor that
// an unlaunched block needs), any grid up to the resident maximum, blockDim.x a multiple of
// 32 (at most 256 for NAME_fused_async; NAME_fused_async_wide takes 1,024).
#pragma once

#include "fused.cuh"
#include "traversal.cuh"

namespace groute {

enum AsyncWord : unsigned int {
    ASYNC_HEAD = 0,        // next position to claim (own 128-byte line)
    ASYNC_TAIL = 32,       // next position to reserve for an append (own line)
    ASYNC_PENDING = 64,    // vertices stored or being expanded (own line)
    ASYNC_PROCESSED = 96,  // vertices expanded, 64-bit (words 96, 97)
    ASYNC_OVERFLOW = 98,   // positions needed by an append past the capacity (0: none)
    ASYNC_STOP = 99,       // FusedStop: why the kernel stopped early (0: it did not)
    ASYNC_WORDS = 128,
};

enum : unsigned int {
    ASYNC_EMPTY = 0xFFFFFFFFu,  // a position not stored yet (no vertex has this id)
    ASYNC_NO_SLOT = 0xFFFFFFFFu,
    ASYNC_ABORT_POLL = 1024u,   // idle steps of a warp between two polls of the abort word
    ASYNC_STOP_POLL = 64u,      // steps of a busy warp between two reads of the stop word
    ASYNC_BUSY_ABORT_POLL = 16u,  // a busy warp's stop-word reads between two abort polls
    ASYNC_DIRECT_MIN = 4u,      // = FUSED_DIRECT_MIN: atomicMin without the filtering load
};

__device__ __forceinline__ unsigned int load_relaxed_u32(const unsigned int* p) {
    unsigned int v;
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

// The kernel's buffers and settings (its parameters).
struct AsyncArgs {
    MinSplitOps ops;
    const unsigned long long* offsets;
    const unsigned int* targets;
    const unsigned int* weights;
    unsigned int* wl;
    unsigned int capacity;
    unsigned int* state;  // ASYNC_WORDS words
    const unsigned int* abort;
    unsigned int spin_ns;
    unsigned int flags;
};

// Appends this lane's `n` improved heads `u[k]` (where `improved[k]`) after counting them in
// ASYNC_PENDING: one reservation per warp. Call with all 32 lanes.
template <unsigned int K>
__device__ __forceinline__ void async_append(const AsyncArgs& a, const unsigned int (&u)[K],
                                             const bool (&improved)[K], unsigned int n) {
    static_assert(K < 8u, "three bit planes count at most 7 appends per lane");
    unsigned int total;
    unsigned int base;
    unsigned int pos = warp_reserve_n_by<3>(n, total, base, [&](unsigned int t) {
        // Counted before any store: the count never reaches 0 while one is stored unexpanded.
        // The fence and the warp barrier below order the count before every lane's release
        // store.
        atomicAdd(a.state + ASYNC_PENDING, t);
        const unsigned int first = atomicAdd(a.state + ASYNC_TAIL, t);
        __threadfence();
        return first;
    });
    if (total == 0) {
        return;
    }
    __syncwarp();
#pragma unroll
    for (unsigned int k = 0; k < K; ++k) {
        if (improved[k]) {
            if (pos < a.capacity) {
                // Release: the lane that acquires the position sees the improved value.
                store_release(a.wl + pos, u[k]);
            } else {
                atomicMax(a.state + ASYNC_OVERFLOW, pos + 1u);
                atomicCAS(a.state + ASYNC_STOP, 0u, FUSED_STOP_OVERFLOW);
            }
            ++pos;
        }
    }
}

// Relaxes arcs [e, min(e + THREAD_ARCS, end)) of a vertex of `value` (none where !active)
// and appends the improved heads. Call with all 32 lanes.
template <typename Relax, bool WEIGHTED>
__device__ __forceinline__ void async_relax_arcs(const AsyncArgs& a, unsigned long long e,
                                                 unsigned long long end, bool active,
                                                 unsigned int value) {
    bool on[THREAD_ARCS];
    unsigned int u[THREAD_ARCS];
    unsigned int cand[THREAD_ARCS];
#pragma unroll
    for (unsigned int k = 0; k < THREAD_ARCS; ++k) {
        on[k] = active && e + k < end;
        u[k] = on[k] ? a.targets[e + k] : 0u;
        cand[k] = Relax::relax(value, WEIGHTED && on[k] ? a.weights[e + k] : 1u);
    }
    const bool filter = (a.flags & ASYNC_DIRECT_MIN) == 0u;
    unsigned int seen[THREAD_ARCS];
#pragma unroll
    for (unsigned int k = 0; k < THREAD_ARCS; ++k) {
        seen[k] = !on[k] ? 0u : filter ? a.ops.values[u[k]] : 0xFFFFFFFFu;
    }
    bool improved[THREAD_ARCS];
    unsigned int n = 0;
#pragma unroll
    for (unsigned int k = 0; k < THREAD_ARCS; ++k) {
        const bool tried = on[k] && seen[k] > cand[k];
        improved[k] = atomic_min_global_if(a.ops.values + u[k], cand[k], tried) > cand[k];
        n += improved[k] ? 1u : 0u;
    }
    async_append(a, u, improved, n);
}

template <typename Relax, bool WEIGHTED>
__device__ void async_traversal(const AsyncArgs& a) {
    __shared__ unsigned int warp_vertex[32];
    __shared__ unsigned int warp_value[32];
    const unsigned int lane = lane_id();
    const unsigned int warp = threadIdx.x / 32u;
    unsigned int* state = a.state;
    unsigned int slot = ASYNC_NO_SLOT;
    unsigned long long processed = 0;  // lane 0's count for the warp
    unsigned int idle = 0;             // lane 0's polls of the stop word
    unsigned int steps = 0;
    while (true) {
        // Lanes without a position claim one each, with one atomic per warp.
        const unsigned int need = __ballot_sync(0xFFFFFFFFu, slot == ASYNC_NO_SLOT);
        if (need != 0u) {
            const unsigned int leader = __ffs(need) - 1u;
            unsigned int base = 0;
            if (lane == leader) {
                base = atomicAdd(state + ASYNC_HEAD, static_cast<unsigned int>(__popc(need)));
            }
            base = __shfl_sync(0xFFFFFFFFu, base, leader);
            if (slot == ASYNC_NO_SLOT) {
                slot = base + static_cast<unsigned int>(__popc(need & lanemask_lt()));
            }
        }
        // A position past the capacity is never stored (the append that reaches it stops the
        // kernel): its lane waits for the end.
        const unsigned int v = slot < a.capacity ? load_acquire(a.wl + slot) : ASYNC_EMPTY;
        const bool have = v != ASYNC_EMPTY;
        const unsigned int busy = __ballot_sync(0xFFFFFFFFu, have);
        ++steps;
        if (busy == 0u || steps % ASYNC_STOP_POLL == 0u) {
            // Idle (or now and then while busy): has the traversal ended or been stopped?
            unsigned int leave = 0;
            if (lane == 0) {
                const unsigned int pending = load_relaxed_u32(state + ASYNC_PENDING);
                const unsigned int stop = load_relaxed_u32(state + ASYNC_STOP);
                leave = (busy == 0u && pending == 0u) || stop != 0u ? 1u : 0u;
                // The host's word: every ASYNC_ABORT_POLL idle steps, and every
                // ASYNC_BUSY_ABORT_POLL stop-word reads while busy (a frontier that keeps every
                // warp busy must stop on time too).
                const unsigned int period = busy == 0u ? ASYNC_ABORT_POLL : ASYNC_BUSY_ABORT_POLL;
                if (leave == 0u && ++idle % period == 0u && load_abort(a.abort) != 0u) {
                    atomicCAS(state + ASYNC_STOP, 0u, FUSED_STOP_ABORTED);
                    leave = 1u;
                }
            }
            if (__shfl_sync(0xFFFFFFFFu, leave, 0) != 0u) {
                break;
            }
            if (busy == 0u) {
                if (a.spin_ns != 0u) {
                    __nanosleep(a.spin_ns);
                }
                continue;
            }
        }
        if (have) {
            slot = ASYNC_NO_SLOT;
        }
        const unsigned int value = have ? item_value(a.ops, v) : 0u;
        unsigned long long begin = have ? a.offsets[v] : 0ull;
        const unsigned long long end = have ? a.offsets[v + 1u] : 0ull;
        bool mine = have && value != 0xFFFFFFFFu && end > begin;
        // Lists of a warp's width or more: the whole warp, one list at a time.
        while (true) {
            const unsigned int wide = __ballot_sync(0xFFFFFFFFu, mine && end - begin >= 32u);
            if (wide == 0u) {
                break;
            }
            const unsigned int leader = __ffs(wide) - 1u;
            if (lane == leader) {
                warp_vertex[warp] = v;
                warp_value[warp] = value;
                mine = false;
            }
            __syncwarp();
            const unsigned int wv = warp_vertex[warp];
            const unsigned int wval = warp_value[warp];
            const unsigned long long wb = a.offsets[wv];
            const unsigned long long we = a.offsets[wv + 1u];
            __syncwarp();
            for (unsigned long long base = wb; base < we; base += 32u * THREAD_ARCS) {
                async_relax_arcs<Relax, WEIGHTED>(a, base + lane * THREAD_ARCS, we, true, wval);
            }
        }
        // The short lists: each lane its own, THREAD_ARCS arcs per step.
        for (unsigned long long e = begin; __any_sync(0xFFFFFFFFu, mine && e < end);
             e += THREAD_ARCS) {
            async_relax_arcs<Relax, WEIGHTED>(a, e, end, mine && e < end, value);
        }
        // Every append of these items is counted: release them. The warp barrier and the fence
        // order every lane's acquire of its item (and its appends' counts) before the release.
        __syncwarp();
        if (lane == 0) {
            const unsigned int done = static_cast<unsigned int>(__popc(busy));
            processed += done;
            __threadfence();
            atomicSub(state + ASYNC_PENDING, done);
        }
        __syncwarp();
    }
    if (lane == 0 && processed != 0ull) {
        atomicAdd(reinterpret_cast<unsigned long long*>(state + ASYNC_PROCESSED), processed);
    }
}

}  // namespace groute

// The extern "C" entry points of one algorithm's asynchronous fused traversal,
// NAME##_fused_async (blocks of up to 256 threads) and NAME##_fused_async_wide (1,024):
//   NAME##_fused_async(values, offsets, targets, weights, wl, capacity, state, abort,
//                      spin_ns, flags)
// (mirrored by the typed wrapper in crates/groute-worklist/src/traversal/fused_async.rs).
#define GROUTE_ASYNC_TRAVERSAL_ENTRY(ENTRY, BOUNDS, RELAX, WEIGHTED)                           \
    extern "C" __global__ void BOUNDS ENTRY(                                                   \
        unsigned int* values, const unsigned long long* offsets, const unsigned int* targets,  \
        const unsigned int* weights, unsigned int* wl, unsigned int capacity,                  \
        unsigned int* state, const unsigned int* abort, unsigned int spin_ns,                  \
        unsigned int flags) {                                                                  \
        const groute::AsyncArgs a{groute::MinSplitOps{0u, 0xFFFFFFFFu, values},                \
                                  offsets,                                                     \
                                  targets,                                                     \
                                  weights,                                                     \
                                  wl,                                                          \
                                  capacity,                                                    \
                                  state,                                                       \
                                  abort,                                                       \
                                  spin_ns,                                                     \
                                  flags};                                                      \
        groute::async_traversal<RELAX, WEIGHTED>(a);                                           \
    }

#define GROUTE_ASYNC_TRAVERSAL_KERNEL(NAME, RELAX, WEIGHTED)                                   \
    GROUTE_ASYNC_TRAVERSAL_ENTRY(NAME##_fused_async, , RELAX, WEIGHTED)                        \
    GROUTE_ASYNC_TRAVERSAL_ENTRY(NAME##_fused_async_wide, __launch_bounds__(1024, 1), RELAX,    \
                                 WEIGHTED)
