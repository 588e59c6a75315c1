//! The asynchronous forms of the runs: futures that any executor can await (tokio,
//! async-std, smol, `futures::executor::block_on`), without a runtime dependency.
//!
//! A run is blocking work (it drives devices, or the host backend's executor threads, until
//! the result is downloaded), so an `_async` call starts it at once on a dedicated OS thread
//! and returns a [`RunFuture`] that completes with its result. The caller's runtime never
//! blocks on it: no `spawn_blocking` is needed and no runtime is assumed. Dropping the
//! future does not stop the run; its result is then discarded.
//!
//! ```
//! use groute::{Backend, Graph, Runner};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), groute::Error> {
//! let graph = Graph::generate("road:side=32")?;
//! let host = Runner::new().devices(2).backend(Backend::Host);
//! // Both runs proceed at once, each on its own thread.
//! let (levels, components) = tokio::join!(host.bfs_async(&graph, 0), host.cc_async(&graph));
//! assert_eq!(levels?.levels[0], 0);
//! assert!(components?.components >= 1);
//! # Ok(())
//! # }
//! ```

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};

use super::error::{Error, Result};
use super::graph::Graph;
use super::options::Runner;
use super::results::{BfsRun, CcRun, PageRankRun, SsspRun};
use super::run::PageRankParams;

/// A run in progress on its own thread; resolves to the run's result.
#[must_use = "the run goes on without it, but its result is lost"]
#[derive(Debug)]
pub struct RunFuture<T> {
    slot: Arc<Mutex<Slot<T>>>,
    algorithm: &'static str,
}

#[derive(Debug)]
struct Slot<T> {
    result: Option<Result<T>>,
    /// The thread is gone (with or without a result).
    finished: bool,
    waker: Option<Waker>,
}

/// Marks the slot finished when the thread ends, normally or by a panic, and wakes the task.
struct Finish<T> {
    slot: Arc<Mutex<Slot<T>>>,
}

impl<T> Drop for Finish<T> {
    fn drop(&mut self) {
        let waker = {
            let mut slot = self.slot.lock().unwrap_or_else(PoisonError::into_inner);
            slot.finished = true;
            slot.waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }
}

impl<T: Send + 'static> RunFuture<T> {
    /// Starts `run` on a new thread named after `algorithm`.
    fn spawn(algorithm: &'static str, run: impl FnOnce() -> Result<T> + Send + 'static) -> Self {
        let slot = Arc::new(Mutex::new(Slot {
            result: None,
            finished: false,
            waker: None,
        }));
        let finish = Finish { slot: slot.clone() };
        let spawned = std::thread::Builder::new()
            .name(format!("groute-{algorithm}"))
            .spawn(move || {
                let result = run();
                finish
                    .slot
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .result = Some(result);
                drop(finish);
            });
        if let Err(source) = spawned {
            let mut s = slot.lock().unwrap_or_else(PoisonError::into_inner);
            s.result = Some(Err(Error::Spawn { algorithm, source }));
            s.finished = true;
        }
        RunFuture { slot, algorithm }
    }
}

impl<T> Future for RunFuture<T> {
    type Output = Result<T>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<T>> {
        let mut slot = self.slot.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(result) = slot.result.take() {
            return Poll::Ready(result);
        }
        if slot.finished {
            return Poll::Ready(Err(Error::WorkerLost {
                algorithm: self.algorithm,
            }));
        }
        slot.waker = Some(cx.waker().clone());
        Poll::Pending
    }
}

impl Runner {
    /// [`Runner::bfs`] on its own thread (see [the module docs](self)).
    pub fn bfs_async(&self, graph: &Graph, source: u32) -> RunFuture<BfsRun> {
        let (runner, graph) = (self.clone(), graph.clone());
        RunFuture::spawn("bfs", move || runner.bfs(&graph, source))
    }

    /// [`Runner::sssp`] on its own thread.
    pub fn sssp_async(&self, graph: &Graph, source: u32) -> RunFuture<SsspRun> {
        let (runner, graph) = (self.clone(), graph.clone());
        RunFuture::spawn("sssp", move || runner.sssp(&graph, source))
    }

    /// [`Runner::pagerank`] on its own thread.
    pub fn pagerank_async(&self, graph: &Graph) -> RunFuture<PageRankRun> {
        self.pagerank_with_async(graph, PageRankParams::default())
    }

    /// [`Runner::pagerank_with`] on its own thread.
    pub fn pagerank_with_async(
        &self,
        graph: &Graph,
        params: PageRankParams,
    ) -> RunFuture<PageRankRun> {
        let (runner, graph) = (self.clone(), graph.clone());
        RunFuture::spawn("pagerank", move || runner.pagerank_with(&graph, params))
    }

    /// [`Runner::cc`] on its own thread.
    pub fn cc_async(&self, graph: &Graph) -> RunFuture<CcRun> {
        let (runner, graph) = (self.clone(), graph.clone());
        RunFuture::spawn("cc", move || runner.cc(&graph))
    }
}

/// [`bfs`](crate::bfs()) on its own thread.
pub fn bfs_async(graph: &Graph, source: u32) -> RunFuture<BfsRun> {
    Runner::new().bfs_async(graph, source)
}

/// [`sssp`](crate::sssp()) on its own thread.
pub fn sssp_async(graph: &Graph, source: u32) -> RunFuture<SsspRun> {
    Runner::new().sssp_async(graph, source)
}

/// [`pagerank`](crate::pagerank()) on its own thread.
pub fn pagerank_async(graph: &Graph) -> RunFuture<PageRankRun> {
    Runner::new().pagerank_async(graph)
}

/// [`cc`](crate::cc()) on its own thread.
pub fn cc_async(graph: &Graph) -> RunFuture<CcRun> {
    Runner::new().cc_async(graph)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::task::Wake;

    /// Counts its wake-ups.
    struct CountingWaker(std::sync::atomic::AtomicUsize);
    impl Wake for CountingWaker {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }

    fn block_on<T>(mut fut: RunFuture<T>) -> (Result<T>, usize) {
        let counter = Arc::new(CountingWaker(0.into()));
        let waker = Waker::from(counter.clone());
        let mut cx = Context::from_waker(&waker);
        loop {
            if let Poll::Ready(r) = Pin::new(&mut fut).poll(&mut cx) {
                return (r, counter.0.load(std::sync::atomic::Ordering::SeqCst));
            }
            std::thread::yield_now();
        }
    }

    #[test]
    fn a_panicking_run_resolves_to_worker_lost_instead_of_hanging() {
        let fut: RunFuture<u32> = RunFuture::spawn("test", || panic!("boom"));
        let (result, _) = block_on(fut);
        assert!(
            matches!(result, Err(Error::WorkerLost { algorithm: "test" })),
            "{result:?}"
        );
    }

    #[test]
    fn a_pending_future_is_woken_when_its_run_finishes() {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let mut fut = RunFuture::spawn("test", move || {
            rx.recv().ok();
            Ok(7u32)
        });
        let counter = Arc::new(CountingWaker(0.into()));
        let waker = Waker::from(counter.clone());
        let mut cx = Context::from_waker(&waker);
        assert!(Pin::new(&mut fut).poll(&mut cx).is_pending());
        tx.send(()).unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while counter.0.load(std::sync::atomic::Ordering::SeqCst) == 0 {
            assert!(
                std::time::Instant::now() < deadline,
                "the task was never woken"
            );
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        match Pin::new(&mut fut).poll(&mut cx) {
            Poll::Ready(result) => assert_eq!(result.unwrap(), 7),
            Poll::Pending => panic!("woken but still pending"),
        }
    }
}
