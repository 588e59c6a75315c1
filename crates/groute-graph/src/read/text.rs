//! Shared machinery of the text readers: mapping a file, cutting it into chunks at line
//! boundaries, a byte cursor with hand-written integer parsing, and error positions.

use std::path::Path;

use rayon::prelude::*;

use crate::alloc::try_with_capacity;
use crate::csr::{CsrBuilder, EdgeList};
use crate::error::{GraphError, ParseProblem};
use crate::graph::{Graph, VertexIds};
use crate::progress::Progress;
use crate::read::LoadOptions;

/// A text file being read: its path, its bytes, the options of the load and where its progress
/// goes (what every text reader takes).
#[derive(Clone, Copy)]
pub(crate) struct TextFile<'a> {
    pub(crate) path: &'a Path,
    pub(crate) data: &'a [u8],
    pub(crate) opts: &'a LoadOptions,
    pub(crate) progress: &'a dyn Progress,
}

/// Whether the graph a text reader builds is symmetric.
#[derive(Clone, Copy)]
pub(crate) enum Symmetry {
    /// Directed: each arc once, the graph not marked symmetric.
    Directed,
    /// Each arc taken both ways; the graph is symmetric.
    Symmetrized,
    /// Each arc once; the graph is symmetric where its CSR is (checked, not trusted).
    Checked,
}

impl TextFile<'_> {
    /// The error of `problem` on the line at byte `offset`.
    pub(crate) fn error(&self, offset: usize, problem: ParseProblem) -> GraphError {
        parse_error(self.path, self.data, (offset, problem))
    }

    /// The graph of `arcs` on `n` vertices numbered by `ids`, named after the file.
    pub(crate) fn graph(
        &self,
        n: usize,
        (src, dst, weights): Arcs<u32>,
        ids: VertexIds,
        symmetry: Symmetry,
    ) -> Result<Graph, GraphError> {
        self.progress.stage("building CSR", 0);
        let csr = CsrBuilder::new(n)
            .symmetrize(matches!(symmetry, Symmetry::Symmetrized))
            .build(&EdgeList { src, dst, weights })?;
        let symmetric = match symmetry {
            Symmetry::Directed => false,
            Symmetry::Symmetrized => true,
            Symmetry::Checked => csr.is_symmetric(),
        };
        Ok(Graph {
            csr,
            ids,
            name: super::display_name(self.path),
            symmetric,
        })
    }
}

/// The bytes of a file: memory-mapped, or read when mapping is impossible (empty files, pipes).
pub(crate) enum FileBytes {
    Map(memmap2::Mmap),
    Vec(Vec<u8>),
}

impl std::ops::Deref for FileBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            FileBytes::Map(m) => m,
            FileBytes::Vec(v) => v,
        }
    }
}

pub(crate) fn open_bytes(path: &Path) -> Result<FileBytes, GraphError> {
    let file = std::fs::File::open(path).map_err(|e| GraphError::io(path, e))?;
    let meta = file.metadata().map_err(|e| GraphError::io(path, e))?;
    if meta.is_file() && meta.len() > 0 {
        // SAFETY: the map is read-only and private to this reader. Like every reader of a
        // memory-mapped file we require that the file is not truncated or modified while it is
        // being read; the crate documents this for `load_graph`.
        if let Ok(m) = unsafe { memmap2::Mmap::map(&file) } {
            return Ok(FileBytes::Map(m));
        }
    }
    let mut v = Vec::new();
    use std::io::Read;
    std::io::BufReader::new(file)
        .read_to_end(&mut v)
        .map_err(|e| GraphError::io(path, e))?;
    Ok(FileBytes::Vec(v))
}

/// A parse failure inside a chunk: byte offset (in the whole file) of the line and the problem.
pub(crate) type At = (usize, ParseProblem);

/// Turns a byte offset into a 1-based line number (only on the error path).
pub(crate) fn line_of(data: &[u8], offset: usize) -> u64 {
    let end = offset.min(data.len());
    data[..end]
        .par_chunks(1 << 20)
        .map(|c| c.iter().filter(|&&b| b == b'\n').count() as u64)
        .sum::<u64>()
        + 1
}

pub(crate) fn parse_error(path: &Path, data: &[u8], at: At) -> GraphError {
    GraphError::Parse {
        path: path.to_path_buf(),
        line: line_of(data, at.0),
        problem: at.1,
    }
}

/// Splits `data[start..]` into byte ranges of about `target` bytes, each ending after a newline
/// (or at the end of the data).
pub(crate) fn line_chunks(data: &[u8], start: usize, target: usize) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut s = start;
    while s < data.len() {
        let mut e = (s + target).min(data.len());
        while e < data.len() && data[e - 1] != b'\n' {
            e += 1;
        }
        out.push(s..e);
        s = e;
    }
    out
}

/// Chunk size for a body of `len` bytes: at least a few chunks per thread, at most 8 MiB.
pub(crate) fn chunk_target(len: usize) -> usize {
    let per = len / (rayon::current_num_threads() * 4).max(1);
    per.clamp(64 << 10, 8 << 20)
}

