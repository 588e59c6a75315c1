// The generic min-label traversal (BFS, SSSP) as ONE persistent kernel per run on one device
// (and as bounded launches of many levels on each of several devices, see below):
// the round loop runs on the device, phases are separated by a grid-wide barrier instead of a
// kernel launch and a control-block read-back. Mirror of crates/groute-worklist/src/traversal/
// fused.rs; an algorithm instantiates it next to GROUTE_TRAVERSAL_KERNELS (kernels/bfs/bfs.cu).
//
// Launch: cooperatively (cuLaunchCooperativeKernel), grid <= max resident blocks of this kernel,
// blockDim.x a multiple of 32 (at most 256 for NAME_fused, 1,024 for NAME_fused_wide). The
// cooperative launch is what makes the grid barrier safe: the
// driver refuses a grid whose blocks cannot all be resident at once, so every block that a
// barrier waits for is running and will arrive.
//
// Phase loop. The state block holds the PHASE to run next and its inputs (batch [START, END),
// threshold, low list). A phase ends at a barrier whose action (thread 0 of the block that
// arrives last, every other block waiting) accounts for the phase, picks the next one into the
// state block and publishes it and its inputs as the barrier's release record (FusedRecord);
// thread 0 of every block copies the record to shared memory once released:
//   EXPAND     the grid expands [START, END) (block/warp/thread granularity; hubs are listed;
//              with soft priority, kept items at or above the threshold go to the low list).
//              Action: rounds += 1, processed += END - START, START := END, END := wl end.
//   SOLO       single-block mode: block 0 alone runs levels back to back, separated by
//              __syncthreads() (no grid barrier), while the other blocks wait at the barrier;
//              it leaves when the next batch exceeds solo_max items, is empty, met a hub, or
//              overflowed, and before arriving writes back the control words (which it counts
//              in shared memory meanwhile) and reports its batch, levels and items in its own
//              words (FUSED_SOLO_*). Action: START, END := the reported batch, rounds and
//              processed += the reported counts. With FUSED_SOLO_SHARED (wide build) block 0
//              also keeps each level's appended items with their adjacency ranges in a
//              shared-memory frontier that the next level reads instead of the worklist and
//              the offsets (solo_frontier.cuh; the worklist still gets every item).
//              With FUSED_SOLO_ASYNC (wide build, unbounded runs) block 0 runs SOLO-ASYNC
//              instead of levels: a barrier-free FIFO work queue in shared memory (warps claim
//              up to 32 items at its head and append improved heads at its tail, each on its
//              own; label-correcting), which ends when no item is queued or in flight, or
//              early (more than solo_max items queued, ring full, a hub, an abort) with every
//              unexpanded item written to the worklist after the batch end, so its report is
//              SOLO's (the next batch, one level, the items it expanded) plus the items it
//              produced that the worklist's end does not show (ring items, less entry items
//              written again; the action sums them in FUSED_UNLISTED, the host adds them to
//              the worklist's count of produced items). Protocol, why it is
//              race-free and why it terminates: solo_queue.cuh. Soft priority works as in
//              SOLO (the threshold is fixed during the phase); bounded runs keep SOLO levels
//              (they count levels against their budget).
//   HUBS       the grid relaxes the listed hubs in tiles (traversal_expand_hubs).
//              Action: hub counter := 0, END := wl end.
//   REEXAMINE  soft priority, after the threshold advanced: the grid moves the live items of
//              the taken low list that are now below the threshold to the worklist, defers the
//              others to the other low list, drops superseded ones (traversal_reexamine).
//              Action: epochs += 1, the lists swap, END := wl end.
//   DONE/STOP  every block returns.
// Bounded runs (several devices: level_budget != 0): the kernel is launched once per batch of
// levels between the host's exchanges, appends improved vertices that other devices own to the
// outgoing buffer (SplitSend), and returns (DONE, with the batch [START, END) left for the next
// launch) once it has run level_budget levels, its outgoing buffer holds send_yield items, or
// its batch is empty; it never advances soft priority's threshold (the host's epochs do, across
// devices). SOLO returns to the grid on the same conditions (its own levels against the
// budget).
//
// Device-driven runs (several devices, FusedArgs::peered: one launch per device for the whole
// run, crates/groute-worklist/src/traversal/fused_peer.rs): improved vertices of other devices
// go to the next device's inbox, a ring in its memory (SendBuffer with `freed`: positions are
// reserved on this device's CTRL_SEND_END and written modulo the ring, never more than its
// capacity past CTRL_SEND_FREED, the positions the receiver has read, which it stores here).
// Every action counts what the phase sent in PEER_PENDING (peer_count_sends) and hands the
// new end on in the release record; at the start of the next phase one thread, the
// *publisher* (thread 0 of the grid's last block, which has the fewest items of a small
// batch; of block 0 in SOLO, whose thread 0 also releases and frees while SOLO runs, so that
// one thread alone stores into those words during a phase), releases it into the receiver's CTRL_INBOX_PUBLISHED (__threadfence_system and a
// system-scope release, peer_release) and frees the inbox positions the finished phase read
// (CTRL_SEND_FREED of the previous device), so that the fence's wait for the peer link is
// off the barrier's path. When the next phase is EXPAND or SOLO, the action takes what was published
// to this device (peer_take_inbox, an acquire) as the range [IN_BEGIN, IN_END) that the next
// EXPAND applies SplitReceive to (a received batch always runs on the grid). SOLO stays on
// block 0 across sends and receipts: its last warp (the peer warp, fused_solo) reads the
// inbox's end (relaxed) before each level's vote and, after it, only when the end moved,
// fences (acquire: peer_fence_acquire) and receives up to it (solo_receive, appending to the
// level's worklist and frontier beside the other warps; taken out of PEER_PENDING), frees
// what the finished levels read and, every SOLO_RELEASE_LEVELS levels, counts and releases
// what they sent, all while the other warps expand the level (SoloPeerWarp; in the
// `_peer_cluster` build the last warp of the cluster's block 0 receives, frees, counts and
// releases for the cluster mode in a loop of its own, expanding no item: cluster_solo.cuh);
// SOLO reports both ends (FUSED_SOLO_PUBLISHED, FUSED_SOLO_TAKEN) and, on a cluster,
// the items it never listed (FUSED_SOLO_UNLISTED) to the next action. With nothing left
// (empty batch, empty low
// list, empty inbox), the action idles (peer_idle): at its first idle it waits for the
// start gate's verdict (peer_group.cuh), counts itself out of PEER_PENDING and polls its
// inbox and the count, every other block waiting in the barrier; items wake it (EXPAND),
// a zero count ends the run (DONE), a failure stops it (STOP, FUSED_STOP_PEER + status).
// Termination is race-free by construction: PEER_PENDING is the members counted in plus the
// items published and not yet taken. A member counts itself in as it starts, before its
// start-gate arrival; adds the items it publishes before releasing them; takes received
// items out as it takes them (an idle member counts itself back in with the same atomic);
// counts itself out only with no work and its sends published, and not before the gate
// says every member started. So the count is positive while any item exists anywhere (in a
// worklist, low list or phase of a counted-in member, or published), and once 0 nothing can
// raise it: only a counted-in member publishes, only a published item wakes a member.
// Soft priority's epochs run per device (a member counts itself out only with an empty low
// list, so no agreement is needed). An overflow or the abort word stops a member and marks the
// mailbox failed, which the others see at their next poll.
//
// Next phase (fused_next): STOP on an overflow or an abort; HUBS after EXPAND/SOLO when the
// hub counter is nonzero; else, bounded, DONE as above; else SOLO or EXPAND while the batch
// or (device-driven) the inbox is not empty (SOLO when it has at most solo_max items and
// nothing arrived); else, when the low list holds items, the threshold advances (to the
// end of the band of the smallest deferred priority, at least one band: PriorityCounter's
// rule), the list is taken and REEXAMINE runs; else, device-driven, the idle wait above;
// else DONE: no item exists anywhere (one device holds every item, and an improved vertex is
// appended before the barrier that closes its phase).
//
// Why every decision is grid-uniform: blocks decide from the release record only, which only
// actions write (tagged with their barrier's generation), and an action runs only after every
// block has arrived, i.e. after every block has copied the previous record (each block copies
// it before its closing __syncthreads of the barrier, hence before it can arrive at the next
// one). The live counters in ctrl are read by actions only (the kron21 hang of the first
// version: blocks read the live hub counter after a barrier, when a block released early could
// already list the next round's hubs in it, so blocks disagreed about the hub phase and their
// barriers mixed).
//
// Why SOLO is race-free: the other blocks sit in the barrier (polling the generation word or
// the record) and touch neither the worklist, the values, the low list, ctrl nor the state
// until released, so block 0 is the only writer (of its FUSED_SOLO_* words only: the block of
// the previous action may still be writing the others, and nobody reads the record that late
// blocks may still be copying); __syncthreads() orders its own levels (appends,
// atomicMin on the values, the control words it rereads, all of them in its shared copy while
// it runs: nobody else reads or writes ctrl until block 0 arrives, after writing the copy
// back; the hub words are not copied back, since a hub met in SOLO has no slot and is expanded
// by block 0 itself). Hand-over: block 0's writes precede its arrival (__syncthreads, release
// arrival); the release follows the action, and every released block acquires it, so the grid
// sees everything block 0 wrote. Entering SOLO, the barrier that chose it orders every block's
// writes before block 0's reads the same way. Inside block 0, a level has two __syncthreads:
// solo_expand's vote, which every thread reaches after reading its item (from the shared
// frontier or the worklist) and the previous level's decision, and before any append, shared
// frontier write or control-word update of the level (record_hub included); and the one after
// the appends, after which every thread reads the shared control words and takes the same
// decision (nothing writes them before the next vote). The frontier's entries for the next
// level are written at (worklist position - batch end), only by appends after the first
// vote, and every thread reads its entries of both rounds that have any (capacity <= 2 *
// blockDim.x) before that vote, so no entry is rewritten before it is read. A vertex
// appended twice in a level has two entries and is expanded twice, each time with its value
// reread (FreshValue, at its arcs), as two worklist items are.
//
// Cost of one grid level, the synchronisation that dominates road-like graphs (thousands of
// levels of ~1,000 items): a __syncthreads; one arrival read-modify-write per block (no read
// of the generation before it: each block counts the barriers it passed; no reset of the
// counter); in the last block, one batched read of the state line and the control words (one
// L2 round trip, every load issued before the first use), the decision in registers, the
// record written and released, and only then the state line written back (fused_settle: the
// release does not wait for it); in the others, polling (FusedBarrierConfig: the generation
// word and then the record, or the tagged record alone; with or without __nanosleep;
// acquire/release operations or fences) and a __syncthreads. The first version paid about a
// dozen serial volatile round trips in the action (read-modify-writes of single words,
// short-circuit conditions) and one more per block for the phase words.
//
// Where a single-block level goes (ncu source counters, one H200, road grid BFS of 4,193
// levels of about 1,000 vertices run by one block of 1,024 threads, --fused-grid 1: 33 ms,
// 7.9 us a level; 13.9K warp instructions a level, about 3.5K per scheduler): of the warp
// stall samples, about 36% wait at __syncthreads (the list-claim check and the level's end:
// the level takes as long as its slowest warp), 13% for the targets loads, 13% for the
// filtering loads of the heads' values, 7% for the offsets loads (after the item load), a
// few % for the atomics' results. The level is a chain of dependent round trips (item,
// offsets, targets, value, atomicMin). The shared frontier (FUSED_SOLO_SHARED, the default
// since) cuts it to (targets with the item's value, value filter, atomicMin with the head's
// offsets), the item and its range coming from shared memory; with FUSED_SOLO_DIRECT_MIN the
// filter goes too. The block-level claim's vote doubles as the level's read-before-append
// barrier, and the level's decision is taken by every thread (two __syncthreads a level
// instead of three); the targets loads of a level do not wait for the item's value (an
// unreached item relaxes nothing: relax_arc, relax_thread_arcs). Not measured here yet (no GPU
// on the machine that wrote it).
//
// Overflow: a worklist or low-list append past the capacity records the needed size in
// ctrl[CTRL_WL_OVERFLOW] / ctrl[CTRL_LOW_OVERFLOW] and writes nothing; the next action sees it
// and stops the kernel; the host reports CapacityExceeded naming wl_capacity. Nothing is lost
// silently. Abort: the host may set *abort (device-mapped pinned host memory; the time limit);
// actions poll it every FUSED_ABORT_POLL phases and SOLO every FUSED_ABORT_POLL levels (a PCIe
// read, kept off the per-level path); SOLO reports what it saw in FUSED_SOLO_ABORT, the next
// action stops the kernel with FUSED_STOP = FUSED_STOP_ABORTED. The host fails the run whenever
// it set the word, even when the kernel finished before its next poll (run_fused's timed_out),
// and whenever the kernel reports FUSED_STOP_ABORTED (it left items unprocessed).
//
// The state block `fused` (FUSED_WORDS u32 of device memory, zeroed by the host except
// FUSED_PHASE, FUSED_END = the number of seeds and FUSED_THRESHOLD) keeps the barrier words on
// cache lines of their own.
#pragma once

