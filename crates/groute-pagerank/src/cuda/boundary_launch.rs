//! Launch wrappers of the boundary exchange of PageRank across processes
//! (`pagerank_pack_words` and `pagerank_unpack_words` in `kernels/pagerank/pagerank.cu`):
//! copies of `u32` words through an index list whose entries were checked below a bound
//! when it was made ([`WordIndex`]), either [`Direction`].

use groute_core::cuda::DevicePtr;
use groute_core::{Buffer, Device, Error, Stream};

use super::launch::{config, keep};

/// A list of word indices on a device, every entry checked below [`WordIndex::bound`] when
/// it was uploaded (so that a kernel indexing an array of at least that many words with it
/// stays inside).
#[derive(Clone, Debug)]
pub(crate) struct WordIndex {
    /// The entries (at least one word: a device allocation of no bytes has no address).
    index: Buffer<u32>,
    /// The entries in use (`index` may hold one more, unused, when there is none).
    count: usize,
    bound: usize,
}

impl WordIndex {
    /// Uploads `entries` to `device`, checking that each is below `bound`.
    pub(crate) fn upload(device: &Device, entries: &[u32], bound: usize) -> Result<Self, Error> {
        if let Some(&e) = entries.iter().find(|&&e| e as usize >= bound) {
            return Err(Error::invalid(
                "word index",
                e,
                format!("below {bound}, the length of the arrays it indexes"),
            ));
        }
        u32::try_from(entries.len())
            .map_err(|_| Error::invalid("word index", entries.len(), "at most 2^32 - 1 entries"))?;
        let index = device.upload_graph(if entries.is_empty() { &[0] } else { entries })?;
        Ok(WordIndex {
            index,
            count: entries.len(),
            bound,
        })
    }

    /// The entries in use.
    pub(crate) fn len(&self) -> usize {
        self.count
    }

    /// The entries (`count` of them are in use), for host kernels and copies out; nothing
    /// writes them after the upload (the launches below rely on it).
    pub(crate) fn entries(&self) -> &Buffer<u32> {
        &self.index
    }

    /// Checks `array` (the one the entries index) against the bound.
    pub(crate) fn check(&self, what: &'static str, array: &Buffer<u32>) -> Result<(), Error> {
        if array.len() < self.bound {
            return Err(Error::LengthMismatch {
                operation: what,
                dst: array.len(),
                src: self.bound,
            });
        }
        Ok(())
    }
}

/// Which way the words go through a [`WordIndex`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Direction {
    /// `dst[i] = src[index[i]]`.
    Pack,
    /// `dst[index[i]] = src[i]`.
    Unpack,
}

/// Enqueues the copy of every entry `i` of `index` on `stream` (CUDA), the way `direction`
/// says: `pagerank_pack_words` or `pagerank_unpack_words`.
pub(crate) fn launch_words(
    stream: &Stream,
    direction: Direction,
    index: &WordIndex,
    src: &Buffer<u32>,
    dst: &Buffer<u32>,
) -> Result<(), Error> {
    let count = index.len();
    if count == 0 {
        return Ok(());
    }
    // The packed side holds one word per entry, the indexed side at least the bound.
    let (kernel, indexed, packed) = match direction {
        Direction::Pack => ("pagerank_pack_words", src, dst),
        Direction::Unpack => ("pagerank_unpack_words", dst, src),
    };
    index.check("boundary exchange: the indexed array", indexed)?;
    if packed.len() < count {
        return Err(Error::LengthMismatch {
            operation: "boundary exchange: the packed words (one per entry)",
            dst: packed.len(),
            src: count,
        });
    }
    let raw = stream.raw().as_ref();
    let (f, cfg) = config(raw, kernel, count)?;
    let args = (
        DevicePtr::<u32>::from_slice(&index.index.raw())?,
        count as u32,
        DevicePtr::<u32>::from_slice(&src.raw())?,
        DevicePtr::<u32>::from_slice(&dst.raw())?,
    );
    // SAFETY: pagerank_pack_words / pagerank_unpack_words(const unsigned* index, unsigned
    // count, const unsigned* src, unsigned* dst): the tuple matches them; `index` holds
    // `count` entries (it fits u32: checked at upload), each below `bound` (checked at
    // upload; nothing in the crate writes an index after it), and the indexed array holds at
    // least `bound` words, the packed one at least `count` (checked above); the three are
    // allocations of the stream's device (the caller's device 0); memory kept alive below
    // until the kernel completes.
    unsafe { f.launch(raw, cfg, args)? };
    keep(
        raw,
        vec![index.index.raw().memory, src.raw().memory, dst.raw().memory],
    )
}
