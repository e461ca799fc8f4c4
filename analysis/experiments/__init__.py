"""The head experiments (docs/experiments.md): what the head literature found, measured live
on the model at hand, each returning an ExperimentResult record by value."""
