"""The Transformer of §3, read top-down: config → attention → masks and positions → layers →
the encoder-decoder (`transformer.py`) and decoder-only (`decoder_only.py`) stacks; with the
tokenizers our models read and how a model is saved (`checkpoint.py`)."""
