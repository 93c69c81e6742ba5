//! Why an external tool (ptxas, nvdisasm) gave no result.

use std::path::PathBuf;

/// A tool run that failed: missing tool, file system trouble, or the tool's
/// own refusal (with everything it printed).
///
/// ```
/// let e = xtask::ToolError::NotFound { tool: "nvdisasm", searched: "$NVDISASM" };
/// assert!(e.to_string().contains("install-device-toolchain"));
/// assert_eq!(e.output(), None);
/// ```
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The tool is not installed where it is looked for.
    #[error("{tool} not found (looked in {searched}); run tools/install-device-toolchain.sh")]
    NotFound {
        /// `ptxas` or `nvdisasm`.
        tool: &'static str,
        /// Where it was looked for.
        searched: &'static str,
    },
    /// A temporary file or directory could not be made, or the tool not run.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// What was being done (`create`, `write`, `run`).
        action: &'static str,
        /// The path.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The tool ran and exited with an error.
    #[error("{tool} failed ({status}):\n{output}")]
    Failed {
        /// `ptxas` or `nvdisasm`.
        tool: &'static str,
        /// Its exit status.
        status: std::process::ExitStatus,
        /// Its stdout and stderr.
        output: String,
    },
}

impl ToolError {
    /// What the tool printed, for a [`ToolError::Failed`].
    ///
    /// ```
    /// let e = xtask::ToolError::NotFound { tool: "ptxas", searched: "PATH" };
    /// assert!(e.output().is_none());
    /// ```
    pub fn output(&self) -> Option<&str> {
        match self {
            ToolError::Failed { output, .. } => Some(output),
            _ => None,
        }
    }
}