#include "cluster_solo.cuh"
#include "grid_barrier.cuh"
#include "peer_group.cuh"
#include "solo_frontier.cuh"
#include "solo_queue.cuh"
#include "traversal.cuh"

namespace groute {

// Words [0, FUSED_BARRIER_WORDS) are the grid barrier's (grid_barrier.cuh, FusedBarrierWord).
enum FusedWord : unsigned int {
    FUSED_PHASE = FUSED_BARRIER_WORDS,  // the phase to run next (FusedPhase)
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
    FUSED_UNLISTED = 82,       // items produced that the worklist's end does not count, 64-bit
                               // two's complement (words 82, 83): SOLO-ASYNC's ring items
                               // less its entry items written again (solo_queue.cuh)
    FUSED_IN_BEGIN = 84,       // device-driven runs: the inbox items [IN_BEGIN, IN_END) the
    FUSED_IN_END = 85,         // next phase receives; IN_END: every item taken so far
    FUSED_PUBLISHED = 86,      // device-driven runs: outgoing items published to the next device
    FUSED_PEER_GO = 87,        // device-driven runs: this member passed the start gate
    // Words [FUSED_SOLO_WORDS, FUSED_WORDS) are block 0's in SOLO (the others the actions'):
    FUSED_SOLO_WORDS = 88,
    FUSED_SOLO_START = 88,     // the batch SOLO left: start
    FUSED_SOLO_END = 89,       // and end
    FUSED_SOLO_LEVELS = 90,    // levels of the last SOLO phase
    FUSED_SOLO_ABORT = 91,     // SOLO saw the abort word set
    FUSED_SOLO_PROCESSED = 92, // items of the last SOLO phase, 64-bit (words 92, 93)
    FUSED_SOLO_UNLISTED = 94,  // items it produced and expanded without listing them:
                               // SOLO-ASYNC's ring items, the cluster mode's levels (0 for
                               // SOLO levels on one block)
    FUSED_SOLO_RELISTED = 95,  // SOLO-ASYNC: entry items it wrote again (0 otherwise)
    // Device-driven runs (the peer builds):
    FUSED_SOLO_PUBLISHED = 96, // the sends it counted (FUSED_PUBLISHED)
    FUSED_SOLO_TAKEN = 97,     // the inbox items it took (FUSED_IN_END)
    FUSED_SOLO_US = 98,        // GROUTE_TRACE_CLUSTER builds: the cluster mode's phases'
                               // time, global-timer microseconds (block 0's thread 0 adds
                               // each phase's)
    FUSED_TRACE_LEVEL = 99,    // GROUTE_TRACE_LEVEL builds: the first cluster phase that ran
                               // N levels: SM MHz << 20 | microseconds from its start to then
    FUSED_WORDS = 100,
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
    // Device-driven runs: FUSED_STOP_PEER + the PeerStatus of a failed wait (a peer failed,
    // the abort word, the group's timeout, a cancelled start).
    FUSED_STOP_PEER = 16,
    FUSED_ABORT_POLL = 64,
};

// Flags of the fused traversal carried in the grid barrier's flag word (FusedBarrierConfig's
// `flags`, beside grid_barrier.cuh's FusedBarrierFlag bits).
enum FusedKernelFlag : unsigned int {
    // The thread-granularity relaxation of the fused kernel's expands tries atomicMin at once,
    // without the filtering plain load (traversal_expand's filter_loads = false).
    FUSED_DIRECT_MIN = 4u,
    // The single-block mode keeps its next level's items in a shared-memory frontier
    // (solo_frontier.cuh) instead of reading them and their offsets from global memory.
    FUSED_SOLO_SHARED = 8u,
    // The single-block mode relaxes without the filtering load (FUSED_DIRECT_MIN for SOLO
    // levels only).
    FUSED_SOLO_DIRECT_MIN = 16u,
    // The single-block mode runs SOLO-ASYNC (solo_queue.cuh: a barrier-free FIFO work queue
    // in shared memory) instead of levels, where it can: the wide build, one device
    // (unbounded), soft priority off; SOLO levels elsewhere.
    FUSED_SOLO_ASYNC = 32u,
};

// Soft priority's next threshold when no high-priority item is left: at least one band above
// `threshold`, and the end of the band holding `min_deferred` (no empty epochs); saturating
// (the last epoch, at 0xFFFFFFFF, defers nothing). PriorityCounter::report's rule.
__device__ __forceinline__ unsigned int next_threshold(unsigned int threshold,
                                                       unsigned int delta,
                                                       unsigned int min_deferred) {
    const unsigned int d = delta == 0u ? 1u : delta;
    const unsigned long long band = static_cast<unsigned long long>(threshold) + d;
    const unsigned long long bucket =
        (static_cast<unsigned long long>(min_deferred / d) + 1ull) * d;
    const unsigned long long next = band > bucket ? band : bucket;
    return next > 0xFFFFFFFFull ? 0xFFFFFFFFu : static_cast<unsigned int>(next);
}

// The state words [FUSED_PHASE, FUSED_WORDS) held in registers: `at(FUSED_X)` is word X.
struct FusedState {
    unsigned int w[FUSED_WORDS - FUSED_PHASE];

