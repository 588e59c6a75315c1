// Direction-optimizing BFS driven by the devices: ONE persistent cooperative launch per device
// runs every level of a run, on 1..PEER_MAX_DEVICES GPUs, with no host in the loop. Launched
// by groute-bfs (crates/groute-bfs/src/direction/fused/). The steps are the host-driven ones
// (kernels/include/direction.cuh, the push expand of traversal.cuh); the grid barrier is the
// fused worklist kernel's (grid_barrier.cuh); the devices meet in peer_allreduce_sum
// (peer_group.cuh).
//
// Every device holds the rows of the vertices it owns, [owned_begin, owned_end), of the CSR
// (and of the transpose of a directed graph), indexed by global vertex and arc ids (the host
// passes rebased pointers; on several devices, the whole offset arrays, whose degrees of any
// vertex the global counts read), and a full-length level array that is globally consistent
// up to the current level. Its frontier is its owned vertices at the current level, worklist
// positions [0, count); every step reads the rows of owned vertices only, but a replicated
// one (DO_FLAG_REPLICATE), for which the host uploads every row. A level L on every device:
//
//   1. step: push expands the frontier over all its out-arcs (traversal_expand, every vertex
//      "owned" so every improved head is appended; hubs listed and expanded by the grid in a
//      second phase when there are any); pull scans the owned unvisited vertices' in-neighbours
//      (direction_pull). Grid barrier; its action rewinds the worklist.
//   2. send (several devices): the bitmap words of the vertices this device set to L + 1 (all
//      words after a push, its owned words after a pull), each nonzero word stored straight
//      into every peer's inbox (peer stores, then __threadfence_system). Grid barrier whose
//      action is an exchange (peer_allreduce_sum of no values: a barrier across the devices
//      that makes the stores visible).
//   3. apply and scan, one pass, a warp per bitmap word: every received bit of an UNREACHED
//      vertex sets it to L + 1 (and the inbox word is cleared for the next level); the owned
//      vertices at L + 1 become the next frontier, their degrees and number added to the
//      level counters (DIRECTION_*); after a pull, whose received bits lie only in the
//      peers' owned vertices, the inbox words of the wholly owned words are not read.
//      Grid barrier whose action (`decide`) reads the counters,
//      sums them over the devices (peer_allreduce_sum, 4 values), accounts the step exactly
//      as the host's run_levels does, applies Beamer's rule (direction_pulls, the port of
//      SwitchRule::pulls) to the global counts and publishes the next step (or DONE when the
//      global frontier is empty) in the barrier's record. Every device sees the same sums, so
//      every device decides alike and they make the same sequence of exchanges.
// Level 0 counts the source, which the host put into the worklist of the device that owns it,
// and decides.
//
// Variants (`flags`, DoFlag, for A/B runs): DO_FLAG_PULL_FRONTIER fuses a pull step with its
// send and scan: the pull appends its finds as the next frontier (the decide that chose the
// pull rewound the worklist; the pull does not read the frontier), adds their degrees to the
// counters and stores each warp's ballot of finds (32 consecutive vertices from a
// word-aligned start: one bitmap word) into the peers' inboxes. Then, on several devices, the
// exchange and a pass that only applies the received words; on one, the decide at once. Two
// grid barriers and two full passes fewer per pull level on several devices, one and one on
// one device. Exact: after a pull a device's owned vertices at L + 1 are its own finds.
//
// DO_FLAG_PUSH_FRONTIER: on one device a push's appends are the next frontier, where they lie
// in the ring worklist (`front`); count_frontier sums their degrees instead of a scan. On
// several devices, with DO_FLAG_PUSH_BITMAP, a dense push's pass after the exchange reads no
// level: apply_marks stores the received vertices' levels and appends the owned vertices of
// its own bitmap and the received words (a lane per word), and count_frontier sums their
// degrees behind one more grid barrier of the device.
// DO_FLAG_WARP_RESERVE: the scan and that pull count their finds per warp and reserve the
// worklist slots once per block (append_marked, block_count.cuh), then append in a second
// sweep. DO_FLAG_SCAN_BATCH: apply_and_scan keeps SCAN_BATCH words' loads in flight
// per warp. DO_FLAG_POST_EXCHANGE: the exchanges are peer_post_allreduce_sum over
// `postboxes` (every device's, by rank; peer_post.cuh) instead of peer_allreduce_sum. The
// entry point bfs_direction_fused_occupancy is the same kernel capped at 32 registers.
//
// DO_FLAG_HUB_BATCH: the hub phase relaxes 4 consecutive arcs per thread and step.
// DO_FLAG_SPARSE_PUSH (several devices): a push level whose global frontier has at most
// n / SPARSE_DIVISOR out-arcs sends the list of its appends (into the inbox slot, the length
// with the exchange) and builds the next frontier from its owned appends and the received
// lists; no pass over all words. DO_FLAG_ONE_EXCHANGE (several devices): with
// DO_FLAG_PULL_FRONTIER, a pull's counters go with its words' exchange, whose action
// decides, the received words applied behind a grid barrier of the device alone; with
// DO_FLAG_SPARSE_PUSH, every device counts a sparse push's finds globally (the union of all
// the lists, each vertex once) and decides alone.
//
// Trace (`trace_words`, null: off; kernels/include/direction_trace.cuh): the thread running
// each barrier's action stamps the end of the phase before it, for the trace row of the
// current step (row 0: the source's count), and notes the step's kind, level, finds and hubs;
// thread 0 of block 0 stamps the kernel's start and end.
//
// Inboxes: two halves of (size - 1) * words u32 per device, the discoveries at level M of a
// level that stores (every level but a replicated one, DO_FLAG_REPLICATE) in half
// (M + replicated levels so far) & 1, so consecutive storing levels alternate (slot s of a
// half holds the words, or a sparse push's list, of the s-th other device in rank order),
// zeroed by the host before a run and kept zero between levels by the receiver. Why the
// reuse is race-free: a storing level S stores during itself (at the latest in its send
// pass; a DO_FLAG_LISTED_PUSH during the push), so after the first exchange of the storing
// level S - 1 before it (every storing level makes at least one exchange; replicated levels
// between them make none); the half's previous contents, from the storing level S - 2, were
// cleared by the receiver in that level's apply pass, which it finishes (with a
// __threadfence_system of each clearing thread) before it arrives at any exchange of level
// S - 1. With replicated levels alternating by level instead, a pull, a replicated level
// and a push would store into the same half with no exchange between the receiver's
// clearing and the push's stores.
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
// by the host. Launch
// cooperatively with blockDim.x = 256 (a multiple of 32) and a grid of at most the resident
// maximum.
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

