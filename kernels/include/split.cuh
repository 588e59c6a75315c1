// Split operations on the device: the mirror of groute_worklist::SplitOps / SplitFlags
// (crates/groute-worklist/src/split.rs). Self-contained: no toolkit headers.
#pragma once

#include "abi.h"

namespace groute {

// SplitFlags bits (SplitFlags::bits()).
enum SplitFlags : unsigned int {
    SF_DROP = 0,
    SF_KEEP = 1,
    SF_PASS = 2,
    SF_DUPLICATE = 3,
};

// The packed item of label-correcting traversals is abi.h's VertexValue.

// Split functor of a min traversal on one device: owns [owned_begin, owned_end) and holds a
// full-length value array (the halo copy for vertices it does not own).
struct MinSplitOps {
    unsigned int owned_begin;
    unsigned int owned_end;
    unsigned int* values;

    __device__ __forceinline__ bool mine(unsigned int v) const {
        return v >= owned_begin && v < owned_end;
    }
    __device__ __forceinline__ VertexValue pack(unsigned int v) const {
        VertexValue p;
        p.vertex = v;
        p.value = values[v];
        return p;
    }
    __device__ __forceinline__ unsigned int unpack(const VertexValue& p) const { return p.vertex; }
    __device__ __forceinline__ unsigned int on_send(const VertexValue& p) const {
        return mine(p.vertex) ? SF_KEEP : SF_PASS;
    }
    // Applies the update (atomicMin); keeps it if mine and improved, passes it if not mine and
    // it improved the halo copy, else drops it.
    __device__ __forceinline__ unsigned int on_receive(const VertexValue& p) const {
        const unsigned int old = atomicMin(values + p.vertex, p.value);
        if (old <= p.value) {
            return SF_DROP;
        }
        return mine(p.vertex) ? SF_KEEP : SF_PASS;
    }
    __device__ __forceinline__ unsigned int get_prio(unsigned int v) const { return values[v]; }
};

}  // namespace groute
