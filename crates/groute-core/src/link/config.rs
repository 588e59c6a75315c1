//! Link settings: packet size, number of receive buffers, copy streams, which device
//! issues the copies and how they are made.

use super::copy_method::CopyMethod;
use crate::error::{Error, Result};

/// How a link (or each output of a router) packetizes and buffers what it carries.
///
/// A send larger than [`LinkConfig::packet_size`] elements is split into packets; each packet
/// is copied into one of [`LinkConfig::num_buffers`] receive buffers allocated up front on the
/// destination. At most `num_buffers` packets are in the receiver's hands at once: the free
/// list of receive buffers is the link's flow control. Consecutive packets go round-robin
/// over [`LinkConfig::copy_streams`] copy streams, so that the copy engines' per-copy setup
/// of one packet overlaps the transfer of the one before. Copies between devices are made by
/// the copy engines or, with [`LinkConfig::with_copy_method`], by a copy kernel on the SMs
/// (see [`CopyMethod`] for where each applies).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LinkConfig {
    /// Elements per packet (the size of one receive buffer). At least 1.
    pub packet_size: usize,
    /// Receive buffers on the destination (packets in flight). At least 1.
    pub num_buffers: usize,
    /// Copy streams the packets are spread over, round-robin. At least 1, at most
    /// [`LinkConfig::MAX_COPY_STREAMS`].
    pub copy_streams: usize,
    /// Which device's streams issue the copies into a device destination.
    pub copy_issuer: CopyIssuer,
    /// How copies between devices are made (DMA by default; see [`CopyMethod`]).
    pub copy_method: CopyMethod,
    /// Whether the receive buffers on a device hold graph structure (a topology-driven
    /// algorithm streaming its edges): they then count in the device's
    /// [`MemoryUsage::graph_bytes`](crate::MemoryUsage::graph_bytes).
    pub holds_graph: bool,
}

/// Which device issues a link's copies between two devices (copies to the host are always
/// issued by the source device, copies from the host by the destination).
///
/// The default is [`CopyIssuer::Source`]: over NVLink, peer copies pushed by the source
/// device run markedly faster than the same copies pulled by the destination, for raw copy
/// trains and links alike.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CopyIssuer {
    /// The destination device pulls the data (one set of copy streams per output).
    Destination,
    /// The source device pushes the data (one set of copy streams per source device).
    #[default]
    Source,
}

impl Default for LinkConfig {
    /// 256 Ki elements per packet, 4 receive buffers, [`LinkConfig::DEFAULT_COPY_STREAMS`]
    /// copy streams on the source.
    fn default() -> Self {
        LinkConfig::new(1 << 18, 4)
    }
}

impl LinkConfig {
    /// The most copy streams one link output may use.
    pub const MAX_COPY_STREAMS: usize = 16;

    /// Copy streams of [`LinkConfig::new`]. Two let the copy engines set up one packet while
    /// the previous one moves: a staged link (no peer access) then runs at about the raw staged
    /// copy's bandwidth, well above one stream's, and a peer link gains too.
    pub const DEFAULT_COPY_STREAMS: usize = 2;

    /// `num_buffers` receive buffers of `packet_size` elements,
    /// [`LinkConfig::DEFAULT_COPY_STREAMS`] copy streams, copies issued as
    /// [`CopyIssuer::default`] says (the source device), by [`CopyMethod::default`] (the copy
    /// engines).
    pub fn new(packet_size: usize, num_buffers: usize) -> Self {
        LinkConfig {
            packet_size,
            num_buffers,
            copy_streams: Self::DEFAULT_COPY_STREAMS,
            copy_issuer: CopyIssuer::default(),
            copy_method: CopyMethod::default(),
            holds_graph: false,
        }
    }

    /// Copy streams and receive buffers of [`LinkConfig::bulk`].
    pub const BULK_STREAMS: usize = 8;

    /// A link for bulk transfers between GPUs: packets of `packet_size` elements copied by the
    /// copy kernel ([`CopyMethod::kernel`]) on [`LinkConfig::BULK_STREAMS`] copy streams into
    /// as many receive buffers, so that eight copies are in flight.
    ///
    /// Over NVLink it comes close to one raw copy of the whole message, well above the
    /// default DMA link. Not for a link whose source device runs a kernel that fills every
    /// multiprocessor while it waits for the link's data (the copy kernel needs SMs there:
    /// see [`CopyMethod::Kernel`]), and not for small messages (a kernel launch costs more
    /// than a copy-engine submission).
    ///
    /// ```
    /// use groute_core::{CopyMethod, LinkConfig};
    ///
    /// let config = LinkConfig::bulk(1 << 20);
    /// assert_eq!(config.copy_method, CopyMethod::kernel());
    /// assert_eq!((config.copy_streams, config.num_buffers), (8, 8));
    /// assert!(config.validate::<u32>().is_ok());
    /// ```
    pub fn bulk(packet_size: usize) -> Self {
        LinkConfig::new(packet_size, Self::BULK_STREAMS)
            .with_copy_streams(Self::BULK_STREAMS)
            .with_copy_method(CopyMethod::kernel())
    }

    /// The same settings with copies between devices made by `copy_method` (where it
    /// applies; the rest keep the copy engines, see [`CopyMethod`]).
    ///
    /// ```
    /// use groute_core::{CopyMethod, LinkConfig};
    ///
    /// let config = LinkConfig::new(1 << 20, 4).with_copy_method(CopyMethod::kernel());
    /// assert!(config.validate::<u32>().is_ok());
    /// let zero = LinkConfig::new(1 << 20, 4).with_copy_method(CopyMethod::Kernel { blocks: 0 });
    /// assert!(zero.validate::<u32>().is_err());
    /// ```
    pub fn with_copy_method(self, copy_method: CopyMethod) -> Self {
        LinkConfig {
            copy_method,
            ..self
        }
    }

    /// The same settings with copies between devices issued by `copy_issuer`.
    pub fn with_copy_issuer(self, copy_issuer: CopyIssuer) -> Self {
        LinkConfig {
            copy_issuer,
            ..self
        }
    }

    /// The same settings with receive buffers counted as graph structure
    /// ([`LinkConfig::holds_graph`]).
    pub fn holding_graph(self) -> Self {
        LinkConfig {
            holds_graph: true,
            ..self
        }
    }

    /// The same settings with packets spread over `copy_streams` copy streams.
    pub fn with_copy_streams(self, copy_streams: usize) -> Self {
        LinkConfig {
            copy_streams,
            ..self
        }
    }

    /// Checks that every setting is at least 1, that `copy_streams` is at most
    /// [`LinkConfig::MAX_COPY_STREAMS`], that the copy method is valid
    /// ([`CopyMethod::validate`]) and that the buffers fit in `usize` bytes.
    pub fn validate<T>(&self) -> Result<()> {
        self.copy_method.validate()?;
        if self.copy_streams == 0 || self.copy_streams > Self::MAX_COPY_STREAMS {
            return Err(Error::invalid(
                "copy_streams",
                self.copy_streams,
                format!(
                    "a link copies on 1 to {} streams (LinkConfig::with_copy_streams)",
                    Self::MAX_COPY_STREAMS
                ),
            ));
        }
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
