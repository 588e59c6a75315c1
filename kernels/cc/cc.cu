// Connected components: find with path shortening, hook (high-to-low root, atomic) and
// pointer-jumping compress over a parent array, as used by groute-cc
// (crates/groute-cc/src/cuda.rs holds the typed launch wrappers).
//
// Invariant of the parent array: parent[v] <= v for every v, and a vertex is a root when
// parent[v] == v. Hooking only ever points a root at a smaller vertex (with a CAS; or with a
// plain store in the initialisations cc_link_first and cc_first_parents, which run alone on
// their stream, no find or CAS beside them: in the latter, racing stores may re-point a vertex
// another one just hooked, still at a smaller vertex), and compressing (as do
// the path-shortening stores of a find) only points a vertex at one of its ancestors, so the
// root of every tree is the smallest vertex of the tree, and once the components are single
// trees, the fully compressed array labels every vertex with the minimum vertex id of its
// component.
//
// In particular vertex 0 is always a root (parent[0] <= 0, and nothing ever writes it but
// cc_init): the finds stop at 0 without loading its entry, the word every thread would load
// otherwise once 0's component is the giant one.
//
// The L1 is not coherent across multiprocessors, so a read of the parent array that may race
// with another thread's write sees a value as old as its L1 line. The finds, compresses and the
// first reads of a link read through the L1 (read_ancestor): any value they see is an ancestor
// of the vertex (an ancestor stays one), which is all they need, and the CAS of a hook returns
// the entry as it is. A link's read of its own vertex, and the checks that need the entry as it
// is now, are volatile (L2) loads. Kernels of one stream never overlap, so a compress never
// races with a hook, and each kernel starts with the previous kernels' writes visible.
//
// The warp hook (cc_hook_edges_warp) also uses remembered ancestors: a vertex once an ancestor
// of u stays one (trees only grow at their roots), so uniting with a stale ancestor joins the
// same trees as uniting with the root; it only costs a climb (see warp_link).
//
// Launch: 1-D blocks, any grid; every kernel is a grid-stride loop; the warp hook needs
// blocks of a multiple of 32 threads.

#include "abi_cc.h"

typedef unsigned int u32;
typedef unsigned long long u64;
using groute::CcLink;

