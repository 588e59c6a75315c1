// BFS kernels for the distributed worklist (non-fused mode: one launch per round):
// the generic min traversal (kernels/include/traversal.cuh) with relax = level + 1.
//
// bfs_expand, bfs_split_receive: see traversal.cuh for the parameters and the protocol.
#include "traversal.cuh"

GROUTE_TRAVERSAL_KERNELS(bfs, groute::BfsRelax, false)
