"""The C ABI of libflash_c.so (include/flash/flash_c.h) through ctypes.

This module knows nothing of torch. It finds and loads the shared library,
mirrors the header's structs, and packs one call's arguments into a per-thread
buffer with one ``struct.pack_into`` (cheaper than setting ctypes fields one
by one), then calls the C function with the buffer's address. (The dense
forward, the call whose host time matters most, packs only the fields that
change into a buffer of its own: interface._DenseForwardPack.) A status other
than FLASH_OK becomes a Python exception carrying the library's message.
"""

import ctypes
import os
import struct
import threading
from pathlib import Path

# flash_c.h: FLASH_C_ABI_VERSION, FLASH_C_MAX_RANK, FLASH_C_KERNEL_NAME_SIZE.
ABI_VERSION = 6
MAX_RANK = 4
KERNEL_NAME_SIZE = 64

# flash_dtype
F32, F16, BF16, I32 = 0, 1, 2, 3

# flash_status
OK = 0
ERROR_INVALID_ARGUMENT = 1
ERROR_NO_DEVICE = 2
ERROR_CUDA = 3
ERROR_OUT_OF_MEMORY = 4
ERROR_INTERNAL = 5

LIBRARY_NAME = "libflash_c.so"
# A library file, or a CMake build folder holding lib/libflash_c.so: takes
# precedence over the copy inside the package (development against a build).
LIBRARY_ENV = "FLASH_LADDER_LIBRARY"


class Tensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("dtype", ctypes.c_int32),
        ("rank", ctypes.c_int32),
        ("shape", ctypes.c_int64 * MAX_RANK),
        ("strides", ctypes.c_int64 * MAX_RANK),
    ]


_TAIL = [
    ("stream", ctypes.c_void_p),
    ("kernel", ctypes.c_char_p),
    ("workspace", ctypes.c_void_p),
    ("workspace_bytes", ctypes.c_uint64),
    ("softmax_scale", ctypes.c_float),
    ("has_softmax_scale", ctypes.c_int32),
    ("causal", ctypes.c_int32),
    ("window_left", ctypes.c_int32),
    ("window_right", ctypes.c_int32),
]

# Appended by ABI version 3 (the score modifiers), after each struct's version-2 fields.
_SCORES = [
    ("softcap", ctypes.c_float),
    ("reserved3", ctypes.c_int32),
    ("alibi_slopes", Tensor),
    ("sinks", Tensor),
]


def _varlen(reserved):
    """A variable-length batch's fields: appended by ABI version 4 to the
    forward's struct and by version 6 to the backward's, the same fields but
    for the name of the padding (reserved4, reserved6)."""
    return [(n, Tensor) for n in ("cu_seqlens_q", "cu_seqlens_k", "seqused_k", "status")] + [
        ("max_seqlen_q", ctypes.c_int32),
        ("max_seqlen_k", ctypes.c_int32),
        ("sync_check", ctypes.c_int32),
        (reserved, ctypes.c_int32),
    ]


# Appended by ABI version 5 to the forward's struct: a paged KV cache.
_PAGED = [("page_table", Tensor)]


class ForwardArgs(ctypes.Structure):
    _fields_ = (
        [("struct_size", ctypes.c_uint64)]
        + [(n, Tensor) for n in ("q", "k", "v", "o", "lse")]
        + _TAIL
        + [("reserved", ctypes.c_int32)]
        + _SCORES
        + _varlen("reserved4")
        + _PAGED
    )


class BackwardArgs(ctypes.Structure):
    _fields_ = (
        [("struct_size", ctypes.c_uint64)]
        + [(n, Tensor) for n in ("q", "k", "v", "o", "lse", "dout", "dq", "dk", "dv")]
        + _TAIL
        + [("deterministic", ctypes.c_int32)]
        + _SCORES
        + [("dsinks", Tensor)]
        + _varlen("reserved6")
    )


class DecodeArgs(ctypes.Structure):
    _fields_ = (
        [("struct_size", ctypes.c_uint64)]
        + [
            (n, Tensor)
            for n in ("q", "k_cache", "v_cache", "page_table", "cache_seqlens", "k_new", "v_new", "o", "lse", "status")
        ]
        + _TAIL
        + [("num_splits", ctypes.c_int32), ("sync_check", ctypes.c_int32), ("reserved", ctypes.c_int32)]
        + _SCORES
    )


class Plan(ctypes.Structure):
    _fields_ = [
        ("kernel", ctypes.c_char * KERNEL_NAME_SIZE),
        ("workspace_bytes", ctypes.c_uint64),
        ("num_splits", ctypes.c_int32),
        ("reserved", ctypes.c_int32),
    ]


# Pointers as 8-byte integers ("P" exists only in native-alignment mode; the
# padding here is explicit instead). The library is built for 64-bit Linux.
_CODES = {
    ctypes.c_void_p: "Q",
    ctypes.c_char_p: "Q",
    ctypes.c_int32: "i",
    ctypes.c_int64: "q",
    ctypes.c_uint64: "Q",
    ctypes.c_float: "f",
}


