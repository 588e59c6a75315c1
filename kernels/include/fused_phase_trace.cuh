// A per-phase trace of the fused traversal (fused.cuh), for experiments: compiled in only with
// -DGROUTE_TRACE_PHASES (GROUTE_NVRTC_OPTIONS="-DGROUTE_TRACE_PHASES"), otherwise every hook is
// empty and the kernels are unchanged.
//
// Each barrier action (fused_next, one thread, every block waiting) stamps %globaltimer as it
// starts and as it has chosen the next phase, and keeps, in a table in the module's global
// memory (one per device), what the phase that just ended did: its kind, the items it
// expanded (EXPAND's batch, SOLO's items), the items it received, the hubs and hub tiles
// listed, the worklist, send and low-list ends, the threshold, SOLO's levels. When the run
// ends (DONE or STOP) the action prints the table, one line per phase (tools/phase-trace.py
// sums them up per member and kind):
//
//   phase-trace member=R index=I kind=K run_ns=T action_ns=A items=N received=M hubs=H
//   tiles=T wl_end=W sent=S low=L threshold=D levels=V
//
// run_ns: from the end of the previous action (or the kernel's start) to this action's start,
// the phase itself; action_ns: this action, which holds a device-driven member's idle wait.
// A last line, `phase-trace-end member=R phases=N kept=K`, counts them. A phase beyond
// PHASE_TRACE_ENTRIES is counted but not kept, and the device's printf buffer (1 MiB unless
// the host raises it) holds about 8,000 lines: lines past it are lost, which the tool reports.
// `received` counts what EXPAND phases received (SOLO's peer warp receives too, uncounted).
// The prints take time: a traced run's own timer is not a measurement.
#pragma once

#include "fused_state.cuh"

namespace groute {

#ifdef GROUTE_TRACE_PHASES

constexpr unsigned int PHASE_TRACE_ENTRIES = 8192;

// What one action saw of the phase that ended before it.
struct PhaseTraceEntry {
    unsigned long long run_ns;
    unsigned long long action_ns;
    unsigned int kind;
    unsigned int items;
    unsigned int received;
    unsigned int hubs;
    unsigned int tiles;
    unsigned int wl_end;
    unsigned int sent;
    unsigned int low;
    unsigned int threshold;
    unsigned int levels;
};

__device__ PhaseTraceEntry phase_trace_table[PHASE_TRACE_ENTRIES];
// The end of the last action (or the kernel's start), %globaltimer ns.
__device__ unsigned long long phase_trace_last_ns;

// Thread 0 of block 0 as the kernel starts.
__device__ __forceinline__ void phase_trace_start() {
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        unsigned long long t;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        phase_trace_last_ns = t;
    }
}

// The state of an action as it starts (after it loaded the state line `s` and the control
// words `c`, before it changes anything).
struct PhaseTraceAction {
    unsigned long long started;
    PhaseTraceEntry entry;

    __device__ __forceinline__ PhaseTraceAction(FusedState& s, const unsigned int* c,
                                                unsigned int done) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(started));
        entry.run_ns = started - phase_trace_last_ns;
        entry.kind = done;
        entry.items = done == FUSED_PHASE_SOLO     ? s.at(FUSED_SOLO_PROCESSED)
                      : done == FUSED_PHASE_EXPAND ? s.at(FUSED_END) - s.at(FUSED_START)
                                                   : 0u;
        entry.received = s.at(FUSED_IN_END) - s.at(FUSED_IN_BEGIN);
        entry.hubs = c[CTRL_HUB_COUNT];
        entry.tiles = c[CTRL_HUB_COUNT + 1u];
        entry.wl_end = c[CTRL_WL_END];
        entry.sent = c[CTRL_SEND_END];
        entry.low = c[CTRL_LOW_END];
        entry.threshold = s.at(FUSED_THRESHOLD);
        entry.levels = done == FUSED_PHASE_SOLO ? s.at(FUSED_SOLO_LEVELS) : 0u;
    }

    // As the action has chosen `next` (s.at(FUSED_PHASES) already counts this phase).
    __device__ __forceinline__ void finish(FusedState& s, unsigned int rank,
                                           unsigned int next) {
        unsigned long long t;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        entry.action_ns = t - started;
        phase_trace_last_ns = t;
        const unsigned int index = s.at(FUSED_PHASES) - 1u;
        if (index < PHASE_TRACE_ENTRIES) {
            phase_trace_table[index] = entry;
        }
        if (next != FUSED_PHASE_DONE && next != FUSED_PHASE_STOP) {
            return;
        }
        const unsigned int kept = index + 1u < PHASE_TRACE_ENTRIES ? index + 1u
                                                                   : PHASE_TRACE_ENTRIES;
        for (unsigned int i = 0; i < kept; ++i) {
            const PhaseTraceEntry& e = phase_trace_table[i];
            printf("phase-trace member=%u index=%u kind=%u run_ns=%llu action_ns=%llu "
                   "items=%u received=%u hubs=%u tiles=%u wl_end=%u sent=%u low=%u "
                   "threshold=%u levels=%u\n",
                   rank, i, e.kind, e.run_ns, e.action_ns, e.items, e.received, e.hubs,
                   e.tiles, e.wl_end, e.sent, e.low, e.threshold, e.levels);
        }
        printf("phase-trace-end member=%u phases=%u kept=%u\n", rank, index + 1u, kept);
    }
};

#else

__device__ __forceinline__ void phase_trace_start() {}

struct PhaseTraceAction {
    __device__ __forceinline__ PhaseTraceAction(FusedState&, const unsigned int*,
                                                unsigned int) {}
    __device__ __forceinline__ void finish(FusedState&, unsigned int, unsigned int) {}
};

#endif

}  // namespace groute
