"""Real models end to end: the Hugging Face transformers plug-in
(flash_ladder.integrations.transformers), examples/train.py and
examples/generate.py.

On the CPU (the library's calls swapped for emulation.py's stand-ins): the
plug-in registers and dispatches, its output equals sdpa's, GQA reaches the
library with its own KV heads, a sliding window (Mistral) reaches it as
transformers' flash path converts it and matches sdpa, Gemma 2's softcap and
gpt-oss's sinks reach it and match transformers' eager attention (the sinks'
gradient too), and what flash cannot express (padding, dropout, biases, masks
other than its own) raises ValueError.

On the GPU: tiny Llama (GQA), GPT-2 and Qwen2 (MQA) models from configs with
random weights and a fixed seed. Greedy generation of 64 tokens equals sdpa's
exactly in float32 (flash's CUDA-core rungs; errors ~1e-6, far below the
smallest top-two logit margin of these models, ~5e-4). In float16 (the
Hopper kernels) two correct attentions may round a near-tie differently, so
tokens must be equal up to each sequence's first difference, and that one
must be at a near-tie of sdpa's logits (examples/generate.py's rule). The
last-layer logits in fp16/bf16 are held to FlashAttention's rule against a
float32 run: error at most twice sdpa's plus a floor.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="the model tests need torch (pip install torch)")
transformers = pytest.importorskip(
    "transformers", reason="the model tests need Hugging Face transformers (pip install transformers)"
)

from flash_ladder import interface  # noqa: E402
from flash_ladder.integrations import transformers as flash_transformers  # noqa: E402

import emulation  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

REPO = Path(__file__).resolve().parents[2]
NAME = flash_transformers.register()
NEW_TOKENS = 64


def config(family, vocab=512):
    """Head dim 64 everywhere (a built head dim of the Hopper kernels)."""
    from transformers import GPT2Config, LlamaConfig, Qwen2Config

    common = dict(vocab_size=vocab, initializer_range=0.1)
    if family == "llama":  # GQA, 4 query heads over 2 KV heads
        return LlamaConfig(hidden_size=256, intermediate_size=512, num_hidden_layers=2, num_attention_heads=4,
                           num_key_value_heads=2, max_position_embeddings=512, **common)
    if family == "gpt2":
        return GPT2Config(n_embd=256, n_layer=2, n_head=4, n_positions=512, bos_token_id=0, eos_token_id=0, **common)
    if family == "qwen2":  # MQA, biases on q/k/v
        return Qwen2Config(hidden_size=256, intermediate_size=512, num_hidden_layers=2, num_attention_heads=4,
                           num_key_value_heads=1, max_position_embeddings=512, **common)
    raise ValueError(family)


FAMILIES = ["llama", "gpt2", "qwen2"]


def build(family, device="cpu", dtype=torch.float32, seed=0, attn="sdpa"):
    from transformers import AutoModelForCausalLM

    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config(family), attn_implementation=attn)
    model.generation_config.eos_token_id = None  # always NEW_TOKENS tokens
    model.generation_config.pad_token_id = 0
    return model.to(device=device, dtype=dtype).eval()


def prompt(batch=2, length=24, vocab=512, seed=1, device="cpu"):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, vocab, (batch, length), generator=g).to(device)


@pytest.fixture
def emulated(monkeypatch):
    emulation.install(monkeypatch)


# ------------------------------------------------------------------ the CPU


def test_register_returns_the_name_and_both_interfaces_know_it():
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface

    assert NAME == flash_transformers.DEFAULT_NAME
    assert AttentionInterface._global_mapping[NAME] is flash_transformers.attention_forward
    assert AttentionMaskInterface._global_mapping[NAME] is flash_transformers.mask_function


def test_a_name_with_flash_in_it_is_refused():
    with pytest.raises(ValueError, match="contains 'flash'"):
        flash_transformers.register("flash_ladder")


@pytest.mark.parametrize("family", FAMILIES)
def test_plug_in_matches_sdpa_on_the_cpu(emulated, family):
    model = build(family)
    ids = prompt()
    with torch.no_grad():
        expected = model(ids).logits
        reference_tokens = model.generate(ids, max_new_tokens=8, do_sample=False)
        model.set_attn_implementation(NAME)
        assert model.config._attn_implementation == NAME
        got = model(ids).logits
        tokens = model.generate(ids, max_new_tokens=8, do_sample=False)
    torch.testing.assert_close(got, expected, atol=1e-4, rtol=1e-4)
    assert torch.equal(tokens, reference_tokens)


def test_from_config_with_the_name(emulated):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_config(config("llama"), attn_implementation=NAME)
    assert model.config._attn_implementation == NAME


def test_arguments_reach_the_library_as_flash_expects(emulated, monkeypatch):
    calls = []
    real = interface.flash_attn_func

    def spy(q, k, v, softmax_scale=None, causal=False, **kwargs):
        calls.append((tuple(q.shape), tuple(k.shape), q.stride(-1), softmax_scale, causal))
        return real(q, k, v, softmax_scale=softmax_scale, causal=causal, **kwargs)

    monkeypatch.setattr(interface, "flash_attn_func", spy)
    model = build("llama")
    model.set_attn_implementation(NAME)
    with torch.no_grad():
        model.generate(prompt(batch=2, length=10), max_new_tokens=2, do_sample=False)
    # Prefill: (batch, seqlen, heads, head_dim), 4 query heads over 2 KV heads (not repeated), causal,
    # the module's scaling; then one decode step: one query against 11 keys (causal or not is the same).
    assert calls[0] == ((2, 10, 4, 64), (2, 10, 2, 64), 1, 64**-0.5, True)
    assert calls[-1][:2] == ((2, 1, 4, 64), (2, 11, 2, 64))
    assert len(calls) == 2 * 2  # two layers, two forward passes


def test_repeated_kv_heads_work_too(emulated):
    query, key = torch.randn(1, 4, 6, 64), torch.randn(1, 2, 6, 64)
    value = torch.randn(1, 2, 6, 64)
    module = torch.nn.Module()
    module.is_causal = True
    out, weights = flash_transformers.attention_forward(module, query, key, value, None)
    repeated, _ = flash_transformers.attention_forward(
        module, query, key.repeat_interleave(2, 1), value.repeat_interleave(2, 1), None
    )
    assert weights is None and out.shape == (1, 6, 4, 64)
    torch.testing.assert_close(out, repeated)


def test_left_padding_is_refused_with_a_clear_error(emulated):
    model = build("llama")
    model.set_attn_implementation(NAME)
    ids = prompt(batch=2, length=12)
    mask = torch.ones_like(ids)
    mask[1, :3] = 0
    with pytest.raises(ValueError, match=r"padded batch \(left padding: row 1 has 3 of 12 keys padded"):
        with torch.no_grad():
            model.generate(ids, attention_mask=mask, max_new_tokens=2, do_sample=False)


def test_an_all_ones_padding_mask_takes_the_fast_path(emulated):
    model = build("gpt2")
    ids = prompt(batch=2, length=12)
    with torch.no_grad():
        expected = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=4, do_sample=False)
        model.set_attn_implementation(NAME)
        got = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=4, do_sample=False)
    assert torch.equal(got, expected)


def test_mask_function_returns_none_only_for_flash_s_own_pattern():
    from transformers.masking_utils import causal_mask_function, sliding_window_causal_mask_function

    ones = torch.ones(2, 8, dtype=torch.bool)
    assert flash_transformers.mask_function(2, 8, 8, attention_mask=ones) is None
    assert flash_transformers.mask_function(2, 1, 8, q_offset=7, attention_mask=ones) is None
    padded = ones.clone()
    padded[0, 0] = False
    mask = flash_transformers.mask_function(2, 8, 8, mask_function=causal_mask_function, attention_mask=padded)
    assert mask.shape == (2, 1, 8, 8) and not bool(mask[0, :, :, 0].any())
    # A static cache: 8 slots, 3 queries at positions 0..2.
    assert flash_transformers.mask_function(2, 3, 8, q_offset=0) is not None
    window = sliding_window_causal_mask_function(4)
    assert flash_transformers.mask_function(2, 8, 8, mask_function=window) is not None


def test_4d_masks_are_checked_against_flash_s_pattern():
    causal = torch.ones(8, 8, dtype=torch.bool).tril()[None, None].expand(2, 1, 8, 8)
    flash_transformers.check_mask(causal, 8, 8, causal=True)
    additive = torch.zeros(2, 1, 8, 8).masked_fill(~causal, torch.finfo(torch.float32).min)
    flash_transformers.check_mask(additive, 8, 8, causal=True)
    flash_transformers.check_mask(torch.ones(2, 1, 1, 9, dtype=torch.bool), 1, 9, causal=True)
    with pytest.raises(ValueError, match="shows keys flash's causal mask hides"):
        flash_transformers.check_mask(torch.ones(2, 1, 8, 8, dtype=torch.bool), 8, 8, causal=True)
    with pytest.raises(ValueError, match="additive attention bias"):
        flash_transformers.check_mask(additive + 0.5, 8, 8, causal=True)
    window = causal & ~torch.ones(8, 8, dtype=torch.bool).tril(-4)  # itself and the 3 keys before it
    with pytest.raises(ValueError, match="sliding window"):
        flash_transformers.check_mask(window, 8, 8, causal=True)
    flash_transformers.check_mask(window, 8, 8, causal=True, window_size=(3, 3))  # (3, 0) with causal
    with pytest.raises(ValueError, match="shows keys flash's causal mask hides"):
        flash_transformers.check_mask(window, 8, 8, causal=True, window_size=(2, 2))
    with pytest.raises(ValueError, match="hides keys flash's mask shows"):
        flash_transformers.check_mask(window, 8, 8, causal=True, window_size=(4, 4))


def test_what_flash_cannot_express_is_refused():
    module = torch.nn.Module()
    module.is_causal = True
    q, k = torch.randn(1, 4, 8, 64), torch.randn(1, 2, 8, 64)
    with pytest.raises(ValueError, match="dropout"):
        flash_transformers.attention_forward(module, q, k, k, None, dropout=0.1)
    with pytest.raises(ValueError, match="additive position bias"):
        flash_transformers.attention_forward(module, q, k, k, None, position_bias=torch.zeros(1, 4, 8, 8))


def test_softcap_and_sinks_reach_the_library(emulated):
    module = torch.nn.Module()
    module.is_causal = True
    q, k, v = torch.randn(1, 4, 8, 64), torch.randn(1, 2, 8, 64), torch.randn(1, 2, 8, 64)
    sinks = torch.nn.Parameter(torch.randn(4, dtype=torch.bfloat16))
    flash_transformers.attention_forward(module, q, k, v, None, softcap=None)  # Gemma 2 without a cap
    flash_transformers.attention_forward(module, q, k, v, None, softcap=30.0, s_aux=sinks)
    assert [c[:2] for c in emulation.scores] == [("forward", 0.0), ("forward", 30.0)]
    assert emulation.scores[0][3] is None
    torch.testing.assert_close(emulation.scores[1][3], sinks.detach().float())  # gpt-oss's s_aux, in float32


def test_sliding_window_as_transformers_flash_path_converts_it(emulated):
    from transformers.masking_utils import sliding_window_causal_mask_function, sdpa_mask

    # transformers' flash path: (w - 1, w - 1) when the keys outnumber the window, else none.
    assert flash_transformers.window_size_for(4, 8) == (3, 3)
    assert flash_transformers.window_size_for(4, 4) == (-1, -1)
    assert flash_transformers.window_size_for(None, 8) == (-1, -1)
    module = torch.nn.Module()
    module.is_causal = True
    q, k, v = torch.randn(1, 4, 8, 64), torch.randn(1, 2, 8, 64), torch.randn(1, 2, 8, 64)
    emulation.calls.clear()
    out, _ = flash_transformers.attention_forward(module, q, k, v, None, sliding_window=4)
    assert emulation.calls == [("forward", True, 3, 0)]  # causal: the right side normalized to 0
    # The same as sdpa under transformers' own sliding-window mask (itself and the 3 keys before it).
    mask = sdpa_mask(batch_size=1, q_length=8, kv_length=8, mask_function=sliding_window_causal_mask_function(4),
                     allow_is_causal_skip=False)
    expected = torch.nn.functional.scaled_dot_product_attention(
        q, k.repeat_interleave(2, 1), v.repeat_interleave(2, 1), attn_mask=mask, scale=64**-0.5).transpose(1, 2)
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=1e-5)
    # The 4D mask, when given, is checked against the windowed pattern and accepted.
    again, _ = flash_transformers.attention_forward(module, q, k, v, mask, sliding_window=4)
    torch.testing.assert_close(again, out)


def test_mistral_sliding_window_matches_sdpa_on_the_cpu(emulated):
    from transformers import AutoModelForCausalLM, MistralConfig

    cfg = MistralConfig(vocab_size=512, hidden_size=256, intermediate_size=512, num_hidden_layers=2,
                        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512, sliding_window=6,
                        initializer_range=0.1)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(cfg, attn_implementation="sdpa").eval()
    model.generation_config.eos_token_id = None
    model.generation_config.pad_token_id = 0
    ids = prompt(batch=2, length=16)
    with torch.no_grad():
        expected = model(ids).logits
        reference_tokens = model.generate(ids, max_new_tokens=6, do_sample=False)
        model.set_attn_implementation(NAME)
        emulation.calls.clear()
        got = model(ids).logits
        assert ("forward", True, 5, 0) in emulation.calls
        tokens = model.generate(ids, max_new_tokens=6, do_sample=False)
    torch.testing.assert_close(got, expected, atol=1e-4, rtol=1e-4)
    assert torch.equal(tokens, reference_tokens)


def small_model(family, attn="eager"):
    """Tiny Gemma 2 (logit softcapping 2.0, sliding-window and full layers) or
    gpt-oss (a learnable sink per head, sliding and full layers, 4 experts)."""
    from transformers import AutoModelForCausalLM, Gemma2Config, GptOssConfig

    common = dict(vocab_size=512, hidden_size=256, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                  head_dim=64, sliding_window=6, initializer_range=0.1)
    if family == "gemma2":
        cfg = Gemma2Config(intermediate_size=512, max_position_embeddings=512, attn_logit_softcapping=2.0,
                           final_logit_softcapping=None, query_pre_attn_scalar=64, **common)
    else:  # max_position_embeddings: what its YaRN factor 32 over 4096 positions implies
        cfg = GptOssConfig(intermediate_size=256, num_local_experts=4, num_experts_per_tok=2,
                           max_position_embeddings=131072, **common)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(cfg, attn_implementation=attn)
    if family == "gpt_oss":
        with torch.no_grad():
            for layer in model.model.layers:  # sinks that matter: comparable with the scores
                layer.self_attn.sinks.copy_(torch.randn(4) * 2)
    return model.eval()


@pytest.mark.parametrize("family", ["gemma2", "gpt_oss"])
def test_softcap_and_sink_models_match_eager_on_the_cpu(emulated, family):
    # transformers' eager attention is the reference: its sdpa path has no softcap or sinks.
    model = small_model(family)
    ids = prompt(batch=2, length=16)
    with torch.no_grad():
        expected = model(ids).logits
        model.set_attn_implementation(NAME)
        emulation.scores.clear()
        got = model(ids).logits
    torch.testing.assert_close(got, expected, atol=1e-4, rtol=1e-4)
    softcap, sinks = {"gemma2": (2.0, False), "gpt_oss": (0.0, True)}[family]
    assert len(emulation.scores) == 2 and all(c[1] == softcap and (c[3] is not None) == sinks
                                              for c in emulation.scores)


def test_gpt_oss_sinks_learn_as_with_eager(emulated):
    # Training: the loss and every gradient, the sinks' among them (the library's dsinks), as eager's.
    ids = prompt(batch=2, length=12)
    grads = {}
    for attn in ("eager", NAME):
        model = small_model("gpt_oss", attn).train()
        loss = model(ids, labels=ids).loss
        loss.backward()
        grads[attn] = (loss.detach(), {n: p.grad for n, p in model.named_parameters() if p.grad is not None})
    (loss_eager, eager), (loss_flash, flash) = grads["eager"], grads[NAME]
    torch.testing.assert_close(loss_flash, loss_eager, atol=1e-5, rtol=1e-5)
    assert eager.keys() == flash.keys() and any(n.endswith("self_attn.sinks") for n in flash)
    for name in eager:
        torch.testing.assert_close(flash[name], eager[name], atol=1e-4, rtol=1e-3, msg=name)


def test_dropout_in_training_is_refused(emulated):
    from transformers import AutoModelForCausalLM

    cfg = config("llama")
    cfg.attention_dropout = 0.1
    model = AutoModelForCausalLM.from_config(cfg, attn_implementation=NAME).train()
    with pytest.raises(ValueError, match="dropout"):
        model(prompt(batch=1, length=8))
    model.eval()(prompt(batch=1, length=8))  # no dropout in eval: fine


# ------------------------------------------------------------------ the GPU


def greedy(model, ids, attn):
    model.set_attn_implementation(attn)
    with torch.no_grad():
        out = model.generate(ids, max_new_tokens=NEW_TOKENS, do_sample=False, output_logits=True,
                             return_dict_in_generate=True)
    return out.sequences[:, ids.shape[1]:], torch.stack(out.logits, dim=1).float()


@pytest.mark.gpu
@pytest.mark.parametrize("family", FAMILIES)
def test_greedy_tokens_equal_sdpa_float32(family):
    model = build(family, "cuda", torch.float32)
    ids = prompt(device="cuda")
    expected, logits = greedy(model, ids, "sdpa")
    got, _ = greedy(model, ids, NAME)
    top = logits.topk(2, dim=-1).values
    assert torch.equal(got, expected), (
        f"tokens differ at {(got != expected).nonzero().tolist()[:4]}; sdpa's smallest top-two margin "
        f"{float((top[..., 0] - top[..., 1]).min()):.2e}"
    )


@pytest.mark.gpu
@pytest.mark.parametrize("family", FAMILIES)
def test_greedy_tokens_equal_sdpa_float16(family):
    sys.path.insert(0, str(REPO / "examples"))
    import generate

    model = build(family, "cuda", torch.float16)
    ids = prompt(device="cuda")
    expected, logits = greedy(model, ids, "sdpa")
    got, _ = greedy(model, ids, NAME)
    top = logits.topk(2, dim=-1).values
    margins = torch.stack([top[..., 0] - top[..., 1], top[..., 0].abs()], dim=-1).cpu()
    result = generate.compare(got.cpu(), expected.cpu(), margins)
    print(family, result)
    assert not result["clear_mismatch"], result
    assert result["compared"] >= 16, result  # some tokens compared before a near-tie, if any


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["fp16", "bf16"])
@pytest.mark.parametrize("family", FAMILIES)
def test_logits_within_the_dtype_s_tolerance(family, dtype):
    """FlashAttention's rule: |flash - float32| <= 2 |sdpa - float32| + floor,
    on the last layer's logits of a 256-token batch."""
    ids = prompt(batch=2, length=256, device="cuda")
    with torch.no_grad():
        reference = build(family, "cuda", torch.float32)(ids).logits
        model = build(family, "cuda", dtype)
        sdpa = model(ids).logits.float()
        model.set_attn_implementation(NAME)
        flash = model(ids).logits.float()
    err_flash = (flash - reference).abs().max().item()
    err_sdpa = (sdpa - reference).abs().max().item()
    floor = 1e-3 * reference.abs().max().item()
    assert err_flash <= 2 * err_sdpa + floor, (err_flash, err_sdpa, floor)


