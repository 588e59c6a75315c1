//! [`CudaBackend`]: the devices, their peer-access matrix and the backend-wide staging pool.

use std::any::Any;
use std::sync::Arc;

use super::device::DeviceInner;
use super::event::CudaEvent;
use super::memory::CudaMemory;
use super::staging::StagingPool;
use super::stream::CudaStream;
use super::sys;
use crate::backend::{
    Backend, BackendKind, DeviceProperties, EventKind, MemoryLocation, PhysicalDevice, RawEvent,
    RawMemory, RawStream, StreamPriority,
};
use crate::error::{Error, Result};

/// Settings of a [`CudaBackend`].
#[derive(Clone, Debug)]
pub struct CudaOptions {
    /// Enable peer access between every pair of devices that supports it (default `true`).
    /// With `false`, device-to-device copies go through pinned host staging buffers (useful to
    /// test that path, or to measure what peer access buys).
    pub peer_access: bool,
}

impl Default for CudaOptions {
    fn default() -> Self {
        CudaOptions { peer_access: true }
    }
}

/// State shared by the backend and its streams.
pub(crate) struct Shared {
    pub(crate) devices: Vec<Arc<DeviceInner>>,
    /// `peer[a][b]`: device `a` can read and write `b`'s memory (enabled, pool access granted).
    pub(crate) peer: Vec<Vec<bool>>,
    pub(crate) staging: Arc<StagingPool>,
}

/// NVIDIA GPUs through the CUDA driver API (the CUDA implementation of [`Backend`]).
///
/// One primary context and one service thread per device; non-blocking streams with
/// priorities; device memory from each device's stream-ordered pool (release threshold raised,
/// so steady-state allocation does not go back to the OS); peer access enabled wherever
/// `cuDeviceCanAccessPeer` allows, with pool access granted to the peer; pinned
/// (not write-combined) host staging memory; host-staged copies between devices without peer
/// access.
#[derive(Clone)]
pub struct CudaBackend {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for CudaBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaBackend")
            .field("devices", &self.shared.devices)
            .field("peer", &self.shared.peer)
            .finish()
    }
}

impl CudaBackend {
    /// Opens every visible CUDA device with default [`CudaOptions`].
    ///
    /// Never panics: without the driver library, with a driver too old, or without a device,
    /// this returns [`Error::CudaUnavailable`] saying which.
    pub fn new() -> Result<CudaBackend> {
        CudaBackend::with_options(CudaOptions::default())
    }

    /// Opens every visible CUDA device.
    pub fn with_options(options: CudaOptions) -> Result<CudaBackend> {
        sys::catch_driver_panic("starting the CUDA backend", || Self::open(options))
    }

    fn open(options: CudaOptions) -> Result<CudaBackend> {
        sys::init_driver()?;
        let n = sys::device_count()?;
        if n == 0 {
            return Err(Error::CudaUnavailable {
                reason: "the CUDA driver is installed but reports no device (check \
                         CUDA_VISIBLE_DEVICES and nvidia-smi)"
                    .into(),
            });
        }
        let devices = (0..n).map(DeviceInner::open).collect::<Result<Vec<_>>>()?;
        let mut peer = vec![vec![false; n]; n];
        for a in 0..n {
            for b in 0..n {
                if a == b || !options.peer_access {
                    continue;
                }
                if !sys::device_can_access_peer(devices[a].cu_device, devices[b].cu_device)? {
                    continue;
                }
                devices[a].bind()?;
                // SAFETY: `a`'s context is current and `b`'s context is retained.
                unsafe { sys::ctx_enable_peer_access(devices[b].ctx)? };
                // SAFETY: `b`'s default pool is live.
                unsafe { sys::mem_pool_grant_access(devices[b].pool, a)? };
                peer[a][b] = true;
            }
        }
        Ok(CudaBackend {
            shared: Arc::new(Shared {
                devices,
                peer,
                staging: Arc::new(StagingPool::default()),
            }),
        })
    }

    fn dev(&self, device: PhysicalDevice) -> Result<&Arc<DeviceInner>> {
        self.shared.devices.get(device).ok_or(Error::NoSuchDevice {
            device,
            count: self.shared.devices.len(),
        })
    }

    /// Creates a CUDA stream (the concrete type, for launches).
    pub fn cuda_stream(
        &self,
        device: PhysicalDevice,
        priority: StreamPriority,
    ) -> Result<CudaStream> {
        CudaStream::new(self.dev(device)?, priority, &self.shared)
    }

    /// Creates a CUDA event (the concrete type).
    pub fn cuda_event(&self, device: PhysicalDevice, kind: EventKind) -> Result<CudaEvent> {
        CudaEvent::new(self.dev(device)?, kind)
    }

    /// Whether peer access from `from` to `to` was enabled.
    pub fn peer_enabled(&self, from: PhysicalDevice, to: PhysicalDevice) -> bool {
        from != to
            && self
                .shared
                .peer
                .get(from)
                .and_then(|r| r.get(to))
                .copied()
                .unwrap_or(false)
    }
}

impl Backend for CudaBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Cuda
    }

    fn physical_devices(&self) -> usize {
        self.shared.devices.len()
    }

    fn properties(&self, device: PhysicalDevice) -> Result<DeviceProperties> {
        Ok(self.dev(device)?.props.clone())
    }

    fn can_access_peer(&self, from: PhysicalDevice, to: PhysicalDevice) -> bool {
        from == to && from < self.shared.devices.len() || self.peer_enabled(from, to)
    }

    fn allocate(&self, location: MemoryLocation, bytes: usize) -> Result<Arc<dyn RawMemory>> {
        let m = match location {
            MemoryLocation::Device(d) => CudaMemory::device(self.dev(d)?, bytes)?,
            MemoryLocation::PinnedHost => CudaMemory::host(self.dev(0)?, bytes, false)?,
            MemoryLocation::MappedHost => CudaMemory::host(self.dev(0)?, bytes, true)?,
        };
        Ok(Arc::new(m))
    }

    fn create_stream(
        &self,
        device: PhysicalDevice,
        priority: StreamPriority,
    ) -> Result<Arc<dyn RawStream>> {
        Ok(Arc::new(self.cuda_stream(device, priority)?))
    }

    fn create_event(&self, device: PhysicalDevice, kind: EventKind) -> Result<Arc<dyn RawEvent>> {
        Ok(Arc::new(self.cuda_event(device, kind)?))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
