//! The host suites' bodies: a traversal equals its reference on 1 to 8 devices, block and
//! METIS partitions, plain and jittered host contexts (and CUDA under `GROUTE_TEST_CUDA=1`:
//! `groute_core::testing::test_contexts`), on generated, special and shipped graphs and with
//! soft priority; its statistics count its work, and bad inputs are clear errors.
//!
//! On reduced inputs (`groute_core::testing::reduced`) each check runs one source on block
//! partitions, on 1 to 3 devices.

use groute_core::Context;
use groute_core::testing::{combinations, device_counts, first, test_contexts};
use groute_graph::testing::in_blocks;
use groute_graph::{Graph, NoProgress, PartitionMethod, partition_graph};

use super::{
    SMALL_SHIPPED_GRAPH, TINY_SHIPPED_GRAPH, TraversalUnderTest, host_options, shipped_graphs,
};
use crate::TraversalError;
use crate::traversal::FusedMode;

/// Checks `T` from `sources` on `devices` devices against its reference on the unpartitioned
/// graph: on a block partition with each of `T::PRIORITIES`, on METIS with the last, each on
/// every context of [`test_contexts`] (`jitter`: the seeds of its jittered host contexts), one
/// solver per partition and context running every source. On reduced inputs: from the first
/// source, on blocks.
pub fn check<T: TraversalUnderTest>(
    graph: &Graph,
    devices: usize,
    sources: &[u32],
    jitter: &[u64],
) {
    assert!(
        devices <= graph.num_vertices(),
        "{}: {devices} devices for {} vertices",
        graph.name,
        graph.num_vertices()
    );
    let sources = first(sources.iter().copied(), 1);
    let expected: Vec<Vec<u32>> = sources
        .iter()
        .map(|&s| T::reference(&graph.csr, s))
        .collect();
    let mut settings: Vec<_> = T::PRIORITIES
        .iter()
        .map(|&prio| (PartitionMethod::Block, prio))
        .collect();
    let &last = T::PRIORITIES.last().expect("a soft-priority setting");
    settings.push((PartitionMethod::Metis, last));
    for (method, prio) in first(settings, T::PRIORITIES.len()) {
        let parted = partition_graph(graph.clone(), devices, method, &NoProgress).unwrap();
        let mut options = host_options::<T>();
        T::worklist(&mut options).prio_delta = prio;
        for tc in test_contexts(devices, jitter) {
            let label = format!("{method}, {}, prio_delta {prio:?}", tc.label);
            let mut solver = T::solver(&tc.context, &parted, &options)
                .unwrap_or_else(|e| panic!("{} ({label}): {e}", graph.name));
            for (&s, expected) in sources.iter().zip(&expected) {
                let label = format!("{} from {s} on {devices} devices ({label})", graph.name);
                let got = T::run(&mut solver, s).unwrap_or_else(|e| panic!("{label}: {e}"));
                assert_eq!(&got.values, expected, "{label}");
                assert_eq!(got.worklist.late_items, 0, "{label}");
            }
        }
    }
}

/// [`check`] on each of `graphs` on 1, 2, 3, 4 and 8 devices, from the middle vertex and
/// vertex 0 (on reduced inputs the middle one: a generated graph's vertex 0 may be isolated),
/// with one jittered context seeded by the device count.
pub fn generated_graphs_match_on_1_to_8_devices<T: TraversalUnderTest>(graphs: &[Graph]) {
    for g in graphs {
        for devices in device_counts(&[1, 2, 3, 4, 8]) {
            let middle = (g.num_vertices() / 2) as u32;
            check::<T>(g, devices, &[middle, 0], &[devices as u64]);
        }
    }
}

/// [`check`] on each of `shapes` (a graph, its sources and the seed of its jittered context)
/// on 1, 2, 3, 4 and 8 devices, at most one per vertex.
pub fn shapes_match_on_every_device_count<T: TraversalUnderTest>(shapes: &[(&Graph, &[u32], u64)]) {
    for &(graph, sources, seed) in shapes {
        let mut counts: Vec<usize> = device_counts(&[1, 2, 3, 4, 8])
            .into_iter()
            .map(|d| d.min(graph.num_vertices()))
            .collect();
        counts.dedup();
        for devices in counts {
            check::<T>(graph, devices, sources, &[seed]);
        }
    }
}

