//! # xtask
//!
//! baton's developer tooling, run as `cargo xtask <command>` (an alias in
//! `.cargo/config.toml`) and used by the tests in `xtask/tests/` that check
//! the built PTX without a GPU:
//!
//! * [`codegen`]: a kernel's body and its loops in PTX or SASS (the
//!   zero-cost checks compare loop sizes);
//! * [`ptxas`]: running `ptxas -v` and parsing its resource report (hot
//!   kernels: no spills, no stack frame).
//!
//! ```
//! let r = xtask::ptxas::parse("ptxas info    : Compiling entry function 'k' for 'sm_90a'\n\
//!     ptxas info    : Used 32 registers").unwrap();
//! assert_eq!((r[0].kernel.as_str(), r[0].registers), ("k", 32));
//! ```
#![warn(missing_docs)]

pub mod codegen;
pub mod ptxas;
pub mod tool_error;

pub use tool_error::ToolError;
