// The device-driven direction-optimizing BFS's run (kernels/include/direction_fused.cuh): the
// run's constants and this device's buffers (DoRun) with the passes of a level on them: the
// counters, the bitmap sends to the peers and the application of the received words and
// lists, and the pull step.
// The barriers' actions (the exchanges and the decide) are direction_fused_decide.cuh.

#pragma once

#include "block_count.cuh"
#include "direction_fused_words.cuh"
#include "frontier_words.cuh"
#include "pull_lists.cuh"
#include "push_appends.cuh"
#include "traversal.cuh"

namespace groute {

// The run's constants and this device's buffers.
struct DoRun {
    unsigned int* levels;
    const unsigned long long* push_offsets;
    const unsigned int* push_targets;
    const unsigned long long* pull_offsets;
    const unsigned int* pull_sources;
    unsigned int n;
    unsigned int owned_begin;
    unsigned int owned_end;
    DeviceWorklist wl;
    unsigned long long* state;
    unsigned int* const* inboxes;  // every device's inbox, by rank
    unsigned int* inbox;           // this device's
    unsigned long long in_arcs;
    unsigned long long alpha;
    unsigned long long beta;
    unsigned long long gamma;
    PeerGroup group;
    unsigned long long* const* postboxes;  // every device's postbox, by rank (POST_WORDS)
    // Two bitmaps of words() u32, the frontier at the levels of each parity, which the pulls
    // of the _bits builds read instead of the level array (frontier_bits); or null.
    unsigned int* front_bits;
    // With front_bits, or null: the pull lists (pull_list_words u32), the owned UNREACHED
    // vertices with in-arcs that a pull did not reach, which a later pull scans instead of
    // every owned vertex (direction_fused_pull.cuh says how they are laid out).
    unsigned int* pull_lists;
    unsigned long long pull_list_words;
    // With pull_lists: the owned vertices with in-arcs, ascending, which the first pull scans.
    const unsigned int* pullable;
    unsigned long long pullable_count;
    // The run has several devices: a compile-time false in the one-device builds (their code
    // holds none of the peer steps) and a compile-time true in the several builds.
    bool several;
    // The pulls read front_bits and pull_lists (not null): compile-time, so that the builds
    // without them hold none of their code.
    bool bitmaps;

    __device__ unsigned int words() const { return (n + 31u) / 32u; }

    // The bitmap of the frontier at `level` (front_bits not null). A pull from level L reads
    // L's and writes L + 1's, the other one: a pull that follows a pull finds its bitmap
    // complete (its owned words from the previous pull's bits, the others from the words it
    // received: apply_pulled); a pull that follows a push builds it first (list_front).
    __device__ unsigned int* frontier_bits(unsigned int level) const {
        return front_bits + (level & 1u) * words();
    }

    // The pull step's passes (direction_fused_pull.cuh): the bitmap of the frontier at
    // `level` from the level array; the owned words of the bitmap at `level` cleared; a
    // pull over every owned vertex and one over the pull lists; the owned words of the
    // finds' bitmap sent to the peers, and appended to the worklist.
    __device__ void list_front(unsigned int level) const;
    __device__ void clear_owned_bits(unsigned int level) const;
    __device__ void pull_frontier(unsigned int level) const;
    __device__ void pull_listed(unsigned int level, bool first) const;
    __device__ void send_found(unsigned int mark) const;
    __device__ void append_found(unsigned int mark) const;

    // The pull lists (not null in the _bits builds): PullLists of pull_lists.cuh.
    __device__ PullLists pull_lists_of_run() const {
        return PullLists{pull_lists, pull_list_words, pullable, pullable_count};
    }

    // A dense push's discovery bitmap: words() u32 behind the inbox halves (the host
    // allocates them with the inbox and zeroes them with it; send_marks clears them, but for
    // the owned words that apply_marks reads and clears, or send_appends every word it set).
    __device__ unsigned int* marks() const {
        return inbox + 2u * (group.size - 1u) * words();
    }

    // The offset of the inbox half that carries the discoveries at `mark`: the halves
    // alternate by level (see the header's "Inboxes").
    __device__ unsigned int half(unsigned int mark) const {
        return (mark & 1u) * (group.size - 1u) * words();
    }

    // The slot of this device's words in the inbox of the device of rank `peer`.
    __device__ unsigned int slot_at(unsigned int peer) const {
        return inbox_slot(group.rank, peer);
    }

