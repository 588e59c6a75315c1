// Predicate-based filter (pbf): copies the elements of `input` that satisfy the predicate to
// `output`, compacted, and counts them in `*count`.
//
// Predicate: keep x  <=>  x % modulus == residue   (modulus >= 1, residue < modulus).
//
// Appends are warp-aggregated (warp_append.cuh): one atomicAdd on `*count` per warp per
// grid-stride step, not one per kept element. The kernel adds to `*count` (callers zero it
// first); `output` must hold `n` elements. The order of the kept elements is not specified
// (lane order inside a warp's chunk, atomic order across warps).
//
// Launch: 1-D blocks (any size), any grid; grid-stride loop, so a grid sized from occupancy
// covers any n.
#include "warp_append.cuh"

extern "C" __global__ void pbf_filter_mod(const unsigned int* __restrict__ input,
                                          unsigned int n,
                                          unsigned int* __restrict__ output,
                                          unsigned int* __restrict__ count,
                                          unsigned int modulus,
                                          unsigned int residue) {
    const unsigned long long stride =
        static_cast<unsigned long long>(gridDim.x) * blockDim.x;
    // `base` is uniform across the block, so every lane of a warp runs the same number of
    // iterations and reaches the warp-collective append together.
    for (unsigned long long base = static_cast<unsigned long long>(blockIdx.x) * blockDim.x;
         base < n; base += stride) {
        const unsigned long long i = base + threadIdx.x;
        unsigned int x = 0;
        bool keep = false;
        if (i < n) {
            x = input[i];
            keep = (x % modulus) == residue;
        }
        groute::warp_append(output, count, x, keep);
    }
}
