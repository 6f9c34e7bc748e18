"""FlashAttention's Python API over flash's C ABI: flash_attn_func,
flash_attn_varlen_func and flash_attn_with_kvcache on torch tensors.

Two ways into the same calls:

- Eager (plain tensors, not under torch.compile): the public functions call
  the library directly, through a torch.autograd.Function when a gradient is
  needed. This is the lean path whose overhead benchmarks/overhead.py measures.
- Traced (torch.compile, torch.export, fake tensors, dispatch modes): the
  custom ops flash_ladder::fwd, ::bwd, ::fwd_varlen, ::bwd_varlen and
  ::fwd_kvcache, registered with torch.library.custom_op, with fake
  implementations that only allocate the outputs and with fwd's (fwd_varlen's)
  autograd formula calling bwd (bwd_varlen), so that
  torch.compile(fullgraph=True) traces them without a graph break.

Every call runs on the current CUDA stream of its tensors' device. The library
checks every argument (shapes, dtypes, strides, overlap, the score modifiers'
values) and its errors come back as ValueError with its message; this module
only checks what the library cannot see: that the tensors are on one CUDA
device and have dtypes it knows.
"""

import ctypes
import struct
import threading
from typing import Optional, Tuple

import torch

from . import _capi

__all__ = ["flash_attn_func", "flash_attn_varlen_func", "flash_attn_with_kvcache", "plan_forward"]

_DTYPES = {torch.float32: _capi.F32, torch.float16: _capi.F16, torch.bfloat16: _capi.BF16, torch.int32: _capi.I32}
# The eleven packed fields of an absent optional flash_tensor (rank 0).
_ABSENT = (0,) * 11
# The variable-length fields of a padded batch (the forward's version-4
# fields, the backward's version-6 ones): no cu_seqlens_q, cu_seqlens_k,
# seqused_k, status; max_seqlen_q, max_seqlen_k 0; sync_check 1 (the
# init's); and for the forward (version 5) no page_table.
_BACKWARD_NOT_VARLEN = _ABSENT * 4 + (0, 0, 1, 0)
_NOT_VARLEN = _BACKWARD_NOT_VARLEN + _ABSENT
# A caller's workspace must be 256-byte aligned (flash/forward.h).
_WORKSPACE_ALIGNMENT = 256
# flash_attn_varlen_func with page_table and a gradient to compute.
_NO_PAGED_BACKWARD = (
    "flash_attn_varlen_func: a call with page_table has no backward (FlashAttention's has none either); call it "
    "under torch.no_grad() or with inputs that do not require grad"
)

_lib = None


def _library():
    global _lib
    if _lib is None:
        _lib = _capi.library()
    return _lib


def library_path():
    """The path of the libflash_c.so in use (see FLASH_LADDER_LIBRARY)."""
    return str(_library().path)


# ---------------------------------------------------------------- marshalling


def _fields(t, name):
    """The eleven fields of a flash_tensor for tensor t: pointer, dtype, rank,
    shape[4], strides[4] (in elements, as torch gives them)."""
    code = _DTYPES.get(t.dtype)
    if code is None:
        raise ValueError(
            f"{name}.dtype is {t.dtype}; flash takes float16, bfloat16 and float32 tensors, and int32 "
            "metadata (cache_seqlens, page_table, cu_seqlens_q, cu_seqlens_k, seqused_k)"
        )
    shape = t.shape
    if len(shape) == 4:
        return (t.data_ptr(), code, 4, *shape, *t.stride())
    rank = len(shape)
    if rank == 0:  # rank 0 means "absent" in the C ABI
        raise ValueError(f"{name}: expected a tensor of rank >= 1, got a 0-dim tensor")
    pad = (0,) * max(0, 4 - rank)
    return (t.data_ptr(), code, rank, *shape[:4], *pad, *t.stride()[:4], *pad)


def _optional(t, name):
    return _ABSENT if t is None else _fields(t, name)


def _score_fields(softcap, alibi_slopes, sinks):
    """The score modifiers' fields, in the order every args struct (ABI
    version 3) appends them: softcap, padding, alibi_slopes, sinks."""
    return (softcap, 0, *_optional(alibi_slopes, "alibi_slopes"), *_optional(sinks, "sinks"))


def _varlen_fields(cu_seqlens_q, cu_seqlens_k, seqused_k, max_seqlen_q, max_seqlen_k, sync_check):
    """A variable-length batch's fields, in the order the forward's (version
    4) and the backward's (version 6) structs have them: cu_seqlens_q,
    cu_seqlens_k, seqused_k, status (absent: the library's workspace holds
    the status words), max_seqlen_q, max_seqlen_k, sync_check, padding."""
    return (*_fields(cu_seqlens_q, "cu_seqlens_q"), *_optional(cu_seqlens_k, "cu_seqlens_k"),
            *_optional(seqused_k, "seqused_k"), *_ABSENT, int(max_seqlen_q), int(max_seqlen_k),
            1 if sync_check else 0, 0)


def _scale(softmax_scale):
    return (0.0, 0) if softmax_scale is None else (float(softmax_scale), 1)


def _softcap(softcap):
    """The library's softcap from FlashAttention's (0.0 off; None is taken as
    off too, as Hugging Face passes it). A bad value (negative, inf, nan)
    goes to the library, whose ValueError names it."""
    return 0.0 if softcap is None else float(softcap)


# The dtypes FlashAttention-4 takes for learnable_sink; the library takes
# float32, so these are cast (a differentiable cast: a half-precision
# parameter gets its gradient in its own dtype).
_SINK_CASTS = (torch.float16, torch.bfloat16)


def _sinks(learnable_sink):
    """The library's sinks (float32) from learnable_sink."""
    if learnable_sink is not None and learnable_sink.dtype in _SINK_CASTS:
        return learnable_sink.float()
    return learnable_sink


