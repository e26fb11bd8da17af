//! Self-contained gadgets: booleans and field-element numbers.
pub mod boolean;
pub mod num;
