"""The tiny local Qwen3 policy: a deterministic random-weight model and a locally trained tokenizer.

No model can be downloaded here, so the offline default (and every test) uses this: a byte-level
BPE tokenizer trained on `assets/tokenizer_corpus.txt` with a Qwen-style chat template, and a
`Qwen3Config` model (about 0.1M parameters at the defaults; `params.yaml: tiny_model` grows it for the
default run, where the warm-start stage teaches it a little code). Same seed -> byte-identical files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from microcoder.pipeline.stage import Command

CORPUS = Path(__file__).parent / "assets" / "tokenizer_corpus.txt"
SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>"]

# Qwen-style ChatML template (the same shape as Qwen3's, without tool calling).
CHAT_TEMPLATE = (
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}"
    "{{- '<|im_start|>assistant\\n' }}"
    "{%- if enable_thinking is defined and enable_thinking is false %}"
    "{{- '<think>\\n\\n</think>\\n\\n' }}"
    "{%- endif %}"
    "{%- endif %}"
)


@dataclass
class TinyModelConfig:
    vocab_size: int = field(default=512, metadata={"help": "BPE vocabulary size (trained on the shipped corpus)."})
    hidden_size: int = field(default=64, metadata={"help": "Hidden size."})
    intermediate_size: int | None = field(default=None, metadata={"help": "MLP size (null: 2 x hidden_size)."})
    num_hidden_layers: int = field(default=2, metadata={"help": "Number of decoder layers."})
    num_attention_heads: int | None = field(default=None, metadata={"help": "Attention heads (null: hidden_size // head_dim)."})
    num_key_value_heads: int | None = field(default=None, metadata={"help": "Key/value heads (null: half the attention heads)."})
    head_dim: int = field(default=16, metadata={"help": "Size of one attention head."})
    max_position_embeddings: int = field(default=4096, metadata={"help": "Context length."})
    seed: int = field(default=0, metadata={"help": "Weight-initialisation seed (same seed, byte-identical files)."})


class TinyModel(Command):
    name = "tiny-model"
    section = "tiny_model"
    config = TinyModelConfig


def build_tokenizer(vocab_size: int = 512):
    """Byte-level BPE trained on the shipped corpus, wrapped as a transformers fast tokenizer."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator([CORPUS.read_text(encoding="utf-8")], trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        bos_token=None,
        unk_token=None,
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


def build_tiny_model(out_dir: str | Path, config: TinyModelConfig | None = None) -> Path:
    """Build the tokenizer and a random-weight Qwen3 with `config.seed`, save both to `out_dir`."""
    import torch
    from transformers import GenerationConfig, Qwen3Config, Qwen3ForCausalLM

    config = config or TinyModelConfig()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer(config.vocab_size)
    heads = config.num_attention_heads or max(1, config.hidden_size // config.head_dim)
    qcfg = Qwen3Config(
        vocab_size=len(tokenizer),
        hidden_size=config.hidden_size,
        intermediate_size=config.intermediate_size or 2 * config.hidden_size,
        num_hidden_layers=config.num_hidden_layers,
        num_attention_heads=heads,
        num_key_value_heads=config.num_key_value_heads or max(1, heads // 2),
        head_dim=config.head_dim,
        max_position_embeddings=config.max_position_embeddings,
        tie_word_embeddings=True,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
    )
    torch.manual_seed(config.seed)
    model = Qwen3ForCausalLM(qcfg)
    model.generation_config = GenerationConfig(
        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id, do_sample=True,
        temperature=1.0, top_p=1.0, max_new_tokens=64,
    )
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def load_model_and_tokenizer(path: str | Path, dtype: str = "float32"):
    """Load a causal LM and its tokenizer from a local directory (or a Hub id where there is network)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(path))
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(str(path), dtype=getattr(torch, dtype))
    return model, tokenizer
