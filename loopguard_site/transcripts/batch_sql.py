"""Raw-SQL statements for many rows at once, beside `event_rows` (which
stores events the same way): where Django's ORM spends more time building a
statement than the database spends running it.

`rows_locked_with` locks many rows, each read with its one-to-one row of
another table, in one `SELECT ... FOR UPDATE`; `rows_claim` takes the rows
of a queue (a replay's runs) for one task and says which it took; `rows_update` saves fields of
many rows, each its own values, in one `UPDATE ... FROM unnest(...)` (or
`VALUES`, on SQLite) per
(model, fields, rows) (Django's `bulk_update` builds a CASE per field and
row, milliseconds of Python a row); on PostgreSQL all of them in one round
trip.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from operator import attrgetter

from django.db import connection, connections, models
from django.db.models.base import ModelState
from django.db.models.signals import post_init, pre_init

RowsUpdate = tuple[type[models.Model], list[str], list[models.Model]]


def rows_update(*updates: RowsUpdate, before: Sequence[tuple[str, list]] = ()) -> None:
    """Save `fields` of each of `rows` (model instances with their pk), per
    (model, fields, rows), after the statements `before` (SQL, parameters).
    On PostgreSQL every statement goes in one round trip (Django's cursor
    binds parameters client-side, so one execute takes several statements);
    SQLite runs them one by one, in process."""
    statements = [*before, *(_update_statement(*update) for update in updates if update[2])]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            if statements:
                cursor.execute("; ".join(sql for sql, _ in statements), [v for _, values in statements for v in values])
        else:
            for sql, values in statements:
                cursor.execute(sql, values)


def _update_statement(model: type[models.Model], fields: list[str], objects: list[models.Model]) -> tuple:
    """On PostgreSQL the rows come as one array per column (`unnest`): the
    statement's text is the same whatever the number of rows, so psycopg
    parses it once per process, where a `VALUES` list of a placeholder per
    value was parsed again for every batch (a third of a live batch's time).
    A column whose field prepares values as Django's own integer or text
    fields do, holding only ints (strs), goes as it is: preparing each value
    (five calls) gave it back unchanged, and took a live batch's thread 5 %
    of its time."""
    columns, (head, tail), unnest = _update_text(connection.alias, model, tuple(fields))
    database = connections[connection.alias]  # not the proxy: it looks the connection up at every attribute
    values = []
    for column, read, unchanged in columns:
        column_values = list(map(read, objects))
        if column is not None and not (unchanged is not None and set(map(type, column_values)) <= {unchanged}):
            column_values = [column.get_db_prep_save(value, database) for value in column_values]
        values.append(column_values)
    if unnest:
        return head + unnest + tail, [_array_param(column_values) for column_values in values]
    row = "(" + ", ".join(["%s"] * len(columns)) + ")"
    parameters = [v for row in zip(*values, strict=True) for v in row]
    return f"{head}(VALUES {', '.join([row] * len(objects))}) AS v{tail}", parameters


# Django's own preparation of a value for the database, by what the field's
# class does at each of its three steps -> the type of value it gives back
# unchanged (an int from an integer field: psycopg's wrapper of it aside,
# which the text of an array literal does not keep; a str from a text field).
_UNCHANGED = {
    (models.Field.get_db_prep_save, models.IntegerField.get_db_prep_value, models.IntegerField.get_prep_value): int,
    (models.Field.get_db_prep_save, models.Field.get_db_prep_value, models.CharField.get_prep_value): str,
}


def _unchanged_type(field: models.Field) -> type | None:
    kind = type(field)
    return _UNCHANGED.get((kind.get_db_prep_save, kind.get_db_prep_value, kind.get_prep_value))


@functools.cache
def _update_text(
    alias: str, model: type[models.Model], fields: tuple[str, ...]
) -> tuple[list[tuple[models.Field | None, Callable, type | None]], tuple[str, str], str | None]:
    """`_update_statement`'s columns (the key first: a field to prepare
    values with, None for the key, which goes as it is; how to read the
    value from an instance; the type `_unchanged_type` lets through), its
    text before and after the source of its rows, and on PostgreSQL that
    source (the same for any number of rows): built once per process (a
    live batch of a few rows spent more time building the text than the
    rows)."""
    database = connections[alias]
    quote = database.ops.quote_name
    table, key = quote(model._meta.db_table), quote(model._meta.pk.column)
    fields_set = [model._meta.get_field(name) for name in fields]
    columns = [(None, attrgetter(model._meta.pk.attname), None)]
    columns += [(field, attrgetter(field.attname), _unchanged_type(field)) for field in fields_set]
    sets = ", ".join(f"{quote(field.column)} = v.column{n}" for n, field in enumerate(fields_set, start=2))
    text = (f"UPDATE {table} SET {sets} FROM ", f" WHERE {table}.{key} = v.column1")
    if database.vendor != "postgresql":
        return columns, text, None
    names = ", ".join(f"column{n}" for n in range(1, len(columns) + 1))
    types = [model._meta.pk.db_type(database), *(field.db_type(database) for field in fields_set)]
    arrays = ", ".join(f"%s::{db_type}[]" for db_type in types)
    return columns, text, f"unnest({arrays}) AS v({names})"


def rows_locked_with(
    model: type[models.Model],
    ids: Iterable[int],
    related: type[models.Model],
    fields: Sequence[str],
    *,
    own: Sequence[str] | None = None,
) -> list[tuple[models.Model, models.Model | None]]:
    """The rows of `model` whose keys are `ids`, locked until the
    transaction ends (in key order, as every caller locks them: two never
    wait for each other in a circle; SQLite locks the whole database
    instead), each with its row of `related`, whose first field of `fields`
    is the one-to-one key to `model`: only `fields` of it (and its primary
    key) are read, the others when first used; None where there is none.
    Of `model`, only the fields `own` (and its key) when given, else all.
    A key with no row is left out. Written as SQL: for a few rows, Django's
    compiler spent more time building the query than the database spent
    running it."""
    ids = sorted(ids)
    if not ids:
        return []
    own_fields, related_fields, link_at, (head, tail), any_key = _locking_read_text(
        connection.alias, model, related, tuple(fields), None if own is None else tuple(own)
    )
    if any_key:  # PostgreSQL: one text whatever the number of ids, psycopg parses it once
        chosen, params = any_key, [_array_param(ids)]
    else:
        chosen, params = f"IN ({', '.join(['%s'] * len(ids))})", ids
    with connection.cursor() as cursor:
        cursor.execute(f"{head} {chosen}{tail}", params)
        rows = cursor.fetchall()
    own_row, related_row = _row_reader(model, own_fields), _row_reader(related, related_fields)
    width = len(own_fields)
    return [(own_row(row[:width]), None if row[link_at] is None else related_row(row[width:])) for row in rows]


@functools.cache
def _locking_read_text(
    alias: str,
    model: type[models.Model],
    related: type[models.Model],
    fields: tuple[str, ...],
    own: tuple[str, ...] | None,
) -> tuple[list[models.Field], list[models.Field], int, tuple[str, str], str | None]:
    """`rows_locked_with`'s fields of `model` and of `related` as it reads
    them, the place in a row of the one-to-one key, its statement's text
    before and after the keys it chooses, and on PostgreSQL how it chooses
    them: built once per process."""
    database = connections[alias]
    quote = database.ops.quote_name
    link = related._meta.get_field(fields[0])
    own_fields, related_fields = _chosen_fields(model, own), _chosen_fields(related, fields)
    columns = [f"m.{quote(f.column)}" for f in own_fields] + [f"r.{quote(f.column)}" for f in related_fields]
    key = f"m.{quote(model._meta.pk.column)}"
    head = (
        f"SELECT {', '.join(columns)} FROM {quote(model._meta.db_table)} m"
        f" LEFT JOIN {quote(related._meta.db_table)} r ON r.{quote(link.column)} = {key} WHERE {key}"
    )
    tail = f" ORDER BY {key}" + (" FOR UPDATE OF m" if database.features.has_select_for_update_of else "")
    any_key = f"= ANY(%s::{model._meta.pk.db_type(database)}[])" if database.vendor == "postgresql" else None
    link_at = len(own_fields) + related_fields.index(link)
    return own_fields, related_fields, link_at, (head, tail), any_key


def _chosen_fields(model: type[models.Model], names: Sequence[str] | None) -> list[models.Field]:
    """The concrete fields of `model` named in `names` (all when None), with
    its primary key, in the model's order (as `Model.from_db` takes values)."""
    return [f for f in model._meta.concrete_fields if names is None or f.name in names or f.primary_key]


