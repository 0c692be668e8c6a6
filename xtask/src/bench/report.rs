//! The benchmark's verdicts against the targets, and the table it prints.

use serde_json::{Value, json};

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or(0.0)
}

fn mib(kib: &Value) -> f64 {
    f(kib) / 1024.0
}

/// One verdict: `value` against `limit`, `at_most` or at least.
fn verdict(name: &str, value: f64, limit: f64, at_most: bool, unit: &str) -> Value {
    let met = if at_most {
        value <= limit
    } else {
        value >= limit
    };
    json!({
        "name": name,
        "value": value,
        "target": format!("{} {limit}{unit}", if at_most { "<=" } else { ">=" }),
        "met": met,
    })
}

/// The limit of each goal (see the module docs of `bench`).
const RUN_LIMIT: f64 = 1.05;
const PROCESS_LIMIT: f64 = 1.8;
const TEN_MIB_LIMIT: f64 = 1.25;
const PEAK_MIB_LIMIT: f64 = 16.0;
const LEASES_LIMIT: f64 = 1.5;

/// The goals, judged on this run's figures (only the parts that ran; a part that could not
/// measure its figure says so in the table and is not judged).
pub fn targets(r: &Value) -> Value {
    let mut out = Vec::new();
    let run = &r["run"];
    if run["measured"] == true {
        let mut judged = verdict(
            &format!(
                "`projectfile run` around {}, ratio",
                run["cli"].as_str().unwrap_or("?")
            ),
            f(&run["ratio"]),
            RUN_LIMIT,
            true,
            "x",
        );
        // A stand-in's start is shorter than any real CLI's: its ratio is shown, not judged.
        if run["stand_in"] == true {
            judged["met"] = Value::Null;
        }
        out.push(judged);
    }
    if r["process"].is_object() {
        out.push(verdict(
            "acquire + release, small AGENTS.md, ratio to C",
            f(&r["process"]["ratio"]),
            PROCESS_LIMIT,
            true,
            "x",
        ));
    }
    if let Some(sizes) = r["sizes"].as_array() {
        if let Some(ten) = sizes.iter().find(|s| s["bytes"] == 10 << 20) {
            out.push(verdict(
                "10 MiB AGENTS.md, ratio to C",
                f(&ten["ratio"]),
                TEN_MIB_LIMIT,
                true,
                "x",
            ));
        }
        let peak = sizes
            .iter()
            .flat_map(|s| {
                [
                    mib(&s["ours"]["first_peak_rss_kib"]),
                    mib(&s["ours"]["second_peak_rss_kib"]),
                ]
            })
            .fold(0.0, f64::max);
        out.push(verdict(
            "peak RSS of acquire or release at any size",
            peak,
            PEAK_MIB_LIMIT,
            true,
            " MiB",
        ));
    }
    if let Some(point) = r["leases"].as_array().and_then(|v| {
        v.iter().find(|p| {
            p["leases"] == 256
                && p["distinct_holders"] == 1
                && p["provider"] == "codex"
                && p["own_texts"] == false
        })
    }) {
        out.push(verdict(
            "256 live leases, ratio to none",
            f(&point["ratio_to_none"]),
            LEASES_LIMIT,
            true,
            "x",
        ));
    }
    let c = &r["cycling"];
    if c.is_object() {
        let exact = c["lost_updates"] == 0 && c["file_byte_exact"] == true;
        out.push(json!({
            "name": "64 processes cycling: zero lost updates, file byte-exact",
            "value": c["lost_updates"],
            "target": "0 lost, byte-exact",
            "met": exact,
        }));
    }
    Value::Array(out)
}

/// The names of the goals this run missed (see [`targets`]; a figure not judged is not missed).
pub fn missed(r: &Value) -> Vec<&str> {
    r["targets"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["met"] == false)
        .filter_map(|t| t["name"].as_str())
        .collect()
}

fn row(name: &str, ours: &str, baseline: &str, ratio: &str, memory: &str) {
    println!("{name:<50} {ours:>11} {baseline:>11} {ratio:>7}  {memory}");
}

fn ms(v: &Value) -> String {
    format!("{:.2} ms", f(v))
}

