//! The device-plane protocol (a message carrying the item count, the items on the plane, in
//! the messages' order; a failed run's items still taken) over a plane of host memory between
//! ranks as threads: the runs equal their references, and a run that fails on one rank leaves
//! nothing in flight for the next.

use std::time::Duration;

use crossbeam::channel::{Receiver, Sender, unbounded};
use groute_bfs::{Bfs, bfs_reference};
use groute_core::backend::RawSlice;
use groute_core::{BackendChoice, Context, Event, Jitter};
use groute_graph::{CsrBuilder, EdgeList, Partition};
use groute_sssp::{Sssp, sssp_reference};
use groute_worklist::{WorklistAlgorithm, WorklistOptions};

use super::DevicePlane;
use crate::error::{DistError, Result};
use crate::{DistSolver, LocalRanks, RankComm};

/// A plane whose "device memory" is host memory: a send copies the bytes into a channel to the
/// next rank, a receive takes the previous rank's next bytes.
struct ChannelPlane {
    to_next: Sender<Vec<u8>>,
    from_previous: Receiver<Vec<u8>>,
}

impl ChannelPlane {
    fn take(&self, bytes: usize) -> Result<Vec<u8>> {
        let got = self
            .from_previous
            .recv_timeout(Duration::from_secs(30))
            .map_err(|e| DistError::Comm(format!("nothing from the previous rank: {e}")))?;
        if got.len() != bytes {
            return Err(DistError::Comm(format!(
                "a receive of {bytes} bytes matched a send of {}",
                got.len()
            )));
        }
        Ok(got)
    }
}

/// The error of device memory given to the host-memory plane.
fn not_host() -> DistError {
    DistError::Comm("the channel plane moves host memory only".into())
}

impl DevicePlane for ChannelPlane {
    fn send(&mut self, items: &RawSlice, ready: &Event) -> Result<()> {
        ready.wait()?;
        let ptr = items.host_ptr().ok_or_else(not_host)?;
        // SAFETY: host memory valid for `items.len` bytes, written before `ready` completed.
        let bytes = unsafe { std::slice::from_raw_parts(ptr.as_ptr(), items.len) }.to_vec();
        self.to_next
            .send(bytes)
            .map_err(|_| DistError::Comm("the next rank is gone".into()))
    }

    fn receive(&mut self, into: &RawSlice) -> Result<Event> {
        let bytes = self.take(into.len)?;
        let ptr = into.host_ptr().ok_or_else(not_host)?;
        // SAFETY: a new buffer of `into.len` bytes that no one reads before the event returned.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), ptr.as_ptr(), bytes.len()) };
        Ok(Event::ready())
    }

    fn discard(&mut self, bytes: usize) -> Result<()> {
        self.take(bytes).map(drop)
    }

    fn unfinished_sends(&mut self) -> Result<usize> {
        Ok(0)
    }
}

/// One plane per rank of a ring of `ranks`.
fn planes(ranks: usize) -> Vec<ChannelPlane> {
    let (senders, receivers): (Vec<_>, Vec<_>) = (0..ranks).map(|_| unbounded()).unzip();
    (0..ranks)
        .map(|r| ChannelPlane {
            to_next: senders[r].clone(),
            from_previous: receivers[(r + ranks - 1) % ranks].clone(),
        })
        .collect()
}

fn options(max_batch: usize) -> WorklistOptions {
    WorklistOptions {
        time_limit: Some(Duration::from_secs(60)),
        packet_size: 8,
        max_batch,
        ..WorklistOptions::default()
    }
}

/// Rank 0's values of each of `runs` (the options of each rank in each run), all on one
/// solver per rank over the channel planes; `Err` where a rank's run failed.
fn run_over_planes<A: WorklistAlgorithm + Clone>(
    algorithm: &A,
    csr: &groute_graph::Csr,
    (ranks, devices): (usize, usize),
    source: u32,
    runs: &[&(dyn Fn(usize) -> WorklistOptions + Sync)],
) -> Vec<Vec<std::result::Result<Vec<A::Value>, String>>> {
    let n = csr.num_vertices() as u32;
    let parts = ranks * devices;
    let bounds = (0..=parts as u32).map(|p| n * p / parts as u32).collect();
    let partition = Partition::from_bounds(bounds).expect("bounds");
    let comms = LocalRanks::new(ranks, Some(3));
    std::thread::scope(|scope| {
        let handles: Vec<_> = comms
            .into_iter()
            .zip(planes(ranks))
            .map(|(mut comm, plane)| {
                let partition = &partition;
                scope.spawn(move || {
                    let rank = comm.rank();
                    let ctx = Context::builder()
                        .devices(devices)
                        .backend(BackendChoice::Host)
                        .jitter(Some(Jitter::seeded(rank as u64 + 9)))
                        .build()
                        .expect("host backend");
                    let first = runs[0](rank);
                    let mut solver =
                        DistSolver::new(&mut comm, &ctx, algorithm.clone(), csr, partition, &first)
                            .expect("solver");
                    solver.carry_over(Box::new(plane));
                    runs.iter()
                        .map(|options| {
                            solver
                                .run(&[source], &options(rank))
                                .map(|o| o.values)
                                .map_err(|e| e.to_string())
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("rank thread"))
            .collect()
    })
}

fn graph(n: u32) -> groute_graph::Csr {
    let pairs: Vec<(u32, u32)> = (0..6 * n)
        .map(|i| (i.wrapping_mul(2_654_435_761) % n, (i * 7 + 3) % n))
        .collect();
    let csr = CsrBuilder::new(n as usize)
        .build(&EdgeList::from_pairs(&pairs))
        .expect("graph");
    let weights = (0..csr.num_edges()).map(|i| (i % 97) as u32 + 1).collect();
    csr.with_weights(weights).expect("weights")
}

#[test]
fn items_over_a_device_plane_equal_the_references() {
    let csr = graph(1_500);
    for (ranks, devices) in [(1, 2), (2, 1), (3, 2)] {
        let label = format!("{ranks} ranks x {devices} devices");
        let good = |_| options(32);
        let outs = run_over_planes(&Bfs, &csr, (ranks, devices), 4, &[&good, &good]);
        for run in &outs[0] {
            assert_eq!(
                run.as_ref().expect(&label),
                &bfs_reference(&csr, 4),
                "BFS, {label}"
            );
        }
        let outs = run_over_planes(&Sssp, &csr, (ranks, devices), 4, &[&good]);
        let dist = outs[0][0].as_ref().expect(&label);
        assert_eq!(dist, &sssp_reference(&csr, 4), "SSSP, {label}");
    }
}

#[test]
fn a_failed_run_leaves_nothing_on_the_plane_for_the_next() {
    let csr = graph(1_200);
    let ranks = 3;
    // The last rank refuses to start; its predecessors' items are still taken, so the next
    // run, on the same planes, matches every receive with its own send.
    let failing = |rank: usize| options(if rank == ranks - 1 { 0 } else { 32 });
    let good = |_| options(32);
    let outs = run_over_planes(&Sssp, &csr, (ranks, 2), 7, &[&good, &failing, &good]);
    let reference = sssp_reference(&csr, 7);
    for (rank, runs) in outs.iter().enumerate() {
        assert!(runs[1].is_err(), "rank {rank}: the failing run succeeded");
        assert!(runs[2].is_ok(), "rank {rank}: {:?}", runs[2]);
    }
    assert_eq!(outs[0][0].as_ref().unwrap(), &reference);
    assert_eq!(outs[0][2].as_ref().unwrap(), &reference);
}
