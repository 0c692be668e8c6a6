//! The ledger: per-workspace record of leases and what each projected path holds, under the state
//! directory.
