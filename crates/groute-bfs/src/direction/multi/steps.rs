//! [`MemberSteps`]: the level steps of one device of a multi-device run, on its own host
//! thread, with [`LevelReduce`] summing the counts across the devices' threads, and, in a run
//! spanning processes, the exchange with the other processes ([`Across`]).

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use groute_core::{Buffer, Error};
use groute_worklist::{RankCollectives, WorklistError, peers_failed};

use super::exchange::DeviceLinks;
use super::part::{Part, PartCounts, bitmap_len, words_of};
use super::rank_trace::{LeaderTrace, Mark};
use super::reduce::LevelReduce;
use crate::BfsError;
use crate::direction::{LevelSteps, StepCounts, StepKind};

/// One device of a multi-device run: its kernels, links and position.
pub(super) struct Member {
    pub(super) part: Box<dyn Part>,
    pub(super) links: DeviceLinks,
    pub(super) owned: Range<u32>,
    /// Its current frontier.
    frontier: u32,
    /// Its counters as last read (cumulative).
    last: PartCounts,
}

impl Member {
    /// A device owning the vertices `owned`.
    pub(super) fn new(part: Box<dyn Part>, links: DeviceLinks, owned: Range<u32>) -> Self {
        Member {
            part,
            links,
            owned,
            frontier: 0,
            last: PartCounts::default(),
        }
    }

    /// The bitmap words this device sends after a step over a graph of `n` vertices: every
    /// word after a push step (it may discover any vertex), the words of its owned range
    /// after a pull step (at least one, so that every device sends a message).
    fn words(&self, n: u32, pulled: bool) -> Range<u32> {
        let total = bitmap_len(n);
        if !pulled {
            return 0..total;
        }
        words_of(&self.owned, total)
    }
}

/// What a device does beyond its own process after its process's exchange of a level.
pub(super) enum Across<'a> {
    /// Nothing: a run of one process.
    Alone,
    /// Device 0 of a process of a run spanning several.
    Leader(RankLeader<'a>),
    /// Another device of such a process: it takes device 0's forward of what the other
    /// processes discovered (one more message on the link from device 0; in a star, the only
    /// one, with its own process's discoveries).
    Follower,
}

/// Device 0 of a process of a run spanning several: after its process's exchange it gathers
/// the process's discoveries with every other process's ([`RankCollectives::all_gather`] of
/// a window of every bitmap: all of it after a push step, the process's own words after a
/// pull step; or of lists after a push with few out-arcs, [`list_capacity`]), applies the
/// others', forwards them to its process's other devices, and sums the level's counts over
/// every process for the whole process.
pub(super) struct RankLeader<'a> {
    /// The collectives between the processes.
    pub(super) collectives: &'a mut dyn RankCollectives,
    /// Every process's window of its bitmap (or its list) after the gather (processes x
    /// window words, of processes x bitmap words, on this device).
    pub(super) gathered: &'a Buffer<u32>,
    /// The vertices each process's devices own, by process (what a pull step of that
    /// process can discover).
    pub(super) owned: &'a [Range<u32>],
    /// The per-level phases, when traced.
    pub(super) trace: Option<&'a mut LeaderTrace>,
    /// Whether the current level's gather is still to come (every level's but the source's).
    pub(super) gather_pending: bool,
    /// The words each process gives to the current level's gather (set when its step
    /// begins: every process gives as many, so a failed process must too).
    pub(super) gather_words: u32,
    /// Where the current level's push discoveries are gathered as lists (a push with few
    /// out-arcs, in processes of one device: [`list_capacity`]), the most a list holds;
    /// `None`: as bitmaps. Set with `gather_words`.
    pub(super) list_cap: Option<u32>,
    /// The words this process gave to the run's gathers so far.
    pub(super) gathered_words: &'a AtomicU64,
    /// Whether the current level's sum is still to come.
    pub(super) sum_pending: bool,
}

/// The run across processes, as errors name it.
pub(super) const RUN: &str = "the direction-optimizing BFS across processes";

impl RankLeader<'_> {
    /// Records `mark` on `part`'s stream when traced.
    fn mark(&mut self, mark: Mark, part: &dyn Part) -> Result<(), Error> {
        match &mut self.trace {
            Some(trace) => trace.mark(mark, part.stream()),
            None => Ok(()),
        }
    }
}

