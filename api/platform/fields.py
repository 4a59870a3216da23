"""marshmallow fields for JSON as the API reads it: whole numbers that are numbers, booleans
that are booleans (the request schemas of ``api/routes/schemas.py`` and the backup's files)."""

from __future__ import annotations

from typing import Any

from marshmallow import fields, validate

#: JSON's safe integer range: what every client can represent exactly
MAX_SAFE_INT = 2 ** 53 - 1


# -- fields --------------------------------------------------------------

class StrictInteger(fields.Integer):
    """A JSON number that is a whole number; ``true`` and ``"3"`` are not."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.make_error("invalid", input=value)
        return value


class WholeNumbers(fields.List):
    """A list of whole numbers from 0 to :data:`MAX_SAFE_INT` (a game's per-action times):
    a valid list is checked in one pass; any other gets the per-item answers of
    ``List(StrictInteger(validate=Range(…)))``, which cost a call chain an item."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(StrictInteger(validate=validate.Range(min=0, max=MAX_SAFE_INT)), **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> list[Any]:
        if isinstance(value, list) and all(type(item) is int and 0 <= item <= MAX_SAFE_INT for item in value):
            return value
        return super()._deserialize(value, attr, data, **kwargs)


class StrictBoolean(fields.Boolean):
    """JSON ``true`` or ``false``; ``1`` and ``"true"`` are not."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> bool:
        if not isinstance(value, bool):
            raise self.make_error("invalid", input=value)
        return value


class QueryBoolean(fields.Boolean):
    """A query-string boolean: ``true``/``1`` or ``false``/``0``."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(truthy={"true", "1"}, falsy={"false", "0"},
                         error_messages={"invalid": "Not a valid boolean: use true or false."}, **kwargs)
