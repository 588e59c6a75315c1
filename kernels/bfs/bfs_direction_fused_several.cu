// The device-driven direction-optimizing BFS's builds for several devices (kernels/include/
// direction_fused.cuh says what they run): bfs_direction_fused_several and its _bits twin.
// The one-device builds are in bfs_direction_fused.cu.
#include "direction_fused.cuh"

GROUTE_DIRECTION_FUSED_ENTRY(bfs_direction_fused_several, true, false, 4)
GROUTE_DIRECTION_FUSED_ENTRY(bfs_direction_fused_several_bits, true, true, 4)
