// Device-driven runs on several GPUs: one persistent kernel per device, the devices exchanging
// data by direct peer stores and synchronising through a mailbox in device 0's memory, with no
// host in the loop. Mirror of crates/groute-core/src/cuda/peer_group.rs (which allocates the
// mailbox, checks peer access and builds the PeerGroup parameter).
//
// peer_allreduce_sum is an all-reduce of up to PEER_MAX_VALUES u64 per device that is also a
// barrier across the devices. ONE thread per device calls it, every device makes the same
// sequence of calls, and `exchange` is the call's index (0, 1, 2, ... on every device).
//
// Mailbox (u64 words, zeroed by the host before each run):
//   [PEER_ARRIVALS]   arrivals so far, never reset (own 128-byte line)
//   [PEER_GENERATION] exchanges completed (own line, with PEER_FAILED beside it)
//   [PEER_FAILED]     nonzero once a device gave up (its PeerStatus): the others leave too
//   [PEER_PENDING]    device-driven traversals (fused.cuh, Several devices): members running
//                     plus items published to a member and not yet taken; 0 means done
//   [PEER_SLOTS ...]  slots[2][PEER_MAX_DEVICES][PEER_MAX_VALUES]: exchange e uses parity e & 1
//
// Protocol of exchange e on device r: write the values into slots[e & 1][r]; fence (system
// scope: it also orders every peer write this device made before the call, see below); one
// atomic add (acq_rel, system scope) on the arrivals. The arrival that reads (e + 1) * size - 1
// is the last of exchange e: it stores generation = e + 1 (release, system scope). The others
// poll the generation (acquire) until it reaches e + 1. Then every device sums the slots.
//
// Why it is race-free:
// - Counting: a device arrives at exchange e + 1 only after the generation reached e + 1, which
//   needs all `size` arrivals of exchange e; so the arrivals of exchange e are exactly the
//   counter values [e * size, (e + 1) * size) and the last one is recognised without a reset.
// - Visibility: the arrivals form one release sequence on the counter; the last arrival's
//   acquire-release RMW synchronises with every earlier arrival, and its release of the
//   generation hands all of that (every device's slot and prior writes) to every poller's
//   acquire.
// - Slot reuse: slots of parity e & 1 are next written at exchange e + 2, after the writer
//   passed exchange e + 1, i.e. after every device arrived at e + 1, which each does only after
//   it summed the slots of exchange e.
//
// Peer data written by other threads: a thread that stores into a peer's memory executes
// __threadfence_system() after its stores; a grid barrier of its device then orders it before
// the calling thread, whose fence and release arrival publish it (cumulativity), and a grid
// barrier after the call orders the readers after the acquire.
//
// Failure: the host's abort word, a wait longer than timeout_ns (%globaltimer), or another
// device's PEER_FAILED end the wait (checked every PEER_POLL_CHECK polls); the device stores
// its status in PEER_FAILED so the others leave at once, and the caller stops its kernel and
// reports it. The sums are then unspecified.
//
// The start gate: a member that waits for a peer that has not started yet can keep that peer
// from ever starting. Its kernel keeps its GPU busy, and a driver call of another host thread
// that waits for that GPU (a free, a module load, a synchronous copy) can hold the host's
// launch of the peer behind it until the waiting member gives up (parallel test threads hit
// this where the same tests one at a time do not). So the first exchange
// completes only once every member is running, and otherwise the run is cancelled: each
// member's kernel adds 1 to [PEER_START] as it starts (peer_start_arrive, no wait); at
// exchange 0, before anything else, a member waits for the verdict (peer_start_verdict): one
// that reads count == size sets PEER_START_GO, one that waited PEER_START_WINDOW_NS (or saw
// the abort word) sets PEER_START_CANCELLED. Both are set by compare-and-swap on a word that
// holds neither, so exactly one is ever set and every member reads the same verdict: all go
// on, or all stop at their exchange 0 with PEER_CANCELLED; the host waits for every member
// (which lets the blocked calls through), resets every member's state and the mailbox, and
// launches them all again (PeerGroup::start_cancelled, PeerGroup::run_started). Work a member
// did before its exchange 0 (stores into peers included) is discarded by that reset.
#pragma once