namespace {

__device__ __forceinline__ u32 load_parent(const u32* parent, u32 v) {
    return *reinterpret_cast<const volatile u32*>(parent + v);
}

// An entry read through the L1 (`ld.global.ca`): possibly stale, since the L1 is not coherent
// across multiprocessors, but always an ancestor of v (an ancestor stays one), which is all the
// finds, the compress and the first reads of a link need; a CAS on a stale root fails and
// returns the entry as it is, so a hook still ends (see hook_roots). Hot entries (the hubs and
// the roots they point at, many in one cache line) are then served by each multiprocessor's L1
// instead of queueing at one L2 slice. (The driver invalidates the L1 between dependent
// kernels, so a kernel never reads what an earlier one overwrote.)
__device__ __forceinline__ u32 read_ancestor(const u32* parent, u32 v) {
    return __ldca(parent + v);
}

__device__ __forceinline__ void store_parent(u32* parent, u32 v, u32 p) {
    *reinterpret_cast<volatile u32*>(parent + v) = p;
}

// The root of x's tree, shortening the path on the way (ECL-CC's intermediate pointer
// jumping, Jaiganesh and Burtscher 2018): every vertex passed is pointed at its grandparent.
// `cur` is parent[x] as the caller read it. The stores are not atomic: they only ever write a
// non-root (a hook's CAS only succeeds on a root, and a non-root never becomes a root again),
// and they replace one ancestor of that vertex by another (trees only grow at their roots, so
// an ancestor stays an ancestor), so racing with other finds or hooks only makes some paths
// less short. The climb follows strictly decreasing ids, so it ends; an index >= n (a
// corrupted array) stops it and is returned.
__device__ __forceinline__ u32 find_from(u32 x, u32 cur, u32* parent, u32 n) {
    if (cur == x || cur >= n) {
        return cur;
    }
    u32 prev = x;
    u32 next;
    // Vertex 0 is always a root (parent[0] <= 0): reaching it ends the climb without loading
    // its entry, the hottest word of the array when 0 is in the giant component.
    while (cur != 0 && (next = read_ancestor(parent, cur)) < cur) {
        store_parent(parent, prev, next);
        prev = cur;
        cur = next;
    }
    return cur;
}

__device__ __forceinline__ u32 find(u32 x, u32* parent, u32 n) {
    return find_from(x, load_parent(parent, x), parent, n);
}

// Unites the trees that contain r1 and r2 (any vertices of them; roots make it fastest): hooks
// the higher of the two under the lower one with a CAS, which only succeeds on a root; when it
// fails (the vertex is not, or no longer, a root), climbs on from that vertex's parent. Every
// index is checked against n, so a corrupted array stops the climb instead of reading out of
// bounds. Hooking a root under a non-root ancestor of the other side is as good as under its
// root (the trees are joined either way, and parent[high] = low < high keeps the invariant).
__device__ __forceinline__ void hook_roots(u32 r1, u32 r2, u32* parent, u32 n) {
    while (r1 != r2 && r1 < n && r2 < n) {
        const u32 high = r1 > r2 ? r1 : r2;
        const u32 low = r1 + r2 - high;
        const u32 old = atomicCAS(parent + high, high, low);
        if (old == high || old >= n) {
            break;  // hooked (or corrupted)
        }
        // `high` was hooked elsewhere meanwhile: climb on from its parent.
        r1 = find(old, parent, n);
        r2 = low;
    }
}

// Unites the trees of u and v: finds both roots (halving the paths) and hooks them
// (hook_roots). The callers pass u, v < n. Most edges of a dense graph join vertices that
// already point at one root, and most of a sparse one's one end at the other after
// cc_link_first or cc_first_parents: those end after two loads, without loading the (hot)
// root's entry.
__device__ __forceinline__ void link(u32 u, u32 v, u32* parent, u32 n) {
    const u32 pu = load_parent(parent, u);
    const u32 pv = read_ancestor(parent, v);
    if (pu == pv || pu == v || pv == u) {
        return;
    }
    hook_roots(find_from(u, pu, parent, n), find_from(v, pv, parent, n), parent, n);
}

constexpr u32 FULL_WARP = 0xFFFFFFFFu;
constexpr u32 NO_VERTEX = 0xFFFFFFFFu;  // never a vertex: every vertex is < n <= 2^32 - 1

// The warp's memory of one vertex u and an ancestor of it (u itself, or a vertex on its path
// to the root), carried from one step of the warp hook to the next: consecutive edges of a
// CSR-ordered list share u, and reusing the ancestor saves loading (hot) parent[u] again.
// An ancestor stays an ancestor forever (trees only grow at their roots), so a remembered one
// is never wrong, only possibly stale (not the root any more): the hook climbs from it.
// Warp-uniform: every lane holds the same values.
struct AncestorCache {
    u32 u;
    u32 ancestor;
};

// One step of the warp-cooperative hook: the 32 lanes of a warp, converged, each with one edge
// (u, v) (`has_u`: u is a vertex; `valid`: the edge is to be hooked, u != v, both < n).
//
// 1. Lanes whose u equals the lower neighbour's form a group (a run of equal u: a CSR-ordered
//    chunk gives runs of up to 32 lanes; an unsorted one runs of one, which is the plain hook).
//    The group's leader loads parent[u] (or takes it from the cache) and broadcasts it: pu.
// 2. Every lane loads parent[v]; pv == pu, pv == u or pu == v ends the edge (one tree), as in
//    link().
// 3. If some lane of the group goes on, the leader finds u's root once (anc) and broadcasts
//    it; each such lane finds v's root (rv), unless pv == anc.
// 4. Lanes that would unite the same pair (anc, rv) are redundant: the lowest does it alone.
// 5. Lanes that must hook anc under a smaller rv would all CAS parent[anc] (the hot entry of
//    a hub): the lanes sharing anc instead elect one, which CASes anc under the smallest of
//    their rv; each lane then unites rv with anc's new parent (that rv, or whatever another
//    thread hooked anc under: an ancestor of u either way), via hook_roots.
// 6. Lanes with rv > anc hook rv under anc (distinct entries) via hook_roots.
// Every lane that leaves early has its trees joined by itself or by a lane doing the same
// union, so the kernel ends with every edge's endpoints in one tree, as the plain hook.
__device__ __forceinline__ void warp_link(u32 u, u32 v, bool has_u, bool valid,
                                          AncestorCache& cache, u32* parent, u32 n) {
    const u32 lane = threadIdx.x & 31u;
    const u32 key = has_u ? u : NO_VERTEX;
    const u32 lower_key = __shfl_up_sync(FULL_WARP, key, 1);
    const u32 heads = __ballot_sync(FULL_WARP, lane == 0 || lower_key != key);
    const u32 up_to_me = FULL_WARP >> (31u - lane);
    const u32 leader = 31u - __clz(heads & up_to_me);
    const u32 heads_above = heads & ~up_to_me;
    const u32 group_end = heads_above != 0 ? __ffs(heads_above) - 1u : 32u;
    const u32 group =
        (group_end == 32u ? FULL_WARP : (1u << group_end) - 1u) & ~((1u << leader) - 1u);
    const bool cached = has_u && key == cache.u;

    u32 pu = NO_VERTEX;
    if (lane == leader && has_u) {
        pu = cached ? cache.ancestor : load_parent(parent, u);
    }
    pu = __shfl_sync(FULL_WARP, pu, leader);
    u32 pv = NO_VERTEX;
    bool need = false;
    if (valid) {
        pv = read_ancestor(parent, v);
        // One end an ancestor of the other (as cc_first_parents leaves most edges): one tree.
        need = pv != pu && pv != u && pu != v;
    }
    u32 anc = pu;  // an ancestor of u, known to the whole group
    const u32 needs = __ballot_sync(FULL_WARP, need);
    if (needs != 0) {  // warp-uniform
        if (lane == leader && (needs & group) != 0 && !cached) {
            anc = find_from(u, pu, parent, n);
        }
        anc = __shfl_sync(FULL_WARP, anc, leader);
        u32 rv = NO_VERTEX;
        if (need) {
            rv = pv == anc ? anc : find_from(v, pv, parent, n);
            need = rv != anc && rv < n && anc < n;
        }
        const u64 pair = need ? (static_cast<u64>(anc) << 32) | rv : ~0ull;
        const u32 same_pair = __match_any_sync(FULL_WARP, pair);
        need = need && __ffs(same_pair) - 1u == lane;
        const bool under = need && rv < anc;
        u32 from = anc;  // the ancestor of u that this lane unites rv with
        if (__ballot_sync(FULL_WARP, under) != 0) {  // warp-uniform
            const u32 peers = __match_any_sync(FULL_WARP, under ? anc : NO_VERTEX);
            const u32 lowest = __reduce_min_sync(peers, under ? rv : NO_VERTEX);
            const u32 elected = __ffs(peers) - 1u;
            u32 next = NO_VERTEX;
            if (under && lane == elected) {
                const u32 old = atomicCAS(parent + anc, anc, lowest);
                next = old == anc ? lowest : old;
            }
            next = __shfl_sync(FULL_WARP, next, elected);
            if (under) {
                from = next;
            }
            // The group remembers the smallest ancestor of u it learnt.
            anc = __reduce_min_sync(group, under ? next : anc);
        }
        if (need) {
            hook_roots(from, rv, parent, n);
        }
    }
    cache.u = __shfl_sync(FULL_WARP, key, 31);
    cache.ancestor = __shfl_sync(FULL_WARP, anc, 31);
}

__device__ __forceinline__ u64 grid_stride() {
    return static_cast<u64>(gridDim.x) * blockDim.x;
}

__device__ __forceinline__ u64 global_thread() {
    return static_cast<u64>(blockIdx.x) * blockDim.x + threadIdx.x;
}

// Adds the lanes' counts to *total with one atomic per warp. Every lane of the warp calls it.
__device__ __forceinline__ void add_per_warp(u64* total, u64 mine) {
    for (u32 offset = 16; offset > 0; offset >>= 1) {
        mine += __shfl_down_sync(FULL_WARP, mine, offset);
    }
    if ((threadIdx.x & 31u) == 0 && mine != 0) {
        atomicAdd(total, mine);
    }
}

// The root of the anchor's tree as this thread sees it (NO_VERTEX where there is no anchor).
// After the compress that follows sampling (the device's rows and the anchor),
// parent[anchor] is that root: one load, the same word for every lane.
__device__ __forceinline__ u32 anchor_root(const CcLink& p) {
    return p.anchor < p.n ? find(p.anchor, p.parent, p.n) : NO_VERTEX;
}

// Whether u is in the tree of `root` (an anchor_root). A yes is final: a vertex never leaves a
// tree, and `root`, once a member, stays one even if it is hooked under another root later. A
// no may be stale, which only costs linking arcs that join nothing.
__device__ __forceinline__ bool in_anchor_tree(u32 u, u32 root, const CcLink& p) {
    if (root == NO_VERTEX) {
        return false;
    }
    const u32 pu = load_parent(p.parent, u);
    return pu == root || (pu != u && find_from(u, pu, p.parent, p.n) == root);
}

// Whether the arc `arc` of row u (whose first arc is `row`), to v, is one the passes after
// cc_link_first leave out: a loop, a head out of range, the row's arc 0 to a lower head (which
// cc_link_first made u's parent), the arcs after arc 0 among the first p.sampled (the sampling
// round linked them; a rest pass that starts at arc 0, first_rest_arc, reaches them) and, with
// p.lower_only, an arc to a higher head (a symmetric graph links it from the head's row, as
// the reverse arc).
__device__ __forceinline__ bool leaves_out(u32 u, u64 arc, u64 row, u32 v, const CcLink& p) {
    return v >= p.n || v == u || (v < u && arc == row) || (arc > row && arc < row + p.sampled) ||
           (p.lower_only != 0 && v > u);
}

// The first arc of row u (arcs [row, end)) that cc_link_rest and cc_link_tiles link: the one
// after the first p.sampled arcs, but arc 0 itself where its head is above u (the sampling
// round links arc 1 only, and cc_link_first only arcs 0 to lower heads); leaves_out skips the
// arcs of such a row that the sampling round linked.
__device__ __forceinline__ u64 first_rest_arc(u32 u, u64 row, u64 end, const CcLink& p) {
    return p.sampled != 0 && end > row && p.targets[row] > u ? row : row + p.sampled;
}

// Links u with the heads of its arcs [begin, end), the whole warp together (warp_link, whose
// lanes all share u; `row` is the row's first arc), but for the arcs a pass leaves out;
// returns the arcs this lane linked. Warp-uniform arguments; u < n.
__device__ __forceinline__ u64 link_row_by_warp(u32 u, u64 row, u64 begin, u64 end,
                                                const CcLink& p) {
    const u32 lane = threadIdx.x & 31u;
    AncestorCache cache{NO_VERTEX, NO_VERTEX};
    u64 linked = 0;
    for (u64 base = begin; base < end; base += 32) {
        const u64 arc = base + lane;
        const bool in_row = arc < end;
        const u32 v = in_row ? p.targets[arc] : NO_VERTEX;
        const bool valid = in_row && !leaves_out(u, arc, row, v, p);
        linked += valid ? 1 : 0;
        warp_link(u, v, true, valid, cache, p.parent, p.n);
    }
    return linked;
}

}  // namespace

