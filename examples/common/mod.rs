//! The command-line convention shared by the examples, one idea per file: where the graph
//! comes from ([`graph_args`]), how a run is made and what it writes ([`run_args`]), who
//! drives it ([`execution`]), the hidden tuning flags ([`tuning`]), the source of a traversal
//! ([`source`]), repeated timed runs ([`timing`]) and the one JSON report ([`report`]); here,
//! error reporting, progress bars and per-vertex outputs.
//!
//! Each example includes this module with `mod common;`.

// Each example uses a part of this module.
#![allow(dead_code, unused_imports)]

pub mod do_trace;
pub mod execution;
pub mod graph_args;
pub mod rank_graph;
#[cfg(feature = "mpi")]
pub mod rank_measure;
pub mod ranks;
pub mod ranks_bfs;
pub mod ranks_cc;
pub mod ranks_pagerank;
pub mod report;
pub mod run_args;
pub mod source;
pub mod timing;
pub mod tuning;

use std::fs::File;
use std::io::{BufWriter, IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;

use groute::graph::{Graph, InputOrder, Progress};
use indicatif::{ProgressBar, ProgressStyle};

pub use graph_args::GraphArgs;
pub use report::Report;
pub use run_args::RunArgs;
pub use tuning::{FusedArgs, WorklistArgs};

/// A boxed error for `main`.
pub type AnyError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Runs `body`, printing an error (with its causes) and exiting non-zero on failure.
pub fn exit_on_error<E: Into<AnyError>>(body: impl FnOnce() -> Result<(), E>) -> ExitCode {
    quiet_on_closed_pipe();
    match body() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            report_error(&*e.into());
            ExitCode::FAILURE
        }
    }
}

