"""Migration operations the apps share: beat jobs created when missing, rows made immutable, SQL
run on PostgreSQL only, and the prefix-match indexes Django adds there dropped.

Both are ``RunPython`` operations for hand-written migrations (a migration that uses
``beat_jobs`` depends on django-celery-beat's migrations; one that uses ``immutable_rows``, on
``accounts`` 0002, which defines the trigger function)."""

from django.db import migrations


def beat_jobs(*jobs):
    """Create the django-celery-beat interval jobs ``jobs`` (``(name, task, every, period)``, e.g.
    ``("settlement: reconcile the ledger", "settlement.reconcile_ledger", 1, "hours")``) whose task
    has no job yet, enabled; an existing job is never changed (operators edit them in the admin).
    Reversed by deleting the jobs of those tasks."""
    tasks = [task for _, task, _, _ in jobs]

    def create(apps, schema_editor):
        IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
        PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
        for name, task, every, period in jobs:
            if not PeriodicTask.objects.filter(task=task).exists():
                interval, _ = IntervalSchedule.objects.get_or_create(every=every, period=period)
                PeriodicTask.objects.create(name=name, task=task, interval=interval, enabled=True)

    def delete(apps, schema_editor):
        apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(task__in=tasks).delete()

    return migrations.RunPython(create, delete)


def immutable_rows(table):
    """On PostgreSQL, make the rows of ``table`` (its name) impossible to update or delete, whatever
    code tries: trigger ``<table less its app prefix>_immutable`` calling ``ledger_row_immutable()``
    (TRUNCATE, used only by test teardown, is not affected). Nothing on other databases. Reversed
    by dropping the trigger."""
    trigger = f"{table.split('_', 1)[1]}_immutable"

    def forwards(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(f"CREATE TRIGGER {trigger} BEFORE UPDATE OR DELETE ON {table} "
                                  "FOR EACH ROW EXECUTE FUNCTION ledger_row_immutable()", params=None)

    def backwards(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(f"DROP TRIGGER IF EXISTS {trigger} ON {table}", params=None)

    return migrations.RunPython(forwards, backwards)


def postgresql_only(sql, reverse):
    """Run ``sql`` (statements of PostgreSQL's own: functions, triggers, indexes) on PostgreSQL and
    nothing on other databases; reversed by ``reverse``."""

    def forwards(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(sql, params=None)

    def backwards(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(reverse, params=None)

    return migrations.RunPython(forwards, backwards)


def pattern_indexes_dropped(table, columns):
    """On PostgreSQL, drop the ``varchar_pattern_ops`` index of each of ``columns`` of ``table``
    (the ``<column>_like`` index Django adds beside a unique or indexed ``CharField``'s, for
    ``LIKE 'prefix%'`` outside the "C" collation; found by its definition, since Django names it
    by a hash) where no query matches a prefix: each row written no longer updates it. Nothing on
    other databases. Reversed by creating ``<table>_<column>_like`` for each of ``columns``."""
    patterns = ", ".join(f"'%({column} varchar_pattern_ops)%'" for column in columns)
    drop = f"""DO $$
        DECLARE name text;
        BEGIN
            FOR name IN SELECT indexname FROM pg_indexes
                        WHERE tablename = '{table}' AND schemaname = current_schema()
                          AND indexdef LIKE ANY (ARRAY[{patterns}])
            LOOP
                EXECUTE format('DROP INDEX %I', name);
            END LOOP;
        END $$"""
    create = "; ".join(f"CREATE INDEX {table}_{column}_like ON {table} ({column} varchar_pattern_ops)"
                       for column in columns)
    return postgresql_only(drop, create)
