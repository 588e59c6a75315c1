// Hub list: adjacency lists too long for one block are spread over the whole grid.
//
// A round's kernel does not push a hub (degree >= HubList::MIN_DEGREE) itself: the item's
// thread records it with `record`, one 64-bit atomicAdd on `*counter` whose low word counts
// the hubs listed (the slot) and whose high word the tiles of HubList::TILE arcs listed
// before (the hub's first tile), so slots are sorted by first tile. The launch that follows
// runs `block_tile` for tiles blockIdx.x, blockIdx.x + gridDim.x, ...: a 32-ary warp search
// over the first tiles finds the tile's hub. A slot also carries one 32-bit payload of the
// recording thread (PageRank: the share per arc, taken exactly once by that thread).
//
// A hub that finds the list full (`record` returns false) is pushed by its caller; its tiles
// stay counted and resolve to an empty range (no arc is lost or pushed twice). The host
// resets `*counter` to 0 before each recording launch and sizes `slots` to
// `capacity * SLOT_WORDS` u32s.
//
// The constants live in the struct so this header can sit beside traversal.cuh (which has
// its own HUB_MIN_DEGREE / HUB_TILE for BFS and SSSP). Self-contained (NVRTC).
#pragma once

#include "warp_append.cuh"

namespace groute {

// Warp-wide (all 32 lanes): the largest slot < n whose first tile is <= g, over slots of
// `slot_words` u32s whose word 1 is the slot's first tile, sorted, slot 0's being 0. A 32-ary
// search: each step ballots 32 probes. Shared by HubList and traversal.cuh.
__device__ __forceinline__ unsigned int hub_slot_of_tile(const unsigned int* slots,
                                                         unsigned int slot_words, unsigned int n,
                                                         unsigned int g) {
    const unsigned int lane = lane_id();
    unsigned int lo = 0;
    unsigned int hi = n;
    while (hi - lo > 1u) {
        const unsigned int step = (hi - lo + 31u) / 32u;
        const unsigned int idx = lo + lane * step;
        const bool le = idx < hi && slots[slot_words * idx + 1u] <= g;
        const unsigned int ballot = __ballot_sync(0xFFFFFFFFu, le);
        const unsigned int last = 31u - __clz(ballot);
        const unsigned int nlo = lo + last * step;
        hi = nlo + step < hi ? nlo + step : hi;
        lo = nlo;
    }
    return lo;
}

// One tile of a hub's list: arcs [begin, end) and the hub's payload.
struct HubTile {
    unsigned long long begin;
    unsigned long long end;
    unsigned int payload;
};

struct HubList {
    static constexpr unsigned int MIN_DEGREE = 2048;
    static constexpr unsigned int TILE = 2048;
    // Words of a slot: vertex, first tile, payload, unused (16-byte slots).
    static constexpr unsigned int SLOT_WORDS = 4;

    unsigned long long* counter;  // low word: hubs recorded; high word: their tiles
    unsigned int* slots;          // capacity * SLOT_WORDS u32s
    unsigned int capacity;

    __device__ __forceinline__ static bool is_hub(unsigned long long degree) {
        return degree >= MIN_DEGREE;
    }

    // Lists hub `v` of `degree` arcs with `payload`; false when the list is full (the caller
    // pushes the hub itself).
    __device__ __forceinline__ bool record(unsigned int v, unsigned long long degree,
                                           unsigned int payload) const {
        const unsigned long long tiles = (degree + TILE - 1u) / TILE;
        const unsigned long long old = atomicAdd(counter, (tiles << 32) | 1ull);
        const unsigned int slot = static_cast<unsigned int>(old);
        if (slot >= capacity) {
            return false;
        }
        unsigned int* s = slots + SLOT_WORDS * slot;
        s[0] = v;
        s[1] = static_cast<unsigned int>(old >> 32);
        s[2] = payload;
        return true;
    }

    // Tiles listed by the recording launch (call in the launch after it).
    __device__ __forceinline__ unsigned int tiles() const {
        return static_cast<unsigned int>(*counter >> 32);
    }

    // Slots holding a hub (call in the launch after the recording one).
    __device__ __forceinline__ unsigned int listed() const {
        const unsigned int recorded = static_cast<unsigned int>(*counter);
        return recorded < capacity ? recorded : capacity;
    }

    // Block-wide: tile `g`'s arc range and payload into `out` (block shared), for every thread
    // after the closing __syncthreads. Requires listed() > 0 and every thread of the block.
    __device__ __forceinline__ void block_tile(unsigned int g, unsigned int n,
                                               const unsigned long long* offsets,
                                               HubTile& out) const {
        if (threadIdx.x < 32u) {
            const unsigned int lo = hub_slot_of_tile(slots, SLOT_WORDS, n, g);
            if (lane_id() == 0) {
                const unsigned int* s = slots + SLOT_WORDS * lo;
                const unsigned int v = s[0];
                const unsigned long long t = g - s[1];
                const unsigned long long vb = offsets[v];
                const unsigned long long ve = offsets[v + 1];
                unsigned long long b = vb + t * TILE;
                const unsigned long long e = b + TILE;
                if (b > ve) {
                    b = ve;  // a tile of a hub that found the list full: empty
                }
                out.begin = b;
                out.end = e < ve ? e : ve;
                out.payload = s[2];
            }
        }
        __syncthreads();
    }
};

}  // namespace groute
