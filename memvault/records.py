"""Named-tuple records without collections.namedtuple's cost at import.

collections.namedtuple compiles each record's __new__ from source text with eval (~0.4 M instructions each;
the ten records a search uses were ~10 M of its ~165 M, bench/search.py, callgrind). Here __new__ is an
ordinary function written out in the module that defines the record, so it comes byte-compiled with that module:
its parameters are the fields (in order, with their defaults) and it returns `_tuple_new(_cls, (fields…))`.
`record` reads the fields from its signature and builds the same kind of class: a tuple subclass with read-only
fields by name, `_fields`, `_field_defaults`, `_make`, `_replace`, `_asdict`, a repr, equality and pickling of a
tuple. Pure standard library (core layer).
"""

from __future__ import annotations

try:
    from _collections import _tuplegetter  # what collections.namedtuple's fields are (C, fast)
except ImportError:  # another Python implementation
    from operator import itemgetter

    def _tuplegetter(index: int, doc: str):  # type: ignore[no-redef]
        return property(itemgetter(index), doc=doc)

_tuple_new = tuple.__new__

__all__ = ["record", "_tuple_new"]


def record(typename: str, new) -> type:
    """A tuple subclass named `typename` whose fields are the parameters of `new` after the first (cls)."""
    code = new.__code__
    fields = code.co_varnames[1:code.co_argcount]
    defaults = new.__defaults__ or ()
    namespace = {
        "__slots__": (),
        "__doc__": f"{typename}({', '.join(fields)})",
        "__new__": new,
        "__match_args__": fields,
        "__module__": new.__module__,
        "_fields": fields,
        "_field_defaults": dict(zip(fields[len(fields) - len(defaults):], defaults)),
        "_make": classmethod(_make),
        "_replace": _replace,
        "_asdict": _asdict,
        "__repr__": _repr,
        "__getnewargs__": _getnewargs,
    }
    for index, name in enumerate(fields):
        namespace[name] = _tuplegetter(index, f"Alias for field number {index}")
    return type(typename, (tuple,), namespace)


def _make(cls, iterable):
    result = _tuple_new(cls, iterable)
    if len(result) != len(cls._fields):
        raise TypeError(f"Expected {len(cls._fields)} arguments, got {len(result)}")
    return result


def _replace(self, /, **kwds):
    result = self._make(map(kwds.pop, self._fields, self))
    if kwds:
        raise ValueError(f"Got unexpected field names: {list(kwds)!r}")
    return result


def _asdict(self) -> dict:
    return dict(zip(self._fields, self))


def _repr(self) -> str:
    return f"{type(self).__name__}(" + ", ".join(f"{n}={v!r}" for n, v in zip(self._fields, self)) + ")"


def _getnewargs(self) -> tuple:
    return tuple(self)
