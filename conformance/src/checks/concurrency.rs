//! Promise 7: concurrent starts and ends from many threads never lose an update.

use crate::Subject;
use crate::fixture::Fixture;
use crate::tree::Tree;

/// Promise 7: concurrent starts and ends from many threads never lose an update.
pub fn concurrent_sessions_never_lose_an_update(subject: &Subject) {
    let fx = Fixture::new();
    fx.write("AGENTS.md", b"user rules\r\nno final newline");
    fx.write(".pi/keep.txt", b"keep\n");
    let before = Tree::capture(&fx.workspace);
    std::thread::scope(|scope| {
        for worker in 0..8 {
            let fx = &fx;
            scope.spawn(move || {
                for round in 0..4 {
                    let prompt = format!("worker {worker} round {round}");
                    let receipt = fx.acquire(subject, &prompt).unwrap();
                    assert!(fx.release(&receipt.token));
                }
            });
        }
    });
    assert_eq!(Tree::capture(&fx.workspace), before);
    fx.assert_no_ledger();
}