/// [`check`] from vertex 0 on each shipped graph ([`shipped_graphs`]; on reduced inputs the
/// small METIS graph and the tiny weighted one), on 1, 2 and 4 devices, or `tiny_devices`
/// where it has fewer than 8 vertices.
pub fn shipped_graphs_match<T: TraversalUnderTest>(tiny_devices: &[usize]) {
    for g in &shipped_graphs(&[SMALL_SHIPPED_GRAPH, TINY_SHIPPED_GRAPH]) {
        let devices = if g.num_vertices() < 8 {
            tiny_devices
        } else {
            &[1, 2, 4]
        };
        for d in device_counts(devices) {
            check::<T>(g, d, &[0], &[]);
        }
    }
}

/// `T` on `graph` over 2 host devices: a source out of range (in the one-shot traversal and
/// in a solver), a partition of 3 parts and a worklist of one item over `crowded` (which
/// overflows it) each fail with a clear error.
pub fn bad_inputs_are_clear_errors<T: TraversalUnderTest>(graph: &Graph, crowded: &Graph) {
    let n = graph.num_vertices();
    let ctx = Context::host(2).unwrap();
    let parted = in_blocks(graph, 2).unwrap();
    let options = host_options::<T>();
    let err = T::traverse(&ctx, &parted, n as u32, &options).unwrap_err();
    assert!(
        matches!(err, TraversalError::SourceOutOfRange { vertex, vertices }
            if vertex as usize == n && vertices == n),
        "{err}"
    );
    assert!(err.to_string().contains("--source"), "{err}");
    let mut solver = T::solver(&ctx, &parted, &options).unwrap();
    assert!(matches!(
        T::run(&mut solver, u32::MAX).unwrap_err(),
        TraversalError::SourceOutOfRange { .. }
    ));
    let three = in_blocks(graph, 3).unwrap();
    assert!(matches!(
        T::traverse(&ctx, &three, 0, &options).unwrap_err(),
        TraversalError::PartitionMismatch {
            parts: 3,
            devices: 2
        }
    ));
    let mut tiny = host_options::<T>();
    T::worklist(&mut tiny).wl_capacity = Some(1);
    let err = T::traverse(&ctx, &in_blocks(crowded, 2).unwrap(), 0, &tiny).unwrap_err();
    assert!(err.to_string().contains("--wl-capacity"), "{err}");
}

/// `T` from vertex 0 of `graph` on 4 host devices counts its work (at least one item per
/// vertex reached), its ring traffic and rounds, one set of counters per device, and reaches
/// the reference's vertices with the reference's largest value.
pub fn stats_count_work_and_ring_traffic<T: TraversalUnderTest>(graph: &Graph) {
    let ctx = Context::host(4).unwrap();
    let parted = in_blocks(graph, 4).unwrap();
    let r = T::traverse(&ctx, &parted, 0, &host_options::<T>())
        .unwrap_or_else(|e| panic!("{} from 0 on 4 devices: {e}", graph.name));
    assert!(r.work_items >= r.reached as u64);
    assert!(r.items_sent > 0);
    assert!(r.rounds > 0);
    assert_eq!(r.worklist.devices.len(), 4);
    let expected = T::reference(&graph.csr, 0);
    let reached: Vec<u32> = expected
        .into_iter()
        .filter(|&v| v != crate::traversal::UNREACHED)
        .collect();
    assert_eq!(r.reached, reached.len());
    assert_eq!(r.deepest, reached.into_iter().max().unwrap_or(0));
}

