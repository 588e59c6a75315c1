// Direction-optimizing BFS driven by the devices: ONE persistent cooperative launch per device
// runs every level of a run, on 1..PEER_MAX_DEVICES GPUs, with no host in the loop. Launched
// by groute-bfs (crates/groute-bfs/src/direction/fused/). The push step is the push expand of
// traversal.cuh, the pull step's parent search and the level counters are direction.cuh's;
// the grid barrier is the fused worklist kernel's (grid_barrier.cuh); the devices meet in
// peer_post_allreduce_sum (peer_post.cuh: values and a tag posted into every peer's
// postbox, each device polling its own).
//
// Every device holds the rows of the vertices it owns, [owned_begin, owned_end), of the CSR
// (and of the transpose of a directed graph), indexed by global vertex and arc ids (the host
// passes rebased pointers; on several devices, the whole offset arrays, whose degrees of any
// vertex the global counts of a sparse push read), and a full-length level array that is
// globally consistent up to the current level. Its frontier is its owned vertices at the
// current level, at worklist positions [front, front + count); every step reads the rows of
// owned vertices only.
//
// Level 0 counts the source, which the host put at worklist position 0 of the device that
// owns it, and decides. Then every level L is one of these steps, chosen alike on every
// device by the decide before it; each ends in a decide (below) or, on several devices after
// a pull, in an exchange that decides:
//
//   push, one device: traversal_expand over the frontier's out-arcs, every improved head
//      appended (hubs listed and expanded by the whole grid in a second phase, THREAD_ARCS
//      consecutive arcs per thread and step, behind a grid barrier). The appends are the
//      next frontier where they lie in the ring worklist (`front` moves past the expanded
//      items): count_frontier sums their degrees. Grid barrier; decide.
//   push, several devices, level 0 (the source): every device expands the source's out-arcs
//      itself, reading them from the owner's rows over the peer link (DoRun::expand_source),
//      gives level 1 to every UNREACHED head, owned or not, and appends the owned ones it
//      set. Grid barrier; count_frontier; grid barrier whose action is the decide
//      (decide_folded: it sums the counters). No discovery crosses a link, and no device
//      waits for the owner to expand a hub source.
//   push, several devices, sparse (the global frontier has at most n / SPARSE_DIVISOR
//      out-arcs): every append is also stored into this device's list in every peer's inbox
//      as it is appended (PushAppends); the action of the push's last grid barrier exchanges
//      the lists' lengths. append_owned appends the owned appends behind the list and
//      apply_lists the received lists' vertices this device sets first and owns, both
//      counting every vertex they set (owned or not), so the counters are global on every
//      device and the decide exchanges nothing. No pass over the level array.
//   push, several devices, dense: every append is also marked in this device's discovery
//      bitmap (PushAppends); the action of the push's last grid barrier exchanges the
//      numbers of appends. Where they add up to no more than a sparse push may append
//      (DoRun::lists_fit: the frontier's out-arcs bound a push's appends loosely, and a
//      frontier of hubs often finds few), send_appends stores the appends into the peers'
//      lists as a sparse push does and clears their bits of the bitmap; grid barrier whose
//      action is an exchange of no values (a barrier across the devices that makes the
//      stores visible); then as a sparse push (append_owned, apply_lists; the decide
//      exchanges nothing). Else the action rewinds the worklist; send_marks stores the
//      bitmap's nonzero words into every peer's inbox; grid barrier whose action is an
//      exchange of no values; apply_marks applies the received words and appends the owned
//      vertices of the bitmap and of the received words (a lane per word, reading no level);
//      grid barrier; count_frontier; grid barrier; decide.
//   pull: pull_frontier gives every owned UNREACHED vertex with an in-neighbour at L the
//      level L + 1, appends it as the next frontier (the decide that chose the pull rewound
//      the worklist; warps count their finds and reserve their slots once per block) and
//      counts it; each warp's ballot of finds (32 consecutive vertices from a word-aligned
//      start: one bitmap word) goes straight into the peers' inboxes on several devices.
//      The _bits builds (front_bits, pull_lists and pullable not null) instead scan pull
//      lists (the owned vertices with in-arcs, then those the last pull left unreached),
//      test in-neighbours against the bitmap of the frontier at L (DoRun::frontier_bits;
//      after a push, list_front first fills it from the level array) and set the bits of
//      their finds in the bitmap of L + 1, cleared first behind a grid barrier, from which
//      send_found stores the words into the peers' inboxes (behind another) and a push
//      after the pull appends its frontier (direction_fused_pull.cuh says how). One device:
//      grid barrier; decide. Several: a grid barrier whose action is the decide
//      (decide_folded), its exchange of the counters also the one that makes the stored
//      words visible (a device's owned vertices at L + 1 are exactly its own finds, so the
//      counters are complete before it); then apply_pulled stores the received words'
//      levels (and the words into the bitmap of L + 1) behind a grid barrier of this device
//      only.
//
// The decide (the action of a grid barrier, one thread) sums the level counters over the devices
// (peer_post_allreduce_sum, 4 values; none after a push that sent lists), accounts the step exactly
// as the host's run_levels does, applies Beamer's rule (direction_pulls, the port of
// SwitchRule::pulls) to the global counts and publishes the next step (or DONE when the global
// frontier is empty) in the barrier's record. Every device sees the same sums, so every device
// decides alike and they make the same sequence of exchanges: in a sparse push level one (the
// lengths'), in a dense one two when its appends go as lists (the lengths', then one of no values
// that makes the entries visible) and three when they go as words (the lengths', the words', the
// counters'), one in every other level (the source's push included: its counters').
//
// Trace (`trace_words`, null: off; kernels/include/direction_trace.cuh): the thread running
// each barrier's action stamps the end of the phase before it, for the trace row of the
// current step (row 0: the source's count), and notes the step's kind, level, finds and hubs;
// thread 0 of block 0 stamps the kernel's start and end.
//
// Inboxes: two halves of (size - 1) * words u32 per device, the discoveries at level M in half
// M & 1, so consecutive levels alternate (slot s of a half holds the words, or a push's list, of
// the s-th other device in rank order), then the discovery bitmap of words u32; zeroed by the host
// before a run and kept zero between levels by the receiver (and the bitmap by send_marks and
// apply_marks, or send_appends). Why the reuse is race-free: level S stores during itself (at the
// latest in its send pass; a sparse push and a pull during the step), so after the first exchange
// of level S - 1 (every level makes at least one); the half's previous contents, from level S - 2,
// were cleared by the receiver in that level's apply pass, which it finishes (with a
// __threadfence_system of each clearing thread) before it arrives at any exchange of level S - 1.
//
// Failures: an exchange that returns a PeerStatus other than PEER_OK (the host's abort word, a
// peer's failure, or the group's timeout) stops the kernel with DO_STATUS set; every decide
// also polls the abort word every DO_ABORT_POLL levels (an exchange polls it only while it
// waits, and one device makes none); a device that stops there leaves its peers waiting at
// their next exchange, where they see the abort word too. The host reports either as an error
// and discards the levels. Worklist overflow (it cannot: n plus the rows the member holds, see
// FusedMember::new) is left in ctrl as usual.
//
// The pull CSR is the push CSR for a symmetric graph (the same pointers). state: DO_WORDS u64,
// zeroed by the host. barrier: at least FUSED_BARRIER_WORDS u32 (grid_barrier.cuh), zeroed
// by the host. Launch cooperatively with blockDim.x = 256 (a multiple of 32) and a grid of at
// most the resident maximum.
#pragma once

