"""A record's JSON: what ``GET /api/v1/records/{id}`` shows, and a webhook's ``data``
(:data:`record_json`), made in one place for the routes and the services."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, fields, missing

from api.records.times import unpack_times


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