/// The words of a bitmap of `total` words that process `r` can have set after a step
/// (`pulled`: a pull step, which discovers only the process's own vertices; else any).
fn words_of_process(owned: &[Range<u32>], r: usize, total: u32, pulled: bool) -> Range<u32> {
    match (pulled, owned.get(r)) {
        (true, Some(vertices)) => words_of(vertices, total),
        _ => 0..total,
    }
}

/// The capacity of the lists a push step's discoveries are gathered as, or `None`: bitmaps.
/// Lists where every process runs on one device (`alone`, the same on every process: their
/// partition has the same shape) and the frontier's `out_arcs` (over every process, which
/// bound what any process discovers) make a list of under an eighth of a bitmap of `total`
/// words: every process decides alike.
pub(super) fn list_capacity(alone: bool, out_arcs: u64, total: u32) -> Option<u32> {
    let cap = u32::try_from(out_arcs).ok()?;
    (alone && cap < total / 8).then_some(cap)
}

/// The words every process gives to a level's gather: the most that any process can have
/// set (after a pull step about `total / processes`, after a push step all).
pub(super) fn gather_words(owned: &[Range<u32>], total: u32, pulled: bool) -> u32 {
    (0..owned.len().max(1))
        .map(|r| words_of_process(owned, r, total, pulled).len() as u32)
        .max()
        .unwrap_or(total)
}

/// Where process `r`'s part of a gather of `window` words starts in its bitmap of `total`
/// words: a window that holds every word it can have set (`words`).
fn window_start(words: &Range<u32>, window: u32, total: u32) -> u32 {
    words.start.min(total - window)
}

/// Enqueues the gather of the current level on `part` (the leader's device 0): every
/// process's window of [`RankLeader::gather_words`] words, this one's from its bitmap
/// starting at word `start`, into the first `processes x window` words of
/// [`RankLeader::gathered`].
fn gather_windows(
    leader: &mut RankLeader<'_>,
    part: &dyn Part,
    start: u32,
) -> Result<(), BfsError> {
    let window = leader.gather_words as usize;
    let ranks = leader.collectives.ranks();
    let mine = part
        .bitmap()
        .slice(start as usize..start as usize + window)?;
    let all = leader.gathered.slice(..ranks * window)?;
    leader.collectives.all_gather(&mine, &all, part.stream())?;
    Ok(())
}

/// The level steps of `member` (after its reset) in a run over `n` vertices.
pub(super) struct MemberSteps<'a> {
    member: &'a mut Member,
    /// What it does beyond its process.
    across: Across<'a>,
    /// Sums the counts with the other devices' threads.
    reduce: &'a LevelReduce,
    n: u32,
    /// The current frontier's vertices, over all devices.
    frontier: u64,
    /// Vertices reached so far (every frontier's, the current one's included).
    reached: u64,
    /// The current frontier's out-arcs, over all devices (what its push step reads).
    frontier_out_arcs: u64,
    started: Instant,
    time_limit: Option<Duration>,
}

impl<'a> MemberSteps<'a> {
    /// Steps of `member` from the source (already reset) over `n` vertices, and the counts of
    /// the source's frontier (over every device).
    pub(super) fn start(
        member: &'a mut Member,
        across: Across<'a>,
        reduce: &'a LevelReduce,
        n: u32,
        time_limit: Option<Duration>,
    ) -> Result<(Self, StepCounts), BfsError> {
        member.last = PartCounts::default();
        let mut steps = MemberSteps {
            member,
            across,
            reduce,
            n,
            frontier: 0,
            reached: 0,
            frontier_out_arcs: 0,
            started: Instant::now(),
            time_limit,
        };
        match steps.finish(0, None, 0) {
            Ok(first) => Ok((steps, first)),
            Err(e) => Err(steps.fail_across(e)),
        }
    }

