// Memory operations that one thread's step issues back to back.
//
// Why. A thread relaxing THREAD_ARCS arcs wants its THREAD_ARCS atomicMins in flight
// together: one round trip to L2, not one each. Written as
// `active && seen > cand && atomicMin(p, cand) > cand`, each atomic sits in its own branch
// (the short-circuit), and ptxas consumes each atomic's result inside that branch, before the
// next atomic issues: the four atomics of a step run one after the other, every atomic's
// result waiting on a full round trip. The same holds for the heads' range loads, one branch
// per head, whose waits chain through the targets loads' scoreboard. A predicated instruction
// has no branch around it, so the step's atomics (and loads) issue one after another and
// their results are consumed after the last has gone out.
//
// Self-contained (NVRTC): no toolkit headers.
#pragma once

namespace groute {

// atomicMin(p, v) on global memory where `on`, predicated rather than branched over; returns
// the old value where `on`, and `v` where not (so the caller's `result > v` test reports no
// improvement).
// `p` must be a global-memory address where `on`; it is not touched where not.
__device__ __forceinline__ unsigned int atomic_min_global_if(unsigned int* p, unsigned int v,
                                                             bool on) {
    unsigned int old = v;
    const unsigned long long global = __cvta_generic_to_global(p);
    asm volatile(
        "{\n\t"
        ".reg .pred on;\n\t"
        "setp.ne.u32 on, %3, 0;\n\t"
        "@on atom.global.min.u32 %0, [%1], %2;\n\t"
        "}"
        : "+r"(old)
        : "l"(global), "r"(v), "r"(on ? 1u : 0u)
        : "memory");
    return old;
}

// A CTA-scope relaxed load of global memory (`ld.relaxed.cta.global`, LDG.E.STRONG.SM: it may
// be served by this SM's L1). Strong, so that the compiler neither hoists nor merges it; and
// ptxas (CUDA 13.0, sm_90) was seen to keep a thread's strong loads in program order, which
// relax_thread_arcs' FreshValue relies on for speed only: PTX promises no order among loads
// of different addresses, and nothing depends on it for correctness. It sees every write
// ordered before it: this thread's own, and other threads' (of this CTA or another) ordered
// by a barrier's or fence's release and acquire (__syncthreads, a cluster or grid barrier, a
// fence pattern); a write not so ordered it may miss.
__device__ __forceinline__ unsigned int load_relaxed_cta(const unsigned int* p) {
    unsigned int v;
    asm volatile("ld.relaxed.cta.global.u32 %0, [%1];"
                 : "=r"(v)
                 : "l"(__cvta_generic_to_global(p)));
    return v;
}

}  // namespace groute
