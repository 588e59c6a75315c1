//! Fault injection for the host backend: devices that stop, devices that panic, links whose
//! copies stall. Tests use it to check that a failing device ends a run with an error naming
//! it, within a bounded time, instead of hanging (see `docs/device-protocol.md`).

/// One injected fault.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Host device `device` stops executing stream operations after it has run `after_ops`
    /// of them: later operations stay queued and never complete (a hung device).
    Stop {
        /// The host device (executor).
        device: usize,
        /// Operations it runs first.
        after_ops: u64,
    },
    /// Host device `device` panics in the operation after the first `after_ops` (a crashed
    /// device).
    Panic {
        /// The host device (executor).
        device: usize,
        /// Operations it runs first.
        after_ops: u64,
    },
    /// Every copy from memory of host device `from` to memory of host device `to` stalls:
    /// the stream it is enqueued on blocks before it, for good (a hung link).
    StallCopies {
        /// Device holding the copies' source.
        from: usize,
        /// Device holding the copies' destination.
        to: usize,
    },
}

/// A set of faults to inject ([`crate::ContextBuilder::faults`]); empty by default, and then
/// the backend pays nothing for it.
#[doc(hidden)]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FaultPlan {
    faults: Vec<Fault>,
}

impl FaultPlan {
    /// No faults.
    pub fn new() -> Self {
        FaultPlan::default()
    }

    /// Adds [`Fault::Stop`].
    pub fn stop_device(mut self, device: usize, after_ops: u64) -> Self {
        self.faults.push(Fault::Stop { device, after_ops });
        self
    }

    /// Adds [`Fault::Panic`].
    pub fn panic_device(mut self, device: usize, after_ops: u64) -> Self {
        self.faults.push(Fault::Panic { device, after_ops });
        self
    }

    /// Adds [`Fault::StallCopies`].
    pub fn stall_copies(mut self, from: usize, to: usize) -> Self {
        self.faults.push(Fault::StallCopies { from, to });
        self
    }

    /// Whether the plan injects nothing.
    pub fn is_empty(&self) -> bool {
        self.faults.is_empty()
    }

    /// The faults.
    pub fn faults(&self) -> &[Fault] {
        &self.faults
    }

    /// The faults of executor `device`: (stop after, panic after).
    pub(crate) fn for_device(&self, device: usize) -> DeviceFaults {
        let mut out = DeviceFaults::default();
        for f in &self.faults {
            match *f {
                Fault::Stop {
                    device: d,
                    after_ops,
                } if d == device => {
                    out.stop_after = Some(out.stop_after.map_or(after_ops, |s| s.min(after_ops)));
                }
                Fault::Panic {
                    device: d,
                    after_ops,
                } if d == device => {
                    out.panic_after = Some(out.panic_after.map_or(after_ops, |s| s.min(after_ops)));
                }
                _ => {}
            }
        }
        out
    }

    /// Whether copies from device `from` to device `to` stall.
    pub(crate) fn stalls_copy(&self, from: usize, to: usize) -> bool {
        self.faults.contains(&Fault::StallCopies { from, to })
    }
}

/// The faults one executor injects.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct DeviceFaults {
    pub(crate) stop_after: Option<u64>,
    pub(crate) panic_after: Option<u64>,
}

impl DeviceFaults {
    pub(crate) fn any(&self) -> bool {
        self.stop_after.is_some() || self.panic_after.is_some()
    }
}