// parent[v] = v for v < n.
extern "C" __global__ void cc_init(u32* __restrict__ parent, u32 n) {
    for (u64 v = global_thread(); v < n; v += grid_stride()) {
        parent[v] = static_cast<u32>(v);
    }
}

// Hooks every edge of `edges[0..m]` (pairs (u, v), 8-byte aligned) into `parent[0..n]`;
// edges with an endpoint >= n are skipped. Warp-cooperative (warp_link), for CSR-ordered edge
// lists: the lanes of a warp whose edges share u find u's root once. Grid-stride over steps of 32 edges
// (warp i takes edges 32 i.. of every stride). Blocks of a multiple of 32 threads.
extern "C" __global__ void cc_hook_edges_warp(const uint2* __restrict__ edges, u64 m, u32* parent,
                                              u32 n) {
    const u32 lane = threadIdx.x & 31u;
    AncestorCache cache{NO_VERTEX, NO_VERTEX};
    for (u64 base = global_thread() - lane; base < m; base += grid_stride()) {
        const u64 i = base + lane;
        const uint2 e = i < m ? edges[i] : make_uint2(NO_VERTEX, NO_VERTEX);
        const bool has_u = e.x < n;
        warp_link(e.x, e.y, has_u, has_u && e.y < n && e.x != e.y, cache, parent, n);
    }
}

