//! [`FusedDirectionOptions`]: the switches of a device-driven run ([`MultiDriver::Fused`]):
//! its per-phase trace and the step variants a benchmark can compare.
//!
//! [`MultiDriver::Fused`]: crate::MultiDriver::Fused

use groute_core::cuda::PeerExchange;

/// Settings of a device-driven direction-optimizing run (ignored by the host-driven ones).
///
/// [`Default`] is the fastest combination where each device holds only its owned rows of the
/// graph: on one device the pull- and push-built frontiers, warp reservations and batched hubs
/// (every switch off is far slower, about as slow as host-driven rounds); on several devices
/// also sparse pushes stored as they append, one exchange per level, the posted exchange and
/// the dense push's discovery bitmap. The push-built frontier after dense pushes pays off
/// where a dense push starts from a vertex of very large degree and costs nothing elsewhere.
/// Replicated levels ([`replicate`](Self::replicate)) are faster still but need every device
/// to hold the whole graph, so they are off by default. The protocol is in
/// `docs/device-protocol.md`.
///
/// The default switches (with or without [`trace`](Self::trace), a run-time choice in every
/// build) run builds of the kernel compiled for them alone: `bfs_direction_fused_one` on one
/// device, with the peer steps compiled out, and `bfs_direction_fused_several`. Any other
/// combination of switches runs the build that reads them at run time. The one-device build
/// is faster than the run-time build: it spills no registers where that build spills.
/// [`FusedDirectionOptions::baseline`] turns every switch off, for A/B runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FusedDirectionOptions {
    /// Stamp every phase of every level on every device ([`DirectionTrace`], in
    /// [`BfsStats::do_trace`](crate::BfsStats)); off: no stamps, no cost but one branch each.
    ///
    /// [`DirectionTrace`]: crate::DirectionTrace
    pub trace: bool,
    /// A pull step builds the next frontier itself and stores its finds straight into the
    /// peers' inboxes (no grid barrier and no send pass between the pull and the exchange,
    /// no scan after it); off: the pull, then the send and scan passes every step takes.
    pub pull_builds_frontier: bool,
    /// One device: a push step's appends are the next frontier (a pass over them sums their
    /// degrees) instead of a scan over every vertex (`DO_FLAG_PUSH_FRONTIER`). Several
    /// devices, with [`push_bitmap`](Self::push_bitmap): after a dense push, the next
    /// frontier is built from the discovery bitmap and the received words, a lane per
    /// bitmap word, instead of a pass that reads every owned vertex's level.
    pub push_builds_frontier: bool,
    /// Run the kernel's build capped at 32 registers (`bfs_direction_fused_occupancy`: every
    /// thread slot of an SM resident, some registers spilled) instead of the one at 48 (5
    /// blocks of 256 threads per SM on sm_90).
    pub full_occupancy: bool,
    /// The passes that build a frontier count their finds per warp and reserve the block's
    /// worklist slots with one atomic, then append in a second sweep (`DO_FLAG_WARP_RESERVE`);
    /// off: one atomic on the worklist's end per 32 vertices with finds.
    pub warp_reserve: bool,
    /// The pass that applies the received words and scans for the next frontier handles 2
    /// words per warp and iteration, all their loads in flight before the first is used
    /// (`DO_FLAG_SCAN_BATCH`); off: one word at a time.
    pub scan_batch: bool,
    /// Several devices: a push level whose frontier has at most n / 64 out-arcs (summed over
    /// the devices) sends the list of its appends instead of the bitmap words of the whole
    /// level array, and builds the next frontier from its owned appends and the received
    /// lists instead of a pass over every word (`DO_FLAG_SPARSE_PUSH`); one device: no
    /// effect.
    pub sparse_push: bool,
    /// Several devices: one exchange per level instead of two (`DO_FLAG_ONE_EXCHANGE`). With
    /// [`pull_builds_frontier`](Self::pull_builds_frontier), a pull level's counters travel
    /// with the exchange of its words and the next step is decided there; with
    /// [`sparse_push`](Self::sparse_push), every device counts a sparse push level's finds
    /// over the union of all the devices' lists and decides alone. Otherwise no effect.
    pub one_exchange: bool,
    /// A push step's hub phase relaxes 4 consecutive arcs per thread and step, their loads
    /// and atomics in flight together (`DO_FLAG_HUB_BATCH`); off: one arc per thread and
    /// step.
    pub hub_batch: bool,
    /// Several devices, with [`sparse_push`](Self::sparse_push): a sparse push stores each
    /// vertex it appends into its list in every peer's inbox as it appends it, and the lists'
    /// exchange runs in the action of the push's own grid barrier (`DO_FLAG_LISTED_PUSH`):
    /// no send pass and no grid barrier of its own per sparse level; off: a pass over the
    /// appends stores the lists after the push, behind a grid barrier.
    pub listed_push: bool,
    /// Several devices: a dense push (one that sends bitmap words) marks each vertex it
    /// appends in a discovery bitmap, so its send pass reads that bitmap instead of every
    /// vertex's level (`DO_FLAG_PUSH_BITMAP`); off: the send pass reads the whole level
    /// array.
    pub push_bitmap: bool,
    /// Several devices: replicated levels (`DO_FLAG_REPLICATE`). A push level whose
    /// frontier is on every device and has at most n / 4 out-arcs runs whole on every
    /// device (each holds the same levels), so it finds the same vertices everywhere and
    /// makes no exchange; its frontier is on every device at the start, after a replicated
    /// level, and after a pull that builds its frontier with one exchange
    /// ([`one_exchange`](Self::one_exchange)), whose received finds then join it. Such a level
    /// expands vertices of other devices, so a run with replicated levels uploads the whole
    /// graph (and transpose) to every device instead of its owned rows. Off (the default):
    /// every level is split by owner and makes at least one exchange.
    pub replicate: bool,
    /// How the devices exchange (several devices): [`PeerExchange::Posted`] posts values and
    /// a tag into every peer's memory, each polling its own; [`PeerExchange::Mailbox`] (the
    /// default) meets at an atomic on device 0's mailbox polled over the link.
    pub exchange: PeerExchange,
}

