"""The Lessons page's words: a walk through §3 of "Attention Is All You Need", in our own words.

Plain static Markdown written by us; no user or token text ever goes through it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Lesson:
    """One stop of the walk: what to read, what to guess, and which live figure answers it."""

    key: str
    title: str
    body: str
    prompt: str  # the "predict" question; the figure is the "reveal"
    kind: str  # the attention the question is about
    layer: str  # "first" or "last"
    answer: str  # "strongest": the key with the largest weight; "furthest": last allowed key
    context: str  # the figure shown beside the text from the start
    reveal: str  # the figure shown once the student has guessed


LESSONS = (
    Lesson(
        "stacks",
        "§3.1 Two stacks that talk",
        "The model reads the whole input with an **encoder**: a stack of N identical layers, "
        "each letting every position look at every other (self-attention) and then passing "
        "each position through a small feed-forward network. Around both parts sits a "
        "residual connection followed by layer normalisation, so every layer only has to add "
        "a correction to what it was given.\n\n"
        "A **decoder** stack then writes the output one token at a time. Its layers have a "
        "third part: attention over the encoder's output, called the *memory*.",
        "In the last encoder layer, which input position will the chosen query look at most?",
        "encoder_self",
        "last",
        "strongest",
        "stats:encoder_self",
        "heatmap",
    ),
    Lesson(
        "sdpa",
        "§3.2.1 Scaled dot-product attention",
        "Each position asks a question (its **query**), advertises what it holds (its "
        "**key**) and offers content (its **value**). The match between a query and a key is "
        "their dot product. Dividing by √d_k keeps these numbers from growing with the "
        "width of the vectors; without it the softmax would saturate and hardly learn.\n\n"
        "The softmax turns one query's matches into weights that sum to 1, and the output is "
        "the weighted average of the values. *Inside the Transformer* shows every number.",
        "For the chosen query in encoder layer 0, head 0, which key gets the largest weight?",
        "encoder_self",
        "first",
        "strongest",
        "masks:encoder_self",
        "heatmap",
    ),
    Lesson(
        "heads",
        "§3.2.2 Many heads, many questions",
        "One attention can only average in one way. So the model splits its width into h "
        "smaller heads (d_k = d_model / h each), lets each attend on its own, and "
        "concatenates the results. The cost is about the same as one wide head, but each "
        "head is free to specialise: one may look at the previous position, another at the "
        "end of the sentence, another at the matching word.",
        "Which head of the last cross-attention layer looks where? Guess for the chosen "
        "output position, then reveal every head.",
        "cross",
        "last",
        "strongest",
        "stats:cross",
        "model_view",
    ),
    Lesson(
        "masks",
        "§3.2.3 Three uses, one mask",
        "The same attention serves three purposes. In the encoder, every input position sees "
        "every other. In the decoder, a position may only see positions before it: the "
        "future is masked out (set to −∞ before the softmax, so its weight is exactly 0), "
        "which is what lets the model be trained on whole sentences at once and still "
        "decode one token at a time. In encoder–decoder attention, the decoder's queries "
        "look at the encoder's memory.",
        "In decoder self-attention, where can the chosen position look? Guess the furthest "
        "key it may attend to.",
        "decoder_self",
        "last",
        "furthest",
        "lines:cross",
        "masks",
    ),
    Lesson(
        "positions",
        "§3.5 Where am I? Positional encoding",
        "Attention by itself ignores order: shuffle the input and each position gets the same "
        "answer, only shuffled. So a fixed pattern of sines and cosines of different "
        "wavelengths is added to each embedding. A fixed offset between two positions is a "
        "rotation of these sinusoids, which the paper suggests makes relative positions easy "
        "to use.",
        "For the chosen output position of the cross-attention, which input position carries "
        "the most weight? (For a reversing model, think about where that character came from.)",
        "cross",
        "last",
        "strongest",
        "positional",
        "alignment",
    ),
)