def run_example(args, timeout=900):
    env = dict(os.environ)
    env.setdefault("PYTHONPATH", str(REPO / "python"))
    proc = subprocess.run([sys.executable, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)
    print(proc.stdout[-4000:], proc.stderr[-4000:])
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


@pytest.mark.gpu
def test_train_example_loss_decreases_like_sdpa(tmp_path):
    out = tmp_path / "train"
    run_example(["examples/train.py", "--steps", "50", "--out", str(out)])
    summary = json.loads((tmp_path / "train.json").read_text())["summary"]
    first, last = summary["first"], summary["last"]
    for backend in ("flash", "sdpa"):
        assert last[backend] < 0.5 * first[backend], summary  # it learns (the copy clicks by ~step 30)
    # Within noise: the same batches and initialization, bf16 rounding apart.
    assert abs(first["flash"] - first["sdpa"]) < 0.05, summary
    assert abs(last["flash"] - last["sdpa"]) < max(0.3, 0.3 * last["sdpa"]), summary


@pytest.mark.gpu
def test_generate_example_tokens_equal_hugging_face(tmp_path):
    result = tmp_path / "generate.json"
    run_example(["examples/generate.py", "--layers", "2", "--width", "256", "--heads", "4", "--vocab", "512",
                 "--init-std", "0.1", "--prompt-lengths", "5,33,70", "--new-tokens", "48", "--page-size", "16",
                 "--check", "--json", str(result)])
    compare = json.loads(result.read_text())["compare"]
    assert not compare["clear_mismatch"], compare
    assert compare["compared"] >= 16, compare