    __device__ __forceinline__ unsigned int& at(unsigned int word) { return w[word - FUSED_PHASE]; }

    __device__ __forceinline__ void add_u64(unsigned int word, unsigned long long n) {
        const unsigned long long v =
            (static_cast<unsigned long long>(at(word + 1u)) << 32 | at(word)) + n;
        at(word) = static_cast<unsigned int>(v);
        at(word + 1u) = static_cast<unsigned int>(v >> 32);
    }

    // What every block needs to run the phase this state holds (FusedRecordWord order).
    __device__ __forceinline__ FusedRecord record() {
        return FusedRecord{{at(FUSED_PHASE), at(FUSED_START), at(FUSED_END),
                            at(FUSED_THRESHOLD), at(FUSED_LOW_CURRENT), at(FUSED_LOW_TAKEN),
                            at(FUSED_IN_BEGIN), at(FUSED_IN_END), at(FUSED_PUBLISHED)}};
    }
};

// The words of the fused kernel's release record.
enum FusedRecordWord : unsigned int {
    RECORD_PHASE = 0,
    RECORD_START = 1,
    RECORD_END = 2,
    RECORD_THRESHOLD = 3,
    RECORD_LOW_CURRENT = 4,
    RECORD_LOW_TAKEN = 5,
    RECORD_IN_BEGIN = 6,
    RECORD_IN_END = 7,
    RECORD_PUBLISHED = 8,
};

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
    const unsigned int* abort;  // the host's abort word (load_abort)
    VertexValue* low[2];  // null when soft priority is off
    unsigned int low_capacity;
    unsigned int prio_delta;
    unsigned int solo_max;
    FusedBarrierConfig barrier;
    // Bounded runs (several devices, one launch per batch of levels between the host's
    // exchanges): the outgoing buffer (vertices other devices own), the levels after which
    // the kernel returns (0: unbounded, one device), and the outgoing items at which it
    // returns early so the host can send them.
    VertexValue* send_data;
    unsigned int send_capacity;
    unsigned int send_base;
    unsigned int level_budget;
    unsigned int send_yield;
    // Device-driven runs (several devices, one persistent kernel each: `peer.size` > 1; see
    // the file comment): the group (mailbox with the termination count PEER_PENDING, start
    // gate, failure word, abort word, timeout), this device's inbox (send_data is the next
    // device's, in its memory) and the next device's ctrl[CTRL_INBOX_PUBLISHED].
    // The inbox is a ring of inbox_capacity items (a power of two), as is the next device's
    // (send_capacity); recv_freed is the previous device's ctrl[CTRL_SEND_FREED], where this
    // device stores the inbox positions it has read.
    PeerGroup peer;
    const VertexValue* inbox;
    unsigned int* send_published;
    unsigned int inbox_capacity;
    unsigned int* recv_freed;

    __device__ __forceinline__ bool bounded() const { return level_budget != 0u; }

    __device__ __forceinline__ bool peered() const { return peer.size > 1u; }

    // PEERED: the device-driven build (the entry macro's; false compiles those paths out).
    template <bool PEERED>
    __device__ __forceinline__ SendBuffer send_buffer(unsigned int* counters) const {
        return SendBuffer{send_data, send_capacity, send_base, counters,
                          PEERED ? ctrl + CTRL_SEND_FREED : nullptr};
    }

    __device__ __forceinline__ LowList low_list(unsigned int index, unsigned int threshold) const {
        return LowList{low[index], low_capacity, threshold, ctrl};
    }

    __device__ __forceinline__ bool filter_loads() const {
        return (barrier.flags & FUSED_DIRECT_MIN) == 0u;
    }

    __device__ __forceinline__ bool solo_filter_loads() const {
        return (barrier.flags & (FUSED_DIRECT_MIN | FUSED_SOLO_DIRECT_MIN)) == 0u;
    }

    // Whether a SOLO phase runs SOLO-ASYNC (FUSED_SOLO_ASYNC, in a build with a ring).
    __device__ __forceinline__ bool solo_async() const {
        return (barrier.flags & FUSED_SOLO_ASYNC) != 0u && !bounded() && !peered();
    }

    // Entries of the single-block mode's shared frontier: its bound, at most
    // SOLO_FRONTIER_ROUNDS per thread (and the build's arrays: SoloFrontierArrays); 0 when
    // FUSED_SOLO_SHARED is off.
    __device__ __forceinline__ unsigned int solo_frontier_capacity() const {
        if ((barrier.flags & FUSED_SOLO_SHARED) == 0u) {
            return 0u;
        }
        const unsigned int rounds = SOLO_FRONTIER_ROUNDS * blockDim.x;
        return solo_max < rounds ? solo_max : rounds;
    }
};

// Device-driven runs (FusedArgs::peered): the termination count of the group (PEER_PENDING in
// device 0's mailbox; the file comment says why it is race-free).
__device__ __forceinline__ void peer_count(const FusedArgs& a, unsigned long long delta) {
    peer_add(a.peer.mailbox + PEER_PENDING, delta);
}

// Device-driven runs: counts the outgoing items [FUSED_PUBLISHED, sent) in PEER_PENDING and
// makes `sent` the end to publish (FUSED_PUBLISHED, handed on in the release record: the
// publisher releases it at the start of the next phase, off the barrier's path, see
// fused_traversal; an idle member releases it itself, peer_release).
__device__ __forceinline__ void peer_count_sends(FusedState& s, const FusedArgs& a,
                                                 unsigned int sent) {
    const unsigned int published = s.at(FUSED_PUBLISHED);
    if (sent != published) {
        peer_count(a, sent - published);
        s.at(FUSED_PUBLISHED) = sent;
    }
}

// Device-driven runs: releases the outgoing items before `end` to the next device. Every
// block's stores of them precede this thread's (a grid barrier since), and so does their
// count in PEER_PENDING (peer_count_sends, in an action before that barrier), so the next
// device, acquiring the end, sees the items and takes them out of a count that holds them.
__device__ __forceinline__ void peer_release(const FusedArgs& a, unsigned int end) {
    __threadfence_system();
    peer_store_release_u32(a.send_published, end);
}

// Device-driven runs: takes the inbox items published since the last take as the next
// phase's [FUSED_IN_BEGIN, FUSED_IN_END) (`seen`: the published end as last read, any scope);
// false when there are none. An idle member counts itself back in with the same atomic that
// takes the items out of the count, so the count never passes through 0.
__device__ __forceinline__ bool peer_take_inbox(FusedState& s, const FusedArgs& a,
                                                unsigned int seen, bool idle) {
    const unsigned int taken = s.at(FUSED_IN_END);
    if (seen == taken) {
        return false;
    }
    // Acquire (system scope): the sender's items before its release of this end.
    const unsigned int published = peer_load_acquire_u32(a.ctrl + CTRL_INBOX_PUBLISHED);
    peer_count(a, (idle ? 1ull : 0ull) - static_cast<unsigned long long>(published - taken));
    s.at(FUSED_IN_BEGIN) = taken;
    s.at(FUSED_IN_END) = published;
    return true;
}

// Device-driven runs: this member has no work left (empty batch, empty low list, nothing in
// its inbox, its sends published). At its first idle it waits for the start gate's verdict
// (every member running, peer_group.cuh); it counts itself out of PEER_PENDING and waits,
// with every other block in the barrier, until its inbox receives items (EXPAND, which
// receives them), the count reaches 0 (DONE: the traversal is complete on every device), or
// a failure (STOP: a peer's, the abort word, the group's timeout, a cancelled start).
__device__ __noinline__ unsigned int peer_idle(FusedState& s, const FusedArgs& a) {
    if (s.at(FUSED_PEER_GO) == 0u) {
        const unsigned int gate = peer_start_verdict(a.peer, 0u);
        if (gate != PEER_OK) {
            s.at(FUSED_STOP) = FUSED_STOP_PEER + gate;
            return FUSED_PHASE_STOP;
        }
        s.at(FUSED_PEER_GO) = 1u;
    }
    // The last sends (counted by this action), before this member counts itself out.
    peer_release(a, s.at(FUSED_PUBLISHED));
    peer_count(a, ~0ull);  // - 1
    const unsigned long long since = peer_clock_ns();
    unsigned int polls = 0;
    while (true) {
        if (peer_take_inbox(s, a, load_volatile(a.ctrl + CTRL_INBOX_PUBLISHED), true)) {
            return FUSED_PHASE_EXPAND;
        }
        if (peer_load_acquire(a.peer.mailbox + PEER_PENDING) == 0ull) {
            return FUSED_PHASE_DONE;
        }
        if (++polls % PEER_POLL_CHECK == 0u) {
            const unsigned int status = peer_wait_failed(a.peer, since);
            if (status != PEER_OK) {
                s.at(FUSED_STOP) = FUSED_STOP_PEER + status;
                return FUSED_PHASE_STOP;
            }
        }
        __nanosleep(64);
    }
}

