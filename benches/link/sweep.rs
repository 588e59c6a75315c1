//! What the throughput bench sweeps, and the summary table it prints at the end.

use std::time::Instant;

use groute::prelude::CopyMethod;

/// The benchmark-id suffix of a copy method: none for DMA, `_sm` for the copy kernel with its
/// default blocks per copy, `_sm<blocks>` otherwise.
pub fn method_suffix(method: CopyMethod) -> String {
    match method {
        CopyMethod::Dma => String::new(),
        CopyMethod::Kernel { blocks } if blocks == CopyMethod::DEFAULT_KERNEL_BLOCKS => {
            "_sm".to_string()
        }
        CopyMethod::Kernel { blocks } => format!("_sm{blocks}"),
    }
}

/// One link setting: packet size in bytes, copy streams, receive buffers, whether the
/// source device issues the copies (push) instead of the destination (pull), and how the
/// copies are made.
#[derive(Clone, Copy, Debug)]
pub struct LinkVariant {
    pub packet_bytes: usize,
    pub streams: usize,
    pub buffers: usize,
    pub push: bool,
    pub method: CopyMethod,
}

impl LinkVariant {
    /// The benchmark id, e.g. `link_4MiB_s2_b8` (`..._push` when the source issues, then
    /// `_sm` when the copy kernel copies, see [`method_suffix`]).
    pub fn id(&self) -> String {
        let push = if self.push { "_push" } else { "" };
        format!(
            "link_{}_s{}_b{}{push}{}",
            size(self.packet_bytes),
            self.streams,
            self.buffers,
            method_suffix(self.method)
        )
    }
}

/// One raw packet train: packet size in bytes, streams, whether the source device issues
/// the copies (push) instead of the destination (pull), and how the copies are made.
#[derive(Clone, Copy, Debug)]
pub struct RawVariant {
    pub packet_bytes: usize,
    pub streams: usize,
    pub push: bool,
    pub method: CopyMethod,
}

impl RawVariant {
    /// The benchmark id, e.g. `raw_packets_4MiB_s2` (`..._push` when the source issues);
    /// copy-kernel trains are `raw_sm_packets_4MiB_s2_push` (`raw_sm128_packets_...` with
    /// 128 blocks per copy instead of the default).
    pub fn id(&self) -> String {
        let push = if self.push { "_push" } else { "" };
        let method = match method_suffix(self.method) {
            m if m.is_empty() => m,
            m => m.trim_start_matches('_').to_string() + "_",
        };
        format!(
            "raw_{method}packets_{}_s{}{push}",
            size(self.packet_bytes),
            self.streams
        )
    }
}

/// `4MiB`, `64KiB`.
pub fn size(bytes: usize) -> String {
    if bytes >= 1 << 20 {
        format!("{}MiB", bytes >> 20)
    } else {
        format!("{}KiB", bytes >> 10)
    }
}

const MIB: usize = 1 << 20;

/// The routes a throughput run covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// Device 0 -> device 1 with peer access.
    Peer,
    /// Device 0 -> device 1 staged through host memory (peer access off).
    Staged,
    /// Host -> device 0.
    HostToDevice,
}

impl Route {
    /// The link settings swept on this route.
    pub fn link_variants(self) -> Vec<LinkVariant> {
        let v = |packet_bytes, streams, buffers| LinkVariant {
            packet_bytes,
            streams,
            buffers,
            push: false,
            method: CopyMethod::Dma,
        };
        let push = |packet_bytes, streams, buffers| LinkVariant {
            push: true,
            ..v(packet_bytes, streams, buffers)
        };
        let sm = |variant: LinkVariant| LinkVariant {
            method: CopyMethod::kernel(),
            ..variant
        };
        match self {
            Route::Peer => {
                let mut out: Vec<LinkVariant> = [64 << 10, 256 << 10, 64 * MIB]
                    .into_iter()
                    .map(|p| v(p, 1, 4))
                    .collect();
                for p in [MIB, 4 * MIB, 16 * MIB] {
                    for s in [1, 2, 4] {
                        for b in [4, 8] {
                            out.push(v(p, s, b));
                        }
                    }
                }
                out.extend([
                    push(4 * MIB, 1, 4),
                    push(4 * MIB, 2, 4),
                    push(4 * MIB, 4, 4),
                    push(16 * MIB, 2, 4),
                ]);
                // The copy kernel, pushed by the source (it reads locally and stores into the
                // peer), and one pulled for comparison.
                for p in [MIB, 4 * MIB, 16 * MIB] {
                    for s in [1, 2, 4] {
                        out.push(sm(push(p, s, 4)));
                    }
                }
                out.extend([sm(push(4 * MIB, 2, 8)), sm(v(4 * MIB, 2, 4))]);
                // More copies in flight at 4 MiB: 8 streams, and 128 blocks per copy (one
                // pass of 4 x 16-byte words per thread over the packet).
                let sm128 = |variant: LinkVariant| LinkVariant {
                    method: CopyMethod::Kernel { blocks: 128 },
                    ..variant
                };
                out.extend([
                    sm(push(4 * MIB, 8, 4)),
                    sm(push(4 * MIB, 8, 8)),
                    sm128(push(4 * MIB, 4, 4)),
                    sm128(push(4 * MIB, 8, 8)),
                ]);
                out
            }
            Route::Staged => vec![
                v(4 * MIB, 1, 4),
                v(4 * MIB, 2, 4),
                v(4 * MIB, 4, 4),
                v(16 * MIB, 1, 4),
                v(16 * MIB, 2, 4),
                push(4 * MIB, 2, 4),
            ],
            Route::HostToDevice => vec![v(4 * MIB, 1, 4), v(4 * MIB, 2, 4)],
        }
    }

