// The grid-wide barrier of the persistent kernels (grid_barrier) and the scoped memory
// operations they share: the fused traversal (fused.cuh), the device-driven PageRank
// (pagerank/pagerank_fused.cu), the direction-optimizing BFS (direction_fused.cuh) and the
// barrier's micro-benchmark (runtime/fused_barrier.cu). A kernel using it is launched
// cooperatively (every block resident at once, so every block a barrier waits for is running
// and will arrive) and keeps the barrier's words (FusedBarrierWord) at the start of a state
// block zeroed by the host.
#pragma once

#include "abi.h"
#include "peer_group.cuh"

namespace groute {

// The barrier's words at the start of its state block are abi.h's GridBarrierWords
// (FusedBarrierWord); a kernel's own words follow FUSED_BARRIER_WORDS.

// The barrier's flags (FusedBarrierFlag) are abi.h's.

// What the action of a barrier hands every block (the next phase and its inputs in the fused
// kernel), published in the state block at FUSED_RECORD: FUSED_RECORD_WORDS values.
struct FusedRecord {
    unsigned int w[FUSED_RECORD_WORDS];
};

// How blocks wait at the grid barrier (kernel arguments, FusedTuning::barrier):
// `spin_ns` is the __nanosleep between two polls (0: poll without sleeping), `flags` holds
// FusedBarrierFlag bits (and the kernel's own flags from bit 4 up).
struct FusedBarrierConfig {
    unsigned int spin_ns;
    unsigned int flags;
};

__device__ __forceinline__ unsigned int load_volatile(const unsigned int* p) {
    return *const_cast<const volatile unsigned int*>(p);
}

// Scoped memory operations (PTX memory model, sm_70+). Relaxed GPU-scope accesses go to L2
// (never a stale L1 line); acquire/release order the accesses around them GPU-wide.
__device__ __forceinline__ unsigned int atomic_add_acq_rel(unsigned int* p, unsigned int v) {
    unsigned int old;
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;"
                 : "=r"(old)
                 : "l"(p), "r"(v)
                 : "memory");
    return old;
}

