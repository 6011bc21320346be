"""A tiny local model for tests and examples: no hub download, a few seconds on a CPU.

`build_tiny(out_dir, texts)` trains a byte-level BPE on `texts` (the exported rows, so they tokenize
short), gives it the Qwen2.5 chat template that TRL ships (it renders tools, `<tool_call>{json}
</tool_call>` calls and `<tool_response>` results; TRL recognises it, so it adds the response schema
that parses tool calls back out of generations, and swaps in its training twin, with `{% generation
%}` markers, for `assistant_only_loss`), and saves it beside a random 2-layer Qwen2 causal LM, so
`AutoTokenizer.from_pretrained(out_dir)` and `AutoModelForCausalLM.from_pretrained(out_dir)` work.

The model is random: it shows that the trainers run on CompoWorld's data, not that anything is
learned. Use `--model` in the examples for a real one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
# plain tokens of the template, kept whole so tool calls stay short and easy to parse
MARKUP = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<tools>", "</tools>"]


def row_texts(rows: Iterable[dict[str, Any]]) -> list[str]:
    """Training text for the BPE from SFT or RL rows (messages, prompts and tool schemas as JSON)."""
    return [json.dumps(r, ensure_ascii=False, default=str) for r in rows]


def build_tiny(
    out_dir: str | Path,
    texts: Iterable[str],
    vocab_size: int = 4096,
    hidden_size: int = 64,
    layers: int = 2,
    max_positions: int = 65536,
    seed: int = 0,
) -> Path:
    """Train the tokenizer on `texts`, build the random model, save both to `out_dir`; returns it."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM
    from trl.chat_template_utils import qwen2_5_chat_template

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL + MARKUP,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    template_text = qwen2_5_chat_template  # its fixed strings are in every row
    bpe.train_from_iterator([template_text, *texts], trainer=trainer)
    tok = PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=["<|im_start|>"],
        chat_template=qwen2_5_chat_template,
        padding_side="left",
        model_max_length=max_positions,
    )
    tok.save_pretrained(out)
    torch.manual_seed(seed)
    config = Qwen2Config(
        vocab_size=len(tok),
        hidden_size=hidden_size,
        intermediate_size=hidden_size * 2,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=max_positions,
        tie_word_embeddings=True,
        pad_token_id=tok.pad_token_id,
        eos_token_id=tok.eos_token_id,
        bos_token_id=None,
    )
    model = Qwen2ForCausalLM(config)
    model.generation_config.pad_token_id = tok.pad_token_id
    model.generation_config.eos_token_id = tok.eos_token_id
    model.save_pretrained(out)
    return out


def tool_call_text(calls: list[tuple[str, dict[str, Any]]]) -> str:
    """An assistant turn of tool calls as the Qwen2.5 template writes it (what a model generates)."""
    body = "\n".join(
        "<tool_call>\n" + json.dumps({"name": n, "arguments": a}, ensure_ascii=False) + "\n</tool_call>"
        for n, a in calls
    )
    return body + "<|im_end|>"


def scripted_model(model_dir: str | Path, tasks: Iterable[Any], policy: Any = None):
    """The tiny model with a scripted `generate`, for showing GRPO's signal without training a policy.

    Within a batch, the first rollout of each prompt replays its task's reference through the gateway
    (the oracle's turns: discovery, then `call_tool`, then `finish`) and the next one finishes at
    once with an empty answer (a no-op), alternating. Later turns follow the conversation so far. The
    weights are the real (random) model's, so TRL computes log-probabilities and the loss as usual;
    only the sampled text is scripted. `policy(task, turn, sample)` (the text of the next turn, without
    `<|im_end|>`) replaces the script."""
    import torch
    from transformers import AutoTokenizer, Qwen2ForCausalLM

    from compoworld.agents.policies import oracle_turns

    tok = AutoTokenizer.from_pretrained(str(model_dir))
    by_instruction = {t.instruction: t for t in tasks}

    class ScriptedQwen2(Qwen2ForCausalLM):
        def _turn(self, text: str, first: int) -> str:
            task = next((t for i, t in by_instruction.items() if i in text), None)
            if task is None:
                raise ValueError("scripted_model: the prompt holds none of the given tasks' instructions")
            done = text.count("<|im_start|>assistant") - 1  # the last one is the generation prompt
            if policy is not None:
                return policy(task, done, first) + "<|im_end|>"
            last = text.rsplit("<tool_call>", 1)[-1] if done else ""
            if last.lstrip().startswith('{"name": "finish"'):
                return "Done.<|im_end|>"  # a turn without a tool call ends the rollout
            if done == 0 and first % 2:
                return tool_call_text([("finish", {"answer": ""})])
            plan = [*oracle_turns(task, gateway=True), [("finish", {"answer": task.answer or ""})]]
            return tool_call_text(plan[min(done, len(plan) - 1)])

        @torch.no_grad()
        def generate(self, input_ids=None, attention_mask=None, **_: Any):  # type: ignore[override]
            seen: dict[str, int] = {}
            rows = []
            for ids, mask in zip(input_ids, attention_mask, strict=True):
                text = tok.decode(ids[mask.bool()])
                k = seen[text] = seen.get(text, -1) + 1
                reply = tok(self._turn(text, k), add_special_tokens=False, return_tensors="pt")["input_ids"][
                    0
                ]
                rows.append(torch.cat([ids, reply.to(ids.device)]))
            width = max(len(r) for r in rows)
            pad = tok.pad_token_id
            return torch.stack([torch.cat([r, r.new_full((width - len(r),), pad)]) for r in rows])

    return ScriptedQwen2.from_pretrained(str(model_dir))
