//! Promise 8: no temporary file is left beside what we wrote.

use crate::Subject;
use crate::fixture::Fixture;
use crate::tree::Tree;

/// Promise 8: no temporary files are left beside what we wrote.
pub fn no_temporary_files_left(subject: &Subject) {
    let fx = Fixture::new();
    let a = fx.acquire(subject, "one").unwrap();
    let b = fx.acquire(subject, "two").unwrap();
    let temps: Vec<String> = Tree::capture(&fx.workspace)
        .paths()
        .filter(|p| p.contains(projectfile_core::testing::fsio::TEMP_INFIX))
        .map(str::to_string)
        .collect();
    assert!(temps.is_empty(), "temporary files left: {temps:?}");
    fx.release(&a.token);
    fx.release(&b.token);
}
