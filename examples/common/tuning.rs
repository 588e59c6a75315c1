//! Tuning flags: hidden from `--help`, listed by `--help-tuning`, and also read from the
//! `GROUTE_TUNING` environment variable (its words are appended to the command line).
//!
//! The fused-kernel knobs of the traversals (BFS, SSSP) live here; each example keeps its
//! own algorithm-specific tuning flags beside its visible ones, all `hide = true`.

use std::ffi::OsString;

use clap::{Args, Parser};
use groute::Execution;
use groute::worklist::WorklistOptions;
use groute::worklist::traversal::{FUSED_SPIN_NS, FusedBarrier, FusedDriver, FusedMode};

/// The environment variable whose words are appended to every example's command line.
pub const TUNING_ENV: &str = "GROUTE_TUNING";

/// The command line a run uses: the process's arguments, then the words of `GROUTE_TUNING`.
pub fn effective_args() -> Vec<OsString> {
    let mut args: Vec<OsString> = std::env::args_os().collect();
    if let Some(extra) = std::env::var_os(TUNING_ENV) {
        args.extend(
            extra
                .to_string_lossy()
                .split_whitespace()
                .map(OsString::from),
        );
    }
    args
}

/// The command line as text, for reports.
pub fn command_line() -> Vec<String> {
    effective_args()
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect()
}

/// Parses the example's flags from [`effective_args`]; `--help-tuning` prints the tuning
/// flags and exits 0, errors exit as clap's do.
pub fn parse<C: Parser>() -> C {
    super::quiet_on_closed_pipe();
    let mut command = C::command();
    let matches = match command.clone().try_get_matches_from(effective_args()) {
        Ok(matches) => matches,
        Err(e) => exit_naming_the_variable(e),
    };
    let asked = matches
        .try_get_one::<bool>("help_tuning")
        .ok()
        .flatten()
        .copied()
        .unwrap_or(false);
    if asked {
        print!("{}", tuning_help(&command));
        std::process::exit(0);
    }
    match C::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => e.format(&mut command).exit(),
    }
}

/// Exits as clap does on `e`; an error while `GROUTE_TUNING` is set also names the variable,
/// whose words the command line the error speaks of ends with.
fn exit_naming_the_variable(e: clap::Error) -> ! {
    let set = std::env::var_os(TUNING_ENV).filter(|words| !words.is_empty());
    match set {
        Some(words) if e.use_stderr() => {
            let _ = e.print();
            eprintln!(
                "note: {TUNING_ENV}=\"{}\" appended its words to the command line",
                words.to_string_lossy()
            );
            std::process::exit(e.exit_code())
        }
        _ => e.exit(),
    }
}

/// The hidden flags of `command` with their help, one paragraph each.
pub fn tuning_help(command: &clap::Command) -> String {
    let mut text = format!(
        "Tuning flags of {} (hidden from --help; also read from {TUNING_ENV}, e.g. \
         {TUNING_ENV}=\"--flag value\"):\n",
        command.get_name()
    );
    for arg in command.get_arguments().filter(|a| a.is_hide_set()) {
        let Some(long) = arg.get_long() else { continue };
        let value = match arg.get_value_names() {
            Some(names) if arg.get_action().takes_values() => {
                names.iter().map(|n| format!(" <{n}>")).collect::<String>()
            }
            _ => String::new(),
        };
        let help = arg
            .get_long_help()
            .or(arg.get_help())
            .map(|h| h.to_string())
            .unwrap_or_default();
        text += &format!("\n  --{long}{value}\n");
        for line in help.lines() {
            text += &format!("      {line}\n");
        }
    }
    text
}

/// The worklist sizes of the worklist traversals (BFS, SSSP).
#[derive(Args, Debug, Clone)]
pub struct WorklistArgs {
    /// Items each device's local worklist holds (default: sized from the graph).
    #[arg(long, hide = true, value_name = "ITEMS")]
    pub wl_capacity: Option<usize>,
    /// Items per ring packet.
    #[arg(long, hide = true, value_name = "ITEMS")]
    pub packet_size: Option<usize>,
}

impl WorklistArgs {
    /// Sets `options`' local worklist capacity to the flag's (sized from the graph where it
    /// is absent) and its packet size where the flag is given.
    pub fn apply(&self, options: &mut WorklistOptions) {
        options.wl_capacity = self.wl_capacity;
        if let Some(p) = self.packet_size {
            options.packet_size = p;
        }
    }
}

