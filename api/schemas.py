"""marshmallow schemas: every request body and query the API reads, and every
body it shapes itself.

The deal and the verdict are the verifier's own JSON (``verifier.deal_json``,
``Verdict.to_json``) and pass through unchanged; ``openapi.yaml`` pins their
shape and the tests check it. What is *in* a move log (its notation, its
rules) is the verifier's business too: the schemas only check that ``moves``
is text or an array of text and objects.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from typing import Any

from flask import current_app
from marshmallow import Schema, ValidationError, fields, missing, validate

from api.platform.models import STATUSES
from api.records.times import unpack_times
from engine import BY_VARIANT
from engine.actions import split_text_log

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


def _setting(name: str) -> Callable[[], int]:
    """A limit read from the app's settings when a request is validated."""
    return lambda: current_app.config[name]


class MoveLog(fields.Field):
    """A move log in either form of the notation: one string (text form) or an
    array whose items are text actions or JSON action objects; at most
    ``MAX_LOG_ACTIONS`` actions. Loads as the list of its items (a text log is
    split into its actions once, here, where its length is checked)."""

    default_error_messages = {
        "invalid": "A move log is a string (text form) or an array of actions.",
        "item": "An action is a string such as \"T7>F\" or an object such as {\"from\": \"T7\", \"to\": \"F\"}.",
        "too_long": "The log has {count} actions; at most {limit} are accepted.",
    }

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> list[Any]:
        if isinstance(value, str):
            items = split_text_log(value)
            self._check_length(len(items))
            return items
        if not isinstance(value, list):
            raise self.make_error("invalid")
        self._check_length(len(value))
        bad = {index: [self.error_messages["item"]] for index, item in enumerate(value)
               if not isinstance(item, (str, dict))}
        if bad:
            raise ValidationError(bad)
        return value

    def _check_length(self, count: int) -> None:
        limit = current_app.config["MAX_LOG_ACTIONS"]
        if count > limit:
            raise self.make_error("too_long", count=count, limit=limit)


