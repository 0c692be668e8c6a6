//! Promise 4: release is idempotent, and an unknown token is not an error.

use crate::Subject;
use crate::fixture::Fixture;

/// Promise 4: release is idempotent; unknown tokens are not an error.
pub fn release_is_idempotent(subject: &Subject) {
    let fx = Fixture::new();
    let receipt = fx.acquire(subject, "x").unwrap();
    assert!(fx.release(&receipt.token));
    assert!(!fx.release(&receipt.token));
    assert!(!fx.release("pf1-0000000000000000-00000000000000000000000000000000"));
    assert!(!fx.release("not a token"));
}
