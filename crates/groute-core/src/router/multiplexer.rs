//! The multiplexer: assigns routed messages to per-output queues, with no router-wide lock.
//!
//! Every output has its own crossbeam queue ([`OutputQueue`]). Assignment:
//!
//! - **availability**: one [`Offer`](crate::link) shared by every candidate queue; the first
//!   consumer that pops it and wins its claim flag takes it, the others drop the stale
//!   duplicate when they see it;
//! - **priority**: the first candidate (in route order) whose consumer is blocked waiting for
//!   work is reserved with one compare-and-swap and gets the message alone; if none is
//!   waiting, availability;
//! - **broadcast**: every candidate gets its own copy.
//!
//! The multiplexer is generic over the message, so policies and assignment are tested with
//! plain in-memory values and no device at all:
//!
//! ```
//! use groute_core::router::{Multiplexer, Route, Take};
//!
//! let (mux, outputs) = Multiplexer::<u32>::new(1, 3);
//! mux.dispatch(&Route::availability([0, 1, 2]), 7).unwrap();
//! // Offered to all three; the first taker wins, the others skip the stale duplicate.
//! assert_eq!(outputs[2].try_take(), Take::Message(7));
//! assert_eq!(outputs[0].try_take(), Take::Empty);
//! mux.close_input();
//! assert_eq!(outputs[1].try_take(), Take::Finished);
//! ```

use std::fmt;
use std::sync::Arc;

use crate::error::Error;
use crate::link::queue::{InputsState, Offer, OutputQueue, QueueSender, output_queues};

use super::policy::{Assignment, Route};

/// A message the multiplexer could not place, given back with the reason.
#[derive(Debug)]
pub struct DispatchError<M> {
    /// Why (an invalid route, or every candidate output gone).
    pub error: Error,
    /// The message.
    pub message: M,
}

/// Assigns messages to output queues (see the module docs).
pub struct Multiplexer<M> {
    queues: Vec<QueueSender<M>>,
    inputs: Arc<InputsState>,
}

impl<M> fmt::Debug for Multiplexer<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Multiplexer")
            .field("outputs", &self.queues.len())
            .finish_non_exhaustive()
    }
}

impl<M> Multiplexer<M> {
    /// A multiplexer fed by `inputs` inputs, with `outputs` output queues (returned).
    ///
    /// The queues report [`crate::router::Take::Finished`] once [`Multiplexer::close_input`]
    /// has been called `inputs` times and they are drained.
    pub fn new(inputs: usize, outputs: usize) -> (Self, Vec<OutputQueue<M>>) {
        let (state, queues, receivers) = output_queues(inputs, outputs);
        (
            Multiplexer {
                queues,
                inputs: state,
            },
            receivers,
        )
    }

    /// Number of output queues.
    pub fn num_outputs(&self) -> usize {
        self.queues.len()
    }

    /// Closes one input (call once per input; the last call finishes every queue).
    pub fn close_input(&self) {
        self.inputs.close_one();
    }

    fn rejected(message: M, reason: String) -> DispatchError<M> {
        DispatchError {
            error: Error::invalid("routing policy", "route", reason),
            message,
        }
    }

    fn gone(message: M) -> DispatchError<M> {
        DispatchError {
            error: Error::Disconnected("every destination output of the route".into()),
            message,
        }
    }

    /// Offers `message` to every destination; exactly one consumer will claim it.
    fn offer_all(&self, destinations: &[usize], message: M) -> Result<(), DispatchError<M>> {
        let offer = Offer::new(message);
        let mut placed = false;
        for &d in destinations {
            placed |= self.queues[d].push(&offer);
        }
        if placed {
            return Ok(());
        }
        match offer.claim() {
            Some(message) => Err(Self::gone(message)),
            // Unreachable: an offer nobody received cannot have been claimed.
            None => Ok(()),
        }
    }
}

impl<M: Clone> Multiplexer<M> {
    /// Places `message` according to `route`.
    ///
    /// Fails, giving the message back, when the route is invalid (no destination, or one out
    /// of range) or when every destination's consumer is gone. A broadcast that reaches only
    /// some destinations succeeds; the copies for the missing ones are dropped.
    pub fn dispatch(&self, route: &Route, message: M) -> Result<(), DispatchError<M>> {
        if let Err(reason) = route.check(self.queues.len()) {
            return Err(Self::rejected(message, reason));
        }
        let dests = &route.destinations;
        match route.assignment {
            Assignment::Availability => self.offer_all(dests, message),
            Assignment::Priority => {
                if let Some(&d) = dests.iter().find(|&&d| self.queues[d].reserve_waiting()) {
                    let offer = Offer::new(message);
                    if self.queues[d].push(&offer) {
                        return Ok(());
                    }
                    match offer.claim() {
                        Some(m) => self.offer_all(dests, m),
                        None => Ok(()),
                    }
                } else {
                    self.offer_all(dests, message)
                }
            }
            Assignment::Broadcast => {
                // Every copy exists before any is placed (a send's completion counts its
                // parts as they are cloned).
                let mut copies: Vec<M> = Vec::with_capacity(dests.len());
                for _ in 1..dests.len() {
                    copies.push(message.clone());
                }
                copies.push(message);
                let mut placed = 0usize;
                let mut last_unplaced = None;
                for (&d, copy) in dests.iter().zip(copies) {
                    let offer = Offer::new(copy);
                    if self.queues[d].push(&offer) {
                        placed += 1;
                    } else {
                        last_unplaced = offer.claim();
                    }
                }
                match (placed, last_unplaced) {
                    (0, Some(m)) => Err(Self::gone(m)),
                    _ => Ok(()),
                }
            }
        }
    }
}
