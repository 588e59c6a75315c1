// Label propagation as one persistent cooperative launch per run: the generic min traversal's
// fused kernel (kernels/include/fused.cuh) with relax = the label (groute::LabelRelax), in
// every build fused.cuh instantiates (cc_labels_fused and its wide, members' and cluster
// builds).
#include "fused.cuh"

GROUTE_FUSED_TRAVERSAL_KERNEL(cc_labels, groute::LabelRelax, false)
