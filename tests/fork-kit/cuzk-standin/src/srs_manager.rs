//! A stand-in for cuzk's circuit ids (`cuzk-core/src/srs_manager.rs`): the kinds it names.

/// A kind of proof, as cuzk routes it.
#[derive(Clone, Debug, Hash, Eq, PartialEq)]
pub enum CircuitId {
    Porep32G,
    WindowPost32G,
    WinningPost32G,
    SnapDeals32G,
}

impl std::fmt::Display for CircuitId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self, f)
    }
}