def _window(window_size, causal):
    """(window_left, window_right) for the library from FlashAttention's
    window_size=(left, right): with causal, FlashAttention uses right = 0
    whatever is given (Hugging Face passes (w, w) with causal=True), so the
    right side is normalized to 0 here; anything else, bad values included,
    goes to the library as given (and a bad one comes back as its ValueError)."""
    left, right = window_size
    return int(left), 0 if causal else int(right)


def _last_dim_contiguous(x):
    """x, or a copy whose last dimension is contiguous (the library needs
    stride 1 there; any other strides pass through), as FlashAttention does."""
    try:
        return x if x.stride(-1) == 1 else x.contiguous()
    except IndexError:  # a 0-dim tensor: let the library name it
        return x


def _raise(status):
    raise _capi.error(status, _capi.last_error(), out_of_memory=torch.cuda.OutOfMemoryError)


def _all_on(device, *tensors):
    """device is a CUDA device (q's) and every tensor given is on it."""
    if device < 0:
        return False
    for t in tensors:
        if t is not None and t.get_device() != device:
            return False
    return True


def _wrong_device(entry, address, function, tensors):
    """Raised when the tensors are not all on one CUDA device. The library
    checks the arguments first (a plan launches nothing, and host pointers
    are fine there), so a CPU tensor of a bad shape gets the library's message."""
    try:
        entry.plan(address)
    except _capi.FlashError:
        pass  # no usable device: the arguments themselves passed
    where = ", ".join(f"{name} on {t.device}" for name, t in tensors.items() if t is not None)
    raise ValueError(f"{function}: expected every tensor on one CUDA device; got {where}")


def _run(entry, buf, address, device):
    """Runs the packed call on `device` (the library calls on the current
    one). While the current stream is being captured into a CUDA graph, the
    workspace comes from torch's allocator (the graph's memory pool), so that
    capture works on any stream and the graph owns its scratch memory;
    otherwise the library's cached buffer serves."""
    if _current_device() != device:
        with torch.cuda.device(device):
            return _run(entry, buf, address, device)
    workspace = None
    if _capturing():
        _, nbytes, _ = entry.plan(address)
        if nbytes:
            workspace = torch.empty(nbytes + _WORKSPACE_ALIGNMENT, dtype=torch.uint8, device=f"cuda:{device}")
            pointer = -(-workspace.data_ptr() // _WORKSPACE_ALIGNMENT) * _WORKSPACE_ALIGNMENT
            entry.set_workspace(buf, pointer, nbytes)
    status = entry.run(address)
    del workspace  # enqueued: torch may hand the block out again, after this call in stream order
    if status:
        _raise(status)


# torch's C entry points behind torch.cuda.current_stream(device).cuda_stream,
# torch.cuda.current_device() and torch.cuda.is_current_stream_capturing(),
# without the Python wrappers (a call here is on the hot path); the public
# functions where a torch build lacks them.
_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None) or (
    lambda device: torch.cuda.current_stream(device).cuda_stream
)
_current_device = getattr(torch._C, "_cuda_getDevice", None) or (lambda: torch.cuda.current_device())
_capturing = getattr(torch._C, "_cuda_isCurrentStreamCapturing", None) or (
    lambda: torch.cuda.is_current_stream_capturing()
)


def _stream(device):
    return _raw_stream(device) if device >= 0 else 0


# ------------------------------------------------------------------ the calls
# q, k, v and dout arrive with a contiguous last dimension (the public
# functions see to it); o, lse and the gradients are allocated here.


def _out_like(t):
    return torch.empty_like(t)  # t's strides when t is dense (a transposed view stays transposed), else contiguous


def _lse_for(q):
    return q.new_empty((q.shape[0], q.shape[2], q.shape[1]), dtype=torch.float32)


class _DenseForwardPack:
    """The dense forward's args struct, packed in parts into a buffer of its
    own per thread. One struct.pack_into of the whole struct (149 values)
    took ~3 us, most of the call's host time beside the library's; the
    constant parts (struct_size, the variable-length and paged fields, and
    the optional tensors while they stay absent) are packed once per buffer,
    so a call packs q, k, v, o and the dozen scalars (~55 values). Other
    entry points (variable-length, paged, plan_forward) pack the whole
    struct into Entry.buffer() as before."""

    def __init__(self, entry):
        cls = entry.args_cls
        self.entry = entry
        self.tensor = struct.Struct(_capi.struct_format(_capi.Tensor))
        self.qkvo = struct.Struct(_capi.struct_format(cls, "q", "lse"))
        self.scalars = struct.Struct(_capi.struct_format(cls, "stream", "alibi_slopes"))  # stream .. reserved3
        self.off_q, self.off_lse, self.off_stream = cls.q.offset, cls.lse.offset, cls.stream.offset
        self.off_alibi, self.off_sinks = cls.alibi_slopes.offset, cls.sinks.offset
        self._tls = threading.local()

    def buffer(self):
        """This thread's (buf, address, present): present[i] says whether
        the lse / alibi_slopes / sinks slot holds a tensor."""
        try:
            return self._tls.state
        except AttributeError:
            entry = self.entry
            buf = ctypes.create_string_buffer(entry.size)
            entry.pack_into(buf, 0, entry.size, *(_ABSENT * 5), 0, 0, 0, 0, 0.0, 0, 0, -1, -1, 0,
                            0.0, 0, *_ABSENT, *_ABSENT, *_NOT_VARLEN)
            self._tls.state = (buf, ctypes.addressof(buf), [False, False, False])
            return self._tls.state

    def optional(self, buf, present, i, offset, t, name):
        if t is not None:
            self.tensor.pack_into(buf, offset, *_fields(t, name))
            present[i] = True
        elif present[i]:
            self.tensor.pack_into(buf, offset, *_ABSENT)
            present[i] = False


_dense_pack = None


