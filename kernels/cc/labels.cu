// Connected components by label propagation for the distributed worklist: the generic min
// traversal (kernels/include/traversal.cuh) with relax = the label itself (groute::LabelRelax).
// Every vertex starts with its own id and is an item of the first round.
//
// cc_labels_expand, cc_labels_expand_hubs, cc_labels_split_receive (one launch per round, any
// device count): see traversal.cuh. cc_labels_fused (one persistent cooperative launch per
// run, one device): see fused.cuh.
#include "fused.cuh"
#include "traversal.cuh"

GROUTE_TRAVERSAL_KERNELS(cc_labels, groute::LabelRelax, false)
GROUTE_FUSED_TRAVERSAL_KERNEL(cc_labels, groute::LabelRelax, false)
