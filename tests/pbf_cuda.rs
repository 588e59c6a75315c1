//! The PBF kernel (`kernels/pbf/pbf.cu`) on real GPUs, through its launch wrapper
//! [`groute::pbf::cuda::pbf_filter`] and through a cooperative launch.
//!
//! With `GROUTE_TEST_CUDA=1` the CUDA backend is mandatory: these tests FAIL when no GPU (or no
//! driver) is found. Without it they print why they skip.

use std::sync::Arc;
use std::time::Instant;

use groute::core::backend::cuda::{CudaBackend, CudaStream};
use groute::core::backend::{Backend, MemoryLocation, RawMemory, RawStream, StreamPriority};
use groute::core::cuda::{self, CudaModule, LaunchConfig};
use groute::core::testing::cuda_raw::{backend, pattern, pinned, read_host, whole, write_host};
use groute::pbf::Predicate;
use groute::pbf::cuda::pbf_filter;

/// The pbf kernel against a CPU filter, on every device, with normal and cooperative launch.
#[test]
fn pbf_kernel_matches_cpu_filter() {
    let Some(b) = backend("pbf_kernel_matches_cpu_filter") else {
        return;
    };
    for d in 0..b.physical_devices() {
        for (n, keep) in [
            (
                1usize,
                Predicate {
                    modulus: 1,
                    residue: 0,
                },
            ),
            (
                1000,
                Predicate {
                    modulus: 3,
                    residue: 1,
                },
            ),
            (
                5_000_003,
                Predicate {
                    modulus: 7,
                    residue: 2,
                },
            ),
        ] {
            let s: Arc<dyn RawStream> = b.create_stream(d, StreamPriority::Normal).unwrap();
            let input = pattern(n, 1234 + d as u32);
            let expect: Vec<u32> = input.iter().copied().filter(|&x| keep.keep(x)).collect();
            let (_h_in, d_in, d_out, d_count) = upload_for_filter(&b, &*s, d, &input);
            let t = Instant::now();
            pbf_filter(&*s, &whole(&d_in), &whole(&d_out), &whole(&d_count), keep).unwrap();
            let h_out = pinned(&b, n);
            let h_count = pinned(&b, 1);
            s.copy(&whole(&h_count), &whole(&d_count)).unwrap();
            s.copy(&whole(&h_out), &whole(&d_out)).unwrap();
            s.synchronize().unwrap();
            let count = read_host(&h_count, 1)[0] as usize;
            let mut got = read_host(&h_out, count);
            got.sort_unstable();
            let mut want = expect.clone();
            want.sort_unstable();
            assert_eq!(count, expect.len(), "device {d}, n {n}: count");
            assert_eq!(got, want, "device {d}, n {n}: kept elements");
            eprintln!(
                "pbf device {d} n {n}: kept {count} ({:.2} ms incl. first compile/load)",
                t.elapsed().as_secs_f64() * 1e3
            );
        }
        // Occupancy and a cooperative launch of the same kernel.
        let s = b.create_stream(d, StreamPriority::Normal).unwrap();
        let f = CudaModule::load(&*s, &groute_kernels::pbf::PBF)
            .unwrap()
            .function("pbf_filter_mod")
            .unwrap();
        let per_sm = f.max_active_blocks_per_multiprocessor(256, 0).unwrap();
        let grid = f.max_resident_grid(256, 0).unwrap();
        eprintln!("pbf occupancy on device {d}: {per_sm} blocks/SM of 256, resident grid {grid}");
        assert!(per_sm >= 1);
        let n = 100_000usize;
        let input = pattern(n, 5);
        let (_h_in, d_in, d_out, d_count) = upload_for_filter(&b, &*s, d, &input);
        s.fill_u32(&whole(&d_count), 0).unwrap();
        let args = (
            cuda::DevicePtr::<u32>::from_slice(&whole(&d_in)).unwrap(),
            n as u32,
            cuda::DevicePtr::<u32>::from_slice(&whole(&d_out)).unwrap(),
            cuda::DevicePtr::<u32>::from_slice(&whole(&d_count)).unwrap(),
            2u32,
            0u32,
        );
        // SAFETY: matches pbf_filter_mod(const unsigned*, unsigned, unsigned*, unsigned*,
        // unsigned, unsigned); the buffers hold n, n and 1 u32s and outlive the synchronize
        // below; the grid is the resident grid, as a cooperative launch requires.
        unsafe {
            f.launch_cooperative(&*s, LaunchConfig::linear(grid, 256), args)
                .unwrap()
        };
        let h_count = pinned(&b, 1);
        s.copy(&whole(&h_count), &whole(&d_count)).unwrap();
        s.synchronize().unwrap();
        let want = input.iter().filter(|&&x| x % 2 == 0).count();
        assert_eq!(
            read_host(&h_count, 1)[0] as usize,
            want,
            "cooperative launch count"
        );
        let _ = CudaStream::from_raw(&*s).unwrap();
    }
}

/// The pinned staging buffer and the device input, output and count of [`upload_for_filter`].
type Buffers = (
    Arc<dyn RawMemory>,
    Arc<dyn RawMemory>,
    Arc<dyn RawMemory>,
    Arc<dyn RawMemory>,
);

/// `input` enqueued on `s` for upload to device `d`, with room there for a filter's output (as
/// many words) and its count: the pinned staging buffer (keep it until `s` has run the copy),
/// the device input, output and count.
fn upload_for_filter(b: &CudaBackend, s: &dyn RawStream, d: usize, input: &[u32]) -> Buffers {
    let n = input.len();
    let h_in = pinned(b, n);
    write_host(&h_in, input);
    let d_in = b.allocate(MemoryLocation::Device(d), n * 4).unwrap();
    let d_out = b.allocate(MemoryLocation::Device(d), n * 4).unwrap();
    let d_count = b.allocate(MemoryLocation::Device(d), 4).unwrap();
    s.copy(&whole(&d_in), &whole(&h_in)).unwrap();
    (h_in, d_in, d_out, d_count)
}