def _forward(q, k, v, softmax_scale, causal, window_left, window_right, softcap, alibi_slopes, sinks, with_lse):
    """(o, lse or None). window_left/window_right: the library's sliding
    window (-1 unbounded), already normalized for causal by the caller.
    softcap (float, 0 off), alibi_slopes and sinks (float32 tensors or None):
    the library's score modifiers, as given."""
    global _dense_pack
    device = q.get_device()
    o = _out_like(q)
    lse = _lse_for(q) if with_lse and q.dim() == 4 else None
    pack = _dense_pack
    if pack is None:
        pack = _dense_pack = _DenseForwardPack(_library().forward)
    buf, address, present = pack.buffer()
    pack.qkvo.pack_into(buf, pack.off_q, *_fields(q, "q"), *_fields(k, "k"), *_fields(v, "v"), *_fields(o, "o"))
    pack.optional(buf, present, 0, pack.off_lse, lse, "lse")
    pack.scalars.pack_into(buf, pack.off_stream, _stream(device), 0, 0, 0, *_scale(softmax_scale),
                           1 if causal else 0, window_left, window_right, 0, softcap, 0)
    pack.optional(buf, present, 1, pack.off_alibi, alibi_slopes, "alibi_slopes")
    pack.optional(buf, present, 2, pack.off_sinks, sinks, "sinks")
    if not _all_on(device, k, v, alibi_slopes, sinks):
        _wrong_device(pack.entry, address, "flash_attn_func",
                      {"q": q, "k": k, "v": v, "alibi_slopes": alibi_slopes, "learnable_sink": sinks})
    _run(pack.entry, buf, address, device)
    return o, lse


def _varlen_lse_for(q):
    return q.new_empty((q.shape[1], q.shape[0]), dtype=torch.float32)  # packed (heads_q, total_q)


def _forward_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, seqused_k, max_seqlen_q, max_seqlen_k, softmax_scale,
                    causal, window_left, window_right, softcap, alibi_slopes, sinks, with_lse, sync_check,
                    page_table=None):
    """(o, lse or None) of a variable-length batch: q, o packed (total_q,
    heads_q, head_dim), k, v (total_k, heads_kv, head_dim), lse (heads_q,
    total_q); the other arguments as _forward's. sync_check: wait for the
    device-side check of the metadata and raise ValueError naming a bad entry.
    page_table: k and v are pages (num_pages, page_size, heads_kv, head_dim),
    cu_seqlens_k None and seqused_k each sequence's keys."""
    device = q.get_device()
    o = _out_like(q)
    lse = _varlen_lse_for(q) if with_lse and q.dim() == 3 else None
    entry = _library().forward
    buf, address = entry.buffer()
    entry.pack_into(
        buf, 0, entry.size,
        *_fields(q, "q"), *_fields(k, "k"), *_fields(v, "v"), *_fields(o, "o"), *_optional(lse, "lse"),
        _stream(device), 0, 0, 0, *_scale(softmax_scale), 1 if causal else 0, window_left, window_right, 0,
        *_score_fields(softcap, alibi_slopes, sinks),
        *_varlen_fields(cu_seqlens_q, cu_seqlens_k, seqused_k, max_seqlen_q, max_seqlen_k, sync_check),
        *_optional(page_table, "page_table"),
    )  # fmt: skip
    if not _all_on(device, k, v, cu_seqlens_q, cu_seqlens_k, seqused_k, alibi_slopes, sinks, page_table):
        _wrong_device(entry, address, "flash_attn_varlen_func",
                      {"q": q, "k": k, "v": v, "cu_seqlens_q": cu_seqlens_q, "cu_seqlens_k": cu_seqlens_k,
                       "seqused_k": seqused_k, "alibi_slopes": alibi_slopes, "learnable_sink": sinks,
                       "page_table": page_table})
    if sync_check and _capturing():
        raise ValueError("flash_attn_varlen_func: sync_check=True waits for the stream, which a CUDA graph "
                         "capture forbids; capture with sync_check=False")
    _run(entry, buf, address, device)
    return o, lse


def _backward(dout, q, k, v, o, lse, softmax_scale, causal, window_left, window_right, softcap, alibi_slopes, sinks,
              deterministic):
    """(dq, dk, dv, dsinks): dsinks (float32, like sinks) only with sinks, else None."""
    device = q.get_device()
    dq, dk, dv = _out_like(q), _out_like(k), _out_like(v)
    dsinks = None if sinks is None else torch.empty(sinks.shape, dtype=torch.float32, device=sinks.device)
    entry = _library().backward
    buf, address = entry.buffer()
    entry.pack_into(
        buf, 0, entry.size,
        *_fields(q, "q"), *_fields(k, "k"), *_fields(v, "v"), *_fields(o, "o"), *_fields(lse, "lse"),
        *_fields(dout, "dout"), *_fields(dq, "dq"), *_fields(dk, "dk"), *_fields(dv, "dv"),
        _stream(device), 0, 0, 0, *_scale(softmax_scale), 1 if causal else 0, window_left, window_right,
        1 if deterministic else 0,
        *_score_fields(softcap, alibi_slopes, sinks), *_optional(dsinks, "dsinks"), *_BACKWARD_NOT_VARLEN,
    )  # fmt: skip
    if not _all_on(device, k, v, o, lse, dout, alibi_slopes, sinks):
        _wrong_device(entry, address, "flash_attn_func backward",
                      {"q": q, "k": k, "v": v, "o": o, "lse": lse, "dout": dout, "alibi_slopes": alibi_slopes,
                       "learnable_sink": sinks})
    _run(entry, buf, address, device)
    return dq, dk, dv, dsinks