#include "abi.h"

namespace groute {

constexpr unsigned int PEER_MAX_DEVICES = 8;
constexpr unsigned int PEER_MAX_VALUES = 8;
constexpr unsigned int PEER_ARRIVALS = 0;
constexpr unsigned int PEER_START = 8;
constexpr unsigned int PEER_GENERATION = 16;
constexpr unsigned int PEER_FAILED = 17;
constexpr unsigned int PEER_PENDING = 24;
constexpr unsigned int PEER_SLOTS = 32;
constexpr unsigned int PEER_MAILBOX_WORDS = PEER_SLOTS + 2u * PEER_MAX_DEVICES * PEER_MAX_VALUES;
constexpr unsigned int PEER_POLL_CHECK = 64;
constexpr unsigned long long PEER_START_GO = 1ull << 62;
constexpr unsigned long long PEER_START_CANCELLED = 1ull << 63;
// How long a started member waits for the others before it cancels the start.
constexpr unsigned long long PEER_START_WINDOW_NS = 10000000ull;

enum PeerStatus : unsigned int {
    PEER_OK = 0,
    PEER_ABORTED = 1,
    PEER_TIMED_OUT = 2,
    PEER_CANCELLED = 3,  // the start gate was cancelled: the host starts the run again
};

// The kernel parameter is abi.h's PeerGroup (groute_kernels::abi::PeerGroup).

__device__ __forceinline__ unsigned long long peer_clock_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// System-scope loads and stores of one word (the peers' memory over the link, or this
// device's memory that a peer writes): NAME(p) / NAME(p, v) for ORDER (relaxed, acquire,
// release) and TYPE (u64, u32; CONSTRAINT its asm register class).
#define GROUTE_PEER_LOAD(NAME, ORDER, T, TYPE, CONSTRAINT)                                   \
    __device__ __forceinline__ T NAME(const T* p) {                                           \
        T v;                                                                                  \
        asm volatile("ld." ORDER ".sys.global." TYPE " %0, [%1];"                             \
                     : "=" CONSTRAINT(v)                                                      \
                     : "l"(__cvta_generic_to_global(p))                                       \
                     : "memory");                                                             \
        return v;                                                                             \
    }
#define GROUTE_PEER_STORE(NAME, ORDER, T, TYPE, CONSTRAINT)                                  \
    __device__ __forceinline__ void NAME(T* p, T v) {                                         \
        asm volatile("st." ORDER ".sys.global." TYPE " [%0], %1;"                             \
                     :                                                                        \
                     : "l"(__cvta_generic_to_global(p)), CONSTRAINT(v)                        \
                     : "memory");                                                             \
    }

GROUTE_PEER_LOAD(peer_load_acquire, "acquire", unsigned long long, "u64", "l")
GROUTE_PEER_LOAD(peer_load_relaxed, "relaxed", unsigned long long, "u64", "l")
GROUTE_PEER_STORE(peer_store_relaxed, "relaxed", unsigned long long, "u64", "l")
GROUTE_PEER_STORE(peer_store_release, "release", unsigned long long, "u64", "l")
GROUTE_PEER_LOAD(peer_load_acquire_u32, "acquire", unsigned int, "u32", "r")
GROUTE_PEER_LOAD(peer_load_relaxed_u32, "relaxed", unsigned int, "u32", "r")
GROUTE_PEER_STORE(peer_store_relaxed_u32, "relaxed", unsigned int, "u32", "r")
GROUTE_PEER_STORE(peer_store_release_u32, "release", unsigned int, "u32", "r")
#undef GROUTE_PEER_LOAD
#undef GROUTE_PEER_STORE

// The acquire half of the fence pattern: after a relaxed load that observed a peer's release,
// this thread's later accesses (and, through a CTA barrier, its block's) see what the peer
// wrote before that release. Unlike ld.acquire, it is paid only where the caller asks for it
// (ld.acquire invalidates the SM's L1 on every load, changed or not).
__device__ __forceinline__ void peer_fence_acquire() {
    asm volatile("fence.acq_rel.sys;" : : : "memory");
}

// Adds `delta` (two's complement: a negative count wraps) to `*p`, system scope, no result.
__device__ __forceinline__ void peer_add(unsigned long long* p, unsigned long long delta) {
    asm volatile("red.relaxed.sys.global.add.u64 [%0], %1;"
                 :
                 : "l"(__cvta_generic_to_global(p)), "l"(delta)
                 : "memory");
}

__device__ __forceinline__ unsigned long long peer_arrive(unsigned long long* p) {
    unsigned long long old;
    asm volatile("atom.acq_rel.sys.global.add.u64 %0, [%1], 1;"
                 : "=l"(old)
                 : "l"(__cvta_generic_to_global(p))
                 : "memory");
    return old;
}

__device__ __forceinline__ unsigned long long peer_cas(unsigned long long* p,
                                                       unsigned long long expected,
                                                       unsigned long long desired) {
    unsigned long long old;
    asm volatile("atom.acq_rel.sys.global.cas.b64 %0, [%1], %2, %3;"
                 : "=l"(old)
                 : "l"(__cvta_generic_to_global(p)), "l"(expected), "l"(desired)
                 : "memory");
    return old;
}

__device__ __forceinline__ unsigned int peer_load_abort(const unsigned int* p) {
    if (p == nullptr) {
        return 0u;
    }
    unsigned int v;
    asm volatile("ld.relaxed.sys.global.u32 %0, [%1];"
                 : "=r"(v)
                 : "l"(__cvta_generic_to_global(p))
                 : "memory");
    return v;
}

// The failure checks of a wait that began at `started` (%globaltimer): a peer's failure,
// the host's abort word, the group's timeout. On failure the device stores its status in
// PEER_FAILED (the others leave too) and returns it; else PEER_OK.
__device__ __forceinline__ unsigned int peer_wait_failed(const PeerGroup& g,
                                                         unsigned long long started) {
    unsigned int status = PEER_OK;
    const unsigned long long failed = peer_load_relaxed(g.mailbox + PEER_FAILED);
    if (failed != 0ull) {
        status = PEER_ABORTED;
    } else if (peer_load_abort(g.abort) != 0u) {
        status = PEER_ABORTED;
    } else if (peer_clock_ns() - started > g.timeout_ns) {
        status = PEER_TIMED_OUT;
    }
    if (status != PEER_OK) {
        peer_store_relaxed(g.mailbox + PEER_FAILED, status);
    }
    return status;
}

// Waits until `*word` (acquire, system scope) reaches `target`, running the failure checks
// every PEER_POLL_CHECK polls of a wait that began at `started`. Returns PEER_OK or the
// failure.
__device__ __forceinline__ unsigned int peer_wait_for(const PeerGroup& g,
                                                      const unsigned long long* word,
                                                      unsigned long long target,
                                                      unsigned long long started) {
    unsigned int polls = 0;
    while (peer_load_acquire(word) < target) {
        if (++polls % PEER_POLL_CHECK != 0u) {
            continue;
        }
        const unsigned int status = peer_wait_failed(g, started);
        if (status != PEER_OK) {
            return status;
        }
    }
    return PEER_OK;
}

// Sets `flag` on the start word unless a verdict is already there (`seen`: the word as last
// read). Returns whether the verdict is PEER_START_GO.
__device__ __forceinline__ bool peer_start_decide(unsigned long long* word,
                                                  unsigned long long seen,
                                                  unsigned long long flag) {
    for (;;) {
        if ((seen & (PEER_START_GO | PEER_START_CANCELLED)) != 0ull) {
            return (seen & PEER_START_GO) != 0ull;
        }
        const unsigned long long old = peer_cas(word, seen, seen | flag);
        if (old == seen) {
            return flag == PEER_START_GO;
        }
        seen = old;
    }
}

// The start gate's arrival (header comment): ONE thread per member, first thing in the
// kernel. It does not wait.
__device__ __forceinline__ void peer_start_arrive(const PeerGroup& g) {
    if (g.size > 1u) {
        asm volatile("red.relaxed.sys.global.add.u64 [%0], 1;"
                     :
                     : "l"(__cvta_generic_to_global(g.mailbox + PEER_START))
                     : "memory");
    }
}

// The start gate's verdict, taken by the first exchange (both all-reduces call it first,
// with their exchange index): PEER_OK at any exchange but 0 or once every member arrived,
// PEER_CANCELLED when the start was cancelled (by this member after PEER_START_WINDOW_NS or
// the abort word, or by another).
__device__ unsigned int peer_start_verdict(const PeerGroup& g, unsigned int exchange) {
    if (exchange != 0u || g.size <= 1u) {
        return PEER_OK;
    }
    unsigned long long* const word = g.mailbox + PEER_START;
    const unsigned long long started = peer_clock_ns();
    unsigned int polls = 0;
    for (;;) {
        const unsigned long long seen = peer_load_acquire(word);
        bool go = false;
        if ((seen & (PEER_START_GO | PEER_START_CANCELLED)) != 0ull) {
            go = (seen & PEER_START_GO) != 0ull;
        } else if (seen == g.size) {
            go = peer_start_decide(word, seen, PEER_START_GO);
        } else if (++polls % PEER_POLL_CHECK == 0u &&
                   (peer_clock_ns() - started > PEER_START_WINDOW_NS ||
                    peer_load_abort(g.abort) != 0u)) {
            go = peer_start_decide(word, seen, PEER_START_CANCELLED);
        } else {
            continue;
        }
        return go ? PEER_OK : PEER_CANCELLED;
    }
}

// The all-reduce and barrier of the header comment. One thread per device; `count` <=
// PEER_MAX_VALUES. Returns PEER_OK or why it gave up.
__device__ unsigned int peer_allreduce_sum(const PeerGroup& g, unsigned int exchange,
                                           const unsigned long long* mine,
                                           unsigned long long* sums, unsigned int count) {
    const unsigned int gate = peer_start_verdict(g, exchange);
    if (gate != PEER_OK) {
        return gate;
    }
    unsigned long long* const slots = g.mailbox + PEER_SLOTS;
    const unsigned int parity = exchange & 1u;
    unsigned long long* const own =
        slots + (parity * PEER_MAX_DEVICES + g.rank) * PEER_MAX_VALUES;
    for (unsigned int i = 0; i < count; ++i) {
        peer_store_relaxed(own + i, mine[i]);
    }
    __threadfence_system();
    const unsigned long long target = static_cast<unsigned long long>(exchange) + 1ull;
    const unsigned long long old = peer_arrive(g.mailbox + PEER_ARRIVALS);
    if (old == target * g.size - 1ull) {
        peer_store_release(g.mailbox + PEER_GENERATION, target);
    } else {
        const unsigned int status =
            peer_wait_for(g, g.mailbox + PEER_GENERATION, target, peer_clock_ns());
        if (status != PEER_OK) {
            return status;
        }
    }
    for (unsigned int i = 0; i < count; ++i) {
        unsigned long long s = 0;
        for (unsigned int d = 0; d < g.size; ++d) {
            s += peer_load_relaxed(slots + (parity * PEER_MAX_DEVICES + d) * PEER_MAX_VALUES + i);
        }
        sums[i] = s;
    }
    return PEER_OK;
}

}  // namespace groute
