// SSSP kernels for the distributed worklist: the generic min traversal
// (kernels/include/traversal.cuh) with relax = distance + weight, saturating below UNREACHED
// (groute::SsspRelax), reading the arc weights.
//
// sssp_expand, sssp_expand_hubs, sssp_split_receive (one launch per round, any device
// count): see traversal.cuh. sssp_fused (one persistent cooperative launch per run, one
// device): see fused.cuh.
#include "fused.cuh"
#include "traversal.cuh"

GROUTE_TRAVERSAL_KERNELS(sssp, groute::SsspRelax, true)
GROUTE_FUSED_TRAVERSAL_KERNEL(sssp, groute::SsspRelax, true)
