//! The JSON receipts are a contract: every command's `--json` output validates against the
//! committed JSON Schema named by its `"schema"` field (strictly: a field the schema does not
//! document fails), every schema is checked against a real output, and the committed schemas are
//! the ones the Rust types generate.
//!
//! The validator below covers the JSON Schema keywords our generated schemas use (`$ref` into
//! `$defs`, `type`, `const`, `enum`, `properties`, `required`, `additionalProperties`, `items`,
//! `oneOf`, `anyOf`, `allOf`); a keyword it does not know fails the test rather than passing
//! silently.
#![cfg(feature = "schema")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::panic
)]

mod support;

use serde_json::Value;
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use support::Sandbox;

fn schema_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/schema")
}

fn committed(name: &str) -> Value {
    let path = schema_dir().join(format!("{name}.json"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}; run `cargo xtask codegen`", path.display()));
    serde_json::from_str(&text).unwrap()
}

#[test]
fn committed_schemas_are_generated_from_the_types() {
    for (name, generated) in projectfile::receipts::json_schemas() {
        assert_eq!(
            committed(name),
            generated,
            "docs/schema/{name}.json is out of date: run `cargo xtask codegen`"
        );
    }
}

/// Validates `value` against `schema` (with `root` for `$ref`), strictly; errors name the JSON
/// pointer.
fn validate(root: &Value, schema: &Value, value: &Value, at: &str, errors: &mut Vec<String>) {
    const KNOWN: &[&str] = &[
        "$schema",
        "$defs",
        "$ref",
        "title",
        "description",
        "type",
        "const",
        "enum",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "oneOf",
        "anyOf",
        "allOf",
        "format",
        "minimum",
        "maximum",
        "maxItems",
        "minItems",
        "prefixItems",
        "default",
    ];
    let Some(object) = schema.as_object() else {
        if schema == &Value::Bool(false) {
            errors.push(format!("{at}: not allowed"));
        }
        return;
    };
    for key in object.keys() {
        assert!(
            KNOWN.contains(&key.as_str()),
            "{at}: unsupported keyword {key}"
        );
    }
    if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
        let name = reference.strip_prefix("#/$defs/").expect("local $ref");
        validate(root, &root["$defs"][name], value, at, errors);
    }
    if let Some(types) = object.get("type") {
        let types: Vec<&str> = match types {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => panic!("{at}: bad type"),
        };
        let ok = types.iter().any(|t| match *t {
            "object" => value.is_object(),
            "array" => value.is_array(),
            "string" => value.is_string(),
            "boolean" => value.is_boolean(),
            "null" => value.is_null(),
            "integer" => value.is_u64() || value.is_i64(),
            "number" => value.is_number(),
            other => panic!("{at}: unknown type {other}"),
        });
        if !ok {
            errors.push(format!("{at}: {value} is not {types:?}"));
            return;
        }
    }
    if let Some(expected) = object.get("const")
        && expected != value
    {
        errors.push(format!("{at}: {value} is not {expected}"));
    }
    if let (Some(bound), Some(n)) = (
        object.get("minimum").and_then(Value::as_f64),
        value.as_f64(),
    ) && n < bound
    {
        errors.push(format!("{at}: {value} is below the minimum {bound}"));
    }
    if let (Some(bound), Some(n)) = (
        object.get("maximum").and_then(Value::as_f64),
        value.as_f64(),
    ) && n > bound
    {
        errors.push(format!("{at}: {value} is above the maximum {bound}"));
    }
    if let Some(options) = object.get("enum").and_then(Value::as_array)
        && !options.contains(value)
    {
        errors.push(format!("{at}: {value} is not one of {options:?}"));
    }
    if let Some(map) = value.as_object() {
        let properties = object.get("properties").and_then(Value::as_object);
        for required in object
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let key = required.as_str().unwrap();
            if !map.contains_key(key) {
                errors.push(format!("{at}: missing required {key}"));
            }
        }
        for (key, item) in map {
            let here = format!("{at}/{key}");
            match properties.and_then(|p| p.get(key)) {
                Some(sub) => validate(root, sub, item, &here, errors),
                None => match object.get("additionalProperties") {
                    Some(extra) if extra.is_object() => validate(root, extra, item, &here, errors),
                    Some(Value::Bool(true)) => {}
                    // Strict: an undocumented field fails, unless a branch of a oneOf/anyOf/allOf
                    // sibling documents it (checked there).
                    _ if properties.is_some() || object.get("additionalProperties").is_some() => {
                        errors.push(format!("{here}: not documented by the schema"));
                    }
                    _ => {}
                },
            }
        }
    }
    if let (Some(items), Some(list)) = (object.get("items"), value.as_array()) {
        for (i, item) in list.iter().enumerate() {
            validate(root, items, item, &format!("{at}/{i}"), errors);
        }
    }
    let count_valid = |branches: &Vec<Value>| {
        branches
            .iter()
            .filter(|b| {
                let mut e = Vec::new();
                validate(root, b, value, at, &mut e);
                e.is_empty()
            })
            .count()
    };
    if let Some(branches) = object.get("oneOf").and_then(Value::as_array) {
        let n = count_valid(branches);
        if n != 1 {
            errors.push(format!(
                "{at}: {value} matches {n} branches of oneOf, not 1"
            ));
        }
    }
    if let Some(branches) = object.get("anyOf").and_then(Value::as_array)
        && count_valid(branches) == 0
    {
        errors.push(format!("{at}: {value} matches no branch of anyOf"));
    }
    if let Some(branches) = object.get("allOf").and_then(Value::as_array) {
        for b in branches {
            validate(root, b, value, at, errors);
        }
    }
}