// For every edge of `edges[0..m]` whose higher end is still a root, makes the lower end its
// parent with a plain store (ECL-CC's initialisation, Jaiganesh and Burtscher 2018, over an
// edge list): no find, no atomic. Every store writes a lower id than the vertex's own, so the
// invariant holds and no cycle forms (pointers only go down). Edges sharing a root race: each
// thread saw it a root, and the last store wins, replacing the others' links; those edges, as
// every edge of the chunk, are hooked by cc_hook_edges_warp right after, which then finds most
// of them joined at once (one end the other's parent). No other kernel may run beside it: no
// find relies on its stores keeping ancestors.
extern "C" __global__ void cc_first_parents(const uint2* __restrict__ edges, u64 m, u32* parent,
                                            u32 n) {
    for (u64 i = global_thread(); i < m; i += grid_stride()) {
        const uint2 e = edges[i];
        const u32 high = e.x > e.y ? e.x : e.y;
        const u32 low = e.x + e.y - high;
        if (high < n && low != high && load_parent(parent, high) == high) {
            store_parent(parent, high, low);
        }
    }
}

// Pointer jumping to the root: afterwards parent[v] is the root of v's tree for every v in
// first..end (clamped to n; the whole array: 0..n). Concurrent threads only ever write
// ancestors, so the trees never change shape, only depth, and no root changes during a
// compress: a climb through stale L1 reads (read_ancestor) still ends at the root.
extern "C" __global__ void cc_compress(u32* parent, u32 first, u32 end, u32 n) {
    const u32 stop = end < n ? end : n;
    for (u64 i = static_cast<u64>(first) + global_thread(); i < stop; i += grid_stride()) {
        const u32 v = static_cast<u32>(i);
        u32 p = load_parent(parent, v);
        if (p == v || p >= n) {
            continue;
        }
        u32 pp = p == 0 ? 0 : read_ancestor(parent, p);  // 0 is always a root
        if (pp == p) {
            continue;  // already points at a root
        }
        // No path halving here: another thread's halving store, landing after this thread's
        // final one, would leave v pointing at an ancestor short of the root.
        while (p != pp && pp < n) {
            p = pp;
            pp = read_ancestor(parent, p);
        }
        parent[v] = p;
    }
}

