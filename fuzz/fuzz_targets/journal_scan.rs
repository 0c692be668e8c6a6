//! Fuzz target: the ledger journal's reader on arbitrary bytes. Whatever the input, `scan` never
//! panics; what it returns as the last good record is a complete, checksummed line that ends
//! exactly at `good_len`; and good records written after any bytes (once a newline closes them)
//! are what it finds.
#![no_main]

use libfuzzer_sys::fuzz_target;
use projectfile_core::testing::journal::{frame, frame_sha256, scan};

fuzz_target!(|data: &[u8]| {
    let found = scan(data);
    assert!(found.good_len <= data.len());
    match found.last {
        None => assert_eq!(found.good_len, 0),
        Some(body) => {
            // Framed by this build, or by an earlier one (still read).
            let whole = &data[..found.good_len];
            assert!(
                whole.ends_with(&frame(body)) || whole.ends_with(&frame_sha256(body)),
                "not a whole record"
            );
        }
    }
    // Whatever came before, a record written after a newline is the one found.
    let mut written = data.to_vec();
    written.push(b'\n');
    let record = frame(b"{\"version\":1}");
    written.extend_from_slice(&record);
    let found = scan(&written);
    assert_eq!(found.last, Some(&b"{\"version\":1}"[..]));
    assert_eq!(found.good_len, written.len());
});
