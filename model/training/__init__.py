"""Training by the paper's recipe, the tasks with known alignments, and their evaluation."""