// Hub tiles of 1024 arcs, one block step of the batched hub phase at DO_BLOCK (256) threads
// (THREAD_ARCS arcs each): a Kronecker graph's largest hub spreads over twice as many blocks
// as with tiles of 2048, each running one step instead of two dependent ones, which shortens
// the hub phase. The fused traversal keeps 2048, where 1024 gains nothing.
#define GROUTE_HUB_TILE 1024

#include "block_count.cuh"
#include "direction.cuh"
#include "direction_trace.cuh"
#include "grid_barrier.cuh"
#include "peer_group.cuh"
#include "peer_post.cuh"
#include "push_appends.cuh"
#include "traversal.cuh"

// The pieces: the state block's words, the run (DoRun) and its passes, and the
// barriers' actions (its exchanges and the decide).
#include "direction_fused_words.cuh"
#include "direction_fused_run.cuh"
#include "direction_fused_pull.cuh"
#include "direction_fused_decide.cuh"

namespace groute {

// The kernel's body. SEVERAL false compiles a one-device kernel, which holds none of the peer
// steps; SEVERAL true a kernel for several devices only (the host launches it on 2 or more
// members only), which holds none of the one-device steps. Either way the registers and code
// of the steps a run takes are not shaped by steps it never takes.
template <bool SEVERAL, bool BITMAPS>
__device__ __forceinline__ void direction_fused(
    unsigned int* levels, const unsigned long long* push_offsets,
    const unsigned int* push_targets, const unsigned long long* pull_offsets,
    const unsigned int* pull_sources, unsigned int n, unsigned int owned_begin,
    unsigned int owned_end, unsigned int* wl_data, unsigned int wl_mask, unsigned int* ctrl,
    unsigned int* barrier, unsigned long long* state, unsigned int* const* inboxes,
    unsigned long long in_arcs, unsigned long long alpha, unsigned long long beta,
    unsigned long long gamma, const PeerGroup& group, unsigned long long* trace_words,
    unsigned long long* const* postboxes, unsigned int source,
    const unsigned int* source_targets, unsigned int* front_bits, unsigned int* pull_lists,
    unsigned long long pull_list_words, const unsigned int* pullable,
    unsigned long long pullable_count) {
    const DeviceWorklist wl{wl_data, wl_mask, 0u, ctrl};
    const DoRun run{levels,  push_offsets, push_targets,         pull_offsets, pull_sources,
                    n,       owned_begin,  owned_end,            wl,           state,
                    inboxes, inboxes[group.rank], in_arcs,       alpha,        beta,
                    gamma,   group,        postboxes,            front_bits,   pull_lists,
                    pull_list_words, pullable,    pullable_count, SEVERAL, BITMAPS};
    const DirectionTrace trace{trace_words};
    const bool tracer = blockIdx.x == 0u && threadIdx.x == 0u;
    if (tracer) {
        // The start gate (peer_group.cuh): exchange 0 completes only once every member runs.
        peer_start_arrive(group);
        trace.stamp_header(TRACE_START);
    }
    const FusedBarrierConfig config{0u, 0u};
    __shared__ FusedRecord shared_record;
    unsigned int gen = 0;
    const auto publish = [&](const FusedRecord& r) { shared_record = r; };
    const auto settle = [] {};
    unsigned int front = 0;  // the worklist position of the frontier's first item
    unsigned int row = 0;  // the trace row: the level steps run so far
    // The previous step pulled: the bitmap of the frontier is complete (DoRun::frontier_bits).
    bool pulled = false;
    // The pulls scan lists (direction_fused_pull.cuh), the first `pullable`, the later ones
    // what the last pull left (`listed`); such a pull appends nothing, so after it the next
    // frontier is in the bitmap only (`unappended`).
    const bool lists = BITMAPS && run.pull_lists_of_run().fit(gridDim.x * blockDim.x / 32u);
    bool listed = false;
    bool unappended = false;

    // The host put the source at worklist position 0 of the device that owns it and the
    // worklist's end behind it: the frontier of level 0, counted without a pass over the
    // level array.
    run.count_frontier(0u, load_volatile(ctrl + CTRL_WL_END));
    grid_barrier(
        barrier, gen, config, [&] { return run.decide(trace, row); }, publish, settle);
    FusedRecord next = shared_record;
    while (next.w[DO_R_PHASE] == DO_PUSH || next.w[DO_R_PHASE] == DO_PULL) {
        ++row;
        const unsigned int level = next.w[DO_R_LEVEL];
        const bool push = next.w[DO_R_PHASE] == DO_PUSH;
        if (push) {
            pulled = false;
        }
        const auto local_barrier = [&] {
            grid_barrier(
                barrier, gen, config, [] { return FusedRecord{{0u, 0u, 0u, 0u, 0u, 0u}}; },
                publish, settle);
        };
        // The barrier after a push's sends (lists or marks words), whose action exchanges
        // with the peers (the trace's send and exchange ends); false where the exchange failed
        // (DO_STATUS set).
        const auto exchange_sent = [&] {
            grid_barrier(
                barrier, gen, config,
                [&] {
                    trace.stamp(row, TRACE_SEND_END);
                    const bool ok = run.exchange(nullptr, nullptr, 0u);
                    trace.stamp(row, TRACE_EXCHANGE_END);
                    return FusedRecord{{ok ? 1u : 0u, 0u, 0u, 0u, 0u, 0u}};
                },
                publish, settle);
            return shared_record.w[0] != 0u;
        };
        if (push && unappended) {
            run.append_found(level);
            local_barrier();
        }
        unappended = false;
        // On several devices the push of level 0 expands the source on every device; a later
        // push is sparse (it sends the list of its appends; decided alike everywhere) or
        // dense (it marks a discovery bitmap, then sends lists or the bitmap's words).
        const bool source_push = SEVERAL && push && level == 0u;
        const bool sparse = push && SEVERAL && !source_push && next.w[DO_R_SPARSE] != 0u;
        const bool dense = push && SEVERAL && !source_push && !sparse;
        // The push's appends went to the peers as lists (a sparse push, or a dense one with
        // few appends): the counters are global, the decide exchanges nothing.
        bool sent_lists = sparse;
        const auto step_done = [&] {
            trace.stamp(row, TRACE_STEP_END);
            trace.note(row, TRACE_KIND, next.w[DO_R_PHASE]);
            trace.note(row, TRACE_LEVEL, level);
        };
        if (source_push) {
            // The source's arcs, expanded by every device (DoRun::expand_source): no
            // exchange of discoveries; the decide below sums the counts.
            run.expand_source(source, source_targets);
            grid_barrier(
                barrier, gen, config,
                [&] {
                    step_done();
                    return FusedRecord{{load_volatile(ctrl + CTRL_WL_END), 0u, 0u, 0u, 0u, 0u}};
                },
                publish, settle);
            front += next.w[DO_R_COUNT];
            run.count_frontier(front, shared_record.w[0]);
        } else if (push) {
            const MinSplitOps ops{0u, n, levels};
            const SendBuffer none{nullptr, 0u, 0u, ctrl};
            const DeviceWorklist frontier{wl_data, wl_mask, front, ctrl};
            const unsigned int count = next.w[DO_R_COUNT];
            const unsigned int list_begin = front + count;
            bool stored = false;  // this thread stored list entries (sparse)
            // Makes this thread's list entries visible to the peers before the barrier.
            const auto fence_entries = [&] {
                if (stored) {
                    stored = false;
                    __threadfence_system();
                }
            };
            const PushAppends appends_to{frontier,    inboxes,    list_begin,
                                         run.half(level + 1u), run.words(), group.rank,
                                         group.size,  sparse,     &stored,
                                         dense ? run.marks() : nullptr};
            traversal_expand_into<BfsRelax, false>(ops, push_offsets, push_targets, nullptr,
                                                   frontier, appends_to, count, none, LowList{},
                                                   GridShape::launch(), next.w[DO_R_HUBS], true);
            fence_entries();
            // The action lists whether hubs wait (their expansion appends: no exchange yet)
            // and where the appends end; once none wait, the lengths of the devices' appends
            // are exchanged (word 2: 1 when it succeeded, 2 when it failed). A dense push whose
            // appends turn out as few as a sparse push's is completed as one (word 3: 1,
            // DoRun::lists_fit); else it rewinds the worklist (its next frontier is appended
            // from 0).
            const auto appended = [&](unsigned int hubs) {
                unsigned int end = load_volatile(ctrl + CTRL_WL_END);
                unsigned int listed_exchange = 0u;
                unsigned int as_lists = 0u;
                if ((sparse || dense) && hubs == 0u) {
                    listed_exchange = run.exchange_lengths(end - list_begin) ? 1u : 2u;
                    as_lists = dense && listed_exchange == 1u && run.lists_fit() ? 1u : 0u;
                    if (dense && as_lists == 0u) {
                        store_relaxed(ctrl + CTRL_WL_END, 0u);
                        end = 0u;
                    }
                    if (sparse) {
                        trace.stamp(row, TRACE_EXCHANGE_END);  // a dense push's: its send's
                    }
                }
                return FusedRecord{{hubs, end, listed_exchange, as_lists, 0u, 0u}};
            };

            grid_barrier(
                barrier, gen, config,
                [&] {
                    step_done();
                    const unsigned int hubs = load_volatile(ctrl + CTRL_HUB_COUNT);
                    trace.note(row, TRACE_HUBS, hubs);
                    return appended(hubs);
                },
                publish, settle);
            if (shared_record.w[0] != 0u) {
                traversal_expand_hubs_into<BfsRelax, false, true>(
                    ops, push_offsets, push_targets, nullptr, frontier, appends_to, none,
                    LowList{});
                fence_entries();
                grid_barrier(
                    barrier, gen, config,
                    [&] {
                        trace.stamp(row, TRACE_HUBS_END);
                        store_relaxed(ctrl + CTRL_HUB_COUNT, 0u);
                        store_relaxed(ctrl + CTRL_HUB_COUNT + 1u, 0u);
                        return appended(0u);
                    },
                    publish, settle);
            }
            if (SEVERAL && shared_record.w[2] != 1u) {
                break;  // the exchange of the lengths failed (DO_STATUS set)
            }
            sent_lists = sparse || shared_record.w[3] != 0u;
            if (!SEVERAL) {
                // The appends [front + count, end) are the next frontier.
                front += count;
                run.count_frontier(front, shared_record.w[1]);
            } else if (sent_lists) {
                const unsigned int end = shared_record.w[1];
                if (dense) {
                    // Few appends: sent as a sparse push sends them, behind its exchange.
                    run.send_appends(list_begin, end, level + 1u);
                    if (!exchange_sent()) {
                        break;  // the exchange failed (DO_STATUS set)
                    }
                }
                // The appends [front + count, end) were sent; the next frontier goes behind.
                run.append_owned(list_begin, end);
                front = end;
                run.apply_lists(level + 1u);
            } else {
                front = 0u;
                run.send_marks(level + 1u);
                if (!exchange_sent()) {
                    break;  // the exchange failed (DO_STATUS set)
                }
                run.apply_marks(level + 1u);
                grid_barrier(
                    barrier, gen, config,
                    [&] {
                        return FusedRecord{{load_volatile(ctrl + CTRL_WL_END), 0u, 0u, 0u, 0u, 0u}};
                    },
                    publish, settle);
                run.count_frontier(0u, shared_record.w[0]);
            }
        } else {
            if (BITMAPS && (!pulled || lists)) {
                if (!pulled) {
                    run.list_front(level);
                }
                if (lists) {
                    run.clear_owned_bits(level + 1u);
                }
                local_barrier();
            }
            if (lists) {
                run.pull_listed(level, !listed);
                listed = true;
                if (SEVERAL) {
                    local_barrier();
                    run.send_found(level + 1u);
                }
                unappended = true;
            } else {
                run.pull_frontier(level);
            }
            pulled = true;
            front = 0u;
            if (SEVERAL) {
                // The exchange makes the stored words visible and decides.
                grid_barrier(
                    barrier, gen, config,
                    [&] {
                        step_done();  // the pull stored its words itself
                        return run.decide_folded(trace, row);
                    },
                    publish, settle);
                // Decided: apply the received words, then the next step (a barrier of this
                // device only: its peers may already store the next level's words, into
                // the other inbox half).
                const FusedRecord decided = shared_record;
                if (decided.w[DO_R_PHASE] != DO_PUSH && decided.w[DO_R_PHASE] != DO_PULL) {
                    // Done (the global frontier is empty: no device stored a word, so there is
                    // nothing to apply and every inbox word is still zero) or stopped (the
                    // run is discarded): no apply pass, no barrier.
                    next = decided;
                    continue;
                }
                run.apply_pulled(level + 1u);
                grid_barrier(
                    barrier, gen, config,
                    [&] {
                        trace.stamp(row, TRACE_SCAN_END);
                        return decided;
                    },
                    publish, settle);
                next = shared_record;
                continue;
            }
        }
        grid_barrier(
            barrier, gen, config,
            [&] {
                if (!push) {
                    step_done();  // a one-device pull: no barrier after it
                }
                if (sent_lists) {
                    // The next frontier: this device's appends from `front` on (behind the
                    // sent ones), the counters already global.
                    return run.decide(trace, row, load_volatile(ctrl + CTRL_WL_END) - front);
                }
                if (source_push) {
                    // Its one exchange (the counters') traced as the step's exchange.
                    return run.decide_folded(trace, row);
                }
                return run.decide(trace, row);
            },
            publish, settle);
        next = shared_record;
    }
    if (tracer) {
        trace.stamp_header(TRACE_END);
    }
}

}  // namespace groute

