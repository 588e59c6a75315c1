#!/bin/sh
# Fetches larger real graphs from package registries and converts them to groute's cache (.grc).
#
#   datasets/fetch.sh [OUTDIR]        (default: datasets/fetched, ignored by git)
#
# Sources (each pinned by version and SHA-256):
#   - Debian bookworm `libmetis-doc` 5.1.0.dfsg-7 (Apache-2.0): copter2.graph (55,476 vertices,
#     704,476 arcs) and mdual.graph (258,569 vertices, 1,026,264 arcs), 3D finite-element meshes.
# Needs: apt-get (any Debian/Ubuntu), dpkg-deb, sha256sum, cargo.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-"$here/fetched"}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

deb=libmetis-doc_5.1.0.dfsg-7_all.deb
deb_sha=1a1ec91160520e1fa16f82fa62e195811b5afc6521a17b3e6ebad9e560c45c5c
(cd "$work" && apt-get download libmetis-doc=5.1.0.dfsg-7)
echo "$deb_sha  $work/$deb" | sha256sum -c -
dpkg-deb -x "$work/$deb" "$work/x"
for g in copter2 mdual; do
    cp "$work/x/usr/share/doc/libmetis-dev/examples/graphs/$g.graph" "$out/$g.graph"
done
(cd "$out" && sha256sum -c - <<'SUMS'
e073b74b349eac2887e4b963cf21a89f4bcd6d2860265ef1c049101cf72fa778  copter2.graph
fed97c608a1611ae1a4604620913e32c16ecd815550df1c1819fe492986c27b0  mdual.graph
SUMS
)

# Convert to the memory-mapped cache: later loads cost no parsing.
cd "$here/.."
for g in copter2 mdual; do
    cargo run --release --quiet --example graphinfo -- --graph "$out/$g.graph" --write "$out/$g.grc"
done
echo "fetched into $out"
