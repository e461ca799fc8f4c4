"""Tiny random Hugging Face models (BERT, GPT-2, BART, Marian, T5; RoBERTa, Llama, Mistral)
with locally trained tokenizers, saved once per test process; nothing is downloaded."""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from pathlib import Path
from typing import Any

import torch
import transformers as T
from tokenizers import (
    Tokenizer,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    processors,
    trainers,
)

CORPUS = [
    "the cat sat on the mat",
    "hello world",
    "a dog sat on a log",
    "the quick brown fox jumps over the lazy dog",
    "naïve café déjà vu",
] * 3
KINDS = ("bert", "gpt2", "bart", "marian", "t5")
SMALL: dict[str, Any] = dict(num_hidden_layers=2, num_attention_heads=2, hidden_size=16)


def _byte_level() -> Tokenizer:
    """GPT-2 / BART style: byte-level BPE, Ġ marks a leading space."""
    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300,
        special_tokens=["<pad>", "<s>", "</s>", "<unk>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tk.train_from_iterator(CORPUS, trainer)
    return tk


def _sentencepiece() -> Tokenizer:
    """Marian / T5 style: unigram pieces, ▁ marks a word start."""
    tk = Tokenizer(models.Unigram())
    tk.pre_tokenizer = pre_tokenizers.Metaspace()
    tk.decoder = decoders.Metaspace()
    trainer = trainers.UnigramTrainer(
        vocab_size=60, special_tokens=["<pad>", "</s>", "<unk>"], unk_token="<unk>"
    )
    tk.train_from_iterator(CORPUS, trainer)
    return tk


def _wordpiece() -> Tokenizer:
    """BERT style: WordPiece, ## marks a continuation."""
    tk = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tk.normalizer = normalizers.BertNormalizer(lowercase=True)
    tk.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tk.decoder = decoders.WordPiece()
    trainer = trainers.WordPieceTrainer(
        vocab_size=80, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    )
    tk.train_from_iterator(CORPUS, trainer)
    return tk


def _wrap(tk: Tokenizer, template: str | None, **special: str) -> T.PreTrainedTokenizerFast:
    if template is not None:
        names = [t for t in template.split() if t != "$A"]
        tk.post_processor = processors.TemplateProcessing(
            single=template, special_tokens=[(n, tk.token_to_id(n)) for n in names]
        )
    return T.PreTrainedTokenizerFast(tokenizer_object=tk, **special)


def _bert() -> tuple[T.PreTrainedModel, T.PreTrainedTokenizerFast]:
    tok = _wrap(
        _wordpiece(), "[CLS] $A [SEP]", pad_token="[PAD]", unk_token="[UNK]",
        cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]",
    )  # fmt: skip
    config = T.BertConfig(
        vocab_size=len(tok), intermediate_size=32, max_position_embeddings=40, pad_token_id=0,
        **SMALL,
    )  # fmt: skip
    return T.BertModel(config), tok


def _gpt2() -> tuple[T.PreTrainedModel, T.PreTrainedTokenizerFast]:
    tok = _wrap(_byte_level(), None, pad_token="<pad>", bos_token="<s>", eos_token="</s>")
    config = T.GPT2Config(
        vocab_size=len(tok), n_embd=16, n_layer=2, n_head=2, n_positions=40,
        bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
    )  # fmt: skip
    return T.GPT2LMHeadModel(config), tok


def _seq2seq_ids(tok: T.PreTrainedTokenizerFast, start: int) -> dict[str, Any]:
    eos = tok.eos_token_id
    return dict(
        vocab_size=len(tok), pad_token_id=tok.pad_token_id, eos_token_id=eos,
        decoder_start_token_id=start, forced_eos_token_id=eos,
    )  # fmt: skip


