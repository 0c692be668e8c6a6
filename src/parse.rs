//! Parsing the command line without building all of it: clap builds every subcommand, argument
//! and help text of [`Cli`] before it parses anything, and frees them after, which was about half
//! of the instructions an `acquire` or `release` process ran. [`try_parse`] builds the root's global
//! options and only the subcommand the command line names, from the same derived definitions, so
//! a command line it accepts means exactly what it means to the full [`Cli`] (a property test
//! checks this). Anything else (help, `--version`, any error, a subcommand not listed here) is
//! parsed again by the full [`Cli`], which prints what it always printed.

use clap::{Args as _, FromArgMatches as _, Parser as _};
use std::ffi::OsString;

use crate::cli::{AcquireArgs, Cli, GlobalArgs, ReleaseArgs, RunArgs, WorkspaceArgs};

mod direct;

/// The command line of this process, parsed (see the module docs), or clap's error for it.
pub fn try_parse() -> Result<Cli, clap::Error> {
    let args: Vec<OsString> = std::env::args_os().collect();
    if let Some(cli) = direct::parse(&args, &|name| std::env::var_os(name)) {
        return Ok(cli);
    }
    match lean(&args) {
        Some(cli) => Ok(cli),
        None => Cli::try_parse_from(args),
    }
}

/// The `--long` names of the options of `root` that take a value: the token after one of them
/// is its value, not a subcommand.
fn value_options(root: &clap::Command) -> Vec<String> {
    root.get_arguments()
        .filter(|arg| arg.get_action().takes_values())
        .filter_map(|arg| arg.get_long().map(|long| format!("--{long}")))
        .collect()
}

/// The subcommand `args` names: the first token after the program name that is neither an
/// option nor the value of one of `value_options`. `None` after `--` or when there is none.
fn subcommand_name<'a>(args: &'a [OsString], value_options: &[String]) -> Option<&'a str> {
    let mut tokens = args.iter().skip(1);
    while let Some(token) = tokens.next() {
        let token = token.to_str()?;
        if token == "--" {
            return None;
        }
        if value_options.iter().any(|option| option == token) {
            tokens.next();
        } else if !token.starts_with('-') {
            return Some(token);
        }
    }
    None
}

/// The subcommand `name` as [`Cli`] defines it, when it is one of the commands parsed this way
/// (the ones a host runs per session).
fn subcommand(name: &str) -> Option<clap::Command> {
    Some(match name {
        "acquire" => AcquireArgs::augment_args(clap::Command::new("acquire")),
        "release" => ReleaseArgs::augment_args(clap::Command::new("release")),
        "run" => RunArgs::augment_args(clap::Command::new("run")),
        "status" => WorkspaceArgs::augment_args(clap::Command::new("status")),
        "strip-stale" => WorkspaceArgs::augment_args(clap::Command::new("strip-stale")),
        "providers" => clap::Command::new("providers"),
        _ => return None,
    })
}

