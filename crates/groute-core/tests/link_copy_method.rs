//! Copies made by the copy kernel ([`CopyMethod::Kernel`]): every byte of odd-sized,
//! unaligned messages through links and through [`Stream::copy_with`], with the bytes around
//! the destination untouched; the kernel used exactly where it applies (CUDA device memory
//! the issuing device can address) and the copy engines elsewhere (host endpoints, the host
//! backend, devices without peer access); bad settings refused.
//!
//! On CUDA (`GROUTE_TEST_CUDA=1`) the two devices are two GPUs where present, or two virtual
//! devices of one GPU.

mod common;

use std::sync::Arc;

use common::{TIMEOUT, pairs};
use groute_core::backend::cuda::{CudaBackend, CudaOptions};
use groute_core::backend::{BackendKind, MemoryLocation};
use groute_core::cuda::kernel_copy_applies;
use groute_core::testing::{cuda_context, cuda_required, test_contexts};
use groute_core::{
    Buffer, Context, CopyIssuer, CopyMethod, DeviceId, Endpoint, Error, Event, Link, LinkConfig,
    Segment, Stream,
};

const SEEDS: &[u64] = &[11];

/// Pseudo-random bytes.
fn bytes(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u32).wrapping_mul(2_654_435_761).to_le_bytes()[3] ^ seed)
        .collect()
}

/// `data` on `endpoint`, placed `offset` bytes into its allocation, and its ready event.
fn unaligned_source(
    ctx: &Context,
    endpoint: Endpoint,
    data: &[u8],
    offset: usize,
) -> (Segment<u8>, Event) {
    let mut padded = vec![0xEE; offset];
    padded.extend_from_slice(data);
    let (buf, ready) = match endpoint {
        Endpoint::Device(d) => {
            let dev = ctx.device(d).unwrap();
            let buf = dev.upload(&padded).unwrap();
            (buf, dev.stream().record().unwrap())
        }
        _ => (ctx.host_buffer_from(&padded).unwrap(), Event::ready()),
    };
    let view = buf.slice(offset..).unwrap();
    (Segment::new(view, endpoint), ready)
}

/// The bytes of `buf` on `endpoint` once `ready` completes (downloaded by the device holding
/// them, or by device 0 for host memory).
fn read_bytes(ctx: &Context, endpoint: Endpoint, buf: &Buffer<u8>, ready: &Event) -> Vec<u8> {
    let reader = match endpoint {
        Endpoint::Device(d) => d,
        _ => DeviceId(0),
    };
    let dev = ctx.device(reader).unwrap();
    dev.stream().wait(ready).unwrap();
    dev.download(buf).unwrap()
}

/// Sends `messages` (each `(bytes, source offset)`) over `link` and checks that every byte
/// arrives at its offset, then end of stream.
fn check_link(ctx: &Context, link: &Link<u8>, messages: &[(Vec<u8>, usize)], what: &str) {
    let (src, dst) = (link.src(), link.dst());
    let mut sent = Vec::new();
    for (m, (data, offset)) in messages.iter().enumerate() {
        let (seg, ready) = unaligned_source(ctx, src, data, *offset);
        sent.push(link.send(seg.with_metadata(m as u64), ready).unwrap());
    }
    link.shutdown();
    let mut got: Vec<Vec<Option<u8>>> = messages.iter().map(|(d, _)| vec![None; d.len()]).collect();
    loop {
        match link.receive_timeout(TIMEOUT) {
            Ok(Some(p)) => {
                let s = p.segment();
                let data = read_bytes(ctx, dst, s.data(), p.ready());
                let message = &mut got[s.metadata() as usize];
                for (i, b) in data.into_iter().enumerate() {
                    assert!(
                        message[s.offset() + i].is_none(),
                        "{what}: byte delivered twice"
                    );
                    message[s.offset() + i] = Some(b);
                }
                p.release(Event::ready());
            }
            Ok(None) => break,
            Err(e) => panic!("{what}: {e}"),
        }
    }
    for s in sent {
        s.wait().unwrap();
    }
    for (m, ((want, _), got)) in messages.iter().zip(got).enumerate() {
        let got: Vec<u8> = got
            .into_iter()
            .map(|b| b.expect("every byte delivered"))
            .collect();
        assert!(got == *want, "{what}: message {m} differs");
    }
}

