//! How a run is made and what it writes: devices, backend, execution, repeats, validation,
//! outputs (`--devices`, `--backend`, `--execution`, `--repeat`, `--validate`, `--output`,
//! `--json`, `--device-memory-limit`), and the context they build.

use std::path::{Path, PathBuf};

use clap::Args;
use groute::Execution;
use groute::core::{BackendChoice, ByteSize, Context, Jitter};

use super::AnyError;

/// Devices, backend, execution, repeats, validation and outputs: the same flags in every
/// example.
#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// Number of (virtual) devices, 1 to 256; they map round-robin onto the GPUs present.
    #[arg(long, default_value_t = 1)]
    pub devices: usize,
    /// Backend: auto (CUDA when a GPU is usable, else host), host or cuda.
    #[arg(long, value_name = "BACKEND", default_value = "auto")]
    pub backend: String,
    /// Who drives the run: auto (picked from the graph and devices), host-driven, device-driven.
    #[arg(long, value_name = "MODE", default_value_t = Execution::Auto)]
    pub execution: Execution,
    /// Timed runs (after one untimed warm-up when more than 1); the report gives median, min, max.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub repeat: usize,
    /// Compare the result with the sequential reference (`--check` is an alias).
    #[arg(long, alias = "check")]
    pub validate: bool,
    /// Write the result per vertex to this file (input numbering).
    #[arg(long, value_name = "PATH")]
    pub output: Option<PathBuf>,
    /// Write the JSON report (docs/report.schema.json) to PATH, or to stdout without PATH.
    #[arg(long, value_name = "PATH", num_args = 0..=1, default_missing_value = "-")]
    pub json: Option<PathBuf>,
    /// Most bytes each device may hold (512M, 8G, plain bytes); past it a run fails cleanly.
    #[arg(long, value_name = "SIZE")]
    pub device_memory_limit: Option<ByteSize>,
    /// List the tuning flags (also read from the GROUTE_TUNING environment variable) and exit.
    #[arg(long)]
    pub help_tuning: bool,
    /// Host backend only: randomise the schedule with this seed (testing).
    #[arg(long, value_name = "SEED", hide = true)]
    pub jitter: Option<u64>,
}

impl RunArgs {
    /// Whether the JSON report goes to stdout (the human table is then not printed).
    pub fn json_on_stdout(&self) -> bool {
        self.json.as_deref() == Some(Path::new("-"))
    }

    /// Whether progress bars should stay quiet (JSON on stdout).
    pub fn quiet(&self) -> bool {
        self.json_on_stdout()
    }

    /// `--repeat`, checked to be at least 1.
    pub fn repeats(&self) -> Result<usize, AnyError> {
        if self.repeat == 0 {
            return Err("--repeat 0: give at least 1".into());
        }
        Ok(self.repeat)
    }

    /// The backend asked for.
    pub fn backend_choice(&self) -> Result<BackendChoice, AnyError> {
        Ok(self.backend.parse::<BackendChoice>()?)
    }

    /// The context for these flags; prints the fallback note when auto chose the host.
    pub fn context(&self) -> Result<Context, AnyError> {
        let mut builder = Context::builder()
            .devices(self.devices)
            .backend(self.backend_choice()?)
            .jitter(self.jitter.map(Jitter::seeded));
        if let Some(limit) = self.device_memory_limit {
            builder = builder.device_memory_limit(limit.bytes());
        }
        let ctx = builder.build()?;
        if let Some(note) = ctx.fallback_note() {
            eprintln!("note: {note}");
        }
        Ok(ctx)
    }
}
