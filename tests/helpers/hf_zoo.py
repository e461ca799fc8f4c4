"""Tiny random models of many Hugging Face architectures, each built from its own config class
and saved once per test process with a locally trained tokenizer; nothing is downloaded.

The zoo covers every position scheme (learned, sinusoidal, rotary, ALiBi, relative), local and
sliding-window layers, encoders and decoders of different shapes, grouped and multi-query
attention: the audit's comparison of attnlens' records with the models' own outputs and
`generate` (tests/model/lenses/test_hf_zoo.py).
"""

from __future__ import annotations

import atexit
import functools
import json
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import transformers as T
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

from helpers.hf_models import CORPUS, _sentencepiece, _wordpiece

Architecture = str  # "encoder", "decoder" or "encoder-decoder"


@dataclass(frozen=True)
class Style:
    """A tokenizer family: its special tokens (ids from 0 in this order) and templates."""

    specials: tuple[str, ...]
    single: str | None  # post-processing template of one text
    pair: str | None  # ... of a sentence pair
    names: tuple[tuple[str, str], ...]  # (role, token): pad_token, bos_token, …


STYLES: dict[str, Style] = {
    "wordpiece": Style(
        ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"), "[CLS] $A [SEP]",
        "[CLS] $A [SEP] $B:1 [SEP]:1",
        (("pad_token", "[PAD]"), ("unk_token", "[UNK]"), ("cls_token", "[CLS]"),
         ("sep_token", "[SEP]"), ("mask_token", "[MASK]")),
    ),
    "roberta": Style(
        ("<s>", "<pad>", "</s>", "<unk>", "<mask>"), "<s> $A </s>", "<s> $A </s> </s> $B </s>",
        (("bos_token", "<s>"), ("pad_token", "<pad>"), ("eos_token", "</s>"),
         ("unk_token", "<unk>"), ("sep_token", "</s>"), ("cls_token", "<s>"),
         ("mask_token", "<mask>")),
    ),
    "bart": Style(
        ("<s>", "<pad>", "</s>", "<unk>"), "<s> $A </s>", None,
        (("bos_token", "<s>"), ("pad_token", "<pad>"), ("eos_token", "</s>"),
         ("unk_token", "<unk>")),
    ),
    "causal": Style(
        ("<pad>", "<s>", "</s>", "<unk>"), None, None,
        (("pad_token", "<pad>"), ("bos_token", "<s>"), ("eos_token", "</s>"),
         ("unk_token", "<unk>")),
    ),
    "llama": Style(
        ("<unk>", "<s>", "</s>", "<pad>"), "<s> $A", None,
        (("unk_token", "<unk>"), ("bos_token", "<s>"), ("eos_token", "</s>"),
         ("pad_token", "<pad>")),
    ),
    "endoftext": Style(  # GPT-2 / GPT-Neo / CodeGen: one token is unknown, start and end
        ("<|endoftext|>",), None, None,
        (("unk_token", "<|endoftext|>"), ("bos_token", "<|endoftext|>"),
         ("eos_token", "<|endoftext|>")),
    ),
    "unigram": Style(
        ("<pad>", "</s>", "<unk>"), "$A </s>", None,
        (("pad_token", "<pad>"), ("eos_token", "</s>"), ("unk_token", "<unk>")),
    ),
}  # fmt: skip


def _byte_level(specials: tuple[str, ...]) -> Tokenizer:
    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300,
        special_tokens=list(specials),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tk.train_from_iterator(CORPUS, trainer)
    return tk


@functools.cache
def tokenizer(style_name: str) -> T.PreTrainedTokenizerFast:
    """A tokenizer of this style, trained on the shared corpus."""
    style = STYLES[style_name]
    if style_name == "wordpiece":
        tk = _wordpiece()
    elif style_name == "unigram":
        tk = _sentencepiece()
    else:
        tk = _byte_level(style.specials)
    if style.single is not None:
        names = {t for t in f"{style.single} {style.pair or ''}".split() if not t.startswith("$")}
        names = {n.split(":")[0] for n in names}
        tk.post_processor = processors.TemplateProcessing(
            single=style.single,
            pair=style.pair,
            special_tokens=[(n, tk.token_to_id(n)) for n in sorted(names)],
        )
    return T.PreTrainedTokenizerFast(tokenizer_object=tk, **dict(style.names))


def _ids(tok: T.PreTrainedTokenizerFast) -> dict[str, Any]:
    """The special token ids a config names, from the tokenizer."""
    out = dict(vocab_size=len(tok), pad_token_id=tok.pad_token_id)
    if tok.bos_token_id is not None:
        out["bos_token_id"] = tok.bos_token_id
    if tok.eos_token_id is not None:
        out["eos_token_id"] = tok.eos_token_id
    return out


