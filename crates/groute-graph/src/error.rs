//! The crate's one error type.

use std::path::PathBuf;

/// What went wrong while reading a graph file, parsing a specification, building or partitioning
/// a graph.
///
/// Errors about a file name the file and, for text formats, the 1-based line; binary formats name
/// the byte offset instead.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GraphError {
    /// The file could not be opened, mapped, read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A text file is malformed at a given line.
    #[error("{path}:{line}: {problem}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: u64,
        /// What is wrong there.
        problem: ParseProblem,
    },
    /// A binary file is malformed.
    #[error("{path}: at byte {offset}: {problem}")]
    Binary {
        /// The file.
        path: PathBuf,
        /// Byte offset where the problem was found.
        offset: u64,
        /// What is wrong there.
        problem: BinaryProblem,
    },
    /// The graph format could not be determined from the file name.
    #[error("{path}: cannot tell the graph format from the extension; name it with --format")]
    UnknownFormat {
        /// The file.
        path: PathBuf,
    },
    /// A partition method name (as given to `--partition`) is not known.
    #[error("unknown partition method `{name}` (known: auto, metis, block)")]
    UnknownPartitionMethod {
        /// The name given.
        name: String,
    },
    /// A format name (as given to `--format`) is not known.
    #[error("unknown graph format `{name}` (known: mtx, gr, dimacs, snap, metis, galois, grc)")]
    UnknownFormatName {
        /// The name given.
        name: String,
    },
    /// The format cannot be written.
    #[error("writing {format} files is not supported (use mtx, grc, dimacs, galois)")]
    NotWritable {
        /// The format asked for.
        format: crate::GraphFormat,
    },
    /// A generator specification (`--gen`) could not be parsed.
    #[error("bad generator spec `{spec}`: {problem}")]
    GenSpec {
        /// The whole specification string.
        spec: String,
        /// What is wrong in it.
        problem: SpecProblem,
    },
    /// A weight specification (`--gen-weights`) could not be parsed.
    #[error("bad weight spec `{spec}` (expected MIN..MAX[:SEED]): {problem}")]
    WeightSpec {
        /// The whole specification string.
        spec: String,
        /// What is wrong in it.
        problem: SpecProblem,
    },
    /// A graph exceeds a size limit of the representation (e.g. more than 2^32 - 1 vertices).
    #[error("graph too large: {what} is {value}, the limit is {limit}")]
    TooLarge {
        /// What overflowed.
        what: &'static str,
        /// The value needed.
        value: u64,
        /// The limit.
        limit: u64,
    },
    /// A range of rows (held or loaded) that is not a range of the graph's vertices.
    #[error(
        "rows {start}..{end} are not a range of the graph's {num_vertices} vertices; give \
         start <= end <= {num_vertices}"
    )]
    RowRange {
        /// The first row asked for.
        start: u64,
        /// One past the last.
        end: u64,
        /// The number of vertices.
        num_vertices: u64,
    },
    /// An edge given to the builder names a vertex outside `0..num_vertices`.
    #[error("edge {index} names vertex {vertex}, but the graph has {num_vertices} vertices")]
    VertexOutOfRange {
        /// Index of the edge in the edge list.
        index: u64,
        /// The vertex named.
        vertex: u64,
        /// The number of vertices.
        num_vertices: u64,
    },
    /// The weight array does not have one weight per edge.
    #[error("weight array has {got} entries, the graph has {edges} edges")]
    WeightCount {
        /// Entries given.
        got: u64,
        /// Edges in the graph.
        edges: u64,
    },
    /// A weight range is empty (`min > max`).
    #[error("weight range {min}..{max} is empty")]
    EmptyWeightRange {
        /// Lower bound.
        min: u32,
        /// Upper bound.
        max: u32,
    },
    /// A partitioning request is invalid.
    #[error("cannot partition into {parts} parts: {problem}")]
    Partition {
        /// Parts asked for.
        parts: usize,
        /// Why not.
        problem: PartitionProblem,
    },
    /// METIS reported an error.
    #[error("METIS failed: {0}")]
    Metis(#[from] metis::Error),
    /// An array sized by the input could not be allocated.
    #[error(
        "out of memory: cannot allocate {bytes} bytes for {what}; use a smaller graph or \
         generator spec, more host memory, or more devices (each holds only its part)"
    )]
    OutOfMemory {
        /// What the array is for.
        what: &'static str,
        /// Bytes asked for.
        bytes: u64,
    },
    /// A renumbering of some rows does not map them onto themselves, each id once.
    #[error(
        "vertex {vertex} cannot become vertex {new_id}: a renumbering of rows {start}..{end} \
         must map them onto themselves, each to its own id (renumber within the parts)"
    )]
    Renumbering {
        /// The vertex whose new id is wrong.
        vertex: u64,
        /// Its new id: outside the rows, or another vertex's too.
        new_id: u64,
        /// The first row renumbered.
        start: u64,
        /// One past the last.
        end: u64,
    },
    /// A renumbering gives another number of ids than the graph has vertices.
    #[error(
        "a renumbering gives {ids} new ids for a graph of {vertices} vertices: give one per vertex"
    )]
    RenumberingLength {
        /// The ids given.
        ids: u64,
        /// The graph's vertices.
        vertices: u64,
    },
    /// A path given as a graph file is a directory.
    #[error("{path}: is a directory, not a graph file")]
    IsADirectory {
        /// The path.
        path: PathBuf,
    },
}

