//! Fuzz target: the block engine on arbitrary bytes. Whatever the input, `upsert` refuses or
//! succeeds (never panics); when it inserts, `remove` gives the input back byte for byte; when it
//! refreshes, the user's bytes around the block are unchanged; `remove` on arbitrary bytes takes
//! out one contiguous range or refuses.
#![no_main]

use libfuzzer_sys::fuzz_target;
use projectfile_core::Namespace;
use projectfile_core::block::{Markers, UpsertAction, find, remove, upsert};

fuzz_target!(|data: &[u8]| {
    // Byte 0: bit 0 = the file exists; the rest = how many of the following bytes are the body.
    let Some((&head, rest)) = data.split_first() else {
        return;
    };
    let exists = head & 1 == 1;
    let body_len = usize::from(head >> 1).min(rest.len());
    let (body, file) = rest.split_at(body_len);
    let body = String::from_utf8_lossy(body);
    let markers = Markers::new(&Namespace::default());
    let existing = exists.then_some(file);

    // Arbitrary bytes: remove refuses or takes out one contiguous range.
    let before = remove(&markers, file);
    if let Ok(Some(removed)) = &before {
        let cut = file.len() - removed.bytes.len();
        assert!(cut > 0, "a removal that removed nothing");
        let prefix = removed
            .bytes
            .iter()
            .zip(file)
            .take_while(|(a, b)| a == b)
            .count();
        assert_eq!(
            &removed.bytes[prefix..],
            &file[prefix + cut..],
            "removal is not one contiguous range"
        );
    }
    let _ = find(&markers, file);

    let Ok(upserted) = upsert(&markers, existing, &body) else {
        return;
    };
    let removed = remove(&markers, &upserted.bytes)
        .expect("our own output parses")
        .expect("our own output holds a block");
    match (existing, upserted.action) {
        (None, _) => {
            assert!(removed.bytes.is_empty() && removed.now_empty);
        }
        (Some(original), UpsertAction::Inserted) => {
            assert_eq!(
                removed.bytes, original,
                "insert then remove changed user bytes"
            );
        }
        (Some(original), UpsertAction::Refreshed | UpsertAction::Unchanged) => {
            let Ok(Some(old)) = before else {
                panic!("a refresh of a file without a block");
            };
            assert_eq!(removed.bytes, old.bytes, "a refresh changed user bytes");
            if upserted.action == UpsertAction::Unchanged {
                assert_eq!(upserted.bytes, original);
            }
        }
    }
    // Refreshing our own output with the same body changes nothing.
    let again = upsert(&markers, Some(&upserted.bytes), &body).expect("refresh of our output");
    assert_eq!(again.action, UpsertAction::Unchanged);
    assert_eq!(again.bytes, upserted.bytes);
});
