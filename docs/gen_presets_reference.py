"""Print the key reference table of docs/presets.md from the schema (run it after changing schema.py).

    .venv/bin/python docs/gen_presets_reference.py > /tmp/keys.md   # then paste between the markers
"""

from __future__ import annotations

import types
import typing

from pydantic import BaseModel

from gspo_cli.config.schema import Preset


def type_name(ann) -> str:
    origin = typing.get_origin(ann)
    args = typing.get_args(ann)
    if origin is typing.Annotated:
        base, *meta = args
        bounds = []
        for m in meta:
            for item in getattr(m, "metadata", [m]):
                for attr, sym in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")):
                    if getattr(item, attr, None) is not None:
                        bounds.append(f"{sym} {getattr(item, attr):g}")  # 1 and 1.0 alike (typing caches)
        return type_name(base) + (f" ({', '.join(bounds)})" if bounds else "")
    if origin is typing.Literal:
        return " \\| ".join(str(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        parts = [type_name(a) for a in args if a is not type(None)]
        return " \\| ".join(parts) + (" \\| null" if type(None) in args else "")
    if origin in (list, dict):
        return f"{origin.__name__}[{', '.join(type_name(a) for a in args)}]"
    return getattr(ann, "__name__", str(ann))


def rows(model: type[BaseModel], prefix: str = "") -> list[str]:
    out = []
    for name, field in model.model_fields.items():
        ann = field.annotation
        sub = ann if isinstance(ann, type) and issubclass(ann, BaseModel) else None
        if sub is not None:
            out += rows(sub, f"{prefix}{name}.")
            continue
        value = typing.get_args(ann)[-1] if typing.get_origin(ann) is dict else None
        if isinstance(value, type) and issubclass(value, BaseModel):  # a mapping of sections, e.g. eval.benchmarks
            out += rows(value, f"{prefix}{name}.<name>.")
            continue
        default = "required" if field.is_required() else repr(field.get_default(call_default_factory=True))
        shown = type_name(typing.Annotated[ann, *field.metadata]) if field.metadata else type_name(ann)
        extra = field.json_schema_extra
        if callable(extra):  # values read from a registry when the schema is built
            extra_schema: dict = {}
            extra(extra_schema)
            extra = extra_schema
        if isinstance(extra, dict) and isinstance(extra.get("enum"), list):
            shown = " \\| ".join(map(str, extra["enum"]))
        out.append(f"| `{prefix}{name}` | {shown} | `{default}` |")
    return out


if __name__ == "__main__":
    print("| key | type | default |\n|---|---|---|")
    print("\n".join(rows(Preset)))