    // Adds a thread's finds (`found` vertices, `out` out-arcs and `in` in-arcs) and the arcs
    // it `examined` to the level counters, one atomic per block and counter
    // (block_count.cuh). Every thread of the block calls it, from block-uniform control flow.
    __device__ void count_found(unsigned long long out, unsigned long long in,
                                unsigned long long found,
                                unsigned long long examined = 0ull) const {
        unsigned long long x[DIRECTION_COUNTERS];
        x[DIRECTION_OUT_ARCS] = out;
        x[DIRECTION_IN_ARCS] = in;
        x[DIRECTION_EXAMINED] = examined;
        x[DIRECTION_FRONTIER] = found;
        block_add_u64(state + DO_COUNTERS, x);
    }

    // Appends the owned vertices at `mark` of the words first_word + warp + k * warps (below
    // last_word) to the worklist: this warp's `count` of them (its hits in the pass that
    // found them over the same words, which no other warp changed) in slots reserved with one
    // atomic per block (block_count.cuh). Every thread of the block calls it, from
    // block-uniform control flow.
    __device__ void append_marked(unsigned int mark, unsigned int first_word,
                                  unsigned int last_word, unsigned int count) const {
        const unsigned int warps = gridDim.x * blockDim.x / 32u;
        const unsigned int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32u;
        const unsigned int lane = lane_id();
        unsigned int slot = block_reserve_warps(wl.ctrl + CTRL_WL_END, count);
        if (count == 0u) {
            return;  // warp-uniform
        }
        for (unsigned int w = first_word + warp; w < last_word; w += warps) {
            const unsigned int v = w * 32u + lane;
            const bool hit = v >= owned_begin && v < owned_end && v < n && levels[v] == mark;
            const unsigned int bits = __ballot_sync(0xFFFFFFFFu, hit);
            if (hit) {
                wl.put(slot + static_cast<unsigned int>(__popc(bits & lanemask_lt())), v);
            }
            slot += static_cast<unsigned int>(__popc(bits));
        }
    }

    // The words that hold an owned vertex: [owned_begin / 32, owned_words_end()).
    __device__ unsigned int owned_words_end() const {
        const unsigned int end = owned_end < n ? owned_end : n;
        return (end + 31u) / 32u;
    }

    // The bits of word `w` that are owned vertices (below n).
    __device__ unsigned int owned_bits(unsigned int w) const {
        return owned_word_bits(w, owned_begin, owned_end < n ? owned_end : n);
    }

    // After a dense push: stores every nonzero word of the discovery bitmap (this device's
    // discoveries at `mark`) into every peer's inbox and clears it, a thread per word
    // (coalesced loads of 4 bytes per 32 vertices, where a pass over the levels would read
    // every vertex's). The words that hold an owned vertex are left for apply_marks, which
    // builds the next frontier from them, to clear.
    __device__ void send_marks(unsigned int mark) const {
        const unsigned int stride = gridDim.x * blockDim.x;
        const unsigned int total = words();
        const unsigned int offset = half(mark);
        unsigned int* const bitmap = marks();
        bool stored = false;
        for (unsigned int w = blockIdx.x * blockDim.x + threadIdx.x; w < total; w += stride) {
            // Set by reductions at L2 (other SMs): never an L1 line.
            const unsigned int bits = load_volatile(bitmap + w);
            if (bits == 0u) {
                continue;
            }
            if (w < owned_begin / 32u || w >= owned_words_end()) {
                bitmap[w] = 0u;  // the next dense push's reductions come after grid barriers
            }
            stored |= store_to_peers(offset, w, bits);
        }
        if (stored) {
            __threadfence_system();
        }
    }

    // Stores `word` as word `w` of this device's slot in the inbox half at `offset` of every
    // peer; whether there was a peer to store it to.
    __device__ bool store_to_peers(unsigned int offset, unsigned int w, unsigned int word) const {
        bool stored = false;
        for (unsigned int d = 0; d < group.size; ++d) {
            if (d != group.rank) {
                inboxes[d][offset + slot_at(d) * words() + w] = word;
                stored = true;
            }
        }
        return stored;
    }