/// Runs `parse` over every chunk of `data[start..]` in parallel, reporting progress; returns the
/// chunk results in file order or the first error in file order.
pub(crate) fn parse_chunks<T: Send>(
    data: &[u8],
    start: usize,
    progress: &dyn Progress,
    parse: impl Fn(&[u8], usize) -> Result<T, At> + Sync,
) -> Result<Vec<T>, At> {
    let chunks = line_chunks(
        data,
        start,
        chunk_target(data.len() - start.min(data.len())),
    );
    let results: Vec<Result<T, At>> = chunks
        .par_iter()
        .map(|r| {
            let out = parse(&data[r.clone()], r.start);
            progress.advance(r.len() as u64);
            out
        })
        .collect();
    results.into_iter().collect()
}

/// A cursor over the bytes of a chunk.
pub(crate) struct Cursor<'a> {
    pub(crate) b: &'a [u8],
    pub(crate) i: usize,
}

/// A token that should be a number but is not.
pub(crate) struct NotNumber;

impl<'a> Cursor<'a> {
    pub(crate) fn new(b: &'a [u8]) -> Self {
        Cursor { b, i: 0 }
    }

    #[inline]
    pub(crate) fn done(&self) -> bool {
        self.i >= self.b.len()
    }

    #[inline]
    pub(crate) fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    /// Skips spaces, tabs and carriage returns (not newlines).
    #[inline]
    pub(crate) fn skip_blanks(&mut self) {
        while let Some(&c) = self.b.get(self.i) {
            if c == b' ' || c == b'\t' || c == b'\r' {
                self.i += 1;
            } else {
                break;
            }
        }
    }

    /// Whether the rest of the line is blank; skips the blanks.
    #[inline]
    pub(crate) fn at_eol(&mut self) -> bool {
        self.skip_blanks();
        matches!(self.peek(), None | Some(b'\n'))
    }

    /// Moves past the next newline (or to the end).
    #[inline]
    pub(crate) fn skip_line(&mut self) {
        while let Some(&c) = self.b.get(self.i) {
            self.i += 1;
            if c == b'\n' {
                return;
            }
        }
    }

    /// Consumes the newline at the cursor, if any (after blanks).
    #[inline]
    pub(crate) fn end_line(&mut self) {
        self.skip_blanks();
        if self.peek() == Some(b'\n') {
            self.i += 1;
        }
    }

    /// Parses the next field as an unsigned decimal integer. `None` at the end of the line.
    #[inline]
    pub(crate) fn next_u64(&mut self) -> Option<Result<u64, NotNumber>> {
        self.skip_blanks();
        let start = self.i;
        let mut v: u64 = 0;
        while let Some(&c) = self.b.get(self.i) {
            let d = c.wrapping_sub(b'0');
            if d < 10 {
                v = match v.checked_mul(10).and_then(|v| v.checked_add(u64::from(d))) {
                    Some(v) => v,
                    None => return Some(Err(NotNumber)),
                };
                self.i += 1;
            } else if c == b' ' || c == b'\t' || c == b'\r' || c == b'\n' {
                break;
            } else {
                return Some(Err(NotNumber));
            }
        }
        if self.i == start {
            return if matches!(self.peek(), None | Some(b'\n')) {
                None
            } else {
                Some(Err(NotNumber))
            };
        }
        Some(Ok(v))
    }

    /// The next whitespace-separated token, `None` at the end of the line.
    pub(crate) fn next_token(&mut self) -> Option<&'a [u8]> {
        self.skip_blanks();
        let start = self.i;
        while let Some(&c) = self.b.get(self.i) {
            if c == b' ' || c == b'\t' || c == b'\r' || c == b'\n' {
                break;
            }
            self.i += 1;
        }
        (self.i > start).then(|| &self.b[start..self.i])
    }
}

/// Parses a weight token: an unsigned integer, or (when `real`) any decimal number rounded to the
/// nearest integer; it must fit in `u32`.
pub(crate) fn parse_weight(tok: &[u8], real: bool, field: u32) -> Result<u32, ParseProblem> {
    let s = std::str::from_utf8(tok).map_err(|_| ParseProblem::NotNumeric { field })?;
    if !real {
        if let Ok(v) = s.parse::<u64>() {
            return u32::try_from(v).map_err(|_| ParseProblem::WeightOutOfRange(s.to_owned()));
        }
        if s.parse::<i64>().is_ok() {
            return Err(ParseProblem::WeightOutOfRange(s.to_owned()));
        }
        return Err(ParseProblem::NotNumeric { field });
    }
    let v: f64 = s.parse().map_err(|_| ParseProblem::NotNumeric { field })?;
    let r = v.round();
    if !(0.0..=f64::from(u32::MAX)).contains(&r) {
        return Err(ParseProblem::WeightOutOfRange(s.to_owned()));
    }
    Ok(r as u32)
}

/// Reads a mandatory unsigned integer field (1-based `field` number for errors).
#[inline]
pub(crate) fn field_u64(
    c: &mut Cursor<'_>,
    field: u32,
    expected: u32,
) -> Result<u64, ParseProblem> {
    match c.next_u64() {
        Some(Ok(v)) => Ok(v),
        Some(Err(NotNumber)) => Err(ParseProblem::NotNumeric { field }),
        None => Err(ParseProblem::MissingField {
            expected,
            found: field - 1,
        }),
    }
}

