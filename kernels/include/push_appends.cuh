// PushAppends: the appends of the device-driven direction-optimizing BFS's push step
// (kernels/include/direction_fused.cuh), which on several devices also note every appended
// vertex for the peers. Self-contained (NVRTC): only the worklist.
#pragma once

#include "worklist.cuh"

namespace groute {

// The slot of member `rank`'s entries in member `peer`'s inbox (peer != rank): the other
// members' ranks, in order, with the peer's own left out.
__device__ __forceinline__ unsigned int inbox_slot(unsigned int rank, unsigned int peer) {
    return rank < peer ? rank : rank - 1u;
}

// The appends of a push step, which on several devices also note every appended vertex, as
// the step's kind wants it (one device: neither, the worklist's appends alone; one
// instantiation of the push for every kind).
//
// A sparse push (`listed`): each appended vertex is stored into this
// device's list (slot) of every peer's inbox, at entry `position - list_begin`. A thread that
// stored notes it in `*stored` and fences at system scope once its expansion is done (before
// the grid barrier; a fence per append would lengthen a hub phase of many appends), so
// every entry is visible to the peers once the barrier completes (its action then runs the
// exchange that carries the lengths). Entries stay below the slot's words(): a sparse push
// appends at most n / SPARSE_DIVISOR vertices (see SPARSE_DIVISOR).
//
// A dense push (`marks` not null): each appended vertex's bit is set in
// the discovery bitmap by a reduction (atomicOr, its result unused: RED), which the grid
// barrier after the step orders before send_appends or send_marks (and, after the exchange,
// apply_marks) reads it. A worklist overflow notes
// nothing (the run fails on it).
struct PushAppends {
    DeviceWorklist wl;
    unsigned int* const* inboxes;  // every device's inbox, by rank
    unsigned int list_begin;       // the worklist position of entry 0
    unsigned int offset;           // the inbox half of the discoveries' level
    unsigned int slot_words;       // a slot's words (words())
    unsigned int rank;
    unsigned int size;
    bool listed;
    bool* stored;         // this thread's note that it stored an entry (a local of the caller)
    unsigned int* marks;  // the discovery bitmap, or null

    static constexpr bool KEEPS_RANGES = false;

    __device__ __forceinline__ void note(unsigned int position, unsigned int item) const {
        if (marks != nullptr) {
            atomicOr(marks + item / 32u, 1u << (item % 32u));
        }
        for (unsigned int d = 0; d < size && listed; ++d) {
            if (d != rank) {
                inboxes[d][offset + inbox_slot(rank, d) * slot_words + (position - list_begin)] =
                    item;
                *stored = true;
            }
        }
    }

    __device__ __forceinline__ void append_warp(unsigned int item, bool keep) const {
        wl.append_warp(item, keep, [&](unsigned int position) { note(position, item); });
    }

    template <unsigned int K>
    __device__ __forceinline__ void append_warp_n(const unsigned int (&items)[K],
                                                  const bool (&keep)[K], unsigned int n) const {
        wl.append_warp_n(items, keep, n, [&](unsigned int k, unsigned int position) {
            note(position, items[k]);
        });
    }
};

}  // namespace groute
