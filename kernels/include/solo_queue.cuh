// SOLO-ASYNC: the fused traversal's single-block mode without levels (fused.cuh, SOLO with
// FUSED_SOLO_ASYNC). Block 0 runs a FIFO work queue in shared memory instead of
// level-synchronous SOLO levels separated by __syncthreads: each warp claims up to 32 items
// at the queue's head (one shared atomic), relaxes their arcs (atomicMin on the values, as
// SOLO does), and appends the heads it improved at the tail (one shared atomic per warp). No
// warp waits for the slowest one of a level: a level's cost was its barriers and its slowest
// warp, not its bandwidth. The traversal is label-correcting, so an item expanded with a value
// that improves later is harmless (the improvement appends the vertex again); FIFO order keeps
// the work close to BFS order, and the extra expansions show in the processed-items count.
//
// Positions. The queue numbers its items by position q from 0: positions [0, initial) are the
// batch the phase started with, read from the worklist (positions start + q); positions from
// `initial` on are the appended items, kept in a ring of `capacity` entries (a power of two) at
// ring index r = q - initial, slot r % capacity, each with its vertex and its adjacency range
// (32-bit arc positions, as the shared frontier: the host sets FUSED_SOLO_ASYNC only for graphs
// of fewer than 2^32 arcs). Three counters in shared memory: HEAD (positions claimed), TAIL
// (positions reserved: initial + appends) and FINISHED (positions expanded, every append of
// their arcs reserved). FINISHED <= HEAD <= TAIL at every moment.
//
// Slot states (seq[slot], compared with wrapping arithmetic): 2r + 1 once ring index r is
// written (filled), 2r + 2 once it was read (consumed); a slot starts as "consumed r - capacity"
// (free for r). A writer of r waits until its slot holds "consumed r - capacity", writes the
// entry, fences (__threadfence_block) and publishes "filled r"; a reader of r waits for "filled
// r", fences, reads, fences and publishes "consumed r". So no entry is overwritten before it is
// read, nor read before it is written.
//
// Claims and appends. A warp's lane 0 claims n = min(32, TAIL - HEAD) positions by a CAS on
// HEAD (never beyond TAIL), and every lane reads its position right away (before the warp
// relaxes or appends anything). An append reserves positions by a CAS on TAIL that succeeds
// only while the ring can hold them: TAIL + n - max(HEAD, initial) <= capacity, i.e. every
// ring index that the new ones reuse is already claimed. Why no wait deadlocks: a writer of r
// waits for the reader of r - capacity, a warp that claimed it and reads it before doing
// anything else; that reader waits at most for the writer of r - capacity, which waits for an
// earlier index again, down to indices below `capacity`, whose slots start free (a claim spans
// at most 32 < capacity positions, so a warp never waits for itself). Waiting lanes sleep
// (__nanosleep) between polls, so they leave the issue slots to the warps they wait for
// (independent thread scheduling: every warp of the block progresses).
//
// Termination. A warp finishes its claim (FINISHED += n) after the appends of its arcs are
// reserved (a warp fence orders them). A warp that finds the queue empty (HEAD == TAIL) reads
// FINISHED and then TAIL: equal, every reserved position was expanded, so nothing is in flight
// and nothing can be appended any more: the phase's work is done (every warp sees the same
// frozen counters). Otherwise it sleeps and looks again.
//
// Leaving early (STOP). Warps stop claiming when STOP is set: when the queue holds more than
// `bound` (solo_max) unclaimed items (the grid's turn, as SOLO leaves when a level exceeds
// solo_max), when an append finds the ring full, when a warp met a hub (degree at least
// HUB_MIN_DEGREE: the warp expands it itself, warp granularity, and the mode ends, as in SOLO)
// or when the host's abort word is set (polled every SOLO_QUEUE_POLL claims of 32). Items
// already claimed are still expanded; every append made after STOP goes to the worklist itself
// (through the control words in ctrl, from position `end` of the entry batch on: nobody else
// touches the worklist or ctrl while block 0 runs SOLO), as does every append the ring cannot
// hold, so no item is dropped. When every warp left, the block (after a __syncthreads, so
// every fill is done) copies the unclaimed positions [HEAD, TAIL) after them: the worklist's
// positions [end, wl end) are then the next batch, exactly where the grid expects SOLO's next
// batch (a worklist overflow is recorded in ctrl as for any append and stops the kernel).
//
// Counting (issue #6). The host counts the items a run produced from the worklist's end
// (every SOLO level and grid expand appends there), and the items it left as produced +
// seeds - processed. The ring's items never reach the worklist, and an early stop copies the
// unclaimed entry positions [HEAD, initial) to it a second time, so the phase reports both
// differences beside its items: `unlisted` = max(HEAD - initial, 0), the ring items it
// expanded (produced, never in the worklist), and `relisted` = max(initial - HEAD, 0), the
// entry items the hand-over wrote again (in the worklist twice, produced once); the action
// adds unlisted - relisted to the state block's FUSED_UNLISTED and the host adds that to the
// worklist's count. Without it a SOLO-ASYNC run that the host stopped reported nothing
// outstanding (its expanded ring items outnumbered the worklist's items, and the host's
// difference saturated at 0), the same answer as a kernel that ignored the word and ran to
// completion, although by the code the kernel stops early and hands the next item over: the
// poll fires (HEAD crosses a multiple of SOLO_QUEUE_CLAIM * SOLO_QUEUE_POLL once per that many
// positions, also one claim of one item at a time on a path), its STOP sends the claimed
// item's appends to the worklist, and the report's batch holds them; only the count lost
// them. The test the_fused_kernel_stops_early_when_asked_to now tells the two apart (exactly
// one item outstanding on a path).
//
// Launch with blockDim.x a multiple of 32, at most 1024. Self-contained (NVRTC).
#pragma once