/// Tuning of the fused persistent kernels of the traversals (BFS, SSSP).
#[derive(Args, Debug, Clone)]
pub struct FusedArgs {
    /// Run the whole traversal as one persistent kernel (CUDA, one device; the default there;
    /// soft priority, --prio-delta, runs inside it); on several devices, run each device's
    /// levels in bounded fused launches between exchanges (--fused-round-levels). The host
    /// backend ignores it.
    #[arg(long, hide = true, conflicts_with = "no_fused")]
    pub fused: bool,
    /// One kernel launch per level (the default of runs on several devices over dense graphs).
    #[arg(long, hide = true)]
    pub no_fused: bool,
    /// Bounded fused rounds on several devices (sparse graphs, or --fused): levels of one
    /// launch, after which a device returns to its host to exchange updates (default 64).
    #[arg(long, hide = true, value_name = "LEVELS")]
    pub fused_round_levels: Option<u32>,
    /// How fused runs on several devices are driven: `device` (one persistent kernel per
    /// device for the whole run, the devices exchanging items over their peer links and
    /// detecting termination themselves), `host` (bounded fused rounds between the host's
    /// exchanges, --fused-round-levels) or `auto` (device where every pair of GPUs has peer
    /// access or the members share GPUs, the default). On one GPU, `device` runs the members'
    /// kernel in a group of one (to measure what the device-driven build costs); with more
    /// devices than GPUs, members share GPUs, each on its share of one.
    #[arg(long, hide = true, value_name = "DRIVER", value_parser = parse_fused_driver)]
    pub fused_driver: Option<FusedDriver>,
    /// Blocks of the fused kernel (default: one per multiprocessor on graphs of at most 8 arcs
    /// per vertex, else every block that fits resident at once, the most allowed; members of
    /// `--fused-driver device` sharing a GPU get their share of the GPU).
    #[arg(long, hide = true, value_name = "BLOCKS")]
    pub fused_grid: Option<u32>,
    /// Batches of at most this many items run in the fused kernel's single-block mode (levels
    /// back to back in one block, no grid barrier; 0: off; default: the threads of a block on
    /// graphs of at most 8 arcs per vertex, else off).
    #[arg(long, hide = true, value_name = "ITEMS")]
    pub fused_solo_max: Option<u32>,
    /// Threads per block of the fused kernel (a multiple of 32 up to 1024; default 1024 on
    /// graphs of at most 8 arcs per vertex, else 256).
    #[arg(long, hide = true, value_name = "THREADS")]
    pub fused_block: Option<u32>,
    /// Nanoseconds a block waiting at the fused kernel's grid barrier sleeps between polls
    /// (0: poll without sleeping; default 20).
    #[arg(long, hide = true, value_name = "NS")]
    pub fused_spin_ns: Option<u32>,
    /// Order the fused kernel's grid barrier with __threadfence() around relaxed atomics
    /// instead of PTX acquire/release operations.
    #[arg(long, hide = true)]
    pub fused_fenced_barrier: bool,
    /// Blocks waiting at the fused kernel's grid barrier poll its release record (tagged with
    /// the barrier's generation) instead of the generation word and then the record.
    #[arg(long, hide = true)]
    pub fused_tagged_barrier: bool,
    /// The fused kernel relaxes low-degree lists with atomicMin at once, without first reading
    /// the head's value (one memory round trip less per level; more atomics).
    #[arg(long, hide = true)]
    pub fused_direct_min: bool,
    /// The fused kernel's single-block mode keeps the next level's items and their adjacency
    /// ranges in shared memory (true, the default) or reads them from the worklist (false).
    #[arg(long, hide = true, value_name = "BOOL")]
    pub fused_solo_shared: Option<bool>,
    /// --fused-direct-min for the single-block mode's levels only.
    #[arg(long, hide = true)]
    pub fused_solo_direct_min: bool,
    /// The fused kernel's single-block mode runs on a cluster of 4 blocks (true) or on one
    /// block (false), where the GPU and the graph allow it (compute capability 9.0, one device
    /// or the members of a device-driven run, adjacency lists under 32 arcs; members sharing
    /// a GPU run it only if all of them can). Default: on (faster for BFS and SSSP).
    #[arg(long, hide = true, value_name = "BOOL")]
    pub fused_cluster: Option<bool>,
}

impl FusedArgs {
    /// The mode these flags ask for; with neither `--fused` nor `--no-fused`, the one
    /// `--execution` maps to.
    pub fn mode(&self, execution: Execution) -> FusedMode {
        match (self.fused, self.no_fused) {
            (true, _) => FusedMode::On,
            (false, true) => FusedMode::Off,
            (false, false) => execution.fused_mode(),
        }
    }

    /// The driver of fused runs on `devices` devices: `--fused-driver`, else for device-driven
    /// execution on several devices their persistent members, for host-driven execution
    /// bounded rounds, else auto (one device runs its own persistent kernel).
    pub fn driver(&self, execution: Execution, devices: usize) -> FusedDriver {
        self.fused_driver.unwrap_or(match execution {
            Execution::DeviceDriven if devices > 1 => FusedDriver::Device,
            Execution::HostDriven => FusedDriver::Host,
            _ => FusedDriver::Auto,
        })
    }

    /// Writes the mode, driver and kernel knobs for a run on `devices` devices into
    /// worklist options.
    pub fn apply(&self, execution: Execution, devices: usize, options: &mut WorklistOptions) {
        options.fused = self.mode(execution);
        options.fused_tuning.grid = self.fused_grid;
        options.fused_tuning.round_levels = self.fused_round_levels;
        options.fused_driver = self.driver(execution, devices);
        options.fused_tuning.solo_max = self.fused_solo_max;
        options.fused_tuning.block = self.fused_block;
        options.fused_tuning.barrier = FusedBarrier {
            spin_ns: self.fused_spin_ns.unwrap_or(FUSED_SPIN_NS),
            fenced: self.fused_fenced_barrier,
            tagged: self.fused_tagged_barrier,
        };
        options.fused_tuning.direct_min = self.fused_direct_min;
        if let Some(shared) = self.fused_solo_shared {
            options.fused_tuning.solo_shared = shared;
        }
        options.fused_tuning.solo_direct_min = self.fused_solo_direct_min;
        options.fused_tuning.cluster = self.fused_cluster;
    }
}

/// `--fused-driver auto|device|host`.
fn parse_fused_driver(s: &str) -> Result<FusedDriver, String> {
    match s {
        "auto" => Ok(FusedDriver::Auto),
        "device" => Ok(FusedDriver::Device),
        "host" => Ok(FusedDriver::Host),
        other => Err(format!("`{other}`: give auto, device or host")),
    }
}
