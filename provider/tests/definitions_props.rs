//! Properties of the neutral definitions' conversions: for any command body, the TOML a CLI
//! reads holds that body with every `$ARGUMENTS` turned into `{{args}}` and nothing else changed;
//! for any neutral hooks document, each event lands on the CLI's event with its hooks in order,
//! or the whole document is refused naming an event the CLI lacks.
#![allow(clippy::unwrap_used)]

use projectfile_provider::definitions::{
    self, HookDialect, HookEvent, HookLayout, NEUTRAL_ARGS, TOML_ARGS,
};
use projectfile_provider::{HooksFormat, HooksInput, NamedFile};
use proptest::prelude::*;
use serde_json::{Value, json};

fn body() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just(NEUTRAL_ARGS.to_string()),
            Just("\"\"\"".to_string()),
            Just("\\".to_string()),
            Just("\n".to_string()),
            "[ -~]{0,12}",
            "\\PC{0,6}",
        ],
        0..12,
    )
    .prop_map(|parts| parts.concat())
}

const SOME: HookDialect = HookDialect {
    cli: "Some CLI",
    events: &[
        (HookEvent::SessionStart, "Start"),
        (HookEvent::BeforeTool, "Before"),
        (HookEvent::Stop, "End"),
    ],
    layout: HookLayout::Nested,
    timeout_scale: 1000,
};

proptest! {
    #[test]
    fn a_command_body_reaches_the_toml_prompt_with_only_its_placeholder_changed(
        body in body(),
        description in proptest::option::of("[ -~]{1,20}"),
    ) {
        // Front matter is optional; a body opening with `---` would read as one.
        prop_assume!(!body.starts_with("---"));
        let content = match &description {
            Some(d) => format!("---\ndescription: {d}\n---\n{body}"),
            None => body.clone(),
        };
        let toml = definitions::command_toml(&NamedFile { name: "c".into(), content });
        let parsed: toml_edit::DocumentMut = toml.parse().unwrap();
        prop_assert_eq!(parsed["prompt"].as_str().unwrap(), body.replace(NEUTRAL_ARGS, TOML_ARGS));
        prop_assert!(definitions::is_toml_command(&toml));
    }

    #[test]
    fn neutral_hooks_land_on_the_clis_events_in_order_or_are_refused(
        events in prop::collection::btree_map(
            prop::sample::select(HookEvent::ALL.to_vec()),
            prop::collection::vec(("[a-z ]{1,10}", proptest::option::of(1u64..100)), 0..4),
            0..6,
        ),
    ) {
        let mut document = serde_json::Map::new();
        for (event, hooks) in &events {
            let list: Vec<Value> = hooks
                .iter()
                .map(|(command, timeout)| match timeout {
                    Some(t) => json!({"command": format!("x{command}"), "timeout": t}),
                    None => json!({"command": format!("x{command}")}),
                })
                .collect();
            document.insert(event.name().into(), Value::Array(list));
        }
        let input = HooksInput {
            config: json!({"hooks": document}),
            script: None,
            format: HooksFormat::Neutral,
        };
        let lacking: Vec<&HookEvent> = events
            .keys()
            .filter(|e| SOME.events.iter().all(|(have, _)| have != *e))
            .collect();
        match (definitions::hooks_config(&input, &SOME, None), lacking.first()) {
            (Err(error), Some(_)) => {
                let error = error.to_string();
                prop_assert!(
                    lacking.iter().any(|e| error.contains(&format!("{:?}", e.name()))),
                    "{}", error
                );
                prop_assert!(error.contains("Some CLI has no such event"), "{}", error);
            }
            (Ok(converted), None) => {
                for (event, hooks) in &events {
                    let name = SOME.events.iter().find(|(e, _)| e == event).unwrap().1;
                    let list = converted["hooks"][name].as_array().unwrap();
                    prop_assert_eq!(list.len(), hooks.len());
                    for (group, (command, timeout)) in list.iter().zip(hooks) {
                        let handler = &group["hooks"][0];
                        prop_assert_eq!(handler["command"].as_str().unwrap(), format!("x{command}"));
                        prop_assert_eq!(handler["timeout"].as_u64(), timeout.map(|t| t * 1000));
                    }
                }
            }
            (result, lacking) => prop_assert!(false, "{result:?} with {lacking:?} lacking"),
        }
    }
}
