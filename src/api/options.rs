//! The choices a run takes: [`Backend`], [`Execution`], [`Partition`], gathered by [`Runner`].

use std::time::Duration;

use groute_core::{BackendChoice, BackendKind, DEFAULT_STALL_TIMEOUT, FaultPlan};
use groute_graph::PartitionMethod;
use serde::{Deserialize, Serialize};

use super::tuning::Tuning;

/// Where a run computes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Backend {
    /// CUDA when a GPU is usable, else the host backend; the run's
    /// [`RunStats::backend_note`](crate::RunStats::backend_note) says why it fell back.
    #[default]
    Auto,
    /// The host backend: an executor thread per (virtual) device, kernels on rayon. Always
    /// available.
    Host,
    /// NVIDIA GPUs through CUDA; an error where no GPU or driver is usable.
    Cuda,
}

groute_core::choice_names! {
    /// The name used by the examples' `--backend` flag (`auto`, `host`, `cuda`).
    Backend, "backend" {
        Auto => "auto",
        Host => "host",
        Cuda => "cuda",
    }
}

impl Backend {
    pub(crate) fn choice(self) -> BackendChoice {
        match self {
            Backend::Auto => BackendChoice::Auto,
            Backend::Host => BackendChoice::Host,
            Backend::Cuda => BackendChoice::Cuda,
        }
    }

    pub(crate) fn of_kind(kind: BackendKind) -> Backend {
        match kind {
            BackendKind::Host => Backend::Host,
            BackendKind::Cuda => Backend::Cuda,
            // A backend this facade does not name yet.
            _ => Backend::Auto,
        }
    }
}

/// Who drives a run's rounds.
///
/// | | BFS, SSSP | PageRank | CC |
/// |---|---|---|---|
/// | `HostDriven` | one kernel launch per round, the host moving updates between devices (direction-optimizing BFS: a host thread per device) | the host launches every round | the host streams edge chunks through the scatter router (hook and compress) |
/// | `DeviceDriven` | one persistent kernel per device for the whole run, the devices exchanging over their peer links and detecting termination themselves | one persistent kernel per device | label propagation, one persistent kernel per device (as many rounds as the components' diameter) |
/// | `Auto` | each algorithm's default: device-driven on one GPU, and on several where the GPUs reach each other and the graph suits it | device-driven where few arcs are cut, but synchronous sweeps (host-driven) on one GPU holding a dense graph in degree order whose shares fit its L2 or that has at least 2^26 arcs (by vertex ranges), and host-driven rounds on one holding another dense graph whose shares outgrow it | host-driven |
///
/// On the host backend `Auto` and `HostDriven` run host-driven rounds, and `DeviceDriven`
/// runs the device-driven protocol on persistent host members (a thread per device). What ran
/// is in [`RunStats::execution`](crate::RunStats::execution). The algorithms' own switches
/// for a choice: [`Execution::fused_mode`], [`Execution::multi_driver`],
/// [`Execution::pagerank_driver`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Execution {
    /// Decided from the graph, the backend and the devices (the table above).
    #[default]
    Auto,
    /// The host launches the kernels and moves the data between rounds.
    HostDriven,
    /// Persistent kernels on the devices run the whole computation (CUDA only).
    DeviceDriven,
}

groute_core::choice_names! {
    /// `auto`, `host-driven` or `device-driven` (the examples' `--execution` flag).
    Execution, "execution" {
        Auto => "auto",
        HostDriven => "host-driven",
        DeviceDriven => "device-driven",
    }
}

/// How vertices are split between devices.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Partition {
    /// METIS up to [`AUTO_METIS_MAX_ARCS`](crate::graph::AUTO_METIS_MAX_ARCS) arcs, contiguous
    /// blocks above (METIS would take a minute or more).
    #[default]
    Auto,
    /// METIS k-way (minimal edge cut); a directed graph falls back to blocks, and the run's
    /// [`RunStats::partition_note`](crate::RunStats::partition_note) says so.
    Metis,
    /// Contiguous blocks of the input order balancing vertices and arcs.
    Block,
}

groute_core::choice_names! {
    /// `auto`, `metis` or `block`.
    Partition, "partition" {
        Auto => "auto",
        Metis => "metis",
        Block => "block",
    }
}

impl Partition {
    pub(crate) fn method(self) -> PartitionMethod {
        match self {
            Partition::Auto => PartitionMethod::Auto,
            Partition::Metis => PartitionMethod::Metis,
            Partition::Block => PartitionMethod::Block,
        }
    }

    pub(crate) fn of_method(method: PartitionMethod) -> Partition {
        match method {
            PartitionMethod::Metis => Partition::Metis,
            PartitionMethod::Block => Partition::Block,
            PartitionMethod::Auto => Partition::Auto,
        }
    }
}

/// How to run an algorithm: devices, backend, execution and partition. Build one, then call
/// [`bfs`](Runner::bfs), [`sssp`](Runner::sssp), [`pagerank`](Runner::pagerank) or
/// [`cc`](Runner::cc) on it (and their `_async` forms); [`Runner::new`] holds the defaults
/// that [`groute::bfs`](crate::bfs()) and the other free functions use.
///
/// ```
/// use groute::{Backend, Execution, Graph, Partition, Runner};
///
/// let graph = Graph::generate("kron:scale=9,ef=8,sym")?;
/// let run = Runner::new()
///     .devices(2)
///     .backend(Backend::Host)
///     .execution(Execution::Auto)
///     .partition(Partition::Block)
///     .bfs(&graph, 0)?;
/// assert_eq!(run.stats.devices, 2);
/// assert_eq!(run.stats.backend, Backend::Host);
/// assert_eq!(run.stats.execution, Execution::HostDriven);
/// assert_eq!(run.levels, groute::bfs::bfs_reference(&graph.as_graph().csr, 0));
/// # Ok::<(), groute::Error>(())
/// ```
///
/// A run builds its context and partition, uploads the graph, computes and downloads the
/// result: what a program that runs once wants. To time many runs over one uploaded graph,
/// use the algorithm crates' solvers ([`crate::bfs::BfsSolver`] and the others).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Runner {
    pub(crate) devices: usize,
    pub(crate) backend: Backend,
    pub(crate) execution: Execution,
    pub(crate) partition: Partition,
    pub(crate) jitter: Option<u64>,
    pub(crate) stall_timeout: Option<Duration>,
    pub(crate) device_memory_limit: Option<u64>,
    #[serde(skip)]
    pub(crate) faults: FaultPlan,
    #[serde(skip)]
    pub(crate) tuning: Tuning,
}

