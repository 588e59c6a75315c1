// The worklist BFS as one persistent cooperative launch per run: the generic min traversal's
// fused kernel (kernels/include/fused.cuh) with relax = level + 1, in every build fused.cuh
// instantiates (bfs_fused, bfs_fused_wide, the members' bfs_fused_peer and
// bfs_fused_peer_wide, and on compute capability 9.0 the cluster builds).
#include "fused.cuh"

GROUTE_FUSED_TRAVERSAL_KERNEL(bfs, groute::BfsRelax, false)