def _backward_varlen(dout, q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k, seqused_k, max_seqlen_q, max_seqlen_k,
                     softmax_scale, causal, window_left, window_right, softcap, alibi_slopes, sinks, deterministic,
                     sync_check):
    """(dq, dk, dv, dsinks) of a variable-length batch: the packed tensors of
    _forward_varlen and its packed lse (heads_q, total_q); dk and dv are 0 on
    the key rows past seqused_k; dsinks sums over the sequences. The other
    arguments as _backward's and _forward_varlen's."""
    device = q.get_device()
    dq, dk, dv = _out_like(q), _out_like(k), _out_like(v)
    dsinks = None if sinks is None else torch.empty(sinks.shape, dtype=torch.float32, device=sinks.device)
    entry = _library().backward
    buf, address = entry.buffer()
    entry.pack_into(
        buf, 0, entry.size,
        *_fields(q, "q"), *_fields(k, "k"), *_fields(v, "v"), *_fields(o, "o"), *_fields(lse, "lse"),
        *_fields(dout, "dout"), *_fields(dq, "dq"), *_fields(dk, "dk"), *_fields(dv, "dv"),
        _stream(device), 0, 0, 0, *_scale(softmax_scale), 1 if causal else 0, window_left, window_right,
        1 if deterministic else 0,
        *_score_fields(softcap, alibi_slopes, sinks), *_optional(dsinks, "dsinks"),
        *_varlen_fields(cu_seqlens_q, cu_seqlens_k, seqused_k, max_seqlen_q, max_seqlen_k, sync_check),
    )  # fmt: skip
    if not _all_on(device, k, v, o, lse, dout, cu_seqlens_q, cu_seqlens_k, seqused_k, alibi_slopes, sinks):
        _wrong_device(entry, address, "flash_attn_varlen_func backward",
                      {"q": q, "k": k, "v": v, "o": o, "lse": lse, "dout": dout, "cu_seqlens_q": cu_seqlens_q,
                       "cu_seqlens_k": cu_seqlens_k, "seqused_k": seqused_k, "alibi_slopes": alibi_slopes,
                       "learnable_sink": sinks})
    if sync_check and _capturing():
        raise ValueError("flash_attn_varlen_func: sync_check=True waits for the stream, which a CUDA graph "
                         "capture forbids; capture with sync_check=False")
    _run(entry, buf, address, device)
    return dq, dk, dv, dsinks


def _decode(q, k_cache, v_cache, k, v, cache_seqlens, page_table, softmax_scale, causal, window_left, window_right,
            softcap, alibi_slopes, sinks, num_splits, with_lse, sync_check):
    """(o, lse or None); appends k and v to the caches first."""
    device = q.get_device()
    o = _out_like(q)
    lse = _lse_for(q) if with_lse and q.dim() == 4 else None
    entry = _library().decode
    buf, address = entry.buffer()
    entry.pack_into(
        buf, 0, entry.size,
        *_fields(q, "q"), *_fields(k_cache, "k_cache"), *_fields(v_cache, "v_cache"),
        *_optional(page_table, "page_table"), *_fields(cache_seqlens, "cache_seqlens"),
        *_optional(k, "k"), *_optional(v, "v"), *_fields(o, "o"), *_optional(lse, "lse"), *_ABSENT,
        _stream(device), 0, 0, 0, *_scale(softmax_scale), 1 if causal else 0, window_left, window_right,
        int(num_splits), 1 if sync_check else 0, 0,
        *_score_fields(softcap, alibi_slopes, sinks),
    )  # fmt: skip
    if not _all_on(device, k_cache, v_cache, k, v, cache_seqlens, page_table, alibi_slopes, sinks):
        _wrong_device(entry, address, "flash_attn_with_kvcache",
                      {"q": q, "k_cache": k_cache, "v_cache": v_cache, "k": k, "v": v, "cache_seqlens": cache_seqlens,
                       "page_table": page_table, "alibi_slopes": alibi_slopes, "learnable_sink": sinks})
    if sync_check and _capturing():
        raise ValueError("flash_attn_with_kvcache: sync_check=True waits for the stream, which a CUDA graph "
                         "capture forbids; capture with sync_check=False")
    _run(entry, buf, address, device)
    return o, lse


def plan_forward(q, k, v, softmax_scale=None, causal=False, window_size=(-1, -1), softcap=0.0, alibi_slopes=None,
                 learnable_sink=None):
    """What flash_attn_func(q, k, v, ...) would run, without running it:
    {"kernel": variant name, "workspace_bytes": n}. Raises as the call would."""
    q, k, v = _last_dim_contiguous(q), _last_dim_contiguous(k), _last_dim_contiguous(v)
    window_left, window_right = _window(window_size, causal)
    sinks = _sinks(learnable_sink)
    entry = _library().forward
    buf, address = entry.buffer()
    o = _out_like(q)
    device = q.get_device()
    entry.pack_into(
        buf, 0, entry.size,
        *_fields(q, "q"), *_fields(k, "k"), *_fields(v, "v"), *_fields(o, "o"), *_ABSENT,
        _stream(device), 0, 0, 0, *_scale(softmax_scale), 1 if causal else 0, window_left, window_right, 0,
        *_score_fields(_softcap(softcap), alibi_slopes, sinks), *_NOT_VARLEN,
    )  # fmt: skip
    if device >= 0 and _current_device() != device:
        with torch.cuda.device(device):
            kernel, nbytes, _ = entry.plan(address)
    else:
        kernel, nbytes, _ = entry.plan(address)
    return {"kernel": kernel, "workspace_bytes": nbytes}


# ------------------------------------------------------------ eager autograd


class _FlashAttnFunction(torch.autograd.Function):
    """Gradients for q, k, v and sinks (dsinks); none for alibi_slopes."""

    @staticmethod
    def forward(ctx, q, k, v, softmax_scale, causal, window_left, window_right, softcap, alibi_slopes, sinks,
                deterministic):
        o, lse = _forward(q, k, v, softmax_scale, causal, window_left, window_right, softcap, alibi_slopes, sinks, True)
        ctx.save_for_backward(q, k, v, o, lse, alibi_slopes, sinks)
        ctx.softmax_scale, ctx.causal, ctx.deterministic = softmax_scale, causal, deterministic
        ctx.window = (window_left, window_right)
        ctx.softcap = softcap
        ctx.mark_non_differentiable(lse)
        return o, lse

    @staticmethod
    def backward(ctx, dout, _dlse):
        q, k, v, o, lse, alibi_slopes, sinks = ctx.saved_tensors
        dq, dk, dv, dsinks = _backward(_last_dim_contiguous(dout), q, k, v, o, lse, ctx.softmax_scale, ctx.causal,
                                       *ctx.window, ctx.softcap, alibi_slopes, sinks, ctx.deterministic)
        return dq, dk, dv, None, None, None, None, None, None, dsinks, None