#[test]
fn kernel_method_links_deliver_every_byte_of_odd_unaligned_messages() {
    let methods = [
        CopyMethod::kernel(),
        CopyMethod::Kernel { blocks: 1 },
        CopyMethod::Kernel { blocks: 3 },
    ];
    // Packet sizes in bytes: below, around and well past one 16-byte vector, none a multiple
    // of 16 except one, so that consecutive packets start at every alignment.
    let packets = [1usize, 13, 16, 1000, 4099];
    let messages: Vec<(Vec<u8>, usize)> = [
        (1, 0),
        (17, 1),
        (4099, 3),
        (12_345, 4),
        (9_000, 8),
        (7_777, 21),
    ]
    .iter()
    .enumerate()
    .map(|(m, &(len, offset))| (bytes(len, m as u8), offset))
    .collect();
    for tc in test_contexts(2, SEEDS) {
        let ctx = &tc.context;
        for (src, dst) in pairs(ctx) {
            for (i, &packet) in packets.iter().enumerate() {
                let method = methods[i % methods.len()];
                let issuer = if i % 2 == 0 {
                    CopyIssuer::Source
                } else {
                    CopyIssuer::Destination
                };
                let config = LinkConfig::new(packet, 3)
                    .with_copy_streams(1 + i % 3)
                    .with_copy_issuer(issuer)
                    .with_copy_method(method);
                let link = Link::<u8>::new(ctx, src, dst, config).unwrap();
                // Single-byte packets: a short message list keeps the test quick.
                let msgs = if packet == 1 {
                    &messages[..2]
                } else {
                    &messages[..]
                };
                let what = format!(
                    "{} {src}->{dst} packet {packet} {method:?} {issuer:?}",
                    tc.label
                );
                check_link(ctx, &link, msgs, &what);
            }
        }
    }
}

#[test]
fn kernel_method_carries_large_unaligned_messages_between_gpus() {
    let Some(ctx) = cuda_context(2) else {
        return;
    };
    let (d0, d1) = (Endpoint::Device(DeviceId(0)), Endpoint::Device(DeviceId(1)));
    let messages = vec![
        (bytes((9 << 20) + 7, 1), 5),
        (bytes((4 << 20) + 3, 2), 16),
        (bytes(64 << 20, 3), 0),
    ];
    for (packet, streams) in [((4 << 20) + 3, 2), (1 << 20, 4), (16 << 20, 1)] {
        for (src, dst) in [(d0, d1), (d1, d0)] {
            let config = LinkConfig::new(packet, 4)
                .with_copy_streams(streams)
                .with_copy_method(CopyMethod::kernel());
            let link = Link::<u8>::new(&ctx, src, dst, config).unwrap();
            check_link(
                &ctx,
                &link,
                &messages,
                &format!("cuda {src}->{dst} packet {packet}"),
            );
        }
    }
}

/// Whether the copy kernel must apply between `a` and `b` of `ctx` (CUDA, and the same
/// physical device or peers with access).
fn kernel_expected(ctx: &Context, a: DeviceId, b: DeviceId) -> bool {
    let (pa, pb) = (
        ctx.device(a).unwrap().physical(),
        ctx.device(b).unwrap().physical(),
    );
    ctx.backend_kind() == BackendKind::Cuda && (pa == pb || ctx.backend().can_access_peer(pa, pb))
}

/// Copies with `stream` from `src_dev` to `dst_dev` for every length and pair of offsets,
/// checking the copied bytes and that the bytes around the destination are untouched.
fn check_copies(
    ctx: &Context,
    stream: &Stream,
    src_dev: DeviceId,
    dst_dev: DeviceId,
    lens: &[usize],
    what: &str,
) {
    let method = CopyMethod::kernel();
    let expected = kernel_expected(ctx, stream.device(), src_dev)
        && kernel_expected(ctx, stream.device(), dst_dev);
    const PAD: usize = 32;
    for &len in lens {
        for src_off in [0usize, 1, 4, 8, 16] {
            for dst_off in [0usize, 3, 8, 13] {
                let data = bytes(len + PAD, len as u8);
                let src = ctx.device(src_dev).unwrap().upload(&data).unwrap();
                let sentinel = vec![0xA5u8; len + 2 * PAD];
                let dst = ctx.device(dst_dev).unwrap().upload(&sentinel).unwrap();
                for d in [src_dev, dst_dev] {
                    let uploaded = ctx.device(d).unwrap().stream().record().unwrap();
                    stream.wait(&uploaded).unwrap();
                }
                let from = src.slice(src_off..src_off + len).unwrap();
                let to_start = PAD + dst_off;
                let to = dst.slice(to_start..to_start + len).unwrap();
                assert_eq!(
                    kernel_copy_applies(stream.raw().as_ref(), &to.raw(), &from.raw()),
                    expected,
                    "{what}: where the kernel applies"
                );
                let done = stream.copy_and_record_with(&to, &from, method).unwrap();
                let got = read_bytes(ctx, Endpoint::Device(dst_dev), &dst, &done);
                let mut want = sentinel.clone();
                want[to_start..to_start + len].copy_from_slice(&data[src_off..src_off + len]);
                assert!(
                    got == want,
                    "{what}: len {len} src offset {src_off} dst offset {to_start}"
                );
            }
        }
    }
}