// Merges another device's parent entries (a forest, compressed or not) into `parent[0..n]`:
// entry k of `other` is the parent of vertex `offset + k` there, i.e. an edge
// (offset + k, other[k]) to hook here. Entries out of range are skipped.
extern "C" __global__ void cc_merge(const u32* __restrict__ other, u32 offset, u32 count,
                                    u32* parent, u32 n) {
    for (u64 k = global_thread(); k < count; k += grid_stride()) {
        const u64 v = static_cast<u64>(offset) + k;
        const u32 p = other[k];
        if (v < n && p < n && p != v) {
            link(static_cast<u32>(v), p, parent, n);
        }
    }
}

// Takes the (compressed) parent entries of vertices start.. start + count into `slice`, and
// sets *changed to 1 when any differs from what `slice` held (a process's share of the
// labels it gathers to the others, and whether it moved since the last gather). Entries
// beyond n are left as they are.
extern "C" __global__ void cc_take_slice(const u32* __restrict__ parent, u32 start, u32 count,
                                         u32* __restrict__ slice, u32* changed, u32 n) {
    bool moved = false;
    for (u64 k = global_thread(); k < count; k += grid_stride()) {
        const u64 v = static_cast<u64>(start) + k;
        if (v >= n) {
            break;
        }
        const u32 p = parent[v];
        if (slice[k] != p) {
            slice[k] = p;
            moved = true;
        }
    }
    if (moved) {
        *changed = 1;
    }
}

