//! Plan checks: what core refuses in a provider's plan before anything is recorded (one path
//! named twice, anything inside a skill folder or the priors folder, a private file name that is
//! not a plain name, a hook script without explicit mode bits).

use crate::error::{Error, Result};
use crate::plan::{Namespace, OwnedRole, Plan};

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
}