    // Level 0's push on several devices: every device expands the source's out-arcs itself,
    // reading them from the rows of the device that owns it (`source_targets`, by global arc
    // id: over the peer link, or this device's own), so that no discovery crosses a link and
    // no device waits for the owner's expansion. It gives level 1 to every UNREACHED head,
    // owned or not (the level arrays agree after it, as after a dense push's exchange), and
    // appends the owned heads it set (a compare-and-swap each, so a duplicate arc or a
    // self-loop appends nothing twice) behind the source: the next frontier. A thread per arc,
    // the blocks' trip counts uniform; one append atomic per block and pass (a hub's appends
    // would queue one per warp on the one end word).
    __device__ void expand_source(unsigned int source, const unsigned int* source_targets) const {
        const unsigned long long end = push_offsets[source + 1u];
        const unsigned long long stride = gridDim.x * blockDim.x;
        const unsigned long long first = blockIdx.x * blockDim.x;
        for (unsigned long long base = push_offsets[source] + first; base < end;
             base += stride) {
            const unsigned long long arc = base + threadIdx.x;
            unsigned int head = 0u;
            bool set_here = false;
            if (arc < end) {
                head = source_targets[arc];
                if (head >= owned_begin && head < owned_end) {
                    set_here = atomicCAS(levels + head, 0xFFFFFFFFu, 1u) == 0xFFFFFFFFu;
                } else if (levels[head] == 0xFFFFFFFFu) {
                    levels[head] = 1u;  // the same value from any thread: no atomic needed
                }
            }
            wl.append_block(head, set_here);
        }
    }

    // After a pull on several devices, its exchange: applies the received words. Every
    // received bit is a vertex that a peer found at `mark` among its owned vertices, so it
    // was UNREACHED here (the level arrays agree below `mark`, and a pull sets owned vertices
    // only): its level is stored without being read. The words wholly owned here are skipped
    // (nothing is received there after a pull). Each lane loads one inbox word (a warp's 32
    // loads coalesced, one round trip per grid-stride step), clears it when nonzero, and the
    // warp then stores the levels of each nonzero word together, a lane per bit (one line
    // per word).
    __device__ void apply_pulled(unsigned int mark) const {
        const unsigned int stride = gridDim.x * blockDim.x;
        const unsigned int lane = lane_id();
        const unsigned int total = words();
        const unsigned int inner_begin = (owned_begin + 31u) / 32u;
        const unsigned int inner_end = owned_end >= n ? total : owned_end / 32u;
        const unsigned int inner = inner_end > inner_begin ? inner_end - inner_begin : 0u;
        const unsigned int limit = total - inner;
        unsigned int* const box = inbox + half(mark);
        bool cleared = false;
        // Warp-uniform trip count: `base` is the warp's first index.
        for (unsigned int base = blockIdx.x * blockDim.x + (threadIdx.x & ~31u); base < limit;
             base += stride) {
            const unsigned int j = base + lane;
            const unsigned int w = j < inner_begin ? j : j + inner;
            const unsigned int bits = j < limit ? take_received(box, w, cleared) : 0u;
            store_levels(w, bits, mark);
            if (bitmaps && j < limit) {
                // The frontier at `mark`: the peers' finds, and this device's in a word it
                // shares with a peer (its pull stored them, behind a grid barrier).
                unsigned int* const into = frontier_bits(mark) + w;
                const unsigned int own = owned_bits(w);
                *into = own == 0u ? bits : bits | (load_volatile(into) & own);
            }
        }
        if (cleared) {
            __threadfence_system();
        }
    }

    // After a dense push's exchange on several devices: applies the received words and appends the
    // next frontier from them and this device's discovery bitmap, reading no level. A received bit
    // is a vertex that a peer set to `mark` from UNREACHED; the level arrays agree below `mark`, so
    // here it is UNREACHED or `mark` (this device found it too), and its level is stored without
    // being read. The owned vertices at `mark` are the union of this device's discoveries in the
    // words that hold an owned vertex (left there by send_marks) and the received bits there, each
    // appended once. A lane per word: a warp's inbox and bitmap loads coalesced, one round trip per
    // grid-stride step. The frontier's degrees are summed after, over the appended items
    // (count_frontier), behind a grid barrier.
    __device__ void apply_marks(unsigned int mark) const {
        const unsigned int stride = gridDim.x * blockDim.x;
        const unsigned int lane = lane_id();
        const unsigned int total = words();
        const unsigned int own_begin = owned_begin / 32u;
        const unsigned int own_end = owned_words_end();
        unsigned int* const box = inbox + half(mark);
        unsigned int* const bitmap = marks();
        bool cleared = false;
        // Warp-uniform trip count: `base` is the warp's first word.
        for (unsigned int base = blockIdx.x * blockDim.x + (threadIdx.x & ~31u); base < total;
             base += stride) {
            const unsigned int w = base + lane;
            unsigned int received = 0u;
            unsigned int mine = 0u;
            if (w < total) {
                received = take_received(box, w, cleared);
                if (w >= own_begin && w < own_end) {
                    // Set by reductions at L2 (other SMs): never an L1 line.
                    mine = load_volatile(bitmap + w);
                    if (mine != 0u) {
                        bitmap[w] = 0u;  // the next dense push's come after grid barriers
                    }
                }
            }
            // The received vertices this device did not set itself.
            store_levels(w, received & ~mine, mark);
            append_bits(w, w < total ? (mine | received) & owned_bits(w) : 0u);
        }
        if (cleared) {
            __threadfence_system();
        }
    }

