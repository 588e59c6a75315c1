//! Named choices: the enums behind flags such as `--driver auto|fused|host`, each variant
//! with one name that it prints as and parses from ([`choice_names!`](crate::choice_names)),
//! and the error of a name that is none of them ([`ParseChoiceError`]).

/// A name that is not one of a choice's variants (what the `FromStr` of an enum named with
/// [`choice_names!`](crate::choice_names) returns).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} {given:?}: give one of {}", expected.join(", "))]
pub struct ParseChoiceError {
    what: &'static str,
    given: String,
    expected: &'static [&'static str],
}

impl ParseChoiceError {
    /// `given` is no name of a `what` (`"driver"`); `expected` lists the names.
    pub fn new(what: &'static str, given: &str, expected: &'static [&'static str]) -> Self {
        ParseChoiceError {
            what,
            given: given.to_owned(),
            expected,
        }
    }
}

/// Names the variants of a fieldless enum: a `name` method (documented by the attributes
/// given before the type), `Display` writing the name, and `FromStr` parsing it back,
/// ignoring ASCII case, with a [`ParseChoiceError`] that lists the names. A variant may have
/// other spellings that parse to it (`PullPush => "pull-push" | "pull"`); it prints as the
/// first.
///
/// ```
/// #[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// enum Side {
///     Left,
///     Right,
/// }
///
/// groute_core::choice_names! {
///     /// The flag value (`left`, `right`).
///     Side, "side" {
///         Left => "left" | "l",
///         Right => "right",
///     }
/// }
///
/// assert_eq!(Side::Right.name(), "right");
/// assert_eq!("L".parse::<Side>(), Ok(Side::Left));
/// let err = "up".parse::<Side>().unwrap_err();
/// assert_eq!(err.to_string(), r#"unknown side "up": give one of left, right"#);
/// ```
#[macro_export]
macro_rules! choice_names {
    (
        $(#[$doc:meta])*
        $ty:ident, $what:literal {
            $($variant:ident => $name:literal $(| $alias:literal)*),+ $(,)?
        }
    ) => {
        impl $ty {
            $(#[$doc])*
            pub const fn name(self) -> &'static str {
                match self {
                    $($ty::$variant => $name,)+
                }
            }
        }

        impl ::core::fmt::Display for $ty {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl ::core::str::FromStr for $ty {
            type Err = $crate::ParseChoiceError;

            /// Parses the [`name`](Self::name) of a variant (or another of its spellings),
            /// ignoring ASCII case.
            fn from_str(s: &str) -> ::core::result::Result<Self, $crate::ParseChoiceError> {
                $(
                    if s.eq_ignore_ascii_case($name) $(|| s.eq_ignore_ascii_case($alias))* {
                        return Ok($ty::$variant);
                    }
                )+
                Err($crate::ParseChoiceError::new($what, s, &[$($name),+]))
            }
        }
    };
}
