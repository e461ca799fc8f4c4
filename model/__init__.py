"""attnlens' model side, one folder per part of the system:

- `net/`: the Transformer of §3 (attention → layers → stacks), its tokenizers and checkpoints;
- `decoding/`: greedy, beam search and sampling on one step loop, any model;
- `lenses/`: a loaded model behind one contract (`Lens`): ours, Hugging Face's, by name;
- `training/`: the paper's training recipe, the tasks with known alignments, evaluation.

What a model computed comes back as a record (`attnlens.record`), by value.
"""
