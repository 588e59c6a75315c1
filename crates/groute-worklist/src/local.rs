//! The host local worklist: a bounded multi-producer single-consumer circular buffer.
//!
//! Producers (the receive split, from any thread) append at the tail; the one consumer (the
//! device's driver) pops from the head and may *prepend* its own output in front of the head
//! so it is worked on next. A worklist never loses an item: an append or prepend that would
//! exceed the capacity fails with [`groute_core::Error::CapacityExceeded`] naming the setting
//! to raise, and leaves the worklist unchanged.
//!
//! # Protocol
//!
//! One 64-bit atomic word holds `(head, len)`: the index of the first reserved slot and the
//! number of reserved slots (ready or still being written). Every reservation is one
//! compare-and-swap on that word, checked against the capacity, so appends (which take slots
//! at `head + len`) and prepends (which take slots below `head`) never overlap and never
//! exceed the capacity. After reserving, a producer writes its items and then sets each
//! slot's `ready` flag with release ordering. The consumer pops the *ready prefix* starting
//! at `head`: it reads each slot after an acquire load of its flag, clears the flag, and only
//! then releases the slots by advancing `head` (release), so a producer that later reuses a
//! slot (after an acquire on the word) cannot race with the read.
//!
//! The device version of this structure is `kernels/include/worklist.cuh`.
//!
//! ```
//! use groute_worklist::local_worklist;
//! let (producer, mut consumer) = local_worklist::<u32>(8, "wl_capacity")?;
//! producer.push_slice(&[1, 2, 3])?;
//! consumer.prepend_slice(&[0])?;
//! let mut out = Vec::new();
//! assert_eq!(consumer.pop_into(10, &mut out), 4);
//! assert_eq!(out, [0, 1, 2, 3]);
//! assert!(producer.push_slice(&[0; 9]).is_err()); // would overflow: nothing is dropped
//! # Ok::<(), groute_core::Error>(())
//! ```

use std::cell::UnsafeCell;
use std::fmt;
use std::mem::MaybeUninit;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use bytemuck::Pod;
use groute_core::{Error, Result};

struct Slot<T> {
    ready: AtomicBool,
    value: UnsafeCell<MaybeUninit<T>>,
}

struct Shared<T> {
    slots: Box<[Slot<T>]>,
    /// `head` in the low 32 bits, `len` in the high 32 bits.
    state: AtomicU64,
    capacity: u32,
    setting: &'static str,
}

// SAFETY: slots are written only by the thread that reserved them (exclusive by the CAS on
// `state`) and read only by the consumer after the slot's release/acquire `ready` handshake;
// `T: Pod` values carry no drop glue and no thread affinity.
unsafe impl<T: Pod + Send> Sync for Shared<T> {}
// SAFETY: as above; the buffer owns plain `Pod` data.
unsafe impl<T: Pod + Send> Send for Shared<T> {}

fn unpack(word: u64) -> (u32, u32) {
    (word as u32, (word >> 32) as u32)
}

fn pack(head: u32, len: u32) -> u64 {
    u64::from(head) | (u64::from(len) << 32)
}

impl<T> Shared<T> {
    /// The `Debug` form of an end named `name`: the capacity and the current head and length.
    fn debug_as(&self, name: &str, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (head, len) = unpack(self.state.load(Ordering::Relaxed));
        f.debug_struct(name)
            .field("capacity", &self.capacity)
            .field("head", &head)
            .field("len", &len)
            .finish()
    }
}

impl<T: Pod> Shared<T> {
    /// Reserves `k` slots at the tail (`front == false`) or in front of the head; returns the
    /// index of the first one.
    fn reserve(&self, k: usize, front: bool) -> Result<u32> {
        let cap = self.capacity;
        let overflow = |len: u32| Error::CapacityExceeded {
            what: "local worklist".into(),
            capacity: u64::from(cap),
            needed: u64::from(len) + k as u64,
            setting: self.setting,
        };
        let k32 = u32::try_from(k).map_err(|_| overflow(0))?;
        let mut cur = self.state.load(Ordering::Acquire);
        loop {
            let (head, len) = unpack(cur);
            if u64::from(len) + u64::from(k32) > u64::from(cap) {
                return Err(overflow(len));
            }
            let (new, first) = if front {
                let h =
                    ((u64::from(head) + u64::from(cap) - u64::from(k32)) % u64::from(cap)) as u32;
                (pack(h, len + k32), h)
            } else {
                let t = ((u64::from(head) + u64::from(len)) % u64::from(cap)) as u32;
                (pack(head, len + k32), t)
            };
            match self
                .state
                .compare_exchange_weak(cur, new, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return Ok(first),
                Err(actual) => cur = actual,
            }
        }
    }

