// SSSP as one persistent cooperative launch per run: the generic min traversal's fused kernel
// (kernels/include/fused.cuh) with relax = distance + weight (groute::SsspRelax), in every
// build fused.cuh instantiates (sssp_fused and its wide, members' and cluster builds).
#include "fused.cuh"

GROUTE_FUSED_TRAVERSAL_KERNEL(sssp, groute::SsspRelax, true)