def _seq2seq_ids(tok: T.PreTrainedTokenizerFast, start: int | None = None) -> dict[str, Any]:
    ids = _ids(tok)
    ids["decoder_start_token_id"] = tok.eos_token_id if start is None else start
    return ids


HIDDEN: dict[str, Any] = dict(
    hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32,
    max_position_embeddings=64,
)  # fmt: skip
BART_SIZES: dict[str, Any] = dict(
    d_model=16, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2,
    decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32, max_position_embeddings=64,
)  # fmt: skip
ROTARY_DECODER: dict[str, Any] = dict(HIDDEN, num_key_value_heads=1, head_dim=8)


@dataclass(frozen=True)
class Spec:
    """One architecture (encoder, decoder or encoder-decoder), its tokenizer style, and how
    to build its model."""

    architecture: Architecture
    style: str
    build: Callable[[T.PreTrainedTokenizerFast], T.PreTrainedModel]
    note: str = ""  # what this architecture brings to the comparison


def _encoder(config_class: Any, model_class: Any, **sizes: Any) -> Callable[..., Any]:
    return lambda tok: model_class(config_class(**{**HIDDEN, **_ids(tok), **sizes}))


def _decoder(config_class: Any, model_class: Any, **sizes: Any) -> Callable[..., Any]:
    return lambda tok: model_class(config_class(**{**_ids(tok), **sizes}))


def _seq2seq(
    config_class: Any, model_class: Any, start: str = "eos", **sizes: Any
) -> Callable[..., Any]:
    def build(tok: T.PreTrainedTokenizerFast) -> Any:
        first = tok.eos_token_id if start == "eos" else tok.pad_token_id
        ids = _seq2seq_ids(tok, first)
        return model_class(config_class(**{**BART_SIZES, **ids, **sizes}))

    return build


def _gpt2_sizes(**more: Any) -> dict[str, Any]:
    return {**dict(n_embd=16, n_layer=2, n_head=2, n_positions=64), **more}


def _t5(config_class: Any, model_class: Any, **more: Any) -> Callable[..., Any]:
    sizes = dict(d_model=16, d_kv=8, d_ff=32, num_layers=2, num_heads=2,
                 relative_attention_num_buckets=8)  # fmt: skip
    return lambda tok: model_class(
        config_class(**{**sizes, **_seq2seq_ids(tok, tok.pad_token_id), **more})
    )