/// What is wrong with a line of a text graph file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseProblem {
    /// The header line is missing or malformed.
    #[error("bad header: {0}")]
    BadHeader(&'static str),
    /// The file uses a variant of the format that is not supported.
    #[error("unsupported: {0}")]
    Unsupported(&'static str),
    /// A field that must be a non-negative integer (or a number) is not one.
    #[error("field {field} is not a valid number")]
    NotNumeric {
        /// 1-based field number on the line.
        field: u32,
    },
    /// A line has too few fields.
    #[error("expected at least {expected} fields, found {found}")]
    MissingField {
        /// Fields required.
        expected: u32,
        /// Fields present.
        found: u32,
    },
    /// A line has more fields than the format allows.
    #[error("too many fields (at most {max})")]
    ExtraField {
        /// Fields allowed.
        max: u32,
    },
    /// A vertex id is outside the range the header declares.
    #[error("vertex id {id} out of range {min}..={max}")]
    IdOutOfRange {
        /// The id found.
        id: u64,
        /// Smallest valid id.
        min: u64,
        /// Largest valid id.
        max: u64,
    },
    /// A weight does not fit in 32 bits (or is negative).
    #[error("weight {0} does not fit an unsigned 32-bit integer")]
    WeightOutOfRange(String),
    /// The number of entries differs from what the header declares.
    #[error("header declares {declared} {what}, file has {found}")]
    CountMismatch {
        /// What was counted ("entries", "arcs", "vertex lines", "adjacency entries").
        what: &'static str,
        /// Count in the header.
        declared: u64,
        /// Count found.
        found: u64,
    },
    /// The header declares more lines than the rest of the file has bytes for.
    #[error("header declares {declared} {what}, but the {bytes} bytes after it hold at most {max}")]
    MoreThanFileHolds {
        /// What the header counts.
        what: &'static str,
        /// Count in the header.
        declared: u64,
        /// The most the file's bytes can hold.
        max: u64,
        /// Bytes after the header.
        bytes: u64,
    },
    /// A line of a kind the format does not allow at this place.
    #[error("unexpected line: {0}")]
    UnexpectedLine(&'static str),
}

/// What is wrong in a binary graph file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BinaryProblem {
    /// The file ends before the data the header promises.
    #[error("truncated: need {needed} bytes, file has {len}")]
    Truncated {
        /// Bytes needed.
        needed: u64,
        /// Bytes present.
        len: u64,
    },
    /// The magic number or version is not recognised.
    #[error("bad magic or version: {0}")]
    BadMagic(&'static str),
    /// A header field has an invalid value.
    #[error("bad header field `{field}`: {value}")]
    BadField {
        /// The field.
        field: &'static str,
        /// Its value.
        value: u64,
    },
    /// Edge offsets are not non-decreasing or do not end at the edge count.
    #[error("edge offsets not monotone or not ending at the edge count (vertex {vertex})")]
    BadOffsets {
        /// The first vertex where the offsets are wrong.
        vertex: u64,
    },
    /// An edge target is not a vertex.
    #[error("edge {edge} targets vertex {target}, graph has {num_vertices} vertices")]
    TargetOutOfRange {
        /// Edge index.
        edge: u64,
        /// The target.
        target: u64,
        /// Number of vertices.
        num_vertices: u64,
    },
    /// The file is longer than its header says.
    #[error("{extra} trailing bytes after the {expected} bytes the header describes")]
    TrailingBytes {
        /// Bytes the header describes.
        expected: u64,
        /// Bytes beyond them.
        extra: u64,
    },
    /// The id table of a cache does not give each vertex a distinct id in the order the file
    /// says (increasing ids, or an order table that sorts them).
    #[error(
        "id table not strictly increasing in its order at entry {entry}: ids must be distinct and sorted"
    )]
    UnsortedIds {
        /// The first entry (in the table's order) not greater than the one before it.
        entry: u64,
    },
    /// The file was written on a machine of the other byte order.
    #[error("byte order differs from this machine's")]
    Endianness,
}