#include "solo_frontier.cuh"
#include "traversal.cuh"

namespace groute {

enum SoloQueueWord : unsigned int {
    SOLO_QUEUE_HEAD = 0,      // positions claimed
    SOLO_QUEUE_TAIL = 1,      // positions reserved (the entry batch included)
    SOLO_QUEUE_FINISHED = 2,  // positions expanded
    SOLO_QUEUE_STOP = 3,      // nonzero: no more claims; appends go to the worklist
    SOLO_QUEUE_ABORT = 4,     // the host's abort word was seen set
    SOLO_QUEUE_WORDS = 8,
};

enum : unsigned int {
    SOLO_QUEUE_FULL = 0xFFFFFFFFu,  // reserve's answer when the ring cannot take the items
    SOLO_QUEUE_SPIN_NS = 32,        // sleep of a waiting lane between two polls
    SOLO_QUEUE_CLAIM = 32,          // items per claim (one per lane)
    SOLO_QUEUE_POLL = 64,           // claims of 32 between two polls of the abort word
};

__device__ __forceinline__ unsigned int load_shared_volatile(const unsigned int* p) {
    return *const_cast<const volatile unsigned int*>(p);
}

__device__ __forceinline__ void store_shared_volatile(unsigned int* p, unsigned int v) {
    *const_cast<volatile unsigned int*>(p) = v;
}

// The queue (shared memory) and the worklist behind it. A Worklist for expand_item_lists:
// append_warp and append_warp_n put improved heads at the tail (or, after STOP or when the
// ring is full, into the worklist).
struct SoloQueue : KeptRanges {
    SoloFrontier ring;  // entries (vertex, begin, end); capacity a power of two, >= 64
    unsigned int* seq;  // slot states (see the file comment)
    unsigned int* words;  // SoloQueueWord counters
    unsigned int initial;  // positions [0, initial): the entry batch, worklist start + q
    DeviceWorklist wl;     // first: the entry batch's start; ctrl: the global control words
    unsigned int bound;    // STOP when more unclaimed items than this (solo_max)