__device__ __forceinline__ unsigned int load_acquire(const unsigned int* p) {
    unsigned int v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

// The host's abort word (device-mapped pinned host memory): a system-scope load from the
// global window, so every poll reaches the host's memory (never an L1 line, and ordered by the
// PTX memory model with the host's store; a volatile access through a generic address only
// implies this).
// (peer_load_abort of peer_group.cuh, which also reads a null pointer as "not asked".)
__device__ __forceinline__ unsigned int load_abort(const unsigned int* p) {
    return peer_load_abort(p);
}

__device__ __forceinline__ void store_release(unsigned int* p, unsigned int v) {
    asm volatile("st.release.gpu.global.u32 [%0], %1;" : : "l"(p), "r"(v) : "memory");
}

__device__ __forceinline__ void store_relaxed(unsigned int* p, unsigned int v) {
    asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" : : "l"(p), "r"(v) : "memory");
}

// Four consecutive words at 16-byte aligned `p`, one load.
__device__ __forceinline__ uint4 load4_relaxed(const unsigned int* p) {
    uint4 v;
    asm volatile("ld.relaxed.gpu.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p)
                 : "memory");
    return v;
}

__device__ __forceinline__ void store4_relaxed(unsigned int* p, const uint4 v) {
    asm volatile("st.relaxed.gpu.global.v4.u32 [%0], {%1, %2, %3, %4};"
                 :
                 : "l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
                 : "memory");
}

// `n` (a multiple of 4) words from 16-byte aligned `p` into `out`: every load is issued
// before the first result is used, so the whole read costs one L2 round trip.
template <unsigned int N>
__device__ __forceinline__ void load_words(const unsigned int* p, unsigned int (&out)[N]) {
    static_assert(N % 4u == 0u, "whole 16-byte vectors");
#pragma unroll
    for (unsigned int i = 0; i < N; i += 4u) {
        const uint4 v = load4_relaxed(p + i);
        out[i] = v.x;
        out[i + 1u] = v.y;
        out[i + 2u] = v.z;
        out[i + 3u] = v.w;
    }
}

template <unsigned int N>
__device__ __forceinline__ void store_words(unsigned int* p, const unsigned int (&in)[N]) {
#pragma unroll
    for (unsigned int i = 0; i < N; i += 4u) {
        store4_relaxed(p + i, make_uint4(in[i], in[i + 1u], in[i + 2u], in[i + 3u]));
    }
}

__device__ __forceinline__ void fence_acq_rel() {
    asm volatile("fence.acq_rel.gpu;" : : : "memory");
}


__device__ __forceinline__ void store_relaxed_u64(unsigned long long* p, unsigned long long v) {
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" : : "l"(p), "l"(v) : "memory");
}

__device__ __forceinline__ unsigned long long load_relaxed_u64(const unsigned long long* p) {
    unsigned long long v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

// The release record of the barrier that bumps the generation to `tag`: every value goes out
// as one 64-bit word (tag << 32 | value), single-copy atomic, so a reader that sees the tag in
// a word also sees that barrier's value in it.
__device__ __forceinline__ void write_record(unsigned int* fused, unsigned int tag,
                                             const FusedRecord& r) {
    unsigned long long* words = reinterpret_cast<unsigned long long*>(fused + FUSED_RECORD);
#pragma unroll
    for (unsigned int k = 0; k < FUSED_RECORD_WORDS; ++k) {
        store_relaxed_u64(words + k, static_cast<unsigned long long>(tag) << 32 | r.w[k]);
    }
}

// Reads the release record; true when every word carries `tag` (all loads issued together).
__device__ __forceinline__ bool read_record(const unsigned int* fused, unsigned int tag,
                                            FusedRecord& r) {
    const unsigned long long* words =
        reinterpret_cast<const unsigned long long*>(fused + FUSED_RECORD);
    unsigned long long v[FUSED_RECORD_WORDS];
#pragma unroll
    for (unsigned int k = 0; k < FUSED_RECORD_WORDS; ++k) {
        v[k] = load_relaxed_u64(words + k);
    }
    bool current = true;
#pragma unroll
    for (unsigned int k = 0; k < FUSED_RECORD_WORDS; ++k) {
        current = current && static_cast<unsigned int>(v[k] >> 32) == tag;
        r.w[k] = static_cast<unsigned int>(v[k]);
    }
    return current;
}

// Grid-wide barrier (sense by generation). Every thread of every block calls it from
// grid-uniform control flow; `gen` is thread 0's count of barriers passed (0 at the start of
// the kernel: the host zeroes the barrier words and the record), kept in a register so that
// arriving costs no read of the generation word. The arrival counter is never reset: barrier
// gen + 1 is complete at the arrival that makes it (gen + 1) * gridDim.x (mod 2^32), so the
// last block has no store to make visible before the release. Thread 0 of the last block to
// arrive runs `action()` with every other block waiting; the FusedRecord it returns is
// published (tagged gen + 1) and handed to `released(record)` on thread 0 of every block,
// after the acquire and before the block's closing __syncthreads (the place to copy it to
// shared memory); then the last block runs `settle()`, writes that nobody reads before this
// block arrives at a later barrier (off the release path).
//
// Ordering: the block's writes precede its arrival (__syncthreads, then a release arrival:
// atom.acq_rel, or __threadfence + atomicAdd); the last arrival acquires every earlier one
// (each arrival is an acquire-release read-modify-write reading the previous one, or fence +
// atomic); the action's writes precede the release. Generation mode: the record is written
// (relaxed) before the release of the generation (st.release, or __threadfence + store); a
// waiter acquires the generation (ld.acquire poll, or volatile poll + __threadfence) and then
// reads the record. Tagged mode (FUSED_BARRIER_TAGGED): a fence (fence.acq_rel, or
// __threadfence) then the tagged record words are the release; a waiter polls the record
// until every word carries the new tag, then fences (the acquire half of the fence-fence
// synchronisation), so it sees everything the grid wrote before the barrier. settle()'s
// writes follow the release, and precede the last block's next arrival (a release), so the
// action of any later barrier sees them.
template <typename Action, typename Released, typename Settle>
__device__ __forceinline__ void grid_barrier(unsigned int* fused, unsigned int& gen,
                                             const FusedBarrierConfig config, Action action,
                                             Released released, Settle settle) {
    __syncthreads();
    if (threadIdx.x == 0) {
        const bool fenced = (config.flags & FUSED_BARRIER_FENCED) != 0u;
        const bool tagged = (config.flags & FUSED_BARRIER_TAGGED) != 0u;
        const unsigned int tag = gen + 1u;
        unsigned int* count = fused + FUSED_BARRIER_COUNT;
        unsigned int* generation = fused + FUSED_BARRIER_GEN;
        unsigned int arrived;
        if (fenced) {
            __threadfence();
            arrived = atomicAdd(count, 1u);
        } else {
            arrived = atomic_add_acq_rel(count, 1u);
        }
        FusedRecord record;
        const bool last = arrived + 1u == tag * gridDim.x;
        if (last) {
            if (fenced) {
                __threadfence();
            }
            record = action();
            if (tagged) {
                if (fenced) {
                    __threadfence();
                } else {
                    fence_acq_rel();
                }
                write_record(fused, tag, record);
            } else {
                write_record(fused, tag, record);
                if (fenced) {
                    __threadfence();
                    store_relaxed(generation, tag);
                } else {
                    store_release(generation, tag);
                }
            }
        } else {
            if (tagged) {
                while (!read_record(fused, tag, record)) {
                    if (config.spin_ns != 0u) {
                        __nanosleep(config.spin_ns);
                    }
                }
                if (fenced) {
                    __threadfence();
                } else {
                    fence_acq_rel();
                }
            } else {
                if (fenced) {
                    while (load_volatile(generation) == gen) {
                        if (config.spin_ns != 0u) {
                            __nanosleep(config.spin_ns);
                        }
                    }
                    __threadfence();
                } else {
                    while (load_acquire(generation) == gen) {
                        if (config.spin_ns != 0u) {
                            __nanosleep(config.spin_ns);
                        }
                    }
                }
                read_record(fused, tag, record);
            }
        }
        gen = tag;
        released(record);
        if (last) {
            settle();
        }
    }
    __syncthreads();
}

}  // namespace groute