// The action of every barrier: accounts for the phase `done` that just ended and picks the
// next one (see the file comment). Runs on one thread with every block waiting. It reads the
// whole state line and the control words at once (one L2 round trip: the loads are issued
// together; the barrier's acquire makes them current) into `s` and decides in registers;
// returns the next phase's record. The caller writes `s` back after the release
// (fused_settle): no later reader of the state line runs before this block arrives again.
template <bool PEERED>
__device__ __forceinline__ FusedRecord fused_next(FusedState& s, const FusedArgs& a,
                                                  unsigned int done) {
    unsigned int* const ctrl = a.ctrl;
    load_words(a.fused + FUSED_PHASE, s.w);
    unsigned int c[12];  // CTRL_WL_END .. CTRL_INBOX_PUBLISHED
    load_words(ctrl, c);
    const unsigned int wl_end = c[CTRL_WL_END];
    unsigned int hubs = c[CTRL_HUB_COUNT];
    unsigned int low = c[CTRL_LOW_END];
    unsigned int end = s.at(FUSED_END);
    if (done == FUSED_PHASE_EXPAND) {
        s.at(FUSED_ROUNDS) += 1u;
        s.add_u64(FUSED_PROCESSED, end - s.at(FUSED_START));
        s.at(FUSED_START) = end;
        end = wl_end;
    } else if (done == FUSED_PHASE_SOLO) {
        // Block 0's report (FUSED_SOLO_* words, written before it arrived).
        const unsigned int levels = s.at(FUSED_SOLO_LEVELS);
        s.at(FUSED_ROUNDS) += levels;
        s.at(FUSED_SOLO_ROUNDS) += levels;
        const unsigned long long items =
            static_cast<unsigned long long>(s.at(FUSED_SOLO_PROCESSED + 1u)) << 32 |
            s.at(FUSED_SOLO_PROCESSED);
        s.add_u64(FUSED_PROCESSED, items);
        if (PEERED) {
            s.at(FUSED_PUBLISHED) = s.at(FUSED_SOLO_PUBLISHED);
            s.at(FUSED_IN_END) = s.at(FUSED_SOLO_TAKEN);
        }
        // Wrapping: unlisted - relisted may be negative (solo_queue.cuh, Counting).
        s.add_u64(FUSED_UNLISTED, static_cast<unsigned long long>(s.at(FUSED_SOLO_UNLISTED)) -
                                      s.at(FUSED_SOLO_RELISTED));
        s.at(FUSED_START) = s.at(FUSED_SOLO_START);
        end = s.at(FUSED_SOLO_END);
    } else if (done == FUSED_PHASE_HUBS) {
        *reinterpret_cast<volatile unsigned long long*>(ctrl + CTRL_HUB_COUNT) = 0ull;
        hubs = 0u;
        end = wl_end;
    } else if (done == FUSED_PHASE_REEXAMINE) {
        const unsigned int moved = wl_end - end;
        s.at(FUSED_EPOCHS) += 1u;
        s.add_u64(FUSED_STALE, s.at(FUSED_LOW_TAKEN) - moved - low);
        s.at(FUSED_LOW_BASE) = low;
        s.at(FUSED_LOW_CURRENT) ^= 1u;
        end = wl_end;
    }
    s.at(FUSED_END) = end;
    // The phase that ended read the inbox items it received (the publisher frees their
    // positions: fused_traversal). The next phase receives none unless taken below.
    s.at(FUSED_IN_BEGIN) = s.at(FUSED_IN_END);
    const unsigned int start = s.at(FUSED_START);
    const unsigned int phases = ++s.at(FUSED_PHASES);
    const bool poll = phases % FUSED_ABORT_POLL == 0u;
    unsigned int stop = FUSED_STOP_NONE;
    if (c[CTRL_WL_OVERFLOW] != 0u || c[CTRL_LOW_OVERFLOW] != 0u ||
        c[CTRL_SEND_OVERFLOW] != 0u) {
        stop = FUSED_STOP_OVERFLOW;
    } else if (s.at(FUSED_SOLO_ABORT) != 0u || (poll && load_abort(a.abort) != 0u)) {
        stop = FUSED_STOP_ABORTED;
    } else if (PEERED && poll &&
               peer_load_relaxed(a.peer.mailbox + PEER_FAILED) != 0ull) {
        stop = FUSED_STOP_PEER + PEER_ABORTED;
    }
    if (PEERED) {
        if (stop == FUSED_STOP_NONE) {
            peer_count_sends(s, a, c[CTRL_SEND_END]);
        } else {
            // The members waiting for this one leave (peer_idle).
            peer_store_relaxed(a.peer.mailbox + PEER_FAILED, PEER_ABORTED);
        }
    }
    s.at(FUSED_STOP) = stop;
    unsigned int next;
    if (stop != FUSED_STOP_NONE) {
        next = FUSED_PHASE_STOP;
    } else if ((done == FUSED_PHASE_EXPAND || done == FUSED_PHASE_SOLO) && hubs != 0u) {
        next = FUSED_PHASE_HUBS;
    } else if (a.bounded() &&
               (end == start || s.at(FUSED_ROUNDS) >= a.level_budget ||
                c[CTRL_SEND_END] - a.send_base >= a.send_yield)) {
        // A bounded run returns to its host with the batch [START, END) unconsumed (empty
        // when the device ran out of work; the host runs soft priority's epochs then).
        next = FUSED_PHASE_DONE;
    } else {
        // Received items go to the grid (EXPAND receives them beside its batch).
        const bool incoming =
            PEERED && peer_take_inbox(s, a, c[CTRL_INBOX_PUBLISHED], false);
        if (end != start || incoming) {
            next = !incoming && end - start <= a.solo_max ? FUSED_PHASE_SOLO
                                                          : FUSED_PHASE_EXPAND;
        } else if (low != 0u) {
            s.add_u64(FUSED_DEFERRED, low - s.at(FUSED_LOW_BASE));
            s.at(FUSED_THRESHOLD) =
                next_threshold(s.at(FUSED_THRESHOLD), a.prio_delta, c[CTRL_LOW_MIN]);
            s.at(FUSED_LOW_TAKEN) = low;
            store_relaxed(ctrl + CTRL_LOW_END, 0u);
            store_relaxed(ctrl + CTRL_LOW_MIN, 0xFFFFFFFFu);
            next = FUSED_PHASE_REEXAMINE;
        } else if (PEERED) {
            next = peer_idle(s, a);
        } else {
            next = FUSED_PHASE_DONE;
        }
    }
    s.at(FUSED_PHASE) = next;
    return s.record();
}

// Writes the actions' words of the state line, [FUSED_PHASE, FUSED_SOLO_WORDS), from `s`
// (never block 0's SOLO words, which it may be writing meanwhile).
__device__ __forceinline__ void fused_settle(unsigned int* fused, const FusedState& s) {
#pragma unroll
    for (unsigned int i = 0; i < FUSED_SOLO_WORDS - FUSED_PHASE; i += 4u) {
        store4_relaxed(fused + FUSED_PHASE + i,
                       make_uint4(s.w[i], s.w[i + 1u], s.w[i + 2u], s.w[i + 3u]));
    }
}

// Device-driven runs, SOLO: how often block 0 counts and releases what it sent (levels).
// Measured on 2 x H200 (road grid of 4.2M vertices, block partition, median device ms, work
// items): BFS 1: 29.23-29.33 (4.6M), 4: 28.85-28.94 (5.5-5.7M), 8: 29.18-29.20 (6.0-6.2M),
// 16: 29.21-29.25 (6.4-6.5M); SSSP (weights 1000..1500) 1: 33.5, 4: 32.6, 8: 32.5, 16: 32.3.
// A release is a system-scope fence; releasing less often sends later, and the receiver then
// re-expands more.
enum : unsigned int { SOLO_RELEASE_LEVELS = 4 };

// The same in the cluster mode, where the release follows the peer warp's arrival at the
// level's barrier (SoloPeerWarp::after_arrive) and so is off the level's path. Measured on 2 x
// H200 (road grid of 4.2M vertices, block partition, BFS, an earlier build of the mode): every
// level 18.86-18.91 ms, every 4 levels 18.74-18.81, within the spread; every level publishes
// sooner. GROUTE_CLUSTER_RELEASE_LEVELS overrides it at compile time, for such comparisons.
#ifndef GROUTE_CLUSTER_RELEASE_LEVELS
#define GROUTE_CLUSTER_RELEASE_LEVELS 1
#endif
enum : unsigned int { CLUSTER_RELEASE_LEVELS = GROUTE_CLUSTER_RELEASE_LEVELS };

