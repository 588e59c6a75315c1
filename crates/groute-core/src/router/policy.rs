//! The routing-policy trait: which outputs may take a message, and how one is chosen.

/// What a policy sees of a message (never the data: routing is a control-plane decision).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MessageInfo {
    /// Elements in the message.
    pub len: usize,
    /// The segment's user metadata.
    pub metadata: u64,
    /// The segment's offset in its original message.
    pub offset: usize,
    /// The length of the original message.
    pub total: usize,
}

/// How the router's multiplexer assigns a message to the candidate outputs of a [`Route`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Assignment {
    /// The first candidate output that is free to take it (offered to all; claimed once).
    #[default]
    Availability,
    /// The first candidate, in order, that is waiting for work right now; if none is, by
    /// availability.
    Priority,
    /// Every candidate gets a copy; the sender's event is the join of all copies.
    Broadcast,
}

/// A routing decision: candidate outputs and how to assign among them.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Route {
    /// Candidate output indices (`0..num_outputs`), in preference order.
    pub destinations: Vec<usize>,
    /// How the multiplexer picks among them.
    pub assignment: Assignment,
}

impl Route {
    /// Exactly one destination.
    pub fn to(output: usize) -> Self {
        Route {
            destinations: vec![output],
            assignment: Assignment::Availability,
        }
    }

    /// Any of `destinations`, whichever is free first.
    pub fn availability(destinations: impl Into<Vec<usize>>) -> Self {
        Route {
            destinations: destinations.into(),
            assignment: Assignment::Availability,
        }
    }

    /// The first of `destinations` (in order) that is waiting for work, else any.
    pub fn priority(destinations: impl Into<Vec<usize>>) -> Self {
        Route {
            destinations: destinations.into(),
            assignment: Assignment::Priority,
        }
    }

    /// All of `destinations`.
    pub fn broadcast(destinations: impl Into<Vec<usize>>) -> Self {
        Route {
            destinations: destinations.into(),
            assignment: Assignment::Broadcast,
        }
    }

    /// Why this route cannot be taken with `num_outputs` outputs, if it cannot.
    pub fn check(&self, num_outputs: usize) -> Result<(), String> {
        if self.destinations.is_empty() {
            return Err("the routing policy gave no destination".into());
        }
        if let Some(&bad) = self.destinations.iter().find(|&&d| d >= num_outputs) {
            return Err(format!(
                "the routing policy chose output {bad}, but the router has {num_outputs} outputs"
            ));
        }
        Ok(())
    }
}

/// Decides where a router sends each message.
///
/// `route` is called on the sender's thread for every send into the router, with the index
/// of the router input the message came in on. It must be cheap and must not block. Any
/// `Fn(usize, &MessageInfo, usize) -> Route` closure is a policy.
///
/// ```
/// use groute_core::router::{MessageInfo, Route, RoutingPolicy};
///
/// // Even metadata to output 0, odd to output 1.
/// let by_parity = |_input: usize, m: &MessageInfo, _outputs: usize| Route::to((m.metadata % 2) as usize);
/// let info = MessageInfo { len: 10, metadata: 3, offset: 0, total: 10 };
/// assert_eq!(by_parity.route(0, &info, 2), Route::to(1));
/// ```
pub trait RoutingPolicy: Send + Sync + 'static {
    /// Where a message arriving on `input` may go, among `num_outputs` outputs.
    fn route(&self, input: usize, message: &MessageInfo, num_outputs: usize) -> Route;
}

impl<F> RoutingPolicy for F
where
    F: Fn(usize, &MessageInfo, usize) -> Route + Send + Sync + 'static,
{
    fn route(&self, input: usize, message: &MessageInfo, num_outputs: usize) -> Route {
        self(input, message, num_outputs)
    }
}