// The entry points, each taking one DirectionParams (abi_direction.h), held to BLOCKS blocks of
// 256 threads per SM: the one-device builds to 5 (at most 51 registers; unbounded, ptxas for
// sm_90 takes 60-64 and only 4 blocks fit), the several-device builds to 4 (at most 64: under
// 51 their peer steps spilled a kilobyte to local memory, which the pulls' loops then read):
// - bfs_direction_fused_one: one device (no peer steps);
// - bfs_direction_fused_several: several devices (no one-device steps);
// - the _bits builds of each: the pulls read frontier bitmaps and pull lists (front_bits and
//   pull_lists not null); the others hold none of that code (on a graph whose level array
//   fits the L2, its registers and branches cost a pull more than the bitmaps save).
// The host picks one by the member count and the bitmaps (kernel_name in
// crates/groute-bfs/src/direction/fused/member.rs, whose test reads the arguments where they
// are instantiated): the one-device builds in kernels/bfs/bfs_direction_fused.cu, the
// several-device builds in bfs_direction_fused_several.cu, programs of their own, so that a
// run compiles only those of its member count.
#define GROUTE_DIRECTION_FUSED_ENTRY(NAME, SEVERAL, BITMAPS, BLOCKS)                             \
    extern "C" __global__ void __launch_bounds__(groute::DO_BLOCK, BLOCKS)                        \
        NAME(const groute::DirectionParams p) {                                                  \
        groute::direction_fused<SEVERAL, BITMAPS>(                                                \
            p.levels, p.push_offsets, p.push_targets, p.pull_offsets, p.pull_sources, p.n,      \
            p.owned_begin, p.owned_end, p.wl_data, p.wl_mask, p.ctrl, p.barrier, p.state,       \
            p.inboxes, p.in_arcs, p.alpha, p.beta, p.gamma, p.group, p.trace_words,             \
            p.postboxes, p.source, p.source_targets, p.front_bits, p.pull_lists,                 \
            p.pull_list_words, p.pullable, p.pullable_count);                                    \
    }
