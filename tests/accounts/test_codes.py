"""Issue 20: operator, studio and table codes are unique whatever their case (``east`` and
``EAST`` cannot both be operators), the staff's commands find them whatever the case typed, and a
database with codes that clash refuses the migration with their names; players' codes, the
operator's own identifiers, stay case-sensitive."""

from io import StringIO

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import IntegrityError, connection, transaction
from django.db.migrations.executor import MigrationExecutor

from accounts.models import Operator, Player
from accounts.operators import create_operator, upsert_player
from tables.models import Studio, Table
from tests.factories import TableFactory
from wagering.selectors import has_open_bets


def test_an_operator_code_is_unique_whatever_its_case(db):
    create_operator(code="east")
    with pytest.raises(ValidationError, match="in any case"):
        create_operator(code="EAST")
    with pytest.raises(IntegrityError), transaction.atomic():
        Operator.objects.create(code="East", name="East")
    assert list(Operator.objects.values_list("code", flat=True).filter(code__iexact="east")) == ["east"]


def test_the_staff_commands_find_an_operator_whatever_the_case_typed(db, tmp_path):
    create_operator(code="east")
    with pytest.raises(CommandError, match="exists already"):
        call_command("create_operator", "EAST", stdout=StringIO())
    out = StringIO()
    call_command("create_studio_agreement", "default", "EAST", stdout=out)
    assert "operator east's players" in out.getvalue()
    call_command("export_records", "--from", "2026-01-01", "--to", "2026-01-01", "--operator", "East",
                 "--out", str(tmp_path / "records"), stdout=StringIO())
    assert (tmp_path / "records" / "manifest.json").exists()


def test_player_codes_are_the_operators_own_and_stay_case_sensitive(db):
    operator, _ = create_operator(code="west")
    upsert_player(operator=operator, code="Ann", has_open_bets=has_open_bets)
    upsert_player(operator=operator, code="ann", has_open_bets=has_open_bets)
    assert sorted(Player.objects.filter(operator=operator).values_list("game_code", flat=True)) == [
        "west:Ann", "west:ann"]


def test_the_migration_names_operator_codes_that_clash_and_applies_nothing(transactional_db):
    before, after = ("accounts", "0010_operator_time_zone"), ("accounts", "0011_operator_code_unique_ignoring_case")
    executor = MigrationExecutor(connection)
    executor.migrate([before])
    old = MigrationExecutor(connection).loader.project_state([before]).apps.get_model("accounts", "Operator")
    old.objects.create(code="north", name="n")
    old.objects.create(code="NORTH", name="N")
    try:
        with pytest.raises(ValueError, match="'NORTH', 'north'"):
            MigrationExecutor(connection).migrate([after])
    finally:
        old.objects.filter(code="NORTH").delete()
        latest = MigrationExecutor(connection)
        latest.migrate(latest.loader.graph.leaf_nodes())  # every later migration back too, for the next tests
    with pytest.raises(IntegrityError), transaction.atomic():
        Operator.objects.create(code="North", name="N")


def test_studio_and_table_codes_are_unique_whatever_their_case_and_commands_find_them(db):
    """Studios' and tables' codes are given by the provider's staff and seen by every tenant too:
    the same rule. The staff's commands find them whatever the case typed; the game-server API
    takes a table's code exactly as the platform gave it (it can only ever match one table)."""
    call_command("create_game_server_key", "studio-b", "--create", "Studio B", stdout=StringIO())
    out = StringIO()
    call_command("create_game_server_key", "STUDIO-B", "--create", "again", stdout=out)
    assert "of studio studio-b" in out.getvalue() and Studio.objects.filter(code__iexact="studio-b").count() == 1
    with pytest.raises(IntegrityError), transaction.atomic():
        Studio.objects.create(code="Studio-B", name="B")
    table = TableFactory(code="cl-9")
    with pytest.raises(IntegrityError), transaction.atomic():
        TableFactory(code="CL-9")
    with pytest.raises(ValidationError, match="in any case"):
        Table(code="Cl-9", name="x", studio=table.studio, variant=table.variant, currency=table.currency).full_clean()
    call_command("rtp", "--table", "CL-9", stdout=StringIO())
    create_operator(code="east")
    out = StringIO()
    call_command("create_studio_agreement", "Studio-B", "east", stdout=out)
    assert "studio studio-b's tables" in out.getvalue()