/// Restores SIGPIPE's default action, which Rust's runtime sets to ignore: output piped into
/// a reader that closes early (`bfs ... --json | head -c 100`) then ends the process quietly,
/// as it does `cat` or `grep`, instead of a panic in `println!` ("failed printing to stdout").
/// It applies to the whole process: a write to any closed pipe or socket ends it. Called by
/// [`tuning::parse`] and [`exit_on_error`], one of which every example runs first.
pub fn quiet_on_closed_pipe() {
    #[cfg(unix)]
    // SAFETY: called first thing in `main`'s body, before any other thread exists, with a
    // valid signal number and disposition.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Prints `e` and the causes under it, each one that its message does not already quote
/// (an I/O error's message names its cause, for one).
pub fn report_error(e: &(dyn std::error::Error + 'static)) {
    let mut printed = e.to_string();
    eprintln!("error: {printed}");
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !printed.contains(&text) {
            eprintln!("  caused by: {text}");
            printed = text;
        }
        source = s.source();
    }
}

/// A progress bar on a terminal, silence otherwise.
pub struct Bar {
    bar: Option<ProgressBar>,
}

impl Bar {
    /// A bar if stderr is a terminal and `quiet` is false.
    pub fn new(quiet: bool) -> Self {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let b = ProgressBar::new(0);
            if let Ok(style) = ProgressStyle::with_template(
                "{msg:>12} [{bar:40}] {percent:>3}% {elapsed_precise} eta {eta}",
            ) {
                b.set_style(style.progress_chars("=> "));
            }
            b
        });
        Bar { bar }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

impl Progress for Bar {
    fn stage(&self, name: &str, total: u64) {
        if let Some(b) = &self.bar {
            b.set_message(name.to_string());
            b.set_length(total);
            b.set_position(0);
        }
    }
    fn advance(&self, delta: u64) {
        if let Some(b) = &self.bar {
            b.inc(delta);
        }
    }
}

/// The value traversal solvers report for an unreachable vertex.
pub const UNREACHED: u32 = u32::MAX;

/// `count` distinct roots (ranks) with out-edges, sampled with `seed` the way Graph500 picks
/// its search keys: uniformly among the vertices, skipping those without out-edges. An error
/// names the flag when the graph has fewer such vertices than asked for.
pub fn sample_roots(
    graph: &Graph,
    order: &InputOrder,
    count: usize,
    seed: u64,
) -> Result<Vec<u32>, AnyError> {
    let n = graph.num_vertices();
    let has_edges = |r: u32| graph.csr.out_degree(order.vertex_of_rank(r)) > 0;
    let available = (0..n as u32).filter(|&r| has_edges(r)).count();
    if count == 0 || count > available {
        return Err(format!(
            "--roots {count}: {} has {available} vertices with out-edges; ask for 1 to {available} roots",
            graph.name
        )
        .into());
    }
    let mut chosen = Vec::with_capacity(count);
    let mut taken = std::collections::HashSet::with_capacity(count);
    // The SplitMix64 stream from `seed`: the same roots for the same seed on every machine.
    let mut stream = groute::graph::SplitMix64::new(seed);
    while chosen.len() < count {
        let r = (stream.next_u64() % n as u64) as u32;
        if has_edges(r) && taken.insert(r) {
            chosen.push(r);
        }
    }
    Ok(chosen)
}

/// Out-arcs of every reached vertex (the Graph500 convention for traversed edges); `values`
/// is indexed by rank and `order` must be `graph`'s.
pub fn edges_of_reached(graph: &Graph, order: &InputOrder, values: &[u32]) -> u64 {
    values
        .iter()
        .enumerate()
        .filter(|(_, v)| **v != UNREACHED)
        .map(|(r, _)| graph.csr.out_degree(order.vertex_of_rank(r as u32)))
        .sum()
}

/// Writes `<id> <value>` per vertex in the input numbering, `inf` when unreachable.
pub fn write_values(path: &Path, values: &[u32], order: &InputOrder) -> Result<(), AnyError> {
    let file = File::create(path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    let mut out = BufWriter::new(file);
    for (rank, &value) in values.iter().enumerate() {
        let id = order.external_of_rank(rank as u32);
        if value == UNREACHED {
            writeln!(out, "{id} inf")?;
        } else {
            writeln!(out, "{id} {value}")?;
        }
    }
    out.flush()?;
    Ok(())
}

/// The median of `values` (sorted in place; `values` must not be empty).
pub fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

#[cfg(test)]
mod tests {
    use super::*;
    use groute::graph::EdgeList;

    /// A path 0-1-...-9 plus 10 isolated vertices (10..20): half the vertices have no edges.
    fn half_isolated() -> Graph {
        let pairs: Vec<(u32, u32)> = (0..9).map(|v| (v, v + 1)).collect();
        Graph::from_edges(20, &EdgeList::from_pairs(&pairs), "half-isolated", true).unwrap()
    }

    #[test]
    fn sampled_roots_are_distinct_have_out_edges_and_depend_only_on_the_seed() {
        let g = half_isolated();
        let order = InputOrder::of(&g);
        for count in [1, 4, 10] {
            let roots = sample_roots(&g, &order, count, 7).unwrap();
            assert_eq!(roots.len(), count);
            let distinct: std::collections::HashSet<_> = roots.iter().collect();
            assert_eq!(distinct.len(), count, "{roots:?}");
            for &r in &roots {
                assert!(g.csr.out_degree(order.vertex_of_rank(r)) > 0, "root {r}");
            }
            assert_eq!(roots, sample_roots(&g, &order, count, 7).unwrap());
        }
        // All ten vertices with edges, in some order; another seed, another order.
        let mut all = sample_roots(&g, &order, 10, 7).unwrap();
        let other = sample_roots(&g, &order, 10, 8).unwrap();
        assert_ne!(all, other);
        all.sort_unstable();
        assert_eq!(all, (0..10).collect::<Vec<u32>>());
    }

    #[test]
    fn asking_for_more_roots_than_vertices_with_edges_names_the_flag_and_the_limit() {
        let g = half_isolated();
        let order = InputOrder::of(&g);
        for count in [0, 11] {
            let err = sample_roots(&g, &order, count, 1).unwrap_err().to_string();
            assert!(err.contains("--roots") && err.contains("1 to 10"), "{err}");
        }
    }
}