    /// After an error in this member's level: a process's leader still takes part in the
    /// level's collectives it has not reached (the gather, then the sum, carrying this
    /// process's failure), so that no other process waits for it, and every process ends the
    /// run with an error on the same level. Returns `e`.
    pub(super) fn fail_across(&mut self, e: BfsError) -> BfsError {
        if let Across::Leader(leader) = &mut self.across {
            let part = self.member.part.as_ref();
            if leader.gather_pending {
                leader.gather_pending = false;
                // Its result is moot: the sum below fails the level everywhere. It gives the
                // count the other processes give: `begin_step` sized it before anything of
                // the level could fail (nothing between a level's sum and the next step's
                // `begin_step` can fail on a leader).
                debug_assert!(leader.gather_words > 0, "a gather sized by begin_step");
                let _ = gather_windows(leader, part, 0);
            }
            if leader.sum_pending {
                leader.sum_pending = false;
                fail_level(leader.collectives);
            }
        }
        e
    }

    /// After the step of level `mark - 1` (`pulled`: whether it pulled; `None`: no step,
    /// the source's level 0): counts a push's finds, exchanges the discoveries (the devices
    /// count the new frontier as they apply them) and sums the devices' counts; `items` is
    /// the step's work over all devices.
    fn finish(
        &mut self,
        mark: u32,
        pulled: Option<bool>,
        items: u64,
    ) -> Result<StepCounts, BfsError> {
        let m = &mut *self.member;
        if let Some(pulled) = pulled {
            let part = m.part.as_ref();
            let peers = m.links.has_peers();
            let leader = match &mut self.across {
                Across::Leader(leader) => {
                    leader.mark(Mark::StepEnd, part)?;
                    true
                }
                _ => false,
            };
            if !pulled {
                // The push's own discoveries make the bitmap wherever it is sent before any
                // other device's are applied: to this process's devices, or by a leader
                // alone in its process to the other processes (unless it sends a list).
                let listed = matches!(&self.across, Across::Leader(l) if l.list_cap.is_some());
                let write_bitmap = step_writes_bitmap(&m.links, leader) && !listed;
                if write_bitmap {
                    m.links.before_marking(part)?;
                }
                part.count_push_finds(mark, m.frontier, write_bitmap)?;
            }
            if peers {
                // A pull wrote its words of the bitmap, a push the whole of it.
                let words = m.words(self.n, pulled);
                m.links.exchange(part, words, mark)?;
            }
            match &mut self.across {
                Across::Alone => m.links.forward(part, mark, bitmap_len(self.n))?,
                Across::Follower => m.links.receive_from_first(part, mark)?,
                Across::Leader(leader) => exchange_across(m, leader, self.n, mark, pulled)?,
            }
        }
        if let Across::Leader(leader) = &mut self.across {
            leader.mark(Mark::Scanned, m.part.as_ref())?;
        }
        let now = m.part.read_counts()?;
        let size = now.frontiers - m.last.frontiers;
        m.frontier = u32::try_from(size)
            .map_err(|_| Error::invalid("frontier", size, "at most u32::MAX vertices (a bug)"))?;
        let local = StepCounts {
            frontier: size,
            frontier_out_arcs: now.out_arcs - m.last.out_arcs,
            frontier_in_arcs: now.in_arcs - m.last.in_arcs,
            items: 0,
            arcs_examined: now.examined - m.last.examined,
        };
        m.last = now;
        let mut step = match &mut self.across {
            Across::Leader(leader) => {
                let collectives = &mut *leader.collectives;
                // The time limit is decided over every process at once (a process that
                // stopped alone would leave the others waiting in the next collective).
                let late = self.time_limit.filter(|&l| self.started.elapsed() > l);
                let sum_pending = &mut leader.sum_pending;
                let mut across = |counts: StepCounts| {
                    *sum_pending = false;
                    sum_over_processes(collectives, counts, late, false)
                };
                let step = self.reduce.all_reduce(local, Some(&mut across))?;
                // The next level's collectives.
                (leader.gather_pending, leader.sum_pending) = (true, true);
                if let Some(trace) = &mut leader.trace {
                    trace.found(step.frontier, size);
                }
                step
            }
            _ => self.reduce.all_reduce(local, None)?,
        };
        step.items = items;
        self.frontier = step.frontier;
        self.reached += step.frontier;
        self.frontier_out_arcs = step.frontier_out_arcs;
        Ok(step)
    }
}

