"""The operator services in bulk (``accounts.operators.create_players``, ``transfers_in``,
``open_sessions``) write the rows their one-by-one forms (``upsert_player``, ``transfer``,
``open_session``) write, and refuse what those refuse, writing nothing then."""

from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model

from accounts.exceptions import CurrencyNotAllowed, InvalidRequest, UnknownPlayer, WrongWalletMode
from accounts.models import Account, LedgerEntry, LedgerTransaction, Operator, Player, PlayerSession
from accounts.operators import (
    create_operator,
    create_players,
    open_session,
    open_sessions,
    players_in_session,
    token_hash,
    transfer,
    transfers_in,
    upsert_player,
)
from tests.factories import CurrencyFactory
from wagering.selectors import has_open_bets

pytestmark = pytest.mark.django_db(transaction=True)


def _operator(code, mode=Operator.WalletMode.TRANSFER):
    for currency in ("EUR", "USD"):
        CurrencyFactory(code=currency)
    wallet = {"wallet_url": "https://w.example/", "wallet_secret": "s"} if mode == Operator.WalletMode.SEAMLESS else {}
    return create_operator(code=code, wallet_mode=mode, currencies=["EUR", "USD"], **wallet)[0]


def _rows(operator, code):
    """What a player's creation wrote: its user, its player row and its wallets, ids left out."""
    player = Player.objects.select_related("user").get(operator=operator, code=code)
    user = player.user
    return ((user.username, user.email, user.has_usable_password(), user.is_staff, user.is_superuser, user.is_active),
            (player.game_code, player.account_kind, player.display_name),
            sorted(Account.objects.filter(player=player).values_list("kind", "currency_id", "operator_id", "balance",
                                                                     "journal", "name", "chain_head")))


@pytest.mark.parametrize("mode", [Operator.WalletMode.TRANSFER, Operator.WalletMode.SEAMLESS])
def test_create_players_writes_what_upsert_player_writes_and_keeps_the_players_it_finds(mode):
    one, many = _operator("one", mode), _operator("many", mode)
    for code, kind in (("p1", "real"), ("p2", "trial")):
        upsert_player(operator=one, code=code, account_kind=kind, currencies=["EUR", "USD"],
                      has_open_bets=has_open_bets)
    upsert_player(operator=many, code="p2", account_kind="trial", currencies=["EUR"],
                  has_open_bets=has_open_bets)  # no USD wallet yet

    made = create_players(operator=many, players={"p1": "real", "p2": "trial"}, currencies=["EUR", "USD"])

    assert set(made) == {"p1", "p2"} and all(isinstance(p, Player) and p.pk for p in made.values())
    for code in ("p1", "p2"):
        mine, theirs = _rows(one, code), _rows(many, code)
        assert mine[0][1:] == theirs[0][1:] and mine[1][1:] == theirs[1][1:]
        assert [w[:2] + w[3:] for w in mine[2]] == [w[:2] + w[3:] for w in theirs[2]]
    assert _rows(many, "p1")[0][0] == "player:many:p1" and _rows(many, "p1")[1][0] == "many:p1"
    assert create_players(operator=many, players={"p1": "real"}, currencies=["EUR"]) == {"p1": made["p1"]}
    assert Account.objects.filter(operator=many, kind=Account.Kind.WALLET).count() == 4


def test_create_players_refuses_a_bad_code_kind_or_currency_and_writes_nothing():
    operator = _operator("acme")
    users = get_user_model().objects.count()
    for players, currencies, error in (({"ok": "real", "no way": "real"}, ["EUR"], InvalidRequest),
                                       ({"ok": "banker"}, ["EUR"], InvalidRequest),
                                       ({"ok": "real"}, ["GBP"], CurrencyNotAllowed)):
        with pytest.raises(error):
            create_players(operator=operator, players=players, currencies=currencies)
    assert (Player.objects.count(), get_user_model().objects.count()) == (0, users)


def _ledger(key):
    txn = LedgerTransaction.objects.get(key=key)
    return ((txn.kind, txn.currency_id, txn.memo),
            sorted(LedgerEntry.objects.filter(transaction=txn).values_list("account__kind", "amount", "balance_after")))


def test_transfers_in_post_what_transfer_posts_once_per_transfer_id():
    operator = _operator("acme")
    create_players(operator=operator, players={"p1": "real", "p2": "real"}, currencies=["EUR", "USD"])
    transfer(operator=operator, transfer_id="T-1", player="p1", currency="EUR", amount="12.50", direction="in")

    posted = transfers_in(operator=operator, transfers=[("T-2", "p2", "EUR", "12.50"), ("T-3", "p2", "USD", "3.00"),
                                                        ("T-1", "p1", "EUR", "12.50")])

    assert [t.key for t in posted] == ["transfer:acme:T-2", "transfer:acme:T-3", "transfer:acme:T-1"]
    assert _ledger("transfer:acme:T-2")[1] == _ledger("transfer:acme:T-1")[1]
    assert _ledger("transfer:acme:T-2")[0] == ("deposit", "EUR", "acme transfer T-2")
    assert _ledger("transfer:acme:T-1")[0] == ("deposit", "EUR", "acme transfer T-1")
    balances = dict(Account.objects.filter(kind=Account.Kind.WALLET, player__code="p2")
                    .values_list("currency_id", "balance"))
    assert balances == {"EUR": Decimal("12.50"), "USD": Decimal("3.00")}
    assert LedgerTransaction.objects.filter(key="transfer:acme:T-1").count() == 1  # posted once


def test_transfers_in_refuse_an_unknown_player_a_missing_wallet_or_a_seamless_operator_and_write_nothing():
    operator = _operator("acme")
    create_players(operator=operator, players={"p1": "real"}, currencies=["EUR"])
    for transfers, error in (([("T-1", "p1", "EUR", "1.00"), ("T-2", "nobody", "EUR", "1.00")], UnknownPlayer),
                             ([("T-1", "p1", "USD", "1.00")], CurrencyNotAllowed),
                             ([("bad id", "p1", "EUR", "1.00")], InvalidRequest)):
        with pytest.raises(error):
            transfers_in(operator=operator, transfers=transfers)
    assert not LedgerTransaction.objects.filter(key__startswith="transfer:").exists()
    with pytest.raises(WrongWalletMode):
        transfers_in(operator=_operator("east", Operator.WalletMode.SEAMLESS), transfers=[])


def test_open_sessions_open_what_open_session_opens():
    operator = _operator("acme")
    players = create_players(operator=operator, players={"p1": "real", "p2": "real", "p3": "real"},
                             currencies=["EUR"])
    open_session(operator=operator, player="p3", currency="EUR")

    tokens = open_sessions(operator=operator, players=["p1", "p2"], currency="EUR")

    assert set(tokens) == {"p1", "p2"}
    sessions = {s.player.code: s for s in PlayerSession.objects.select_related("player")}
    assert sessions["p1"].token_hash == token_hash(tokens["p1"])
    assert (sessions["p1"].expires_at - sessions["p1"].last_used_at
            == sessions["p3"].expires_at - sessions["p3"].last_used_at)
    assert players_in_session([p.pk for p in players.values()], "EUR") == {p.pk for p in players.values()}
    for players_, currency, error in ((["p1", "nobody"], "EUR", UnknownPlayer), (["p1"], "USD", CurrencyNotAllowed)):
        with pytest.raises(error):
            open_sessions(operator=operator, players=players_, currency=currency)
    assert PlayerSession.objects.count() == 3