/// Asserts `output` is one JSON object valid against the committed schema its `"schema"` names,
/// and that it names `expected`.
fn assert_receipt(output: &[u8], expected: &str) -> Value {
    let text = String::from_utf8_lossy(output);
    let value: Value = serde_json::from_str(text.trim())
        .unwrap_or_else(|e| panic!("not one JSON object ({e}): {text}"));
    assert_eq!(value["schema"], expected, "{text}");
    let schema = committed(expected);
    let mut errors = Vec::new();
    validate(&schema, &schema, &value, "", &mut errors);
    assert!(
        errors.is_empty(),
        "{expected}: the output does not match docs/schema/{expected}.json:\n{}\n{text}",
        errors.join("\n")
    );
    value
}

/// Every command run with `HOME` in the sandbox too; the schemas of the receipts checked so far.
struct Env {
    sandbox: Sandbox,
    seen: RefCell<BTreeSet<String>>,
}

impl std::ops::Deref for Env {
    type Target = Sandbox;
    fn deref(&self) -> &Sandbox {
        &self.sandbox
    }
}

impl Env {
    fn new() -> Env {
        Env {
            sandbox: Sandbox::new(),
            seen: RefCell::default(),
        }
    }

    fn run(&self, args: &[&str]) -> Output {
        self.run_with_stdin(args, "")
    }

    fn run_with_stdin(&self, args: &[&str], input: &str) -> Output {
        let mut command = self.cmd();
        command.env("HOME", &self.base);
        command.arg("--json"); // before the command: `run` passes what follows `--` on
        command.args(args);
        support::output_with_stdin(command, input)
    }

    /// Asserts `output` is a valid receipt of `schema`, and records that it was checked.
    fn check(&self, output: &[u8], schema: &str) -> Value {
        let value = assert_receipt(output, schema);
        self.seen.borrow_mut().insert(schema.to_string());
        value
    }

    fn ok(&self, args: &[&str], schema: &str) -> Value {
        self.ok_with_stdin(args, "", schema)
    }

    fn ok_with_stdin(&self, args: &[&str], input: &str, schema: &str) -> Value {
        let out = self.run_with_stdin(args, input);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        self.check(&out.stdout, schema)
    }

    /// Runs a command that must fail with `code`, and checks its error receipt.
    fn fails(&self, args: &[&str], code: i32) -> Value {
        let out = self.run(args);
        assert_eq!(out.status.code(), Some(code), "{args:?}");
        self.check(&out.stdout, projectfile::receipts::schema::ERROR)
    }

    fn ws(&self) -> &str {
        self.ws.to_str().unwrap()
    }
}

/// `acquire` of a Codex session in `ws` held by `holder`.
fn acquire_args<'a>(ws: &'a str, prompt: &'a str, holder: &'a str) -> [&'a str; 9] {
    [
        "acquire",
        "--provider",
        "codex",
        "--workspace",
        ws,
        "--prompt",
        prompt,
        "--holder-pid",
        holder,
    ]
}