/// Whether a device's step writes its bitmap from its finds: where the bitmap goes out as the
/// step leaves it, to the process's other devices ([`DeviceLinks::sends_step_bitmap`]) or, from
/// a `leader` alone in its process, to the other processes. A leader with peers marks the
/// process's words from its levels after their exchange ([`exchange_across`]).
fn step_writes_bitmap(links: &DeviceLinks, leader: bool) -> bool {
    links.sends_step_bitmap() || (leader && !links.has_peers())
}

/// Device 0's exchange with the other processes after its process's exchange of level
/// `mark`'s discoveries (`pulled`: the step pulled, so only the process's own vertices can
/// be new): the gather of every process's bitmap (or list, [`RankLeader::list_cap`]), the
/// others' applied, and a forward of them to the process's other devices.
fn exchange_across(
    m: &mut Member,
    leader: &mut RankLeader<'_>,
    n: u32,
    mark: u32,
    pulled: bool,
) -> Result<(), BfsError> {
    let part = m.part.as_ref();
    let total = bitmap_len(n);
    let (rank, ranks) = (leader.collectives.rank(), leader.collectives.ranks());
    m.links.before_marking(part)?;
    leader
        .gathered_words
        .fetch_add(u64::from(leader.gather_words), Ordering::Relaxed);
    if let Some(cap) = leader.list_cap {
        // A push with few out-arcs in a process of one device: its discoveries as a list.
        part.list_push_finds(mark, m.frontier, cap)?;
        leader.mark(Mark::Marked, part)?;
        leader.gather_pending = false;
        gather_windows(leader, part, 0)?;
        leader.mark(Mark::Gathered, part)?;
        let window = leader.gather_words as usize;
        for r in (0..ranks).filter(|&r| r != rank) {
            let theirs = leader.gathered.slice(r * window..(r + 1) * window)?;
            part.apply_list(&theirs, cap, mark)?;
        }
        return Ok(());
    }
    let own = words_of_process(leader.owned, rank, total, pulled);
    if m.links.has_peers() {
        // The process's other devices' discoveries are applied here already: every word
        // the process can have set, written whole (the rest of its window is sent but read
        // by no process).
        part.mark_bitmap(mark, own.clone())?;
    }
    // Else the step's finds are all the process found: written by the step as it found
    // them (a pull its own words, a push every word).
    leader.mark(Mark::Marked, part)?;
    leader.gather_pending = false;
    let window = leader.gather_words;
    gather_windows(leader, part, window_start(&own, window, total))?;
    leader.mark(Mark::Gathered, part)?;
    for r in (0..ranks).filter(|&r| r != rank) {
        let words = words_of_process(leader.owned, r, total, pulled);
        let at = r * window as usize + (words.start - window_start(&words, window, total)) as usize;
        let theirs = leader.gathered.slice(at..at + words.len())?;
        part.apply(&theirs, words.start, mark)?;
    }
    if m.links.has_peers() {
        // Every vertex at `mark`: the process's own discoveries (which its devices hold, but
        // for each other's in a star: `DeviceLinks::forward`) and the others'.
        m.links.before_marking(part)?;
        part.mark_bitmap(mark, 0..total)?;
        m.links.send(part, 0..total)?;
    }
    Ok(())
}

/// Takes part in a level's sum with this process's failure in it (the sum's own result is
/// moot: the caller returns its error, every other process a peer's failure).
pub(super) fn fail_level(collectives: &mut dyn RankCollectives) {
    let _ = sum_over_processes(collectives, StepCounts::default(), None, true);
}