impl Default for FusedDirectionOptions {
    fn default() -> Self {
        FusedDirectionOptions {
            trace: false,
            pull_builds_frontier: true,
            push_builds_frontier: true,
            full_occupancy: false,
            warp_reserve: true,
            scan_batch: false,
            sparse_push: true,
            one_exchange: true,
            hub_batch: true,
            listed_push: true,
            push_bitmap: true,
            replicate: false,
            exchange: PeerExchange::Posted,
        }
    }
}

impl FusedDirectionOptions {
    /// Every switch off: full passes after every step and two mailbox exchanges per level on
    /// several devices, for A/B runs.
    pub fn baseline() -> Self {
        FusedDirectionOptions {
            trace: false,
            pull_builds_frontier: false,
            push_builds_frontier: false,
            full_occupancy: false,
            warp_reserve: false,
            scan_batch: false,
            sparse_push: false,
            one_exchange: false,
            hub_batch: false,
            listed_push: false,
            push_bitmap: false,
            replicate: false,
            exchange: PeerExchange::Mailbox,
        }
    }

    /// The entry point of `kernels/bfs/bfs_direction_fused.cu` these options run on `devices`
    /// members. With the default switches, a build compiled for them alone
    /// (`DO_DEFAULT_FLAGS`): `bfs_direction_fused_one` for one member (no peer steps
    /// compiled in), `bfs_direction_fused_several` for several. With other switches, the
    /// build that reads them at run time, `bfs_direction_fused`, or its 32-register build
    /// with [`full_occupancy`](Self::full_occupancy). The trace is a run-time choice in every
    /// build.
    pub(crate) fn kernel_name(&self, devices: usize) -> &'static str {
        if self.full_occupancy {
            "bfs_direction_fused_occupancy"
        } else if self.kernel_flags() != FusedDirectionOptions::default().kernel_flags() {
            "bfs_direction_fused"
        } else if devices > 1 {
            "bfs_direction_fused_several"
        } else {
            "bfs_direction_fused_one"
        }
    }

    /// Whether a run on `devices` devices starts replicated (the kernel's replicated levels
    /// apply on several devices only): the host then puts the source in every worklist.
    pub(crate) fn replicates(&self, devices: usize) -> bool {
        self.replicate && devices > 1
    }

    /// Whether the kernel, on `devices` devices, may sum the degrees of vertices a device does
    /// not own: the global counts of a sparse push with one exchange per level (`global` in
    /// `kernels/bfs/bfs_direction_fused.cu`).
    pub(crate) fn counts_any_degree(&self, devices: usize) -> bool {
        devices > 1 && self.sparse_push && self.one_exchange
    }

    /// The kernel's `flags` word (`groute::DoFlag`).
    pub(crate) fn kernel_flags(&self) -> u32 {
        use groute_kernels::abi::{
            DO_FLAG_HUB_BATCH, DO_FLAG_LISTED_PUSH, DO_FLAG_ONE_EXCHANGE, DO_FLAG_POST_EXCHANGE,
            DO_FLAG_PULL_FRONTIER, DO_FLAG_PUSH_BITMAP, DO_FLAG_PUSH_FRONTIER, DO_FLAG_REPLICATE,
            DO_FLAG_SCAN_BATCH, DO_FLAG_SPARSE_PUSH, DO_FLAG_WARP_RESERVE,
        };
        let flag = |on: bool, bit: u32| if on { bit } else { 0 };
        flag(self.pull_builds_frontier, DO_FLAG_PULL_FRONTIER)
            | flag(self.warp_reserve, DO_FLAG_WARP_RESERVE)
            | flag(self.exchange == PeerExchange::Posted, DO_FLAG_POST_EXCHANGE)
            | flag(self.scan_batch, DO_FLAG_SCAN_BATCH)
            | flag(self.push_builds_frontier, DO_FLAG_PUSH_FRONTIER)
            | flag(self.sparse_push, DO_FLAG_SPARSE_PUSH)
            | flag(self.one_exchange, DO_FLAG_ONE_EXCHANGE)
            | flag(self.hub_batch, DO_FLAG_HUB_BATCH)
            | flag(self.listed_push, DO_FLAG_LISTED_PUSH)
            | flag(self.push_bitmap, DO_FLAG_PUSH_BITMAP)
            | flag(self.replicate, DO_FLAG_REPLICATE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kernel switch sets its own bit of `flags` (the kernel's DoFlag values), and
    /// the switches together set the union.
    #[test]
    fn each_switch_sets_its_own_kernel_flag() {
        let none = FusedDirectionOptions::baseline();
        assert_eq!(none.kernel_flags(), 0);
        let switches: [fn(&mut FusedDirectionOptions); 11] = [
            |o| o.pull_builds_frontier = true,
            |o| o.warp_reserve = true,
            |o| o.exchange = PeerExchange::Posted,
            |o| o.scan_batch = true,
            |o| o.push_builds_frontier = true,
            |o| o.sparse_push = true,
            |o| o.one_exchange = true,
            |o| o.hub_batch = true,
            |o| o.listed_push = true,
            |o| o.push_bitmap = true,
            |o| o.replicate = true,
        ];
        let mut all = none;
        for (bit, switch) in switches.iter().enumerate() {
            let mut one = none;
            switch(&mut one);
            assert_eq!(one.kernel_flags(), 1 << bit, "switch {bit}");
            switch(&mut all);
        }
        assert_eq!(all.kernel_flags(), (1 << switches.len()) - 1);
        assert_eq!(all.kernel_name(1), "bfs_direction_fused");
        let defaults = FusedDirectionOptions {
            trace: true,
            ..FusedDirectionOptions::default()
        };
        assert_eq!(defaults.kernel_name(1), "bfs_direction_fused_one");
        assert_eq!(defaults.kernel_name(2), "bfs_direction_fused_several");
        let full = FusedDirectionOptions {
            full_occupancy: true,
            ..defaults
        };
        assert_eq!(full.kernel_name(2), "bfs_direction_fused_occupancy");
    }

    /// Where `text` starts a line of code in `source` (after indentation only, so never in a
    /// comment): the byte just past it.
    fn code_at(source: &str, text: &str) -> usize {
        source
            .match_indices(text)
            .map(|(at, _)| at)
            .find(|&at| {
                let line_start = source[..at].rfind('\n').map_or(0, |nl| nl + 1);
                source[line_start..at].trim().is_empty()
            })
            .map(|at| at + text.len())
            .unwrap_or_else(|| panic!("`{text}` does not start a line of the kernel"))
    }

    /// The arguments after the name of the kernel's `GROUTE_DIRECTION_FUSED_ENTRY(name, ...)`,
    /// split at the commas outside parentheses, each with its whitespace collapsed.
    fn entry_arguments(source: &str, name: &str) -> Vec<String> {
        let text = &source[code_at(source, &format!("GROUTE_DIRECTION_FUSED_ENTRY({name},"))..];
        let (mut depth, mut args, mut arg) = (0usize, Vec::new(), String::new());
        for c in text.chars() {
            match c {
                ')' if depth == 0 => break,
                ',' if depth == 0 => args.push(std::mem::take(&mut arg)),
                _ => {
                    depth = match c {
                        '(' => depth + 1,
                        ')' => depth - 1,
                        _ => depth,
                    };
                    arg.push(c);
                }
            }
        }
        args.push(arg);
        args.iter()
            .map(|a| a.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect()
    }

    /// The fixed builds are compiled for `DO_DEFAULT_FLAGS`, which must be the default
    /// switches' flags, with the template arguments `kernel_name` relies on: read from the
    /// kernel's source, as NVRTC compiles it.
    #[test]
    fn the_fixed_builds_are_compiled_for_the_default_switches() {
        let source = groute_kernels::bfs::DIRECTION_FUSED.source;
        let expression = &source[code_at(source, "DO_DEFAULT_FLAGS =")..];
        let expression = &expression[..expression.find(',').expect("the enumerator's end")];
        // The flags are the ABI's constants (abi_direction.h, checked against their Rust
        // twins by groute-kernels' tests/abi.rs).
        let flag = |name: &str| {
            groute_kernels::abi::DIRECTION_CONSTANTS
                .iter()
                .find(|c| c.name == name)
                .unwrap_or_else(|| panic!("{name} is not a flag of abi_direction.h"))
                .value
        };
        let flags = expression
            .split('|')
            .map(|name| flag(name.trim()))
            .fold(0, |all, bit| all | bit);
        assert_eq!(flags, FusedDirectionOptions::default().kernel_flags());

        // The shipped branch of the fixed builds' constants (the other is the diagnostic
        // GROUTE_DO_RUNTIME_FLAGS build).
        let shipped = &source[code_at(source, "#ifdef GROUTE_DO_RUNTIME_FLAGS")..];
        let shipped = &shipped[shipped.find("#else").expect("#else")..];
        let shipped = &shipped[..shipped.find("#endif").expect("#endif")];
        let shipped = shipped.split_whitespace().collect::<Vec<_>>().join(" ");
        for constant in [
            "constexpr bool DO_ONE_SEVERAL = false;",
            "constexpr unsigned int DO_FIXED_FLAGS = DO_DEFAULT_FLAGS;",
        ] {
            assert!(shipped.contains(constant), "{constant} in {shipped}");
        }

        // (SEVERAL, FIXED) of each entry point: one device, several, the run-time builds.
        let fixed = "groute::DO_FIXED_FLAGS";
        for (name, several, flags) in [
            ("bfs_direction_fused_one", "groute::DO_ONE_SEVERAL", fixed),
            ("bfs_direction_fused_several", "true", fixed),
            ("bfs_direction_fused", "true", "0u"),
            ("bfs_direction_fused_occupancy", "true", "0u"),
        ] {
            let args = entry_arguments(source, name);
            assert_eq!(args.len(), 3, "{name}: {args:?}");
            assert_eq!(
                (args[1].as_str(), args[2].as_str()),
                (several, flags),
                "{name}"
            );
        }
    }
}