    __device__ __forceinline__ unsigned int slot(unsigned int r) const {
        return r & (ring.capacity - 1u);
    }

    // Every thread of the block, then a __syncthreads before any other use.
    __device__ __forceinline__ void init() const {
        for (unsigned int s = threadIdx.x; s < ring.capacity; s += blockDim.x) {
            seq[s] = 2u * (s - ring.capacity) + 2u;  // consumed s - capacity: free for s
        }
        if (threadIdx.x < SOLO_QUEUE_WORDS) {
            words[threadIdx.x] = threadIdx.x == SOLO_QUEUE_TAIL ? initial : 0u;
        }
    }

    __device__ __forceinline__ void stop() const { store_shared_volatile(words + SOLO_QUEUE_STOP, 1u); }

    __device__ __forceinline__ bool stopped() const {
        return load_shared_volatile(words + SOLO_QUEUE_STOP) != 0u;
    }

    // One lane: reserves `n` positions at the tail; their first, or SOLO_QUEUE_FULL (STOP
    // set, or the ring cannot hold them: then STOP is set).
    __device__ __forceinline__ unsigned int reserve(unsigned int n) const {
        if (stopped()) {
            return SOLO_QUEUE_FULL;
        }
        unsigned int t = load_shared_volatile(words + SOLO_QUEUE_TAIL);
        while (true) {
            const unsigned int h = load_shared_volatile(words + SOLO_QUEUE_HEAD);
            const unsigned int used_from = h > initial ? h : initial;
            if (used_from > t) {  // HEAD read after TAIL moved on: read TAIL again
                t = load_shared_volatile(words + SOLO_QUEUE_TAIL);
                continue;
            }
            if (t + n - used_from > ring.capacity) {
                stop();
                return SOLO_QUEUE_FULL;
            }
            const unsigned int old = atomicCAS(words + SOLO_QUEUE_TAIL, t, t + n);
            if (old == t) {
                return t;
            }
            t = old;
        }
    }

    // Writes position q (>= initial, reserved by this lane's warp) and publishes it.
    __device__ __forceinline__ void fill(unsigned int q, unsigned int item, unsigned int begin,
                                         unsigned int end) const {
        const unsigned int r = q - initial;
        const unsigned int s = slot(r);
        while (load_shared_volatile(seq + s) != 2u * (r - ring.capacity) + 2u) {
            __nanosleep(SOLO_QUEUE_SPIN_NS);
        }
        __threadfence_block();
        store_shared_volatile(ring.vertex + s, item);
        store_shared_volatile(ring.begin + s, begin);
        store_shared_volatile(ring.end + s, end);
        __threadfence_block();
        store_shared_volatile(seq + s, 2u * r + 1u);
    }

    // Reads claimed position q: its vertex and adjacency range.
    __device__ __forceinline__ void take(unsigned int q, unsigned int& v,
                                         unsigned long long& begin,
                                         unsigned long long& end) const {
        if (q < initial) {
            v = wl.at(wl.first + q);
            begin = offsets[v];
            end = offsets[v + 1];
            return;
        }
        const unsigned int r = q - initial;
        const unsigned int s = slot(r);
        while (load_shared_volatile(seq + s) != 2u * r + 1u) {
            __nanosleep(SOLO_QUEUE_SPIN_NS);
        }
        __threadfence_block();
        v = load_shared_volatile(ring.vertex + s);
        begin = load_shared_volatile(ring.begin + s);
        end = load_shared_volatile(ring.end + s);
        __threadfence_block();
        store_shared_volatile(seq + s, 2u * r + 2u);
    }

    // The vertex at position q once every warp left (every reserved position filled).
    __device__ __forceinline__ unsigned int item_at(unsigned int q) const {
        return q < initial ? wl.at(wl.first + q) : ring.vertex[slot(q - initial)];
    }

