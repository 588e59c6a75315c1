// The per-phase trace of the device-driven direction-optimizing BFS
// (kernels/include/direction_fused.cuh, `--do-trace`): %globaltimer stamps at every phase boundary
// of every level, taken by the one thread that runs the grid barrier's action (the moment the
// whole grid has finished the phase) and, for the kernel's start and end, by thread 0 of
// block 0. Decoded by crates/groute-bfs/src/direction/fused/trace.rs (the layout is mirrored
// there). A null buffer turns tracing off: every stamp is then one predictable branch.
//
// Layout (u64 words): a header of TRACE_HEADER words, then TRACE_ROWS rows of TRACE_SLOTS
// words, one row per level step (row 0: the count of the source's level). Rows past
// TRACE_ROWS are counted in the header but not stored. A phase a step does not run (hubs
// without hubs, send and exchange on one device, the send after a pull or a sparse push,
// which store during the step) keeps its stamp 0. The host zeroes the buffer before a run.
#pragma once

#include "peer_group.cuh"

namespace groute {

enum : unsigned int { TRACE_HEADER = 4, TRACE_ROWS = 64, TRACE_SLOTS = 11 };

// Header words.
enum TraceHeader : unsigned int {
    TRACE_START = 0,  // kernel start (thread 0 of block 0)
    TRACE_END = 1,    // kernel end (thread 0 of block 0)
    TRACE_STEPS = 2,  // rows produced (may exceed TRACE_ROWS)
};

// Row words: what the step did, then the end of each of its phases.
enum TraceSlot : unsigned int {
    TRACE_KIND = 0,        // 0: the source's count, 1: push, 2: pull (DoPhase)
    TRACE_LEVEL = 1,       // the level the step expanded (its discoveries are level + 1)
    TRACE_FOUND = 2,       // vertices the step found, summed over the devices
    TRACE_FOUND_HERE = 3,  // of them, owned by this device
    TRACE_HUBS = 4,        // hubs listed by a push step
    TRACE_STEP_END = 5,    // push expand or pull done on the whole grid
    TRACE_HUBS_END = 6,    // the hub phase done
    TRACE_SEND_END = 7,    // the words stored into the peers' inboxes
    TRACE_EXCHANGE_END = 8,  // the exchange that makes them visible returned
    TRACE_SCAN_END = 9,    // the next frontier built (the push's appends counted, the
                           // received words or lists applied) on the whole grid
    TRACE_DECIDE_END = 10,  // the counters summed across the devices, the next step decided
};

struct DirectionTrace {
    unsigned long long* words;  // null: off

    __device__ bool on() const { return words != nullptr; }

    // Stamps the header word `word` with the clock.
    __device__ void stamp_header(unsigned int word) const {
        if (on()) {
            words[word] = peer_clock_ns();
        }
    }

    // Stores `value` in slot `slot` of row `row` (dropped past TRACE_ROWS).
    __device__ void note(unsigned int row, unsigned int slot, unsigned long long value) const {
        if (on() && row < TRACE_ROWS) {
            words[TRACE_HEADER + row * TRACE_SLOTS + slot] = value;
        }
    }

    // Stamps slot `slot` of row `row` with the clock.
    __device__ void stamp(unsigned int row, unsigned int slot) const {
        if (on() && row < TRACE_ROWS) {
            note(row, slot, peer_clock_ns());
        }
    }

    // Counts `rows` rows produced.
    __device__ void count_rows(unsigned int rows) const {
        if (on()) {
            words[TRACE_STEPS] = rows;
        }
    }
};

}  // namespace groute
