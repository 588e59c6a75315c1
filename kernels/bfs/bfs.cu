// BFS kernels for the distributed worklist, one launch per round (any device count): the
// generic min traversal (kernels/include/traversal.cuh) with relax = level + 1.
//
// bfs_expand, bfs_expand_hubs, bfs_split_receive, bfs_reexamine: see traversal.cuh. The fused
// persistent builds are in bfs_fused.cu: a program of their own, so that a run that launches
// only these (the direction-optimizing BFS's push steps) does not compile them.
#include "traversal.cuh"

GROUTE_TRAVERSAL_KERNELS(bfs, groute::BfsRelax, false)