#[test]
fn copy_with_kernel_copies_any_length_at_any_offsets_and_nothing_else() {
    for tc in test_contexts(2, &[]) {
        let ctx = &tc.context;
        let mut lens = vec![0usize, 1, 15, 16, 17, 63, 255, 4096 + 9];
        if ctx.backend_kind() == BackendKind::Cuda {
            lens.extend([(1 << 20) + 3, (3 << 20) + 17]);
        }
        let (d0, d1) = (DeviceId(0), DeviceId(1));
        // Pushed by the source, pulled by the destination, and within one device.
        for (issuer, src, dst) in [(d0, d0, d1), (d1, d0, d1), (d1, d1, d1)] {
            let stream = ctx
                .device(issuer)
                .unwrap()
                .new_stream(Default::default())
                .unwrap();
            let what = format!("{} on {issuer:?}: {src:?}->{dst:?}", tc.label);
            check_copies(ctx, &stream, src, dst, &lens, &what);
        }
    }
}

#[test]
fn without_peer_access_the_kernel_method_falls_back_to_staged_copies() {
    if !cuda_required() {
        eprintln!("note: CUDA backend not tested (set GROUTE_TEST_CUDA=1 on a GPU machine)");
        return;
    }
    let backend = CudaBackend::with_options(CudaOptions { peer_access: false })
        .expect("GROUTE_TEST_CUDA=1 but the CUDA backend is unavailable");
    let ctx = Context::from_backend(Arc::new(backend), 2, None, None).unwrap();
    let (d0, d1) = (DeviceId(0), DeviceId(1));
    let stream = ctx
        .device(d0)
        .unwrap()
        .new_stream(Default::default())
        .unwrap();
    check_copies(
        &ctx,
        &stream,
        d0,
        d1,
        &[17, 70_001],
        "cuda, peer access off",
    );
    let config = LinkConfig::new(4099, 3).with_copy_method(CopyMethod::kernel());
    let link = Link::<u8>::new(&ctx, Endpoint::Device(d0), Endpoint::Device(d1), config).unwrap();
    let messages = vec![(bytes(100_003, 7), 3), (bytes(5, 8), 0)];
    check_link(&ctx, &link, &messages, "cuda, peer access off");
}

#[test]
fn host_memory_ends_keep_the_copy_engines() {
    for tc in test_contexts(1, &[]) {
        let ctx = &tc.context;
        let dev = &ctx.devices()[0];
        let on_device = dev.alloc::<u8>(64).unwrap();
        let on_host = ctx.alloc_host::<u8>(64).unwrap();
        assert_eq!(on_host.location(), MemoryLocation::PinnedHost);
        let raw = dev.stream().raw();
        for (to, from) in [(&on_device, &on_host), (&on_host, &on_device)] {
            assert!(
                !kernel_copy_applies(raw.as_ref(), &to.raw(), &from.raw()),
                "{}: a host end is never copied by the kernel",
                tc.label
            );
        }
    }
}

#[test]
fn kernel_block_counts_out_of_range_are_refused() {
    let ctx = Context::host(2).unwrap();
    let (d0, d1) = (Endpoint::Device(DeviceId(0)), Endpoint::Device(DeviceId(1)));
    for blocks in [0, CopyMethod::MAX_KERNEL_BLOCKS + 1] {
        let config = LinkConfig::new(16, 2).with_copy_method(CopyMethod::Kernel { blocks });
        let err = Link::<u8>::new(&ctx, d0, d1, config).unwrap_err();
        match &err {
            Error::InvalidSetting { setting, .. } => {
                assert_eq!(*setting, "copy_method blocks", "{err}")
            }
            other => panic!("expected InvalidSetting, got {other}"),
        }
        let dev = &ctx.devices()[0];
        let (a, b) = (dev.alloc::<u8>(8).unwrap(), dev.alloc::<u8>(8).unwrap());
        let refused = dev
            .stream()
            .copy_with(&a, &b, CopyMethod::Kernel { blocks })
            .unwrap_err();
        assert!(matches!(refused, Error::InvalidSetting { .. }), "{refused}");
    }
}
