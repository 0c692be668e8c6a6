//! Crash-point enumeration for skill folders: the process model stops after the k-th mutating
//! operation of an acquire (take-over), a refresh, or a release, for every k, on one file system
//! and across file systems; the next start must clean up, and after the last release the project's
//! own folder is back byte for byte with nothing of ours left (not even spurious kept copies).
//! Run on one file system with `RENAME_EXCHANGE`, and as if across file systems without it.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::panic
)]

mod skills_common;

use projectfile_core::testing::fsio::faults;
use skills_common::*;

/// Runs `scenario` with the k-th operation failing, for k = 0, 1, … until a run needs no crash.
/// Twice: on one file system with `RENAME_EXCHANGE`, and across file systems without it.
fn for_each_crash_point(mut scenario: impl FnMut(u64) -> bool) {
    for other_fs in [false, true] {
        let mut k = 0;
        loop {
            faults::force_cross_device(other_fs);
            faults::force_no_exchange(other_fs);
            let crashed = scenario(k);
            faults::disarm();
            faults::force_cross_device(false);
            faults::force_no_exchange(false);
            if !crashed {
                break;
            }
            k += 1;
            assert!(k < 500, "no end to the crash points");
        }
    }
}

#[test]
fn a_crash_anywhere_in_a_take_over_is_cleaned_by_the_next_start() {
    for_each_crash_point(|k| {
        let fx = Fx::new();
        write_project_review(&fx);
        let before = tree(&fx.ws);
        let src = fx.source("s", &[("SKILL.md", b"ours\n"), ("sub/x", b"x")]);
        let doomed = Sleeper::spawn();
        faults::arm(k);
        let result = fx.try_acquire_with(&CODEX_LIKE, &[("review", &src)], doomed.holder());
        let crashed = faults::crashed();
        faults::disarm();
        if !crashed {
            result.unwrap();
        }
        doomed.kill9();
        let next = fx.acquire(&[("review", &src)]);
        assert_eq!(
            fx.read(".agents/skills/review/SKILL.md").unwrap(),
            b"ours\n",
            "k={k}"
        );
        fx.release(&next.token);
        assert_eq!(tree(&fx.ws), before, "k={k}");
        fx.assert_no_state();
        crashed
    });
}

#[test]
fn a_crash_anywhere_in_a_refresh_is_cleaned_by_the_next_start() {
    for_each_crash_point(|k| {
        let fx = Fx::new();
        write_project_review(&fx);
        let before = tree(&fx.ws);
        let v1 = fx.source("v1", &[("SKILL.md", b"v1\n"), ("gone.txt", b"g")]);
        let v2 = fx.source("v2", &[("SKILL.md", b"v2\n"), ("sub/new.txt", b"n")]);
        let first = fx.acquire(&[("review", &v1)]);
        let doomed = Sleeper::spawn();
        faults::arm(k);
        let result = fx.try_acquire_with(&CODEX_LIKE, &[("review", &v2)], doomed.holder());
        let crashed = faults::crashed();
        faults::disarm();
        if !crashed {
            result.unwrap();
        }
        doomed.kill9();
        let next = fx.acquire(&[("review", &v2)]);
        assert_eq!(
            fx.read(".agents/skills/review/SKILL.md").unwrap(),
            b"v2\n",
            "k={k}"
        );
        assert!(fx.read(".agents/skills/review/gone.txt").is_none(), "k={k}");
        fx.release(&next.token);
        fx.release(&first.token);
        assert_eq!(tree(&fx.ws), before, "k={k}");
        fx.assert_no_state();
        crashed
    });
}

#[test]
fn a_crash_anywhere_in_the_last_release_is_cleaned_by_the_next_start() {
    for_each_crash_point(|k| {
        let fx = Fx::new();
        write_project_review(&fx);
        let before = tree(&fx.ws);
        let src = fx.source("s", &[("SKILL.md", b"ours\n")]);
        let doomed = Sleeper::spawn();
        let lease = fx.acquire_as(&[("review", &src)], doomed.holder());
        faults::arm(k);
        let result = fx.projector.release(&lease.token);
        let crashed = faults::crashed();
        faults::disarm();
        if !crashed {
            result.unwrap();
        }
        doomed.kill9();
        // Whatever the crash left, the next start and end put everything back.
        let next = fx.acquire(&[("review", &src)]);
        fx.release(&next.token);
        assert_eq!(tree(&fx.ws), before, "k={k}");
        fx.assert_no_state();
        crashed
    });
}
