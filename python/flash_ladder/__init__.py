"""flash-ladder: flash's exact attention (FlashAttention) kernels for PyTorch.

    from flash_ladder import flash_attn_func, flash_attn_with_kvcache
    out = flash_attn_func(q, k, v, causal=True)   # (batch, seqlen, heads, head_dim)
    out = flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k)  # packed

The kernels live in libflash_c.so, flash's C ABI, loaded with ctypes: no
torch C++ headers or ABI are involved, so one build works with any torch 2.x
(torch >= 2.4 for torch.compile). flash_ladder.fa2 holds the same algorithm
as a readable FlashAttention-2 forward in plain PyTorch.

Importing the package needs neither torch nor the library; the functions
below import torch, and their first call loads the library.
"""

from ._capi import FlashError

__version__ = "0.1.0"

__all__ = ["FlashError", "flash_attn_func", "flash_attn_varlen_func", "flash_attn_with_kvcache", "library_path",
           "plan_forward"]

_INTERFACE = {"flash_attn_func", "flash_attn_varlen_func", "flash_attn_with_kvcache", "library_path", "plan_forward"}


def __getattr__(name):
    if name in _INTERFACE:
        from . import interface

        value = getattr(interface, name)
        globals()[name] = value  # bound here: later lookups (flash_ladder.flash_attn_func per call) skip this hook
        return value
    raise AttributeError(f"module 'flash_ladder' has no attribute {name!r}")
