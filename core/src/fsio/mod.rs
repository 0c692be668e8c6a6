//! Safe file I/O: the only module allowed to open for writing, rename, lock or remove files.

pub mod links;