// Each row's arc 0, where its head is below the row, made the row's parent with a plain store
// (ECL-CC's initialisation, Jaiganesh and Burtscher 2018): no find, no atomic. It keeps the
// invariant (parent[u] = v < u) and builds a forest whose every tree is connected; the passes
// after it skip these arcs (leaves_out). The parent array holds cc_init's identity before, and
// no other kernel runs beside it.
extern "C" __global__ void cc_link_first(CcLink p) {
    const u32 rows = p.end_row - p.first_row;
    u64 linked = 0;
    for (u64 i = global_thread(); i < rows; i += grid_stride()) {
        const u32 u = p.first_row + static_cast<u32>(i);
        const u64 arc = p.offsets[u];
        if (arc < p.offsets[u + 1]) {
            const u32 v = p.targets[arc];
            if (v < u) {
                p.parent[u] = v;
                ++linked;
            }
        }
    }
    add_per_warp(p.linked, linked);
}

// Afforest's sampling (Sutton, Ben-Nun and Barak, IPDPS 2018), over one device's rows: links
// every row's arc number `p.round` (rows with fewer arcs: nothing; arcs cc_link_first linked:
// nothing). Run for arc 1 after cc_link_first, then a compress, it joins most of a graph's
// vertices into a few trees while reading only a few arcs per vertex (a round over arc 0, as
// Afforest has, would spend most of its time on the rows whose arc 0 goes up, which
// cc_link_rest links with the rest of their row if they are still outside the anchor's tree).
// The lanes of a warp link their rows' arcs together (warp_link): lanes that would hook the
// same pair of trees, or the same root (every row sampling one hub), elect one.
extern "C" __global__ void cc_link_sampled(CcLink p) {
    const u32 lane = threadIdx.x & 31u;
    const u32 rows = p.end_row - p.first_row;
    u64 linked = 0;
    AncestorCache cache{NO_VERTEX, NO_VERTEX};
    for (u64 base = global_thread() - lane; base < rows; base += grid_stride()) {
        const u64 i = base + lane;
        const bool has_u = i < rows;
        const u32 u = has_u ? p.first_row + static_cast<u32>(i) : NO_VERTEX;
        u32 v = NO_VERTEX;
        bool valid = false;
        if (has_u) {
            const u64 row = p.offsets[u];
            const u64 arc = row + p.round;
            if (arc < p.offsets[u + 1]) {
                v = p.targets[arc];
                valid = !leaves_out(u, arc, row, v, p);
                linked += valid ? 1 : 0;
            }
        }
        warp_link(u, v, has_u, valid, cache, p.parent, p.n);
    }
    add_per_warp(p.linked, linked);
}

