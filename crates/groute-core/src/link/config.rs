//! Link settings: packet size and number of receive buffers.

use crate::error::{Error, Result};

/// How a link (or each output of a router) packetizes and buffers what it carries.
///
/// A send larger than [`LinkConfig::packet_size`] elements is split into packets; each packet
/// is copied into one of [`LinkConfig::num_buffers`] receive buffers allocated up front on the
/// destination. At most `num_buffers` packets are in the receiver's hands at once: the free
/// list of receive buffers is the link's flow control.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LinkConfig {
    /// Elements per packet (the size of one receive buffer). At least 1.
    pub packet_size: usize,
    /// Receive buffers on the destination (packets in flight). At least 1.
    pub num_buffers: usize,
}

impl Default for LinkConfig {
    /// 256 Ki elements per packet, 4 receive buffers.
    fn default() -> Self {
        LinkConfig {
            packet_size: 1 << 18,
            num_buffers: 4,
        }
    }
}

impl LinkConfig {
    /// `num_buffers` receive buffers of `packet_size` elements.
    pub fn new(packet_size: usize, num_buffers: usize) -> Self {
        LinkConfig {
            packet_size,
            num_buffers,
        }
    }

    /// Checks that both settings are at least 1 and that the buffers fit in `usize` bytes.
    pub fn validate<T>(&self) -> Result<()> {
        if self.packet_size == 0 {
            return Err(Error::invalid(
                "packet_size",
                0,
                "a link packet holds at least one element",
            ));
        }
        if self.num_buffers == 0 {
            return Err(Error::invalid(
                "num_buffers",
                0,
                "a link needs at least one receive buffer",
            ));
        }
        self.packet_size
            .checked_mul(self.num_buffers)
            .and_then(|n| n.checked_mul(std::mem::size_of::<T>()))
            .map(|_| ())
            .ok_or_else(|| {
                Error::invalid(
                    "packet_size",
                    self.packet_size,
                    "packet_size x num_buffers x element size overflows usize",
                )
            })
    }
}
