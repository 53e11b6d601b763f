//! One frame read as JSON-RPC, without rewriting it. (to be written)
