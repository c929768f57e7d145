"""Issue 20, the findings left open: a studio bets only for the players of the operators it has an
agreement with (F2), its idempotency keys are its own (F4), and a replay with other content is a
409 ``idempotency_conflict`` however it comes (F7): a bet, an extra stake or a round's opening."""

from decimal import Decimal

import pytest

from accounts.models import Operator
from tables.models import Round, Studio, StudioAgreement
from tests.factories import BoundlessTableFactory, PlayerFactory, agree, operator_with_players
from wagering.models import Bet

from .conftest import studio_client
from .helpers import balance, deal_hand
from .test_api import open_round
from .test_hardening import json_error

pytestmark = pytest.mark.django_db
D = Decimal


@pytest.fixture
def studio_b(db):
    """A second studio with a service account and a boundless table: ``(client, table)``."""
    studio = Studio.objects.create(code="studio-b", name="Studio B")
    return studio_client(studio, name="b-server"), BoundlessTableFactory(studio=studio)


def test_two_studios_use_one_key_each_for_its_own_bet(eur, game_client, studio_b):
    """F4: the same key at two studios' tables places two bets; each studio's replay answers its
    own bet, never the other's, and neither is a conflict of the other's."""
    b_client, b_table = studio_b
    anna, ben = PlayerFactory(funded="100.00"), PlayerFactory(funded="100.00")
    agree(ben.operator, b_table.studio)
    a_round, b_round = open_round(game_client, BoundlessTableFactory()), open_round(b_client, b_table)
    a_bet = {"key": "shared-key", "player": anna.code, "type": "main", "stake": "10.00"}
    b_bet = {"key": "shared-key", "player": ben.code, "type": "main", "stake": "20.00"}
    assert game_client.post(f"/api/game/v1/rounds/{a_round}/bets/", a_bet, format="json").status_code == 201
    placed = b_client.post(f"/api/game/v1/rounds/{b_round}/bets/", b_bet, format="json")
    assert placed.status_code == 201, placed.json()
    assert placed.json()["created"] and placed.json()["bets"][0]["player"] == ben.game_code
    replay = b_client.post(f"/api/game/v1/rounds/{b_round}/bets/", b_bet, format="json")
    assert replay.status_code == 200 and replay.json()["bets"][0]["id"] == placed.json()["bets"][0]["id"]
    # studio B replaying studio A's bet at its own table is its own new key's conflict, never A's bet
    theirs = b_client.post(f"/api/game/v1/rounds/{b_round}/bets/", a_bet, format="json")
    assert "shared-key" in json_error(theirs, 409, "idempotency_conflict")["detail"]
    assert anna.game_code not in theirs.content.decode()
    mine = game_client.post(f"/api/game/v1/rounds/{a_round}/bets/", a_bet, format="json")
    assert mine.status_code == 200 and mine.json()["bets"][0]["player"] == anna.game_code
    assert Bet.objects.filter(idempotency_key="shared-key").count() == 2
    assert (balance(anna), balance(ben)) == (D("90.00"), D("80.00"))


def test_an_extra_stake_replayed_on_other_cards_is_a_conflict(eur, game_client):
    """F7: a double replayed with its cards is the first answer (nothing debited twice); on other
    cards, alone or in a batch, it is 409 ``idempotency_conflict``, the bet placement's code."""
    player = PlayerFactory(funded="100.00")
    round_id = open_round(game_client, BoundlessTableFactory())
    game_client.post(f"/api/game/v1/rounds/{round_id}/bets/", {
        "key": "k", "player": player.code, "type": "main", "stake": "10.00"}, format="json")
    game_client.post(f"/api/game/v1/rounds/{round_id}/close/")
    deal_hand(Round.objects.get(pk=round_id), ["5H", "6D"])
    url = f"/api/game/v1/rounds/{round_id}/extras/"
    double = {"bet": "k", "kind": "double", "cards": ["5H", "6D"]}
    first, again = (game_client.post(url, double, format="json") for _ in range(2))
    assert (first.status_code, again.status_code) == (200, 200) and first.json() == again.json()
    other = json_error(game_client.post(url, {**double, "cards": ["4H", "6D"]}, format="json"), 409,
                       "idempotency_conflict")
    assert other["detail"] == "bet k's double (hand 1) was taken on cards 5H 6D, not 4H 6D"
    batch = game_client.post(url, {"extras": [double, {**double, "cards": ["5H", "5D"]}]}, format="json")
    assert batch.status_code == 207
    assert [r["error"] and r["error"]["code"] for r in batch.json()["results"]] == [None, "idempotency_conflict"]
    assert balance(player) == D("80.00")