ZOO: dict[str, Spec] = {
    # encoders
    "bert": Spec("encoder", "wordpiece", _encoder(T.BertConfig, T.BertModel), "learned"),
    "roberta": Spec(
        "encoder", "roberta", _encoder(T.RobertaConfig, T.RobertaModel, max_position_embeddings=66),
        "learned positions counted after padding",
    ),
    "xlm-roberta": Spec(
        "encoder", "roberta",
        _encoder(T.XLMRobertaConfig, T.XLMRobertaModel, max_position_embeddings=66),
    ),
    "distilbert": Spec(
        "encoder", "wordpiece",
        lambda tok: T.DistilBertModel(T.DistilBertConfig(
            dim=16, n_layers=2, n_heads=2, hidden_dim=32, max_position_embeddings=64, **_ids(tok)
        )),
    ),
    "albert": Spec(
        "encoder", "wordpiece", _encoder(T.AlbertConfig, T.AlbertModel, embedding_size=8),
        "factorised embeddings, shared layers",
    ),
    "electra": Spec("encoder", "wordpiece", _encoder(T.ElectraConfig, T.ElectraModel,
                                                      embedding_size=8)),
    "deberta": Spec(
        "encoder", "wordpiece",
        _encoder(T.DebertaConfig, T.DebertaModel, relative_attention=True,
                 position_biased_input=False, max_relative_positions=16, type_vocab_size=0),
        "relative",
    ),
    "deberta-v2": Spec(
        "encoder", "wordpiece",
        _encoder(T.DebertaV2Config, T.DebertaV2Model, relative_attention=True,
                 position_biased_input=False, max_relative_positions=16, position_buckets=8,
                 type_vocab_size=0),
        "relative (bucketed)",
    ),
    "roformer": Spec("encoder", "wordpiece", _encoder(T.RoFormerConfig, T.RoFormerModel),
                     "rotary"),
    "mpnet": Spec(
        "encoder", "roberta", _encoder(T.MPNetConfig, T.MPNetModel, max_position_embeddings=66),
        "learned positions and a relative bias",
    ),
    "modernbert": Spec(
        "encoder", "wordpiece",
        lambda tok: T.ModernBertModel(T.ModernBertConfig(**{
            **HIDDEN, **_ids(tok), "num_hidden_layers": 3, "local_attention": 4,
            "global_attn_every_n_layers": 2, "bos_token_id": tok.cls_token_id,
            "cls_token_id": tok.cls_token_id, "eos_token_id": tok.sep_token_id,
            "sep_token_id": tok.sep_token_id,
        })),
        "rotary; a local window (±2) on every second layer",
    ),
    # decoders
    "gpt2": Spec("decoder", "endoftext",
                 _decoder(T.GPT2Config, T.GPT2LMHeadModel, **_gpt2_sizes()), "learned"),
    "gpt-neo": Spec(
        "decoder", "endoftext",
        _decoder(T.GPTNeoConfig, T.GPTNeoForCausalLM, hidden_size=16, num_layers=2, num_heads=2,
                 max_position_embeddings=64, attention_types=[[["global", "local"], 1]],
                 window_size=3),
        "local attention on every second layer",
    ),
    "gptj": Spec("decoder", "endoftext",
                 _decoder(T.GPTJConfig, T.GPTJForCausalLM, rotary_dim=4, **_gpt2_sizes()),
                 "rotary"),
    "codegen": Spec("decoder", "endoftext",
                    _decoder(T.CodeGenConfig, T.CodeGenForCausalLM, rotary_dim=4, n_ctx=64,
                             **_gpt2_sizes(n_head=4)), "rotary, heads in 4 groups"),
    "gpt-bigcode": Spec("decoder", "endoftext",
                        _decoder(T.GPTBigCodeConfig, T.GPTBigCodeForCausalLM, multi_query=True,
                                 **_gpt2_sizes()), "multi-query attention"),
    "gpt-neox": Spec("decoder", "causal",
                     _decoder(T.GPTNeoXConfig, T.GPTNeoXForCausalLM, rotary_pct=0.5, **HIDDEN),
                     "partial rotary"),
    "bloom": Spec("decoder", "causal",
                  _decoder(T.BloomConfig, T.BloomForCausalLM, hidden_size=16, n_layer=2,
                           n_head=2), "ALiBi"),
    "mpt": Spec("decoder", "causal",
                _decoder(T.MptConfig, T.MptForCausalLM, d_model=16, n_heads=2, n_layers=2,
                         expansion_ratio=2, max_seq_len=64), "ALiBi"),
    "falcon": Spec("decoder", "causal",
                   _decoder(T.FalconConfig, T.FalconForCausalLM, hidden_size=16,
                            num_hidden_layers=2, num_attention_heads=2, alibi=False,
                            new_decoder_architecture=True, num_kv_heads=1,
                            max_position_embeddings=64), "rotary, grouped"),
    "opt": Spec("decoder", "causal",
                _decoder(T.OPTConfig, T.OPTForCausalLM, hidden_size=16, num_hidden_layers=2,
                         num_attention_heads=2, ffn_dim=32, max_position_embeddings=64,
                         word_embed_proj_dim=16), "learned, offset 2"),
    "biogpt": Spec("decoder", "causal", _decoder(T.BioGptConfig, T.BioGptForCausalLM, **HIDDEN),
                   "learned, offset 2"),
    "xglm": Spec("decoder", "causal",
                 _decoder(T.XGLMConfig, T.XGLMForCausalLM, d_model=16, num_layers=2,
                          attention_heads=2, ffn_dim=32, max_position_embeddings=64),
                 "sinusoidal table kept as a buffer"),
    "ctrl": Spec("decoder", "causal",
                 _decoder(T.CTRLConfig, T.CTRLLMHeadModel, n_embd=16, n_layer=2, n_head=2,
                          dff=32, n_positions=64), "sinusoidal buffer"),
    "llama": Spec("decoder", "llama", _decoder(T.LlamaConfig, T.LlamaForCausalLM,
                                               **ROTARY_DECODER), "rotary, grouped"),
    "mistral": Spec("decoder", "llama",
                    _decoder(T.MistralConfig, T.MistralForCausalLM, sliding_window=3,
                             **ROTARY_DECODER), "sliding window on every layer"),
    "qwen2": Spec("decoder", "llama",
                  _decoder(T.Qwen2Config, T.Qwen2ForCausalLM, use_sliding_window=True,
                           sliding_window=3, max_window_layers=1, **ROTARY_DECODER),
                  "sliding window from layer 1 on"),
    "qwen3": Spec("decoder", "llama", _decoder(T.Qwen3Config, T.Qwen3ForCausalLM,
                                               **ROTARY_DECODER), "rotary, q/k norms"),
    "gemma": Spec("decoder", "llama", _decoder(T.GemmaConfig, T.GemmaForCausalLM,
                                               **ROTARY_DECODER)),
    "gemma2": Spec("decoder", "llama",
                   _decoder(T.Gemma2Config, T.Gemma2ForCausalLM, sliding_window=3,
                            **ROTARY_DECODER), "alternating sliding layers, soft-capping"),
    "phi": Spec("decoder", "causal", _decoder(T.PhiConfig, T.PhiForCausalLM,
                                              partial_rotary_factor=0.5, **HIDDEN)),
    "starcoder2": Spec("decoder", "causal",
                       _decoder(T.Starcoder2Config, T.Starcoder2ForCausalLM, sliding_window=4,
                                num_key_value_heads=1, **HIDDEN), "sliding window"),
    # encoder-decoders
    "bart": Spec("encoder-decoder", "bart", _seq2seq(T.BartConfig, T.BartForConditionalGeneration),
                 "learned, offset 2, one table per stack"),
    "distilbart": Spec(
        "encoder-decoder", "bart",
        _seq2seq(T.BartConfig, T.BartForConditionalGeneration, encoder_layers=3,
                 encoder_attention_heads=4, decoder_layers=1, decoder_attention_heads=2),
        "encoder 3 × 4, decoder 1 × 2",
    ),
    "mbart": Spec("encoder-decoder", "bart",
                  _seq2seq(T.MBartConfig, T.MBartForConditionalGeneration), "pre-norm"),
    "marian": Spec("encoder-decoder", "unigram",
                   _seq2seq(T.MarianConfig, T.MarianMTModel, start="pad"), "sinusoidal"),
    "pegasus": Spec("encoder-decoder", "unigram",
                    _seq2seq(T.PegasusConfig, T.PegasusForConditionalGeneration, start="pad"),
                    "sinusoidal"),
    "m2m100": Spec("encoder-decoder", "bart",
                   _seq2seq(T.M2M100Config, T.M2M100ForConditionalGeneration),
                   "sinusoidal buffer counted after padding"),
    "blenderbot-small": Spec(
        "encoder-decoder", "bart",
        _seq2seq(T.BlenderbotSmallConfig, T.BlenderbotSmallForConditionalGeneration),
    ),
    "t5": Spec("encoder-decoder", "unigram", _t5(T.T5Config, T.T5ForConditionalGeneration),
               "relative"),
    "t5-deeper-decoder": Spec(
        "encoder-decoder", "unigram",
        _t5(T.T5Config, T.T5ForConditionalGeneration, num_decoder_layers=3),
        "3 decoder layers, 2 encoder layers",
    ),
}  # fmt: skip