/// What is wrong in a generator or weight specification.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SpecProblem {
    /// The generator kind is not known.
    #[error(
        "unknown generator `{0}` (known: kron, rmat, road, random, kron<scale>, kron21.sym, road-usa)"
    )]
    UnknownKind(String),
    /// A key is not known for this generator.
    #[error("unknown key `{0}`")]
    UnknownKey(String),
    /// A value could not be parsed.
    #[error("bad value for `{key}`: `{value}`")]
    BadValue {
        /// The key.
        key: String,
        /// The value.
        value: String,
    },
    /// A value is not one of the key's named choices.
    #[error("unknown value `{value}` for `{key}` (known: {known})")]
    UnknownChoice {
        /// The key.
        key: String,
        /// The value given.
        value: String,
        /// The accepted values.
        known: &'static str,
    },
    /// A required key is missing.
    #[error("missing required key `{0}`")]
    MissingKey(&'static str),
    /// The values are inconsistent or out of their valid range.
    #[error("{0}")]
    OutOfRange(&'static str),
    /// The spec draws more arcs than a generator accepts.
    #[error(
        "it draws {arcs} arcs, more than the limit of {limit} (`MAX_GENERATED_ARCS`); use a \
         smaller scale, edge factor or m"
    )]
    TooManyArcs {
        /// Arcs the spec draws.
        arcs: u64,
        /// The limit.
        limit: u64,
    },
}

/// Why a partitioning request cannot be honoured.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PartitionProblem {
    /// Zero parts requested.
    #[error("the number of parts must be at least 1")]
    ZeroParts,
    /// More parts than vertices.
    #[error("more parts than vertices ({0})")]
    MorePartsThanVertices(usize),
    /// Parts asked for by index that the partition does not have.
    #[error("parts {start}..{end} asked for, but the partition has {parts}")]
    NoSuchParts {
        /// The first part asked for.
        start: usize,
        /// One past the last.
        end: usize,
        /// The partition's parts.
        parts: usize,
    },
    /// A partition given with a graph covers another number of vertices.
    #[error(
        "the partition covers {parts_cover} vertices but the graph has {vertices}: partition \
         this graph"
    )]
    Mismatch {
        /// Vertices the partition's ranges cover.
        parts_cover: usize,
        /// Vertices of the graph.
        vertices: usize,
    },
}

impl GraphError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        GraphError::Io {
            path: path.into(),
            source,
        }
    }
}
