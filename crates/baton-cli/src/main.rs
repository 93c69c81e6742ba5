//! `baton`: GPU info, the smoke kernel, and the CPU demo.
//!
//! ```text
//! baton info            embedded kernels, ptxas report, GPU
//! baton smoke           run the smoke kernel (both PTX variants), PASS/FAIL table
//! baton probe           exit 0 if a usable Hopper GPU is here, 77 if not
//! baton demo            the pipeline on the CPU backend
//! ```
//! Exit codes: 0 pass, 1 fail, 77 skipped (no usable GPU / no PTX).

use baton_cli::commands::{self, Outcome};
use baton_runtime::Variant;
use clap::{Parser, Subcommand, ValueEnum};

#[derive(Parser)]
#[command(
    name = "baton",
    version,
    about = "baton: warp-specialized GPU pipelines in Rust (sm_90a)"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Clone, Copy, ValueEnum)]
enum VariantArg {
    Release,
    Debug,
    All,
}

#[derive(Subcommand)]
enum Cmd {
    /// Embedded kernels, their ptxas report, and the GPU (if any).
    Info {
        /// CUDA device ordinal.
        #[arg(long, default_value_t = 0)]
        ordinal: usize,
    },
    /// Run the smoke kernel and print a PASS/FAIL table (exit 77 without a GPU).
    Smoke {
        /// CUDA device ordinal.
        #[arg(long, default_value_t = 0)]
        ordinal: usize,
        /// Which PTX build to run.
        #[arg(long, value_enum, default_value = "all")]
        variant: VariantArg,
        /// Input seed (default: fresh from the clock).
        #[arg(long)]
        seed: Option<u64>,
    },
    /// Exit 0 if a usable Hopper GPU and the PTX are here, 77 (reason printed) if not.
    Probe {
        /// CUDA device ordinal.
        #[arg(long, default_value_t = 0)]
        ordinal: usize,
    },
    /// The producer/consumer pipeline on the CPU backend (no GPU needed).
    Demo {
        /// Payloads the producer warp sends.
        #[arg(long, default_value_t = 200_000)]
        items: u64,
        /// Consumer warps.
        #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=31))]
        consumers: u32,
    },
}

fn main() {
    let cli = Cli::parse();
    let outcome: Outcome = match cli.cmd {
        Cmd::Info { ordinal } => commands::info(ordinal),
        Cmd::Smoke {
            ordinal,
            variant,
            seed,
        } => {
            let vs: &[Variant] = match variant {
                VariantArg::Release => &[Variant::Release],
                VariantArg::Debug => &[Variant::Debug],
                VariantArg::All => &Variant::ALL,
            };
            commands::smoke(ordinal, vs, seed)
        }
        Cmd::Probe { ordinal } => commands::probe(ordinal),
        Cmd::Demo { items, consumers } => commands::run_cpu_demo(items, consumers),
    };
    std::process::exit(outcome.code());
}