impl Default for Runner {
    fn default() -> Self {
        Runner::new()
    }
}

impl Runner {
    /// One device, [`Backend::Auto`], [`Execution::Auto`], [`Partition::Auto`].
    pub fn new() -> Runner {
        Runner {
            devices: 1,
            backend: Backend::Auto,
            execution: Execution::Auto,
            partition: Partition::Auto,
            jitter: None,
            stall_timeout: Some(DEFAULT_STALL_TIMEOUT),
            device_memory_limit: None,
            faults: FaultPlan::new(),
            tuning: Tuning::default(),
        }
    }

    /// Runs on `devices` (virtual) devices; they map round-robin onto the GPUs present, or
    /// onto executor threads on the host backend. Zero, or more than
    /// [`groute_core::MAX_DEVICES`] (256), is an error when the run starts.
    pub fn devices(mut self, devices: usize) -> Runner {
        self.devices = devices;
        self
    }

    /// Where to compute.
    pub fn backend(mut self, backend: Backend) -> Runner {
        self.backend = backend;
        self
    }

    /// Who drives the rounds.
    pub fn execution(mut self, execution: Execution) -> Runner {
        self.execution = execution;
        self
    }

    /// How vertices are split between devices.
    pub fn partition(mut self, partition: Partition) -> Runner {
        self.partition = partition;
        self
    }

    /// Host backend only: reorders and delays the executors' work with this seed, to test
    /// that results do not depend on the schedule (`None`: no jitter, the default).
    pub fn jitter(mut self, seed: Option<u64>) -> Runner {
        self.jitter = seed;
        self
    }

    /// How long a wait may see no progress before the run fails (default
    /// [`DEFAULT_STALL_TIMEOUT`], 60 s; `None`: wait forever;
    /// [`groute_core::ContextBuilder::stall_timeout`]). On the host backend a device that
    /// makes no progress fails with [`groute_core::Error::DeviceStalled`] naming it, and a
    /// device that fails (a kernel panics) ends the run at once with
    /// [`groute_core::Error::DeviceFailed`]; on CUDA it bounds how long a device-driven member
    /// waits for its peers at one exchange.
    pub fn stall_timeout(mut self, timeout: Option<Duration>) -> Runner {
        self.stall_timeout = timeout;
        self
    }

    /// The most device memory each (virtual) device may hold, in bytes (`None`: what the
    /// device has, the default). An allocation past it fails the run with
    /// [`groute_core::Error::DeviceMemoryLimit`] ([`Error::is_device_memory_exhausted`]
    /// says so); [`RunStats::memory`] says what each device held. With a limit, a single GPU
    /// split into several devices shows whether a graph too large for one device of that size
    /// runs on several.
    ///
    /// [`Error::is_device_memory_exhausted`]: crate::Error::is_device_memory_exhausted
    /// [`RunStats::memory`]: crate::RunStats::memory
    pub fn device_memory_limit(mut self, bytes: Option<u64>) -> Runner {
        self.device_memory_limit = bytes;
        self
    }

    /// Host backend only: faults to inject (tests of failure handling).
    #[doc(hidden)]
    pub fn faults(mut self, faults: FaultPlan) -> Runner {
        self.faults = faults;
        self
    }

    /// How the algorithms' GPU forms run ([`Tuning`]: benchmarks and experiments; the default
    /// is what `Auto` picks). Not serialized: a runner read back has the default.
    #[doc(hidden)]
    pub fn tuning(mut self, tuning: Tuning) -> Runner {
        self.tuning = tuning;
        self
    }

    /// The tuning asked for ([`Runner::tuning`]).
    #[doc(hidden)]
    pub fn tuning_choice(&self) -> &Tuning {
        &self.tuning
    }

    /// The device count asked for.
    pub fn device_count(&self) -> usize {
        self.devices
    }

    /// The backend asked for.
    pub fn backend_choice(&self) -> Backend {
        self.backend
    }

    /// The execution asked for.
    pub fn execution_choice(&self) -> Execution {
        self.execution
    }

    /// The partition asked for.
    pub fn partition_choice(&self) -> Partition {
        self.partition
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices_parse_their_names_and_reject_others_naming_the_alternatives() {
        for b in [Backend::Auto, Backend::Host, Backend::Cuda] {
            assert_eq!(b.name().parse::<Backend>(), Ok(b));
        }
        for e in [
            Execution::Auto,
            Execution::HostDriven,
            Execution::DeviceDriven,
        ] {
            assert_eq!(e.to_string().to_uppercase().parse::<Execution>(), Ok(e));
        }
        assert_eq!("METIS".parse::<Partition>(), Ok(Partition::Metis));
        let err = "fast".parse::<Execution>().unwrap_err().to_string();
        assert!(
            err.contains("\"fast\"") && err.contains("auto, host-driven, device-driven"),
            "{err}"
        );
    }
}
