// The generic min-label traversal (BFS, SSSP) as ONE persistent kernel per run on one device
// (and as bounded launches of many levels on each of several devices, see below):
// the round loop runs on the device, phases are separated by a grid-wide barrier instead of a
// kernel launch and a control-block read-back. Mirror of crates/groute-worklist/src/traversal/
// fused.rs; an algorithm instantiates it in a .cu file of its own (kernels/bfs/bfs_fused.cu).
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
// capacity past CTRL_SEND_FREED, the positions the receiver has read, which it stores here);
// the grid phases send through the block's stage (block_stage.cuh: one reservation per block
// and round or hub tile).
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
// one). The live counters in ctrl are read by actions only (blocks reading the live hub counter
// after a barrier could see the next round's hubs, listed by a block released early, so they
// would disagree about the hub phase and their barriers would mix: a Kronecker graph hangs).
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
// acquire/release operations or fences) and a __syncthreads. The action avoids serial
// volatile round trips (read-modify-writes of single words, short-circuit conditions), and
// no block pays one more for the phase words.
//
// Where a single-block level goes (a road grid's levels of about 1,000 vertices run by one
// block of 1,024 threads): its warps stall mostly at __syncthreads (the list-claim check and
// the level's end: the level takes as long as its slowest warp), then on the targets loads,
// the filtering loads of the heads' values, the offsets loads (after the item load) and the
// atomics' results. The level is a chain of dependent round trips (item, offsets, targets,
// value, atomicMin). The shared frontier (FUSED_SOLO_SHARED, the default) cuts it to
// (targets with the item's value, value filter, atomicMin with the head's
// offsets), the item and its range coming from shared memory; with FUSED_SOLO_DIRECT_MIN the
// filter goes too. The block-level claim's vote doubles as the level's read-before-append
// barrier, and the level's decision is taken by every thread (two __syncthreads a level
// instead of three); the targets loads of a level do not wait for the item's value (an
// unreached item relaxes nothing: relax_thread_arcs).
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
#include "traversal.cuh"

// The pieces, each including the one before: the state and parameters, the barrier action,
// SOLO's peer warp, the single-block phases.
#include "fused_state.cuh"
#include "fused_next.cuh"
#include "fused_solo_peer.cuh"
#include "fused_solo.cuh"

