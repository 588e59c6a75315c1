//! `Stream::fill` on every backend (CUDA under `GROUTE_TEST_CUDA=1`): 4-byte elements take any
//! pattern, 8-byte elements a pattern of two equal halves, and anything else is refused with
//! an error naming the setting, never written.

use groute_core::testing::test_contexts;
use groute_core::{DeviceId, Error};

#[test]
fn fills_write_every_element_of_4_and_8_byte_buffers() {
    for tc in test_contexts(1, &[5]) {
        let ctx = &tc.context;
        let device = ctx.device(DeviceId(0)).expect("device 0");
        let stream = device.stream();
        let words = device.alloc::<u32>(1001).expect("alloc u32");
        stream.fill(&words, 0xDEAD_BEEF).expect("fill u32");
        let longs = device.alloc::<u64>(777).expect("alloc u64");
        for value in [0u64, u64::MAX, 0x1234_5678_1234_5678] {
            stream.fill(&longs, value).expect("fill u64");
            stream.synchronize().expect("sync");
            let back = device.download(&longs).expect("download u64");
            assert!(
                back.iter().all(|&x| x == value),
                "{}: u64 fill {value:#x} left {:#x?}",
                tc.label,
                back.iter().find(|&&x| x != value)
            );
        }
        let signed = device.alloc::<i64>(3).expect("alloc i64");
        stream.fill(&signed, -1).expect("fill i64");
        stream.synchronize().expect("sync");
        assert_eq!(device.download(&signed).expect("download i64"), vec![-1; 3]);
        assert!(
            device
                .download(&words)
                .expect("download u32")
                .iter()
                .all(|&x| x == 0xDEAD_BEEF),
            "{}: u32 fill",
            tc.label
        );
    }
}

#[test]
fn fills_with_unsupported_patterns_are_refused_and_write_nothing() {
    for tc in test_contexts(1, &[]) {
        let ctx = &tc.context;
        let device = ctx.device(DeviceId(0)).expect("device 0");
        let stream = device.stream();
        let longs = device.alloc::<u64>(16).expect("alloc u64");
        stream.fill(&longs, 0).expect("zero");
        let err = stream
            .fill(&longs, 0x0000_0001_0000_0002)
            .expect_err("unequal halves must be refused");
        assert!(
            matches!(err, Error::InvalidSetting { .. }) && err.to_string().contains("equal"),
            "{}: {err}",
            tc.label
        );
        let shorts = device.alloc::<u16>(16).expect("alloc u16");
        let err = stream
            .fill(&shorts, 3)
            .expect_err("2-byte fills are refused");
        assert!(err.to_string().contains("fill element size"), "{err}");
        stream.synchronize().expect("sync");
        assert_eq!(device.download(&longs).expect("download"), vec![0; 16]);
    }
}