    // Lane 0: claims up to SOLO_QUEUE_CLAIM positions from the head into [first, first + n);
    // returns n, or 0 when the warp is to leave (STOP, or the work is done). `poll_abort` is
    // called once per SOLO_QUEUE_POLL claims of the block; true sets STOP.
    template <typename PollAbort>
    __device__ __forceinline__ unsigned int claim(unsigned int& first,
                                                  PollAbort poll_abort) const {
        while (true) {
            if (stopped()) {
                return 0;
            }
            const unsigned int h = load_shared_volatile(words + SOLO_QUEUE_HEAD);
            const unsigned int t = load_shared_volatile(words + SOLO_QUEUE_TAIL);  // >= h
            if (h == t) {
                const unsigned int f = load_shared_volatile(words + SOLO_QUEUE_FINISHED);
                __threadfence_block();
                if (f == load_shared_volatile(words + SOLO_QUEUE_TAIL)) {
                    return 0;  // nothing in flight, nothing left: done
                }
                __nanosleep(SOLO_QUEUE_SPIN_NS);
                continue;
            }
            if (t - h > bound) {
                stop();  // the grid's turn
                return 0;
            }
            const unsigned int n = t - h < SOLO_QUEUE_CLAIM ? t - h : SOLO_QUEUE_CLAIM;
            if (atomicCAS(words + SOLO_QUEUE_HEAD, h, h + n) == h) {
                const unsigned int period = SOLO_QUEUE_CLAIM * SOLO_QUEUE_POLL;
                if (h / period != (h + n) / period && poll_abort()) {
                    store_shared_volatile(words + SOLO_QUEUE_ABORT, 1u);
                    stop();
                }
                first = h;
                return n;
            }
        }
    }

    // Lane 0, after the warp's appends for its claim of n (a warp fence before).
    __device__ __forceinline__ void finish(unsigned int n) const {
        atomicAdd(words + SOLO_QUEUE_FINISHED, n);
    }

    // The block and warp granularity's appends (call from warp-uniform control flow).
    __device__ __forceinline__ void append_warp(unsigned int item, bool keep) const {
        unsigned int total;
        unsigned int base;
        const unsigned int q =
            warp_reserve_by(keep, total, base, [&](unsigned int n) { return reserve(n); });
        if (total == 0u) {
            return;
        }
        if (base == SOLO_QUEUE_FULL) {
            wl.append_warp(item, keep);
        } else if (keep) {
            fill(q, item, offset(item), offset(item + 1u));
        }
    }

