//! The raw baselines a link is judged against: one copy of the whole message, and the same
//! message as a train of packet-sized copies on 1..k streams (what a link could at best do
//! with copies of that size, before any link bookkeeping); each by the copy engines or by the
//! copy kernel ([`CopyMethod`]).

use groute::prelude::*;

/// One raw copy of `src` into `dst` on `stream` by `method`, synchronised.
pub fn whole_copy(stream: &Stream, dst: &Buffer<u32>, src: &Buffer<u32>, method: CopyMethod) {
    stream.copy_with(dst, src, method).expect("copy");
    stream.synchronize().expect("sync");
}

/// A train of raw packet copies: the message in `packet` element pieces, issued round-robin
/// on `streams` into `targets` in turn, then every stream synchronised.
///
/// Nothing orders a target's reuse across streams (a link waits for the previous copy into
/// a buffer; this baseline does not, since the data is never read): it measures the copies
/// alone.
pub struct PacketTrain {
    pub streams: Vec<Stream>,
    pub targets: Vec<Buffer<u32>>,
    pub packet: usize,
    pub method: CopyMethod,
}

impl PacketTrain {
    /// `streams` new high-priority streams on `issuer` and `targets` buffers of `packet`
    /// elements on `dst`; copies made by `method`.
    pub fn new(
        ctx: &Context,
        issuer: DeviceId,
        dst: DeviceId,
        streams: usize,
        targets: usize,
        packet: usize,
        method: CopyMethod,
    ) -> Self {
        let issuing = ctx.device(issuer).expect("device");
        let holding = ctx.device(dst).expect("device");
        PacketTrain {
            streams: (0..streams)
                .map(|_| issuing.new_stream(StreamPriority::High).expect("stream"))
                .collect(),
            targets: (0..targets)
                .map(|_| holding.alloc::<u32>(packet).expect("target buffer"))
                .collect(),
            packet,
            method,
        }
    }

    /// Copies all of `src`, packet by packet, and waits for every copy.
    pub fn run(&self, src: &Buffer<u32>) {
        let mut start = 0;
        let mut i = 0;
        while start < src.len() {
            let n = self.packet.min(src.len() - start);
            let stream = &self.streams[i % self.streams.len()];
            let target = &self.targets[i % self.targets.len()];
            let dst = target.slice(0..n).expect("target slice");
            let piece = src.slice(start..start + n).expect("source slice");
            stream.copy_with(&dst, &piece, self.method).expect("copy");
            start += n;
            i += 1;
        }
        for s in &self.streams {
            s.synchronize().expect("sync");
        }
    }
}