/// `acquire/release | add/remove` peak memory of a row.
fn memory(ours: &Value, minimal: Option<&Value>) -> String {
    let pair = |s: &Value| {
        format!(
            "{:.1}/{:.1}",
            mib(&s["first_peak_rss_kib"]),
            mib(&s["second_peak_rss_kib"])
        )
    };
    match minimal {
        Some(m) => format!("{} | {} MiB", pair(ours), pair(m)),
        None => format!("{} MiB", pair(ours)),
    }
}

fn print_process(r: &Value) {
    println!();
    println!("process-level, interleaved with the minimal C program (medians; peak RSS of");
    println!("acquire/release | minimal add/remove)");
    row("", "projectfile", "minimal", "ratio", "peak RSS");
    let versus = |name: &str, v: &Value| {
        row(
            name,
            &ms(&v["ours"]["median_ms"]),
            &ms(&v["minimal"]["median_ms"]),
            &format!("{:.2}x", f(&v["ratio"])),
            &memory(&v["ours"], Some(&v["minimal"])),
        );
    };
    if r["process"].is_object() {
        versus("acquire + release, small AGENTS.md", &r["process"]);
    }
    let run = &r["run"];
    if run["measured"] == true {
        row(
            &format!("`run` around {}", run["cli"].as_str().unwrap_or("?")),
            &ms(&run["run_median_ms"]),
            &ms(&run["alone_median_ms"]),
            &format!("{:.2}x", f(&run["ratio"])),
            "(baseline: the CLI alone)",
        );
    } else if run.is_object() {
        println!(
            "`run` around a real CLI: NOT MEASURED ({})",
            run["reason"].as_str().unwrap_or("?")
        );
    }
    for size in r["sizes"].as_array().into_iter().flatten() {
        let name = format!(
            "acquire + release, {} AGENTS.md",
            size["label"].as_str().unwrap_or("?")
        );
        versus(&name, size);
    }
    let leases = r["leases"].as_array().into_iter().flatten();
    for point in leases {
        let holders = match point["distinct_holders"].as_u64() {
            Some(0) => "none".to_string(),
            Some(1) => "1 holder".to_string(),
            Some(n) => format!("{n} holders"),
            None => "?".to_string(),
        };
        let kind = match (point["provider"].as_str(), point["own_texts"].as_bool()) {
            (Some("codex"), Some(true)) => ", sharing its block, each with its own text",
            (Some("codex"), _) => ", sharing its block and text",
            (Some("claude"), _) => " of Claude, each with its private folder (a Claude session)",
            (Some("agy"), _) => " of Agy, in no file of the workspace",
            _ => "",
        };
        row(
            &format!(
                "one more, {} live leases{kind} (holders: {holders})",
                point["leases"]
            ),
            &ms(&point["ours"]["median_ms"]),
            "vs none",
            &format!("{:.2}x", f(&point["ratio_to_none"])),
            &memory(&point["ours"], None),
        );
    }
    let c = &r["cycling"];
    if c.is_object() {
        row(
            &format!(
                "{} procs cycling: {} cycles, {} lost, exact {}",
                c["procs"], c["ours"]["cycles"], c["lost_updates"], c["file_byte_exact"]
            ),
            &format!("{:.0} /s", f(&c["ours"]["cycles_per_second"])),
            &format!("{:.0} /s", f(&c["minimal"]["cycles_per_second"])),
            &format!("{:.2}", f(&c["throughput_ratio"])),
            "",
        );
    }
}

fn print_other(r: &Value) {
    let a = &r["inprocess"]["acquire"];
    let c = &r["inprocess"]["resolve"];
    if a.is_object() || r["start"].is_object() {
        println!();
        row(
            "in-process and start-up",
            "ours",
            "baseline",
            "ratio",
            "peak RSS",
        );
    }
    if a.is_object() {
        row(
            "(a) acquire+release in-process, durable",
            &format!("{:.0} us", f(&a["ours_median_us"])),
            &format!("{:.0} us", f(&a["baseline_median_us"])),
            &format!("{:.2}x", f(&a["ratio"])),
            &format!("{:.1} MiB", mib(&a["process_peak_rss_kib"])),
        );
        row(
            "    syncs per cycle (fsync + fdatasync)",
            &format!("{:.2}", f(&a["syncs_per_cycle"]["ours"])),
            &format!("{:.2}", f(&a["syncs_per_cycle"]["baseline"])),
            "",
            "",
        );
    }
    if c.is_object() {
        row(
            &format!("(c) resolve, {} dirs", c["directories"]),
            &format!("{:.1} ms", f(&c["ours_median_us"]) / 1e3),
            &format!("{:.1} ms", f(&c["baseline_median_us"]) / 1e3),
            &format!("{:.2}x", f(&c["ratio"])),
            &format!("{:.1} MiB", mib(&c["process_peak_rss_kib"])),
        );
    }
    let d = &r["start"];
    if d.is_object() {
        row(
            "(d) `providers --json` start to exit",
            &ms(&d["median_ms"]),
            "",
            "",
            &format!("{:.1} MiB", mib(&d["peak_rss_kib"])),
        );
    }
}