// Device-driven runs, SOLO: SplitReceive by one warp (SOLO's peer warp) on the inbox items
// [from, to), appending kept items through `appends` (the level's worklist and frontier),
// passing the others on. Every lane of the warp calls it.
template <typename Appends>
__device__ __forceinline__ void solo_receive(const FusedArgs& a, unsigned int from,
                                             unsigned int to, const Appends& appends,
                                             const SendBuffer& send, const LowList& low) {
    const unsigned int count = to - from;
    const unsigned int mask = a.inbox_capacity - 1u;
    for (unsigned int first = 0; first < count; first += 32u) {
        const unsigned int i = first + lane_id();
        unsigned int flags = SF_DROP;
        VertexValue p;
        p.vertex = 0;
        p.value = 0;
        if (i < count) {
            p = a.inbox[(from + i) & mask];
            flags = a.ops.on_receive(p);
        }
        keep_or_defer(appends, low, p.vertex, p.value, (flags & SF_KEEP) != 0u);
        send.append_warp(p, (flags & SF_PASS) != 0u);
    }
}

// Device-driven runs: the peer warp's share of the protocol in a SOLO phase (the block's last
// warp: of block 0 in fused_solo, of the cluster's block 0 in the cluster mode). Each level
// its lane 0 reads (read_level) the inbox's published end (relaxed), the sends' end and the
// inbox positions the finished levels read. In fused_solo the warp also expands its share of
// the level: it reads at the level's start (before_level), so that the round trips overlap
// the level, and receives after its share (after_expand). In the cluster mode it expands
// nothing and runs a loop of its own beside the level loop (cluster_solo_run): it reads and
// receives at once (turn), while the other warps expand the level. Receiving: if the inbox's
// end moved, the warp fences (acquire) and receives up to it (solo_receive; __syncwarp
// carries the fence to the other lanes) into the level's appends, then takes the items out
// of PEER_PENDING. Lane 0 also frees the positions the finished levels read and counts and
// releases the sends (settle): in fused_solo before receiving, every SOLO_RELEASE_LEVELS
// levels; in the cluster mode every CLUSTER_RELEASE_LEVELS levels between its arrival at the
// level's closing barrier and its wait (after_arrive), off the path of the other blocks'
// wait. The words it keeps across levels are in shared memory
// (`words`), lane 0's reads of a level in SoloPeerReads, which the caller passes from the
// read to the settle; every word it writes is read after a closing barrier (the report; in the
// cluster mode after a block barrier that follows the last cluster barrier, since it writes
// after arriving there) or by its lane 0 alone.
//
// Which sends a release may cover: only those whose items are written. In fused_solo the
// level's appends start after solo_expand's vote, so the end read before it is complete
// (LAGGED false). In the cluster mode the other warps may already append the level's sends
// when lane 0 reads the end, so it releases the end it read a level before (LAGGED true):
// every reservation that end counts is of a level before, whose items were written before
// that level's closing cluster barrier.
struct SoloPeerWords {
    unsigned int taken;    // inbox items received (the end taken)
    unsigned int freed;    // inbox positions freed to the sender
    unsigned int counted;  // sends counted in PEER_PENDING and released
    unsigned int seen;     // LAGGED: the sends' end read a level before
};

// Lane 0's reads of one level (read_level; zero on the other threads): the inbox's published
// end, the sends' end to release and the inbox positions the finished levels read. The caller
// holds them from the read to the settle of the same level only: kept in the object, they
// were live through every level on every thread (the other lanes never overwrite theirs),
// and in the cluster build they pushed the destination's addresses out to local memory,
// reloaded after each barrier, whose acquire had invalidated the L1, before anything else of
// the level. Held by the caller, BFS's member build spills nothing: road BFS on 2 H200s
// 15.64 / 15.68 ms against 16.66 / 16.72 (same call). SSSP's still spilled the
// addresses until the members mapped them at use (ClusterWorklist). (The cluster mode's peer
// warp now runs a loop of its own, and the level loop holds no reads.)
struct SoloPeerReads {
    unsigned int now = 0u;
    unsigned int sent = 0u;
    unsigned int read = 0u;
};

// Every thread holds the object through the levels, so it keeps nothing but the two
// references (the kernel's arguments and a shared-memory address): which warp is the peer
// warp is recomputed where asked, and the sends' counter is the one of the level's SendBuffer.
template <bool PEERED, bool LAGGED>
struct SoloPeerWarp {
    const FusedArgs& a;
    SoloPeerWords& words;

    // Whether a peer warp exists (device-driven builds).
    static constexpr bool ACTIVE = PEERED;

    __device__ __forceinline__ SoloPeerWarp(const FusedArgs& args, SoloPeerWords& w)
        : a(args), words(w) {}

    // This thread's warp is the peer warp: block 0's last (warp-uniform).
    __device__ __forceinline__ static bool warp() {
        return PEERED && blockIdx.x == 0u && threadIdx.x / 32u == (blockDim.x - 1u) / 32u;
    }

    // The cluster mode: the threads of the block of rank `rank` in cluster 0 that expand
    // items, from thread 0 (all of them but the peer warp, which expands none; cluster 0's
    // rank 0 is block 0). On the rank, not blockIdx.x: the same test on blockIdx.x moved the
    // members' BFS build to its slow layout (road on one H200: group of one 14.82-14.89 ms
    // against 14.24), and on the rank its SASS is the build measured there.
    __device__ __forceinline__ static unsigned int expanders(unsigned int rank) {
        return PEERED && rank == 0u ? (blockDim.x - 1u) / 32u * 32u : blockDim.x;
    }

    // And this thread is its lane 0.
    __device__ __forceinline__ static bool lane() { return warp() && lane_id() == 0u; }

    // Thread 0 of the block whose last warp is the peer warp, before the phase's first
    // barrier: the inbox items taken and the sends counted so far.
    __device__ __forceinline__ void start(unsigned int inbox_taken, unsigned int sends_counted) {
        words.taken = inbox_taken;
        words.freed = inbox_taken;
        words.counted = sends_counted;
        words.seen = sends_counted;
    }

    // fused_solo, at the level's start: the reads, so that the round trips overlap the level
    // (after_expand takes them).
    __device__ __forceinline__ SoloPeerReads before_level(const SendBuffer& send) const {
        static_assert(!LAGGED, "the cluster mode's peer warp reads in turn");
        return read_level(send.ctrl);
    }

    // fused_solo, after the warp's share of level `levels` (counted from 1), before the
    // level's closing barrier: free and release the `before` reads, and receive.
    template <typename Appends>
    __device__ __forceinline__ void after_expand(unsigned int levels, const Appends& appends,
                                                 const SendBuffer& send, const LowList& low,
                                                 const SoloPeerReads& before) const {
        static_assert(!LAGGED, "the cluster mode's peer warp calls turn and after_arrive");
        if (!warp()) {
            return;
        }
        settle(levels, before);
        receive(before, appends, send, low);
    }

    // The cluster mode (LAGGED), the peer warp's whole share of a level before its closing
    // barrier (it expands none of the level's items): reads and receives into the level's
    // appends (`appends`: the warp's destination's). Returns the reads that after_arrive
    // settles. Called by the peer warp only, all 32 lanes.
    template <typename Appends>
    __device__ __forceinline__ SoloPeerReads turn(const Appends& appends,
                                                  const SendBuffer& send,
                                                  const LowList& low) const {
        static_assert(LAGGED, "fused_solo's peer warp calls before_level and after_expand");
        const SoloPeerReads reads = read_level(send.ctrl);
        receive(reads, appends, send, low);
        return reads;
    }

    // The cluster mode (LAGGED), between the peer warp's arrival at level `levels`' closing
    // barrier and its wait there: free and release (`reads`: turn's). Nothing the level's
    // barrier orders depends on them, so the system-scope fence of a release (which waits for
    // the termination count's remote reductions) overlaps the barrier and the next level's
    // start instead of delaying every block's wait. Called by the peer warp only, all 32
    // lanes; it reconverges before returning (the barrier's wait is .aligned).
    __device__ __forceinline__ void after_arrive(unsigned int levels,
                                                 const SoloPeerReads& reads) const {
        static_assert(LAGGED, "fused_solo's peer warp settles in after_expand");
        settle(levels, reads);
        __syncwarp();
    }

