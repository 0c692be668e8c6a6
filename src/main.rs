//! The `projectfile` command line.

fn main() {}
