"""marshmallow schemas: every request body and query the API reads, and every
body it shapes itself.

The deal and the verdict are the verifier's own JSON (``verifier.deal_json``,
``Verdict.to_json``) and pass through unchanged; ``openapi.yaml`` pins their
shape and the tests check it. What is *in* a move log (its notation, its
rules) is the verifier's business too: the schemas only check that ``moves``
is text or an array of text and objects.
"""

from __future__ import annotations

import re
from typing import Any

from marshmallow import Schema, ValidationError, fields, validate

from engine import BY_VARIANT

VARIANTS = tuple(BY_VARIANT)
#: JSON's safe integer range: what every client can represent exactly
MAX_SAFE_INT = 2 ** 53 - 1


# -- fields --------------------------------------------------------------

class StrictInteger(fields.Integer):
    """A JSON number that is a whole number; ``true`` and ``"3"`` are not."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.make_error("invalid", input=value)
        return value


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


class MoveLog(fields.Field):
    """A move log in either form of the notation: one string (text form) or an
    array whose items are text actions or JSON action objects."""

    default_error_messages = {
        "invalid": "A move log is a string (text form) or an array of actions.",
        "item": "An action is a string such as \"T7>F\" or an object such as {\"from\": \"T7\", \"to\": \"F\"}.",
    }

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> str | list[Any]:
        if isinstance(value, str):
            return value
        if not isinstance(value, list):
            raise self.make_error("invalid")
        bad = {index: [self.error_messages["item"]] for index, item in enumerate(value)
               if not isinstance(item, (str, dict))}
        if bad:
            raise ValidationError(bad)
        return value


#: a player's or client's name: no control characters or lone surrogates, no white space at either end
#: (``openapi.yaml`` has the same pattern, anchored with ``^…$``)
NAME = re.compile(r"[^\s\x00-\x1f\x7f-\x9f\ud800-\udfff]"
                  r"(?:[^\x00-\x1f\x7f-\x9f\ud800-\udfff]*[^\s\x00-\x1f\x7f-\x9f\ud800-\udfff])?")


def _name(value: str) -> None:
    if value and not NAME.fullmatch(value):  # (empty: the length check says so)
        raise ValidationError("Must not start or end with white space or contain control characters.")


# -- request bodies ------------------------------------------------------

class ClaimedSchema(Schema):
    """What the client says the game ended with; compared, never trusted."""

    score = StrictInteger()
    moves = StrictInteger()
    won = StrictBoolean()


class VerifyRequestSchema(Schema):
    code = fields.String(required=True)
    moves = MoveLog(required=True)
    claimed = fields.Nested(ClaimedSchema, allow_none=True)


class RecordRequestSchema(VerifyRequestSchema):
    player = fields.String(required=True, validate=[validate.Length(min=1, max=64), _name])
    elapsed_ms = StrictInteger(allow_none=True, validate=validate.Range(min=0, max=MAX_SAFE_INT))
    client = fields.String(allow_none=True, validate=[validate.Length(min=1, max=100), _name])


# -- query strings -------------------------------------------------------

class DealQuerySchema(Schema):
    reveal = QueryBoolean(load_default=False)


class RecordQuerySchema(Schema):
    code = fields.String()
    player = fields.String(validate=[validate.Length(min=1, max=64), _name])
    won = QueryBoolean()
    page = fields.Integer(load_default=1, validate=validate.Range(min=1, max=MAX_SAFE_INT))
    page_size = fields.Integer(load_default=20, validate=validate.Range(min=1, max=100))


class LeaderboardQuerySchema(Schema):
    variant = fields.String(required=True, validate=validate.OneOf(VARIANTS))
    code = fields.String()
    no_takebacks = QueryBoolean(load_default=False)
    limit = fields.Integer(load_default=10, validate=validate.Range(min=1, max=100))


# -- response bodies -----------------------------------------------------

class RecordSchema(Schema):
    """A stored record: who, which deal, what the replay recomputed, the canonical log."""

    id = fields.Integer()
    player = fields.String()
    code = fields.String()
    variant = fields.String()
    number = fields.Integer()
    won = fields.Boolean()
    score = fields.Integer()
    moves = fields.Integer()
    actions = fields.Integer()
    undos = fields.Integer()
    takebacks = fields.Integer()
    foundation_cards = fields.Integer()
    canonical = fields.String()
    claimed = fields.Dict(keys=fields.String(), allow_none=True)
    elapsed_ms = fields.Integer(allow_none=True)
    client = fields.String(allow_none=True)
    engine_version = fields.String()
    rules_version = fields.Integer()
    received_at = fields.AwareDateTime()


class RecordPageSchema(Schema):
    items = fields.List(fields.Nested(RecordSchema))
    page = fields.Integer()
    page_size = fields.Integer()
    total = fields.Integer()


class LeaderboardFiltersSchema(Schema):
    code = fields.String(allow_none=True)
    no_takebacks = fields.Boolean()
    limit = fields.Integer()


class LeaderboardEntrySchema(Schema):
    rank = fields.Integer()
    record_id = fields.Integer(attribute="id")
    player = fields.String()
    code = fields.String()
    won = fields.Boolean()
    score = fields.Integer()
    moves = fields.Integer()
    takebacks = fields.Integer()
    undos = fields.Integer()
    elapsed_ms = fields.Integer(allow_none=True)
    received_at = fields.AwareDateTime()


class LeaderboardSchema(Schema):
    variant = fields.String()
    filters = fields.Nested(LeaderboardFiltersSchema)
    entries = fields.List(fields.Nested(LeaderboardEntrySchema))


class HealthSchema(Schema):
    status = fields.String()
    database = fields.String()
    schema = fields.String()


class FieldErrorSchema(Schema):
    field = fields.String()
    message = fields.String()
    part = fields.String()       # invalid game codes: which part is wrong
    position = fields.Integer()  # … and the 1-based character position, when one character is to blame


class ProblemSchema(Schema):
    """RFC 9457 problem details, with this API's extension members."""

    type = fields.String()
    title = fields.String()
    status = fields.Integer()
    detail = fields.String()
    instance = fields.String()
    request_id = fields.String()
    errors = fields.List(fields.Nested(FieldErrorSchema))
    verdict = fields.Raw()  # Verdict.to_json(), as the verifier built it
