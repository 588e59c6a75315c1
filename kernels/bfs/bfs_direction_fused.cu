// The device-driven direction-optimizing BFS's one-device builds (kernels/include/
// direction_fused.cuh says what they run): bfs_direction_fused_one and its _bits twin. The
// builds for several devices are in bfs_direction_fused_several.cu.
#include "direction_fused.cuh"

GROUTE_DIRECTION_FUSED_ENTRY(bfs_direction_fused_one, false, false, 5)
GROUTE_DIRECTION_FUSED_ENTRY(bfs_direction_fused_one_bits, false, true, 5)
