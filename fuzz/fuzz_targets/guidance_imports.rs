//! Fuzz target: the guidance resolver (imports, session blocks, comments, budgets, symlinks) over
//! a `MemoryFs` decoded from the input never panics, and is deterministic.
//!
//! The input is a list of records decoded by `projectfile_core::guidance::fuzzing::decode`, which
//! the stable proptest twin (`core/tests/guidance_fuzz_props.rs`) shares, with the property.
#![no_main]

use libfuzzer_sys::fuzz_target;
use projectfile_core::guidance::fuzzing::{check_resolver, decode};

fuzz_target!(|data: &[u8]| {
    // The first three bytes also set the budget, the import hops and the profile switches.
    let knob = |i: usize| data.get(i).copied().unwrap_or(0);
    if let Err(broken) = check_resolver(&decode(data), [knob(0), knob(1), knob(2)]) {
        panic!("{broken}");
    }
});
