//! The one fenced module with every raw NCCL call: `libnccl.so.2` loaded at run time (a build
//! needs no NCCL), the handful of entry points the device plane uses, and their status codes
//! turned into errors that name the call.

use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::OnceLock;

use crate::error::{DistError, Result};

/// The environment variable naming the NCCL library to load instead of `libnccl.so.2`.
pub const NCCL_LIBRARY_ENV: &str = "GROUTE_NCCL_LIBRARY";

/// The library names tried in order when [`NCCL_LIBRARY_ENV`] is unset (NCCL's packages
/// install the versioned name; the bare one only with its development files).
const LIBRARY_NAMES: [&str; 2] = ["libnccl.so.2", "libnccl.so"];

/// `NCCL_UNIQUE_ID_BYTES`.
pub(crate) const UNIQUE_ID_BYTES: usize = 128;

/// `ncclUniqueId`: the opaque bootstrap handle one rank makes and every member receives.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct UniqueId {
    pub(crate) internal: [u8; UNIQUE_ID_BYTES],
}

/// `ncclComm_t`.
pub(crate) type RawComm = *mut c_void;

/// `ncclUint8` of `ncclDataType_t`: the plane moves bytes.
const NCCL_UINT8: c_int = 1;
/// `ncclSuccess`.
const NCCL_SUCCESS: c_int = 0;
/// `ncclInProgress` (a non-blocking communicator's pending state).
const NCCL_IN_PROGRESS: c_int = 7;

type GetVersion = unsafe extern "C" fn(*mut c_int) -> c_int;
type GetUniqueId = unsafe extern "C" fn(*mut UniqueId) -> c_int;
type CommInitRank = unsafe extern "C" fn(*mut RawComm, c_int, UniqueId, c_int) -> c_int;
type CommFree = unsafe extern "C" fn(RawComm) -> c_int;
type CommGetAsyncError = unsafe extern "C" fn(RawComm, *mut c_int) -> c_int;
type GetErrorString = unsafe extern "C" fn(c_int) -> *const c_char;
/// `ncclSend` and `ncclRecv` (the send's buffer is `const void*`: the same ABI).
type PointToPoint =
    unsafe extern "C" fn(*mut c_void, usize, c_int, c_int, RawComm, *mut c_void) -> c_int;

/// `ncclAllGather` (send buffer, receive buffer, elements per member, type, communicator,
/// stream).
type AllGather =
    unsafe extern "C" fn(*const c_void, *mut c_void, usize, c_int, RawComm, *mut c_void) -> c_int;

/// Which point-to-point call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Direction {
    /// `ncclSend`: the buffer is read.
    Send,
    /// `ncclRecv`: the buffer is written.
    Recv,
}

/// The loaded library and its entry points.
pub(crate) struct Nccl {
    get_version: GetVersion,
    get_unique_id: GetUniqueId,
    comm_init_rank: CommInitRank,
    comm_destroy: CommFree,
    comm_abort: CommFree,
    comm_get_async_error: CommGetAsyncError,
    get_error_string: GetErrorString,
    send: PointToPoint,
    recv: PointToPoint,
    all_gather: AllGather,
    /// Keeps the entry points valid (never unloaded).
    _library: libloading::Library,
}

impl std::fmt::Debug for Nccl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Nccl").finish_non_exhaustive()
    }
}