/// `args` parsed with the global options and only the subcommand they name, or `None` when that
/// does not succeed (the full parser then has the last word).
fn lean(args: &[OsString]) -> Option<Cli> {
    let root = GlobalArgs::augment_args(clap::Command::new("projectfile"));
    let sub = subcommand(subcommand_name(args, &value_options(&root))?)?;
    let mut root = root.subcommand_required(true).subcommand(sub);
    let matches = root.try_get_matches_from_mut(args).ok()?;
    let cli = Cli::from_arg_matches(&matches).ok()?;
    // Freeing the command and the matches would cost more than the rest of a short command's
    // work; the process exits soon and the kernel takes the memory back.
    std::mem::forget(matches);
    std::mem::forget(root);
    Some(cli)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn argv(tokens: &[&str]) -> Vec<OsString> {
        std::iter::once("projectfile")
            .chain(tokens.iter().copied())
            .map(OsString::from)
            .collect()
    }

    /// Pieces of command lines: options with their values, and the trailing command of `run`.
    const CHUNKS: &[&[&str]] = &[
        &["--json"],
        &["-v"],
        &["--state-dir", "/s"],
        &["--namespace", "n"],
        &["--state-dir=/t"],
        &["--wait", "5"],
        &["--wait=7"],
        &["--verbose"],
        &["--namespace=ns2"],
        // Help and version are errors to clap: the full parser prints them.
        &["--help"],
        &["-h"],
        &["--version"],
        &["-V"],
        &["--provider", "codex"],
        &["--workspace", "/w"],
        &["--prompt", "p"],
        &["--prompt-file", "f"],
        &["--holder-pid", "3"],
        &["--holder-lock", "/l"],
        &["--skill", "a=/b"],
        &["--token", "t"],
        &["--keep-cwd"],
        &["--runtime-root", "/r"],
        &["--user", "u"],
        &["--project-id", "i"],
        &["--session-id", "s"],
        &["--mode", "run"],
        &["--sandbox"],
        &["--", "sh", "-c"],
    ];
    const LEAN: &[&str] = &[
        "acquire",
        "release",
        "run",
        "status",
        "strip-stale",
        "providers",
    ];
    /// Tokens besides the subcommands of [`LEAN`] and the pieces of [`CHUNKS`].
    const OTHER_TOKENS: &str = "resolve help -h --help -V --version --verbose --prompt=q --namespace=a1 - pf1-x --bogus -vh --json=1 -vV";

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]
        /// Whatever the lean parser accepts, the full parser accepts with the same meaning.
        #[test]
        fn the_lean_parse_agrees_with_the_full_one(
            picks in proptest::collection::vec(0..64usize, 0..12)
        ) {
            let vocabulary: Vec<&str> = LEAN
                .iter()
                .copied()
                .chain(CHUNKS.iter().flat_map(|c| c.iter().copied()))
                .chain(OTHER_TOKENS.split_whitespace())
                .collect();
            let picks: Vec<usize> = picks.iter().map(|i| i % vocabulary.len()).collect();
            let tokens: Vec<&str> = picks.iter().map(|i| vocabulary[*i]).collect();
            let args = argv(&tokens);
            if let Some(lean) = lean(&args) {
                let full = Cli::try_parse_from(&args);
                prop_assert!(full.is_ok(), "{tokens:?}: lean accepted, full refused");
                prop_assert_eq!(format!("{lean:?}"), format!("{:?}", full.unwrap()));
            }
        }

        /// Command lines shaped like real ones: whenever the full parser accepts one of the
        /// session commands, the lean parser does too, with the same meaning.
        #[test]
        fn real_command_lines_take_the_lean_path(
            sub in 0..LEAN.len(),
            at in 0usize..4,
            picks in proptest::collection::vec(0..CHUNKS.len(), 0..9)
        ) {
            let mut tokens: Vec<&str> = Vec::new();
            for (i, pick) in picks.iter().enumerate() {
                if i == at {
                    tokens.push(LEAN[sub]);
                }
                tokens.extend_from_slice(CHUNKS[*pick]);
            }
            if at >= picks.len() {
                tokens.push(LEAN[sub]);
            }
            let args = argv(&tokens);
            let lean = lean(&args);
            match Cli::try_parse_from(&args) {
                Ok(full) => {
                    prop_assert!(lean.is_some(), "{tokens:?}: the full parser accepts it");
                    prop_assert_eq!(format!("{:?}", lean.unwrap()), format!("{full:?}"));
                }
                Err(_) => prop_assert!(lean.is_none(), "{tokens:?}: lean accepted, full refused"),
            }
        }
    }

    /// Pieces of `acquire` and `release` command lines, with values clap refuses or that the
    /// direct parser leaves to clap.
    const SESSION_CHUNKS: &[&[&str]] = &[
        &["acquire"],
        &["release"],
        &["status"],
        &["--provider", "codex"],
        &["--provider=claude"],
        &["--provider", "nope"],
        &["--workspace", "/w"],
        &["--workspace="],
        &["--prompt", "p"],
        &["--prompt=-x"],
        &["--prompt", ""],
        &["--prompt-file", "f"],
        &["--prompt-file", "-"],
        &["--mcp-config", "m.json"],
        &["--mcp-mode", "replace"],
        &["--mcp-mode=bogus"],
        &["--agent", "a=b"],
        &["--command", "c=d"],
        &["--skill", "s=/d"],
        &["--provider-option", "claude.prompt=replace"],
        &["--hooks-config", "h"],
        &["--hook-script", "s"],
        &["--cli-config", "c"],
        &["--cli-version", "1.0"],
        &["--cli-binary", "/b"],
        &["--require-delivery"],
        &["--require-delivery=1"],
        &["--holder-pid", "42"],
        &["--holder-pid", "+4"],
        &["--holder-pid", "99999999999"],
        &["--holder-lock", "/l"],
        &["--dry-run"],
        &["--token", "pf1-x"],
        &["--token=t"],
        &["--json"],
        &["-v"],
        &["--verbose"],
        &["-vv"],
        &["--state-dir", "/s"],
        &["--state-dir=/t"],
        &["--namespace", "n"],
        &["--wait", "5"],
        &["--wait=x"],
        &["--help"],
        &["-V"],
        &["--"],
        &["stray"],
    ];

    fn real_env(name: &str) -> Option<OsString> {
        std::env::var_os(name)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]
        /// Whatever the direct parser accepts, the full parser accepts with the same meaning.
        #[test]
        fn the_direct_parse_agrees_with_the_full_one(
            picks in proptest::collection::vec(0..SESSION_CHUNKS.len(), 0..14)
        ) {
            let tokens: Vec<&str> =
                picks.iter().flat_map(|i| SESSION_CHUNKS[*i].iter().copied()).collect();
            let args = argv(&tokens);
            if let Some(direct) = direct::parse(&args, &real_env) {
                let full = Cli::try_parse_from(&args);
                prop_assert!(full.is_ok(), "{tokens:?}: direct accepted, full refused");
                prop_assert_eq!(format!("{direct:?}"), format!("{:?}", full.unwrap()));
            }
        }

        /// `acquire` and `release` lines shaped like real ones, options in any order and globals
        /// on either side of the subcommand: whenever the full parser accepts one, so does the
        /// direct parser, with the same meaning.
        #[test]
        fn real_session_lines_take_the_direct_path(
            release in any::<bool>(),
            order in Just((0..9usize).collect::<Vec<_>>()).prop_shuffle(),
            at in 0usize..10,
            extras in proptest::collection::vec(any::<bool>(), 9),
        ) {
            let required: &[&[&str]] = if release {
                &[&["--token", "pf1-x"]]
            } else {
                &[&["--provider", "codex"], &["--workspace", "/w"], &["--prompt", "p"]]
            };
            let optional: [&[&str]; 9] = [
                &["--json"], &["-v"], &["--state-dir", "/s"], &["--wait=3"], &["--namespace", "n"],
                &["--holder-pid", "7"], &["--skill", "a=/b"], &["--dry-run"], &["--cli-version", "2"],
            ];
            let mut chunks: Vec<&[&str]> = required.to_vec();
            chunks.extend(order.iter().filter(|i| extras[**i]).map(|i| optional[*i]));
            let mut tokens: Vec<&str> = Vec::new();
            for (i, chunk) in chunks.iter().enumerate() {
                if i == at {
                    tokens.push(if release { "release" } else { "acquire" });
                }
                tokens.extend_from_slice(chunk);
            }
            if at >= chunks.len() {
                tokens.push(if release { "release" } else { "acquire" });
            }
            let args = argv(&tokens);
            let direct = direct::parse(&args, &real_env);
            match Cli::try_parse_from(&args) {
                Ok(full) => {
                    prop_assert!(direct.is_some(), "{tokens:?}: the full parser accepts it");
                    prop_assert_eq!(format!("{:?}", direct.unwrap()), format!("{full:?}"));
                }
                Err(_) => prop_assert!(direct.is_none(), "{tokens:?}: direct accepted, full refused"),
            }
        }
    }

    /// The environment stands in for a global option not given, as clap's `env` does; the option
    /// given wins; an empty value is left to clap.
    #[test]
    fn the_direct_parse_reads_the_environment_like_clap() {
        let args = argv(&["release", "--token", "t"]);
        let env = |name: &str| match name {
            "PROJECTFILE_STATE_DIR" => Some(OsString::from("/from-env")),
            "PROJECTFILE_NAMESPACE" => Some(OsString::from("envns")),
            _ => None,
        };
        let cli = direct::parse(&args, &env).unwrap();
        assert_eq!(cli.global.state_dir, Some("/from-env".into()));
        assert_eq!(cli.global.namespace, "envns");
        assert_eq!(cli.global.wait, 30);
        let given = argv(&[
            "--state-dir",
            "/given",
            "release",
            "--namespace=n",
            "--token",
            "t",
        ]);
        let cli = direct::parse(&given, &env).unwrap();
        assert_eq!(cli.global.state_dir, Some("/given".into()));
        assert_eq!(cli.global.namespace, "n");
        let none = direct::parse(&args, &|_: &str| None).unwrap();
        assert_eq!(none.global.state_dir, None);
        assert_eq!(none.global.namespace, "agentworks");
        let empty = |_: &str| Some(OsString::new());
        assert!(direct::parse(&args, &empty).is_none());
    }

    #[test]
    fn session_commands_take_the_lean_path() {
        let argv_of = |line: &str| argv(&line.split_whitespace().collect::<Vec<_>>());
        for line in [
            "--json acquire --provider codex --workspace /w --prompt p",
            "--state-dir /s release --token t --json",
            "run --provider codex --workspace /w --prompt p -- sh",
            "--namespace acquire status --workspace /w",
            "providers --json",
        ] {
            let lean = lean(&argv_of(line)).unwrap_or_else(|| panic!("{line:?} fell back"));
            let full = Cli::try_parse_from(argv_of(line)).unwrap();
            assert_eq!(format!("{lean:?}"), format!("{full:?}"));
        }
        // Help, errors and other commands go to the full parser.
        for line in [
            "acquire --help",
            "release",
            "--version",
            "-V status --workspace /w",
            "--json run -h",
            "help acquire",
            "resolve --workspace /w",
        ] {
            assert!(lean(&argv_of(line)).is_none(), "{line:?}");
        }
    }
}