def struct_format(cls, first=None, stop=None):
    """The struct module format of a ctypes Structure, nested structs and
    arrays flattened, padding explicit: the same bytes as the C layout. With
    first / stop (top-level field names), only the fields from first up to
    stop (not included; the struct's end without it), the padding before
    stop included: the bytes at offset getattr(cls, first).offset."""
    parts = []
    names = [name for name, _ in cls._fields_]
    lo = 0 if first is None else names.index(first)
    hi = len(names) if stop is None else names.index(stop)
    start = getattr(cls, names[lo]).offset
    limit = ctypes.sizeof(cls) if stop is None else getattr(cls, stop).offset

    def walk(c, base, fields, begin, until):
        # c's fields at byte base + their offset; the bytes [begin, until) of the result
        end = begin
        for name, ftype in fields:
            offset = base + getattr(c, name).offset
            if offset > end:
                parts.append(f"{offset - end}x")
            if issubclass(ftype, ctypes.Structure):
                walk(ftype, offset, ftype._fields_, offset, offset + ctypes.sizeof(ftype))
            elif issubclass(ftype, ctypes.Array):
                parts.append(f"{ftype._length_}{_CODES[ftype._type_]}")
            else:
                parts.append(_CODES[ftype])
            end = offset + ctypes.sizeof(ftype)
        if until > end:
            parts.append(f"{until - end}x")

    walk(cls, -start, cls._fields_[lo:hi], 0, limit - start)
    fmt = "=" + "".join(parts)
    assert struct.calcsize(fmt) == limit - start, (cls.__name__, first, stop, fmt)
    return fmt


class FlashError(RuntimeError):
    """A failure the library reported, other than an invalid argument
    (those raise ValueError): no usable device, a CUDA error, an internal error."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


def error(status, message, out_of_memory=MemoryError):
    """The exception for a status other than OK: ValueError for an invalid
    argument, out_of_memory(message) for a failed allocation, else FlashError."""
    if status == ERROR_INVALID_ARGUMENT:
        return ValueError(message)
    if status == ERROR_OUT_OF_MEMORY:
        return out_of_memory(message)
    return FlashError(message, status)


def find_library():
    """The path of libflash_c.so: $FLASH_LADDER_LIBRARY (a file, or a CMake
    build folder), else the copy installed inside this package."""
    env = os.environ.get(LIBRARY_ENV)
    if env:
        path = Path(env)
        if path.is_dir():
            for candidate in (path / "lib" / LIBRARY_NAME, path / LIBRARY_NAME):
                if candidate.is_file():
                    return candidate
            raise OSError(f"{LIBRARY_ENV}={env}: no {LIBRARY_NAME} in it or in its lib/ (build the flash_c target)")
        if not path.is_file():
            raise OSError(f"{LIBRARY_ENV}={env}: no such file")
        return path
    bundled = Path(__file__).resolve().parent / "lib" / LIBRARY_NAME
    if bundled.is_file():
        return bundled
    raise OSError(
        f"{LIBRARY_NAME} is not installed in {bundled.parent}: install the package with "
        f"`pip install ./python` from a flash checkout, or set {LIBRARY_ENV} to a CMake build folder"
    )


class Entry:
    """One entry point (forward, backward or decode) and its plan function:
    the packed layout of its args struct and a buffer per thread."""

    def __init__(self, lib, name, plan_name, args_cls):
        self.size = ctypes.sizeof(args_cls)
        self.struct = struct.Struct(struct_format(args_cls))
        self.pack_into = self.struct.pack_into
        self.args_cls = args_cls
        self.run = getattr(lib, name)
        self.run.argtypes = [ctypes.c_void_p]
        self.run.restype = ctypes.c_int32
        self.plan_fn = getattr(lib, plan_name)
        self.plan_fn.argtypes = [ctypes.c_void_p, ctypes.POINTER(Plan)]
        self.plan_fn.restype = ctypes.c_int32
        self.workspace_offset = args_cls.workspace.offset
        self._tls = threading.local()

    def buffer(self):
        """This thread's (buffer, address)."""
        try:
            return self._tls.buffer
        except AttributeError:
            buf = ctypes.create_string_buffer(self.size)
            self._tls.buffer = (buf, ctypes.addressof(buf))
            return self._tls.buffer

    def plan(self, address):
        """Plans the call packed at address: (kernel, workspace_bytes, num_splits)."""
        plan = Plan()
        status = self.plan_fn(address, ctypes.byref(plan))
        if status != OK:
            raise error(status, last_error())
        return plan.kernel.decode(), plan.workspace_bytes, plan.num_splits

    def set_workspace(self, buf, pointer, nbytes):
        struct.pack_into("=QQ", buf, self.workspace_offset, pointer, nbytes)


_lock = threading.Lock()
_library = None


class Library:
    def __init__(self, path):
        self.path = path
        self.cdll = ctypes.CDLL(str(path))
        version = self.cdll.flash_c_abi_version
        version.restype = ctypes.c_int32
        if version() != ABI_VERSION:
            raise OSError(f"{path} has C ABI version {version()}; this package needs {ABI_VERSION}")
        self.last_error = self.cdll.flash_last_error
        self.last_error.restype = ctypes.c_char_p
        self.last_error.argtypes = []
        self.forward = Entry(self.cdll, "flash_attention_forward", "flash_plan_forward", ForwardArgs)
        self.backward = Entry(self.cdll, "flash_attention_backward", "flash_plan_backward", BackwardArgs)
        self.decode = Entry(self.cdll, "flash_attention_decode", "flash_plan_decode", DecodeArgs)
        self.describe = self.cdll.flash_describe_decode_status
        self.describe.argtypes = [ctypes.POINTER(ctypes.c_int32), ctypes.c_char_p, ctypes.c_size_t]
        self.describe.restype = ctypes.c_size_t


def library():
    """The loaded library (loaded on first use, once)."""
    global _library
    if _library is None:
        with _lock:
            if _library is None:
                _library = Library(find_library())
    return _library


def last_error():
    return library().last_error().decode(errors="replace")


def describe_decode_status(words):
    """The message for decode's four status words (empty when they say OK)."""
    arr = (ctypes.c_int32 * 4)(*words)
    buf = ctypes.create_string_buffer(512)
    library().describe(arr, buf, len(buf))
    return buf.value.decode()
