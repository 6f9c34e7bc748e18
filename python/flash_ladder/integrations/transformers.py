"""flash_ladder as an attention implementation of Hugging Face transformers (5.x).

    from flash_ladder.integrations import transformers as flash_transformers

    flash_transformers.register()                      # once per process
    model = AutoModelForCausalLM.from_config(config, attn_implementation="ladder")
    model.set_attn_implementation("ladder")            # or switch a loaded model

Every attention layer that goes through transformers' AttentionInterface
(Llama, Qwen2, GPT-2 and most decoder models) then calls flash_attn_func:

- Prefill and training: causal attention over the prompt.
- Cached decode: the new token(s) against the whole cache that transformers
  keeps (DynamicCache). flash's causal mask is aligned to the bottom-right
  corner, so the last seqlen_q queries of seqlen_k keys see what
  transformers' cache convention says they see, with no offset argument.
- GQA: key and value keep their own (fewer) heads; the library reads each KV
  head once per group. Already repeated heads work too (a group of 1).
- Sliding windows (Mistral, Gemma's and Qwen's local layers): a layer's
  `sliding_window` kwarg becomes FlashAttention's window_size exactly as
  transformers' own flash path converts it (modeling_flash_attention_utils:
  (sliding_window - 1, sliding_window - 1) when the keys outnumber the window,
  with causal the right side 0): a query sees itself and the
  sliding_window - 1 keys before it, the mask that
  sliding_window_causal_mask_function builds.
- Logit softcapping (Gemma 2): the layer's `softcap` kwarg becomes
  flash_attn_func's softcap (None: off), applied before the mask as in
  transformers' eager attention.
- Attention sinks (gpt-oss): the layer's `s_aux` kwarg, one learnable logit
  per query head, becomes flash_attn_func's learnable_sink (cast to float32;
  its gradient flows back to the parameter in training).

What flash cannot express yet is refused with a ValueError, never computed
wrongly: a padding mask (a left-padded batch from a tokenizer), packed
sequences, a static cache's unfilled slots, chunked attention, an additive
bias, dropout in training.

Masks, and what they cost. transformers builds the mask once per forward
pass through the mask function registered under the same name
(AttentionMaskInterface); a name without one gets no mask at all, so a padded
batch would silently attend to its padding. The mask function registered
here returns None when the mask is exactly what flash computes (causal or
bidirectional, no padding, queries at the end of the keys): the attention
layers then take the fast path with nothing to check. A sliding-window mask
is not recognised there yet: it comes as the 4D mask, which the layer checks
against flash's windowed pattern and accepts (one sync per layer). Deciding that needs one
look at the 2D padding mask, `attention_mask.all()`, a single device-to-host
sync per forward pass and none per layer (transformers' own sdpa mask does
the same); with no 2D mask (training, or generate on an unpadded batch with
no attention_mask) nothing syncs. In every other case it returns the full
4D boolean mask (transformers' sdpa_mask), which the attention layer
compares with flash's pattern and refuses, naming the cause; a 4D mask that
a caller passes in directly is compared the same way (a sync per layer, off
the usual path).
"""

import torch

from .. import interface

__all__ = ["DEFAULT_NAME", "attention_forward", "mask_function", "register", "window_size_for"]

# Not "flash_...": transformers treats any implementation name that contains
# "flash" as a FlashAttention package (modeling_utils: lazy_import_flash_attention,
# generation's flash paths) and would try to import one.
DEFAULT_NAME = "ladder"

# kwargs of transformers' attention functions that change the attention in a
# way flash does not implement: refused unless None. (softcap and s_aux, the
# other two score changes models pass, are flash's softcap and sinks.)
_UNSUPPORTED = {
    "position_bias": "an additive position bias",
}


def _refuse(what):
    raise ValueError(
        f"flash_ladder attention cannot express {what} yet: it computes causal or full attention over "
        "unpadded sequences, and refuses rather than return wrong numbers. Use attn_implementation='sdpa' "
        "for this model or input, or pass sequences without padding (e.g. one at a time)."
    )


# ----------------------------------------------------------------- the mask


