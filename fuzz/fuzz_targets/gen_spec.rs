//! Fuzzes the generator spec parser (`--gen` strings): any string is an error or a spec whose
//! printed form parses back to the same printed form.

#![no_main]

use groute_graph::GenSpec;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match text.parse::<GenSpec>() {
        Err(e) => assert!(!e.to_string().is_empty()),
        Ok(spec) => {
            let printed = spec.to_string();
            let again: GenSpec = printed
                .parse()
                .unwrap_or_else(|e| panic!("{text:?} printed as {printed:?} fails to parse: {e}"));
            assert_eq!(again.to_string(), printed, "{text:?}");
            let _ = spec.generated_edges();
        }
    }
});