// The pieces: the state block's words and flags, the run (DoRun) and its passes, and the
// barriers' actions (its exchanges and the decide).
#include "direction_fused_words.cuh"
#include "direction_fused_run.cuh"
#include "direction_fused_decide.cuh"

namespace groute {

// A push step's hub phase (`batched`: DO_FLAG_HUB_BATCH), appending through `appends`.
template <typename Appends>
__device__ __forceinline__ void push_hubs(bool batched, const MinSplitOps& ops,
                                          const unsigned long long* offsets,
                                          const unsigned int* targets,
                                          const DeviceWorklist& frontier,
                                          const Appends& appends) {
    const SendBuffer none{nullptr, 0u, 0u, frontier.ctrl};
    if (batched) {
        traversal_expand_hubs_into<BfsRelax, false, true>(ops, offsets, targets, nullptr,
                                                          frontier, appends, none, LowList{});
    } else {
        traversal_expand_hubs_into<BfsRelax, false, false>(ops, offsets, targets, nullptr,
                                                           frontier, appends, none, LowList{});
    }
}

// The kernel's body. SEVERAL false compiles a one-device kernel, which holds none of the
// peer steps; FIXED nonzero compiles a kernel for those DoFlag bits only (the `flags`
// argument is ignored), which holds none of the other variants; both together compile a
// kernel for several devices only (`several` a compile-time true, so the one-device steps
// are left out too: the host launches it on 2 or more members only). Either way the
// registers and code of the steps a run takes are not shaped by steps it never takes.
template <bool SEVERAL, unsigned int FIXED>
__device__ __forceinline__ void direction_fused(
    unsigned int* levels, const unsigned long long* push_offsets,
    const unsigned int* push_targets, const unsigned long long* pull_offsets,
    const unsigned int* pull_sources, unsigned int n, unsigned int owned_begin,
    unsigned int owned_end, unsigned int* wl_data, unsigned int wl_mask, unsigned int* ctrl,
    unsigned int* barrier, unsigned long long* state, unsigned int* const* inboxes,
    unsigned long long in_arcs, unsigned long long alpha, unsigned long long beta,
    const PeerGroup& group, unsigned long long* trace_words, unsigned int flags_arg,
    unsigned long long* const* postboxes) {
    const unsigned int flags = FIXED != 0u ? FIXED : flags_arg;
    const DeviceWorklist wl{wl_data, wl_mask, 0u, ctrl};
    DoRun run{levels,  push_offsets, push_targets, pull_offsets, pull_sources,
              n,       owned_begin,  owned_end,    wl,           state,
              inboxes, inboxes[group.rank], in_arcs, alpha, beta,
              group,   flags,        postboxes,    0u, SEVERAL && (FIXED != 0u || group.size > 1u)};
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
    const auto rewind = [&] {
        store_relaxed(ctrl + CTRL_WL_END, 0u);
        return FusedRecord{{0u, 0u, 0u, 0u, 0u, 0u}};
    };
    const bool several = run.several;
    const bool pull_frontier = (flags & DO_FLAG_PULL_FRONTIER) != 0u;
    const bool push_frontier = (flags & DO_FLAG_PUSH_FRONTIER) != 0u && !several;
    // A dense push's discovery bitmap and the received words build the next frontier.
    const bool marks_frontier = (flags & DO_FLAG_PUSH_FRONTIER) != 0u && several &&
                                (flags & DO_FLAG_PUSH_BITMAP) != 0u;
    const bool one_exchange = (flags & DO_FLAG_ONE_EXCHANGE) != 0u && several && pull_frontier;
    const bool replicate = (flags & DO_FLAG_REPLICATE) != 0u && several;
    unsigned int front = 0;  // the worklist position of the frontier's first item
    unsigned int row = 0;  // the trace row: the level steps run so far
    // DO_FLAG_REPLICATE: the frontier in the worklist is the whole one, alike on every device.
    bool everywhere = replicate;

    // The host put the source at worklist position 0 of the device that owns it (of every
    // device with DO_FLAG_REPLICATE, where the counters of its one-vertex frontier are then
    // global as counted here) and the worklist's end behind it: the frontier of level 0,
    // counted without a pass over the level array.
    run.count_frontier(0u, load_volatile(ctrl + CTRL_WL_END));
    grid_barrier(
        barrier, gen, config,
        [&] {
            return replicate ? run.decide(trace, row, 1u, DO_FOUND_EVERYWHERE)
                             : run.decide(trace, row);
        },
        publish, settle);
    FusedRecord next = shared_record;
    while (next.w[DO_R_PHASE] == DO_PUSH || next.w[DO_R_PHASE] == DO_PULL) {
        ++row;
        const unsigned int level = next.w[DO_R_LEVEL];
        const bool push = next.w[DO_R_PHASE] == DO_PUSH;
        // DO_FLAG_REPLICATE: this push runs whole on every device (decided alike everywhere).
        const bool replicated = push && next.w[DO_R_REPLICATED] != 0u;
        // A step that is not replicated from a frontier on every device expands its own items.
        const VertexRange items = everywhere && !replicated
                                      ? VertexRange{owned_begin, owned_end}
                                      : VertexRange{0u, 0xFFFFFFFFu};
        // DO_FLAG_SPARSE_PUSH: this push sends its appends as lists (decided alike everywhere).
        const bool sparse = push && several && next.w[DO_R_SPARSE] != 0u;
        // DO_FLAG_ONE_EXCHANGE: this sparse push's counters are global (decided locally).
        const bool global = sparse && (flags & DO_FLAG_ONE_EXCHANGE) != 0u;
        // DO_FLAG_ONE_EXCHANGE: this pull's counters travel with its words' exchange.
        const bool folded = !push && one_exchange;
        // DO_FLAG_LISTED_PUSH: this sparse push stores its lists as it appends; their
        // lengths' exchange runs in the action of the push's last grid barrier.
        const bool listed = sparse && (flags & DO_FLAG_LISTED_PUSH) != 0u;
        // DO_FLAG_PUSH_BITMAP: this dense push marks its discoveries in the bitmap.
        const bool marked =
            push && several && !sparse && !replicated && (flags & DO_FLAG_PUSH_BITMAP) != 0u;
        unsigned int appends = 0;  // a sparse push's list length
        const auto step_done = [&] {
            trace.stamp(row, TRACE_STEP_END);
            trace.note(row, TRACE_KIND, next.w[DO_R_PHASE]);
            trace.note(row, TRACE_LEVEL, level);
        };
        // Whether the step built the next frontier itself (no scan after the exchange).
        bool built = false;
        // Whether the step's exchange ran in its own barrier's action (listed), or it needs
        // none (replicated).
        bool exchanged = false;
        if (push) {
            const MinSplitOps ops{0u, n, levels};
            const SendBuffer none{nullptr, 0u, 0u, ctrl};
            const DeviceWorklist frontier{wl_data, wl_mask, front, ctrl};
            const unsigned int count = next.w[DO_R_COUNT];
            const unsigned int list_begin = front + count;
            bool stored = false;  // this thread stored list entries (listed)
            // Makes this thread's list entries visible to the peers before the barrier.
            const auto fence_entries = [&] {
                if (stored) {
                    stored = false;
                    __threadfence_system();
                }
            };
            const PushAppends appends_to{frontier,    inboxes,    list_begin,
                                         run.half(level + 1u), run.words(), group.rank,
                                         group.size,  listed,     &stored,
                                         marked ? run.marks() : nullptr};
            traversal_expand_into<BfsRelax, false>(ops, push_offsets, push_targets, nullptr,
                                                   frontier, appends_to, count, none, LowList{},
                                                   GridShape::launch(), next.w[DO_R_HUBS], true,
                                                   items);
            fence_entries();
            // The action lists whether hubs wait (their expansion appends: no rewind yet) and
            // where the appends end; once none wait, a listed push's exchange runs here
            // (word 2: 1 when it succeeded, 2 when it failed).
            const auto appended = [&](unsigned int hubs) {
                if (hubs == 0u && !push_frontier && !sparse && !replicated) {
                    store_relaxed(ctrl + CTRL_WL_END, 0u);
                }
                const unsigned int end = load_volatile(ctrl + CTRL_WL_END);
                unsigned int listed_exchange = 0u;
                if (listed && hubs == 0u) {
                    listed_exchange = run.exchange_lengths(end - list_begin) ? 1u : 2u;
                    trace.stamp(row, TRACE_EXCHANGE_END);
                }
                return FusedRecord{{hubs, end, listed_exchange, 0u, 0u, 0u}};
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
                const bool batched = (flags & DO_FLAG_HUB_BATCH) != 0u;
                push_hubs(batched, ops, push_offsets, push_targets, frontier, appends_to);
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
            if (push_frontier || replicated) {
                // The appends [front + count, end) are the next frontier (replicated: alike on
                // every device, counted whole; nothing to exchange).
                front += count;
                run.count_frontier(front, shared_record.w[1]);
                built = true;
                exchanged = replicated;
            } else if (sparse) {
                // The appends [front + count, end) are sent (listed: were sent, and
                // exchanged); the next frontier goes behind.
                const unsigned int end = shared_record.w[1];
                appends = end - list_begin;
                if (listed) {
                    if (shared_record.w[2] != 1u) {
                        break;  // the exchange failed (DO_STATUS set)
                    }
                    exchanged = true;
                }
                run.send_appends(level + 1u, list_begin, end, global, listed);
                front = end;
                built = true;
            } else {
                front = 0u;
            }
        } else if (pull_frontier) {
            run.pull_frontier(level, several);
            built = true;  // no barrier: the exchange's or the decide's is the next one
            front = 0u;
        } else {
            front = 0u;  // the scan appends the next frontier from 0
            const unsigned int begin = owned_begin;
            const unsigned int end = owned_end < n ? owned_end : n;
            direction_pull(levels, pull_offsets, pull_sources, begin, end, level, wl,
                           state + DO_COUNTERS);
            grid_barrier(
                barrier, gen, config,
                [&] {
                    step_done();
                    return rewind();
                },
                publish, settle);
        }
        if (several && !exchanged) {
            if (!built) {
                const unsigned int words = run.words();
                const unsigned int begin = push ? 0u : owned_begin / 32u;
                const unsigned int end = push ? words : (owned_end + 31u) / 32u;
                if (marked) {
                    run.send_marks(level + 1u, marks_frontier);
                } else {
                    run.send(level + 1u, begin, end < words ? end : words);
                }
            }
            grid_barrier(
                barrier, gen, config,
                [&] {
                    if (built && !push) {
                        step_done();  // the pull stored its words itself
                    } else {
                        trace.stamp(row, TRACE_SEND_END);
                    }
                    if (folded) {
                        return run.decide_folded(trace, row);
                    }
                    const bool ok = sparse ? run.exchange_lengths(appends)
                                           : run.exchange(nullptr, nullptr, 0u);
                    trace.stamp(row, TRACE_EXCHANGE_END);
                    return FusedRecord{{ok ? 1u : 0u, 0u, 0u, 0u, 0u, 0u}};
                },
                publish, settle);
            if (folded) {
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
                // A replicated next step needs the received finds in the frontier too.
                everywhere = decided.w[DO_R_REPLICATED] != 0u;
                run.apply_pulled(level + 1u, everywhere);
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
            if (shared_record.w[0] == 0u) {
                break;
            }
        }
        if (sparse) {
            run.apply_lists(level + 1u, global);
        } else if (marked && marks_frontier) {
            run.apply_marks(level + 1u);
            grid_barrier(
                barrier, gen, config,
                [&] {
                    return FusedRecord{{load_volatile(ctrl + CTRL_WL_END), 0u, 0u, 0u, 0u, 0u}};
                },
                publish, settle);
            run.count_frontier(0u, shared_record.w[0]);
        } else if (!replicated && (several || !built)) {
            run.apply_and_scan(level + 1u, several, !built, !push);
        }
        everywhere = replicated;
        if (replicated) {
            ++run.replicated_levels;  // every thread's copy, alike
        }
        grid_barrier(
            barrier, gen, config,
            [&] {
                if (built && !several && !push) {
                    step_done();  // the pull's stamp: no barrier after it
                }
                if (replicated || global) {
                    // The next frontier: this device's appends from `front` on (replicated:
                    // alike on every device; global: behind the sent ones), the counters
                    // already global.
                    return run.decide(trace, row, load_volatile(ctrl + CTRL_WL_END) - front,
                                      replicated ? DO_STEP_REPLICATED | DO_FOUND_EVERYWHERE
                                                 : 0u);
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

// The entry points, each taking one DirectionParams (abi_direction.h), held to 5 blocks of 256 threads per SM (at most 51 registers; unbounded,
// ptxas for sm_90 takes 60-64 and only 4 blocks fit) but for _occupancy:
// - bfs_direction_fused_one: one device, DO_DEFAULT_FLAGS (no peer steps, no other variant);
// - bfs_direction_fused_several: several devices, DO_DEFAULT_FLAGS;
// - bfs_direction_fused: any count, the variants of `flags` (A/B runs);
// - bfs_direction_fused_occupancy: the same capped at 32 registers (some spilled: 8 blocks,
//   every thread slot of an SM), for A/B runs of the phases bound by memory latency.
// The host (FusedDirectionOptions::kernel_name) picks a fixed build when its flags are
// DO_DEFAULT_FLAGS, which must equal FusedDirectionOptions::default()'s (a test reads it
// here).
#define GROUTE_DIRECTION_FUSED_ENTRY(NAME, BOUNDS, SEVERAL, FIXED)                              \
    extern "C" __global__ void BOUNDS NAME(const groute::DirectionParams p) {                     \
        groute::direction_fused<SEVERAL, FIXED>(                                                \
            p.levels, p.push_offsets, p.push_targets, p.pull_offsets, p.pull_sources, p.n,      \
            p.owned_begin, p.owned_end, p.wl_data, p.wl_mask, p.ctrl, p.barrier, p.state,       \
            p.inboxes, p.in_arcs, p.alpha, p.beta, p.group, p.trace_words, p.flags,             \
            p.postboxes);                                                                       \
    }

namespace groute {
// FusedDirectionOptions::default()'s kernel flags (crates/groute-bfs/src/direction/fused/
// options.rs): the pull- and push-built frontiers, warp reservations, posted exchanges,
// sparse pushes, one exchange per level, batched hubs, listed sparse pushes, the dense push's
// bitmap (not replicated levels: they need every row on every device).
enum : unsigned int {
    DO_DEFAULT_FLAGS = DO_FLAG_PULL_FRONTIER | DO_FLAG_WARP_RESERVE | DO_FLAG_POST_EXCHANGE |
                       DO_FLAG_PUSH_FRONTIER | DO_FLAG_SPARSE_PUSH | DO_FLAG_ONE_EXCHANGE |
                       DO_FLAG_HUB_BATCH | DO_FLAG_LISTED_PUSH | DO_FLAG_PUSH_BITMAP,
};
// The fixed builds' template arguments. GROUTE_DO_RUNTIME_FLAGS (a diagnostic build, through
// GROUTE_NVRTC_OPTIONS) compiles them as bfs_direction_fused is compiled (every step, `flags`
// read at run time), so that one binary can A/B the fixed builds against the build they
// replace.
#ifdef GROUTE_DO_RUNTIME_FLAGS
constexpr bool DO_ONE_SEVERAL = true;
constexpr unsigned int DO_FIXED_FLAGS = 0u;
#else
constexpr bool DO_ONE_SEVERAL = false;
constexpr unsigned int DO_FIXED_FLAGS = DO_DEFAULT_FLAGS;
#endif
}  // namespace groute

GROUTE_DIRECTION_FUSED_ENTRY(bfs_direction_fused_one, __launch_bounds__(groute::DO_BLOCK, 5),
                             groute::DO_ONE_SEVERAL, groute::DO_FIXED_FLAGS)
GROUTE_DIRECTION_FUSED_ENTRY(bfs_direction_fused_several,
                             __launch_bounds__(groute::DO_BLOCK, 5), true,
                             groute::DO_FIXED_FLAGS)
GROUTE_DIRECTION_FUSED_ENTRY(bfs_direction_fused, __launch_bounds__(groute::DO_BLOCK, 5), true,
                             0u)
GROUTE_DIRECTION_FUSED_ENTRY(bfs_direction_fused_occupancy,
                             __launch_bounds__(groute::DO_BLOCK, 8), true, 0u)