def rows_claim(
    model: type[models.Model], ids: Sequence[int], *, claim: str, now: datetime, durable: bool = True
) -> set[int]:
    """Claim for the task `claim` those of the rows `ids` of `model` (a queue
    with fields `state`, `claimed_by`, `attempts`, `started`) that are
    queued, or running under this same claim (the task again after a
    redelivery): each becomes running, claimed by `claim`, with one attempt
    more, started `now`. The ids claimed. One statement with RETURNING: a
    replay claims each session's runs as it reaches it, and Django's
    compiler spent four times the database's time building the UPDATE.

    `durable=False` (call it outside a transaction): on PostgreSQL the
    claim's commit does not wait for the disk (`synchronous_commit` off for
    it alone, sent in the same round trip: a query of several statements
    is one transaction); for a claim that a crash may lose, as the queue
    then still holds the rows."""
    if not ids:
        return set()
    quote = connection.ops.quote_name
    fields = ("state", "claimed_by", "attempts", "started")
    column = {name: quote(model._meta.get_field(name).column) for name in fields}
    key = quote(model._meta.pk.column)
    if connection.vendor == "postgresql":  # one text whatever the number of ids: psycopg parses it once
        chosen, id_params = f"{key} = ANY(%s::{model._meta.pk.db_type(connection)}[])", [_array_param(ids)]
    else:
        chosen, id_params = f"{key} IN ({', '.join(['%s'] * len(ids))})", list(ids)
    state, claimed_by = column["state"], column["claimed_by"]
    sql = (
        f"UPDATE {quote(model._meta.db_table)} SET {state} = %s, {claimed_by} = %s,"
        f" {column['attempts']} = {column['attempts']} + 1, {column['started']} = %s"
        f" WHERE {chosen} AND ({state} = %s OR ({state} = %s AND {claimed_by} = %s)) RETURNING {key}"
    )
    started = model._meta.get_field("started").get_db_prep_save(now, connection)
    running, queued = model.State.RUNNING, model.State.QUEUED
    params = [running, claim, started, *id_params, queued, running, claim]
    unflushed = not durable and connection.vendor == "postgresql"
    with connection.cursor() as cursor:
        cursor.execute(("SET LOCAL synchronous_commit TO OFF; " if unflushed else "") + sql, params)
        if unflushed:
            cursor.nextset()  # the UPDATE's rows come after the SET's empty result
        return {row[0] for row in cursor.fetchall()}


