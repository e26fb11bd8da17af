//! Measurement for synthpool, kept out of the library a fork depends on: PoRep- and
//! PoSt-shaped circuits, the named variants the bench compares, the report, perf-event
//! counters and the counting allocators.

#![deny(unsafe_code)]
#![deny(missing_docs)]

#[cfg(feature = "bench")]
pub mod alloc;
#[cfg(feature = "bench")]
pub mod batches;
pub mod circuits;
#[cfg(feature = "bench")]
pub mod counters;
pub mod porep;
pub mod post;
#[cfg(feature = "bench")]
pub mod report;
mod sampling;
mod trees;
#[cfg(feature = "bench")]
pub mod variants;
