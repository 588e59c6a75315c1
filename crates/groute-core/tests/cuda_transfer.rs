//! `Device::upload`, `download` and `download_into` on a GPU: exact across the pinned chunks'
//! boundaries, ordered after the device stream's work, and reusable run after run.
//!
//! With `GROUTE_TEST_CUDA=1` the CUDA backend is mandatory: these tests FAIL when no GPU (or no
//! driver) is found. Without it they print why they skip.

use groute_core::{BackendChoice, Context, DeviceId, STAGING_CHUNK_BYTES};

fn cuda(test: &str) -> Option<Context> {
    match Context::builder()
        .devices(1)
        .backend(BackendChoice::Cuda)
        .build()
    {
        Ok(c) => Some(c),
        Err(e) if std::env::var("GROUTE_TEST_CUDA").as_deref() == Ok("1") => {
            panic!("{test}: GROUTE_TEST_CUDA=1 but the CUDA backend failed: {e}")
        }
        Err(e) => {
            eprintln!("{test}: SKIPPED (set GROUTE_TEST_CUDA=1 on a GPU machine): {e}");
            None
        }
    }
}

fn pattern(len: usize, seed: u64) -> Vec<u64> {
    (0..len as u64)
        .map(|i| (i ^ seed).wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .collect()
}

#[test]
fn round_trips_are_exact_across_chunk_boundaries() {
    let Some(ctx) = cuda("round_trips_are_exact_across_chunk_boundaries") else {
        return;
    };
    let device = ctx.device(DeviceId(0)).unwrap();
    let chunk = STAGING_CHUNK_BYTES / 8;
    for (seed, len) in [
        0,
        1,
        1000,
        chunk - 1,
        chunk,
        chunk + 1,
        2 * chunk,
        3 * chunk + 5,
    ]
    .into_iter()
    .enumerate()
    {
        let data = pattern(len, seed as u64);
        let buffer = device.upload(&data).unwrap();
        assert_eq!(device.download(&buffer).unwrap(), data, "{len} elements");
        // A sub-range at an odd offset, into the middle of a larger slice.
        if len > 10 {
            let mut into = vec![u64::MAX; len];
            let part = buffer.slice(3..len).unwrap();
            device.download_into(&part, &mut into[2..len - 1]).unwrap();
            assert_eq!(&into[2..len - 1], &data[3..], "{len} elements, sub-range");
            assert_eq!([into[0], into[1], into[len - 1]], [u64::MAX; 3]);
        }
    }
}

#[test]
fn a_download_sees_the_streams_earlier_work_every_run() {
    let Some(ctx) = cuda("a_download_sees_the_streams_earlier_work_every_run") else {
        return;
    };
    let device = ctx.device(DeviceId(0)).unwrap();
    let len = 3 * STAGING_CHUNK_BYTES / 4 + 7;
    let buffer = device.alloc::<u32>(len).unwrap();
    for run in 0..5u32 {
        // Enqueued, not waited for: the download must order itself after it.
        device.stream().fill(&buffer, 0xC0DE_0000 + run).unwrap();
        let got = device.download(&buffer).unwrap();
        assert!(
            got.iter().all(|&x| x == 0xC0DE_0000 + run),
            "run {run}: a value other than the fill's"
        );
    }
}

#[test]
fn a_download_into_a_slice_of_another_length_is_an_error() {
    let Some(ctx) = cuda("a_download_into_a_slice_of_another_length_is_an_error") else {
        return;
    };
    let device = ctx.device(DeviceId(0)).unwrap();
    let buffer = device.upload(&[1u32, 2, 3]).unwrap();
    let err = device.download_into(&buffer, &mut [0u32; 4]).unwrap_err();
    assert!(err.to_string().contains('4'), "{err}");
}
