//! Byte sizes as users write them on command lines: `512M`, `8G`, `1.5G`, `64KiB`, `123456`.
//!
//! Units are binary, as GPU tools report memory (`nvidia-smi` prints MiB): `K`, `M`, `G` and
//! `T` are 2^10, 2^20, 2^30 and 2^40 bytes. `KiB`, `MiB`, `GiB`, `TiB` mean the same, and so
//! do `KB`, `MB`, `GB`, `TB` (no decimal units: a device memory limit written `8GB` means the
//! 8 GiB the device reports). Units are case-insensitive, may follow the number after spaces,
//! and `B` alone (or no unit) means bytes. A fraction is allowed with a unit and rounds down
//! to a whole byte; a plain byte count must be whole.
//!
//! ```
//! use groute_core::{ByteSize, parse_byte_size};
//!
//! assert_eq!(parse_byte_size("512M")?, 512 << 20);
//! assert_eq!(parse_byte_size("1.5G")?, 3 << 29);
//! assert_eq!("64KiB".parse::<ByteSize>()?.bytes(), 64 << 10);
//! assert_eq!(ByteSize(8 << 30).to_string(), "8 GiB");
//! assert!(parse_byte_size("lots").is_err());
//! # Ok::<(), groute_core::Error>(())
//! ```

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

/// A number of bytes, parsed from and displayed in binary units (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ByteSize(pub u64);

impl ByteSize {
    /// The size in bytes.
    pub fn bytes(self) -> u64 {
        self.0
    }
}

impl From<ByteSize> for u64 {
    fn from(size: ByteSize) -> u64 {
        size.0
    }
}

/// Binary units from the largest down, with the name [`ByteSize`]'s `Display` uses.
const UNITS: [(u64, &str); 4] = [
    (1 << 40, "TiB"),
    (1 << 30, "GiB"),
    (1 << 20, "MiB"),
    (1 << 10, "KiB"),
];

/// Fraction digits beyond this many are refused (they cannot change a byte count anyway
/// below a TiB, and keep the arithmetic exact in `u128`).
const MAX_FRACTION_DIGITS: usize = 18;

fn unit_multiplier(unit: &str) -> Option<u64> {
    Some(match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => return None,
    })
}

/// Parses a byte size such as `512M`, `8G`, `1.5G`, `64KiB` or `123456` (see the module docs
/// for the units). Garbage, an unknown unit, a fractional byte count and sizes past `u64` are
/// an [`Error::InvalidByteSize`] naming the input and the problem.
pub fn parse_byte_size(input: &str) -> Result<u64> {
    let invalid = |reason: &'static str| Error::InvalidByteSize {
        input: input.to_owned(),
        reason,
    };
    let s = input.trim();
    if s.is_empty() {
        return Err(invalid("the size is empty"));
    }
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (number, unit) = (&s[..split], s[split..].trim());
    let multiplier = unit_multiplier(unit).ok_or_else(|| {
        invalid(if number.is_empty() {
            "it does not start with a number"
        } else {
            "the unit is not one of B, K, M, G, T (or KiB, MiB, GiB, TiB)"
        })
    })?;
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && fraction.is_empty() {
        return Err(invalid("it does not start with a number"));
    }
    if fraction.contains('.') {
        return Err(invalid("the number has more than one decimal point"));
    }
    if fraction.len() > MAX_FRACTION_DIGITS {
        return Err(invalid("the number has more than 18 decimal places"));
    }
    let too_large = || invalid("the size does not fit in 64 bits");
    let whole: u128 = if whole.is_empty() {
        0
    } else {
        whole.parse().map_err(|_| too_large())?
    };
    let scale = 10u128.pow(fraction.len() as u32);
    let fraction_value: u128 = if fraction.is_empty() {
        0
    } else {
        fraction.parse().map_err(|_| too_large())?
    };
    if multiplier == 1 && fraction_value != 0 {
        return Err(invalid(
            "a byte count must be whole (use a unit for fractions: 1.5G)",
        ));
    }
    let bytes = whole
        .checked_mul(u128::from(multiplier))
        .and_then(|b| b.checked_add(fraction_value * u128::from(multiplier) / scale))
        .ok_or_else(too_large)?;
    u64::try_from(bytes).map_err(|_| too_large())
}

impl FromStr for ByteSize {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        parse_byte_size(s).map(ByteSize)
    }
}

/// The largest unit that divides the size into a whole number below this is shown exactly.
const EXACT_BELOW: u64 = 100_000;

