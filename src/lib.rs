//! synthpool: fast CPU synthesis of Groth16 circuits.