namespace groute {

// Lists of at least this many arcs are the grid phases' hubs (HUBS expands them in tiles of
// HUB_TILE arcs over the whole grid): in the weighted builds (SSSP) from half of
// HUB_MIN_DEGREE, which the others (BFS) and the host-driven launches of a full grid keep.
// On a Kronecker graph SSSP's lists of 1,024 to 2,047 arcs are few and heavy; expanded each
// by the block that holds it (block granularity, one list at a time) they set the pace of
// their EXPAND phase's last blocks, where hub tiles spread them over the grid. The push BFS
// ran slower so, and SSSP slower from 512. The host sizes the hub list for the lower one
// (groute-worklist's HubPolicy, FUSED_HUB_MIN_DEGREE).
// `-DGROUTE_FUSED_HUB_MIN_DEGREE=N` (GROUTE_NVRTC_OPTIONS) sets N for every build, for
// experiments.
template <bool WEIGHTED>
__host__ __device__ constexpr unsigned int fused_hub_min_degree() {
#ifdef GROUTE_FUSED_HUB_MIN_DEGREE
    return GROUTE_FUSED_HUB_MIN_DEGREE;
#else
    return WEIGHTED ? HUB_MIN_DEGREE / 2u : HUB_MIN_DEGREE;
#endif
}

// Items each thread re-examines a round (traversal_reexamine): in the narrow builds (blocks
// of at most 256 threads) four in the members' and two in the one-device build's, whose
// registers (which set how many of its blocks fit) four would raise; one in the wide builds,
// whose 1,024 threads a round already fill the block's stage.
template <bool PEERED, unsigned int SOLO_ENTRIES>
__host__ __device__ constexpr unsigned int fused_reexamine_items() {
    return SOLO_ENTRIES != 0u ? 1u : PEERED ? 4u : 2u;
}

// Items each thread receives a round (traversal_split_receive): four in the members' narrow
// build, as it re-examines; one in the wide builds (their stage fills with one a thread) and
// in the others, which never receive.
template <bool PEERED, unsigned int SOLO_ENTRIES>
__host__ __device__ constexpr unsigned int fused_receive_items() {
    return PEERED && SOLO_ENTRIES == 0u ? 4u : 1u;
}

// CLUSTER: 0, or the blocks of the cluster that runs SOLO (the `_cluster` build, launched with
// clusters of that many blocks).
template <typename Relax, bool WEIGHTED, unsigned int SOLO_ENTRIES, bool PEERED,
          unsigned int CLUSTER>
__device__ __forceinline__ void fused_traversal(const FusedArgs& a) {
    // The single-block mode's shared frontier (SOLO).
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
    phase_trace_start();
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
            traversal_expand<Relax, WEIGHTED, PEERED>(a.ops, a.offsets, a.targets, a.weights,
                                                      wl, end - start, send, low,
                                                      GridShape::launch(),
                                                      fused_hub_min_degree<WEIGHTED>(),
                                                      a.filter_loads());
            if (in_end != in_begin) {
                // Device-driven runs: SplitReceive on the items the action took from the
                // inbox ring (kept ones join the next batch, others pass on to the next
                // device), in two pieces where the range wraps.
                const unsigned int first = in_begin & (a.inbox_capacity - 1u);
                const unsigned int count = in_end - in_begin;
                const unsigned int head =
                    count < a.inbox_capacity - first ? count : a.inbox_capacity - first;
                constexpr unsigned int ITEMS = fused_receive_items<PEERED, SOLO_ENTRIES>();
                traversal_split_receive<PEERED, ITEMS>(a.ops, a.inbox + first, head, wl, send,
                                                       low);
                if (count != head) {
                    traversal_split_receive<PEERED, ITEMS>(a.ops, a.inbox, count - head, wl,
                                                           send, low);
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
                fused_solo<Relax, WEIGHTED, SOLO_ENTRIES, PEERED>(
                    a, solo_arrays, start, end, current, threshold, in_end,
                    record[RECORD_PUBLISHED]);
            }
        } else if (phase == FUSED_PHASE_HUBS) {
            traversal_expand_hubs<Relax, WEIGHTED, false, PEERED>(a.ops, a.offsets, a.targets,
                                                                  a.weights, wl, send, low);
        } else {  // FUSED_PHASE_REEXAMINE: the taken list into the other one
            traversal_reexamine<fused_reexamine_items<PEERED, SOLO_ENTRIES>()>(
                a.ops.values, a.low[current], taken, wl, a.low_list(current ^ 1u, threshold));
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
// 1,024 threads fits), each taking one FusedParams (abi_traversal.h, filled by the typed launch
// in crates/groute-worklist/src/traversal/fused/launch.rs). low[] null: soft priority off.
// spin_ns, barrier_flags: FusedBarrierConfig (FUSED_DIRECT_MIN, FUSED_SOLO_SHARED and
// FUSED_SOLO_DIRECT_MIN included). The narrow build keeps no shared frontier
// (SoloFrontierArrays<0>: its SOLO levels read the worklist, and it keeps the registers of the
// build without one, which set how many of its blocks fit on dense graphs); the wide one has
// 2,048 entries (24 KiB: two per thread of a 1,024-thread block).
// NAME##_fused_peer and NAME##_fused_peer_wide are the same two builds for the members of a
// device-driven run (PEERED: they use `peer`, `inbox`, `send_published`, `inbox_capacity` and
// `recv_freed`); the other two ignore those fields and compile every device-driven path out (a
// group of size 1, known to the compiler), so one-device and bounded runs keep their
// registers.
#define GROUTE_FUSED_TRAVERSAL_ENTRY(ENTRY, BOUNDS, SOLO_ENTRIES, RELAX, WEIGHTED, PEERED,     \
                                     CLUSTER)                                                  \
    extern "C" __global__ void BOUNDS ENTRY(const groute::FusedParams p) {                     \
        const groute::FusedArgs a{groute::MinSplitOps{p.owned_begin, p.owned_end, p.values},   \
                                  p.offsets,                                                   \
                                  p.targets,                                                   \
                                  p.weights,                                                   \
                                  p.wl_data,                                                   \
                                  p.wl_mask,                                                   \
                                  p.ctrl,                                                      \
                                  p.fused,                                                     \
                                  p.abort,                                                     \
                                  {p.low[0], p.low[1]},                                        \
                                  p.low_capacity,                                              \
                                  p.prio_delta,                                                \
                                  p.solo_max,                                                  \
                                  groute::FusedBarrierConfig{p.spin_ns, p.barrier_flags},      \
                                  p.send_data,                                                 \
                                  p.send_capacity,                                             \
                                  p.send_base,                                                 \
                                  p.level_budget,                                              \
                                  p.send_yield,                                                \
                                  p.peer,                                                      \
                                  p.inbox,                                                     \
                                  p.send_published,                                            \
                                  p.inbox_capacity,                                            \
                                  p.recv_freed};                                               \
        groute::fused_traversal<RELAX, WEIGHTED, SOLO_ENTRIES, PEERED, CLUSTER>(a);            \
    }

// NAME##_fused_cluster (compute capability 9.0 or later): the wide build launched in clusters of
// SOLO_CLUSTER blocks, whose SOLO phases run on cluster 0 (cluster_solo.cuh); one device,
// unbounded (it compiles the device-driven paths out). NAME##_fused_peer_cluster: the same for
// the members of a device-driven run.
#define GROUTE_FUSED_CLUSTER_BOUNDS                                                            \
    __cluster_dims__(groute::SOLO_CLUSTER, 1, 1) __launch_bounds__(1024, 1)
// Frontier entries of each block of the cluster builds: two buffers of 1,536, a level's share
// of a block. The mode's bound is 4 x 1,024 items a level (one per thread); the warps'
// destinations spread a level's items unevenly over the blocks, and an entry past a block's
// share spills and ends the phase. A share half again the even one keeps most such levels in
// the mode (a road-usa-like grid's BFS and SSSP leave it about a tenth less often and run a
// few percent faster); raising the bound with it, so that every level stays in the mode, runs
// slower. 36 KiB of static shared memory. `-DGROUTE_CLUSTER_ENTRIES=N` (GROUTE_NVRTC_OPTIONS)
// sets another, for experiments.
#ifndef GROUTE_CLUSTER_ENTRIES
#define GROUTE_CLUSTER_ENTRIES 3072
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define GROUTE_FUSED_CLUSTER_ENTRY(NAME, RELAX, WEIGHTED)                                      \
    GROUTE_FUSED_TRAVERSAL_ENTRY(NAME##_fused_cluster, GROUTE_FUSED_CLUSTER_BOUNDS,            \
                                 GROUTE_CLUSTER_ENTRIES, RELAX, WEIGHTED, false,               \
                                 groute::SOLO_CLUSTER)                                         \
    GROUTE_FUSED_TRAVERSAL_ENTRY(NAME##_fused_peer_cluster, GROUTE_FUSED_CLUSTER_BOUNDS,       \
                                 GROUTE_CLUSTER_ENTRIES, RELAX, WEIGHTED, true,                \
                                 groute::SOLO_CLUSTER)
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
