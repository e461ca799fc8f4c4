"""The head experiments of attnlens.analysis.experiments drawn (induction, importance,
explanation, alignment), and an experiment's summary as a table a person reads."""
