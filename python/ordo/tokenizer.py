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
ill-formed subsequence (as ``ordo tokens FILE`` reads a file); a ``str``
holding surrogates is read as tiktoken's Python package reads it: a
surrogate pair is its character, a lone surrogate U+FFFD. A tokenizer is
read-only once open: several threads may encode with one (the library
runs without the GIL), and close() waits for none of them: the last call
in progress frees it. Errors are OrdoError, naming the file or the
token."""
import ctypes
import operator
import os
import threading

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
    """value (str, bytes or os.PathLike) as the C string the library reads;
    ValueError for one holding NUL, which C would read only up to there
    (as Python's own file calls refuse it)."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if isinstance(value, str):
        value = value.encode("utf-8", "surrogateescape")
    elif not isinstance(value, bytes):
        raise TypeError(f"a {what} is str or bytes, not {type(value).__name__}")
    if b"\0" in value:
        raise ValueError(f"{what} holds a NUL byte: {value!r}")
    return value


def _utf8(text):
    """A str's UTF-8; with surrogates, tiktoken's reading of them (a pair is
    its character, a lone one U+FFFD)."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode("utf-8")


_OPENED = object()  # only the class methods make a Tokenizer


class Tokenizer:
    """An open tokenizer; close() frees it (also on garbage collection and
    at the end of a ``with`` block). Made by from_file or from_tiktoken;
    it cannot be copied or pickled (open the file again instead)."""

    def __init__(self, handle, opened=None):
        if opened is not _OPENED or not isinstance(handle, _P) or not handle:
            raise TypeError("open a Tokenizer with Tokenizer.from_file or "
                            "Tokenizer.from_tiktoken")
        self._handle = handle
        self._lock = threading.Lock()
        self._calls = 0  # calls in progress, each holding the handle

    @classmethod
    def from_file(cls, path):
        """A Hugging Face tokenizer.json whose model is BPE (docs/tokenizer.md
        lists what of the format is read; anything else is refused, naming
        the component)."""
        handle, err = _P(), _Error()
        _check(_lib().ordo_tokenizer_open_json(_c_string(path, "path"), ctypes.byref(handle),
                                               ctypes.byref(err)), err)
        return cls(handle, _OPENED)

    @classmethod
    def from_tiktoken(cls, encoding, ranks_path):
        """A tiktoken-compatible encoding (gpt2, r50k_base, p50k_base,
        cl100k_base, o200k_base, llama3) with its .tiktoken rank file."""
        handle, err = _P(), _Error()
        _check(_lib().ordo_tokenizer_open(_c_string(encoding, "encoding"),
                                          _c_string(ranks_path, "path"),
                                          ctypes.byref(handle), ctypes.byref(err)), err)
        return cls(handle, _OPENED)

    def _call(self, fn, *args):
        """fn(handle, *args), the handle kept alive until it returns (a
        close() meanwhile leaves the freeing to the last call)."""
        with self._lock:
            handle = self._handle
            if not handle:
                raise OrdoError("the tokenizer is closed")
            self._calls += 1
        try:
            return fn(handle, *args)
        finally:
            with self._lock:
                self._calls -= 1
                last = self._calls == 0 and not self._handle
            if last:
                _lib().ordo_tokenizer_close(handle)

    def encode(self, text):
        """The ids of ordinary text (str or bytes), a list of ints."""
        if isinstance(text, str):
            data = _utf8(text)
        elif isinstance(text, (bytes, bytearray, memoryview)):
            data = bytes(text)
        else:
            raise TypeError(f"encode takes str or bytes, not {type(text).__name__}")
        ids, count, err = _IDS(), ctypes.c_size_t(), _Error()
        _check(self._call(_lib().ordo_tokenizer_encode, data, len(data), ctypes.byref(ids),
                          ctypes.byref(count), ctypes.byref(err)), err)
        try:
            return ids[:count.value]
        finally:
            _lib().ordo_free(ids)

    def decode_bytes(self, ids):
        """The bytes of a sequence of ids (special ids are refused)."""
        if isinstance(ids, (str, bytes, bytearray, memoryview)):
            raise TypeError(f"ids are a sequence of ints, not {type(ids).__name__}")
        checked = []
        for i in ids:
            if isinstance(i, bool):
                raise TypeError("ids are ints, not bool")
            try:
                i = operator.index(i)  # numpy's and torch's integers too
            except TypeError:
                raise TypeError(f"ids are ints, not {type(i).__name__}") from None
            if not 0 <= i < _NONE:
                raise OrdoError(f"id {i} is outside the tokenizer's ids")
            checked.append(i)
        ids = checked
        array = (ctypes.c_uint32 * len(ids))(*ids)
        data, size, err = ctypes.POINTER(ctypes.c_char)(), ctypes.c_size_t(), _Error()
        _check(self._call(_lib().ordo_tokenizer_decode, array, len(ids), ctypes.byref(data),
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
        """The id of a token's text, or None: a tokenizer.json's vocab and
        added tokens, special ones included; of a tiktoken encoding, its
        special tokens only ("<|endoftext|>", ...; docs/tokenizer.md).
        ValueError for text holding NUL (the library looks up C strings)."""
        content = _c_string(content, "token")
        token, err = ctypes.c_uint32(), _Error()
        status = self._call(_lib().ordo_tokenizer_token_id, content, ctypes.byref(token),
                            ctypes.byref(err))
        return token.value if status == 0 else None

    @property
    def vocab_size(self):
        """The size of the id space, special tokens included."""
        return self._call(_lib().ordo_tokenizer_vocab_size)

    @property
    def eot(self):
        """An encoding's <|endoftext|> id; None for a tokenizer.json (which
        names none that is safe: a recipe names its eos)."""
        value = self._call(_lib().ordo_tokenizer_eot)
        return None if value == _NONE else value

    def close(self):
        """Frees the tokenizer now, or when the calls in progress (other
        threads') end; later calls raise OrdoError."""
        with self._lock:
            handle, self._handle = self._handle, None
            free = handle and self._calls == 0
        if free:
            _lib().ordo_tokenizer_close(handle)

    def __copy__(self):
        raise TypeError("a Tokenizer cannot be copied: open the file again")

    def __deepcopy__(self, memo):
        raise TypeError("a Tokenizer cannot be copied: open the file again")

    def __reduce__(self):
        raise TypeError("a Tokenizer cannot be pickled: open the file again where it is needed")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            if getattr(self, "_lock", None) is not None:
                self.close()
        except Exception:  # interpreter shutdown
            pass