/// `T` from `source` of `graph` on `devices` devices cut into blocks, on every context of
/// [`test_contexts`] (one jittered, seeded by `seed`) with soft priority `prio` (`None`: the
/// algorithm's default), equals its reference with no item seen after the end (the body of
/// a property test over random small graphs).
pub fn random_graph_matches<T: TraversalUnderTest>(
    graph: &Graph,
    devices: usize,
    source: u32,
    seed: u64,
    prio: Option<u32>,
) {
    let expected = T::reference(&graph.csr, source);
    let parted = in_blocks(graph, devices).unwrap();
    let mut options = host_options::<T>();
    T::worklist(&mut options).prio_delta = prio;
    for tc in test_contexts(devices, &[seed]) {
        let label = format!(
            "{} from {source}, prio_delta {prio:?}, {}",
            graph.name, tc.label
        );
        let got = T::traverse(&tc.context, &parted, source, &options)
            .unwrap_or_else(|e| panic!("{label}: {e}"));
        assert_eq!(got.values, expected, "{label}");
        assert_eq!(got.worklist.late_items, 0, "{}", tc.label);
    }
}

/// The inputs of [`soft_priority_matches_under_jitter`].
#[derive(Debug)]
pub struct JitterSweep<'a> {
    /// The graph, partitioned with METIS.
    pub graph: &'a Graph,
    /// The source of every run.
    pub source: u32,
    /// The device counts (on reduced inputs those up to 3).
    pub devices: &'a [usize],
    /// The soft-priority bands (`prio_delta`); `Some(1)`, where given, must defer and advance.
    pub prios: &'a [Option<u32>],
    /// The fused modes on one device (on several: `Auto`).
    pub one_device_modes: &'a [FusedMode],
    /// The seeds of the jittered host contexts.
    pub jitter: &'a [u64],
}

/// `T` with soft priority equals its reference on every context, each band and fused mode of
/// `sweep`, with no item seen after the end; with bands of one value the run defers items
/// and advances its threshold, and every device reports the run's epochs (a device-driven
/// run, on several CUDA devices, each its own: the run reports the most).
pub fn soft_priority_matches_under_jitter<T: TraversalUnderTest>(sweep: &JitterSweep<'_>) {
    let JitterSweep {
        graph,
        source,
        prios,
        ..
    } = *sweep;
    let expected = T::reference(&graph.csr, source);
    for devices in device_counts(sweep.devices) {
        let parted =
            partition_graph(graph.clone(), devices, PartitionMethod::Metis, &NoProgress).unwrap();
        let modes = if devices == 1 {
            sweep.one_device_modes
        } else {
            &[FusedMode::Auto]
        };
        for [pi, mi] in combinations([prios.len(), modes.len()]) {
            let (prio, mode) = (prios[pi], modes[mi]);
            let mut options = host_options::<T>();
            let worklist = T::worklist(&mut options);
            worklist.prio_delta = prio;
            worklist.fused = mode;
            for tc in test_contexts(devices, sweep.jitter) {
                let label = format!(
                    "{devices} devices, prio_delta {prio:?}, {mode:?}, {}",
                    tc.label
                );
                let got = T::traverse(&tc.context, &parted, source, &options)
                    .unwrap_or_else(|e| panic!("{label}: {e}"));
                assert_eq!(got.values, expected, "{label}");
                let ws = &got.worklist;
                assert_eq!(ws.late_items, 0, "{label}");
                if prio == Some(1) {
                    assert!(got.epochs > 0 && got.items_deferred > 0, "{label}");
                    // The host's epochs are agreed by every device; a device-driven run (CUDA,
                    // several devices on distinct GPUs with peer access or sharing one: Auto
                    // fuses a sparse graph) runs each device's own, and reports the most.
                    let own_epochs = tc.label == "cuda"
                        && devices > 1
                        && groute_core::cuda::PeerGroup::auto_device_driven(&tc.context);
                    let most = ws.devices.iter().map(|d| d.epochs).max();
                    assert_eq!(most, Some(got.epochs), "{label}");
                    assert!(
                        own_epochs || ws.devices.iter().all(|d| d.epochs == got.epochs),
                        "{label}"
                    );
                }
            }
        }
    }
}
