//! The built-in routing policies (the paper's Table 1), one type each.
//!
//! Index conventions: a policy works on router input and output *indices*, in the order the
//! endpoints were given to [`crate::router::Router::new`].
//!
//! | policy | input `i` goes to | assignment |
//! |---|---|---|
//! | [`PointToPoint`] | output `i` | single |
//! | [`Scatter`] | any output | availability (or priority, [`Scatter::prioritized`]) |
//! | [`Gather`] | output 0 | single |
//! | [`Broadcast`] | every output | broadcast |
//! | [`Ring`] | output `(i + 1) mod M` | single |
//! | [`OneWayReduction`] | output `i - 1`; input 0 to the sink (output `M - 1`) | single |
//! | [`TreeReduction`] | output `i & (i - 1)` (binomial tree); input 0 to the sink (output `M - 1`) | single |
//!
//! For the reductions, wire the router with inputs `[d0, .., dN-1]` and outputs
//! `[d0, .., dN-2, sink]`: every device except the last receives partial results from its
//! children and forwards its combination to its parent; device 0 forwards to the sink
//! (typically the host). The tree has depth at most `ceil(log2 N)`; the one-way chain has depth `N - 1`.

use super::policy::{MessageInfo, Route, RoutingPolicy};

/// Input `i` sends to output `i` (a bundle of independent links).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PointToPoint;

impl RoutingPolicy for PointToPoint {
    fn route(&self, input: usize, _message: &MessageInfo, _num_outputs: usize) -> Route {
        Route::to(input)
    }
}

/// Every input sends to whichever output is free first (load balancing: the paper's
/// first-available scatter).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Scatter {
    prioritized: bool,
}

impl Scatter {
    /// Assignment by availability: the first free output takes the message.
    pub fn new() -> Self {
        Scatter { prioritized: false }
    }

    /// Assignment by priority: the lowest-indexed output waiting for work takes the message
    /// (falling back to availability when none is waiting).
    pub fn prioritized() -> Self {
        Scatter { prioritized: true }
    }
}

impl RoutingPolicy for Scatter {
    fn route(&self, _input: usize, _message: &MessageInfo, num_outputs: usize) -> Route {
        let all: Vec<usize> = (0..num_outputs).collect();
        if self.prioritized {
            Route::priority(all)
        } else {
            Route::availability(all)
        }
    }
}

/// Every input sends to output 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Gather;

impl RoutingPolicy for Gather {
    fn route(&self, _input: usize, _message: &MessageInfo, _num_outputs: usize) -> Route {
        Route::to(0)
    }
}

/// Every input sends a copy to every output.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Broadcast;

impl RoutingPolicy for Broadcast {
    fn route(&self, _input: usize, _message: &MessageInfo, num_outputs: usize) -> Route {
        Route::broadcast((0..num_outputs).collect::<Vec<_>>())
    }
}

/// Input `i` sends to output `(i + 1) mod M`: with the same N devices as inputs and outputs,
/// device `d` sends to device `d + 1 mod N` (the distributed worklist's ring).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Ring;

impl RoutingPolicy for Ring {
    fn route(&self, input: usize, _message: &MessageInfo, num_outputs: usize) -> Route {
        Route::to((input + 1) % num_outputs.max(1))
    }
}

/// A reduction chain: input `i > 0` sends to output `i - 1`, input 0 to the sink (the last
/// output). See the module docs for the wiring.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct OneWayReduction;

impl RoutingPolicy for OneWayReduction {
    fn route(&self, input: usize, _message: &MessageInfo, num_outputs: usize) -> Route {
        if input == 0 {
            Route::to(num_outputs.saturating_sub(1))
        } else {
            Route::to(input - 1)
        }
    }
}

/// A binomial reduction tree: input `i > 0` sends to output `i & (i - 1)` (its index with the
/// lowest set bit cleared), input 0 to the sink (the last output). See the module docs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TreeReduction;

impl TreeReduction {
    /// The parent of participant `i > 0` in the tree (participant 0 is the root).
    pub fn parent(i: usize) -> Option<usize> {
        (i > 0).then(|| i & (i - 1))
    }

    /// The children of participant `i` among `n` participants.
    pub fn children(i: usize, n: usize) -> Vec<usize> {
        (i + 1..n).filter(|&c| Self::parent(c) == Some(i)).collect()
    }
}

impl RoutingPolicy for TreeReduction {
    fn route(&self, input: usize, _message: &MessageInfo, num_outputs: usize) -> Route {
        match Self::parent(input) {
            Some(p) => Route::to(p),
            None => Route::to(num_outputs.saturating_sub(1)),
        }
    }
}
