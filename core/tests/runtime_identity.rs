//! Runtime identity: session id parsing, the key → directory mapping (stable, filesystem-safe,
//! injective, mode-separated) and its inverse.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

use std::path::{Path, PathBuf};

use projectfile_core::reader::Mode;
use projectfile_core::runtime::{
    Runtime, RuntimeKey, SessionId, SessionKind, decode_component, encode_component,
};
use proptest::prelude::*;
use rstest::rstest;

const UUID: &str = "0f8fad5b-d9cb-469f-a165-70867728950e";

fn key(user: &str, project: &str, session: &str, provider: &str, mode: Mode) -> RuntimeKey {
    RuntimeKey::new(
        user,
        project,
        SessionId::parse(session).unwrap(),
        provider,
        mode,
    )
    .unwrap()
}

#[rstest]
#[case("work:project:42", SessionKind::Work, "42", None)]
#[case("code:project:42", SessionKind::Code, "42", None)]
#[case("work:project:42:review", SessionKind::Work, "42", Some("review"))]
#[case("code:project:a.b_c-D:k-1", SessionKind::Code, "a.b_c-D", Some("k-1"))]
#[case(&format!("product-{UUID}"), SessionKind::Product, UUID, None)]
#[case(&format!("product-{UUID}:main"), SessionKind::Product, UUID, Some("main"))]
fn session_ids_in_the_registry_forms_parse(
    #[case] text: &str,
    #[case] kind: SessionKind,
    #[case] id: &str,
    #[case] conversation: Option<&str>,
) {
    let parsed = SessionId::parse(text).unwrap();
    assert_eq!(parsed.kind(), kind);
    assert_eq!(parsed.id(), id);
    assert_eq!(parsed.conversation_key(), conversation);
    assert_eq!(parsed.as_str(), text);
    assert_eq!(parsed.to_string(), text);
    assert_eq!(text.parse::<SessionId>().unwrap(), parsed);
}

/// UUIDs compare without case, so every spelling of one is one canonical id (lower case); the
/// conversation key and any other id keep their case.
#[rstest]
#[case(
    "product-0F8FAD5B-D9CB-469F-A165-70867728950E",
    "product-0f8fad5b-d9cb-469f-a165-70867728950e"
)]
#[case(
    "product-0f8FAD5b-d9cb-469F-a165-70867728950e:Main",
    "product-0f8fad5b-d9cb-469f-a165-70867728950e:Main"
)]
#[case(
    "work:project:0F8FAD5B-D9CB-469F-A165-70867728950E",
    "work:project:0f8fad5b-d9cb-469f-a165-70867728950e"
)]
#[case(
    "code:project:0F8FAD5B-D9CB-469F-A165-70867728950E:Review",
    "code:project:0f8fad5b-d9cb-469f-a165-70867728950e:Review"
)]
#[case("work:project:Crew-7:Review", "work:project:Crew-7:Review")]
fn session_ids_have_one_canonical_form(#[case] given: &str, #[case] canonical: &str) {
    let parsed = SessionId::parse(given).unwrap();
    assert_eq!(parsed.as_str(), canonical);
    assert_eq!(parsed.to_string(), canonical);
    assert_eq!(parsed, SessionId::parse(canonical).unwrap());
    assert_eq!(
        serde_json::to_string(&parsed).unwrap(),
        format!("\"{canonical}\"")
    );
    let upper = key("u", "p", given, "codex", Mode::Run);
    let lower = key("u", "p", canonical, "codex", Mode::Run);
    assert_eq!(upper.relative_dir(), lower.relative_dir());
}

#[test]
fn a_folder_named_after_a_non_canonical_spelling_is_not_a_runtime_dir() {
    let canonical = key("u", "p", &format!("product-{UUID}"), "codex", Mode::Run);
    assert_eq!(
        RuntimeKey::from_relative_dir(&canonical.relative_dir()).unwrap(),
        canonical
    );
    let upper = format!("product-{}", UUID.to_ascii_uppercase());
    let folder: PathBuf = [
        "u".to_string(),
        "p".to_string(),
        projectfile_core::runtime::encode_component(&upper),
        "codex".to_string(),
        "run".to_string(),
    ]
    .iter()
    .collect();
    assert!(RuntimeKey::from_relative_dir(&folder).is_err());
}

#[rstest]
#[case("")]
#[case("42")]
#[case("work:project:")]
#[case("work:project")]
#[case("work:42")]
#[case("chat:project:42")]
#[case("Work:project:42")]
#[case("work:project:42:")]
#[case("work:project:42:a:b")]
#[case("work:project:4 2")]
#[case("work:project:../etc")]
#[case("work:project:a/b")]
#[case("code:project:é")]
#[case("product-")]
#[case("product-1234")]
#[case("product-0f8fad5b-d9cb-469f-a165-70867728950")]
#[case("product-0f8fad5bd9cb469fa16570867728950e")]
#[case("product-0f8fad5b-d9cb-469f-a165-70867728950g")]
#[case("product-0f8fad5b-d9cb-469f-a165-70867728950e-")]
#[case("product-0f8fad5b-d9cb-469f-a165-70867728950e:")]
#[case("product-0f8fad5b-d9cb-469f-a165-70867728950e:a:b")]
#[case(" work:project:42")]
#[case("work:project:42\n")]
fn anything_else_is_refused_with_a_clear_error(#[case] text: &str) {
    let err = SessionId::parse(text).unwrap_err();
    let message = err.to_string();
    assert!(message.contains("session id"), "{message}");
    assert!(message.contains("expected work:project:<id>"), "{message}");
    assert_eq!(err.kind(), "invalid");
}