def _plain_mask(batch_size, q_length, kv_length, q_offset, kv_offset, mask_function, attention_mask):
    """True when the mask transformers asks for is exactly flash's: causal
    (bottom-right, queries at the end of the keys) or bidirectional, no
    padding. One host sync when a 2D padding mask is given, none otherwise."""
    from transformers.masking_utils import bidirectional_mask_function, causal_mask_function

    if mask_function is causal_mask_function:
        if not (isinstance(q_offset, int) and q_offset + q_length == kv_length):
            return False  # e.g. a static cache: keys past the queries (unfilled slots), or q_offset a tensor
    elif mask_function is not bidirectional_mask_function:
        return False  # sliding window, chunked, packed sequences, or/and overlays
    if kv_offset != 0:
        return False
    if attention_mask is None:
        return True
    if attention_mask.dim() != 2 or attention_mask.shape[-1] != kv_length:
        return False
    return bool(attention_mask.all())  # the one sync per forward pass


def mask_function(batch_size, q_length, kv_length, q_offset=0, kv_offset=0, mask_function=None,
                  attention_mask=None, **kwargs):
    """transformers' AttentionMaskInterface entry for this implementation:
    None when flash's own mask is the right one, else the full 4D boolean mask
    (batch, 1, q_length, kv_length), which attention_forward checks and refuses."""
    from transformers.masking_utils import causal_mask_function, sdpa_mask

    if mask_function is None:
        mask_function = causal_mask_function
    if _plain_mask(batch_size, q_length, kv_length, q_offset, kv_offset, mask_function, attention_mask):
        return None
    return sdpa_mask(
        batch_size=batch_size, q_length=q_length, kv_length=kv_length, q_offset=q_offset, kv_offset=kv_offset,
        mask_function=mask_function, attention_mask=attention_mask, allow_is_causal_skip=False,
        allow_is_bidirectional_skip=False, use_vmap=kwargs.get("use_vmap", False),
        device=kwargs.get("device", attention_mask.device if attention_mask is not None else "cpu"),
    )


def _visible(seqlen_q, seqlen_k, causal, device, window_size=(-1, -1)):
    """flash's pattern: query i sees key j iff i + d - left <= j <= i + d + right,
    d = seqlen_k - seqlen_q, -1 an unbounded side, causal meaning right = 0."""
    left, right = window_size
    if causal:
        right = 0
    i = torch.arange(seqlen_q, device=device)[:, None]
    j = torch.arange(seqlen_k, device=device)[None, :]
    diagonal = i + (seqlen_k - seqlen_q)
    visible = torch.ones(seqlen_q, seqlen_k, dtype=torch.bool, device=device)
    if right >= 0:
        visible &= j <= diagonal + right
    if left >= 0:
        visible &= j >= diagonal - left
    return visible


def window_size_for(sliding_window, seqlen_k):
    """FlashAttention's window_size for transformers' `sliding_window` kwarg,
    as transformers' flash path computes it (_process_flash_attention_kwargs):
    (sliding_window - 1, sliding_window - 1) when seqlen_k > sliding_window,
    else no window; with causal, flash_attn_func takes the right side as 0."""
    if sliding_window is not None and seqlen_k > sliding_window:
        return (sliding_window - 1, sliding_window - 1)
    return (-1, -1)


def check_mask(attention_mask, seqlen_q, seqlen_k, causal, window_size=(-1, -1)):
    """Raises ValueError unless attention_mask (a 2D padding mask, or a 4D
    boolean or additive float mask as transformers builds them) allows exactly
    what flash computes (with window_size, flash_attn_func's sliding window).
    Synchronizes with the device (it reads the mask)."""
    mask = attention_mask
    if mask.dim() == 2:  # (batch, seqlen_k) padding mask: 1 = token, 0 = padding
        if mask.shape[-1] != seqlen_k or not bool(mask.bool().all()):
            _refuse(_padding_message(mask.bool()[:, None, :]))
        return
    if mask.dim() != 4 or mask.shape[-2:] != (seqlen_q, seqlen_k):
        _refuse(f"an attention mask of shape {tuple(mask.shape)} (expected (batch, 1 or heads, {seqlen_q}, "
                f"{seqlen_k}))")
    if mask.dtype == torch.bool:
        visible = mask
    else:  # additive: 0 where visible, a large negative number where not
        visible = mask == 0
        masked = mask <= torch.finfo(mask.dtype).min / 2
        if not bool((visible | masked).all()):
            _refuse("an additive attention bias (a float mask with values other than 0 and -inf)")
    expected = _visible(seqlen_q, seqlen_k, causal, mask.device, window_size)
    if bool((visible == expected).all()):
        return
    _refuse(_mask_message(visible, expected))


