//! Plan checks: what core refuses in a provider's plan before anything is recorded (one path
//! named twice, anything inside a skill folder or the priors folder, a private file name that is
//! not a plain name, a hook script without explicit mode bits).

use crate::error::{Error, Result};
use crate::plan::{EnvValue, Namespace, OwnedRole, Plan};

/// Refuses a plan that names one path twice, or a private file name that is not a plain name.
pub(crate) fn validate_plan(provider: &str, plan: &Plan, namespace: &Namespace) -> Result<()> {
    let mut seen: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    let all = plan
        .blocks
        .iter()
        .map(|b| &b.path)
        .chain(plan.owned_files.iter().map(|o| &o.path))
        .chain(plan.markers.iter().map(|m| &m.path));
    for path in all {
        if !seen.insert(path.to_string()) {
            return Err(Error::Provider {
                provider: provider.to_string(),
                reason: format!("the plan names {path} twice"),
            });
        }
    }
    let mut skill_paths = Vec::new();
    for skill in &plan.skills {
        crate::plan::validate_skill_name(&skill.name)?;
        let path = skill.skills_dir.join(&skill.name)?;
        if !seen.insert(path.to_string()) {
            return Err(Error::Provider {
                provider: provider.to_string(),
                reason: format!("the plan names {path} twice"),
            });
        }
        skill_paths.push(path);
    }
    let priors = super::priors::dir_name(namespace);
    if let Some(inside) = seen
        .iter()
        .find(|p| p.split('/').next() == Some(priors.as_str()))
    {
        return Err(Error::Provider {
            provider: provider.to_string(),
            reason: format!("the plan puts {inside} inside the priors folder {priors}"),
        });
    }
    // Nothing else may live inside a skill folder, nor a skill folder inside another.
    for skill in &skill_paths {
        let prefix = format!("{skill}/");
        if let Some(inside) = seen.iter().find(|p| p.starts_with(&prefix)) {
            return Err(Error::Provider {
                provider: provider.to_string(),
                reason: format!("the plan puts {inside} inside the skill folder {skill}"),
            });
        }
    }
    for file in &plan.private_files {
        if file.name.is_empty() || file.name.contains('/') || file.name.starts_with('.') {
            return Err(Error::Provider {
                provider: provider.to_string(),
                reason: format!("private file name {:?} is not a plain file name", file.name),
            });
        }
    }
    check_private_references(provider, plan)?;
    for owned in &plan.owned_files {
        if owned.role == OwnedRole::HookScript && owned.mode.is_none() {
            return Err(Error::Provider {
                provider: provider.to_string(),
                reason: format!("hook script {} needs explicit mode bits", owned.path),
            });
        }
    }
    Ok(())
}

/// Refuses a launch argument or environment variable naming a private file the plan does not
/// write, the private directory in a plan that writes none, and an environment variable name
/// that is empty or holds `=` or NUL (no process can be given it).
fn check_private_references(provider: &str, plan: &Plan) -> Result<()> {
    let refuse = |reason: String| Error::Provider {
        provider: provider.to_string(),
        reason,
    };
    let written = |name: &str| plan.private_files.iter().any(|f| f.name == name);
    for arg in &plan.launch_args {
        if let Some(name) = arg.private_file().filter(|n| !written(n)) {
            return Err(refuse(format!(
                "a launch argument names the private file {name:?}, which the plan does not write"
            )));
        }
    }
    for (var, value) in &plan.env {
        if var.is_empty() || var.contains('=') || var.contains('\0') {
            return Err(refuse(format!(
                "environment variable name {var:?} is empty or holds '=' or NUL"
            )));
        }
        if let Some(name) = value.private_file().filter(|n| !written(n)) {
            return Err(refuse(format!(
                "{var} names the private file {name:?}, which the plan does not write"
            )));
        }
        if *value == EnvValue::PrivateDir && plan.private_files.is_empty() {
            return Err(refuse(format!(
                "{var} names the session's private directory, but the plan writes no private file"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::plan::{BlockProjection, RelPath, SkillProjection};

    #[test]
    fn nothing_is_planned_into_the_priors_folder() {
        let ns = Namespace::default();
        let block = Plan {
            blocks: vec![BlockProjection {
                path: RelPath::new(".agentworks-priors/AGENTS.md").unwrap(),
                body: String::new(),
            }],
            ..Plan::default()
        };
        let skill = Plan {
            skills: vec![SkillProjection {
                skills_dir: RelPath::new(".agentworks-priors").unwrap(),
                name: "review".into(),
                source: "/nowhere".into(),
            }],
            ..Plan::default()
        };
        for plan in [block, skill] {
            let e = validate_plan("p", &plan, &ns).unwrap_err();
            assert!(e.to_string().contains("inside the priors folder"), "{e}");
        }
        let fine = Plan {
            blocks: vec![BlockProjection {
                path: RelPath::new(".agentworks-priors-not/AGENTS.md").unwrap(),
                body: String::new(),
            }],
            ..Plan::default()
        };
        validate_plan("p", &fine, &ns).unwrap();
    }

    #[test]
    fn private_references_must_name_a_written_file() {
        use crate::plan::{LaunchArg, PrivateFile};
        let ns = Namespace::default();
        let file = PrivateFile {
            name: "config.json".into(),
            content: "{}".into(),
        };
        let with = |launch_args: Vec<LaunchArg>, env: Vec<(String, EnvValue)>, files| Plan {
            launch_args,
            env,
            private_files: files,
            ..Plan::default()
        };
        let arg = LaunchArg::PrefixedPrivateFile {
            prefix: "@".into(),
            name: "config.json".into(),
        };
        let var = |v: EnvValue| vec![("CONFIG".to_string(), v)];
        validate_plan(
            "p",
            &with(vec![arg.clone()], vec![], vec![file.clone()]),
            &ns,
        )
        .unwrap();
        let file_var = var(EnvValue::PrivateFilePath("config.json".into()));
        validate_plan(
            "p",
            &with(vec![], file_var.clone(), vec![file.clone()]),
            &ns,
        )
        .unwrap();
        validate_plan(
            "p",
            &with(vec![], var(EnvValue::PrivateDir), vec![file]),
            &ns,
        )
        .unwrap();
        for (plan, needle) in [
            (with(vec![arg], vec![], vec![]), "a launch argument names"),
            (
                with(vec![], file_var, vec![]),
                "CONFIG names the private file",
            ),
            (
                with(vec![], var(EnvValue::PrivateDir), vec![]),
                "writes no private file",
            ),
            (
                with(vec![], vec![("A=B".into(), "x".into())], vec![]),
                "holds '=' or NUL",
            ),
        ] {
            let e = validate_plan("p", &plan, &ns).unwrap_err().to_string();
            assert!(e.contains(needle), "{e}");
        }
    }
}