/// `run` of a Codex session in `ws` with `prompt`, then `rest` (flags, `--`, the command).
fn run_args<'a>(ws: &'a str, prompt: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "run",
        "--provider",
        "codex",
        "--workspace",
        ws,
        "--prompt",
        prompt,
    ];
    args.extend_from_slice(rest);
    args
}

/// acquire, release, status, strip-stale, providers, resolve and its fragments, `run --json`.
fn session_commands(env: &Env) {
    use projectfile::receipts::schema;
    let ws = env.ws();
    let pid = std::process::id().to_string();
    std::fs::write(env.ws.join("AGENTS.md"), "# Rules\n\nUse tabs.\n").unwrap();

    env.ok(&["providers"], schema::PROVIDERS);

    let acquired = env.ok(&acquire_args(ws, "be brief", &pid), schema::ACQUIRE);
    let token = acquired["token"].as_str().unwrap().to_string();

    // A lease whose holder dies after acquire, so status and strip-stale have something to say.
    let mut child = Command::new("sleep").arg("600").spawn().unwrap();
    let doomed = child.id().to_string();
    let stale = env.ok(&acquire_args(ws, "doomed", &doomed), schema::ACQUIRE);
    assert!(stale["token"].is_string());
    child.kill().unwrap();
    child.wait().unwrap();
    let status = env.ok(&["status", "--workspace", ws], schema::STATUS);
    assert_eq!(status["leases"].as_array().unwrap().len(), 2);
    let strip = env.ok(&["strip-stale", "--workspace", ws], schema::STRIP_STALE);
    assert_eq!(strip["stale_cleaned"].as_array().unwrap().len(), 1);
    // A holder that has already exited is refused with an error receipt.
    let mut exited = Command::new("true").spawn().unwrap();
    exited.wait().unwrap();
    let refused = env.run(&acquire_args(ws, "refused", &exited.id().to_string()));
    assert!(!refused.status.success());
    assert_receipt(&refused.stdout, schema::ERROR);

    env.ok(&["resolve", "--workspace", ws], schema::RESOLVE);
    let as_codex = env.ok(
        &["resolve", "--workspace", ws, "--as", "codex"],
        schema::RESOLVE,
    );
    assert_eq!(as_codex["as"], "codex");
    env.ok(
        &["resolve", "--workspace", ws, "--fragments"],
        schema::FRAGMENTS,
    );

    let released = env.ok(&["release", "--token", &token], schema::RELEASE);
    assert_eq!(released["released"], true);
    let again = env.ok(&["release", "--token", &token], schema::RELEASE);
    assert_eq!(again["released"], false);

    // `run --json`: the first line of stdout is the acquire receipt; the command's output follows.
    let out = env.run(&run_args(ws, "from run", &["--", "cat", "AGENTS.md"]));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let (first, rest) = stdout.split_once('\n').unwrap();
    env.check(first.as_bytes(), schema::ACQUIRE);
    assert!(rest.contains("from run"), "{rest}");

    // Dry runs print the acquire receipt with `dry_run` (and, from `run`, `command`).
    let mut dry = acquire_args(ws, "dry", &pid).to_vec();
    dry.push("--dry-run");
    let planned = env.ok(&dry, schema::ACQUIRE);
    assert_eq!(planned["dry_run"], true);
    let run_dry = env.ok(
        &run_args(ws, "dry", &["--dry-run", "--", "cat"]),
        schema::ACQUIRE,
    );
    assert_eq!(run_dry["command"][0], "cat");
    delivery_shapes(env, &pid);
}

/// The delivery verdict's shapes: launch arguments raising a budget (a 40 KiB AGENTS.md for
/// Codex), and a route that does not deliver (agy projects no text).
fn delivery_shapes(env: &Env, pid: &str) {
    use projectfile::receipts::schema;
    let big = env.base.join("big");
    std::fs::create_dir_all(big.join(".git")).unwrap();
    std::fs::write(big.join("AGENTS.md"), "Rule: be brief.\n".repeat(2600)).unwrap();
    let raised = env.ok(
        &acquire_args(big.to_str().unwrap(), "raised", pid),
        schema::ACQUIRE,
    );
    assert_eq!(raised["delivery"]["delivered"], true);
    assert_eq!(raised["delivery"]["launch_args"][0], "-c");
    let ws = env.ws();
    let agy = ["acquire", "--provider", "agy", "--workspace", ws];
    let agy = [&agy[..], &["--prompt", "x", "--holder-pid", pid]].concat();
    let not_projected = env.ok(&agy, schema::ACQUIRE);
    assert_eq!(
        not_projected["delivery"]["undelivered"]["reason"],
        "not_projected"
    );
    for receipt in [raised, not_projected] {
        let token = receipt["token"].as_str().unwrap();
        env.ok(&["release", "--token", token], schema::RELEASE);
    }
}

