//! Host-staged copies between GPUs without peer access, on real GPUs: copies larger than a
//! stream's staging ring, back-to-back copies that reuse the ring with no synchronize between
//! them, several streams and threads staging at once, and links over such a route.
//!
//! With `GROUTE_TEST_CUDA=1` the CUDA backend is mandatory (these tests FAIL without a GPU);
//! without it they print why they skip. Pairs of devices need two GPUs.

mod common;

use std::sync::Arc;

use common::data;

use groute_core::backend::cuda::{CudaBackend, CudaOptions};
use groute_core::backend::{Backend, MemoryLocation, RawMemory, RawSlice, StreamPriority};
use groute_core::{Context, CopyIssuer, DeviceId, Endpoint, LinkConfig};

const MIB_WORDS: usize = 1 << 18;

type Memory = Arc<dyn RawMemory>;

/// A backend with peer access off and at least two devices, or `None` (skipped, with why).
fn staged_backend(test: &str) -> Option<CudaBackend> {
    let required = std::env::var("GROUTE_TEST_CUDA").as_deref() == Ok("1");
    match CudaBackend::with_options(CudaOptions { peer_access: false }) {
        Ok(b) if b.physical_devices() >= 2 => Some(b),
        Ok(b) => {
            eprintln!(
                "{test}: SKIPPED: {} device(s), pairs need 2",
                b.physical_devices()
            );
            None
        }
        Err(e) if required => panic!("{test}: GROUTE_TEST_CUDA=1 but CUDA failed: {e}"),
        Err(e) => {
            eprintln!("{test}: SKIPPED (set GROUTE_TEST_CUDA=1 on a GPU machine): {e}");
            None
        }
    }
}

/// Words `start..start + len` of `m`.
fn words(m: &Arc<dyn RawMemory>, start: usize, len: usize) -> RawSlice {
    RawSlice {
        memory: m.clone(),
        offset: start * 4,
        len: len * 4,
    }
}

/// Device memory on `device` holding `data` (uploaded through pinned memory, synchronised).
fn upload(b: &CudaBackend, device: usize, data: &[u32]) -> Arc<dyn RawMemory> {
    let host = b
        .allocate(MemoryLocation::PinnedHost, data.len() * 4)
        .unwrap();
    let p = host.host_ptr().expect("pinned memory is host-addressable");
    // SAFETY: `p` points at a live pinned allocation of `data.len()` u32s, page-aligned, used
    // by no device work yet.
    unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), p.as_ptr().cast::<u32>(), data.len()) };
    let dev = b
        .allocate(MemoryLocation::Device(device), data.len() * 4)
        .unwrap();
    let s = b.create_stream(device, StreamPriority::Normal).unwrap();
    s.copy(&RawSlice::whole(dev.clone()), &RawSlice::whole(host))
        .unwrap();
    s.synchronize().unwrap();
    dev
}

/// The words of device memory `m` (downloaded through pinned memory, synchronised).
fn download(b: &CudaBackend, device: usize, m: &Arc<dyn RawMemory>) -> Vec<u32> {
    let n = m.len_bytes() / 4;
    let host = b.allocate(MemoryLocation::PinnedHost, n * 4).unwrap();
    let s = b.create_stream(device, StreamPriority::Normal).unwrap();
    s.copy(&RawSlice::whole(host.clone()), &RawSlice::whole(m.clone()))
        .unwrap();
    s.synchronize().unwrap();
    let p = host.host_ptr().expect("pinned memory is host-addressable");
    let mut out = vec![0u32; n];
    // SAFETY: as in `upload`; the stream that wrote it was synchronised.
    unsafe { std::ptr::copy_nonoverlapping(p.as_ptr().cast::<u32>(), out.as_mut_ptr(), n) };
    out
}

/// Copies of several sizes (one word, one chunk and a bit, several rings' worth) from device 0
/// to device 1, back to back on one stream with no synchronize between them, each into its own
/// target: every one lands intact, whichever device's stream issues them.
#[test]
fn back_to_back_staged_copies_reuse_the_ring_safely() {
    let Some(b) = staged_backend("back_to_back_staged_copies_reuse_the_ring_safely") else {
        return;
    };
    let n = 21 * MIB_WORDS + 5;
    let src = data(n, 7);
    let d0 = upload(&b, 0, &src);
    let sizes = [1, MIB_WORDS + 1, n, 3 * MIB_WORDS, n - 1];
    for on in [0, 1] {
        let s = b.create_stream(on, StreamPriority::High).unwrap();
        let targets: Vec<Arc<dyn RawMemory>> = sizes
            .iter()
            .map(|&len| b.allocate(MemoryLocation::Device(1), len * 4).unwrap())
            .collect();
        for (i, (&len, t)) in sizes.iter().zip(&targets).enumerate() {
            let start = (i * 12_345) % (n - len + 1);
            s.copy(&RawSlice::whole(t.clone()), &words(&d0, start, len))
                .unwrap();
        }
        s.synchronize().unwrap();
        for (i, (&len, t)) in sizes.iter().zip(&targets).enumerate() {
            let start = (i * 12_345) % (n - len + 1);
            assert!(
                download(&b, 1, t) == src[start..start + len],
                "copy {i} ({len} words) issued on device {on}'s stream"
            );
        }
    }
}

