//! [`DeviceParts`]: which consecutive parts of a partition one context's devices hold, checked
//! once where a solver is made and asked by each of its runs.

use std::ops::Range;

use groute_core::{Context, Error};
use groute_graph::{Csr, HeldRows, InArcs, Partition};

/// The parts of a partition that a context's devices hold: device `d` holds part
/// `parts().start + d`. Every part where one process runs the whole graph; some consecutive
/// parts where the solver is one process's share of a run spanning several
/// ([`ShareSolver::for_parts`](crate::ShareSolver::for_parts)).
#[derive(Clone)]
pub struct DeviceParts {
    context: Context,
    partition: Partition,
    parts: Range<usize>,
}

impl std::fmt::Debug for DeviceParts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceParts")
            .field("parts", &self.parts)
            .field("of", &self.partition.num_parts())
            .field("num_vertices", &self.num_vertices())
            .finish()
    }
}

impl DeviceParts {
    /// Checks that `partition` splits the vertices of the graph whose rows `rows` holds into
    /// parts of which `context`'s devices hold `first_part..first_part + context.num_devices()`,
    /// and that `rows` holds those parts' rows (what a
    /// [`ShareSolver::for_parts`](crate::ShareSolver::for_parts) checks first).
    pub fn check(
        context: &Context,
        rows: &HeldRows<'_>,
        partition: &Partition,
        first_part: usize,
    ) -> Result<Self, Error> {
        let n = rows.num_vertices();
        let parts = first_part..first_part.saturating_add(context.num_devices());
        if partition.num_vertices() != n || parts.end > partition.num_parts() || parts.is_empty() {
            return Err(Error::invalid(
                "partition",
                format!(
                    "{} parts over {} vertices, of which this process's {} devices would hold parts {parts:?}",
                    partition.num_parts(),
                    partition.num_vertices(),
                    context.num_devices()
                ),
                format!(
                    "partition the graph of {n} vertices into at least {} parts",
                    parts.end
                ),
            ));
        }
        let owned = partition.range_of_parts(parts.clone());
        if !rows.holds(&owned) {
            return Err(Error::invalid(
                "held rows",
                format!(
                    "rows {:?} of the graph, while this process's parts own vertices {owned:?}",
                    rows.held()
                ),
                "load (or pass) the rows of this process's parts",
            ));
        }
        Ok(DeviceParts {
            context: context.clone(),
            partition: partition.clone(),
            parts,
        })
    }

    /// [`DeviceParts::check`] for process `rank` of `ranks` (its devices hold parts
    /// `rank * devices..`) of a run spanning processes that holds one part per device of
    /// every process. Where the run needs the in-arcs of the held rows (`in_arcs_fix` given:
    /// it pulls over them, or hooks every arc at both ends), also those: `None` where the
    /// graph is symmetric (the rows' own arcs), its transpose where the process holds the
    /// whole of a directed graph; a process holding only its rows of a directed graph is an
    /// error naming `in_arcs_fix` (what the run needs and the ways out).
    pub fn check_process(
        context: &Context,
        (rows, partition): (&HeldRows<'_>, &Partition),
        (rank, ranks): (usize, usize),
        in_arcs_fix: Option<&str>,
    ) -> Result<(Self, Option<Csr>), Error> {
        let devices = context.num_devices();
        let parts = Self::check(context, rows, partition, rank * devices)?;
        if partition.num_parts() != ranks * devices {
            return Err(Error::invalid(
                "partition",
                format!("{} parts", partition.num_parts()),
                format!("one part per device of every process: {ranks} x {devices}"),
            ));
        }
        let Some(fix) = in_arcs_fix else {
            return Ok((parts, None));
        };
        let in_arcs = match rows.in_arcs() {
            InArcs::OwnRows => None,
            InArcs::Transpose(t) => Some(t),
            InArcs::Unavailable => {
                return Err(Error::invalid(
                    "graph",
                    "directed, with only this process's rows held",
                    fix,
                ));
            }
        };
        Ok((parts, in_arcs))
    }

    /// Every part of `partition` on `context`'s devices, device `d` holding part `d` (the
    /// caller has checked that there is one part per device).
    pub(crate) fn every_part(context: &Context, partition: &Partition) -> Self {
        DeviceParts {
            context: context.clone(),
            partition: partition.clone(),
            parts: 0..partition.num_parts(),
        }
    }

    /// The context whose devices hold the parts.
    pub fn context(&self) -> &Context {
        &self.context
    }

    /// The partition of the whole graph.
    pub fn partition(&self) -> &Partition {
        &self.partition
    }

    /// The parts the devices hold, device `d` part `parts().start + d`.
    pub fn parts(&self) -> Range<usize> {
        self.parts.clone()
    }

    /// The number of vertices of the whole graph.
    pub fn num_vertices(&self) -> usize {
        self.partition.num_vertices()
    }

    /// The vertices the held parts own, together.
    pub fn owned_vertices(&self) -> Range<u32> {
        self.partition.range_of_parts(self.parts.clone())
    }

    /// The vertices each device owns, in device order.
    pub fn owned_ranges(&self) -> impl Iterator<Item = Range<u32>> + '_ {
        self.parts.clone().map(|part| self.partition.range(part))
    }

    /// Checks that the devices hold every part, as a solver's `run` (named `run`, such as
    /// `"HostSolver::run"`) needs; one process's share runs with the `_shared` method of that
    /// name instead.
    pub(crate) fn check_whole_run(&self, run: &'static str) -> Result<(), Error> {
        let parts = &self.parts;
        if *parts != (0..self.partition.num_parts()) {
            return Err(Error::invalid(
                run,
                format!("a solver over parts {parts:?}"),
                format!("run one process's share with {run}_shared"),
            ));
        }
        Ok(())
    }

    /// Each device's sources: those of `sources` (partitioned ids, in their order) that its
    /// part owns; ids past the graph are left out.
    pub(crate) fn sources(&self, sources: &[u32]) -> Vec<Vec<u32>> {
        let mut seeds = vec![Vec::new(); self.parts.len()];
        for &s in sources {
            if (s as usize) < self.partition.num_vertices() {
                let part = self.partition.owner(s);
                if self.parts.contains(&part) {
                    seeds[part - self.parts.start].push(s);
                }
            }
        }
        seeds
    }
}