class Name(fields.String):
    """A name as people write it (a player, a client, a reason): white space around it
    is trimmed; what is left is 1 to ``max_length`` characters, all printable
    (``str.isprintable``: no control, format, private-use or unassigned characters,
    no lone surrogates, no line breaks; the plain space is fine inside)."""

    default_error_messages = {
        "control": "Must not contain control characters (character {position} is U+{code:04X}).",
        "empty": "Must not be empty or only white space.",
        "too_long": "Longer than {limit} characters (after trimming white space).",
        "unprintable": "Character {position} (U+{code:04X}) is not printable.",
    }

    def __init__(self, max_length: int | Callable[[], int], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.max_length = max_length

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> str:
        text = super()._deserialize(value, attr, data, **kwargs)
        for position, char in enumerate(text, 1):
            if unicodedata.category(char) == "Cc":
                raise self.make_error("control", position=position, code=ord(char))
        text = text.strip()
        if not text:
            raise self.make_error("empty")
        limit = self.max_length() if callable(self.max_length) else self.max_length
        if len(text) > limit:
            raise self.make_error("too_long", limit=limit)
        if not text.isprintable():
            position, char = next((i, c) for i, c in enumerate(text, 1) if not c.isprintable())
            raise self.make_error("unprintable", position=position, code=ord(char))
        return text


def _page_size(value: int) -> None:
    most = current_app.config["MAX_PAGE_SIZE"]
    if not 1 <= value <= most:
        raise ValidationError(f"Must be greater than or equal to 1 and less than or equal to {most}.")


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
    #: required unless a player token sends the record (``api.players.accounts.claimant``)
    player = Name(_setting("MAX_PLAYER_LENGTH"))
    elapsed_ms = StrictInteger(allow_none=True, validate=validate.Range(min=0, max=MAX_SAFE_INT))
    client = Name(100, allow_none=True)
    #: per-action times, ms from the game's start (``api.records.submit.check_times``)
    times = WholeNumbers(allow_none=True)
    #: the challenge attempt this game is (``api.challenges.windows.attempt_values``)
    attempt = StrictInteger(allow_none=True, validate=validate.Range(min=1, max=2 ** 63 - 1))


class PlayerRequestSchema(Schema):
    """``POST /players``: the name to register (checked further by ``api.players.accounts.check_name``)."""

    name = Name(_setting("MAX_PLAYER_LENGTH"), required=True)


class HintRequestSchema(Schema):
    """``POST /hint``: the game so far (an empty log asks about the deal's start)."""

    code = fields.String(required=True)
    moves = MoveLog(required=True)


class StatusRequestSchema(Schema):
    """An admin's change of a record's status, with the reason the history keeps."""

    status = fields.String(required=True, validate=validate.OneOf(STATUSES))
    reason = Name(500, required=True)


# -- query strings -------------------------------------------------------

class DealQuerySchema(Schema):
    reveal = QueryBoolean(load_default=False)


class SolvabilityQuerySchema(Schema):
    """``GET /deals/{code}/solvability`` takes no parameters (unknown ones are refused)."""


class RecordQuerySchema(Schema):
    code = fields.String()
    player = Name(_setting("MAX_PLAYER_LENGTH"))
    won = QueryBoolean()
    #: ``visible`` (the default), ``hidden`` or ``all``
    status = fields.String(load_default="visible", validate=validate.OneOf((*STATUSES, "all")))
    #: only the first page is asked for by number; the next ones by ``cursor`` (no OFFSET)
    page = fields.Integer(validate=validate.Equal(1, error="Only page 1 is served by number: go on with cursor "
                                                          "(next_cursor of the page before)."))
    cursor = fields.String(validate=validate.Length(min=1, max=500))
    page_size = fields.Integer(load_default=lambda: min(20, current_app.config["MAX_PAGE_SIZE"]),
                               validate=_page_size)


class ReviewQuerySchema(Schema):
    """``GET /review``: the page after the record id ``after``."""

    after = fields.Integer(load_default=0, validate=validate.Range(min=0, max=2 ** 63 - 1))
    limit = fields.Integer(load_default=lambda: min(20, current_app.config["MAX_PAGE_SIZE"]), validate=_page_size)


class BoardPagingSchema(Schema):
    """Any board: a page (``limit`` rows, after ``cursor``) or the window ``around`` a player;
    ``player`` adds that player's rank and percentile."""

    limit = fields.Integer(load_default=lambda: min(10, current_app.config["MAX_PAGE_SIZE"]), validate=_page_size)
    cursor = fields.String(validate=validate.Length(min=1, max=500))
    around = Name(_setting("MAX_PLAYER_LENGTH"))
    player = Name(_setting("MAX_PLAYER_LENGTH"))


class LeaderboardQuerySchema(BoardPagingSchema):
    variant = fields.String(required=True, validate=validate.OneOf(VARIANTS))
    code = fields.String()
    no_takebacks = QueryBoolean(load_default=False)


class BoardQuerySchema(BoardPagingSchema):
    """A variant's board (``/standings``)."""

    variant = fields.String(required=True, validate=validate.OneOf(VARIANTS))


class NoQuerySchema(Schema):
    """An endpoint that takes no query parameters (unknown ones are refused)."""


class ChallengeQuerySchema(Schema):
    variant = fields.String(required=True, validate=validate.OneOf(VARIANTS))


class ChallengeListQuerySchema(Schema):
    variant = fields.String(required=True, validate=validate.OneOf(VARIANTS))
    kind = fields.String(validate=validate.OneOf(("daily", "weekly")))
    limit = fields.Integer(load_default=lambda: min(10, current_app.config["MAX_PAGE_SIZE"]), validate=_page_size)
    cursor = fields.String(validate=validate.Length(min=1, max=500))


class RandomDealQuerySchema(Schema):
    variant = fields.String(required=True, validate=validate.OneOf(VARIANTS))
    winnable = QueryBoolean(load_default=False)


class PlayerPathSchema(Schema):
    name = Name(_setting("MAX_PLAYER_LENGTH"), required=True)


class StatsQuerySchema(Schema):
    """``GET /players/{name}/stats`` takes no parameters but an optional variant."""

    variant = fields.String(validate=validate.OneOf(VARIANTS))


# -- response bodies -----------------------------------------------------

class StatusChangeSchema(Schema):
    """One entry of a record's status history."""

    status = fields.String()
    actor = fields.String()
    at = fields.AwareDateTime()
    reason = fields.String()


class RecordSchema(Schema):
    """A stored record: who, which deal, what the replay recomputed, the canonical log,
    and its status with the history of changes."""

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
    verified_at = fields.AwareDateTime()
    submitted_by = fields.String(allow_none=True)
    status = fields.String()
    history = fields.List(fields.Nested(StatusChangeSchema))
    ranked = fields.Boolean()
    flags = fields.List(fields.Dict(keys=fields.String()))
    copy_of = fields.Integer(allow_none=True)
    vouched_by = fields.String(allow_none=True)
    times = fields.Method("_times")
    attempt = fields.Integer(attribute="attempt_id", allow_none=True)
    server_elapsed_ms = fields.Integer(allow_none=True)

    def _times(self, record: Any) -> list[int] | None:
        packed = record["times"] if isinstance(record, dict) else record.times
        return packed if isinstance(packed, list) else unpack_times(packed)  # (a list: a new record's, as sent)


class PlainDump:
    """``schema.dump`` (a schema without dump hooks), with a shortcut: a value already of its
    integer, text or boolean field's type, or ``None``, is copied as the field would give it;
    any other goes through its field. A record's answer is made on every submission, and
    marshmallow's call chain a field was a tenth of a record's CPU."""

    PLAIN: dict[type, type] = {fields.Integer: int, fields.String: str, fields.Boolean: bool}

    def __init__(self, schema: Schema) -> None:
        assert not any(schema._hooks[hook] for hook in ("pre_dump", "post_dump")), "the shortcut skips dump hooks"
        self.schema = schema
        self.plan = [(name, field.data_key or name, field.attribute or name, self.PLAIN.get(type(field)), field)
                     for name, field in schema.dump_fields.items()]

    def __call__(self, obj: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        is_dict = isinstance(obj, dict)
        for name, key, attribute, plain, field in self.plan:
            if plain is not None:
                value = obj.get(attribute, self) if is_dict else getattr(obj, attribute, self)
                if value is None or type(value) is plain:
                    out[key] = value
                    continue
            value = field.serialize(name, obj, accessor=self.schema.get_attribute)
            if value is not missing:
                out[key] = value
        return out


#: a record as ``GET /api/v1/records/{id}`` shows it (a webhook's ``data``, too)
record_json = PlainDump(RecordSchema())


class RecordPageSchema(Schema):
    items = fields.List(fields.Nested(RecordSchema))
    page_size = fields.Integer()
    has_more = fields.Boolean()
    next_cursor = fields.String(allow_none=True)


class ReviewPageSchema(Schema):
    """Records waiting for review, oldest first; ``next`` is the ``after`` of the next page."""

    items = fields.List(fields.Nested(RecordSchema))
    next = fields.Integer(allow_none=True)


class NewPlayerSchema(Schema):
    """A player just registered: the token is shown this once."""

    id = fields.Integer()
    name = fields.String()
    token = fields.String()


class PlayerSchema(Schema):
    """A player's profile; ``registered``: holds a token (players kept from names stored
    before registration existed do not)."""

    id = fields.Integer()
    name = fields.String()
    registered = fields.Boolean()
    created_at = fields.AwareDateTime()


class PlayerReviewSchema(PlayerSchema):
    """A player whose name waits for an admin's look, and why."""

    name_review = fields.String()


class PlayerReviewPageSchema(Schema):
    items = fields.List(fields.Nested(PlayerReviewSchema))
    next = fields.Integer(allow_none=True)


class LeaderboardFiltersSchema(Schema):
    code = fields.String(allow_none=True)
    no_takebacks = fields.Boolean()
    limit = fields.Integer()


class LeaderboardEntrySchema(Schema):
    rank = fields.Integer()
    record_id = fields.Integer(attribute="id")
    player = fields.String()
    code = fields.String(allow_none=True)  # None while its deal is a running challenge's
    won = fields.Boolean()
    earned = fields.Integer()
    score = fields.Integer()
    moves = fields.Integer()
    takebacks = fields.Integer()
    undos = fields.Integer()
    elapsed_ms = fields.Integer(allow_none=True)
    server_elapsed_ms = fields.Integer(allow_none=True)
    received_at = fields.AwareDateTime()


class PlayerStandingSchema(Schema):
    """A player's place on a board (``api.boards.reads.standing``)."""

    player = fields.String()
    rank = fields.Integer()
    entries = fields.Integer()
    top_percent = fields.Integer()
    percentile = fields.Float()


class LeaderboardSchema(Schema):
    variant = fields.String()
    filters = fields.Nested(LeaderboardFiltersSchema)
    entries = fields.List(fields.Nested(LeaderboardEntrySchema))
    has_more = fields.Boolean()
    next_cursor = fields.String(allow_none=True)
    player = fields.Nested(PlayerStandingSchema, allow_none=True)


class StandingEntrySchema(Schema):
    rank = fields.Integer()
    player = fields.String()
    points = fields.Integer()
    challenges_won = fields.Integer()
    challenges_played = fields.Integer()
    updated_at = fields.AwareDateTime()


class StandingsSchema(Schema):
    variant = fields.String()
    limit = fields.Integer()
    entries = fields.List(fields.Nested(StandingEntrySchema))
    has_more = fields.Boolean()
    next_cursor = fields.String(allow_none=True)
    player = fields.Nested(PlayerStandingSchema, allow_none=True)


class SolvabilitySchema(Schema):
    """A deal's stored solver answer (``api.platform.models.Solvability``), pending or final."""

    code = fields.String()
    variant = fields.String()
    status = fields.String()
    reason = fields.String()
    solution = fields.String(allow_none=True)
    solution_actions = fields.Integer(allow_none=True)
    verified = fields.Boolean()
    search = fields.Dict(attribute="statistics", allow_none=True)
    coverage = fields.Dict(allow_none=True)
    budget = fields.Method("_budget")
    engine_version = fields.String()
    rules_version = fields.Integer()
    requested_at = fields.AwareDateTime()
    solved_at = fields.AwareDateTime(allow_none=True)

    def _budget(self, row: Any) -> dict[str, Any]:
        return {"seconds": row.budget_seconds, "nodes": row.budget_nodes}


class HealthSchema(Schema):
    status = fields.String()
    engine = fields.String()
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
    player = fields.String()  # name-taken: the existing player's name
    attempt = fields.Integer()  # attempt-exists: the player's attempt, its deal and when it started
    code = fields.String()
    started_at = fields.AwareDateTime()


class ChallengeSchema(Schema):
    id = fields.Integer()
    variant = fields.String()
    kind = fields.String()
    code = fields.String(allow_none=True)  # None until the window closes (``api.challenges.windows.secret_codes``)
    starts_at = fields.AwareDateTime()
    ends_at = fields.AwareDateTime()
    next_reset = fields.AwareDateTime()
    par = fields.Integer()
    candidate = fields.Integer()
    final = fields.Boolean()
    podium = fields.List(fields.Nested(LeaderboardEntrySchema))


class AttemptSchema(Schema):
    """``POST /challenges/{id}/attempts``: the attempt, the deal to play and when the server's clock started."""

    attempt = fields.Integer(attribute="id")
    challenge = fields.Integer(attribute="challenge_id")
    code = fields.String()
    started_at = fields.AwareDateTime()
    ends_at = fields.AwareDateTime()


class ChallengeListSchema(Schema):
    variant = fields.String()
    items = fields.List(fields.Nested(ChallengeSchema))
    has_more = fields.Boolean()
    next_cursor = fields.String(allow_none=True)


class ChallengeBoardSchema(Schema):
    challenge = fields.Nested(ChallengeSchema)
    limit = fields.Integer()
    entries = fields.List(fields.Nested(LeaderboardEntrySchema))
    has_more = fields.Boolean()
    next_cursor = fields.String(allow_none=True)
    player = fields.Nested(PlayerStandingSchema, allow_none=True)


class VariantStatsSchema(Schema):
    variant = fields.String()
    games = fields.Integer()
    wins = fields.Integer()
    win_rate = fields.Float(allow_none=True)
    best_score = fields.Integer(allow_none=True)
    average_moves_to_win = fields.Float(allow_none=True)
    takebacks = fields.Integer()
    current_streak = fields.Integer()
    best_streak = fields.Integer()


class PlayerStatsSchema(Schema):
    player = fields.String()
    variants = fields.List(fields.Nested(VariantStatsSchema))


# -- webhooks ------------------------------------------------------------------

def _webhook_events() -> tuple[str, ...]:
    from api.webhooks.events import EVENTS

    return EVENTS


class WebhookRequestSchema(Schema):
    url = fields.String(required=True, validate=validate.Length(min=1, max=2000))
    events = fields.List(fields.String(validate=validate.OneOf(_webhook_events())), required=True,
                         validate=validate.Length(min=1, max=len(_webhook_events())))


class WebhookSchema(Schema):
    """An endpoint as the API shows it (never its secret)."""

    id = fields.Integer()
    url = fields.String()
    events = fields.List(fields.String())
    created_by = fields.String()
    created_at = fields.AwareDateTime()
    enabled = fields.Function(lambda endpoint: endpoint.disabled_at is None)
    disabled_at = fields.AwareDateTime(allow_none=True)
    disabled_reason = fields.String(allow_none=True)
    previous_secret_expires_at = fields.Function(
        lambda endpoint: endpoint.previous_expires_at.isoformat() if endpoint.previous_expires_at else None)


class WebhookSecretSchema(WebhookSchema):
    """An endpoint when it is made or its secret rotated: the secret, shown this once."""

    secret = fields.String()


class WebhookListSchema(Schema):
    items = fields.List(fields.Nested(WebhookSchema))


class DeliveryQuerySchema(Schema):
    before = fields.Integer(validate=validate.Range(min=1, max=2 ** 63 - 1))
    limit = fields.Integer(load_default=lambda: min(20, current_app.config["MAX_PAGE_SIZE"]), validate=_page_size)


class DeliverySchema(Schema):
    id = fields.Integer()
    message_id = fields.String()
    type = fields.Function(lambda delivery: delivery.message.type)
    status = fields.String()
    created_at = fields.AwareDateTime()
    next_attempt_at = fields.AwareDateTime(allow_none=True)
    attempts = fields.List(fields.Dict(keys=fields.String()))


class DeliveryPageSchema(Schema):
    items = fields.List(fields.Nested(DeliverySchema))
    has_more = fields.Boolean()
    next_before = fields.Integer(allow_none=True)