def _bart_like(kind: str) -> tuple[T.PreTrainedModel, T.PreTrainedTokenizerFast]:
    sizes = dict(
        d_model=16, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2,
        decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32,
        max_position_embeddings=40,
    )  # fmt: skip
    if kind == "bart":
        tok = _wrap(
            _byte_level(), "<s> $A </s>", pad_token="<pad>", bos_token="<s>", eos_token="</s>",
            unk_token="<unk>",
        )  # fmt: skip
        ids = _seq2seq_ids(tok, start=tok.eos_token_id)
        return T.BartForConditionalGeneration(T.BartConfig(**sizes, **ids)), tok
    tok = _wrap(_sentencepiece(), "$A </s>", pad_token="<pad>", eos_token="</s>", unk_token="<unk>")
    ids = _seq2seq_ids(tok, start=tok.pad_token_id)
    return T.MarianMTModel(T.MarianConfig(**sizes, **ids)), tok


def _t5() -> tuple[T.PreTrainedModel, T.PreTrainedTokenizerFast]:
    tok = _wrap(_sentencepiece(), "$A </s>", pad_token="<pad>", eos_token="</s>", unk_token="<unk>")
    config = T.T5Config(
        d_model=16, d_kv=8, d_ff=32, num_layers=2, num_heads=2,
        relative_attention_num_buckets=8, **_seq2seq_ids(tok, start=tok.pad_token_id),
    )  # fmt: skip
    return T.T5ForConditionalGeneration(config), tok


def _roberta() -> tuple[T.PreTrainedModel, T.PreTrainedTokenizerFast]:
    tok = _wrap(
        _byte_level(), "<s> $A </s>", pad_token="<pad>", bos_token="<s>", eos_token="</s>",
        unk_token="<unk>",
    )  # fmt: skip
    config = T.RobertaConfig(
        vocab_size=len(tok), intermediate_size=32, max_position_embeddings=42,
        pad_token_id=tok.pad_token_id, **SMALL,
    )  # fmt: skip
    return T.RobertaModel(config), tok


def _llama_like(kind: str) -> tuple[T.PreTrainedModel, T.PreTrainedTokenizerFast]:
    tok = _wrap(_byte_level(), "<s> $A", pad_token="<pad>", bos_token="<s>", eos_token="</s>")
    sizes: dict[str, Any] = dict(
        vocab_size=len(tok), intermediate_size=32, num_key_value_heads=2,
        max_position_embeddings=40, bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id, **SMALL,
    )  # fmt: skip
    if kind == "mistral":
        return T.MistralForCausalLM(T.MistralConfig(sliding_window=3, **sizes)), tok
    return T.LlamaForCausalLM(T.LlamaConfig(**sizes)), tok


BUILDERS = {
    "bert": _bert,
    "gpt2": _gpt2,
    "bart": lambda: _bart_like("bart"),
    "marian": lambda: _bart_like("marian"),
    "t5": _t5,
    "roberta": _roberta,  # positions start after the padding row
    "llama": lambda: _llama_like("llama"),  # rotary positions
    "mistral": lambda: _llama_like("mistral"),  # sliding-window attention (window 3)
}
EXTRA = ("roberta", "llama", "mistral")


@functools.cache
def tiny_hf(kind: str) -> Path:
    """A folder holding a tiny random model of this kind and its tokenizer (safetensors)."""
    torch.manual_seed((*KINDS, *EXTRA).index(kind))
    model, tok = BUILDERS[kind]()
    folder = Path(tempfile.mkdtemp(prefix=f"attnlens-hf-{kind}-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    model.eval().save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


@functools.cache
def reference(kind: str) -> tuple[T.PreTrainedModel, T.PreTrainedTokenizerBase]:
    """The same saved model loaded independently, as the reference our records are checked
    against."""
    folder = tiny_hf(kind)
    causal = {"gpt2", "llama", "mistral"}
    auto = T.AutoModelForCausalLM if kind in causal else T.AutoModel
    auto = T.AutoModelForSeq2SeqLM if kind in ("bart", "marian", "t5") else auto
    model = auto.from_pretrained(folder, attn_implementation="eager").eval()
    return model, T.AutoTokenizer.from_pretrained(folder)


def in_memory(kind: str) -> tuple[T.PreTrainedModel, T.PreTrainedTokenizerFast]:
    """A tiny model of this kind built in memory as a notebook would hold it: never saved, the
    default (sdpa) attention, in training mode."""
    torch.manual_seed((*KINDS, *EXTRA).index(kind))
    return BUILDERS[kind]()
