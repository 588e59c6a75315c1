//! The loom model checks' shared set-up.

/// A loom model builder bounded at `preemptions` (unless `LOOM_MAX_PREEMPTIONS` says
/// otherwise), with room for the polls of the longest execution: idle drivers and members
/// poll, as the real ones do, and every poll is a branch, while one that never sees the end
/// still exceeds the limit and fails.
pub fn model_builder(preemptions: usize) -> loom::model::Builder {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(preemptions);
    }
    builder.max_branches = builder.max_branches.max(20_000);
    builder
}
