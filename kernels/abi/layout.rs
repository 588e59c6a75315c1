//! [`AbiLayout`]: how Rust laid out an ABI struct, and the macro that declares one.

/// One field of an ABI struct as Rust laid it out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AbiField {
    /// The field's name, the same in Rust and in C.
    pub name: &'static str,
    /// Its offset in bytes.
    pub offset: usize,
    /// Its size in bytes.
    pub size: usize,
}

/// An ABI struct as Rust laid it out, checked against its C twin by `tests/abi.rs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AbiLayout {
    /// The struct's name, the same in Rust and in C (`struct <name>` of the header).
    pub name: &'static str,
    /// The header under `include/` that declares it.
    pub header: &'static str,
    /// Its size in bytes.
    pub size: usize,
    /// Its alignment in bytes.
    pub align: usize,
    /// Its fields, in declaration order.
    pub fields: &'static [AbiField],
}

impl AbiLayout {
    /// Bytes no field covers (implicit padding): 0 for every ABI struct, whose pads are
    /// named fields, so that no uninitialised byte is ever passed to a kernel.
    pub fn padding(&self) -> usize {
        self.size - self.fields.iter().map(|f| f.size).sum::<usize>()
    }
}

/// A constant both sides use (a phase, a stop code, a flag bit), checked against the C
/// enumerator of the same name by `tests/abi.rs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AbiConstant {
    /// The constant's name, the same in Rust and in C.
    pub name: &'static str,
    /// The header under `include/` that declares it.
    pub header: &'static str,
    /// Its value.
    pub value: u32,
}

/// Declares `u32` constants mirrored by C enumerators of `$header`, and `$list`: their
/// [`AbiConstant`]s.
macro_rules! abi_constants {
    (
        $list:ident in $header:literal {
            $( $(#[$meta:meta])* pub const $name:ident = $value:expr; )*
        }
    ) => {
        $( $(#[$meta])* pub const $name: u32 = $value; )*

        /// The constants of this module, checked against their C enumerators by `tests/abi.rs`.
        pub const $list: &[$crate::abi::AbiConstant] = &[$($crate::abi::AbiConstant {
            name: stringify!($name),
            header: $header,
            value: $name,
        }),*];
    };
}
pub(crate) use abi_constants;

/// Declares a `#[repr(C)]` ABI struct and its [`AbiLayout`] (`<Struct>::LAYOUT`).
macro_rules! abi_struct {
    (
        $(#[$meta:meta])*
        pub struct $name:ident in $header:literal {
            $( $(#[$field_meta:meta])* pub $field:ident : $ty:ty, )*
        }
    ) => {
        $(#[$meta])*
        #[repr(C)]
        pub struct $name {
            $( $(#[$field_meta])* pub $field: $ty, )*
        }

        impl $name {
            /// This struct's layout, checked against its C declaration by `tests/abi.rs`.
            pub const LAYOUT: $crate::abi::AbiLayout = $crate::abi::AbiLayout {
                name: stringify!($name),
                header: $header,
                size: ::core::mem::size_of::<$name>(),
                align: ::core::mem::align_of::<$name>(),
                fields: &[$($crate::abi::AbiField {
                    name: stringify!($field),
                    offset: ::core::mem::offset_of!($name, $field),
                    size: ::core::mem::size_of::<$ty>(),
                }),*],
            };
        }
    };
}
pub(crate) use abi_struct;