/// Prints the table: figures, then the targets with their verdicts, then the machine.
pub fn print(r: &Value) {
    print_process(r);
    print_other(r);
    println!();
    for t in r["targets"].as_array().into_iter().flatten() {
        println!(
            "{:<58} {:>9.2}  target {:<11} {}",
            t["name"].as_str().unwrap_or("?"),
            f(&t["value"]),
            t["target"].as_str().unwrap_or("?"),
            match t["met"].as_bool() {
                Some(true) => "met",
                Some(false) => "MISSED",
                None => "not judged: a stand-in, not the real CLI",
            }
        );
    }
    let m = &r["machine"];
    println!();
    println!(
        "{} CPUs ({}), kernel {}, scratch on {}, commit {}{}; load average {} before, {} after",
        m["cpus"],
        m["cpu_model"].as_str().unwrap_or("?"),
        m["kernel"].as_str().unwrap_or("?"),
        m["scratch_fs"].as_str().unwrap_or("?"),
        m["commit"].as_str().unwrap_or("?"),
        if m["dirty"] == true {
            " (with changes)"
        } else {
            ""
        },
        m["load_average_before"].as_str().unwrap_or("?"),
        m["load_average_after"].as_str().unwrap_or("?"),
    );
    println!(
        "(peak RSS measured apart, under xtask/bench/peak.c: a process doing nothing reads {:.1} MiB)",
        mib(&m["child_rss_floor_kib"])
    );
    println!();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A report whose figures sit at `scale` times each goal's limit.
    fn report(scale: f64) -> Value {
        json!({
            "run": {"measured": true, "cli": "codex 0.171.0 --version", "ratio": RUN_LIMIT * scale},
            "process": {"ratio": PROCESS_LIMIT * scale},
            "sizes": [{
                "bytes": 10 << 20,
                "ratio": TEN_MIB_LIMIT * scale,
                "ours": {"first_peak_rss_kib": PEAK_MIB_LIMIT * 1024.0 * scale, "second_peak_rss_kib": 1024},
            }],
            "leases": [{
                "leases": 256, "distinct_holders": 1, "provider": "codex", "own_texts": false,
                "ratio_to_none": LEASES_LIMIT * scale,
            }],
            "cycling": {"lost_updates": 0, "file_byte_exact": true},
        })
    }

    #[test]
    fn every_goal_is_judged_against_its_limit() {
        let mut within = report(0.99);
        within["targets"] = targets(&within);
        assert_eq!(within["targets"].as_array().map(Vec::len), Some(6));
        assert!(missed(&within).is_empty(), "{:?}", missed(&within));
        let mut over = report(1.01);
        over["targets"] = targets(&over);
        assert_eq!(missed(&over).len(), 5, "{:?}", missed(&over));
        over["cycling"]["lost_updates"] = json!(1);
        over["targets"] = targets(&over);
        assert_eq!(missed(&over).len(), 6);
    }

    #[test]
    fn a_stand_in_is_shown_not_judged() {
        let mut r = report(2.0);
        r["run"]["stand_in"] = json!(true);
        r["targets"] = targets(&r);
        assert_eq!(r["targets"][0]["met"], Value::Null);
        assert_eq!(missed(&r).len(), 4, "{:?}", missed(&r));
    }

    #[test]
    fn a_figure_not_measured_is_not_judged() {
        let mut r = json!({"run": {"measured": false, "reason": "no node"}});
        r["targets"] = targets(&r);
        assert_eq!(r["targets"], json!([]));
    }
}
