// Connected components' shared data (kernels/cc/cc.cu): the parameter of the kernels that link
// a device's own rows. Mirrored by groute_kernels::abi (kernels/abi/cc.rs); see abi.h.
#ifndef GROUTE_ABI_CC_H
#define GROUTE_ABI_CC_H

#include "abi.h"

#ifdef __cplusplus
namespace groute {
#endif

// The rows one device links into its parent array (cc_link_first, cc_link_sampled, cc_link_rest,
// cc_link_tiles). `offsets` and `targets` are rebased to global ids: offsets[v] is valid for
// first_row <= v <= end_row, targets[e] for the arcs of those rows.
struct CcLink {
    const unsigned long long* offsets;
    const unsigned int* targets;
    // The tiles of the rows with at least `tile_arcs` arcs: tile t is row tile_row[t]'s arcs
    // from tile_begin[t], `tile_arcs` of them or up to the row's end.
    const unsigned int* tile_row;
    const unsigned long long* tile_begin;
    unsigned int* parent;              // n entries
    unsigned long long* linked;        // arcs linked, added to
    unsigned int first_row;            // the rows: [first_row, end_row)
    unsigned int end_row;
    unsigned int n;                    // vertices of the graph (entries of parent)
    unsigned int round;                // cc_link_sampled: the arc of every row it links
    unsigned int sampled;              // arcs of each row cc_link_rest and cc_link_tiles skip
                                       // (but arc 0 where its head is above the row)
    unsigned int anchor;               // rows in this vertex's tree are skipped (>= n: none)
    unsigned int tile_count;
    unsigned int tile_arcs;            // 0: no row is tiled
    unsigned int lower_only;           // link only arcs to heads below their row
    unsigned int pad;                  // 0: completes the struct's last 8 bytes
};

#ifdef __cplusplus
}  // namespace groute
#endif

#endif  // GROUTE_ABI_CC_H