/// Four streams (two per device) on four threads stage copies at once, each many times over
/// into one target: the last copy's data is what every target holds.
#[test]
fn streams_on_several_threads_stage_at_once() {
    let Some(b) = staged_backend("streams_on_several_threads_stage_at_once") else {
        return;
    };
    let b = Arc::new(b);
    let n = 9 * MIB_WORDS + 1;
    let sources: Vec<(Vec<u32>, Arc<dyn RawMemory>)> = (0..4)
        .map(|k| {
            let data = data(n, 100 + k);
            let m = upload(&b, 0, &data);
            (data, m)
        })
        .collect();
    let threads: Vec<_> = sources
        .iter()
        .enumerate()
        .map(|(k, (data, m))| {
            let (b, m, want) = (Arc::clone(&b), m.clone(), data.clone());
            std::thread::spawn(move || {
                let on = k % 2;
                let s = b.create_stream(on, StreamPriority::High).unwrap();
                let t = b.allocate(MemoryLocation::Device(1), n * 4).unwrap();
                for round in 0..4 {
                    // Every round but the last copies a shifted window; the last the whole.
                    let len = if round == 3 { n } else { n - 1 - round };
                    let src = words(&m, n - len, len);
                    s.copy(&words(&t, n - len, len), &src).unwrap();
                }
                s.synchronize().unwrap();
                assert!(download(&b, 1, &t) == want, "thread {k} on device {on}");
            })
        })
        .collect();
    for t in threads {
        t.join().expect("a staging thread failed");
    }
}

/// Two threads share one stream and stage copies on it at once: their chunks never share
/// ring slots.
#[test]
fn two_threads_staging_on_one_stream_do_not_mix_their_chunks() {
    let Some(b) = staged_backend("two_threads_staging_on_one_stream_do_not_mix_their_chunks")
    else {
        return;
    };
    let n = 10 * MIB_WORDS + 7;
    let s = b.create_stream(1, StreamPriority::High).unwrap();
    let work: Vec<(Vec<u32>, Memory, Memory)> = (0..2)
        .map(|k| {
            let data = data(n, 200 + k);
            let src = upload(&b, 0, &data);
            let dst = b.allocate(MemoryLocation::Device(1), n * 4).unwrap();
            (data, src, dst)
        })
        .collect();
    std::thread::scope(|scope| {
        for (_, src, dst) in &work {
            let s = Arc::clone(&s);
            scope.spawn(move || {
                for _ in 0..3 {
                    s.copy(&RawSlice::whole(dst.clone()), &RawSlice::whole(src.clone()))
                        .unwrap();
                }
            });
        }
    });
    s.synchronize().unwrap();
    for (k, (data, _, dst)) in work.iter().enumerate() {
        assert!(download(&b, 1, dst) == *data, "thread {k}");
    }
}

/// A link between two devices without peer access (every packet staged through host memory),
/// with one or several copy streams, pulled or pushed: a message many packets long arrives
/// intact, packets released as soon as they are read.
#[test]
fn a_link_over_a_staged_route_delivers_every_packet_intact() {
    let Some(b) = staged_backend("a_link_over_a_staged_route_delivers_every_packet_intact") else {
        return;
    };
    let ctx = Context::from_backend(Arc::new(b), 2, None, None).unwrap();
    let (d0, d1) = (Endpoint::Device(DeviceId(0)), Endpoint::Device(DeviceId(1)));
    let n = 11 * MIB_WORDS + 9;
    let input = data(n, 31);
    let (seg, ready) = common::source(&ctx, d0, &input);
    for (packet, buffers, streams, issuer) in [
        (MIB_WORDS, 4, 1, CopyIssuer::Destination),
        (3 * MIB_WORDS + 1, 3, 2, CopyIssuer::Destination),
        (MIB_WORDS / 2, 4, 4, CopyIssuer::Destination),
        (2 * MIB_WORDS, 4, 2, CopyIssuer::Source),
    ] {
        let config = LinkConfig::new(packet, buffers)
            .with_copy_streams(streams)
            .with_copy_issuer(issuer);
        let link = common::new_link(&ctx, d0, d1, config);
        let sent = link.send(seg.clone(), ready.clone()).unwrap();
        link.shutdown();
        let mut got = vec![u32::MAX; n];
        for g in common::drain(&ctx, &link.receiver()) {
            got[g.offset..g.offset + g.data.len()].copy_from_slice(&g.data);
        }
        sent.wait().unwrap();
        assert!(got == input, "{config:?}");
    }
}
