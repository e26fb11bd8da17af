//! Measurement for synthpool, kept out of the library a fork depends on: PoRep-, PoSt-
//! and SnapDeals-shaped circuits, the named variants the bench compares, the report, perf-event
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
pub mod snap;
mod trees;
#[cfg(feature = "bench")]
pub mod variants;
