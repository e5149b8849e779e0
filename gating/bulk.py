"""Hand-written set-based SQL for the hot paths, where the ORM's per-row work costs more
than the database's: COPY for inserts and one UPDATE … FROM (VALUES …) for updates, on
PostgreSQL. Other databases take the ORM's bulk methods.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, partial
from operator import itemgetter

import orjson
from django.db import DataError, connection
from django.db.models import (
    AutoField,
    BooleanField,
    CharField,
    DateTimeField,
    FloatField,
    ForeignKey,
    IntegerField,
    JSONField,
    Model,
    TextField,
)
from django.db.models.base import ModelState
from django.db.models.signals import post_init, pre_init
from psycopg.types.json import Jsonb


def _json_bytes(value) -> bytes:
    # orjson is ten times faster than json here, and PostgreSQL parses either's text into
    # the same jsonb; json takes what orjson refuses (integers beyond 64 bits).
    try:
        return orjson.dumps(value)
    except orjson.JSONEncodeError:
        return json.dumps(value).encode()


def jsonb(value) -> Jsonb | None:
    """A JSON column's value as psycopg sends it, in a statement or a binary COPY."""
    # None is SQL NULL, as Django stores it for a nullable JSONField.
    return None if value is None else Jsonb(value, _json_bytes)


# Fields whose Python values psycopg adapts as they are: on PostgreSQL their
# get_db_prep_save returns its input unchanged, and at a million rows calling it costs
# more than the COPY itself.
_PASS_THROUGH_FIELDS = (
    BooleanField,
    CharField,
    DateTimeField,
    FloatField,
    TextField,
)


def _range_checked(field: IntegerField) -> Callable:
    """A check that ``field``'s value fits its column. A binary COPY sends integers as
    fixed-width bytes, and psycopg wraps one that does not fit (2**31 arrives as -2**31)
    where PostgreSQL would refuse it in text."""
    low, high = connection.ops.integer_field_range(field.get_internal_type())
    column = f"{field.model._meta.db_table}.{field.column}"

    def check(value):
        if value is not None and not low <= value <= high:
            raise DataError(f"{value} is out of range for {column} ({low} to {high}).")
        return value

    return check


def _prep_for(field):
    if isinstance(field, JSONField):
        return jsonb
    if isinstance(field, ForeignKey):
        if isinstance(field.target_field, IntegerField):
            # Another row's id, read from the database: it fits.
            return None
    elif isinstance(field, IntegerField):
        return _range_checked(field)
    elif isinstance(field, _PASS_THROUGH_FIELDS):
        return None
    return partial(field.get_db_prep_save, connection=connection)


@cache
def _defaults(model: type[Model]) -> tuple[dict, tuple, frozenset]:
    """A model's fixed defaults by attname, the fields whose default is made anew for each
    instance (a callable, such as ``dict``), and every attname."""
    fields = model._meta.concrete_fields
    made_anew = tuple(f for f in fields if f.has_default() and callable(f.default))
    fixed = {f.attname: f.get_default() for f in fields if f not in made_anew}
    return fixed, made_anew, frozenset(f.attname for f in fields)


def unsaved(model: type[Model], values: dict) -> Model:
    """``model(**values)`` for values given by attname, at a fifth of the cost.

    Built as Django builds an unpickled instance, without ``Model.__init__``, whose
    per-field descriptor calls and signals cost more than scoring an output: the gate
    builds one for every output. Fields not in ``values`` take their defaults, as in the
    constructor. While any pre_init or post_init receiver is connected, instances go
    through the constructor, which those receivers rely on.
    """
    # Any receiver, for any model: has_listeners(model) would cost a third of the saving,
    # and this project connects none.
    if pre_init.receivers or post_init.receivers:
        return model(**values)
    fixed, made_anew, attnames = _defaults(model)
    if not values.keys() <= attnames:
        # As the constructor would: a misspelt name must not leave its column's default.
        unknown = ", ".join(sorted(values.keys() - attnames))
        raise TypeError(f"{model.__name__} has no field named {unknown}")
    obj = model.__new__(model)
    state = obj.__dict__
    state.update(fixed)
    for field in made_anew:
        if field.attname not in values:
            state[field.attname] = field.get_default()
    state.update(values)
    obj._state = ModelState()
    return obj