#[test]
fn over_long_ids_are_refused() {
    let long = "a".repeat(65);
    assert!(SessionId::parse(&format!("work:project:{long}")).is_err());
    assert!(SessionId::parse(&format!("work:project:1:{long}")).is_err());
    assert!(SessionId::parse(&format!("work:project:{}", &long[1..])).is_ok());
}

#[test]
fn session_ids_round_trip_through_serde_as_strings() {
    let id = SessionId::parse("work:project:42:review").unwrap();
    let json = serde_json::to_string(&id).unwrap();
    assert_eq!(json, "\"work:project:42:review\"");
    assert_eq!(serde_json::from_str::<SessionId>(&json).unwrap(), id);
    assert!(serde_json::from_str::<SessionId>("\"nope\"").is_err());
}

#[test]
fn modes_serialize_snake_case() {
    assert_eq!(
        serde_json::to_string(&Mode::Builder).unwrap(),
        "\"builder\""
    );
    assert_eq!(serde_json::to_string(&Mode::Run).unwrap(), "\"run\"");
    assert_eq!(serde_json::from_str::<Mode>("\"run\"").unwrap(), Mode::Run);
}

#[test]
fn the_directory_is_readable_safe_and_stable() {
    let k = key(
        "alice@example.com",
        "Crew 7",
        "work:project:42:review",
        "claude",
        Mode::Run,
    );
    assert_eq!(
        k.relative_dir(),
        PathBuf::from("alice_40example.com/_43rew_207/work_3aproject_3a42_3areview/claude/run")
    );
    // Same key, same place: computed twice, and after a serde round trip (a restart).
    let again: RuntimeKey = serde_json::from_str(&serde_json::to_string(&k).unwrap()).unwrap();
    assert_eq!(again, k);
    assert_eq!(again.relative_dir(), k.relative_dir());
}

#[test]
fn a_different_mode_gets_a_different_runtime() {
    let builder = key("u", "p", "work:project:1", "codex", Mode::Builder);
    let run = key("u", "p", "work:project:1", "codex", Mode::Run);
    assert_ne!(builder.relative_dir(), run.relative_dir());
    let root = Path::new("/var/lib/projectfile/runtimes");
    assert_ne!(
        Runtime::locate(root, builder).unwrap().dir(),
        Runtime::locate(root, run).unwrap().dir()
    );
}

#[rstest]
#[case(".")]
#[case("..")]
#[case(".hidden")]
#[case("a/b")]
#[case("A")]
#[case("_")]
#[case("\0")]
#[case("ünï")]
fn awkward_components_encode_to_safe_names(#[case] text: &str) {
    let name = encode_component(text);
    assert!(!name.is_empty() && name != "." && name != "..", "{name}");
    assert!(!name.starts_with('.'), "{name}");
    assert!(
        name.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-._".contains(&b)),
        "{name}"
    );
    assert_eq!(decode_component(&name).as_deref(), Some(text));
}

#[rstest]
#[case("")]
#[case("_")]
#[case("_4")]
#[case("_zz")]
#[case("_61")] // 'a' would have been kept as is: not canonical
#[case(".a")]
#[case("A")]
#[case("a/b")]
fn names_the_encoder_cannot_produce_do_not_decode(#[case] name: &str) {
    assert_eq!(decode_component(name), None);
}

#[test]
fn empty_and_over_long_components_are_refused() {
    let session = SessionId::parse("work:project:1").unwrap();
    assert!(RuntimeKey::new("", "p", session.clone(), "claude", Mode::Run).is_err());
    assert!(RuntimeKey::new("u", "", session.clone(), "claude", Mode::Run).is_err());
    assert!(RuntimeKey::new("u", "p", session.clone(), "", Mode::Run).is_err());
    let err = RuntimeKey::new("U".repeat(86), "p", session.clone(), "claude", Mode::Run)
        .unwrap_err()
        .to_string();
    assert!(err.contains("too long"), "{err}");
    assert!(RuntimeKey::new("u".repeat(255), "p", session, "claude", Mode::Run).is_ok());
}

#[test]
fn a_relative_runtime_root_is_refused() {
    let k = key("u", "p", "work:project:1", "claude", Mode::Run);
    assert!(Runtime::locate(Path::new("runtimes"), k).is_err());
}

