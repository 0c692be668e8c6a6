//! Lease holders: a process (pid, start time, boot id) or a held lock, and whether each still lives.