/// Skips blank lines and lines starting with `comment` up to the first other line; `false`
/// when the data ends first.
pub(crate) fn skip_comment_lines(c: &mut Cursor<'_>, comment: u8) -> bool {
    while !c.done() {
        if !c.at_eol() && c.peek() != Some(comment) {
            return true;
        }
        c.skip_line();
    }
    false
}

/// The internal number of the 1-based vertex id `id` of a graph of `n` vertices.
#[inline]
pub(crate) fn one_based(id: u64, n: u64) -> Result<u32, ParseProblem> {
    if id == 0 || id > n {
        return Err(ParseProblem::IdOutOfRange { id, min: 1, max: n });
    }
    Ok((id - 1) as u32)
}

/// Checks the count of `what` a header declared against the count found.
pub(crate) fn check_count(
    what: &'static str,
    declared: u64,
    found: u64,
) -> Result<(), ParseProblem> {
    if found != declared {
        return Err(ParseProblem::CountMismatch {
            what,
            declared,
            found,
        });
    }
    Ok(())
}

/// Arcs parsed from one chunk, ids already converted to the internal numbering.
#[derive(Default)]
pub(crate) struct ChunkArcs<I> {
    pub(crate) src: Vec<I>,
    pub(crate) dst: Vec<I>,
    pub(crate) w: Vec<u32>,
}

/// Sources, targets and (optional) weights of every arc.
pub(crate) type Arcs<I> = (Vec<I>, Vec<I>, Option<Vec<u32>>);

/// Concatenates chunk results in order.
pub(crate) fn concat<I: Copy + Send + Sync + Default>(
    chunks: Vec<ChunkArcs<I>>,
    weighted: bool,
) -> Result<Arcs<I>, GraphError> {
    let total: usize = chunks.iter().map(|c| c.src.len()).sum();
    let mut src = try_with_capacity(total, "the arcs' sources")?;
    let mut dst = try_with_capacity(total, "the arcs' targets")?;
    let mut w = if weighted {
        Some(try_with_capacity(total, "the arcs' weights")?)
    } else {
        None
    };
    for c in chunks {
        src.extend_from_slice(&c.src);
        dst.extend_from_slice(&c.dst);
        if let Some(w) = &mut w {
            w.extend_from_slice(&c.w);
        }
    }
    Ok((src, dst, w))
}

/// Checks a header's count of lines against the bytes that follow it: `count` lines of at least
/// `min_line` bytes each (the last one's newline optional) must fit in `rest` bytes. A header
/// that declares more than the file can hold is an error before anything is allocated for it.
pub(crate) fn check_lines_fit(
    what: &'static str,
    count: u64,
    min_line: u64,
    rest: usize,
) -> Result<(), ParseProblem> {
    let max = (rest as u64 + 1) / min_line;
    if count > max {
        return Err(ParseProblem::MoreThanFileHolds {
            what,
            declared: count,
            max,
            bytes: rest as u64,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursor_parses_fields_and_lines() {
        let mut c = Cursor::new(b"12 \t7\r\nx 3\n");
        assert!(matches!(c.next_u64(), Some(Ok(12))));
        assert!(matches!(c.next_u64(), Some(Ok(7))));
        assert!(c.next_u64().is_none());
        c.end_line();
        assert!(matches!(c.next_u64(), Some(Err(NotNumber))));
        c.skip_line();
        assert!(c.done());
    }

    #[test]
    fn overflow_is_not_a_number() {
        let mut c = Cursor::new(b"99999999999999999999999");
        assert!(matches!(c.next_u64(), Some(Err(NotNumber))));
    }

    #[test]
    fn chunks_end_at_newlines() {
        let d = b"aa\nbbbb\ncc\nd";
        let ch = line_chunks(d, 0, 2);
        assert_eq!(ch, vec![0..3, 3..8, 8..11, 11..12]);
        assert_eq!(line_of(d, 8), 3);
    }

    #[test]
    fn line_counts_are_checked_against_the_bytes() {
        assert!(check_lines_fit("arcs", 2, 8, 15).is_ok());
        assert!(matches!(
            check_lines_fit("arcs", 3, 8, 15),
            Err(ParseProblem::MoreThanFileHolds { max: 2, .. })
        ));
        assert!(check_lines_fit("arcs", 0, 8, 0).is_ok());
    }

    #[test]
    fn weights_round_and_reject() {
        assert_eq!(parse_weight(b"2.5", true, 3), Ok(3));
        assert_eq!(parse_weight(b"1e2", true, 3), Ok(100));
        assert!(parse_weight(b"-1", true, 3).is_err());
        assert!(parse_weight(b"-1", false, 3).is_err());
        assert!(parse_weight(b"4294967296", false, 3).is_err());
        assert_eq!(
            parse_weight(b"x", false, 3),
            Err(ParseProblem::NotNumeric { field: 3 })
        );
    }
}