#[test]
fn paths_that_are_not_runtime_dirs_do_not_decode() {
    for bad in [
        "u/p/work_3aproject_3a1/claude",
        "u/p/work_3aproject_3a1/claude/run/x",
        "u/p/work_3aproject_3a1/claude/walk",
        "u/p/not-a-session/claude/run",
        "/u/p/work_3aproject_3a1/claude/run",
        "u/../work_3aproject_3a1/claude/run",
    ] {
        assert!(
            RuntimeKey::from_relative_dir(Path::new(bad)).is_err(),
            "{bad}"
        );
    }
}

// Small alphabets force near-collisions: case, separators, escapes and dots.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[aA_.:%/-]{1,4}",
        "[a-z0-9]{1,6}",
        "\\PC{1,8}",
        Just("_5f".to_string()),
        Just("_".to_string()),
    ]
}

fn session() -> impl Strategy<Value = SessionId> {
    let part = "[aA0._-]{1,3}";
    prop_oneof![
        (part, proptest::option::of(part)).prop_map(|(id, s)| format!(
            "work:project:{id}{}",
            s.map(|s| format!(":{s}")).unwrap_or_default()
        )),
        (part, proptest::option::of(part)).prop_map(|(id, s)| format!(
            "code:project:{id}{}",
            s.map(|s| format!(":{s}")).unwrap_or_default()
        )),
        ("[0aA]{8}", proptest::option::of(part)).prop_map(|(head, s)| format!(
            "product-{head}-0000-0000-0000-000000000000{}",
            s.map(|s| format!(":{s}")).unwrap_or_default()
        )),
    ]
    .prop_map(|text| SessionId::parse(&text).unwrap())
}

fn runtime_key() -> impl Strategy<Value = RuntimeKey> {
    (
        text(),
        text(),
        session(),
        text(),
        prop_oneof![Just(Mode::Builder), Just(Mode::Run)],
    )
        .prop_map(|(u, p, s, prov, m)| RuntimeKey::new(u, p, s, prov, m).unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn distinct_keys_never_share_a_directory(a in runtime_key(), b in runtime_key()) {
        prop_assert_eq!(a == b, a.relative_dir() == b.relative_dir());
    }

    #[test]
    fn the_directory_decodes_back_to_its_key(k in runtime_key()) {
        prop_assert_eq!(RuntimeKey::from_relative_dir(&k.relative_dir()).unwrap(), k);
    }

    #[test]
    fn components_encode_injectively(a in "\\PC{0,12}", b in "\\PC{0,12}") {
        prop_assert_eq!(a == b, encode_component(&a) == encode_component(&b));
        if !a.is_empty() {
            prop_assert_eq!(decode_component(&encode_component(&a)), Some(a));
        }
    }

    #[test]
    fn session_ids_display_and_parse_round_trip(s in session()) {
        prop_assert_eq!(SessionId::parse(&s.to_string()).unwrap(), s);
    }

    #[test]
    fn arbitrary_text_never_panics_the_parser(s in "\\PC{0,60}") {
        if let Ok(id) = SessionId::parse(&s) {
            // Parsing is canonicalising: the canonical text parses to itself.
            prop_assert_eq!(SessionId::parse(id.as_str()).unwrap(), id.clone());
            prop_assert!(id.as_str().eq_ignore_ascii_case(&s));
        }
    }

    /// Every spelling of one UUID (any mix of cases, with or without a key) is one session id and
    /// one runtime folder; different UUIDs, or different keys, never are.
    #[test]
    fn every_spelling_of_a_uuid_is_one_runtime(
        hex in "[0-9a-f]{32}",
        upper_a in proptest::collection::vec(any::<bool>(), 32),
        upper_b in proptest::collection::vec(any::<bool>(), 32),
        other in "[0-9a-f]{32}",
        prefix in prop_oneof![Just("product-"), Just("work:project:"), Just("code:project:")],
        key_text in proptest::option::of("[A-Za-z0-9._-]{1,8}"),
    ) {
        let spell = |hex: &str, upper: &[bool]| -> String {
            let chars: String = hex
                .chars()
                .zip(upper)
                .map(|(c, up)| if *up { c.to_ascii_uppercase() } else { c })
                .collect();
            let uuid = format!(
                "{}-{}-{}-{}-{}",
                &chars[..8], &chars[8..12], &chars[12..16], &chars[16..20], &chars[20..]
            );
            let suffix = key_text.as_ref().map(|k| format!(":{k}")).unwrap_or_default();
            format!("{prefix}{uuid}{suffix}")
        };
        let a = SessionId::parse(&spell(&hex, &upper_a)).unwrap();
        let b = SessionId::parse(&spell(&hex, &upper_b)).unwrap();
        prop_assert_eq!(&a, &b);
        let lower = spell(&hex, &[false; 32]);
        prop_assert_eq!(a.as_str(), lower.as_str());
        prop_assert_eq!(a.conversation_key(), key_text.as_deref());
        let ka = RuntimeKey::new("u", "p", a.clone(), "codex", Mode::Run).unwrap();
        let kb = RuntimeKey::new("u", "p", b, "codex", Mode::Run).unwrap();
        prop_assert_eq!(ka.relative_dir(), kb.relative_dir());
        let c = SessionId::parse(&spell(&other, &upper_a)).unwrap();
        prop_assert_eq!(hex == other, a == c);
    }
}
