// A block's stage of the appends a traversal's phases make outside its worklist: soft
// priority's deferred heads (the low list, low_list.cuh) and the heads sent to other devices
// (the outgoing buffer, worklist.cuh's SendBuffer). The expand, hub and re-examine phases
// defer through it, and where the build stages sends (SENDS) the expand, hub and receive
// phases send through it too (traversal.cuh).
#pragma once

#include "low_list.cuh"
#include "worklist.cuh"

namespace groute {

// Entries of a block's stage (8 KiB of shared memory), and its words (BlockStage's WORDS).
constexpr unsigned int BLOCK_STAGE_ITEMS = 1024u;
constexpr unsigned int BLOCK_STAGE_WORDS = 5u;

// The stage's shared arrays: one pair per kernel (a non-template function's statics), which
// every phase and both BlockStage forms share.
__device__ __forceinline__ void block_stage_arrays(VertexValue*& entries, unsigned int*& words) {
    __shared__ VertexValue stage_entries[BLOCK_STAGE_ITEMS];
    __shared__ unsigned int stage_words[BLOCK_STAGE_WORDS];
    entries = stage_entries;
    words = stage_words;
}

// Appends `p` where `keep` through `view`'s append_warp_n, one item per lane (call with all
// 32 lanes).
template <typename View>
__device__ __forceinline__ void append_one_warp(const View& view, const VertexValue& p,
                                                bool keep) {
    const unsigned int items[1] = {p.vertex};
    const unsigned int values[1] = {p.value};
    const bool kept[1] = {keep};
    view.append_warp_n(items, values, kept);
}

// Both kinds of items gather in one shared array, deferred ones from its front and sent ones
// from its back (one shared compare-and-swap per warp and step on the packed pair of counts,
// one shared atomicMin for the least deferred priority), and reach their global lists once
// per tile of hubs or round of the block's items, with one global atomicAdd per list and one
// atomicMin of the least deferred priority for the block (flush_reserve, flush_copy; flush
// does both with their barriers).
//
// Why: each global list's counter is one address, all of them in the control block's line,
// which every warp's append hits. On a power-law graph the early rounds defer about one head
// in 30, and on several devices about half of the improved heads belong to another device,
// so nearly every warp step appends, and those atomics on one L2 slice set the phase's pace.
// Staged, the slice sees at most three atomics per flush and block. On two H200s SSSP on a
// Kronecker graph ran its hub tiles at two thirds of one GPU's rate per arc before its sends
// were staged. The fused builds whose runs never or seldom send (SENDS false: one device,
// the bounded rounds) keep their sends out of the stage and its code out of their loops; the
// host-driven kernels stage them on any device count.
//
// A warp whose items do not fit in the stage's free entries appends them to the global list
// itself (LowList::append_warp_n, SendBuffer::append_warp_n), so any block size and tile
// length is served; its refused reservation leaves the counts as they were. Protocol: `stage`
// zeroes the words (thread 0) before a __syncthreads that precedes the first appends; appends
// between two flushes; a flush is flush_reserve after a __syncthreads that follows the
// appends, then a __syncthreads, then flush_copy, and a __syncthreads (flush's own last one,
// or the next tile's or round's first) before the next appends overwrite the entries it
// reads. The views `deferred()` and `sent()` are what the phases append through: the low
// list's and the outgoing buffer's interfaces (defers, append_warp, append_warp_n).
template <bool SENDS>
struct BlockStage {
    enum : unsigned int { STAGE_ITEMS = BLOCK_STAGE_ITEMS };
    // The shared words: the staged counts (deferred in the low 16 bits, sent in the high 16),
    // the least deferred priority, the global positions of the first flushed item of each
    // list, and the counts being flushed (packed as the staged ones).
    enum : unsigned int { COUNTS, LEAST, LOW_FIRST, SEND_FIRST, FLUSHING, WORDS };
    static_assert(WORDS == BLOCK_STAGE_WORDS, "block_stage_arrays' words");
    enum : unsigned int { DEFERRED_SHIFT = 0u, SENT_SHIFT = 16u };

