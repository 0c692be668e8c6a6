//! Properties of the one front matter reader: for any text it never panics, its body is the
//! text's own end, and where the front matter ends is where the body starts; for any name, the
//! agent file written for it reads that name back exactly.
#![allow(clippy::unwrap_used)]

use projectfile_provider::NamedFile;
use projectfile_provider::definitions::agent_markdown;
use projectfile_provider::front_matter::{end_of_front_matter, front_matter};
use proptest::prelude::*;

/// Text built from the pieces front matter and YAML scalars are made of.
fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("---\n".to_string()),
            Just("--- \r\n".to_string()),
            Just("\u{feff}".to_string()),
            Just("description: ".to_string()),
            Just("name : ".to_string()),
            Just("  ".to_string()),
            Just("|-\n".to_string()),
            Just(">+2\n".to_string()),
            Just("\"\\u12".to_string()),
            Just("'it''s'".to_string()),
            Just(" #".to_string()),
            Just("\n".to_string()),
            "[ -~]{0,10}",
            "\\PC{0,4}",
        ],
        0..16,
    )
    .prop_map(|parts| parts.concat())
}

proptest! {
    #[test]
    fn any_text_splits_into_front_matter_and_its_own_end(text in text()) {
        let (fields, body) = front_matter(&text);
        prop_assert!(text.ends_with(body));
        let end = end_of_front_matter(&text);
        prop_assert_eq!(end, text.len() - body.len());
        if end == 0 {
            prop_assert!(fields.is_empty());
            prop_assert_eq!(body, text.as_str());
        }
    }

    #[test]
    fn an_agent_reads_back_the_name_it_was_given(
        name in "[^/\\x00-\\x1f\\x7f.][^/\\x00-\\x1f\\x7f]{0,20}",
        description in "[a-zA-Z][a-zA-Z ]{0,20}",
    ) {
        let file = NamedFile {
            name: name.clone(),
            content: format!("---\nname: other\ndescription: {description}\n---\nBody\n"),
        };
        let written = agent_markdown(&file).unwrap();
        let (fields, body) = front_matter(&written);
        prop_assert_eq!(body, "Body\n");
        let read = fields.iter().find(|(k, _)| k == "name").map(|(_, v)| v.as_str());
        prop_assert_eq!(read, Some(name.as_str()), "{}", written);
    }
}
