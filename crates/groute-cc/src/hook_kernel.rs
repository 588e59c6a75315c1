//! Which CUDA kernel hooks the edge chunks ([`HookKernel`]).

use std::fmt;
use std::str::FromStr;

use crate::CcError;

/// The CUDA kernel that hooks the edges of each chunk ([`crate::CcOptions::hook`]). Every one
/// computes the same components; they differ in how many memory requests a thread keeps in
/// flight and in how the threads of a warp share work on CSR-ordered chunks, where consecutive
/// edges share their first endpoint `u` (a hub's whole chunk shares one). The host backend has
/// one hook and ignores this setting.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum HookKernel {
    /// One thread per edge (`cc_hook_edges`), grid-stride: every thread loads `parent[u]`
    /// and finds `u`'s root itself.
    Plain,
    /// One thread per edge, four edges per thread and iteration (`cc_hook_edges_batched`):
    /// the loads of all four are issued before any is used (more memory requests in flight
    /// per thread; the common edge whose endpoints already share a parent costs no dependent
    /// round trip of its own).
    Batched,
    /// Warp-cooperative (`cc_hook_edges_warp`), grid-stride: the lanes of a warp whose edges
    /// share `u` find its root once, lanes uniting the same two trees are deduplicated, and
    /// the lanes that would all hook `u`'s root under smaller roots elect one CAS.
    ///
    /// The default: on one H200 (`cc --check --repeat 7`, median device ms) kron21 took
    /// 1.76 ms against 2.12 (plain), 2.14 (batched) and 1.78 (warp-range), and road-usa
    /// 3.55 ms against 4.82 (plain) and 5.62 (batched).
    #[default]
    Warp,
    /// As [`HookKernel::Warp`], but each warp walks its own contiguous range of the chunk
    /// (`cc_hook_edges_warp_range`), remembering `u`'s root from one step to the next, so a
    /// hub's root entry is loaded about once per warp instead of once per step.
    WarpRange,
}

impl HookKernel {
    /// Every variant, in the order of [`HookKernel::name`]s accepted by `FromStr`.
    pub const ALL: [HookKernel; 4] = [
        HookKernel::Plain,
        HookKernel::Batched,
        HookKernel::Warp,
        HookKernel::WarpRange,
    ];

    /// The name `FromStr` accepts (`plain`, `batched`, `warp`, `warp-range`).
    pub const fn name(self) -> &'static str {
        match self {
            HookKernel::Plain => "plain",
            HookKernel::Batched => "batched",
            HookKernel::Warp => "warp",
            HookKernel::WarpRange => "warp-range",
        }
    }
}

impl fmt::Display for HookKernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for HookKernel {
    type Err = CcError;

    fn from_str(s: &str) -> Result<Self, CcError> {
        HookKernel::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                CcError::invalid("hook kernel", s, "one of plain, batched, warp, warp-range")
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_are_refused() {
        for k in HookKernel::ALL {
            assert_eq!(k.to_string().parse::<HookKernel>().expect("known name"), k);
        }
        let err = "warps".parse::<HookKernel>().expect_err("unknown name");
        let msg = err.to_string();
        assert!(msg.contains("warps") && msg.contains("warp-range"), "{msg}");
    }
}
