// The device-driven direction-optimizing BFS's run (kernels/bfs/bfs_direction_fused.cu): the
// run's constants and this device's buffers (DoRun) with the passes of a level on them: the
// counters, the bitmap and list sends to the peers and their application, and the pull step.
// The barriers' actions (the exchanges and the decide) are direction_fused_decide.cuh.

#pragma once

#include "block_count.cuh"
#include "direction_fused_words.cuh"
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
    PeerGroup group;
    unsigned int flags;                      // DoFlag
    unsigned long long* const* postboxes;  // every device's postbox, by rank (POST_WORDS)
    // Replicated levels so far (DO_FLAG_REPLICATE; alike on every device, kept by every
    // thread): the inbox halves alternate between the levels that store into them.
    unsigned int replicated_levels;
    // The run has several devices: a compile-time false in the one-device build (its code
    // holds none of the peer steps) and a compile-time true in the several build.
    bool several;

    __device__ unsigned int words() const { return (n + 31u) / 32u; }

    // DO_FLAG_PUSH_BITMAP's discovery bitmap: words() u32 behind the inbox halves (the host
    // allocates them with the inbox and zeroes them with it; send_marks clears them, but for
    // the owned words that apply_marks reads and clears).
    __device__ unsigned int* marks() const {
        return inbox + 2u * (group.size - 1u) * words();
    }

    // The offset of the inbox half that carries the discoveries at `mark`: the halves
    // alternate between the levels that store (every level but a replicated one; see the
    // header's "Inboxes").
    __device__ unsigned int half(unsigned int mark) const {
        return ((mark + replicated_levels) & 1u) * (group.size - 1u) * words();
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

    // Stores this device's discoveries at `mark` (words [begin, end)) into every peer's inbox.
    __device__ void send(unsigned int mark, unsigned int begin, unsigned int end) const {
        const unsigned int warps = gridDim.x * blockDim.x / 32u;
        const unsigned int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32u;
        const unsigned int lane = lane_id();
        const unsigned int total = words();
        const unsigned int slot = slot_at(lane);
        const unsigned int offset = half(mark);
        const bool sends = lane < group.size && lane != group.rank;
        bool stored = false;
        // SEND_BATCH words per warp and iteration: their level loads are all in flight
        // before the first ballot.
        for (unsigned int base = begin + warp; base < end; base += SEND_BATCH * warps) {
            unsigned int bits[SEND_BATCH];
#pragma unroll
            for (unsigned int k = 0; k < SEND_BATCH; ++k) {
                const unsigned int w = base + k * warps;
                bits[k] = w < end ? level_bits(levels, n, w, mark) : 0u;
            }
#pragma unroll
            for (unsigned int k = 0; k < SEND_BATCH; ++k) {
                if (bits[k] != 0u && sends) {
                    inboxes[lane][offset + slot * total + base + k * warps] = bits[k];
                    stored = true;
                }
            }
        }
        if (stored) {
            __threadfence_system();
        }
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

    // Applies the received words (when `receive`) and, when `scan`, scans the owned vertices
    // at `mark` into the worklist and the level counters (DO_FLAG_SCAN_BATCH: SCAN_BATCH
    // words per warp and iteration, their loads all in flight before the first is used).
    // `pulled`: the step was a pull, so received bits lie only in the peers' owned vertices:
    // the inbox words of the words wholly owned by this device are not read (nor, when not
    // scanning, those words visited at all).
    __device__ void apply_and_scan(unsigned int mark, bool receive, bool scan,
                                   bool pulled) const {
        if (receive && pulled && !scan) {
            apply_pulled(mark, false);
        } else if ((flags & DO_FLAG_SCAN_BATCH) != 0u) {
            apply_and_scan_in<SCAN_BATCH>(mark, receive, scan, pulled);
        } else {
            apply_and_scan_in<1u>(mark, receive, scan, pulled);
        }
    }

    // The words that hold an owned vertex: [owned_begin / 32, owned_words_end()).
    __device__ unsigned int owned_words_end() const {
        const unsigned int end = owned_end < n ? owned_end : n;
        return (end + 31u) / 32u;
    }

    // The bits of word `w` that are owned vertices (below n).
    __device__ unsigned int owned_bits(unsigned int w) const {
        const unsigned int first = w * 32u;
        const unsigned int end = owned_end < n ? owned_end : n;
        if (end <= first || owned_begin >= first + 32u) {
            return 0u;
        }
        const unsigned int low = owned_begin > first ? owned_begin - first : 0u;  // < 32
        const unsigned int high = end - first < 32u ? end - first : 32u;
        const unsigned int below_high = high == 32u ? 0xFFFFFFFFu : (1u << high) - 1u;
        return below_high & ~((1u << low) - 1u);
    }

    // DO_FLAG_PUSH_BITMAP, after a dense push: stores every nonzero word of the discovery
    // bitmap (this device's discoveries at `mark`) into every peer's inbox and clears it, a
    // thread per word (coalesced loads of 4 bytes per 32 vertices, where send reads every
    // vertex's level). `keep_owned` (apply_marks builds the next frontier from them): the
    // words that hold an owned vertex are left for apply_marks to clear.
    __device__ void send_marks(unsigned int mark, bool keep_owned) const {
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
            if (!keep_owned || w < owned_begin / 32u || w >= owned_words_end()) {
                bitmap[w] = 0u;  // the next dense push's reductions come after grid barriers
            }
            for (unsigned int d = 0; d < group.size; ++d) {
                if (d != group.rank) {
                    inboxes[d][offset + slot_at(d) * total + w] = bits;
                    stored = true;
                }
            }
        }
        if (stored) {
            __threadfence_system();
        }
    }

    // apply_and_scan after a pull, nothing scanned (`append`: the received vertices join the
    // frontier too, DO_FLAG_REPLICATE): every received bit is a vertex that a
    // peer found at `mark` among its owned vertices, so it was UNREACHED here (the level
    // arrays agree below `mark`, and a pull sets owned vertices only): its level is stored
    // without being read. The words wholly owned here are skipped (nothing is received there
    // after a pull). Each lane loads one inbox word (a warp's 32 loads coalesced, one round
    // trip per grid-stride step, where a warp per word waited for two per word), clears it
    // when nonzero, and the warp then stores the levels of each nonzero word together, a
    // lane per bit (one line per word, as the warp-per-word pass stored them).
    __device__ void apply_pulled(unsigned int mark, bool append) const {
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
            if (append) {
                append_bits(w, bits);
            }
        }
        if (cleared) {
            __threadfence_system();
        }
    }

    // DO_FLAG_PUSH_FRONTIER with DO_FLAG_PUSH_BITMAP on several devices, after a dense push's
    // exchange: applies the received words and appends the next frontier from them and this
    // device's discovery bitmap, reading no level. A received bit is a vertex that a peer
    // set to `mark` from UNREACHED; the level arrays agree below `mark`, so here it is
    // UNREACHED or `mark` (this device found it too), and its level is stored without being
    // read. The owned vertices at `mark` are the union of this device's discoveries in the
    // words that hold an owned vertex (left there by send_marks) and the received bits
    // there, each appended once. A lane per word: a warp's inbox and bitmap loads coalesced,
    // one round trip per grid-stride step (apply_and_scan, a warp per word, loads every owned
    // vertex's level and waits for a round trip per word). The frontier's degrees are summed
    // after, over the appended items (count_frontier), behind a grid barrier.
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
    // peer's finds: vertices below n), a lane per bit of each such word: one line per word.
    // All 32 lanes call it.
    __device__ __forceinline__ void store_levels(unsigned int w, unsigned int bits,
                                                 unsigned int mark) const {
        const unsigned int lane = lane_id();
        unsigned int pending = __ballot_sync(0xFFFFFFFFu, bits != 0u);
        while (pending != 0u) {
            const int from = __ffs(pending) - 1;
            pending &= pending - 1u;
            const unsigned int word = __shfl_sync(0xFFFFFFFFu, w, from);
            const unsigned int set = __shfl_sync(0xFFFFFFFFu, bits, from);
            if (((set >> lane) & 1u) != 0u) {
                levels[word * 32u + lane] = mark;
            }
        }
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

    // apply_and_scan over BATCH words per warp and iteration.
    template <unsigned int BATCH>
    __device__ void apply_and_scan_in(unsigned int mark, bool receive, bool scan,
                                      bool pulled) const {
        const unsigned int warps = gridDim.x * blockDim.x / 32u;
        const unsigned int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32u;
        const unsigned int lane = lane_id();
        const unsigned int total = words();
        const unsigned int own_begin = owned_begin / 32u;
        const unsigned int own_end = (owned_end + 31u) / 32u;
        const unsigned int first = receive ? 0u : own_begin;
        const unsigned int last = receive ? total : own_end;
        unsigned int* const box = inbox + half(mark);
        unsigned long long out = 0;
        unsigned long long in = 0;
        unsigned long long found = 0;
        bool cleared = false;
        const bool reserve = (flags & DO_FLAG_WARP_RESERVE) != 0u;
        const auto owns_word = [&](unsigned int w) {
            return scan && w < last && w >= own_begin && w < own_end;
        };
        // The words wholly owned (nothing received there after a pull): [inner_begin,
        // inner_end), skipped by the word index when only applying.
        const unsigned int inner_begin = (owned_begin + 31u) / 32u;
        const unsigned int inner_end = owned_end >= n ? total : owned_end / 32u;
        const unsigned int inner = pulled && inner_end > inner_begin ? inner_end - inner_begin : 0u;
        const unsigned int skip = scan ? 0u : inner;
        const auto word_at = [&](unsigned int j) { return j < inner_begin ? j : j + skip; };
        const auto received_at = [&](unsigned int w) {
            return receive && w < last && !(w >= inner_begin && w - inner_begin < inner);
        };
        for (unsigned int base = first + warp; base < last - skip; base += BATCH * warps) {
            unsigned int loaded[BATCH];
            unsigned int received[BATCH];
#pragma unroll
            for (unsigned int k = 0; k < BATCH; ++k) {
                const unsigned int w = word_at(base + k * warps);
                const unsigned int v = w * 32u + lane;
                // An owned word's levels are loaded with the inbox words, not after them.
                loaded[k] = owns_word(w) && v < n ? levels[v] : 0u;
                received[k] = 0u;
                if (received_at(w)) {
                    for (unsigned int s = 0; s + 1u < group.size; ++s) {
                        // Written by a peer (over the link): never an L1 line.
                        const unsigned int bits = load_volatile(box + s * total + w);
                        received[k] |= bits;
                        if (bits != 0u && lane == 0u) {
                            box[s * total + w] = 0u;
                            cleared = true;
                        }
                    }
                }
            }
#pragma unroll
            for (unsigned int k = 0; k < BATCH; ++k) {
                const unsigned int w = word_at(base + k * warps);
                const bool owned_word = owns_word(w);
                if (received[k] == 0u && !owned_word) {
                    continue;  // warp-uniform
                }
                const unsigned int v = w * 32u + lane;
                unsigned int level = loaded[k];
                if (!owned_word && v < n) {
                    level = levels[v];
                }
                if (((received[k] >> lane) & 1u) != 0u && level == 0xFFFFFFFFu) {
                    levels[v] = mark;
                    level = mark;
                }
                const bool hit = scan && v >= owned_begin && v < owned_end && level == mark;
                if (hit) {
                    add_degrees(push_offsets, pull_offsets, v, out, in);
                    ++found;
                }
                if (!reserve) {
                    wl.append_warp(v, hit);
                }
            }
        }
        if (cleared) {
            __threadfence_system();
        }
        if (reserve && scan) {
            const unsigned int hits =
                __reduce_add_sync(0xFFFFFFFFu, static_cast<unsigned int>(found));
            append_marked(mark, first, last, hits);
        }
        count_found(out, in, found);
    }

    // Pull step of DO_FLAG_PULL_FRONTIER: every owned UNREACHED vertex with an in-neighbour
    // at `level` gets level + 1, is appended to the worklist (the next frontier: rewound by
    // the decide) and counted; with peers, each warp's ballot of finds (32 consecutive
    // vertices from a word-aligned start: one bitmap word) is stored into their inboxes.
    __device__ void pull_frontier(unsigned int level, bool several) const {
        const unsigned int stride = gridDim.x * blockDim.x;
        const unsigned int begin = owned_begin & ~31u;
        const unsigned int end = owned_end < n ? owned_end : n;
        const unsigned int span = end > begin ? end - begin : 0u;
        const unsigned int rounds = (span + stride - 1u) / stride;
        const unsigned int lane = lane_id();
        const unsigned int total = words();
        const unsigned int slot = slot_at(lane);
        const unsigned int offset = half(level + 1u);
        const bool sends = several && lane < group.size && lane != group.rank;
        unsigned long long examined = 0;
        unsigned long long out = 0;
        unsigned long long in = 0;
        unsigned long long found_count = 0;
        bool stored = false;
        const bool reserve = (flags & DO_FLAG_WARP_RESERVE) != 0u;
        for (unsigned int r = 0; r < rounds; ++r) {
            const unsigned int v = begin + r * stride + blockIdx.x * blockDim.x + threadIdx.x;
            bool found = false;
            if (v >= owned_begin && v < end && levels[v] == 0xFFFFFFFFu) {
                found = pull_finds_parent(levels, pull_offsets, pull_sources, v, level, examined);
                if (found) {
                    levels[v] = level + 1u;
                    add_degrees(push_offsets, pull_offsets, v, out, in);
                    ++found_count;
                }
            }
            if (!reserve) {
                wl.append_warp(v, found);
            }
            if (several) {
                const unsigned int bits = __ballot_sync(0xFFFFFFFFu, found);
                if (bits != 0u && sends) {
                    inboxes[lane][offset + slot * total + (v - lane_id()) / 32u] = bits;
                    stored = true;
                }
            }
        }
        if (stored) {
            __threadfence_system();
        }
        if (reserve) {
            const unsigned int finds =
                __reduce_add_sync(0xFFFFFFFFu, static_cast<unsigned int>(found_count));
            append_marked(level + 1u, begin / 32u, (end + 31u) / 32u, finds);
        }
        count_found(out, in, found_count, examined);
    }

    // DO_FLAG_PUSH_FRONTIER: adds the degrees and number of the frontier at worklist
    // positions [begin, end) to the level counters.
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

    // DO_FLAG_SPARSE_PUSH, after a push: stores its appends at worklist positions [begin,
    // end) (every vertex this device set to `mark`, each once; fewer than words()) as a list
    // into this device's slot of every peer's inbox (unless `listed`: the push stored them,
    // DO_FLAG_LISTED_PUSH), and appends the owned ones behind them (the next frontier),
    // their degrees and number added to the level counters (`global`: of every append, owned
    // or not; see apply_lists). All threads call it.
    __device__ void send_appends(unsigned int mark, unsigned int begin, unsigned int end,
                                 bool global, bool listed) const {
        const unsigned int stride = gridDim.x * blockDim.x;
        const unsigned int thread = blockIdx.x * blockDim.x + threadIdx.x;
        const unsigned int count = end - begin;
        const unsigned int rounds = (count + stride - 1u) / stride;
        const unsigned int total = words();
        const unsigned int offset = half(mark);
        unsigned long long out = 0;
        unsigned long long in = 0;
        unsigned long long found = 0;
        for (unsigned int r = 0; r < rounds; ++r) {
            const unsigned int i = r * stride + thread;
            unsigned int v = 0;
            bool hit = false;
            if (i < count) {
                v = wl.at(begin + i);
                for (unsigned int d = 0; d < group.size && !listed; ++d) {
                    if (d != group.rank) {
                        inboxes[d][offset + slot_at(d) * total + i] = v;
                    }
                }
                hit = v >= owned_begin && v < owned_end;
                if (hit || global) {
                    add_degrees(push_offsets, pull_offsets, v, out, in);
                    ++found;
                }
            }
            wl.append_warp(v, hit);
        }
        if (thread < count && !listed) {
            __threadfence_system();
        }
        count_found(out, in, found);
    }

    // DO_FLAG_SPARSE_PUSH, after the exchange: applies every peer's list of vertices at
    // `mark` (its length in DO_RECEIVED + its rank) and clears it; a vertex whose level this
    // device sets first (from UNREACHED) and owns joins the next frontier and the counters.
    // `global` (DO_FLAG_ONE_EXCHANGE): every vertex whose level it sets first is counted,
    // owned or not: with send_appends' global counts, each vertex of the union of all the
    // devices' appends counted once, so the counters are the global ones on every device
    // (no exchange of counters). All threads call it.
    __device__ void apply_lists(unsigned int mark, bool global) const {
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
                        if (hit || global) {
                            add_degrees(push_offsets, pull_offsets, v, out, in);
                            ++found;
                        }
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
                                  unsigned int own = DO_COUNTED_HERE,
                                  unsigned int replication = 0u) const;
    __device__ FusedRecord decide_folded(const DirectionTrace& trace, unsigned int row) const;
    __device__ FusedRecord decide_next(unsigned int own, bool everywhere) const;
};

}  // namespace groute
