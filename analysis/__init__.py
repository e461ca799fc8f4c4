"""attnlens.analysis: what is measured on records and models, in one place for the CLI, the app and
`attnlens.experiment`: attention rollout and flow, head statistics, agreement with erasure, and
the head experiments (experiments/) with their result cache. Nothing here draws."""

from attnlens.analysis.head_stats import head_statistics
from attnlens.analysis.rollout import attention_flow, attention_rollout

__all__ = ["attention_flow", "attention_rollout", "head_statistics"]