// The arcs of every row from first_rest_arc (but those a pass leaves out: leaves_out),
// except the rows in the anchor's tree (skipped: on a symmetric graph, every arc from such a
// row to a vertex outside the tree is linked from the other end, whose row holds the reverse
// arc, unless that end is in the tree too) and the tiled rows (cc_link_tiles). A warp takes 32
// consecutive rows: rows of 32 arcs or more one at a time with every lane (warp_link), the
// shorter ones lane by lane.
extern "C" __global__ void cc_link_rest(CcLink p) {
    const u32 lane = threadIdx.x & 31u;
    const u32 root = anchor_root(p);
    const u32 rows = p.end_row - p.first_row;
    u64 linked = 0;
    for (u64 base = global_thread() - lane; base < rows; base += grid_stride()) {
        const u64 i = base + lane;
        u32 u = NO_VERTEX;
        u64 row = 0;
        u64 begin = 0;
        u64 end = 0;
        if (i < rows) {
            u = p.first_row + static_cast<u32>(i);
            row = p.offsets[u];
            end = p.offsets[u + 1];
            begin = first_rest_arc(u, row, end, p);
            const bool tiled = p.tile_arcs != 0 && end - row >= p.tile_arcs;
            if (begin >= end || tiled || in_anchor_tree(u, root, p)) {
                begin = end;
            }
        }
        u32 wide = __ballot_sync(FULL_WARP, end - begin >= 32);
        while (wide != 0) {
            const u32 owner = __ffs(wide) - 1u;
            wide &= wide - 1u;
            const u32 wu = __shfl_sync(FULL_WARP, u, owner);
            const u64 wr = __shfl_sync(FULL_WARP, row, owner);
            const u64 wb = __shfl_sync(FULL_WARP, begin, owner);
            const u64 we = __shfl_sync(FULL_WARP, end, owner);
            linked += link_row_by_warp(wu, wr, wb, we, p);
        }
        if (end - begin < 32) {
            for (u64 arc = begin; arc < end; ++arc) {
                const u32 v = p.targets[arc];
                if (!leaves_out(u, arc, row, v, p)) {
                    link(u, v, p.parent, p.n);
                    ++linked;
                }
            }
        }
    }
    add_per_warp(p.linked, linked);
}

// The tiled rows (rows of at least p.tile_arcs arcs, hubs): one warp per tile, so a hub's arcs
// spread over the whole grid; a tile's arcs before first_rest_arc are left out, as are the arcs
// leaves_out names, and tiles of rows in the anchor's tree are skipped, as in cc_link_rest.
// Tiles naming a row outside the device's are skipped.
extern "C" __global__ void cc_link_tiles(CcLink p) {
    const u32 lane = threadIdx.x & 31u;
    const u32 root = anchor_root(p);
    const u64 warps = grid_stride() / 32u;
    u64 linked = 0;
    for (u64 t = global_thread() / 32u; t < p.tile_count; t += warps) {
        const u32 u = p.tile_row[t];
        if (u < p.first_row || u >= p.end_row) {
            continue;
        }
        const u64 row = p.offsets[u];
        const u64 row_end = p.offsets[u + 1];
        const u64 row_rest = first_rest_arc(u, row, row_end, p);
        const u64 tile = p.tile_begin[t];
        const u64 begin = tile > row_rest ? tile : row_rest;
        const u64 end = tile + p.tile_arcs < row_end ? tile + p.tile_arcs : row_end;
        // Lane 0 decides for the warp: the parent array changes under other warps, and
        // link_row_by_warp needs every lane (a lane reading a newer entry must not leave).
        const bool skip = begin >= end || (lane == 0 && in_anchor_tree(u, root, p));
        if (__shfl_sync(FULL_WARP, skip, 0)) {
            continue;
        }
        linked += link_row_by_warp(u, row, begin, end, p);
    }
    add_per_warp(p.linked, linked);
}