/// `512 MiB` or `1536 MiB` when the size is a whole number (below 100000) of a unit, else two
/// decimals of the largest unit and the exact count (`1.46 GiB (1567891234 B)`); below
/// 1 KiB, `N B`.
impl fmt::Display for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bytes = self.0;
        let exact = UNITS
            .iter()
            .find(|(size, _)| bytes >= *size && bytes % size == 0 && bytes / size < EXACT_BELOW);
        match (exact, UNITS.iter().find(|(size, _)| bytes >= *size)) {
            (Some((size, name)), _) => write!(f, "{} {name}", bytes / size),
            (None, None) => write!(f, "{bytes} B"),
            (None, Some((size, name))) => {
                write!(f, "{:.2} {name} ({bytes} B)", bytes as f64 / *size as f64)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_units_and_their_spellings_parse_to_powers_of_1024() {
        for (text, bytes) in [
            ("123456", 123_456),
            ("0", 0),
            ("17B", 17),
            ("1K", 1 << 10),
            ("64KiB", 64 << 10),
            ("64kb", 64 << 10),
            ("512M", 512 << 20),
            ("512 MiB", 512 << 20),
            ("8G", 8 << 30),
            ("8gib", 8 << 30),
            ("8GB", 8 << 30),
            ("2T", 2 << 40),
            (" 3 g ", 3 << 30),
        ] {
            assert_eq!(parse_byte_size(text).unwrap(), bytes, "{text}");
        }
    }

    #[test]
    fn fractions_scale_by_the_unit_and_round_down() {
        assert_eq!(parse_byte_size("1.5G").unwrap(), 3 << 29);
        assert_eq!(parse_byte_size("0.5K").unwrap(), 512);
        assert_eq!(parse_byte_size(".25M").unwrap(), 1 << 18);
        assert_eq!(parse_byte_size("2.").unwrap(), 2);
        // 0.3 KiB is 307.2 bytes.
        assert_eq!(parse_byte_size("0.3K").unwrap(), 307);
    }

    #[test]
    fn garbage_is_refused_with_a_reason() {
        for (text, reason) in [
            ("", "empty"),
            ("   ", "empty"),
            ("lots", "does not start with a number"),
            ("G", "does not start with a number"),
            (".", "does not start with a number"),
            ("12X", "the unit is not one of"),
            ("12 MBytes", "the unit is not one of"),
            ("-5M", "does not start with a number"),
            ("1.2.3G", "more than one decimal point"),
            ("1.5", "must be whole"),
            ("16777216T", "does not fit in 64 bits"),
            (
                "99999999999999999999999999999999999999999",
                "does not fit in 64 bits",
            ),
        ] {
            let err = parse_byte_size(text).unwrap_err();
            let message = err.to_string();
            assert!(
                matches!(err, Error::InvalidByteSize { ref input, .. } if input == text),
                "{text}: {err:?}"
            );
            assert!(message.contains(reason), "{text}: {message}");
            assert!(
                message.contains("512M"),
                "the message shows an example: {message}"
            );
        }
    }

    #[test]
    fn the_largest_size_fits_and_one_more_does_not() {
        assert_eq!(parse_byte_size(&u64::MAX.to_string()).unwrap(), u64::MAX);
        assert!(parse_byte_size("18446744073709551616").is_err());
        assert_eq!(parse_byte_size("16777215T").unwrap(), 16_777_215 << 40);
    }

    #[test]
    fn display_is_exact_in_a_whole_unit_or_shows_the_byte_count_and_reparses() {
        assert_eq!(ByteSize(0).to_string(), "0 B");
        assert_eq!(ByteSize(1023).to_string(), "1023 B");
        assert_eq!(ByteSize(64 << 10).to_string(), "64 KiB");
        assert_eq!(ByteSize(1536 << 20).to_string(), "1536 MiB");
        assert_eq!(
            ByteSize((3 << 29) + 1).to_string(),
            "1.50 GiB (1610612737 B)"
        );
        assert_eq!(
            ByteSize((1 << 30) + 1024).to_string(),
            "1.00 GiB (1073742848 B)"
        );
        assert_eq!(ByteSize(1500).to_string(), "1.46 KiB (1500 B)");
        for bytes in [0, 1, 1 << 10, 512 << 20, 1536 << 20, 8 << 30, 3 << 40] {
            let text = ByteSize(bytes).to_string();
            assert_eq!(text.parse::<ByteSize>().unwrap().bytes(), bytes, "{text}");
        }
    }
}