impl Nccl {
    /// The process's NCCL, loaded on first use; the error names the names tried and the fix.
    pub(crate) fn get() -> Result<&'static Nccl> {
        static NCCL: OnceLock<std::result::Result<Nccl, String>> = OnceLock::new();
        NCCL.get_or_init(Self::load)
            .as_ref()
            .map_err(|why| DistError::Comm(why.clone()))
    }

    fn load() -> std::result::Result<Nccl, String> {
        let names: Vec<String> = match std::env::var(NCCL_LIBRARY_ENV) {
            Ok(path) if !path.is_empty() => vec![path],
            _ => LIBRARY_NAMES.iter().map(|s| s.to_string()).collect(),
        };
        let mut failures = Vec::new();
        for name in &names {
            // SAFETY: loading NCCL runs its initialisers, which only set up its own state.
            match unsafe { libloading::Library::new(name) } {
                Ok(library) => return Self::resolve(library, name),
                Err(e) => failures.push(format!("{name}: {e}")),
            }
        }
        Err(format!(
            "NCCL (the GPU data plane between ranks) cannot be loaded ({}); install NCCL 2.18 or \
             newer, put its lib directory on LD_LIBRARY_PATH, or name the library in {NCCL_LIBRARY_ENV}",
            failures.join("; ")
        ))
    }

    fn resolve(library: libloading::Library, name: &str) -> std::result::Result<Nccl, String> {
        /// One entry point, copied out of its symbol.
        fn entry<T: Copy>(
            library: &libloading::Library,
            symbol: &str,
            name: &str,
        ) -> std::result::Result<T, String> {
            // SAFETY: each `T` below is the C signature of `symbol` in NCCL 2.18+'s `nccl.h`.
            unsafe { library.get::<T>(symbol.as_bytes()) }
                .map(|s| *s)
                .map_err(|e| format!("{name} lacks {symbol} ({e}): NCCL 2.18 or newer is needed"))
        }
        Ok(Nccl {
            get_version: entry(&library, "ncclGetVersion", name)?,
            get_unique_id: entry(&library, "ncclGetUniqueId", name)?,
            comm_init_rank: entry(&library, "ncclCommInitRank", name)?,
            comm_destroy: entry(&library, "ncclCommDestroy", name)?,
            comm_abort: entry(&library, "ncclCommAbort", name)?,
            comm_get_async_error: entry(&library, "ncclCommGetAsyncError", name)?,
            get_error_string: entry(&library, "ncclGetErrorString", name)?,
            send: entry(&library, "ncclSend", name)?,
            recv: entry(&library, "ncclRecv", name)?,
            all_gather: entry(&library, "ncclAllGather", name)?,
            _library: library,
        })
    }

    /// Turns a status into a result naming `call`.
    fn check(&self, status: c_int, call: &str) -> Result<()> {
        if status == NCCL_SUCCESS {
            return Ok(());
        }
        // SAFETY: ncclGetErrorString returns a static string for any code.
        let text = unsafe { (self.get_error_string)(status) };
        let text = if text.is_null() {
            "unknown error".into()
        } else {
            // SAFETY: non-null, NUL-terminated and static (above).
            unsafe { CStr::from_ptr(text) }.to_string_lossy()
        };
        Err(DistError::Comm(format!(
            "{call} failed: {text} (NCCL status {status})"
        )))
    }

    /// The library's version code (`NCCL_VERSION_CODE`: 22800 for 2.28.0).
    pub(crate) fn version(&self) -> Result<i32> {
        let mut v: c_int = 0;
        // SAFETY: writes one int.
        self.check(unsafe { (self.get_version)(&mut v) }, "ncclGetVersion")?;
        Ok(v)
    }

    /// A new bootstrap handle (this rank is to share it with the communicator's members).
    pub(crate) fn unique_id(&self) -> Result<UniqueId> {
        let mut id = UniqueId {
            internal: [0; UNIQUE_ID_BYTES],
        };
        // SAFETY: writes one ncclUniqueId.
        self.check(unsafe { (self.get_unique_id)(&mut id) }, "ncclGetUniqueId")?;
        Ok(id)
    }

    /// Joins the communicator of `ranks` members that `id` names, as member `rank`, on the
    /// CUDA device current on this thread. Blocks until every member has joined.
    pub(crate) fn init_rank(&self, id: UniqueId, ranks: usize, rank: usize) -> Result<RawComm> {
        let mut comm: RawComm = std::ptr::null_mut();
        let (ranks, rank) = (c_int::try_from(ranks), c_int::try_from(rank));
        let (Ok(ranks), Ok(rank)) = (ranks, rank) else {
            return Err(DistError::Comm(
                "an NCCL communicator of over 2^31 ranks".into(),
            ));
        };
        // SAFETY: writes one handle; `id` is passed by value as the C signature takes it.
        let status = unsafe { (self.comm_init_rank)(&mut comm, ranks, id, rank) };
        self.check(status, "ncclCommInitRank")?;
        Ok(comm)
    }

    /// The communicator's asynchronous error (an operation that failed after it was enqueued).
    ///
    /// # Safety
    /// `comm` is a live communicator of this library.
    pub(crate) unsafe fn async_error(&self, comm: RawComm) -> Result<()> {
        let mut status: c_int = NCCL_SUCCESS;
        // SAFETY: the caller keeps `comm` alive; writes one int.
        let call = unsafe { (self.comm_get_async_error)(comm, &mut status) };
        self.check(call, "ncclCommGetAsyncError")?;
        if status == NCCL_IN_PROGRESS {
            return Ok(());
        }
        self.check(status, "an NCCL operation of the device plane")
    }

    /// Enqueues sending (`Direction::Send`) the `bytes` bytes at device address `ptr` to
    /// member `peer`, or receiving them from it into `ptr`, on `stream`.
    ///
    /// # Safety
    /// `comm` is live, `ptr` is device memory of `comm`'s device valid (writable, for a
    /// receive) for `bytes` bytes until the stream passes the call, and `stream` is a stream
    /// of that device.
    pub(crate) unsafe fn point_to_point(
        &self,
        direction: Direction,
        (ptr, bytes): (u64, usize),
        peer: c_int,
        comm: RawComm,
        stream: *mut c_void,
    ) -> Result<()> {
        let (call, name) = match direction {
            Direction::Send => (self.send, "ncclSend"),
            Direction::Recv => (self.recv, "ncclRecv"),
        };
        // SAFETY: the caller's guarantees.
        let status = unsafe { call(ptr as *mut c_void, bytes, NCCL_UINT8, peer, comm, stream) };
        self.check(status, name)
    }

    /// Enqueues gathering every member's `bytes` bytes at device address `mine` into `all`
    /// (member `m`'s at byte `m * bytes`) on `stream`.
    ///
    /// # Safety
    /// `comm` is live, `mine` is device memory of `comm`'s device readable for `bytes` bytes
    /// and `all` writable for `bytes` times the members, both until the stream passes the
    /// call, and `stream` is a stream of that device.
    pub(crate) unsafe fn all_gather(
        &self,
        (mine, all, bytes): (u64, u64, usize),
        comm: RawComm,
        stream: *mut c_void,
    ) -> Result<()> {
        // SAFETY: the caller's guarantees.
        let status = unsafe {
            (self.all_gather)(
                mine as *const c_void,
                all as *mut c_void,
                bytes,
                NCCL_UINT8,
                comm,
                stream,
            )
        };
        self.check(status, "ncclAllGather")
    }

    /// Frees a communicator: destroys it when its work is done, aborts it otherwise (a failed
    /// run may leave operations that never match).
    ///
    /// # Safety
    /// `comm` is live and not used after.
    pub(crate) unsafe fn free(&self, comm: RawComm, work_done: bool) {
        // SAFETY: the caller's guarantees. A failure here has no one to report to.
        unsafe {
            if work_done {
                (self.comm_destroy)(comm);
            } else {
                (self.comm_abort)(comm);
            }
        }
    }
}