/// The linked-runtime commands: `run --runtime-root --json` (with `linked`: attached folders,
/// identity, sandbox), `runtime identity`, `runtime can-resume`, `remove-runtime`.
fn runtime_commands(env: &Env) {
    use projectfile::receipts::schema;
    let ws = env.ws();
    let rt = env.base.join("rt");
    let docs = env.base.join("docs");
    std::fs::create_dir(&docs).unwrap();
    let key = [
        "--runtime-root",
        rt.to_str().unwrap(),
        "--user",
        "u1",
        "--project-id",
        "p1",
        "--session-id",
        "product-6F9619FF-8B86-D011-B42D-00CF4FC964FF",
    ];
    let docs_spec = format!("docs={}", docs.display());
    let run = [
        &[
            "run",
            "--provider",
            "codex",
            "--workspace",
            ws,
            "--prompt",
            "hi",
        ][..],
        &key[..],
        &[
            "--mode",
            "run",
            "--attach-read-only",
            &docs_spec,
            "--private-cli-home",
            "--sandbox",
            "--allow-unsandboxed",
            "--",
            "true",
        ][..],
    ]
    .concat();
    let out = env.run(&run);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let receipt = env.check(&out.stdout, schema::ACQUIRE);
    assert_eq!(receipt["linked"]["attached"][0]["grant"], "read");
    let identity = [
        &["runtime", "identity"][..],
        &key[..],
        &["--provider", "codex", "--mode", "run", "--private-cli-home"][..],
    ]
    .concat();
    let predicted = env.ok(&identity, schema::RUNTIME_IDENTITY);
    assert_eq!(
        predicted["runtime"],
        receipt["linked"]["identity"]["runtime"]
    );
    let from = receipt["linked"]["identity"].to_string();
    let to = predicted.to_string();
    let verdict = env.ok(
        &["runtime", "can-resume", "--from", &from, "--to", &to],
        schema::CAN_RESUME,
    );
    assert_eq!(verdict["resume"], true, "{verdict}");
    let remove = [
        &["remove-runtime"][..],
        &key[..],
        &["--provider", "codex", "--mode", "run"][..],
    ]
    .concat();
    assert_eq!(env.ok(&remove, schema::REMOVE_RUNTIME)["removed"], true);
    assert_eq!(env.ok(&remove, schema::REMOVE_RUNTIME)["removed"], false);
}

/// `resolve --render`, the reader role, `remove-runtime`, `completions`.
fn other_commands(env: &Env) {
    use projectfile::receipts::schema;
    let ws = env.ws();
    std::fs::write(env.ws.join("AGENTS.md"), "# Rules\n\nUse tabs.").unwrap();
    let render = env.ok(&["resolve", "--workspace", ws, "--render"], schema::RENDER);
    assert!(render["block"].as_str().unwrap().ends_with("Use tabs.\n"));

    let mode = env.ok(
        &[
            "reader",
            "mode",
            "--access",
            "reader",
            "--product",
            "workflow",
        ],
        schema::READER_MODE,
    );
    assert_eq!(mode["mode"], "run");
    assert_eq!(mode["notice"]["product"], "workflow");
    let owner = env.ok(
        &["reader", "mode", "--access", "owner"],
        schema::READER_MODE,
    );
    assert_eq!(owner["notice"], Value::Null);
    let wrapped = env.ok_with_stdin(&["reader", "wrap"], "hello", schema::READER_WRAP);
    let text = wrapped["text"].as_str().unwrap();
    let stripped = env.ok_with_stdin(&["reader", "strip"], text, schema::READER_STRIP);
    assert_eq!(stripped["text"], "hello");
    env.ok(&["reader", "hint"], schema::READER_HINT);

    let rt = env.base.join("rt");
    let runtime = [
        &["--runtime-root", rt.to_str().unwrap()][..],
        &support::RUNTIME_ID,
    ]
    .concat();
    let session = ["--provider", "codex", "--workspace", ws, "--prompt", "x"];
    let out = env.run(&[&["run"][..], &session, &runtime, &["--", "true"]].concat());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mode = ["--provider", "codex", "--mode", "builder"];
    let remove = [&["remove-runtime"][..], &runtime, &mode].concat();
    let removed = env.ok(&remove, schema::REMOVE_RUNTIME);
    assert_eq!(removed["removed"], true);
    assert_eq!(env.ok(&remove, schema::REMOVE_RUNTIME)["removed"], false);

    let completions = env.ok(&["completions", "zsh"], schema::COMPLETIONS);
    assert!(
        completions["script"]
            .as_str()
            .unwrap()
            .contains("#compdef projectfile")
    );
}

