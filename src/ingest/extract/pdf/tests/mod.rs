//! Whole-pipeline tests: hand-built PDFs exercising each feature, every
//! limit at its edge, the real-world fixtures, and a mutation fuzz test.

mod builder;
mod features;
mod fixtures;
mod fuzz;
mod limits;
mod structure;
