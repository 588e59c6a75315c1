//! Mutated inputs for every reader: a valid small file, damaged at random (bytes flipped, cut
//! short, digits, huge, negative and non-numeric values inserted, lines duplicated or dropped,
//! numbers and header words replaced), must read as an error or a valid graph, never a panic,
//! an abort or a hang. The inputs the fuzzers (`fuzz/`) found bugs with stay in
//! `tests/corpus/<reader>/` and are read here too.

use std::path::Path;
use std::sync::OnceLock;

use groute_graph::{EdgeList, Graph, GraphFormat, write_graph};
use proptest::prelude::*;
use proptest::test_runner::TestRunner;

mod support;
use support::{READERS, TempDir, check_input, file_name, read_bytes};

/// Values that readers have to refuse or handle: signs, overflow of every width, floats.
const TOKENS: &[&str] = &[
    "0",
    "1",
    "7",
    "-1",
    "-0",
    "+3",
    "255",
    "65536",
    "2147483648",
    "4294967295",
    "4294967296",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999999",
    "NaN",
    "inf",
    "-inf",
    "1e308",
    "1e-308",
    "0.5",
    "-2.5",
    "0x10",
    "",
    " ",
    "\t",
    "\n",
    "\r\n",
    "\0",
    "%",
    "#",
    "c",
    "p",
    "a",
    "sp",
    "é",
];

/// Header words of the text formats, for edits of the first lines.
const WORDS: &[&str] = &[
    "%%MatrixMarket",
    "matrix",
    "coordinate",
    "array",
    "real",
    "integer",
    "pattern",
    "complex",
    "general",
    "symmetric",
    "skew-symmetric",
    "hermitian",
    "p sp",
    "p max",
    "011",
    "010",
    "001",
    "100",
];

/// 64-bit values for the fields of the binary formats.
const WORDS_U64: &[u64] = &[
    0,
    1,
    2,
    3,
    8,
    u32::MAX as u64,
    u32::MAX as u64 + 1,
    1 << 40,
    i64::MAX as u64,
    u64::MAX,
    u64::MAX - 7,
];

#[derive(Clone, Debug)]
enum Mutation {
    /// XOR the byte at `at` (modulo the length) with `with` (non-zero).
    Flip { at: usize, with: u8 },
    /// Keep only the first `at` bytes (modulo the length + 1).
    Truncate { at: usize },
    /// Insert a token of [`TOKENS`] at byte `at`.
    InsertToken { at: usize, token: usize },
    /// Replace the `k`-th run of digits with a token of [`TOKENS`].
    ReplaceNumber { k: usize, token: usize },
    /// Replace the `k`-th word of the first three lines with a word of [`WORDS`] or [`TOKENS`].
    EditHeader { k: usize, word: usize },
    /// Repeat line `line`.
    DuplicateLine { line: usize },
    /// Remove line `line`.
    DropLine { line: usize },
    /// Overwrite the 8-byte word `k` (8-aligned) with a value of [`WORDS_U64`], as the binary
    /// formats' headers and offsets are.
    SetWord { k: usize, value: usize },
    /// Overwrite the 4-byte word `k` (4-aligned) with `value`, as targets and weights are.
    SetWord32 { k: usize, value: u32 },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let i = any::<usize>();
    prop_oneof![
        (i, 1u8..=255).prop_map(|(at, with)| Mutation::Flip { at, with }),
        i.prop_map(|at| Mutation::Truncate { at }),
        (i, 0..TOKENS.len()).prop_map(|(at, token)| Mutation::InsertToken { at, token }),
        (i, 0..TOKENS.len()).prop_map(|(k, token)| Mutation::ReplaceNumber { k, token }),
        (i, 0..WORDS.len() + TOKENS.len()).prop_map(|(k, word)| Mutation::EditHeader { k, word }),
        i.prop_map(|line| Mutation::DuplicateLine { line }),
        i.prop_map(|line| Mutation::DropLine { line }),
        (i, 0..WORDS_U64.len()).prop_map(|(k, value)| Mutation::SetWord { k, value }),
        (
            i,
            prop_oneof![
                Just(0u32),
                Just(1),
                Just(u32::MAX),
                Just(u32::MAX - 1),
                any::<u32>()
            ]
        )
            .prop_map(|(k, value)| Mutation::SetWord32 { k, value }),
    ]
}

/// Byte ranges of the lines of `b`, each with its newline.
fn lines(b: &[u8]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, &c) in b.iter().enumerate() {
        if c == b'\n' {
            out.push(start..i + 1);
            start = i + 1;
        }
    }
    if start < b.len() {
        out.push(start..b.len());
    }
    out
}

/// Byte ranges of the maximal runs of bytes in `class` within `b[..end]`.
fn runs(b: &[u8], end: usize, class: impl Fn(u8) -> bool) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < end {
        if class(b[i]) {
            let s = i;
            while i < end && class(b[i]) {
                i += 1;
            }
            out.push(s..i);
        } else {
            i += 1;
        }
    }
    out
}

