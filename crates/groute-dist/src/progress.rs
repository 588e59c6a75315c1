//! The progress loop: one rank's two ring edges moved over its [`RankComm`], and the
//! termination waves (the crate docs prove the protocol).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bytemuck::Pod;
use crossbeam::channel::TryRecvError;
use groute_core::Context;
use groute_worklist::{PriorityCounter, RingTransport, StepCounts};

use crate::comm::{RankComm, WaveCounts};
use crate::error::{DistError, Result};
use crate::plane::Carrier;
use crate::ring::{RankEdges, RankRing};

/// How long the loop sleeps when a pass found nothing to do (it shares the cores with the
/// drivers).
const IDLE_SLEEP: Duration = Duration::from_micros(50);

/// How a rank's share of the run ended.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Ending {
    /// Every rank is done: the counter was finished, the drivers have stopped.
    Terminated {
        /// Termination waves this rank joined.
        waves: u64,
    },
    /// A rank failed; the drivers were stopped.
    Failed {
        /// Ranks that failed.
        failed: u64,
        /// Whether this rank is one of them (its drivers failed before it learnt of the
        /// others; their errors after that are consequences).
        this_rank: bool,
    },
}

/// One rank's progress loop state.
pub(crate) struct Progress<'a, C, P> {
    pub(crate) comm: &'a mut C,
    pub(crate) context: &'a Context,
    pub(crate) edges: RankEdges<P>,
    /// How the items cross to the next rank.
    pub(crate) carrier: &'a mut Carrier<P>,
    pub(crate) counter: &'a PriorityCounter,
    pub(crate) started: &'a AtomicBool,
    /// Items handed to the next rank / taken from the previous one, since the run began.
    pub(crate) sent: u64,
    pub(crate) received: u64,
    /// The first error of this loop's own work (an upload of received items, a bad
    /// message): the rank then fails as if its drivers had.
    pub(crate) error: Option<DistError>,
}

