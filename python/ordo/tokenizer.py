"""libordo's tokenizers through ctypes: the ids a recipe's tokenizer gives
a text, the same ones the loader packs, for checking them against another
implementation (Hugging Face's, tiktoken) in a notebook or a job.

    tok = Tokenizer.from_file("tokenizer.json")       # model BPE
    tok = Tokenizer.from_tiktoken("cl100k_base", "cl100k_base.tiktoken")
    ids = tok.encode("Hello world")                   # a list of ints
    tok.decode(ids)                                   # "Hello world"

Text is encoded as ordinary text: special tokens are never produced from
it (as tiktoken's ``encode_ordinary``, and Hugging Face's ``encode`` with
its special added tokens left out and ``add_special_tokens=False``).
``bytes`` are taken as they are, invalid UTF-8 read as U+FFFD per maximal
ill-formed subsequence; a ``str`` with lone surrogates reaches the library
as such bytes. A tokenizer is read-only once open: several threads may
encode with one (the library runs without the GIL). Errors are OrdoError,
naming the file or the token."""
import ctypes
import os

from .loader import OrdoError, _Error, _check, lib

_NONE = 0xFFFFFFFF
_P, _E = ctypes.c_void_p, ctypes.POINTER(_Error)
_IDS = ctypes.POINTER(ctypes.c_uint32)
_SIGNATURES = {
    "ordo_tokenizer_open": ([ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(_P), _E],
                            ctypes.c_int),
    "ordo_tokenizer_open_json": ([ctypes.c_char_p, ctypes.POINTER(_P), _E], ctypes.c_int),
    "ordo_tokenizer_close": ([_P], None),
    "ordo_tokenizer_encode": ([_P, ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(_IDS),
                               ctypes.POINTER(ctypes.c_size_t), _E], ctypes.c_int),
    "ordo_tokenizer_decode": ([_P, _IDS, ctypes.c_size_t,
                               ctypes.POINTER(ctypes.POINTER(ctypes.c_char)),
                               ctypes.POINTER(ctypes.c_size_t), _E], ctypes.c_int),
    "ordo_tokenizer_token_id": ([_P, ctypes.c_char_p, ctypes.POINTER(ctypes.c_uint32), _E],
                                ctypes.c_int),
    "ordo_tokenizer_eot": ([_P], ctypes.c_uint32),
    "ordo_tokenizer_vocab_size": ([_P], ctypes.c_uint32),
}
_ready = False


def _lib():
    global _ready
    library = lib()
    if not _ready:
        for name, (args, result) in _SIGNATURES.items():
            fn = getattr(library, name)
            fn.argtypes, fn.restype = args, result
        _ready = True
    return library


def _c_string(value, what):
    """value as the C string the library reads (str, bytes or os.PathLike);
    ValueError for one holding NUL, which C would read only up to there
    (as Python's own file calls refuse it)."""
    if not isinstance(value, bytes):
        value = os.fsencode(value) if isinstance(value, os.PathLike) else \
            str(value).encode("utf-8", "surrogateescape")
    if b"\0" in value:
        raise ValueError(f"{what} holds a NUL byte: {value!r}")
    return value


class Tokenizer:
    """An open tokenizer; close() frees it (also on garbage collection and
    at the end of a ``with`` block)."""

    def __init__(self, handle):
        self._handle = handle

    @classmethod
    def from_file(cls, path):
        """A Hugging Face tokenizer.json whose model is BPE (docs/tokenizer.md
        lists what of the format is read; anything else is refused, naming
        the component)."""
        handle, err = _P(), _Error()
        _check(_lib().ordo_tokenizer_open_json(_c_string(path, "path"), ctypes.byref(handle),
                                               ctypes.byref(err)), err)
        return cls(handle)

    @classmethod
    def from_tiktoken(cls, encoding, ranks_path):
        """A tiktoken-compatible encoding (gpt2, r50k_base, p50k_base,
        cl100k_base, o200k_base, llama3) with its .tiktoken rank file."""
        handle, err = _P(), _Error()
        _check(_lib().ordo_tokenizer_open(_c_string(encoding, "encoding"),
                                          _c_string(ranks_path, "path"),
                                          ctypes.byref(handle), ctypes.byref(err)), err)
        return cls(handle)

    def _open(self):
        if not self._handle:
            raise OrdoError("the tokenizer is closed")
        return self._handle

    def encode(self, text):
        """The ids of ordinary text (str or bytes), a list of ints."""
        if isinstance(text, str):
            data = text.encode("utf-8", "surrogatepass")
        elif isinstance(text, (bytes, bytearray, memoryview)):
            data = bytes(text)
        else:
            raise TypeError(f"encode takes str or bytes, not {type(text).__name__}")
        ids, count, err = _IDS(), ctypes.c_size_t(), _Error()
        _check(_lib().ordo_tokenizer_encode(self._open(), data, len(data), ctypes.byref(ids),
                                            ctypes.byref(count), ctypes.byref(err)), err)
        try:
            return ids[:count.value]
        finally:
            _lib().ordo_free(ids)

    def decode_bytes(self, ids):
        """The bytes of a sequence of ids (special ids are refused)."""
        ids = list(ids)
        for i in ids:
            if not isinstance(i, int) or isinstance(i, bool):
                raise TypeError(f"ids are ints, not {type(i).__name__}")
            if not 0 <= i < _NONE:
                raise OrdoError(f"id {i} is outside the tokenizer's ids")
        array = (ctypes.c_uint32 * len(ids))(*ids)
        data, size, err = ctypes.POINTER(ctypes.c_char)(), ctypes.c_size_t(), _Error()
        _check(_lib().ordo_tokenizer_decode(self._open(), array, len(ids), ctypes.byref(data),
                                            ctypes.byref(size), ctypes.byref(err)), err)
        try:
            return ctypes.string_at(data, size.value) if size.value else b""
        finally:
            _lib().ordo_free(data)

    def decode(self, ids):
        """decode_bytes as text (a token may hold part of a character: such
        bytes read as U+FFFD)."""
        return self.decode_bytes(ids).decode("utf-8", "replace")

    def token_to_id(self, content):
        """The id of a token's text (special tokens included), or None;
        ValueError for text holding NUL (the library looks up C strings)."""
        token, err = ctypes.c_uint32(), _Error()
        status = _lib().ordo_tokenizer_token_id(self._open(), _c_string(content, "token"),
                                                ctypes.byref(token), ctypes.byref(err))
        return token.value if status == 0 else None

    @property
    def vocab_size(self):
        """The size of the id space, special tokens included."""
        return _lib().ordo_tokenizer_vocab_size(self._open())

    @property
    def eot(self):
        """An encoding's <|endoftext|> id; None for a tokenizer.json (which
        names none that is safe: a recipe names its eos)."""
        value = _lib().ordo_tokenizer_eot(self._open())
        return None if value == _NONE else value

    def close(self):
        if self._handle:
            _lib().ordo_tokenizer_close(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown
            pass