  private:
    // Receives the inbox items [reads.read, reads.now) (lane 0's reads) into `appends`. The
    // fence pattern's acquire (the load observed the sender's release), paid only when the
    // end moved: ld.acquire would invalidate the SM's L1 every level.
    template <typename Appends>
    __device__ __forceinline__ void receive(const SoloPeerReads& reads, const Appends& appends,
                                            const SendBuffer& send, const LowList& low) const {
        const unsigned int to = __shfl_sync(0xFFFFFFFFu, reads.now, 0);
        const unsigned int from = __shfl_sync(0xFFFFFFFFu, reads.read, 0);
        if (to != from) {
            if (lane()) {
                peer_fence_acquire();
            }
            __syncwarp();
            solo_receive(a, from, to, appends, send, low);
            if (lane()) {
                peer_count(a, 0ull - static_cast<unsigned long long>(to - from));
                words.taken = to;
            }
        }
    }

    // Lane 0: the inbox's published end, the sends' end (LAGGED: the one read a level before,
    // keeping this one for the next level) and the inbox positions the finished levels read.
    // `ctrl`: the control words holding the sends' end (the level's SendBuffer's).
    __device__ __forceinline__ SoloPeerReads read_level(const unsigned int* ctrl) const {
        SoloPeerReads reads;
        if (lane()) {
            reads.now = peer_load_relaxed_u32(a.ctrl + CTRL_INBOX_PUBLISHED);
            const unsigned int sends_end =
                *const_cast<const volatile unsigned int*>(ctrl + CTRL_SEND_END);
            if (LAGGED) {
                reads.sent = words.seen;
                words.seen = sends_end;
            } else {
                reads.sent = sends_end;
            }
            reads.read = words.taken;
        }
        return reads;
    }

    // Lane 0: frees the inbox positions the finished levels read; every `release_levels`
    // levels counts and releases the sends' end read_level took.
    __device__ __forceinline__ void settle(unsigned int levels, const SoloPeerReads& reads) const {
        if (!lane()) {
            return;
        }
        if (reads.read != words.freed) {
            peer_store_relaxed_u32(a.recv_freed, reads.read);
            words.freed = reads.read;
        }
        constexpr unsigned int release_levels =
            LAGGED ? CLUSTER_RELEASE_LEVELS : SOLO_RELEASE_LEVELS;
        if (reads.sent != words.counted && levels % release_levels == 0u) {
            peer_count(a, reads.sent - words.counted);
            peer_release(a, reads.sent);
            words.counted = reads.sent;
        }
    }
};

// SOLO on block 0: levels back to back from [start, end) until the next batch is larger than
// solo_max, empty, met a hub or overflowed (or the host asked to stop); then publishes the
// batch and its counters in the state block. Every thread of block 0 calls it. ENTRIES: the
// shared frontier's entries (SOLO_FRONTIER_ROUNDS per thread of the build's largest block;
// 0: none).
//
// Block 0 is the only writer of the control words while the other blocks wait, so it works on
// a copy of them in shared memory: appends reserve slots with shared atomics and the end of a
// level reads the counters there (no L2 round trip for either); the copy goes back to ctrl
// before block 0 arrives. The copy has no hub slots (capacity 0), so a hub met in SOLO is
// expanded by the block itself (traversal_expand's full-list fallback) and ends the mode; the
// hub counter is not written back (it stays 0: SOLO starts only after the hubs were run).
// With FUSED_SOLO_SHARED the levels after the first read their items from the shared
// frontier (solo_frontier.cuh). A level costs two __syncthreads: solo_expand's vote (every
// item read, none appended yet) and the one after the appends, after which every thread reads
// the control words and takes the same decision (nothing writes them before the next vote).
//
// Device-driven runs: the block's last warp (the *peer warp*, SoloPeerWarp) also does SOLO's
// share of the protocol, between the level's vote and its closing barrier, so that on levels
// of fewer items than the block has threads (its lanes then have none) the system-scope
// fences and the peer link's round trips overlap the other warps' expansion instead of
// following it. Its lane 0 reads the sends' end before the vote (the level's appends start
// after it) and receives into the level's worklist and frontier.
template <typename Relax, bool WEIGHTED, unsigned int ENTRIES, bool PEERED>
__device__ void fused_solo(const FusedArgs& a, SoloFrontierArrays<ENTRIES>& arrays,
                           unsigned int start, unsigned int end, unsigned int current,
                           unsigned int threshold, unsigned int inbox_taken,
                           unsigned int sends_counted) {
    __shared__ unsigned int abort_seen;
    __shared__ SoloPeerWords peer_words;
    __shared__ __align__(16) unsigned int ctrl[TRAVERSAL_CTRL_WORDS];
    // Device-driven runs: the peer warp (see above).
    SoloPeerWarp<PEERED, false> peer(a, peer_words);
    if (threadIdx.x == 0) {
        unsigned int c[TRAVERSAL_CTRL_WORDS];
        load_words(a.ctrl, c);
#pragma unroll
        for (unsigned int i = 0; i < TRAVERSAL_CTRL_WORDS; ++i) {
            ctrl[i] = c[i];
        }
        ctrl[CTRL_HUB_COUNT] = 0u;
        ctrl[CTRL_HUB_COUNT + 1u] = 0u;
        ctrl[CTRL_HUB_CAP] = 0u;
        peer.start(inbox_taken, sends_counted);
    }
    __syncthreads();
    const SendBuffer send = a.template send_buffer<PEERED>(ctrl);
    const LowList low{a.low[current], a.low_capacity, threshold, ctrl};
    const SoloFrontier frontier = arrays.frontier(a.solo_frontier_capacity());
    const bool filter = a.solo_filter_loads();
    unsigned int levels = 0;
    unsigned int aborted = 0;
    unsigned int cached = 0;  // items of [start, end) in the frontier (none at the first level)
    unsigned long long processed = 0;
    while (true) {
        const unsigned int count = end - start;
        const DeviceWorklist items{a.wl_data, a.wl_mask, start, ctrl};
        const auto appends = SoloAppends<ENTRIES>::make(items, frontier, end, a.offsets);
        const SoloPeerReads reads = peer.before_level(send);
        solo_expand<Relax, WEIGHTED>(a.ops, a.offsets, a.targets, a.weights, items, appends,
                                     frontier, count, cached, send, low, filter);
        ++levels;
        peer.after_expand(levels, appends, send, low, reads);
        processed += count;
        __syncthreads();  // every append of the level done (this block is the only writer)
        const unsigned int e = ctrl[CTRL_WL_END];
        bool stop = ctrl[CTRL_HUB_COUNT] != 0u || ctrl[CTRL_WL_OVERFLOW] != 0u ||
                    ctrl[CTRL_SEND_OVERFLOW] != 0u || ctrl[CTRL_LOW_OVERFLOW] != 0u ||
                    e == end || e - end > a.solo_max ||
                    (a.bounded() && (levels >= a.level_budget ||
                                     ctrl[CTRL_SEND_END] - a.send_base >= a.send_yield));
        if (!stop && levels % FUSED_ABORT_POLL == 0u) {
            // Block-uniform (levels is): one more barrier every FUSED_ABORT_POLL levels.
            if (threadIdx.x == 0) {
                abort_seen = load_abort(a.abort);
            }
            __syncthreads();
            if (abort_seen != 0u) {
                aborted = 1u;
                stop = true;
            }
        }
        cached = e - end < frontier.capacity ? e - end : frontier.capacity;
        start = end;
        end = e;
        if (stop) {
            break;
        }
    }
    if (threadIdx.x == 0) {
        // The control words back (all but the hub words: see above).
        const unsigned int words[] = {CTRL_WL_END,   CTRL_SEND_END,     CTRL_WL_OVERFLOW,
                                      CTRL_SEND_OVERFLOW, CTRL_LOW_END, CTRL_LOW_OVERFLOW,
                                      CTRL_LOW_MIN};
#pragma unroll
        for (const unsigned int w : words) {
            store_relaxed(a.ctrl + w, ctrl[w]);
        }
        // Block 0's report to the next action (words only block 0 writes).
        store4_relaxed(a.fused + FUSED_SOLO_START, make_uint4(start, end, levels, aborted));
        store4_relaxed(a.fused + FUSED_SOLO_PROCESSED,
                       make_uint4(static_cast<unsigned int>(processed),
                                  static_cast<unsigned int>(processed >> 32), 0u, 0u));
        if (PEERED) {
            store_relaxed(a.fused + FUSED_SOLO_PUBLISHED, peer_words.counted);
            store_relaxed(a.fused + FUSED_SOLO_TAKEN, peer_words.taken);
        }
    }
}