impl<C: RankComm, P: Pod + Send + Sync> Progress<'_, C, P> {
    /// Runs until every rank is done or one failed; `ring` is shut down either way.
    pub(crate) fn run(&mut self, ring: &RankRing<P>) -> Result<Ending> {
        let ending = self.run_waves();
        if !matches!(ending, Ok(Ending::Terminated { .. })) {
            self.counter.abort();
        }
        ring.shutdown();
        ending
    }

    fn run_waves(&mut self) -> Result<Ending> {
        let mut previous: Option<WaveCounts> = None;
        let mut in_flight = false;
        let mut waves = 0u64;
        let mut this_rank_failed = false;
        loop {
            let moved = match self.move_items() {
                Ok(moved) => moved,
                Err(e) => {
                    // This rank fails: its drivers stop, the next wave tells the others.
                    self.error.get_or_insert(e);
                    self.counter.abort();
                    false
                }
            };
            if in_flight {
                if let Some(sum) = self.comm.test_wave()? {
                    in_flight = false;
                    waves += 1;
                    if sum.failed > 0 {
                        return Ok(Ending::Failed {
                            failed: sum.failed,
                            this_rank: this_rank_failed,
                        });
                    }
                    // Four counters: what every rank had received by the end of the
                    // previous wave was all that any rank had sent by this one.
                    if previous.is_some_and(|p| p.received == sum.sent) {
                        self.counter.finish();
                        self.drain_sends()?;
                        return Ok(Ending::Terminated { waves });
                    }
                    previous = Some(sum);
                }
            } else {
                let failed = self.counter.is_aborted();
                this_rank_failed |= failed;
                if failed || self.passive() {
                    self.comm.start_wave(WaveCounts {
                        sent: self.sent,
                        received: self.received,
                        failed: u64::from(failed),
                    })?;
                    in_flight = true;
                    continue;
                }
            }
            if !moved {
                std::thread::sleep(IDLE_SLEEP);
            }
        }
    }

    /// Whether this rank holds no item: its initial items are counted and its counts are
    /// zero (nothing active, nothing deferred). Only this loop makes such a rank active
    /// again (by delivering items).
    fn passive(&self) -> bool {
        self.started.load(Ordering::SeqCst) && self.counter.is_idle()
    }

    /// Sends what device `L - 1` handed over and delivers what arrived; whether anything moved.
    fn move_items(&mut self) -> Result<bool> {
        let mut moved = false;
        loop {
            match self.edges.outgoing.try_recv() {
                Ok(outbound) => {
                    let (message, n) = self.carrier.send(outbound)?;
                    self.comm.start_send(message)?;
                    self.sent += n;
                    // Retired once the next rank's copy is on its way (it counts them
                    // again before any of its drivers sees them).
                    self.counter.report(StepCounts {
                        consumed: n,
                        ..StepCounts::default()
                    });
                    moved = true;
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    return Err(DistError::Comm(
                        "the ring edge to the next rank closed".into(),
                    ));
                }
            }
        }
        self.comm.progress_sends()?;
        while let Some(message) = self.comm.try_receive()? {
            moved = true;
            // Counted first: a failure to take the items leaves the count right.
            let n = self.carrier.announced(&message)?;
            self.received += n;
            if self.counter.is_done() {
                // A failed run: nothing more is processed here, but the sender's message is
                // taken so that it completes.
                self.carrier.drop_items(&message)?;
                continue;
            }
            let Some(segment) = self.carrier.receive(self.context, &message, n)? else {
                continue;
            };
            // Counted before any driver can see them.
            self.counter.report(StepCounts::produced(n));
            if self.edges.incoming.send(segment).is_err() {
                return Err(DistError::Comm(
                    "the ring edge from the previous rank closed".into(),
                ));
            }
        }
        Ok(moved)
    }

    /// Waits until every send this rank started has completed (after termination they all
    /// have been received, so this ends).
    fn drain_sends(&mut self) -> Result<()> {
        while self.comm.progress_sends()? + self.carrier.unfinished_sends()? > 0 {
            std::thread::sleep(IDLE_SLEEP);
        }
        Ok(())
    }
}

/// After a failed run, every rank (collectively) takes what its predecessor sent and nobody
/// received, and waits for its own sends, so that no message of the failed run is left for
/// the next run on the same communicator. `sent` / `received`: this rank's items so far.
pub(crate) fn drain_after_failure<C: RankComm, P: Pod + Send + Sync>(
    comm: &mut C,
    carrier: &mut Carrier<P>,
    sent: u64,
    mut received: u64,
) -> Result<()> {
    let mut words = vec![0u64; comm.size()];
    words[comm.rank()] = sent;
    let sent_by = comm.all_reduce(&words, crate::comm::Reduction::Sum)?;
    let previous = (comm.rank() + comm.size() - 1) % comm.size();
    while received < sent_by[previous]
        || comm.progress_sends()? > 0
        || carrier.unfinished_sends()? > 0
    {
        match comm.try_receive()? {
            Some(message) => {
                received += carrier.announced(&message)?;
                carrier.drop_items(&message)?;
            }
            None => std::thread::sleep(IDLE_SLEEP),
        }
    }
    Ok(())
}

/// A rank that fails before its share of the run could start (its ring could not be made):
/// it joins the waves with a failure mark until the others have learnt it, then drains.
pub(crate) fn fail_alone<C: RankComm, P: Pod + Send + Sync>(
    comm: &mut C,
    carrier: &mut Carrier<P>,
) -> Result<()> {
    let mut received = 0u64;
    comm.start_wave(WaveCounts {
        sent: 0,
        received: 0,
        failed: 1,
    })?;
    loop {
        while let Some(message) = comm.try_receive()? {
            received += carrier.announced(&message)?;
            carrier.drop_items(&message)?;
        }
        if comm.test_wave()?.is_some() {
            return drain_after_failure(comm, carrier, 0, received);
        }
        std::thread::sleep(IDLE_SLEEP);
    }
}