class _FlashAttnVarlenFunction(torch.autograd.Function):
    """flash_attn_varlen_func's gradients: q, k, v and sinks; the metadata,
    the ints and alibi_slopes get none. What is saved is the packed call: its
    packed out and lse (heads_q, total_q)."""

    @staticmethod
    def forward(ctx, q, k, v, cu_seqlens_q, cu_seqlens_k, seqused_k, max_seqlen_q, max_seqlen_k, softmax_scale, causal,
                window_left, window_right, softcap, alibi_slopes, sinks, deterministic, sync_check):
        o, lse = _forward_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, seqused_k, max_seqlen_q, max_seqlen_k,
                                 softmax_scale, causal, window_left, window_right, softcap, alibi_slopes, sinks, True,
                                 sync_check)
        ctx.save_for_backward(q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k, seqused_k, alibi_slopes, sinks)
        ctx.args = (max_seqlen_q, max_seqlen_k, softmax_scale, causal, window_left, window_right, softcap)
        ctx.deterministic, ctx.sync_check = deterministic, sync_check
        ctx.mark_non_differentiable(lse)
        return o, lse

    @staticmethod
    def backward(ctx, dout, _dlse):
        q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k, seqused_k, alibi_slopes, sinks = ctx.saved_tensors
        max_seqlen_q, max_seqlen_k, softmax_scale, causal, window_left, window_right, softcap = ctx.args
        dq, dk, dv, dsinks = _backward_varlen(_last_dim_contiguous(dout), q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k,
                                              seqused_k, max_seqlen_q, max_seqlen_k, softmax_scale, causal,
                                              window_left, window_right, softcap, alibi_slopes, sinks,
                                              ctx.deterministic, ctx.sync_check)
        return (dq, dk, dv) + (None,) * 11 + (dsinks, None, None)


# ---------------------------------------------------------------- custom ops

_HAS_CUSTOM_OP = hasattr(torch.library, "custom_op")  # torch >= 2.4