    // The received bits of word `w`: the OR of every peer's inbox word `w` in the half at
    // `box`, each nonzero one cleared for the next level that stores there (`cleared` set).
    __device__ __forceinline__ unsigned int take_received(unsigned int* box, unsigned int w,
                                                          bool& cleared) const {
        const unsigned int total = words();
        unsigned int bits = 0u;
        for (unsigned int s = 0; s + 1u < group.size; ++s) {
            // Written by a peer (over the link): never an L1 line.
            const unsigned int word = load_volatile(box + s * total + w);
            if (word != 0u) {
                box[s * total + w] = 0u;
                cleared = true;
                bits |= word;
            }
        }
        return bits;
    }

    // Stores `mark` as the level of every vertex that a lane's word `w` sets in `bits` (a
    // peer's finds; store_word_levels). All 32 lanes call it.
    __device__ __forceinline__ void store_levels(unsigned int w, unsigned int bits,
                                                 unsigned int mark) const {
        store_word_levels(levels, w, bits, mark);
    }

    // Appends the vertices of each lane's word `w` set in `bits` to the worklist, with one
    // reservation for the warp (warp_reserve_n: a prefix of the lanes' counts), each lane
    // writing its own vertices. All 32 lanes call it.
    __device__ void append_bits(unsigned int w, unsigned int bits) const {
        unsigned int total;
        // At most 32 vertices per lane: 6 bits.
        unsigned int slot = warp_reserve_n<6>(wl.ctrl + CTRL_WL_END,
                                              static_cast<unsigned int>(__popc(bits)), total);
        for (unsigned int rest = bits; rest != 0u; rest &= rest - 1u) {
            wl.put(slot, w * 32u + static_cast<unsigned int>(__ffs(rest)) - 1u);
            ++slot;
        }
    }

    // Adds the degrees and number of the frontier at worklist positions [begin, end) to the
    // level counters.
    __device__ void count_frontier(unsigned int begin, unsigned int end) const {
        const unsigned int stride = gridDim.x * blockDim.x;
        unsigned long long out = 0;
        unsigned long long in = 0;
        unsigned long long found = 0;
        for (unsigned int p = begin + blockIdx.x * blockDim.x + threadIdx.x; p < end;
             p += stride) {
            add_degrees(push_offsets, pull_offsets, wl.at(p), out, in);
            ++found;
        }
        count_found(out, in, found);
    }

    // After the exchange of a push's append counts (DO_RECEIVED, by rank): whether they are as
    // few as a sparse push may append (n / SPARSE_DIVISOR over the devices), so that every
    // device's list fits its inbox slot and apply_lists costs less than a pass over words().
    // One thread (the barrier's action).
    __device__ bool lists_fit() const {
        unsigned long long appends = 0;
        for (unsigned int d = 0; d < group.size; ++d) {
            appends += get(DO_RECEIVED + d);
        }
        return saturating_mul(appends, SPARSE_DIVISOR) <= n;
    }

    // A dense push completed as a sparse one (lists_fit): stores its appends at worklist
    // positions [begin, end) into this device's list in every peer's inbox half of `mark`, as
    // a sparse push's appends store them while it appends, and clears the discovery bitmap's
    // words they set (every set bit is an append's). The exchange behind the grid barrier
    // after it makes the entries visible. All threads call it.
    __device__ void send_appends(unsigned int begin, unsigned int end, unsigned int mark) const {
        const unsigned int offset = half(mark);
        unsigned int* const bitmap = marks();
        bool stored = false;
        for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < end - begin;
             i += gridDim.x * blockDim.x) {
            const unsigned int v = wl.at(begin + i);
            bitmap[v / 32u] = 0u;  // the next dense push's reductions come after grid barriers
            for (unsigned int d = 0; d < group.size; ++d) {
                if (d != group.rank) {
                    inboxes[d][offset + slot_at(d) * words() + i] = v;
                    stored = true;
                }
            }
        }
        if (stored) {
            __threadfence_system();
        }
    }

