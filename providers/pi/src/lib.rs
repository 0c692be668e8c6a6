//! The pi CLI provider (planned in issue 3; not yet registered in the facade).