@functools.cache
def zoo_folder(name: str) -> Path:
    """A folder holding a tiny random model of this architecture and its tokenizer."""
    spec = ZOO[name]
    torch.manual_seed(list(ZOO).index(name))
    tok = tokenizer(spec.style)
    model = spec.build(tok).eval()
    folder = Path(tempfile.mkdtemp(prefix=f"attnlens-zoo-{name}-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def auto_class(architecture: Architecture) -> Any:
    return {
        "encoder": T.AutoModel,
        "decoder": T.AutoModelForCausalLM,
        "encoder-decoder": T.AutoModelForSeq2SeqLM,
    }[architecture]


@functools.cache
def zoo_reference(name: str) -> tuple[T.PreTrainedModel, T.PreTrainedTokenizerBase]:
    """The saved model loaded on its own (eager attention), the reference to compare with."""
    folder = zoo_folder(name)
    model = auto_class(ZOO[name].architecture).from_pretrained(folder, attn_implementation="eager")
    return model.eval(), T.AutoTokenizer.from_pretrained(folder)


def variant(name: str, tmp: Path, config: dict[str, Any], generation: dict[str, Any]) -> Path:
    """A copy of a zoo model's folder with config.json and generation_config.json edited."""
    folder = tmp / f"{name}-variant"
    shutil.copytree(zoo_folder(name), folder)
    for file, changes in (("config.json", config), ("generation_config.json", generation)):
        if not (folder / file).is_file():  # an encoder has no generation config
            continue
        data = json.loads((folder / file).read_text())
        (folder / file).write_text(json.dumps({**data, **changes}))
    return folder


def camembert_folder(folder: Path) -> Path:
    """A tiny CamemBERT saved in folder: a Hugging Face encoder attnlens reads but whose
    projections it does not know."""
    tok = tokenizer("roberta")
    config = T.CamembertConfig(
        vocab_size=len(tok), hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=66, pad_token_id=tok.pad_token_id,
    )  # fmt: skip
    T.CamembertModel(config).eval().save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder
