//! Routers: N inputs to M outputs, with a [`RoutingPolicy`] deciding where each message goes.
//!
//! A router is a set of links that share a routing decision. Each input is a
//! [`LinkSender`] (endpoint -> router); each output is a link (router -> endpoint) with its
//! own receive buffers, copy stream, pump thread and [`LinkReceiver`]. A message sent into
//! an input is routed by the policy, assigned by the [`Multiplexer`] (availability, priority
//! or broadcast) to output queues, and copied once, straight from the sender's buffer into
//! the chosen output's receive buffers: the router itself holds no data.
//!
//! Outputs see end-of-stream once every input has shut down and their queues have drained.
//! The paper's rule holds: an endpoint appears at most once among the inputs and at most
//! once among the outputs ([`Error::DuplicateLink`]), and a router cannot feed itself
//! ([`Error::SelfLoop`]). An endpoint may be both an input and an output (a ring), but a route
//! from an input back to its own endpoint would copy a message onto itself: the send is refused
//! with [`Error::SelfLoop`] and the segment given back.
//!
//! # Example: first-available scatter from the host to two devices
//!
//! ```
//! use groute_core::router::{Router, Scatter};
//! use groute_core::{Context, DeviceId, Endpoint, Event, LinkConfig, Segment};
//!
//! # fn main() -> groute_core::Result<()> {
//! let ctx = Context::host(2)?;
//! let outputs = [Endpoint::Device(DeviceId(0)), Endpoint::Device(DeviceId(1))];
//! let router = Router::<u32>::new(&ctx, Scatter::new(), &[Endpoint::Host], &outputs, LinkConfig::new(4, 2))?;
//! let (senders, receivers) = router.into_parts();
//! let data = ctx.host_buffer_from(&[1u32, 2, 3, 4, 5, 6, 7, 8])?;
//! for chunk in 0..2 {
//!     let seg = Segment::new(data.slice(chunk * 4..chunk * 4 + 4)?, Endpoint::Host);
//!     senders[0].send(seg, Event::ready())?;
//! }
//! senders[0].shutdown();
//! let mut received = 0;
//! for rx in &receivers {
//!     while let Some(packet) = rx.receive_blocking() {
//!         received += packet.segment().len();
//!         packet.release(Event::ready());
//!     }
//! }
//! assert_eq!(received, 8);
//! # Ok(())
//! # }
//! ```

mod multiplexer;
mod policies;
mod policy;

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use bytemuck::Pod;

pub use self::multiplexer::{DispatchError, Multiplexer};
pub use self::policies::{
    Broadcast, Gather, OneWayReduction, PointToPoint, Ring, Scatter, TreeReduction,
};
pub use self::policy::{Assignment, MessageInfo, Route, RoutingPolicy};
use crate::context::Context;
use crate::endpoint::{Endpoint, RouterId};
use crate::error::{Error, Result};
use crate::link::{LinkConfig, LinkReceiver, LinkSender, RouterFabric, pump};
pub use crate::link::{OutputQueue, Take};

/// A router: N inputs -> M outputs (see the module docs).
pub struct Router<T> {
    id: RouterId,
    inputs: Vec<Endpoint>,
    outputs: Vec<Endpoint>,
    senders: Vec<LinkSender<T>>,
    receivers: Vec<LinkReceiver<T>>,
}

impl<T> fmt::Debug for Router<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Router")
            .field("id", &self.id)
            .field("inputs", &self.inputs)
            .field("outputs", &self.outputs)
            .finish()
    }
}

/// Checks that `endpoints` can be a router's inputs or outputs.
fn check_endpoints(
    ctx: &Context,
    id: RouterId,
    endpoints: &[Endpoint],
    are_inputs: bool,
) -> Result<()> {
    let side = if are_inputs { "inputs" } else { "outputs" };
    if endpoints.is_empty() {
        return Err(Error::invalid(
            "router endpoints",
            format!("no {side}"),
            "a router needs at least one input and one output",
        ));
    }
    let mut seen = HashSet::new();
    for &e in endpoints {
        match e {
            Endpoint::Host => {}
            Endpoint::Device(d) => {
                ctx.device(d)?;
            }
            Endpoint::Router(r) if r == id => return Err(Error::SelfLoop(e)),
            Endpoint::Router(_) => {
                return Err(Error::invalid(
                    "router endpoint",
                    e,
                    "router inputs and outputs are the host or devices; chain routers through a \
                     device or the host that receives and forwards",
                ));
            }
        }
        if !seen.insert(e) {
            let me = Endpoint::Router(id);
            let (src, dst) = if are_inputs { (e, me) } else { (me, e) };
            return Err(Error::DuplicateLink { src, dst });
        }
    }
    Ok(())
}

impl<T: Pod> Router<T> {
    /// A router from `inputs` to `outputs` routed by `policy`; every output gets its own
    /// receive buffers as `config` says (allocated now, on the output endpoint).
    pub fn new(
        ctx: &Context,
        policy: impl RoutingPolicy,
        inputs: &[Endpoint],
        outputs: &[Endpoint],
        config: LinkConfig,
    ) -> Result<Self> {
        let id = RouterId::fresh();
        Self::build(ctx, id, Arc::new(policy), inputs, outputs, config, None)
    }

    pub(crate) fn build(
        ctx: &Context,
        id: RouterId,
        policy: Arc<dyn RoutingPolicy>,
        inputs: &[Endpoint],
        outputs: &[Endpoint],
        config: LinkConfig,
        link_label: Option<String>,
    ) -> Result<Self> {
        config.validate::<T>()?;
        check_endpoints(ctx, id, inputs, true)?;
        check_endpoints(ctx, id, outputs, false)?;
        let (mux, queues) = Multiplexer::new(inputs.len(), outputs.len());
        let mux = Arc::new(mux);
        let mut receivers = Vec::with_capacity(outputs.len());
        let mut pumped = Vec::with_capacity(outputs.len());
        for (j, (queue, &dst)) in queues.into_iter().zip(outputs).enumerate() {
            let name = match link_label {
                Some(_) => format!("groute-pump-l{}", id.0),
                None => format!("groute-pump-r{}o{j}", id.0),
            };
            let (receiver, output) = match pump::spawn_output(ctx, dst, config, queue, name) {
                Ok(made) => made,
                Err(e) => {
                    pumped
                        .iter()
                        .for_each(|o: &Arc<pump::Output<T>>| o.abandon());
                    return Err(e);
                }
            };
            receivers.push(receiver);
            pumped.push(output);
        }
        let fabric = RouterFabric {
            policy,
            mux,
            outputs: Arc::from(pumped),
        };
        let senders = inputs
            .iter()
            .enumerate()
            .map(|(i, &src)| {
                let label = match &link_label {
                    Some(l) => l.clone(),
                    None => format!("router {} input {i} (from {src})", id.0),
                };
                LinkSender::new(src, label, i, fabric.clone())
            })
            .collect();
        Ok(Router {
            id,
            inputs: inputs.to_vec(),
            outputs: outputs.to_vec(),
            senders,
            receivers,
        })
    }
}

impl<T> Router<T> {
    /// The router's identity.
    pub fn id(&self) -> RouterId {
        self.id
    }

    /// The router as an endpoint.
    pub fn endpoint(&self) -> Endpoint {
        Endpoint::Router(self.id)
    }

    /// Input endpoints, in input-index order.
    pub fn inputs(&self) -> &[Endpoint] {
        &self.inputs
    }

    /// Output endpoints, in output-index order.
    pub fn outputs(&self) -> &[Endpoint] {
        &self.outputs
    }

    /// The sender of input `i`.
    pub fn sender(&self, i: usize) -> Result<LinkSender<T>> {
        self.senders.get(i).cloned().ok_or_else(|| {
            Error::invalid(
                "router input",
                i,
                format!("the router has {} inputs", self.senders.len()),
            )
        })
    }

    /// The receiver of output `j`.
    pub fn receiver(&self, j: usize) -> Result<LinkReceiver<T>> {
        self.receivers.get(j).cloned().ok_or_else(|| {
            Error::invalid(
                "router output",
                j,
                format!("the router has {} outputs", self.receivers.len()),
            )
        })
    }

    /// The sender of the input from `endpoint`.
    pub fn sender_from(&self, endpoint: Endpoint) -> Result<LinkSender<T>> {
        let i = self.inputs.iter().position(|&e| e == endpoint);
        i.map(|i| self.senders[i].clone()).ok_or_else(|| {
            Error::invalid(
                "router input",
                endpoint,
                "no input of this router comes from there",
            )
        })
    }

    /// The receiver of the output to `endpoint`.
    pub fn receiver_to(&self, endpoint: Endpoint) -> Result<LinkReceiver<T>> {
        let j = self.outputs.iter().position(|&e| e == endpoint);
        j.map(|j| self.receivers[j].clone()).ok_or_else(|| {
            Error::invalid(
                "router output",
                endpoint,
                "no output of this router goes there",
            )
        })
    }

    /// Shuts every input down (see [`LinkSender::shutdown`]).
    pub fn shutdown(&self) {
        for s in &self.senders {
            s.shutdown();
        }
    }

    /// Every sender (by input index) and receiver (by output index), consuming the router.
    pub fn into_parts(self) -> (Vec<LinkSender<T>>, Vec<LinkReceiver<T>>) {
        (self.senders, self.receivers)
    }
}