if _HAS_CUSTOM_OP:

    @torch.library.custom_op("flash_ladder::fwd", mutates_args=())
    def _fwd_op(
        q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, softmax_scale: Optional[float], causal: bool,
        window_left: int, window_right: int, softcap: float, alibi_slopes: Optional[torch.Tensor],
        sinks: Optional[torch.Tensor], deterministic: bool,
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        return _forward(q, k, v, softmax_scale, causal, window_left, window_right, softcap, alibi_slopes, sinks, True)

    @_fwd_op.register_fake
    def _fwd_fake(q, k, v, softmax_scale, causal, window_left, window_right, softcap, alibi_slopes, sinks,
                  deterministic):
        return _out_like(q), _lse_for(q)

    def _no_dsinks(q):
        return q.new_empty((0,), dtype=torch.float32)  # the op's dsinks without sinks: an op returns no None

    @torch.library.custom_op("flash_ladder::bwd", mutates_args=())
    def _bwd_op(
        dout: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, o: torch.Tensor, lse: torch.Tensor,
        softmax_scale: Optional[float], causal: bool, window_left: int, window_right: int, softcap: float,
        alibi_slopes: Optional[torch.Tensor], sinks: Optional[torch.Tensor], deterministic: bool,
    ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        dq, dk, dv, dsinks = _backward(_last_dim_contiguous(dout), q, k, v, o, lse, softmax_scale, causal, window_left,
                                       window_right, softcap, alibi_slopes, sinks, deterministic)
        return dq, dk, dv, dsinks if dsinks is not None else _no_dsinks(q)

    @_bwd_op.register_fake
    def _bwd_fake(dout, q, k, v, o, lse, softmax_scale, causal, window_left, window_right, softcap, alibi_slopes,
                  sinks, deterministic):
        dsinks = sinks.new_empty(sinks.shape, dtype=torch.float32) if sinks is not None else _no_dsinks(q)
        return _out_like(q), _out_like(k), _out_like(v), dsinks

    def _fwd_setup_context(ctx, inputs, output):
        q, k, v, softmax_scale, causal, window_left, window_right, softcap, alibi_slopes, sinks, deterministic = inputs
        o, lse = output
        ctx.save_for_backward(q, k, v, o, lse, alibi_slopes, sinks)
        ctx.softmax_scale, ctx.causal, ctx.deterministic = softmax_scale, causal, deterministic
        ctx.window_left, ctx.window_right = window_left, window_right
        ctx.softcap = softcap
        ctx.mark_non_differentiable(lse)

    def _fwd_backward(ctx, dout, _dlse):
        q, k, v, o, lse, alibi_slopes, sinks = ctx.saved_tensors
        dq, dk, dv, dsinks = _bwd_op(dout, q, k, v, o, lse, ctx.softmax_scale, ctx.causal, ctx.window_left,
                                     ctx.window_right, ctx.softcap, alibi_slopes, sinks, ctx.deterministic)
        return dq, dk, dv, None, None, None, None, None, None, dsinks if sinks is not None else None, None

    _fwd_op.register_autograd(_fwd_backward, setup_context=_fwd_setup_context)

    # deterministic is the backward's (the forward does not read it), as fwd's.
    @torch.library.custom_op("flash_ladder::fwd_varlen", mutates_args=())
    def _fwd_varlen_op(
        q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, cu_seqlens_q: torch.Tensor,
        cu_seqlens_k: Optional[torch.Tensor], seqused_k: Optional[torch.Tensor], max_seqlen_q: int,
        max_seqlen_k: int, softmax_scale: Optional[float], causal: bool, window_left: int, window_right: int,
        softcap: float, alibi_slopes: Optional[torch.Tensor], sinks: Optional[torch.Tensor], sync_check: bool,
        page_table: Optional[torch.Tensor], deterministic: bool,
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        return _forward_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, seqused_k, max_seqlen_q, max_seqlen_k,
                               softmax_scale, causal, window_left, window_right, softcap, alibi_slopes, sinks, True,
                               sync_check, page_table)

    @_fwd_varlen_op.register_fake
    def _fwd_varlen_fake(q, k, v, cu_seqlens_q, cu_seqlens_k, seqused_k, max_seqlen_q, max_seqlen_k, softmax_scale,
                         causal, window_left, window_right, softcap, alibi_slopes, sinks, sync_check, page_table,
                         deterministic):
        return _out_like(q), _varlen_lse_for(q)

    @torch.library.custom_op("flash_ladder::bwd_varlen", mutates_args=())
    def _bwd_varlen_op(
        dout: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, o: torch.Tensor, lse: torch.Tensor,
        cu_seqlens_q: torch.Tensor, cu_seqlens_k: Optional[torch.Tensor], seqused_k: Optional[torch.Tensor],
        max_seqlen_q: int, max_seqlen_k: int, softmax_scale: Optional[float], causal: bool, window_left: int,
        window_right: int, softcap: float, alibi_slopes: Optional[torch.Tensor], sinks: Optional[torch.Tensor],
        deterministic: bool, sync_check: bool,
    ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        dq, dk, dv, dsinks = _backward_varlen(_last_dim_contiguous(dout), q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k,
                                              seqused_k, max_seqlen_q, max_seqlen_k, softmax_scale, causal,
                                              window_left, window_right, softcap, alibi_slopes, sinks, deterministic,
                                              sync_check)
        return dq, dk, dv, dsinks if dsinks is not None else _no_dsinks(q)

    @_bwd_varlen_op.register_fake
    def _bwd_varlen_fake(dout, q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k, seqused_k, max_seqlen_q, max_seqlen_k,
                         softmax_scale, causal, window_left, window_right, softcap, alibi_slopes, sinks, deterministic,
                         sync_check):
        dsinks = sinks.new_empty(sinks.shape, dtype=torch.float32) if sinks is not None else _no_dsinks(q)
        return _out_like(q), _out_like(k), _out_like(v), dsinks

    def _fwd_varlen_setup_context(ctx, inputs, output):
        (q, k, v, cu_seqlens_q, cu_seqlens_k, seqused_k, max_seqlen_q, max_seqlen_k, softmax_scale, causal, window_left,
         window_right, softcap, alibi_slopes, sinks, sync_check, page_table, deterministic) = inputs
        o, lse = output
        ctx.save_for_backward(q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k, seqused_k, alibi_slopes, sinks)
        ctx.args = (max_seqlen_q, max_seqlen_k, softmax_scale, causal, window_left, window_right, softcap)
        ctx.deterministic, ctx.sync_check, ctx.paged = deterministic, sync_check, page_table is not None
        ctx.mark_non_differentiable(lse)

    def _fwd_varlen_backward(ctx, dout, _dlse):
        if ctx.paged:
            raise NotImplementedError(_NO_PAGED_BACKWARD)
        q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k, seqused_k, alibi_slopes, sinks = ctx.saved_tensors
        dq, dk, dv, dsinks = _bwd_varlen_op(dout, q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k, seqused_k, *ctx.args,
                                            alibi_slopes, sinks, ctx.deterministic, ctx.sync_check)
        return (dq, dk, dv) + (None,) * 11 + (dsinks if sinks is not None else None, None, None, None)

    _fwd_varlen_op.register_autograd(_fwd_varlen_backward, setup_context=_fwd_varlen_setup_context)

    @torch.library.custom_op("flash_ladder::fwd_kvcache", mutates_args=("k_cache", "v_cache"))
    def _fwd_kvcache_op(
        q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, k: Optional[torch.Tensor],
        v: Optional[torch.Tensor], cache_seqlens: torch.Tensor, page_table: Optional[torch.Tensor],
        softmax_scale: Optional[float], causal: bool, window_left: int, window_right: int, softcap: float,
        alibi_slopes: Optional[torch.Tensor], sinks: Optional[torch.Tensor], num_splits: int, sync_check: bool,
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        return _decode(q, k_cache, v_cache, k, v, cache_seqlens, page_table, softmax_scale, causal, window_left,
                       window_right, softcap, alibi_slopes, sinks, num_splits, True, sync_check)

    @_fwd_kvcache_op.register_fake
    def _fwd_kvcache_fake(q, k_cache, v_cache, k, v, cache_seqlens, page_table, softmax_scale, causal, window_left,
                          window_right, softcap, alibi_slopes, sinks, num_splits, sync_check):
        return _out_like(q), _lse_for(q)


# ------------------------------------------------------------- the public API

def _is_compiling_function():
    function = getattr(getattr(torch, "compiler", None), "is_compiling", None)  # torch >= 2.3
    if function is None:
        from torch import _dynamo

        function = _dynamo.is_compiling
    return function


_is_compiling = _is_compiling_function()
_dispatch_modes = getattr(torch._C, "_len_torch_dispatch_stack", lambda: 0)


def _eager(a, b, c):
    """True for plain tensors outside any tracing: the direct path. Anything
    else (torch.compile, export, fake tensors, subclasses, dispatch modes)
    goes through the custom ops, which tracers understand."""
    return (
        type(a) is torch.Tensor
        and type(b) is torch.Tensor
        and type(c) is torch.Tensor
        and not _is_compiling()
        and not _dispatch_modes()
    ) or not _HAS_CUSTOM_OP


def flash_attn_func(q, k, v, softmax_scale=None, causal=False, window_size=(-1, -1), deterministic=False,
                    return_lse=False, softcap=0.0, alibi_slopes=None, learnable_sink=None):
    """Exact attention, FlashAttention's flash_attn_func.

    q: (batch, seqlen_q, heads_q, head_dim); k, v: (batch, seqlen_k, heads_kv,
    head_dim), heads_q a multiple of heads_kv (GQA/MQA); float16 or bfloat16
    (float32 too, on the slower variants). Any strides with a contiguous last
    dimension are used as they are (a transpose of a (batch, heads, seqlen,
    head_dim) tensor costs no copy); a tensor whose last dimension is strided
    is copied first, as FlashAttention does.

    softmax_scale: default 1 / sqrt(head_dim). causal: the mask aligned to the
    bottom-right corner (query i sees key j iff j <= i + seqlen_k - seqlen_q).
    window_size: (left, right), FlashAttention's sliding window: query i sees
    key j iff i + seqlen_k - seqlen_q - left <= j <= i + seqlen_k - seqlen_q
    + right, -1 leaving that side unbounded; (-1, -1) is no window. With
    causal=True the right side is 0 whatever is given (as in FlashAttention:
    window_size=(w, w) with causal=True means (w, 0)). A value below -1 raises
    ValueError. Rows that see no key get out = 0 and LSE = -inf (with
    learnable_sink: the sink).
    deterministic: the backward gives bit-identical gradients from run to run.

    Score modifiers (FlashAttention's semantics; the score of query i and key
    j is s = softmax_scale * q_i . k_j):
    softcap: 0.0 (off) or > 0: s = softcap * tanh(s / softcap) (Gemma 2).
    alibi_slopes: float32 (heads_q,) or (batch, heads_q) (FlashAttention-2's):
    s -= slope * |i + seqlen_k - seqlen_q - j| (BLOOM, MPT). No gradient.
    learnable_sink: (heads_q,) (FlashAttention-4's name; gpt-oss's sinks),
    float32, or float16/bfloat16 cast to float32: a logit per head in the
    softmax's denominator that carries no value, exp(sink) added to the sum
    of exp(s). It gets a gradient when it requires one.
    A bad value or shape raises ValueError naming softcap, alibi_slopes or
    sinks (the library's name for learnable_sink).

    Returns out (batch, seqlen_q, heads_q, head_dim), and with return_lse
    also the log-sum-exp (batch, heads_q, seqlen_q), float32, natural log
    (including the sink). Differentiable in q, k, v and learnable_sink (not
    through the LSE).
    """
    q, k, v = _last_dim_contiguous(q), _last_dim_contiguous(k), _last_dim_contiguous(v)
    left, right = window_size
    if causal:
        right = 0
    softcap, sinks = _softcap(softcap), _sinks(learnable_sink)
    if _eager(q, k, v):
        if torch.is_grad_enabled() and (q.requires_grad or k.requires_grad or v.requires_grad
                                        or (sinks is not None and sinks.requires_grad)):
            o, lse = _FlashAttnFunction.apply(q, k, v, softmax_scale, causal, left, right, softcap, alibi_slopes, sinks,
                                              deterministic)
        else:
            o, lse = _forward(q, k, v, softmax_scale, causal, left, right, softcap, alibi_slopes, sinks, return_lse)
    else:
        o, lse = _fwd_op(q, k, v, softmax_scale, causal, int(left), int(right), softcap, alibi_slopes, sinks,
                         deterministic)
    return (o, lse) if return_lse else o


def flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, softmax_scale=None,
                           causal=False, window_size=(-1, -1), softcap=0.0, alibi_slopes=None, learnable_sink=None,
                           return_lse=False, seqused_k=None, sync_check=False, page_table=None, deterministic=False):
    """Exact attention over a batch of sequences of different lengths packed
    without padding, FlashAttention's flash_attn_varlen_func.

    q: (total_q, heads_q, head_dim); k, v: (total_k, heads_kv, head_dim).
    cu_seqlens_q, cu_seqlens_k: int32 (batch + 1,) on q's device, starting at
    0 and non-decreasing: sequence b's queries are rows cu_seqlens_q[b] to
    cu_seqlens_q[b + 1] - 1 of q, its keys those of cu_seqlens_k of k and v.
    seqused_k: optional int32 (batch,): sequence b uses only its first
    seqused_k[b] keys. max_seqlen_q, max_seqlen_k: ints at least every
    sequence's length (FlashAttention's; they size the grid). The mask
    (causal bottom-right, window_size), ALiBi's distance, softcap and
    learnable_sink are those of flash_attn_func, applied to each sequence.
    sync_check: also wait for the device-side check of the metadata and
    raise ValueError naming a bad entry; by default the call is
    asynchronous (as FlashAttention's) and bad metadata makes it write
    nothing. A bad argument raises ValueError naming it.

    page_table: optional int32 (batch, max_pages) on q's device, a paged KV
    cache (FlashAttention-4's page_table; prefill of a chunk against the
    cache): k and v are then its pages (num_pages, page_size, heads_kv,
    head_dim), page_size a power of two from 16, sequence b's key j lives in
    page page_table[b, j // page_size], row j % page_size; cu_seqlens_k must
    be None and seqused_k gives each sequence's keys (required); causal is
    bottom-right per sequence, so a chunk attends its cached prefix and
    itself. max_seqlen_k bounds seqused_k; None takes the table's capacity,
    max_pages * page_size.

    Returns out (total_q, heads_q, head_dim), and with return_lse also the
    log-sum-exp (heads_q, total_q), float32 (FlashAttention's packed layout).
    Rows of out past cu_seqlens_q[-1] are not written (as FlashAttention's).

    Differentiable in q, k, v and learnable_sink (not through the LSE), as
    flash_attn_func, through the library's variable-length backward: dk and
    dv are summed over each GQA group and are 0 on the key rows past
    seqused_k[b]; learnable_sink's gradient sums over the sequences; rows
    past cu_seqlens_q[-1] / cu_seqlens_k[-1] of the gradients are not
    written, as FlashAttention's (so in training keep total_q =
    cu_seqlens_q[-1] and total_k = cu_seqlens_k[-1]).
    deterministic: bit-identical gradients from run to run. The backward
    checks the metadata as the forward does (sync_check). A call with
    page_table has no backward: with grad enabled, an input that requires
    grad raises NotImplementedError.
    """
    needs_grad = torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in (q, k, v, learnable_sink))
    if needs_grad and page_table is not None:
        raise NotImplementedError(_NO_PAGED_BACKWARD)
    q, k, v = _last_dim_contiguous(q), _last_dim_contiguous(k), _last_dim_contiguous(v)
    left, right = window_size
    if causal:
        right = 0
    softcap, sinks = _softcap(softcap), _sinks(learnable_sink)
    if max_seqlen_k is None and page_table is not None and page_table.dim() == 2 and k.dim() == 4:
        max_seqlen_k = page_table.shape[1] * k.shape[1]  # the table's capacity
    if _eager(q, k, v):
        if needs_grad:
            o, lse = _FlashAttnVarlenFunction.apply(q, k, v, cu_seqlens_q, cu_seqlens_k, seqused_k, max_seqlen_q,
                                                    max_seqlen_k, softmax_scale, causal, left, right, softcap,
                                                    alibi_slopes, sinks, deterministic, sync_check)
        else:
            o, lse = _forward_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, seqused_k, max_seqlen_q, max_seqlen_k,
                                     softmax_scale, causal, left, right, softcap, alibi_slopes, sinks, return_lse,
                                     sync_check, page_table)
    else:
        o, lse = _fwd_varlen_op(q, k, v, cu_seqlens_q, cu_seqlens_k, seqused_k, int(max_seqlen_q), int(max_seqlen_k),
                                softmax_scale, causal, int(left), int(right), softcap, alibi_slopes, sinks,
                                bool(sync_check), page_table, bool(deterministic))
    return (o, lse) if return_lse else o


def _seqlens_tensor(cache_seqlens, q, k_cache, page_table, k):
    if isinstance(cache_seqlens, torch.Tensor):
        return cache_seqlens
    if cache_seqlens is None:
        if k is not None:
            raise ValueError("flash_attn_with_kvcache: k and v are appended at cache_seqlens, so cache_seqlens "
                             "must be given")
        # The whole cache: its capacity per sequence.
        cache_seqlens = page_table.shape[1] * k_cache.shape[1] if page_table is not None else k_cache.shape[1]
    return torch.full((q.shape[0],), int(cache_seqlens), dtype=torch.int32, device=q.device)


def flash_attn_with_kvcache(q, k_cache, v_cache, k=None, v=None, cache_seqlens=None, page_table=None,
                            softmax_scale=None, causal=False, window_size=(-1, -1), num_splits=0,
                            return_softmax_lse=False, sync_check=False, softcap=0.0, alibi_slopes=None,
                            learnable_sink=None):
    """Attention of a few new queries to a KV cache (decoding), FlashAttention's
    flash_attn_with_kvcache.

    q: (batch, seqlen_q, heads_q, head_dim), seqlen_q from 1 to a few.
    k_cache, v_cache: (batch, capacity, heads_kv, head_dim), or with page_table
    pages (num_pages, page_size, heads_kv, head_dim), page_size a power of two;
    page_table (FlashAttention's block_table): int32 (batch, max_pages_per_seq).
    k, v: optional new keys and values (batch, seqlen_new, heads_kv, head_dim),
    written into the caches in place at cache_seqlens before the attention,
    which then sees cache_seqlens + seqlen_new keys per sequence.
    cache_seqlens: an int, or an int32 tensor (batch,) on the device: the keys
    already in each sequence's cache (not changed by the call). None: the
    whole cache (without k and v only).
    causal: bottom-right aligned over each sequence's keys. window_size:
    (left, right) as in flash_attn_func, over each sequence's keys
    (cache_seqlens + seqlen_new of them); with causal=True right is 0.
    num_splits: 0 lets
    a heuristic split the keys (flash-decoding), 1 to 256 forces that many.
    sync_check: also wait for the device-side check of cache_seqlens and
    page_table and raise ValueError naming a bad entry; by default the call
    is asynchronous (as FlashAttention's) and bad metadata is found but only
    makes the call write nothing.
    softcap, alibi_slopes, learnable_sink: as in flash_attn_func; ALiBi's
    distance puts query i of the seqlen_q new ones at key position
    i + L - seqlen_q of a sequence of L = cache_seqlens + seqlen_new keys.
    Returns out like q, and with return_softmax_lse also the LSE (batch,
    heads_q, seqlen_q), float32. Not differentiable.
    """
    q = _last_dim_contiguous(q)
    if k is not None:
        k = _last_dim_contiguous(k)
    if v is not None:
        v = _last_dim_contiguous(v)
    cache_seqlens = _seqlens_tensor(cache_seqlens, q, k_cache, page_table, k)
    left, right = window_size
    if causal:
        right = 0
    softcap, sinks = _softcap(softcap), _sinks(learnable_sink)
    if sinks is not None:
        sinks = sinks.detach()  # decoding is not differentiable (a model's sinks parameter may require grad)
    if _eager(q, k_cache, v_cache):
        o, lse = _decode(q, k_cache, v_cache, k, v, cache_seqlens, page_table, softmax_scale, causal, left, right,
                         softcap, alibi_slopes, sinks, num_splits, return_softmax_lse, sync_check)
    else:
        o, lse = _fwd_kvcache_op(q, k_cache, v_cache, k, v, cache_seqlens, page_table, softmax_scale, causal,
                                 int(left), int(right), softcap, alibi_slopes, sinks, num_splits, sync_check)
    return (o, lse) if return_softmax_lse else o

