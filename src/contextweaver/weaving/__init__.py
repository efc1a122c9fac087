"""A Plan becomes a context: the plan contract, budgeted and incremental weaving, lazy cuts, excerpts, the working-state note, and `modes` (when and how to cut)."""
