//! The Rust twins of `include/abi*.h` have their C layouts: the host's C compiler checks every
//! size, alignment and field offset that Rust computed (`groute_kernels::abi::LAYOUTS`), and
//! no struct has implicit padding.
//!
//! The check compiles a generated C file of `_Static_assert`s with `cc` (the C compiler Rust
//! links with; `CC` names another). The layouts agree with the device's: CUDA lays out a
//! struct of these types as the host compiler does.

use std::path::PathBuf;
use std::process::Command;

use groute_kernels::abi::{AbiConstant, AbiLayout, CONSTANTS, LAYOUTS};

/// The C source asserting every layout of `layouts` and the value of every constant of
/// `constants`.
fn assertions(layouts: &[AbiLayout], constants: &[AbiConstant]) -> String {
    let mut headers: Vec<&str> = layouts.iter().map(|l| l.header).collect();
    headers.extend(constants.iter().map(|c| c.header));
    headers.sort_unstable();
    headers.dedup();
    let mut c = String::from("#include <stddef.h>\n");
    for h in headers {
        c += &format!("#include \"{h}\"\n");
    }
    // `_Static_assert(expression == value, "what: Rust says <value><unit>")`.
    let mut assert = |expression: String, value: usize, what: &str, unit: &str| {
        c += &format!(
            "_Static_assert({expression} == {value}u, \"{what}: Rust says {value}{unit}\");\n"
        );
    };
    for l in layouts {
        let s = format!("struct {}", l.name);
        assert(format!("sizeof({s})"), l.size, &s, " bytes");
        assert(format!("_Alignof({s})"), l.align, &s, "-byte alignment");
        for f in l.fields {
            let what = format!("{s}.{}", f.name);
            assert(
                format!("offsetof({s}, {})", f.name),
                f.offset,
                &what,
                " (offset)",
            );
            assert(
                format!("sizeof((({s}*)0)->{})", f.name),
                f.size,
                &what,
                " bytes",
            );
        }
    }
    for k in constants {
        assert(k.name.to_string(), k.value as usize, k.name, "");
    }
    c
}

/// Every constant of [`CONSTANTS`].
fn all_constants() -> Vec<AbiConstant> {
    CONSTANTS
        .iter()
        .flat_map(|list| list.iter().copied())
        .collect()
}

#[test]
fn every_abi_struct_has_no_implicit_padding() {
    for l in LAYOUTS {
        assert_eq!(
            l.padding(),
            0,
            "{} has {} bytes of implicit padding: name a pad field in Rust and in {}",
            l.name,
            l.padding(),
            l.header
        );
        let mut end = 0;
        for f in l.fields {
            assert_eq!(
                f.offset, end,
                "{}.{} does not follow its predecessor",
                l.name, f.name
            );
            end = f.offset + f.size;
        }
    }
}

/// Compiles the assertions of `layouts` against the headers: `None` where the headers are not
/// here (a binary run outside its checkout), else the compiler's verdict.
fn check_with_c_compiler(
    layouts: &[AbiLayout],
    constants: &[AbiConstant],
) -> Option<Result<(), String>> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let include = root.join("include");
    if !include.is_dir() {
        eprintln!(
            "SKIPPED: {} is not here (binary run outside its checkout)",
            include.display()
        );
        return None;
    }
    let dir = std::env::temp_dir().join(format!(
        "groute-abi-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let source = dir.join("abi_check.c");
    std::fs::write(&source, assertions(layouts, constants))
        .unwrap_or_else(|e| panic!("{}: {e}", source.display()));
    let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let output = Command::new(&compiler)
        .args(["-std=c11", "-fsyntax-only", "-Werror", "-I"])
        .arg(&include)
        .arg(&source)
        .output()
        .unwrap_or_else(|e| {
            panic!("running the C compiler `{compiler}` failed ({e}): install one (cc) or set CC")
        });
    let _ = std::fs::remove_dir_all(&dir);
    Some(if output.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).into_owned())
    })
}

#[test]
fn every_abi_struct_matches_its_c_declaration() {
    if let Some(Err(diagnostics)) = check_with_c_compiler(LAYOUTS, &all_constants()) {
        panic!(
            "the C headers disagree with groute_kernels::abi (change both sides together):\n\
             {diagnostics}"
        );
    }
}

#[test]
fn a_field_moved_on_one_side_fails_the_check() {
    let layout = LAYOUTS
        .iter()
        .find(|l| l.name == "FusedParams")
        .expect("FusedParams is in LAYOUTS");
    let mut fields = layout.fields.to_vec();
    fields[1].offset += 8;
    let wrong = AbiLayout {
        fields: Box::leak(fields.into_boxed_slice()),
        ..*layout
    };
    if let Some(verdict) = check_with_c_compiler(&[wrong], &[]) {
        let diagnostics = verdict.expect_err("a wrong offset passed the check");
        assert!(
            diagnostics.contains("struct FusedParams.offsets: Rust says 16 (offset)"),
            "{diagnostics}"
        );
    }
}

#[test]
fn a_constant_changed_on_one_side_fails_the_check() {
    let mut constant = all_constants()[0];
    constant.value += 1;
    if let Some(verdict) = check_with_c_compiler(&[], &[constant]) {
        let diagnostics = verdict.expect_err("a wrong constant passed the check");
        assert!(
            diagnostics.contains(&format!("{}: Rust says {}", constant.name, constant.value)),
            "{diagnostics}"
        );
    }
}
