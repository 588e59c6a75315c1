#!/usr/bin/env bash
# The multi-process tests: groute-dist's MPI job under mpirun with 2, 3 and 4 ranks (host
# backend, jittered), then the examples under mpirun against one process. Needs Open MPI
# (`mpirun`) and the binaries built with `--features mpi`; `.ci/run` installs and builds.
set -euo pipefail
cd "$(dirname "$0")/.."
# CI runs as root on 2 cores.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
target="${CARGO_TARGET_DIR:-target}/debug"
job=$(cargo test -p groute-dist --features mpi --test mpi_ranks --locked --no-run --message-format=json 2>/dev/null |
  sed -n 's/.*"executable":"\([^"]*mpi_ranks[^"]*\)".*/\1/p' | tail -1)
for np in 2 3 4; do
  echo "--- mpirun -np $np mpi_ranks"
  timeout 600 mpirun -np "$np" "$job"
done
