//! Measurement for synthpool, kept out of the library a fork depends on: PoRep-shaped
//! circuits, the named variants the bench compares, the report, perf-event counters and the
//! counting allocators.

#![deny(unsafe_code)]
#![deny(missing_docs)]

pub mod alloc;
pub mod batches;
pub mod circuits;
pub mod counters;
pub mod porep;
pub mod report;
pub mod variants;
