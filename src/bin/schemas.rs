//! `projectfile-schemas`: prints the JSON Schema of every receipt as one JSON object keyed by
//! schema name (`{"projectfile.acquire.v1": {...}, ...}`). Built only with the `schema` feature;
//! `cargo xtask codegen` runs it and writes `docs/schema/<name>.json`.

use std::process::ExitCode;

fn main() -> ExitCode {
    let map: serde_json::Map<String, serde_json::Value> = projectfile::receipts::json_schemas()
        .into_iter()
        .map(|(name, schema)| (name.to_string(), schema))
        .collect();
    match serde_json::to_string_pretty(&serde_json::Value::Object(map)) {
        Ok(text) => {
            println!("{text}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: cannot serialize the schemas: {error}");
            ExitCode::FAILURE
        }
    }
}
