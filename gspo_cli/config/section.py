"""The base of every preset section (unknown keys rejected, assignments validated) and the constrained field types
the sections share. The sections themselves: `schema.py` (and `eval_schema.py`, `health.py`)."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

PositiveInt = Annotated[int, Field(ge=1)]
NonNegInt = Annotated[int, Field(ge=0)]
PositiveFloat = Annotated[float, Field(gt=0)]
Probability = Annotated[float, Field(gt=0, le=1)]


def _one_line(value: str) -> str:
    """Text that ends up in a shell comment, a header or a file name: no line breaks or control characters."""
    from gspo_cli.shell import one_line

    if one_line(value) != value:
        raise ValueError("holds a line break or control character")
    return value


OneLine = Annotated[str, AfterValidator(_one_line)]


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)