def test_a_round_opened_again_with_another_shoe_or_burn_count_is_a_conflict(eur, game_client):
    """F7: the same opening again answers the round (200); the same external id with another
    shoe or burn count is 409 ``idempotency_conflict`` and opens nothing."""
    table = BoundlessTableFactory()
    url = f"/api/game/v1/tables/{table.code}/rounds/"
    opening = {"external_id": "R-1", "shoe": 3, "burn_count": 4}
    first, again = (game_client.post(url, opening, format="json") for _ in range(2))
    assert (first.status_code, again.status_code) == (201, 200) and first.json() == again.json()
    for changed in ({"burn_count": 5}, {"shoe": 4}, {"burn_count": 0}):
        body = json_error(game_client.post(url, {**opening, **changed}, format="json"), 409, "idempotency_conflict")
        assert body["detail"].startswith("round R-1 was opened on shoe 3 with burn count 4, not "), body
    assert table.rounds.count() == 1 and table.shoes.count() == 1


def test_a_studio_bets_only_for_the_players_of_operators_it_agreed_with(eur, game_client, studio_b):
    """F2: a player in session whose operator has no agreement with the table's studio gets the
    answer of an unknown player (no enumeration); agreed, the same bet is placed; the agreement
    of one studio opens no other's tables."""
    b_client, b_table = studio_b
    _, _, brand = operator_with_players("acme", ["p1"], funded="100.00")  # agrees with the default studio only
    code = brand["p1"].game_code
    b_round = open_round(b_client, b_table)
    url = f"/api/game/v1/rounds/{b_round}/bets/"
    bets = {"bets": [{"key": "k1", "player": code, "type": "main", "stake": "10.00"},
                     {"key": "k2", "player": "acme:nobody", "type": "main", "stake": "10.00"}]}
    refused = json_error(b_client.post(url, bets, format="json"), 422, "none_accepted")
    assert [(r["error"]["code"], r["error"]["detail"]) for r in refused["results"]] == [
        ("not_found", f"no player {c!r} in a live session in EUR") for c in (code, "acme:nobody")]
    assert not Bet.objects.exists() and balance(brand["p1"]) == D("100.00")
    agree(Operator.objects.get(code="acme"), b_table.studio)
    placed = b_client.post(url, bets["bets"][0], format="json")
    assert placed.status_code == 201 and balance(brand["p1"]) == D("90.00")
    StudioAgreement.objects.filter(studio__code="default").delete()
    a_round = open_round(game_client, BoundlessTableFactory())
    json_error(game_client.post(f"/api/game/v1/rounds/{a_round}/bets/", {
        "key": "k1", "player": code, "type": "main", "stake": "10.00"}, format="json"), 404, "not_found")


def test_studio_agreements_are_the_providers_page(client, admin_client, studio_b):
    """F2: the provider's staff make agreements on the admin's page; an operator's staff never
    see it (403)."""
    from accounts.models import OperatorStaff
    from adminkit.roles import SUPERVISOR
    from tests.factories import make_operator, otp_login

    operator, _, _ = operator_with_players("acme")
    studio = studio_b[1].studio
    add = admin_client.post("/admin/tables/studioagreement/add/", {"studio": studio.pk, "operator": operator.pk})
    assert add.status_code == 302 and StudioAgreement.objects.filter(studio=studio, operator=operator).exists()
    staff = make_operator(SUPERVISOR, username="acme-staff")
    OperatorStaff.objects.create(user=staff, operator=operator)
    otp_login(client, staff)
    for path in ("/admin/tables/studioagreement/", "/admin/tables/studioagreement/add/"):
        assert client.get(path).status_code == 403, path


def test_the_migration_agrees_the_operators_with_the_studios_that_took_their_bets(eur, studio_b):
    """F2: upgrading keeps every studio taking the bets it took: an agreement per operator and
    studio of the bets, and the default operator's with the default studio; no other."""
    import importlib

    from django.apps import apps

    from accounts.services import default_operator
    from wagering.placement import place_bet

    b_client, b_table = studio_b
    operator_with_players("idle", ["p1"], funded="100.00")  # in session, never bet
    _, _, brand = operator_with_players("acme", ["p1"], funded="100.00")
    agree(brand["p1"].operator, b_table.studio)
    place_bet(round_id=open_round(b_client, b_table), key="k",
              player=brand["p1"].game_code, type="main", stake="10.00")
    StudioAgreement.objects.all().delete()
    importlib.import_module("wagering.migrations.0009_studio_agreements_of_the_bets").agreements_of_the_bets(apps, None)
    assert set(StudioAgreement.objects.values_list("operator__code", "studio__code")) == {
        ("acme", "studio-b"), (default_operator().code, "default")}
