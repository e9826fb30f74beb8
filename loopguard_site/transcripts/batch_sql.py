"""Raw-SQL statements for many rows at once, beside `event_rows` (which
stores events the same way): where Django's ORM spends more time building a
statement than the database spends running it.

`rows_update` saves fields of many rows, each its own values, in one
`UPDATE ... FROM (VALUES ...)` per (model, fields, rows) (Django's
`bulk_update` builds a CASE per field and row, milliseconds of Python a
row); on PostgreSQL all of them in one round trip. `row_converter` turns
database values of raw `SELECT`s into Python values, as a queryset does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from django.db import connection, models

RowsUpdate = tuple[type[models.Model], list[str], list[models.Model]]


def rows_update(*updates: RowsUpdate) -> None:
    """Save `fields` of each of `rows` (model instances with their pk), per
    (model, fields, rows). On PostgreSQL every statement goes in one round
    trip (Django's cursor binds parameters client-side, so one execute takes
    several statements); SQLite runs them one by one, in process."""
    statements = [_update_statement(*update) for update in updates if update[2]]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            if statements:
                cursor.execute("; ".join(sql for sql, _ in statements), [v for _, values in statements for v in values])
        else:
            for sql, values in statements:
                cursor.execute(sql, values)


def _update_statement(model: type[models.Model], fields: list[str], objects: list[models.Model]) -> tuple:
    quote = connection.ops.quote_name
    table, key = quote(model._meta.db_table), quote(model._meta.pk.column)
    columns = [model._meta.get_field(name) for name in fields]
    sets = ", ".join(f"{quote(column.column)} = v.column{n}" for n, column in enumerate(columns, start=2))
    row = "(" + ", ".join(["%s"] * (len(columns) + 1)) + ")"
    values = []
    for obj in objects:
        values.append(obj.pk)
        values += (column.get_db_prep_save(getattr(obj, column.attname), connection) for column in columns)
    sql = (
        f"UPDATE {table} SET {sets} FROM (VALUES {', '.join([row] * len(objects))}) AS v"
        f" WHERE {table}.{key} = v.column1"
    )
    return sql, values


def row_converter(fields: Sequence[models.Field]) -> Callable[[Sequence], list]:
    """Turns database values of `fields` into Python values, as a queryset does."""
    converters = [
        (index, connection.ops.get_db_converters(column) + field.get_db_converters(connection), column)
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
