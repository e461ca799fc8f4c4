"""Any Hugging Face transformers model through attnlens' records; the only package that imports
transformers. `model.hf.lens.HFLens` is the lens; importing this package itself stays light
(display helpers and name checks only), so `import model` does not load transformers."""

from attnlens.model.lenses.hf.names import is_hf_folder, looks_like_hub_id
from attnlens.model.lenses.hf.tokens import display_token, display_tokens

__all__ = ["display_token", "display_tokens", "is_hf_folder", "looks_like_hub_id"]
