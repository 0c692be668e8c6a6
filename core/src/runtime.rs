//! Linked private runtimes: a stable directory per (user, project, chat, provider, mode) with
//! `project/` (and `output/`) linked to the real folders.