def _array_param(values: Sequence) -> str | list:
    """A PostgreSQL array parameter (cast by the statement: `%s::type[]`)
    as the text of an array literal, `{1,"a \\"b\\"",NULL}`, when every
    value is None, a number, a string or a time; else the list, for psycopg
    to adapt. psycopg, binding client-side, scans a list for its element
    type and quotes each value in Python: 214 µs for the eight lists of 30
    values a live batch of 30 sessions sends, 38 µs as texts (building
    them included)."""
    kinds = set(map(type, values))
    if all(issubclass(kind, int | float) for kind in kinds):  # bool too: True reads as true
        items = map(str, values)
    elif all(issubclass(kind, _LITERAL) for kind in kinds):
        quoted = {value: _array_item(value) for value in set(values)}  # a batch repeats its states and its time
        items = map(quoted.__getitem__, values)
    else:
        return list(values)
    return "{" + ",".join(items) + "}"


_LITERAL = (int, float, str, datetime, type(None))


def _array_item(value: object) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, int | float):
        return str(value)
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _row_reader(model: type[models.Model], fields: Sequence[models.Field]) -> Callable[[Sequence], models.Model]:
    """Builds an instance of `model` from the database values of `fields`
    (the others deferred), as a queryset does. Without `Model.__init__`
    where no receiver listens to its signals: its signals and its pass over
    every field cost more than the read itself (a live batch locks its
    sessions with their streams, two instances a row)."""
    alias = connection.alias
    convert = _row_converter(alias, tuple(fields))
    names = [f.attname for f in fields]
    if pre_init.has_listeners(model) or post_init.has_listeners(model):
        return lambda values: model.from_db(alias, names, convert(values))

    def read(values: Sequence) -> models.Model:
        instance = model.__new__(model)
        instance.__dict__.update(zip(names, convert(values), strict=True))
        state = instance._state = ModelState()
        state.adding, state.db = False, alias
        return instance

    return read


@functools.cache
def _row_converter(alias: str, fields: tuple[models.Field, ...]) -> Callable[[Sequence], list]:
    """Turns database values of `fields` into Python values, as a queryset
    does (built once per process, from the first connection of the alias
    that asks: every connection of an alias has the same converters; looked
    up for each batch, they cost a live batch of a few rows more than
    converting them)."""
    database = connections[alias]
    converters = [
        (index, database.ops.get_db_converters(column) + field.get_db_converters(database), column)
        for index, field in enumerate(fields)
        for column in [field.get_col(field.model._meta.db_table)]
    ]
    converters = [(index, functions, column) for index, functions, column in converters if functions]

    def convert(values: Sequence) -> list:
        values = list(values)
        for index, functions, column in converters:
            for function in functions:
                values[index] = function(values[index], column, connection)
        return values

    return convert