// SOLO-ASYNC on block 0 (solo_queue.cuh) from the batch [start, end), with the frontier's
// arrays as its ring; then publishes the next batch and its counters in the state block as
// fused_solo does (one level: the phase counts as one round; processed: the items it
// expanded, label-correcting repeats included; unlisted and relisted: how its produced items
// differ from the worklist's, which the host counts: solo_queue.cuh, Counting). It works on
// ctrl itself (block 0 is its only user while the other blocks wait), so there is nothing to
// write back.
template <typename Relax, bool WEIGHTED, unsigned int ENTRIES>
__device__ void fused_solo_async(const FusedArgs& a, SoloFrontierArrays<ENTRIES>& arrays,
                                 unsigned int start, unsigned int end, unsigned int current,
                                 unsigned int threshold) {
    const DeviceWorklist wl{a.wl_data, a.wl_mask, start, a.ctrl};
    const SoloQueueResult r = solo_queue_run<Relax, WEIGHTED, ENTRIES>(
        a.ops, a.offsets, a.targets, a.weights, wl, end, a.low_list(current, threshold),
        arrays.frontier(ENTRIES), a.solo_max, a.solo_filter_loads(),
        [&] { return load_abort(a.abort) != 0u; });
    if (threadIdx.x == 0) {
        store4_relaxed(a.fused + FUSED_SOLO_START,
                       make_uint4(end, r.end, 1u, r.aborted ? 1u : 0u));
        store4_relaxed(a.fused + FUSED_SOLO_PROCESSED,
                       make_uint4(r.processed, 0u, r.unlisted, r.relisted));
    }
}

// SOLO on the blocks of cluster 0 (the `_cluster` builds, cluster_solo.cuh): fused_solo's
// report plus the items it never listed, the control words' worklist end set (the mode lists
// only the batch it leaves). Every thread of blocks 0 .. SOLO_CLUSTER - 1 calls it. Device-driven
// runs (PEERED, the `_peer_cluster` build): the last warp of block 0 is the peer warp
// (SoloPeerWarp, LAGGED), and block 0's thread 0 reports what it counted and took.
template <typename Relax, bool WEIGHTED, unsigned int ENTRIES, bool PEERED>
__device__ void fused_cluster_solo(const FusedArgs& a, SoloFrontierArrays<ENTRIES>& arrays,
                                   unsigned int start, unsigned int end, unsigned int current,
                                   unsigned int threshold, unsigned int inbox_taken,
                                   unsigned int sends_counted) {
    __shared__ SoloPeerWords peer_words;
    SoloPeerWarp<PEERED, true> peer(a, peer_words);
#ifdef GROUTE_TRACE_CLUSTER
    // A diagnostic build (-DGROUTE_TRACE_CLUSTER): when the phase started (block 0's thread 0;
    // in shared memory, so that no register holds it through the levels). Off by default: its
    // few instructions alone moved the one-device SSSP build's code enough to cost 2% on the
    // road grid (18.0 against 17.6 ms on one H200).
    __shared__ unsigned long long started_ns;
    if (threadIdx.x == 0u) {
        started_ns = peer_clock_ns();
    }
#endif
    if (SoloPeerWarp<PEERED, true>::lane()) {
        // By the thread that reads and writes the words through the levels (the peer warp's
        // lane 0), so no other thread's access orders against them but the report's, after
        // the block barrier below. (Written by thread 0 and read by the peer warp between
        // its arrival at level 0's barrier and its wait, compute-sanitizer's racecheck
        // reported the pair as a hazard, though the mode's first cluster barrier orders it.)
        peer.start(inbox_taken, sends_counted);
    }
    // Members map the appends' addresses at use (ClusterWorklist says why).
    const ClusterSoloResult r = cluster_solo_run<Relax, WEIGHTED, ENTRIES, PEERED>(
        a.ops, a.offsets, a.targets, a.weights, a.wl_data, a.wl_mask, a.ctrl,
        a.template send_buffer<PEERED>(a.ctrl), a.low_list(current, threshold), arrays, start,
        end, a.solo_max, FUSED_ABORT_POLL, a.abort, peer);
    if (PEERED) {
        // The peer warp's words, read below by thread 0: its last ones were written after
        // its arrival at the last level's cluster barrier (after_arrive); the mode's exit
        // barrier orders them, and this block barrier says so within the block.
        __syncthreads();
    }
    if (blockIdx.x == 0u && threadIdx.x == 0u) {
#ifdef GROUTE_TRACE_CLUSTER
        // A reduction, which nothing waits for (`+=` would put a load's round trip before
        // the report and this block's arrival, once a phase).
        atomicAdd(a.fused + FUSED_SOLO_US,
                  static_cast<unsigned int>((peer_clock_ns() - started_ns) / 1000ull));
#endif
#ifdef GROUTE_TRACE_LEVEL
        if (r.trace != 0u && a.fused[FUSED_TRACE_LEVEL] == 0u) {
            a.fused[FUSED_TRACE_LEVEL] = r.trace;
        }
#endif
        store_relaxed(a.ctrl + CTRL_WL_END, r.end);
        store4_relaxed(a.fused + FUSED_SOLO_START, make_uint4(r.start, r.end, r.levels, r.aborted));
        // Its intermediate levels' items were never listed (FUSED_SOLO_UNLISTED, as
        // SOLO-ASYNC's ring items): the host counts them as produced.
        store4_relaxed(a.fused + FUSED_SOLO_PROCESSED,
                       make_uint4(static_cast<unsigned int>(r.processed),
                                  static_cast<unsigned int>(r.processed >> 32), r.unlisted, 0u));
        if (PEERED) {
            store_relaxed(a.fused + FUSED_SOLO_PUBLISHED, peer_words.counted);
            store_relaxed(a.fused + FUSED_SOLO_TAKEN, peer_words.taken);
        }
    }
}

// CLUSTER: 0, or the blocks of the cluster that runs SOLO (the `_cluster` build, launched with
// clusters of that many blocks).
template <typename Relax, bool WEIGHTED, unsigned int SOLO_ENTRIES, bool PEERED,
          unsigned int CLUSTER>
__device__ __forceinline__ void fused_traversal(const FusedArgs& a) {
    // The single-block mode's shared frontier (SOLO) or ring (SOLO-ASYNC).
    __shared__ SoloFrontierArrays<SOLO_ENTRIES> solo_arrays;
    // One device (unbounded) owns every vertex: its send buffer has capacity 0 and is never
    // appended to (an append would be recorded as a send overflow, never written).
    const SendBuffer send = a.template send_buffer<PEERED>(a.ctrl);
    unsigned int* fused = a.fused;
    // The phase and its inputs (the release record), copied by thread 0 after every barrier;
    // every thread copies what it needs before the next barrier's opening __syncthreads.
    __shared__ unsigned int record[FUSED_RECORD_WORDS];
    // The action's copy of the state line until it is settled (thread 0 of the last block;
    // in shared memory, so that it takes no registers from the expand loops).
    __shared__ FusedState state;
    const auto keep_record = [&](const FusedRecord& r) {
#pragma unroll
        for (unsigned int i = 0; i < FUSED_RECORD_WORDS; ++i) {
            record[i] = r.w[i];
        }
    };
    unsigned int gen = 0;
    // Device-driven runs: what the publisher (thread 0 of the last block) has released of
    // this device's sends and freed of its inbox.
    unsigned int released = 0;
    unsigned int freed = 0;
    if (threadIdx.x == 0) {
        if (PEERED && blockIdx.x == 0) {
            // Device-driven runs: this member counts itself in PEER_PENDING (running), then
            // arrives at the start gate, whose verdict every member waits for at its first
            // idle, so the count cannot reach 0 before every member counted itself in.
            peer_count(a, 1ull);
            __threadfence_system();
            peer_start_arrive(a.peer);
        }
        FusedState state;  // written by the host before the launch
        load_words(fused + FUSED_PHASE, state.w);
        keep_record(state.record());
    }
    __syncthreads();
    while (true) {
        const unsigned int phase = record[RECORD_PHASE];
        if (phase == FUSED_PHASE_DONE || phase == FUSED_PHASE_STOP) {
            return;
        }
        const unsigned int start = record[RECORD_START];
        const unsigned int end = record[RECORD_END];
        const unsigned int threshold = record[RECORD_THRESHOLD];
        const unsigned int current = record[RECORD_LOW_CURRENT];
        const unsigned int taken = record[RECORD_LOW_TAKEN];
        const unsigned int in_begin = record[RECORD_IN_BEGIN];
        const unsigned int in_end = record[RECORD_IN_END];
        // The publisher (file comment, Device-driven runs): thread 0 of the last block, whose
        // share of a small batch is the smallest; of block 0 in SOLO, which releases and
        // frees from the same thread while it runs, so that one thread alone stores into
        // these words during a phase (phases are ordered by the barriers).
        const unsigned int publisher = phase == FUSED_PHASE_SOLO ? 0u : gridDim.x - 1u;
        if (PEERED && threadIdx.x == 0 && blockIdx.x == publisher) {
            const unsigned int sends_end = record[RECORD_PUBLISHED];
            if (sends_end != released) {
                peer_release(a, sends_end);
                released = sends_end;
            }
            if (in_begin != freed) {
                // Every position before in_begin was read by a finished phase; the sender
                // only ever reads this word before writing (no data to order).
                peer_store_relaxed_u32(a.recv_freed, in_begin);
                freed = in_begin;
            }
        }
        const LowList low = a.low_list(current, threshold);
        const DeviceWorklist wl{a.wl_data, a.wl_mask, start, a.ctrl};
        if (phase == FUSED_PHASE_EXPAND) {
            traversal_expand<Relax, WEIGHTED>(a.ops, a.offsets, a.targets, a.weights, wl,
                                              end - start, send, low, GridShape::launch(),
                                              HUB_MIN_DEGREE, a.filter_loads());
            if (in_end != in_begin) {
                // Device-driven runs: SplitReceive on the items the action took from the
                // inbox ring (kept ones join the next batch, others pass on to the next
                // device), in two pieces where the range wraps.
                const unsigned int first = in_begin & (a.inbox_capacity - 1u);
                const unsigned int count = in_end - in_begin;
                const unsigned int head =
                    count < a.inbox_capacity - first ? count : a.inbox_capacity - first;
                traversal_split_receive(a.ops, a.inbox + first, head, wl, send, low);
                if (count != head) {
                    traversal_split_receive(a.ops, a.inbox, count - head, wl, send, low);
                }
            }
        } else if (phase == FUSED_PHASE_SOLO) {
            if constexpr (CLUSTER != 0u) {
                static_assert(CLUSTER == SOLO_CLUSTER && SOLO_ENTRIES != 0u,
                              "the cluster builds: the wide ones");
                if (blockIdx.x < CLUSTER) {
                    fused_cluster_solo<Relax, WEIGHTED, SOLO_ENTRIES, PEERED>(
                        a, solo_arrays, start, end, current, threshold, in_end,
                        record[RECORD_PUBLISHED]);
                }
            } else if (blockIdx.x == 0) {
                if constexpr (SOLO_ENTRIES != 0u) {
                    if (a.solo_async()) {
                        fused_solo_async<Relax, WEIGHTED, SOLO_ENTRIES>(
                            a, solo_arrays, start, end, current, threshold);
                    } else {
                        fused_solo<Relax, WEIGHTED, SOLO_ENTRIES, PEERED>(
                            a, solo_arrays, start, end, current, threshold, in_end,
                            record[RECORD_PUBLISHED]);
                    }
                } else {
                    fused_solo<Relax, WEIGHTED, SOLO_ENTRIES, PEERED>(
                        a, solo_arrays, start, end, current, threshold, in_end,
                        record[RECORD_PUBLISHED]);
                }
            }
        } else if (phase == FUSED_PHASE_HUBS) {
            traversal_expand_hubs<Relax, WEIGHTED>(a.ops, a.offsets, a.targets, a.weights, wl,
                                                   send, low);
        } else {  // FUSED_PHASE_REEXAMINE: the taken list into the other one
            traversal_reexamine(a.ops.values, a.low[current], taken, wl,
                                a.low_list(current ^ 1u, threshold));
        }
        grid_barrier(
            fused, gen, a.barrier,
            [&] { return fused_next<PEERED>(state, a, phase); },
            keep_record, [&] { fused_settle(fused, state); });
    }
}

}  // namespace groute

