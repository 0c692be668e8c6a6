//! The shared conformance suite: check functions that take a provider and run on the real file
//! system, chosen by the provider's capabilities. Each provider calls [`run_all`] from its own tests.
