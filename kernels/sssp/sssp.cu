// SSSP kernels for the distributed worklist, one launch per round (any device count): the
// generic min traversal (kernels/include/traversal.cuh) with relax = distance + weight,
// saturating below UNREACHED (groute::SsspRelax), reading the arc weights.
//
// sssp_expand, sssp_expand_hubs, sssp_split_receive, sssp_reexamine: see traversal.cuh. The
// fused persistent builds are in sssp_fused.cu.
#include "traversal.cuh"

GROUTE_TRAVERSAL_KERNELS(sssp, groute::SsspRelax, true)
