//! Link operations for private runtimes: create, verify and remove the `project/` and `output/`
//! links, and remove a runtime tree without ever following a link out of it.
