// BFS kernels for the distributed worklist: the generic min traversal
// (kernels/include/traversal.cuh) with relax = level + 1.
//
// bfs_expand, bfs_expand_hubs, bfs_split_receive (one launch per round, any device count):
// see traversal.cuh. bfs_fused (one persistent cooperative launch per run, one device): see
// fused.cuh.
#include "fused.cuh"
#include "traversal.cuh"

GROUTE_TRAVERSAL_KERNELS(bfs, groute::BfsRelax, false)
GROUTE_FUSED_TRAVERSAL_KERNEL(bfs, groute::BfsRelax, false)
