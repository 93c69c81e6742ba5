//! Progress bars for the benchmarks (indicatif), drawn on stderr only when
//! stderr is a terminal: a log or a pipe gets no bar lines at all.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// A bar of `total` steps on stderr, hidden unless stderr is a terminal.
///
/// ```
/// let bar = baton_cli::progress::bar(10);
/// bar.set_message("4096x4096x4096");
/// bar.inc(1);
/// bar.finish_and_clear();
/// ```
pub fn bar(total: u64) -> ProgressBar {
    bar_on(total, std::io::stderr().is_terminal())
}

/// [`bar`] for a stderr that is (`terminal`) or is not a terminal: hidden
/// in the second case.
///
/// ```
/// assert!(baton_cli::progress::bar_on(5, false).is_hidden());
/// ```
pub fn bar_on(total: u64, terminal: bool) -> ProgressBar {
    let target = if terminal {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    };
    let bar = ProgressBar::with_draw_target(Some(total), target);
    bar.set_style(
        ProgressStyle::with_template("{bar:30.cyan/blue} {pos}/{len} {elapsed_precise} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bar_for_a_non_terminal_is_hidden_and_still_counts() {
        let b = bar_on(3, false);
        assert!(b.is_hidden());
        b.inc(2);
        assert_eq!(b.position(), 2);
    }

    #[test]
    fn a_bar_for_a_terminal_draws_to_stderr() {
        // (Hidden anyway when the test's stderr is not a terminal: indicatif
        // checks the real stream too.)
        let b = bar_on(3, true);
        assert_eq!(b.length(), Some(3));
        assert_eq!(b.is_hidden(), !std::io::stderr().is_terminal());
    }
}
