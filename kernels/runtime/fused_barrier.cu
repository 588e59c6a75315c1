// Micro-benchmark and self-check of the fused kernel's grid barrier (grid_barrier of
// kernels/include/grid_barrier.cuh), launched by groute-worklist's traversal::time_fused_barrier.
//
// fused_barrier_bench(state, barriers, spin_ns, barrier_flags): `barriers` grid barriers back to
// back, with the barrier configuration of the fused kernel. Each barrier's action (the last
// block to arrive) counts it in state[BENCH_PASSED] and publishes the count in the release
// record; after every release thread 0 of every block reads both, and a block that sees any
// other value than the barriers it has passed in either (it was released early, late into the
// next barrier, or without the action's writes) adds one to state[BENCH_ERRORS]. So the
// time of a run is the floor of one fused level's synchronisation, and a broken barrier is
// counted instead of timed. Launch cooperatively, blockDim.x a multiple of 32 up to 1,024;
// `state` is FUSED_WORDS u32, zeroed.
#include "fused.cuh"

namespace {

enum BenchWord : unsigned int {
    BENCH_PASSED = groute::FUSED_ROUNDS,
    BENCH_ERRORS = groute::FUSED_STOP,
};

__device__ __forceinline__ unsigned int load_relaxed(const unsigned int* p) {
    unsigned int v;
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

}  // namespace

extern "C" __global__ void __launch_bounds__(1024)
    fused_barrier_bench(unsigned int* state, unsigned int barriers, unsigned int spin_ns,
                        unsigned int barrier_flags) {
    __shared__ unsigned int published;
    __shared__ unsigned int seen;
    const groute::FusedBarrierConfig config{spin_ns, barrier_flags};
    unsigned int gen = 0;
    for (unsigned int i = 0; i < barriers; ++i) {
        groute::grid_barrier(
            state, gen, config,
            [&] {
                const unsigned int passed = load_relaxed(state + BENCH_PASSED) + 1u;
                groute::store_relaxed(state + BENCH_PASSED, passed);
                return groute::FusedRecord{{passed, 0u, 0u, 0u, 0u, 0u}};
            },
            [&](const groute::FusedRecord& r) {
                published = r.w[0];
                seen = load_relaxed(state + BENCH_PASSED);
            },
            [] {});
        if (threadIdx.x == 0 && (published != i + 1u || seen != i + 1u)) {
            atomicAdd(state + BENCH_ERRORS, 1u);
        }
    }
}
