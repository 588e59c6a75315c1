//! Whether this process was started by an MPI launcher, read from the launcher's environment.

/// The rank and size an MPI launcher (`mpirun`/`mpiexec` of Open MPI, MPICH's Hydra and
/// Intel MPI, MVAPICH) gave this process, from its environment; `None` when no launcher
/// started it. Read before MPI is initialised, so a program can tell whether to initialise it.
/// Slurm's own variables are not read: a batch script sets them for every command it runs.
pub fn launched_rank() -> Option<(usize, usize)> {
    const PAIRS: [(&str, &str); 3] = [
        ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
        ("PMI_RANK", "PMI_SIZE"),
        ("MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE"),
    ];
    PAIRS.iter().find_map(|(rank, size)| {
        let rank = std::env::var(rank).ok()?.parse().ok()?;
        let size = std::env::var(size).ok()?.parse().ok()?;
        (rank < size).then_some((rank, size))
    })
}

/// This process's rank among the launcher's processes on its node (Open MPI's
/// `OMPI_COMM_WORLD_LOCAL_RANK`, MPICH's `MPI_LOCALRANKID`, MVAPICH's
/// `MV2_COMM_WORLD_LOCAL_RANK`); `None` when no launcher says. Ranks of one node start their
/// devices at different GPUs with it
/// ([`ContextBuilder::first_physical_device`](groute_core::ContextBuilder::first_physical_device)).
pub fn launched_local_rank() -> Option<usize> {
    const NAMES: [&str; 3] = [
        "OMPI_COMM_WORLD_LOCAL_RANK",
        "MPI_LOCALRANKID",
        "MV2_COMM_WORLD_LOCAL_RANK",
    ];
    NAMES
        .iter()
        .find_map(|name| std::env::var(name).ok()?.parse().ok())
}
