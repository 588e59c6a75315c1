// Connected components by label propagation for the distributed worklist, one launch per
// round (any device count): the generic min traversal (kernels/include/traversal.cuh) with
// relax = the label itself (groute::LabelRelax). Every vertex starts with its own id and is an
// item of the first round.
//
// cc_labels_expand, cc_labels_expand_hubs, cc_labels_split_receive, cc_labels_reexamine: see
// traversal.cuh. The fused persistent builds are in labels_fused.cu.
#include "traversal.cuh"

GROUTE_TRAVERSAL_KERNELS(cc_labels, groute::LabelRelax, false)
