//! The reader role: Builder and Run modes, mode selection, the reader notice block and refusal hints.