    /// The raw packet trains measured on this route.
    pub fn raw_variants(self) -> Vec<RawVariant> {
        let v = |packet_bytes, streams, push| RawVariant {
            packet_bytes,
            streams,
            push,
            method: CopyMethod::Dma,
        };
        let sm = |packet_bytes, streams, push, blocks| RawVariant {
            method: CopyMethod::Kernel { blocks },
            ..v(packet_bytes, streams, push)
        };
        let blocks = CopyMethod::DEFAULT_KERNEL_BLOCKS;
        match self {
            Route::Peer => {
                let mut out = Vec::new();
                for p in [MIB, 4 * MIB, 16 * MIB] {
                    for s in [1, 2, 4] {
                        out.push(v(p, s, false));
                    }
                }
                out.push(v(4 * MIB, 1, true));
                out.push(v(4 * MIB, 4, true));
                // Copy-kernel trains: pushed at the default blocks per copy, a blocks sweep at
                // 4 MiB on 2 streams, and one pulled.
                for p in [MIB, 4 * MIB, 16 * MIB] {
                    for s in [1, 2, 4] {
                        out.push(sm(p, s, true, blocks));
                    }
                }
                for b in [16, 32, 128, 256] {
                    out.push(sm(4 * MIB, 2, true, b));
                }
                out.push(sm(4 * MIB, 2, false, blocks));
                for (streams, b) in [(8, blocks), (4, 128), (8, 128), (8, 32)] {
                    out.push(sm(4 * MIB, streams, true, b));
                }
                out
            }
            Route::Staged => vec![v(4 * MIB, 1, false), v(4 * MIB, 2, false)],
            Route::HostToDevice => vec![v(4 * MIB, 1, false), v(4 * MIB, 2, false)],
        }
    }
}

/// Timed runs per row of the summary (after one warm-up run); the row shows their median.
const RUNS: usize = 7;

/// One row of the summary: what ran and how fast.
struct Row {
    route: String,
    what: String,
    packet_bytes: Option<usize>,
    gib_per_s: f64,
}

/// The summary table: every measurement against the route's whole raw copy and the best raw
/// packet train of the same packet size.
#[derive(Default)]
pub struct Table {
    rows: Vec<Row>,
}

impl Table {
    /// Times `run` (one transfer of `bytes`) and adds a row.
    pub fn measure(
        &mut self,
        route: &str,
        what: &str,
        packet_bytes: Option<usize>,
        bytes: usize,
        mut run: impl FnMut(),
    ) {
        run();
        let mut secs: Vec<f64> = (0..RUNS)
            .map(|_| {
                let t = Instant::now();
                run();
                t.elapsed().as_secs_f64()
            })
            .collect();
        secs.sort_by(f64::total_cmp);
        let median = secs[RUNS / 2];
        self.rows.push(Row {
            route: route.to_string(),
            what: what.to_string(),
            packet_bytes,
            gib_per_s: bytes as f64 / median / f64::from(1u32 << 30),
        });
    }

    /// Prints the table (stderr, so it shows beside criterion's output).
    pub fn print(&self) {
        eprintln!(
            "\nlink throughput summary (median of {RUNS} runs; % of the route's raw_copy and of the best raw_packets train of the same packet size):"
        );
        eprintln!(
            "{:<22} {:<32} {:>9} {:>8} {:>10}",
            "route", "variant", "GiB/s", "%copy", "%packets"
        );
        for r in &self.rows {
            let whole = self
                .rows
                .iter()
                .find(|q| q.route == r.route && q.what == "raw_copy")
                .map(|q| q.gib_per_s);
            let train = self
                .rows
                .iter()
                .filter(|q| {
                    q.route == r.route
                        && q.what.starts_with("raw_packets")
                        && q.packet_bytes == r.packet_bytes
                })
                .map(|q| q.gib_per_s)
                .reduce(f64::max);
            let pct = |base: Option<f64>| {
                base.map_or("-".to_string(), |b| {
                    format!("{:.0}%", 100.0 * r.gib_per_s / b)
                })
            };
            eprintln!(
                "{:<22} {:<32} {:>9.1} {:>8} {:>10}",
                r.route,
                r.what,
                r.gib_per_s,
                pct(whole),
                pct(train)
            );
        }
    }
}