    // After a sparse push (which stored its appends into the peers' lists as it appended them) or a
    // dense push that sent them as lists (send_appends): appends the owned ones among its appends
    // at worklist positions [begin, end) (every vertex this device set from UNREACHED, each once)
    // behind them (the next frontier), and adds the degrees and number of every append, owned or
    // not, to the level counters (global counts; see apply_lists). All threads call it.
    __device__ void append_owned(unsigned int begin, unsigned int end) const {
        const unsigned int stride = gridDim.x * blockDim.x;
        const unsigned int thread = blockIdx.x * blockDim.x + threadIdx.x;
        const unsigned int count = end - begin;
        const unsigned int rounds = (count + stride - 1u) / stride;
        unsigned long long out = 0;
        unsigned long long in = 0;
        unsigned long long found = 0;
        for (unsigned int r = 0; r < rounds; ++r) {
            const unsigned int i = r * stride + thread;
            unsigned int v = 0;
            bool hit = false;
            if (i < count) {
                v = wl.at(begin + i);
                hit = v >= owned_begin && v < owned_end;
                add_degrees(push_offsets, pull_offsets, v, out, in);
                ++found;
            }
            wl.append_warp(v, hit);
        }
        count_found(out, in, found);
    }

    // After the exchange that makes a push's lists visible: applies every peer's list of vertices
    // at `mark` (its length in DO_RECEIVED + its rank) and clears it; a vertex whose level this
    // device sets first (from UNREACHED) joins the next frontier if it owns it, and is counted,
    // owned or not: with append_owned's counts, each vertex of the union of all the devices'
    // appends is counted once, so the counters are the global ones on every device (no exchange of
    // counters). All threads call it.
    __device__ void apply_lists(unsigned int mark) const {
        const unsigned int stride = gridDim.x * blockDim.x;
        const unsigned int thread = blockIdx.x * blockDim.x + threadIdx.x;
        const unsigned int total = words();
        unsigned int* const box = inbox + half(mark);
        unsigned long long out = 0;
        unsigned long long in = 0;
        unsigned long long found = 0;
        bool cleared = false;
        for (unsigned int d = 0; d < group.size; ++d) {
            if (d == group.rank) {
                continue;
            }
            unsigned int* const list = box + (d < group.rank ? d : d - 1u) * total;
            const unsigned long long length = get(DO_RECEIVED + d);
            const unsigned int count = length < total ? static_cast<unsigned int>(length) : total;
            const unsigned int rounds = (count + stride - 1u) / stride;
            for (unsigned int r = 0; r < rounds; ++r) {
                const unsigned int i = r * stride + thread;
                unsigned int v = 0;
                bool hit = false;
                if (i < count) {
                    // Written by a peer (over the link): never an L1 line.
                    v = load_volatile(list + i);
                    list[i] = 0u;
                    cleared = true;
                    if (v < n && atomicCAS(levels + v, 0xFFFFFFFFu, mark) == 0xFFFFFFFFu) {
                        hit = v >= owned_begin && v < owned_end;
                        add_degrees(push_offsets, pull_offsets, v, out, in);
                        ++found;
                    }
                }
                wl.append_warp(v, hit);
            }
        }
        if (cleared) {
            __threadfence_system();
        }
        count_found(out, in, found);
    }

    __device__ unsigned long long get(unsigned int word) const {
        return load_relaxed_u64(state + word);
    }

    __device__ void set(unsigned int word, unsigned long long v) const {
        store_relaxed_u64(state + word, v);
    }

    // The actions of the barriers (direction_fused_decide.cuh): the exchanges across the
    // devices and the decide of the next step.
    __device__ bool exchange_lengths(unsigned int appends) const;
    __device__ bool exchange(const unsigned long long* mine, unsigned long long* sums,
                             unsigned int count) const;
    __device__ FusedRecord decide(const DirectionTrace& trace, unsigned int row,
                                  unsigned int own = DO_COUNTED_HERE) const;
    __device__ FusedRecord decide_folded(const DirectionTrace& trace, unsigned int row) const;
    __device__ FusedRecord decide_next(unsigned int own) const;
};

}  // namespace groute