fn apply(b: &mut Vec<u8>, m: &Mutation) {
    let len = b.len();
    match *m {
        Mutation::Flip { at, with } if len > 0 => b[at % len] ^= with,
        Mutation::Truncate { at } => b.truncate(at % (len + 1)),
        Mutation::InsertToken { at, token } => {
            let at = at % (len + 1);
            b.splice(at..at, TOKENS[token].bytes());
        }
        Mutation::ReplaceNumber { k, token } => {
            let nums = runs(b, len, |c| c.is_ascii_digit());
            if !nums.is_empty() {
                b.splice(nums[k % nums.len()].clone(), TOKENS[token].bytes());
            }
        }
        Mutation::EditHeader { k, word } => {
            let end = lines(b).get(2).map_or(len, |r| r.end);
            let words = runs(b, end, |c| !c.is_ascii_whitespace());
            let new = WORDS
                .get(word)
                .copied()
                .unwrap_or_else(|| TOKENS[word - WORDS.len()]);
            if !words.is_empty() {
                b.splice(words[k % words.len()].clone(), new.bytes());
            }
        }
        Mutation::DuplicateLine { line } => {
            let ls = lines(b);
            if !ls.is_empty() {
                let r = ls[line % ls.len()].clone();
                let copy = b[r.clone()].to_vec();
                b.splice(r.end..r.end, copy);
            }
        }
        Mutation::DropLine { line } => {
            let ls = lines(b);
            if !ls.is_empty() {
                b.drain(ls[line % ls.len()].clone());
            }
        }
        Mutation::SetWord { k, value } if len >= 8 => {
            let at = (k % (len / 8)) * 8;
            b[at..at + 8].copy_from_slice(&WORDS_U64[value].to_le_bytes());
        }
        Mutation::SetWord32 { k, value } if len >= 4 => {
            let at = (k % (len / 4)) * 4;
            b[at..at + 4].copy_from_slice(&value.to_le_bytes());
        }
        _ => {}
    }
}

/// A small weighted graph with an isolated vertex, for the binary formats.
fn small_graph() -> Graph {
    let e = EdgeList::from_triples(&[(0, 1, 4), (0, 2, 2), (1, 3, 5), (2, 1, 1), (3, 0, 7)]);
    Graph::from_edges(5, &e, "small", false).unwrap()
}

/// The valid input each reader's mutations start from.
fn seed(format: GraphFormat) -> Vec<u8> {
    let text: &str = match format {
        GraphFormat::MatrixMarket => {
            "%%MatrixMarket matrix coordinate integer general\n% c\n5 5 6\n1 2 4\n1 3 2\n2 4 5\n3 2 1\n4 1 7\n4 4 3\n"
        }
        GraphFormat::Dimacs => "c tiny\np sp 5 5\na 1 2 4\na 1 3 2\na 2 4 5\na 3 2 1\na 4 1 7\n",
        GraphFormat::Metis => {
            "% triangle and an isolated vertex\n4 3 1\n2 5 3 6\n1 5 3 7\n1 6 2 7\n\n"
        }
        GraphFormat::Snap => {
            "# FromNodeId\tToNodeId\tWeight\n10\t20\t4\n10\t30\t2\n20\t40\t5\n30\t20\t1\n40\t10\t7\n"
        }
        binary => {
            // Written once per process: the tests run in parallel and share the files.
            static BINARY: OnceLock<(Vec<u8>, Vec<u8>)> = OnceLock::new();
            let (galois, grc) = BINARY.get_or_init(|| {
                let dir = TempDir::new("mutation-seeds");
                let write = |format| {
                    let p = dir.0.join(file_name(format));
                    write_graph(&small_graph(), &p, Some(format)).unwrap();
                    std::fs::read(&p).unwrap()
                };
                (write(GraphFormat::Galois), write(GraphFormat::Cache))
            });
            return if binary == GraphFormat::Galois {
                galois
            } else {
                grc
            }
            .clone();
        }
    };
    text.as_bytes().to_vec()
}

fn mutations_never_panic(format: GraphFormat, muts: &[Mutation], dir: &TempDir) {
    let mut b = seed(format);
    for m in muts {
        apply(&mut b, m);
    }
    check_input(dir, format, &b);
}

#[test]
fn every_seed_reads_as_a_valid_graph() {
    for (_, _, format) in READERS {
        let dir = TempDir::new(&format!("mutation-unmutated-{}", format.name()));
        let g = read_bytes(&dir, format, &seed(format)).unwrap();
        support::assert_valid_graph(&g);
        assert!(g.num_edges() >= 5, "{format}: {} arcs", g.num_edges());
    }
}

/// Every file of `tests/corpus/<reader>/` (relative to the package, where `cargo test` runs)
/// reads as an error or a valid graph.
#[test]
fn corpus_inputs_are_errors_or_valid_graphs() {
    let corpus = Path::new("tests/corpus");
    for (folder, _, format) in READERS {
        let dir = TempDir::new(&format!("corpus-{folder}"));
        let mut files: Vec<_> = std::fs::read_dir(corpus.join(folder))
            .unwrap_or_else(|e| panic!("{}: {e}", corpus.join(folder).display()))
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        assert!(!files.is_empty(), "{folder}: an empty corpus");
        for f in files {
            let bytes = std::fs::read(&f).unwrap();
            let r = std::panic::catch_unwind(|| check_input(&dir, format, &bytes));
            assert!(r.is_ok(), "{} panicked", f.display());
        }
    }
}

fn mutations() -> impl Strategy<Value = Vec<Mutation>> {
    prop::collection::vec(mutation(), 1..5)
}

/// Every reader, each on 256 random mutation sequences of its own seed.
#[test]
fn mutations_never_panic_in_any_reader() {
    for (folder, _, format) in READERS {
        let dir = TempDir::new(&format!("mutations-{folder}"));
        let config = ProptestConfig {
            cases: 256,
            failure_persistence: None,
            ..ProptestConfig::default()
        };
        TestRunner::new(config)
            .run(&mutations(), |m| {
                mutations_never_panic(format, &m, &dir);
                Ok(())
            })
            .unwrap_or_else(|e| panic!("{format}: {e}"));
    }
}
