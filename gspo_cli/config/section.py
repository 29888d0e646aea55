"""The base of every preset section (unknown keys rejected, assignments validated) and the constrained field types
the sections share. The sections themselves: `schema.py` (and `eval_schema.py`, `health.py`)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

PositiveInt = Annotated[int, Field(ge=1)]
NonNegInt = Annotated[int, Field(ge=0)]
PositiveFloat = Annotated[float, Field(gt=0)]
Probability = Annotated[float, Field(gt=0, le=1)]


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)
