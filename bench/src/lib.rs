//! Measurement for synthpool, kept out of the library a fork depends on: PoRep-shaped
//! circuits, the named variants the bench compares, the report, perf-event counters and the
//! counting allocators.

pub mod alloc;
pub mod circuits;
pub mod counters;
pub mod report;
pub mod variants;