@dataclass(frozen=True)
class Table:
    """A model's columns and how to put each value into SQL, for the hand-written inserts."""

    name: str
    attnames: tuple[str, ...]
    quoted: str
    columns: str
    placeholders: str
    # The primary key's column, written apart from the others, and whether its values
    # come from the table's sequence rather than from the instances.
    pk_column: str
    pk_from_sequence: bool
    # PostgreSQL's names for the types of (pk, *columns), for a binary COPY.
    copy_types: tuple[str, ...]
    # The row's values straight out of an instance's __dict__, in column order.
    values_of: Callable[[dict], tuple]
    # (position, prep) of the columns whose values need converting.
    conversions: tuple[tuple[int, Callable], ...]

    @classmethod
    @cache
    def of(cls, model, *, exclude=()) -> Table:
        """The columns other than the primary key and those named in ``exclude``."""
        # A model's columns and preps never change while the process runs.
        pk = model._meta.pk
        fields = [
            f for f in model._meta.concrete_fields if f is not pk and f.attname not in exclude
        ]
        attnames = tuple(f.attname for f in fields)
        quote = connection.ops.quote_name
        # "varchar(200)" is a varchar to COPY: the length is checked by the server.
        db_types = [f.db_type(connection).split("(")[0] for f in [pk, *fields]]
        return cls(
            name=model._meta.db_table,
            attnames=attnames,
            quoted=quote(model._meta.db_table),
            columns=", ".join(quote(f.column) for f in fields),
            placeholders=", ".join(["%s"] * len(fields)),
            pk_column=pk.column,
            pk_from_sequence=isinstance(pk, AutoField),
            copy_types=tuple(db_types),
            # (itemgetter of one name returns the value, not a tuple.)
            values_of=itemgetter(*attnames) if len(attnames) > 1 else lambda d: (d[attnames[0]],),
            conversions=tuple(
                (i, prep) for i, prep in enumerate(_prep_for(f) for f in fields) if prep
            ),
        )

    def row(self, obj) -> list:
        # One C call for the values, then the few conversions: this runs for every output.
        row = list(self.values_of(obj.__dict__))
        for i, prep in self.conversions:
            row[i] = prep(row[i])
        return row


def copy_rows(cursor, table: Table, objs: list) -> None:
    """Insert ``objs`` with COPY, giving each its id from the table's sequence first
    where the table has one (otherwise the instances carry their keys).

    In PostgreSQL's binary format: the server parses no numbers or timestamps from text,
    and psycopg's per-column dumpers are fixed by the column types rather than looked up
    for every value.
    """
    if not objs:
        return
    if table.pk_from_sequence:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
            [table.name, table.pk_column, len(objs)],
        )
        for obj, (pk,) in zip(objs, cursor.fetchall(), strict=True):
            obj.pk = pk
    pk = connection.ops.quote_name(table.pk_column)
    statement = f"COPY {table.quoted} ({pk}, {table.columns}) FROM STDIN (FORMAT BINARY)"
    with cursor.cursor.copy(statement) as copy:
        copy.set_types(table.copy_types)
        for obj in objs:
            copy.write_row([obj.pk, *table.row(obj)])


def insert_rows(objs: list[Model]) -> None:
    """Save new ``objs`` (all of one model) and set their keys: ``bulk_create``, as COPY on
    PostgreSQL."""
    if not objs:
        return
    if connection.vendor != "postgresql":
        type(objs[0]).objects.bulk_create(objs)
        return
    with connection.cursor() as cursor, connection.wrap_database_errors:
        copy_rows(cursor, Table.of(type(objs[0])), objs)
    mark_saved(objs)


def mark_saved(objs: list[Model]) -> None:
    """Tell instances stored by hand-written SQL that they are in the database now, as
    ``save()`` would."""
    for obj in objs:
        obj._state.adding = False
        obj._state.db = connection.alias


# Rows per UPDATE statement: well below PostgreSQL's 65,535 parameters for any model here.
_UPDATE_ROWS = 2000


def update_rows(objs: list[Model], fields: list[str]) -> None:
    """Save ``fields`` of ``objs`` (all of one model): ``bulk_update`` in one statement.

    Django's bulk_update builds a CASE WHEN expression per object and field, which costs
    milliseconds of Python per object; on PostgreSQL this sends one
    ``UPDATE … FROM (VALUES …)`` per 2,000 rows instead.
    """
    if not objs:
        return
    model = type(objs[0])
    if connection.vendor != "postgresql":
        model.objects.bulk_update(objs, fields, batch_size=_UPDATE_ROWS)
        return
    opts = model._meta
    columns = [opts.pk, *(opts.get_field(name) for name in fields)]
    quote = connection.ops.quote_name
    # Every value is cast: NULLs and text literals in VALUES have no type of their own.
    row = "(" + ", ".join(f"%s::{f.db_type(connection)}" for f in columns) + ")"
    names = ", ".join(quote(f.column) for f in columns)
    assignments = ", ".join(f"{quote(f.column)} = v.{quote(f.column)}" for f in columns[1:])
    table, pk = quote(opts.db_table), quote(opts.pk.column)
    with connection.cursor() as cursor:
        for start in range(0, len(objs), _UPDATE_ROWS):
            batch = objs[start : start + _UPDATE_ROWS]
            cursor.execute(
                f"UPDATE {table} SET {assignments} "
                f"FROM (VALUES {', '.join([row] * len(batch))}) AS v ({names}) "
                f"WHERE {table}.{pk} = v.{pk}",
                [
                    f.get_db_prep_save(getattr(obj, f.attname), connection)
                    for obj in batch
                    for f in columns
                ],
            )