    LowList low;
    SendBuffer send;       // SENDS only
    VertexValue* entries;  // shared, STAGE_ITEMS
    unsigned int* words;   // shared, WORDS

    // The block's stage over `low` and, where SENDS, `send` (the arrays are block_stage_arrays'
    // static shared memory: one stage per block and kernel, whatever the instantiations).
    __device__ __forceinline__ static BlockStage of(const LowList& low, const SendBuffer& send) {
        VertexValue* entries;
        unsigned int* words;
        block_stage_arrays(entries, words);
        return BlockStage{low, send, entries, words};
    }

    // Whether anything can be appended through the stage (flushes are needed). Where SENDS,
    // the outgoing buffer must have a capacity (the host gives every device-driven ring and
    // every host-driven outgoing buffer at least one item): a send staged with soft priority
    // off and no capacity would never be flushed.
    __device__ __forceinline__ bool active() const {
        return low.active() || (SENDS && send.capacity != 0u);
    }

    // Thread 0, before the first __syncthreads of the tile or round loop.
    __device__ __forceinline__ void stage() const {
        if (threadIdx.x == 0) {
            words[COUNTS] = 0;
            words[LEAST] = 0xFFFFFFFFu;
        }
    }

    // Reserves `t` entries of the side at SHIFT and returns the first one's index on that
    // side, or REFUSED where they do not fit beside the staged items of both sides. A
    // compare-and-swap, so that a refused warp never moves the counts: an add undone later
    // would let another warp reserve past the staged items.
    template <unsigned int SHIFT>
    __device__ __forceinline__ unsigned int reserve(unsigned int t) const {
        unsigned int counts = *const_cast<const volatile unsigned int*>(words + COUNTS);
        // Without sends the sent count is 0: the deferred count alone is checked.
        while ((SENDS ? (counts & 0xFFFFu) + (counts >> 16) : counts) + t <= STAGE_ITEMS) {
            const unsigned int seen = atomicCAS(words + COUNTS, counts, counts + (t << SHIFT));
            if (seen == counts) {
                return (counts >> SHIFT) & 0xFFFFu;
            }
            counts = seen;
        }
        return REFUSED;
    }

    // Stages the items (items[k], values[k]) where keep[k] on the side at SHIFT (deferred ones
    // at the front, sent ones at the back), `note_least` taking the warp's least value (lane
    // 0); where the stage refuses them, `fallback` appends them to the global list. Call with
    // all 32 lanes.
    template <unsigned int SHIFT, unsigned int K, typename NoteLeast, typename Fallback>
    __device__ __forceinline__ void stage_warp_n(const unsigned int (&items)[K],
                                                 const unsigned int (&values)[K],
                                                 const bool (&keep)[K], NoteLeast note_least,
                                                 Fallback fallback) const {
        const bool staged = append_kept_warp(
            items, values, keep, [&](unsigned int t) { return reserve<SHIFT>(t); }, note_least,
            [&](unsigned int at, const VertexValue& p) {
                entries[SHIFT == SENT_SHIFT ? STAGE_ITEMS - 1u - at : at] = p;
            });
        if (!staged) {
            fallback();
        }
    }

    // The deferred items' view: the low list's interface, into the stage's front.
    struct Deferred {
        const BlockStage& stage;

        __device__ __forceinline__ bool active() const { return stage.low.active(); }
        __device__ __forceinline__ bool defers(unsigned int prio) const {
            return stage.low.defers(prio);
        }
        template <unsigned int K>
        __device__ __forceinline__ void append_warp_n(const unsigned int (&items)[K],
                                                      const unsigned int (&prio)[K],
                                                      const bool (&keep)[K]) const {
            const BlockStage& s = stage;
            s.template stage_warp_n<DEFERRED_SHIFT>(
                items, prio, keep, [&](unsigned int least) { atomicMin(s.words + LEAST, least); },
                [&] { s.low.append_warp_n(items, prio, keep); });
        }
        __device__ __forceinline__ void append_warp(const VertexValue& p, bool keep) const {
            append_one_warp(*this, p, keep);
        }
    };

