//! The client on our own stdin/stdout: frames are lines. (to be written by the relay)
