// The fused traversal's barrier action (fused.cuh): the device-driven runs' share of the
// protocol between phases (peer_count, peer_release, peer_take_inbox, peer_idle), the choice
// of the next phase (fused_next) and the write-back of the state line (fused_settle).

#pragma once

#include "fused_phase_trace.cuh"
#include "fused_state.cuh"

namespace groute {

// Device-driven runs (FusedArgs::peered): the termination count of the group (PEER_PENDING in
// device 0's mailbox; fused.cuh's file comment says why it is race-free).
__device__ __forceinline__ void peer_count(const FusedArgs& a, unsigned long long delta) {
    peer_add(a.peer.mailbox + PEER_PENDING, delta);
}

// Device-driven runs: one more batch of sends counted for publication (CTRL_SEND_BATCHES,
// which the host reports as the member's messages): every call of peer_count_sends or of the
// SOLO peer warp's settle that counts items. A reduction nothing waits for, beside the
// termination count's system-scope one.
__device__ __forceinline__ void peer_count_batch(const FusedArgs& a) {
    atomicAdd(a.ctrl + CTRL_SEND_BATCHES, 1u);
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
        peer_count_batch(a);
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

// The action of every barrier: accounts for the phase `done` that just ended and picks the next one
// (see fused.cuh's file comment). Runs on one thread with every block waiting. It reads the whole
// state line and the control words at once (one L2 round trip: the loads are issued together; the
// barrier's acquire makes them current) into `s` and decides in registers; returns the next phase's
// record. The caller writes `s` back after the release (fused_settle): no later reader of the state
// line runs before this block arrives again.
template <bool PEERED>
__device__ __forceinline__ FusedRecord fused_next(FusedState& s, const FusedArgs& a,
                                                  unsigned int done) {
    unsigned int* const ctrl = a.ctrl;
    load_words(a.fused + FUSED_PHASE, s.w);
    unsigned int c[12];  // CTRL_WL_END .. CTRL_INBOX_PUBLISHED
    load_words(ctrl, c);
    PhaseTraceAction trace(s, c, done);
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
        s.add_u64(FUSED_UNLISTED, s.at(FUSED_SOLO_UNLISTED));
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
    trace.finish(s, a.peer.rank, next);
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

}  // namespace groute