    // The sent items' view: the outgoing buffer's interface, into the stage's back.
    struct Sent {
        static constexpr bool STAGED = true;
        const BlockStage& stage;

        template <unsigned int K>
        __device__ __forceinline__ void append_warp_n(const unsigned int (&items)[K],
                                                      const unsigned int (&values)[K],
                                                      const bool (&keep)[K]) const {
            const BlockStage& s = stage;
            s.template stage_warp_n<SENT_SHIFT>(items, values, keep, [](unsigned int) {},
                                                [&] { s.send.append_warp_n(items, values, keep); });
        }
        __device__ __forceinline__ void append_warp(const VertexValue& p, bool keep) const {
            append_one_warp(*this, p, keep);
        }
    };

    __device__ __forceinline__ Deferred deferred() const { return Deferred{*this}; }

    // What the phase sends through: the stage (SENDS), else the outgoing buffer itself (one
    // reservation per warp and step: builds whose runs send rarely keep the registers and the
    // code of the stage's send side out of their loops).
    __device__ __forceinline__ auto sent() const {
        if constexpr (SENDS) {
            return Sent{*this};
        } else {
            return send;
        }
    }

    // Thread 0, after a __syncthreads that follows the appends: reserves the staged items'
    // positions in their global lists and empties the stage's counts.
    __device__ __forceinline__ void flush_reserve() const {
        if (threadIdx.x == 0) {
            const unsigned int counts = words[COUNTS];
            words[FLUSHING] = counts;
            const unsigned int deferred = counts & 0xFFFFu;
            const unsigned int sent = counts >> 16;
            if (deferred != 0) {
                words[LOW_FIRST] = atomicAdd(low.ctrl + CTRL_LOW_END, deferred);
                atomicMin(low.ctrl + CTRL_LOW_MIN, words[LEAST]);
            }
            if (SENDS && sent != 0) {
                words[SEND_FIRST] = atomicAdd(send.ctrl + CTRL_SEND_END, sent);
            }
            words[COUNTS] = 0;
            words[LEAST] = 0xFFFFFFFFu;
        }
    }

    // Every thread, after a __syncthreads that follows flush_reserve: copies the staged items.
    __device__ __forceinline__ void flush_copy() const {
        const unsigned int counts = words[FLUSHING];
        const unsigned int deferred = counts & 0xFFFFu;
        const unsigned int sent = counts >> 16;
        const unsigned int low_first = words[LOW_FIRST];
        for (unsigned int i = threadIdx.x; i < deferred; i += blockDim.x) {
            const unsigned int slot = low_first + i;
            if (slot < low.capacity) {
                low.data[slot] = entries[i];
            } else if (i + 1u == deferred) {
                atomicMax(low.ctrl + CTRL_LOW_OVERFLOW, slot + 1u);
            }
        }
        if constexpr (SENDS) {
            const unsigned int send_first = words[SEND_FIRST];
            for (unsigned int i = threadIdx.x; i < sent; i += blockDim.x) {
                send.store_at(send_first + i, entries[STAGE_ITEMS - 1u - i]);
            }
        }
    }

    // Every thread, from block-uniform control flow, after the block's appends: moves the
    // staged items to their global lists (three barriers: after the appends, after the
    // reservation, after the copy, so that the next appends may reuse the entries).
    __device__ __forceinline__ void flush() const {
        __syncthreads();
        flush_reserve();
        __syncthreads();
        flush_copy();
        __syncthreads();
    }
};

}  // namespace groute