    /// Writes `items` into the reserved slots starting at `first` and publishes them.
    fn fill(&self, first: u32, items: &[T]) {
        let cap = self.capacity as usize;
        for (i, item) in items.iter().enumerate() {
            let slot = &self.slots[(first as usize + i) % cap];
            // SAFETY: the slot was reserved by this thread's successful CAS and is not ready,
            // so no one else reads or writes it until the release store below.
            unsafe { (*slot.value.get()).write(*item) };
            slot.ready.store(true, Ordering::Release);
        }
    }
}

/// Creates a local worklist of `capacity` items; `setting` names the option that sets the
/// capacity (it appears in the overflow error).
pub fn local_worklist<T: Pod + Send>(
    capacity: usize,
    setting: &'static str,
) -> Result<(WorklistProducer<T>, WorklistConsumer<T>)> {
    if capacity == 0 || capacity > (u32::MAX / 2) as usize {
        return Err(Error::invalid(
            setting,
            capacity,
            "a worklist holds between 1 and 2^31 - 1 items",
        ));
    }
    let mut slots = Vec::new();
    slots
        .try_reserve_exact(capacity)
        .map_err(|_| Error::OutOfMemory {
            bytes: capacity.saturating_mul(std::mem::size_of::<Slot<T>>()),
            location: format!(
                "the host for a local worklist of {capacity} items (lower {setting})"
            ),
            source: None,
        })?;
    slots.extend((0..capacity).map(|_| Slot {
        ready: AtomicBool::new(false),
        value: UnsafeCell::new(MaybeUninit::uninit()),
    }));
    let shared = Arc::new(Shared {
        slots: slots.into_boxed_slice(),
        state: AtomicU64::new(0),
        capacity: capacity as u32,
        setting,
    });
    Ok((
        WorklistProducer {
            shared: Arc::clone(&shared),
        },
        WorklistConsumer { shared },
    ))
}

/// The appending side of a local worklist; clone it for every producer.
pub struct WorklistProducer<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Clone for WorklistProducer<T> {
    fn clone(&self) -> Self {
        WorklistProducer {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<T> fmt::Debug for WorklistProducer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.shared.debug_as("WorklistProducer", f)
    }
}

impl<T: Pod + Send> WorklistProducer<T> {
    /// Appends `items` at the tail (all or nothing).
    pub fn push_slice(&self, items: &[T]) -> Result<()> {
        if items.is_empty() {
            return Ok(());
        }
        let first = self.shared.reserve(items.len(), false)?;
        self.shared.fill(first, items);
        Ok(())
    }

    /// The capacity in items.
    pub fn capacity(&self) -> usize {
        self.shared.capacity as usize
    }
}

/// The consuming side of a local worklist (one per worklist: not `Clone`).
pub struct WorklistConsumer<T> {
    shared: Arc<Shared<T>>,
}

impl<T> fmt::Debug for WorklistConsumer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.shared.debug_as("WorklistConsumer", f)
    }
}

impl<T: Pod + Send> WorklistConsumer<T> {
    /// Puts `items` in front of the head, to be popped next (all or nothing).
    pub fn prepend_slice(&mut self, items: &[T]) -> Result<()> {
        if items.is_empty() {
            return Ok(());
        }
        let first = self.shared.reserve(items.len(), true)?;
        self.shared.fill(first, items);
        Ok(())
    }

    /// Pops up to `max` ready items from the head into `out`; returns how many.
    pub fn pop_into(&mut self, max: usize, out: &mut Vec<T>) -> usize {
        let sh = &*self.shared;
        let cap = sh.capacity as usize;
        let (head, len) = unpack(sh.state.load(Ordering::Acquire));
        let want = (len as usize).min(max);
        let mut n = 0;
        while n < want {
            let slot = &sh.slots[(head as usize + n) % cap];
            if !slot.ready.load(Ordering::Acquire) {
                break;
            }
            // SAFETY: the acquire load saw the producer's release store made after it wrote
            // the value, and the slot stays reserved (counted in `len`) until the state update
            // below, so no producer can overwrite it meanwhile.
            out.push(unsafe { (*slot.value.get()).assume_init() });
            slot.ready.store(false, Ordering::Relaxed);
            n += 1;
        }
        if n > 0 {
            let n32 = n as u32;
            // Only the consumer moves `head`; producers only grow `len`.
            let _ = sh
                .state
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| {
                    let (h, l) = unpack(w);
                    Some(pack(((h as usize + n) % cap) as u32, l - n32))
                });
        }
        n
    }

    /// Reserved items (ready or still being written by a producer).
    pub fn len(&self) -> usize {
        unpack(self.shared.state.load(Ordering::Acquire)).1 as usize
    }

    /// Whether no item is reserved.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The capacity in items.
    pub fn capacity(&self) -> usize {
        self.shared.capacity as usize
    }
}