    // The thread granularity's appends, with the ranges the caller loaded (HeadRanges); all
    // 32 lanes.
    template <unsigned int K>
    __device__ __forceinline__ void append_warp_n(const unsigned int (&items)[K],
                                                  const bool (&keep)[K], unsigned int n,
                                                  const unsigned int (&begin)[K],
                                                  const unsigned int (&end)[K]) const {
        static_assert(K < 8u, "warp_prefix_n<3> counts at most 7 items per lane");
        unsigned int total;
        unsigned int base;
        unsigned int q =
            warp_reserve_n_by<3>(n, total, base, [&](unsigned int t) { return reserve(t); });
        if (total == 0u) {
            return;
        }
        if (base == SOLO_QUEUE_FULL) {
            wl.append_warp_n(items, keep, n);
            return;
        }
#pragma unroll
        for (unsigned int k = 0; k < K; ++k) {
            if (keep[k]) {
                fill(q, items[k], begin[k], end[k]);
                ++q;
            }
        }
    }
};

// The ring's slot states (static shared memory of the build; ENTRIES a power of two).
template <unsigned int ENTRIES>
struct SoloQueueSlots {
    unsigned int seq[ENTRIES];
    unsigned int words[SOLO_QUEUE_WORDS];
};

// What a SOLO-ASYNC phase did.
struct SoloQueueResult {
    unsigned int end;        // the worklist's end: the next batch is [entry end, end)
    unsigned int processed;  // items expanded
    unsigned int unlisted;   // ring items expanded: produced, never in the worklist
    unsigned int relisted;   // entry items written to the worklist again (unclaimed)
    bool aborted;            // the host's abort word was seen set
};

// Runs SOLO-ASYNC on the calling block (every thread calls it) from the batch [start, end) of
// `wl` (whose ctrl are the global control words, block 0 the only user), with `frontier`'s
// arrays as the ring, deferring to `low` (soft priority: its threshold is fixed during the
// phase, as in SOLO; its appends and overflow go through ctrl as the grid's do); returns when the work is done or the mode ends (see the file comment),
// with the next batch written at [end, result.end).
template <typename Relax, bool WEIGHTED, unsigned int ENTRIES, typename PollAbort>
__device__ SoloQueueResult solo_queue_run(const MinSplitOps ops,
                                          const unsigned long long* offsets,
                                          const unsigned int* targets,
                                          const unsigned int* weights, const DeviceWorklist wl,
                                          unsigned int end, const LowList low,
                                          SoloFrontier frontier, unsigned int bound,
                                          bool filter_loads, PollAbort poll_abort) {
    static_assert(ENTRIES >= 2u * SOLO_QUEUE_CLAIM && (ENTRIES & (ENTRIES - 1u)) == 0u,
                  "a ring of a power of two entries, more than a claim");
    __shared__ SoloQueueSlots<ENTRIES> slots;
    __shared__ unsigned int copy_base;
    frontier.capacity = ENTRIES;
    const SoloQueue queue{{offsets}, frontier, slots.seq, slots.words, end - wl.first, wl, bound};
    queue.init();
    __syncthreads();
    // One device (unbounded, the only caller) owns every vertex: nothing is sent.
    const SendBuffer send{nullptr, 0u, 0u, wl.ctrl};
    const unsigned int lane = lane_id();
    while (true) {
        unsigned int first = 0;
        unsigned int n = 0;
        if (lane == 0u) {
            n = queue.claim(first, poll_abort);
        }
        n = __shfl_sync(0xFFFFFFFFu, n, 0);
        if (n == 0u) {
            break;
        }
        first = __shfl_sync(0xFFFFFFFFu, first, 0);
        bool have = lane < n;
        unsigned int v = 0;
        unsigned long long begin = 0;
        unsigned long long arcs_end = 0;
        if (have) {
            queue.take(first + lane, v, begin, arcs_end);
            if (arcs_end - begin >= HUB_MIN_DEGREE) {
                queue.stop();  // a hub ends the mode (this warp expands it)
            }
        }
        have = have && arcs_end > begin;
        expand_item_lists<Relax, WEIGHTED>(ops, targets, weights, queue, send, low, have, v,
                                           begin, arcs_end, FreshValue{ops.values + v},
                                           filter_loads, false);
        __threadfence_block();
        __syncwarp();
        if (lane == 0u) {
            queue.finish(n);
        }
    }
    __syncthreads();  // every warp left: every reserved position is filled
    const unsigned int head = slots.words[SOLO_QUEUE_HEAD];
    const unsigned int left = slots.words[SOLO_QUEUE_TAIL] - head;
    if (threadIdx.x == 0u && left != 0u) {
        copy_base = atomicAdd(wl.ctrl + CTRL_WL_END, left);
    }
    __syncthreads();
    for (unsigned int i = threadIdx.x; i < left; i += blockDim.x) {
        wl.put(copy_base + i, queue.item_at(head + i));
    }
    __syncthreads();  // the copy done, and every thread read the words below
    const unsigned int initial = queue.initial;
    return SoloQueueResult{*const_cast<const volatile unsigned int*>(wl.ctrl + CTRL_WL_END),
                           slots.words[SOLO_QUEUE_FINISHED],
                           head > initial ? head - initial : 0u,
                           initial > head ? initial - head : 0u,
                           slots.words[SOLO_QUEUE_ABORT] != 0u};
}

}  // namespace groute
