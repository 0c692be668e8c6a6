//! The Landlock sandbox applied by `run` before exec, from the session mode.
