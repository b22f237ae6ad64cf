"""Plain record classes for the modules on the start-up path.

`dataclasses` imports `inspect` (and with it ast, dis and tokenize): about 15 ms, more than an offline
`kubectl win explain -f one.yaml` spends on everything else of its own. `@record` gives the part of
dataclasses these modules use (an __init__ from the annotated fields, defaults and factories, __eq__,
__repr__, frozen records that hash) without that import. Fields come from the class annotations in
order; a field without a default must come before those with one.
"""

from __future__ import annotations

_MISSING = object()


class Field:
    """A field's default, default factory, and whether it shows in repr and takes part in equality."""

    __slots__ = ("compare", "default", "factory", "repr")

    def __init__(
        self, default: object = _MISSING, *, factory: object = None, repr: bool = True, compare: bool = True
    ) -> None:
        self.default, self.factory, self.repr, self.compare = default, factory, repr, compare


def field(default: object = _MISSING, *, factory: object = None, repr: bool = True, compare: bool = True) -> object:
    return Field(default, factory=factory, repr=repr, compare=compare)


def record(cls: type | None = None, *, frozen: bool = False) -> object:
    """Class decorator: `@record` or `@record(frozen=True)`."""

    def wrap(klass: type) -> type:
        specs = []
        for name in klass.__dict__.get("__annotations__", {}):
            value = klass.__dict__.get(name, _MISSING)
            spec = value if isinstance(value, Field) else Field(value)
            if isinstance(value, Field):
                delattr(klass, name)
            specs.append((name, spec))
        _add_init(klass, specs, frozen)
        compared = tuple(name for name, spec in specs if spec.compare)
        shown = tuple(name for name, spec in specs if spec.repr)
        klass.__record_fields__ = tuple(name for name, _ in specs)  # type: ignore[attr-defined]

        def __eq__(self: object, other: object) -> bool:
            if other.__class__ is not self.__class__:
                return NotImplemented
            return all(getattr(self, n) == getattr(other, n) for n in compared)

        def __repr__(self: object) -> str:
            inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in shown)
            return f"{type(self).__name__}({inner})"

        klass.__eq__ = __eq__  # type: ignore[method-assign,assignment]
        klass.__repr__ = __repr__  # type: ignore[method-assign,assignment]
        if frozen:
            klass.__hash__ = lambda self: hash(tuple(getattr(self, n) for n in compared))  # type: ignore[method-assign]
            klass.__setattr__ = _refuse  # type: ignore[method-assign,assignment]
            klass.__delattr__ = _refuse  # type: ignore[method-assign,assignment]
        else:
            klass.__hash__ = None  # type: ignore[assignment]
        return klass

    return wrap(cls) if cls is not None else wrap


def replace(obj: object, **changes: object) -> object:
    """A copy of a record with some fields changed (like dataclasses.replace)."""
    values = {name: getattr(obj, name) for name in obj.__record_fields__}  # type: ignore[attr-defined]
    values.update(changes)
    return type(obj)(**values)


def _add_init(klass: type, specs: list[tuple[str, Field]], frozen: bool) -> None:
    # Generated once per class, like dataclasses does, so constructing a record costs a plain call.
    namespace: dict[str, object] = {"_MISSING": _MISSING, "_set": object.__setattr__}
    params, body = [], []
    for name, spec in specs:
        if spec.factory is not None:
            namespace[f"_factory_{name}"] = spec.factory
            params.append(f"{name}=_MISSING")
            value = f"_factory_{name}() if {name} is _MISSING else {name}"
        elif spec.default is not _MISSING:
            namespace[f"_default_{name}"] = spec.default
            params.append(f"{name}=_default_{name}")
            value = name
        else:
            params.append(name)
            value = name
        body.append(f"_set(self, {name!r}, {value})" if frozen else f"self.{name} = {value}")
    source = f"def __init__(self, {', '.join(params)}):\n    " + "\n    ".join(body or ["pass"])
    exec(source, namespace)  # noqa: S102 - the source is built from the class's own field names
    init = namespace["__init__"]
    init.__qualname__ = f"{klass.__qualname__}.__init__"  # type: ignore[attr-defined]
    klass.__init__ = init  # type: ignore[misc]


def _refuse(self: object, name: str, *args: object) -> None:
    raise AttributeError(f"cannot change field {name!r} of a frozen {type(self).__name__}")
