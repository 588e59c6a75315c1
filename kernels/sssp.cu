// SSSP kernels for the distributed worklist (non-fused mode: one launch per round):
// the generic min traversal (kernels/include/traversal.cuh) with relax = distance + weight,
// saturating below UNREACHED (groute::SsspRelax), reading the arc weights.
//
// sssp_expand, sssp_split_receive: see traversal.cuh for the parameters and the protocol.
#include "traversal.cuh"

GROUTE_TRAVERSAL_KERNELS(sssp, groute::SsspRelax, true)