// The extern "C" entry points of one algorithm's fused traversal, NAME##_fused (no launch
// bounds; the host launches it with blocks of up to 256 threads) and NAME##_fused_wide (the
// same kernel under __launch_bounds__(1024, 1), which caps its registers so that a block of
// 1,024 threads fits):
//   NAME##_fused(values, offsets, targets, weights, wl_data, wl_mask, ctrl, fused, abort,
//                owned_begin, owned_end, low0, low1, low_capacity, prio_delta, solo_max,
//                spin_ns, barrier_flags, send_data, send_capacity, send_base, level_budget,
//                send_yield, peer, inbox, send_published, inbox_capacity, recv_freed)
// (mirrored by the typed wrapper in crates/groute-worklist/src/traversal/fused.rs). low0/low1
// null: soft priority off. spin_ns, barrier_flags: FusedBarrierConfig (FUSED_DIRECT_MIN,
// FUSED_SOLO_SHARED and FUSED_SOLO_DIRECT_MIN included). The narrow build keeps no shared
// frontier (SoloFrontierArrays<0>: its SOLO levels read the worklist, and it keeps the
// registers of the build without one, which set how many of its blocks fit on dense graphs);
// the wide one has 2,048 entries (24 KiB: two per thread of a 1,024-thread block).
// NAME##_fused_peer and NAME##_fused_peer_wide are the same two builds for the members of a
// device-driven run (PEERED: they use `peer`, `inbox`, `send_published`, `inbox_capacity` and
// `recv_freed`); the other two ignore those parameters and compile every device-driven path
// out (a group of size 1, known to the compiler), so one-device and bounded runs keep their
// registers.
#define GROUTE_FUSED_TRAVERSAL_ENTRY(ENTRY, BOUNDS, SOLO_ENTRIES, RELAX, WEIGHTED, PEERED,     \
                                     CLUSTER)                                                  \
    extern "C" __global__ void BOUNDS ENTRY(                                                   \
        unsigned int* values, const unsigned long long* offsets, const unsigned int* targets,  \
        const unsigned int* weights, unsigned int* wl_data, unsigned int wl_mask,              \
        unsigned int* ctrl, unsigned int* fused, const unsigned int* abort,                    \
        unsigned int owned_begin, unsigned int owned_end, groute::VertexValue* low0,           \
        groute::VertexValue* low1, unsigned int low_capacity, unsigned int prio_delta,         \
        unsigned int solo_max, unsigned int spin_ns, unsigned int barrier_flags,               \
        groute::VertexValue* send_data, unsigned int send_capacity, unsigned int send_base,    \
        unsigned int level_budget, unsigned int send_yield, groute::PeerGroup peer,            \
        const groute::VertexValue* inbox, unsigned int* send_published,                        \
        unsigned int inbox_capacity, unsigned int* recv_freed) {                               \
        const groute::FusedArgs a{groute::MinSplitOps{owned_begin, owned_end, values},         \
                                  offsets,                                                     \
                                  targets,                                                     \
                                  weights,                                                     \
                                  wl_data,                                                     \
                                  wl_mask,                                                     \
                                  ctrl,                                                        \
                                  fused,                                                       \
                                  abort,                                                       \
                                  {low0, low1},                                                \
                                  low_capacity,                                                \
                                  prio_delta,                                                  \
                                  solo_max,                                                    \
                                  groute::FusedBarrierConfig{spin_ns, barrier_flags},          \
                                  send_data,                                                   \
                                  send_capacity,                                               \
                                  send_base,                                                   \
                                  level_budget,                                                \
                                  send_yield,                                                  \
                                  peer,                                                        \
                                  inbox,                                                       \
                                  send_published,                                              \
                                  inbox_capacity,                                              \
                                  recv_freed};                                                 \
        groute::fused_traversal<RELAX, WEIGHTED, SOLO_ENTRIES, PEERED, CLUSTER>(a);            \
    }

// NAME##_fused_cluster (compute capability 9.0 or later): the wide build launched in clusters of
// SOLO_CLUSTER blocks, whose SOLO phases run on cluster 0 (cluster_solo.cuh); one device,
// unbounded (it compiles the device-driven paths out). NAME##_fused_peer_cluster: the same for
// the members of a device-driven run.
#define GROUTE_FUSED_CLUSTER_BOUNDS                                                            \
    __cluster_dims__(groute::SOLO_CLUSTER, 1, 1) __launch_bounds__(1024, 1)
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define GROUTE_FUSED_CLUSTER_ENTRY(NAME, RELAX, WEIGHTED)                                      \
    GROUTE_FUSED_TRAVERSAL_ENTRY(NAME##_fused_cluster, GROUTE_FUSED_CLUSTER_BOUNDS, 2048,      \
                                 RELAX, WEIGHTED, false, groute::SOLO_CLUSTER)                 \
    GROUTE_FUSED_TRAVERSAL_ENTRY(NAME##_fused_peer_cluster, GROUTE_FUSED_CLUSTER_BOUNDS, 2048, \
                                 RELAX, WEIGHTED, true, groute::SOLO_CLUSTER)
#else
#define GROUTE_FUSED_CLUSTER_ENTRY(NAME, RELAX, WEIGHTED)
#endif

#define GROUTE_FUSED_TRAVERSAL_KERNEL(NAME, RELAX, WEIGHTED)                                   \
    GROUTE_FUSED_TRAVERSAL_ENTRY(NAME##_fused, , 0, RELAX, WEIGHTED, false, 0)                 \
    GROUTE_FUSED_TRAVERSAL_ENTRY(NAME##_fused_wide, __launch_bounds__(1024, 1), 2048, RELAX,    \
                                 WEIGHTED, false, 0)                                           \
    GROUTE_FUSED_TRAVERSAL_ENTRY(NAME##_fused_peer, , 0, RELAX, WEIGHTED, true, 0)             \
    GROUTE_FUSED_TRAVERSAL_ENTRY(NAME##_fused_peer_wide, __launch_bounds__(1024, 1), 2048,      \
                                 RELAX, WEIGHTED, true, 0)                                     \
    GROUTE_FUSED_CLUSTER_ENTRY(NAME, RELAX, WEIGHTED)
