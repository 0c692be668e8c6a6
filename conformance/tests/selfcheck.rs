//! The suite checks itself on two made-up providers: one that writes generated configuration and
//! takes skills into `.cursor/skills` (so the config checks run, not only skip), and one that takes
//! neither (so the skipping path, and the refusal of skills it cannot take, are exercised).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::panic
)]

use projectfile_core::guidance::DiscoveryProfile;
use projectfile_core::{
    OwnedFileProjection, OwnedRole, Plan, PlanContext, Provider, ProviderSpec, RelPath,
    SessionTextCarrier, patterns,
};

/// Cursor-shaped: session text in an owned `.mdc`, MCP, CLI and hooks configuration as owned JSON
/// files, a hook script, skills in `.cursor/skills`.
#[derive(Clone, Copy, Default)]
struct Configures;

const CONFIGURES: ProviderSpec = ProviderSpec::new("configures", || DiscoveryProfile {
    extra_files: vec![".cursor/rules/*.mdc".into()],
    ..DiscoveryProfile::default()
})
.session_text_in_file()
.skills_in(".cursor/skills")
.takes_mcp()
.takes_hooks()
.takes_cli_config()
.writes_owned_files();

impl Provider for Configures {
    fn spec(&self) -> &'static ProviderSpec {
        &CONFIGURES
    }
    fn session_plan(&self, ctx: &PlanContext<'_>) -> projectfile_provider::Result<Plan> {
        let owned = |path: &str, content: String, mode, role| OwnedFileProjection {
            path: RelPath::new(path).unwrap(),
            content,
            mode,
            role,
        };
        let mdc = ".cursor/rules/mlp-system.mdc";
        let mut files = vec![owned(
            mdc,
            format!("---\nalwaysApply: true\n---\n{}\n", ctx.request.prompt),
            None,
            OwnedRole::Instructions,
        )];
        if let Some(servers) = &ctx.request.mcp_servers {
            let json = serde_json::json!({ "mcpServers": servers });
            files.push(owned(
                ".cursor/mcp.json",
                format!("{json:#}\n"),
                None,
                OwnedRole::McpConfig,
            ));
        }
        if let Some(cli) = &ctx.request.cli_config {
            files.push(owned(
                ".cursor/cli.json",
                format!("{cli:#}\n"),
                None,
                OwnedRole::CliConfig,
            ));
        }
        if let Some(hooks) = &ctx.request.hooks {
            files.push(owned(
                ".cursor/hooks.json",
                format!("{:#}\n", hooks.config),
                None,
                OwnedRole::HooksConfig,
            ));
            if let Some(script) = &hooks.script {
                files.push(owned(
                    &format!(".cursor/hooks/{}", script.name),
                    script.content.clone(),
                    Some(0o755),
                    OwnedRole::HookScript,
                ));
            }
        }
        Ok(Plan {
            owned_files: files,
            session_text: Some(SessionTextCarrier::OwnedFile {
                path: RelPath::new(mdc).unwrap(),
            }),
            ..Plan::default()
        })
    }
}

/// Takes only the session text, as a block.
#[derive(Clone, Copy, Default)]
struct Plain;

const PLAIN: ProviderSpec = ProviderSpec::new("plain", || DiscoveryProfile {
    per_directory: vec!["AGENTS.md".into()],
    ..DiscoveryProfile::default()
})
.session_text_in_file();

impl Provider for Plain {
    fn spec(&self) -> &'static ProviderSpec {
        &PLAIN
    }
    fn session_plan(&self, ctx: &PlanContext<'_>) -> projectfile_provider::Result<Plan> {
        patterns::agents_md_block(ctx, &[])
    }
}

mod configures {
    projectfile_conformance::conformance_tests!(super::Configures);
}

mod plain {
    projectfile_conformance::conformance_tests!(super::Plain);
}