/// The sum of a process's level counts over every process, or an error on every process:
/// once any process `failed` the level (its own error is its caller's), or once any is past
/// the time limit (`late`: its limit, when this one is).
fn sum_over_processes(
    collectives: &mut dyn RankCollectives,
    counts: StepCounts,
    late: Option<Duration>,
    failed: bool,
) -> Result<StepCounts, BfsError> {
    let words = [
        counts.frontier,
        counts.frontier_out_arcs,
        counts.frontier_in_arcs,
        counts.items,
        counts.arcs_examined,
        u64::from(late.is_some()),
        late.map_or(0, |l| u64::try_from(l.as_millis()).unwrap_or(u64::MAX)),
        u64::from(failed),
    ];
    let sum = collectives.sum(&words)?;
    let &[
        frontier,
        frontier_out_arcs,
        frontier_in_arcs,
        items,
        arcs_examined,
        late_processes,
        late_ms,
        failed_processes,
    ] = sum.as_slice()
    else {
        return Err(Error::LengthMismatch {
            operation: "the sum of a level's counts over the processes",
            dst: sum.len(),
            src: words.len(),
        }
        .into());
    };
    if failed_processes > 0 {
        return Err(WorklistError::from(peers_failed(RUN, failed_processes, collectives)).into());
    }
    // The limit of the processes past it (every process is given the same).
    if let Some(limit_ms) = late_ms.checked_div(late_processes) {
        return Err(WorklistError::TimedOut {
            limit: Duration::from_millis(limit_ms),
            outstanding: i64::try_from(frontier).unwrap_or(i64::MAX),
        }
        .into());
    }
    Ok(StepCounts {
        frontier,
        frontier_out_arcs,
        frontier_in_arcs,
        items,
        arcs_examined,
    })
}

impl MemberSteps<'_> {
    /// Before the launch of a new step of `kind` from `level`: a leader sizes the level's
    /// gather (first: a failed step still gives as many words as the others) and traces it.
    fn begin_step(&mut self, kind: StepKind, level: u32) -> Result<(), BfsError> {
        if let Across::Leader(leader) = &mut self.across {
            let total = bitmap_len(self.n);
            let pulled = kind == StepKind::Pull;
            let alone = !self.member.links.has_peers();
            leader.list_cap = (!pulled)
                .then(|| list_capacity(alone, self.frontier_out_arcs, total))
                .flatten();
            leader.gather_words = match leader.list_cap {
                Some(cap) => cap + 1,
                None => gather_words(leader.owned, total, pulled),
            };
            if let Some(trace) = &mut leader.trace {
                trace.begin(kind, level);
                trace.mark(Mark::StepStart, self.member.part.stream())?;
            }
        }
        Ok(())
    }
}

impl LevelSteps for MemberSteps<'_> {
    fn push(&mut self, level: u32) -> Result<StepCounts, BfsError> {
        self.begin_step(StepKind::Push, level)?;
        let m = &self.member;
        m.part.push(level, m.frontier)?;
        let (items, read) = (self.frontier, self.frontier_out_arcs);
        let mut step = self.finish(level + 1, Some(false), items)?;
        step.arcs_examined += read;
        Ok(step)
    }

    fn pull(&mut self, level: u32) -> Result<StepCounts, BfsError> {
        self.begin_step(StepKind::Pull, level)?;
        // The pull writes the bitmap of its finds wherever it is sent: to this process's
        // devices, or by a leader alone in its process to the other processes.
        let m = &mut *self.member;
        let leader = matches!(self.across, Across::Leader(_));
        let write_bitmap = step_writes_bitmap(&m.links, leader);
        if write_bitmap {
            m.links.before_marking(m.part.as_ref())?;
        }
        m.part.pull(level, write_bitmap)?;
        let unvisited = u64::from(self.n) - self.reached;
        self.finish(level + 1, Some(true), unvisited)
    }

    fn check_time(&self) -> Result<(), BfsError> {
        if !matches!(self.across, Across::Alone) {
            // Across processes the leader decides it for every process with the level's sum.
            return Ok(());
        }
        match self.time_limit {
            Some(limit) if self.started.elapsed() > limit => Err(WorklistError::TimedOut {
                limit,
                outstanding: self.frontier as i64,
            }
            .into()),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::list_capacity;

    /// Lists where every process runs one device and the out-arcs make a list of under an
    /// eighth of the bitmap; bitmaps otherwise.
    #[test]
    fn pushes_list_their_finds_only_where_few_and_alone() {
        // A bitmap of 1024 words: lists of at most 128 words, so at most 127 vertices.
        assert_eq!(list_capacity(true, 0, 1024), Some(0));
        assert_eq!(list_capacity(true, 127, 1024), Some(127));
        assert_eq!(list_capacity(true, 128, 1024), None);
        assert_eq!(list_capacity(false, 10, 1024), None);
        assert_eq!(list_capacity(true, u64::MAX, 1024), None);
        assert_eq!(list_capacity(true, 0, 7), None);
    }
}
