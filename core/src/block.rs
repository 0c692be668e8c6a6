//! The block engine: pure bytes in, bytes out. Finds, inserts, refreshes and removes the marked
//! session block in a shared file without changing one byte outside it.