def _padding_message(visible):
    """visible: (batch, seqlen_q, seqlen_k). Names the padded rows when keys
    are hidden from every query of a row (padding), else a general mismatch."""
    hidden_from_all = ~visible.any(dim=1)  # (batch, seqlen_k)
    rows = hidden_from_all.any(dim=1).nonzero().flatten().tolist()
    if rows:
        counts = hidden_from_all.sum(dim=1)
        shown = ", ".join(f"row {r} has {int(counts[r])} of {visible.shape[-1]} keys padded" for r in rows[:4])
        side = "left" if bool(hidden_from_all[rows[0], 0]) else "right"
        return f"a padded batch ({side} padding: {shown})"
    return "this attention mask"


def _mask_message(visible, expected):
    visible = visible.expand(visible.shape[0], -1, -1, -1).any(dim=1)  # (batch, seqlen_q, seqlen_k), any head
    message = _padding_message(visible)
    if message != "this attention mask":
        return message
    if bool((visible & ~expected).any()):
        return ("an attention mask that shows keys flash's causal mask hides (queries not at the end of the keys, "
                "e.g. a static cache, or bidirectional blocks)")
    return ("an attention mask that hides keys flash's mask shows (a sliding window, chunked attention, packed "
            "sequences or a static cache's unfilled slots)")


# ------------------------------------------------------------ the attention


def attention_forward(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
    """transformers' attention function signature: query (batch, heads_q,
    seqlen_q, head_dim), key and value (batch, heads_kv, seqlen_k, head_dim);
    returns (out (batch, seqlen_q, heads_q, head_dim), None)."""
    if dropout:  # transformers passes the module's dropout only in training
        _refuse(f"attention dropout (p = {dropout}, the model in training mode)")
    for name, what in _UNSUPPORTED.items():
        if kwargs.get(name) is not None:
            _refuse(what)
    is_causal = kwargs.get("is_causal")
    if is_causal is None:
        is_causal = getattr(module, "is_causal", True)
    seqlen_q, seqlen_k = query.shape[2], key.shape[2]
    window = window_size_for(kwargs.get("sliding_window"), seqlen_k)
    if is_causal and seqlen_k < seqlen_q:
        _refuse(f"causal attention of {seqlen_q} queries to fewer keys ({seqlen_k})")
    if attention_mask is not None:
        check_mask(attention_mask, seqlen_q, seqlen_k, bool(is_causal), window)
    # (batch, heads, seqlen, head_dim) -> (batch, seqlen, heads, head_dim): views, no copies.
    out = interface.flash_attn_func(
        query.transpose(1, 2), key.transpose(1, 2), value.transpose(1, 2), softmax_scale=scaling,
        causal=bool(is_causal) and seqlen_q > 1,  # one query sees every key either way
        window_size=window,
        softcap=kwargs.get("softcap") or 0.0,  # Gemma 2's attn_logit_softcapping; None: off
        learnable_sink=kwargs.get("s_aux"),  # gpt-oss's sinks, (heads_q,)
    )
    return out, None


def register(name=DEFAULT_NAME):
    """Registers flash as attn_implementation=name (attention and mask
    functions) in transformers' global interfaces; returns name."""
    if "flash" in name:
        raise ValueError(
            f"register(name={name!r}): transformers treats attention implementations whose name contains "
            "'flash' as FlashAttention packages and tries to import one; choose another name "
            f"(default {DEFAULT_NAME!r})"
        )
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface

    AttentionInterface.register(name, attention_forward)
    AttentionMaskInterface.register(name, mask_function)
    return name
