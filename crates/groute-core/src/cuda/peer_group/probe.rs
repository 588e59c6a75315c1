//! The peer group's probes: `kernels/runtime/peer_group.cu` on every member (exchanges and
//! all-reduces whose every value is checked, timed), and the start gate's cancellation of a run
//! whose members do not all start.

use super::super::launch::{DevicePtr, LaunchConfig};
use super::super::module::CudaModule;
use super::{PEER_MAX_DEVICES, PEER_OK, PEER_POSTBOX_WORDS, PeerExchange, PeerGroup};
use crate::error::Result;
use crate::memory::Buffer;
use groute_kernels::runtime::PEER_GROUP;

/// What [`peer_group_probe`] measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PeerProbe {
    /// Exchanges every member completed.
    pub exchanges: u32,
    /// Wrong sums or peer values seen (0 unless the protocol is broken).
    pub mismatches: u64,
    /// Device time per exchange (the member that waited least: its launch came last), in
    /// microseconds, including `words` peer stores per peer.
    pub exchange_us: f64,
}

/// Runs `kernels/runtime/peer_group.cu` on every device of `group`: `exchanges` rounds, each storing
/// `words` u64 into every peer, then one all-reduce by `method`; every member checks every
/// sum and every value its peers stored. Errors when a member failed;
/// [`PeerProbe::mismatches`] counts wrong values.
pub fn peer_group_probe(
    group: &PeerGroup,
    words: u32,
    exchanges: u32,
    method: PeerExchange,
) -> Result<PeerProbe> {
    let _run = group.begin_run()?;
    let (probe, _) = group.run_started(
        || Ok(()),
        || probe_members(group, words, exchanges, method, group.size()),
    )?;
    probe
}

/// Launches the probe on member 0 alone (the others never start) and returns whether its start
/// gate cancelled the start, as it must within
/// [`PEER_START_WINDOW`](super::PEER_START_WINDOW) on a group of several.
pub fn peer_start_gate_probe(group: &PeerGroup) -> Result<bool> {
    let _run = group.begin_run()?;
    // What member 0 read is meaningless when its start was cancelled, and an error when not.
    let alone = probe_members(group, 1, 1, PeerExchange::Mailbox, 1)?;
    let cancelled = group.start_cancelled()?;
    group.reset()?;
    if !cancelled {
        alone?;
    }
    Ok(cancelled)
}

/// [`peer_group_probe`] on the first `launched` members of `group` (all of them but in the
/// start-gate test); the caller holds the run lock. Its result is meaningful only when the
/// start was not cancelled.
fn probe_members(
    group: &PeerGroup,
    words: u32,
    exchanges: u32,
    method: PeerExchange,
    launched: usize,
) -> Result<Result<PeerProbe>> {
    const BLOCK: u32 = 128;
    let context = &group.context;
    let size = group.size();
    let inbox_len = 2 * PEER_MAX_DEVICES * words.max(1) as usize;
    let mut inboxes = Vec::with_capacity(size);
    let mut postboxes = Vec::with_capacity(size);
    let mut outs = Vec::with_capacity(size);
    for device in context.devices() {
        let inbox = device.alloc::<u64>(inbox_len)?;
        device.stream().fill(&inbox, 0u64)?;
        let postbox = device.alloc::<u64>(PEER_POSTBOX_WORDS)?;
        device.stream().fill(&postbox, 0u64)?;
        postboxes.push(postbox);
        // [status, mismatches, elapsed_ns, exchanges done]
        let out = device.alloc::<u64>(4)?;
        device.stream().fill(&out, 0u64)?;
        device.stream().synchronize()?;
        inboxes.push(inbox);
        outs.push(out);
    }
    let refs: Vec<&Buffer<u64>> = inboxes.iter().collect();
    let tables = (0..size)
        .map(|d| group.peer_table(d, &refs))
        .collect::<Result<Vec<_>>>()?;
    let post_refs: Vec<&Buffer<u64>> = postboxes.iter().collect();
    let post_tables = (0..size)
        .map(|d| group.peer_table(d, &post_refs))
        .collect::<Result<Vec<_>>>()?;
    let mut functions = Vec::with_capacity(size);
    for device in context.devices() {
        functions.push(
            CudaModule::load(device.stream().raw().as_ref(), &PEER_GROUP)?
                .function("peer_group_probe")?,
        );
    }
    for (d, device) in context.devices().iter().enumerate().take(launched) {
        let args = (
            group.args(d)?,
            DevicePtr::<u64>::from_slice(&tables[d].raw())?,
            words,
            exchanges,
            DevicePtr::<u64>::from_slice(&outs[d].raw())?,
            DevicePtr::<u64>::from_slice(&post_tables[d].raw())?,
            u32::from(method == PeerExchange::Posted),
        );
        // SAFETY: peer_group_probe(PeerGroup g, unsigned long long* const* inboxes,
        // unsigned words, unsigned exchanges, unsigned long long* out,
        // unsigned long long* const* postboxes, unsigned posted): the tuple matches it;
        // `post_tables[d]` (on device d) holds every member's postbox address, each of
        // PEER_POSTBOX_WORDS u64 (= POST_WORDS), reachable from device d;
        // `tables[d]` (on device d) holds every member's inbox address, each inbox holding
        // 2 * PEER_MAX_DEVICES * words u64, reachable from device d (PeerGroup::check: peer
        // access between every pair); `out` holds 4 u64 of device d; one block, cooperative so
        // that it is resident. Every buffer lives until the synchronisation below.
        let launched = unsafe {
            functions[d].launch_cooperative(
                device.stream().raw().as_ref(),
                LaunchConfig::linear(1, BLOCK),
                args,
            )
        };
        if let Err(e) = launched {
            group.set_abort(1)?;
            for other in &context.devices()[..d] {
                other.stream().synchronize()?;
            }
            return Err(e);
        }
    }
    let mut probe = PeerProbe {
        exchanges,
        mismatches: 0,
        exchange_us: f64::INFINITY,
    };
    let mut failed = None;
    for (d, device) in context.devices().iter().enumerate() {
        let out = device.download(&outs[d])?;
        if out[0] != u64::from(PEER_OK) && failed.is_none() {
            failed = Some(PeerGroup::failure(d, out[0] as u32));
        }
        probe.exchanges = probe.exchanges.min(out[3] as u32);
        probe.mismatches += out[1];
        let per = out[2] as f64 / 1e3 / f64::from(exchanges.max(1));
        probe.exchange_us = probe.exchange_us.min(per);
    }
    Ok(match failed {
        Some(e) => Err(e),
        None => Ok(probe),
    })
}