/// Failures: bad usage (exit 2) and a core refusal (exit 1).
fn failures(env: &Env) {
    let ws = env.ws();
    // A command-line refusal (kind `usage`, exit 2): an unknown provider, a bad flag.
    let error = env.fails(
        &[
            "acquire",
            "--provider",
            "no-such-cli",
            "--workspace",
            ws,
            "--prompt",
            "x",
        ],
        2,
    );
    assert_eq!(error["error"]["kind"], "usage");
    let error = env.fails(&["status", "--no-such-flag"], 2);
    assert_eq!(error["error"]["kind"], "usage");
    // A core refusal with a path (kind `malformed_block`, exit 1).
    std::fs::write(
        env.ws.join("AGENTS.md"),
        "<!-- BEGIN agentworks-session-instructions created=false -->\nunterminated\n",
    )
    .unwrap();
    let error = env.fails(
        &[
            "acquire",
            "--provider",
            "codex",
            "--workspace",
            ws,
            "--prompt",
            "x",
        ],
        1,
    );
    assert_eq!(error["error"]["kind"], "malformed_block");
    assert!(
        error["error"]["path"]
            .as_str()
            .unwrap()
            .ends_with("AGENTS.md")
    );
}

#[test]
fn every_command_prints_its_documented_receipt() {
    session_commands(&Env::new());
}

#[test]
fn the_other_commands_print_their_documented_receipts() {
    other_commands(&Env::new());
}

#[test]
fn failures_print_the_documented_error_receipt() {
    failures(&Env::new());
}

#[test]
fn runtime_commands_print_their_documented_receipts() {
    runtime_commands(&Env::new());
}

#[test]
fn every_schema_is_checked_against_a_real_output() {
    let groups: [fn(&Env); 4] = [session_commands, other_commands, runtime_commands, failures];
    let mut seen = BTreeSet::new();
    for group in groups {
        let env = Env::new();
        group(&env);
        seen.extend(env.seen.take());
    }
    let all: BTreeSet<String> = projectfile::receipts::schema::ALL
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(seen, all, "a schema no real output was checked against");
}

#[test]
fn every_schema_is_documented_with_its_file() {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/receipts.md"))
            .unwrap();
    for name in projectfile::receipts::schema::ALL {
        assert!(
            doc.contains(&format!("\n## `{name}`\n")),
            "docs/receipts.md has no section for {name}"
        );
        assert!(
            doc.contains(&format!("(schema/{name}.json)")),
            "docs/receipts.md does not link schema/{name}.json"
        );
    }
}

#[test]
fn the_validator_refuses_what_the_schema_does_not_document() {
    let schema = committed(projectfile::receipts::schema::RELEASE);
    let good = serde_json::json!({
        "schema": "projectfile.release.v1", "token": "t", "released": false, "workspace": null,
        "files": [], "kept": [], "stale_cleaned": [], "warnings": []
    });
    let mut errors = Vec::new();
    validate(&schema, &schema, &good, "", &mut errors);
    assert!(errors.is_empty(), "{errors:?}");
    for bad in [
        serde_json::json!({"schema": "projectfile.release.v2"}),
        {
            let mut v = good.clone();
            v["surprise"] = Value::Bool(true);
            v
        },
        {
            let mut v = good.clone();
            v["released"] = Value::from("yes");
            v
        },
        {
            let mut v = good.clone();
            v["files"] = serde_json::json!([{"path": "a"}]);
            v
        },
    ] {
        let mut errors = Vec::new();
        validate(&schema, &schema, &bad, "", &mut errors);
        assert!(!errors.is_empty(), "accepted {bad}");
    }
}
