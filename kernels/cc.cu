// Connected components: find with path shortening, hook (high-to-low root, atomic) and
// pointer-jumping compress over a parent array, as used by groute-cc
// (crates/groute-cc/src/cuda.rs holds the typed launch wrappers).
//
// Invariant of the parent array: parent[v] <= v for every v, and a vertex is a root when
// parent[v] == v. Hooking only ever points a root at a smaller vertex, and compressing (as do
// the path-shortening stores of a find) only points a vertex at one of its ancestors, so the
// root of every tree is the smallest vertex of the tree, and once the components are single
// trees, the fully compressed array labels every vertex with the minimum vertex id of its
// component.
//
// Every read of the parent array that may race with a hook of another thread is a volatile
// (L2) load: the L1 is not coherent across multiprocessors. Kernels of one stream never
// overlap, so a compress never races with a hook.
//
// Launch: 1-D blocks, any grid; every kernel is a grid-stride loop.

typedef unsigned int u32;
typedef unsigned long long u64;

namespace {

__device__ __forceinline__ u32 load_parent(const u32* parent, u32 v) {
    return *reinterpret_cast<const volatile u32*>(parent + v);
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
    while ((next = load_parent(parent, cur)) < cur) {
        store_parent(parent, prev, next);
        prev = cur;
        cur = next;
    }
    return cur;
}

__device__ __forceinline__ u32 find(u32 x, u32* parent, u32 n) {
    return find_from(x, load_parent(parent, x), parent, n);
}

// Unites the trees of u and v: finds both roots (halving the paths) and hooks the higher root
// under the lower one with a CAS; when the CAS loses (another thread hooked that root first),
// climbs on from the root's new parent. Every index is checked against n, so a corrupted array
// stops the climb instead of reading out of bounds (the callers pass u, v < n). Most edges of
// a dense graph join vertices that already point at one root: those end after two loads,
// without loading the (hot) root's entry.
__device__ __forceinline__ void link(u32 u, u32 v, u32* parent, u32 n) {
    const u32 pu = load_parent(parent, u);
    const u32 pv = load_parent(parent, v);
    if (pu == pv) {
        return;
    }
    u32 r1 = find_from(u, pu, parent, n);
    u32 r2 = find_from(v, pv, parent, n);
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

__device__ __forceinline__ u64 grid_stride() {
    return static_cast<u64>(gridDim.x) * blockDim.x;
}

__device__ __forceinline__ u64 global_thread() {
    return static_cast<u64>(blockIdx.x) * blockDim.x + threadIdx.x;
}

}  // namespace

// parent[v] = v for v < n.
extern "C" __global__ void cc_init(u32* __restrict__ parent, u32 n) {
    for (u64 v = global_thread(); v < n; v += grid_stride()) {
        parent[v] = static_cast<u32>(v);
    }
}

// Hooks every edge of `edges[0..m]` (pairs (u, v), 8-byte aligned) into `parent[0..n]`;
// edges with an endpoint >= n are skipped.
extern "C" __global__ void cc_hook_edges(const uint2* __restrict__ edges, u64 m, u32* parent,
                                         u32 n) {
    for (u64 i = global_thread(); i < m; i += grid_stride()) {
        const uint2 e = edges[i];
        if (e.x != e.y && e.x < n && e.y < n) {
            link(e.x, e.y, parent, n);
        }
    }
}

// Pointer jumping to the root: afterwards parent[v] is the root of v's tree for every v < n.
// Concurrent threads only ever write ancestors, so the trees never change shape, only depth.
extern "C" __global__ void cc_compress(u32* parent, u32 n) {
    for (u64 i = global_thread(); i < n; i += grid_stride()) {
        const u32 v = static_cast<u32>(i);
        u32 p = load_parent(parent, v);
        if (p == v || p >= n) {
            continue;
        }
        u32 pp = load_parent(parent, p);
        if (pp == p) {
            continue;  // already points at a root
        }
        while (p != pp && pp < n) {
            p = pp;
            pp = load_parent(parent, p);
        }
        parent[v] = p;
    }
}

// Merges another device's (compressed) parent entries into `parent[0..n]`: entry k of `other`
// is the parent of vertex `offset + k` there, i.e. an edge (offset + k, other[k]) to hook here.
// Entries out of range are skipped.
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
