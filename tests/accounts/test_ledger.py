"""The double-entry ledger (issue "foundation"): every rule of posting, idempotency, funds,
currencies, immutability and reconciliation, on PostgreSQL."""

import itertools
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import IntegrityError, connection, transaction

from accounts import services as ledger
from accounts.exceptions import CurrencyMismatch, IdempotencyConflict, InsufficientFunds, InvalidAmount
from accounts.models import Account, Currency, LedgerEntry, LedgerTransaction, Operator, Player
from accounts.money import parse_amount
from accounts.reconcile import reconcile
from tables.engine.money import round_down

pytestmark = pytest.mark.django_db
_codes = itertools.count()


def make_player(kind=Player.Kind.REAL):
    n = next(_codes)
    user = get_user_model().objects.create(username=f"ledger-{n}")
    return ledger.create_player(user=user, code=f"lp-{n}", account_kind=kind)


@pytest.fixture
def eur(db):
    return Currency.objects.get_or_create(code="EUR", defaults={"minor_units": 2})[0]


@pytest.fixture
def fun(db):
    return Currency.objects.get_or_create(code="FUN", defaults={"minor_units": 2, "play_for_fun": True})[0]


@pytest.fixture
def wallet(eur):
    return ledger.wallet_for(player=make_player(), currency=eur)


@pytest.fixture
def house(eur):
    return ledger.house_account(name="table:T1", currency=eur, operator=ledger.default_operator())


def balance(account):
    account.refresh_from_db()
    return account.balance


def test_deposit_then_stake_and_return_are_exact(wallet, house):
    ledger.deposit(wallet=wallet, amount="0.10", key="dep:1")
    ledger.deposit(wallet=wallet, amount="0.20", key="dep:2")
    assert balance(wallet) == Decimal("0.30")
    ledger.deposit(wallet=wallet, amount="12.05", key="dep:3")
    ledger.post_stake(wallet=wallet, house=house, amount="12.35", key="stake:1")
    assert balance(wallet) == 0
    # RULES 5 [decision]: 12.35 x 1.5 = 18.525 pays 18.52 (rounded down by the engine's one helper)
    won = round_down(Decimal("12.35") * Decimal("1.5"))
    ledger.post_return(wallet=wallet, house=house, amount=won + Decimal("12.35"), key="payout:1")
    assert balance(wallet) == Decimal("30.87")
    entries = list(LedgerEntry.objects.filter(account=wallet).order_by("id").values_list("amount", "balance_after"))
    assert entries[-1] == (Decimal("30.87"), Decimal("30.87"))
    assert reconcile().ok


@pytest.mark.parametrize("bad", [0.1, 1.0, True, "abc", "NaN", "Infinity", "1.005", "-1", "0", "1e20", None, [1]])
def test_bad_amounts_are_rejected_and_move_nothing(wallet, bad):
    with pytest.raises(InvalidAmount):
        ledger.deposit(wallet=wallet, amount=bad, key="dep:bad")
    assert balance(wallet) == 0 and not LedgerTransaction.objects.filter(key="dep:bad").exists()


def test_parse_amount_quantises_to_the_minor_unit():
    assert parse_amount("12.3", 2) == Decimal("12.30") and str(parse_amount(5, 0)) == "5"
    with pytest.raises(InvalidAmount):
        parse_amount("18.525", 2)


def test_same_key_twice_returns_the_first_transaction_and_moves_money_once(wallet):
    first = ledger.deposit(wallet=wallet, amount="10.00", key="dep:x")
    again = ledger.deposit(wallet=wallet, amount="10", key="dep:x")
    assert first.pk == again.pk and balance(wallet) == Decimal("10.00")
    assert LedgerTransaction.objects.filter(key="dep:x").count() == 1


def test_same_key_with_a_different_amount_raises_and_moves_nothing(wallet, house):
    ledger.deposit(wallet=wallet, amount="10.00", key="dep:y")
    with pytest.raises(IdempotencyConflict):
        ledger.deposit(wallet=wallet, amount="11.00", key="dep:y")
    with pytest.raises(IdempotencyConflict):  # same key, other kind of movement
        ledger.post_stake(wallet=wallet, house=house, amount="10.00", key="dep:y")
    assert balance(wallet) == Decimal("10.00")


def test_a_wallet_never_goes_below_zero(wallet, house):
    ledger.deposit(wallet=wallet, amount="5.00", key="dep:z")
    with pytest.raises(InsufficientFunds):
        ledger.post_stake(wallet=wallet, house=house, amount="5.01", key="stake:z")
    with pytest.raises(InsufficientFunds):
        ledger.withdraw(wallet=wallet, amount="6", key="wd:z")
    assert balance(wallet) == Decimal("5.00") and not LedgerTransaction.objects.filter(key="stake:z").exists()


def test_database_refuses_a_negative_wallet_even_if_code_tries(wallet):
    with pytest.raises(IntegrityError), transaction.atomic():
        Account.objects.filter(pk=wallet.pk).update(balance=Decimal("-1"))


def test_a_batch_is_all_or_nothing(wallet, house):
    ledger.deposit(wallet=wallet, amount="10.00", key="dep:b")
    postings = [ledger.Posting(f"stake:b{i}", "stake", wallet, house, Decimal("4.00")) for i in range(3)]
    with pytest.raises(InsufficientFunds):
        ledger.post(postings)
    assert balance(wallet) == Decimal("10.00") and LedgerTransaction.objects.count() == 1
    done = ledger.post(postings[:2])
    assert [t.key for t in done] == ["stake:b0", "stake:b1"]
    assert list(LedgerEntry.objects.filter(account=wallet).order_by("id").values_list("balance_after", flat=True)) \
        == [Decimal("10.00"), Decimal("6.00"), Decimal("2.00")]


def test_a_batch_that_dips_below_zero_midway_is_refused_whole(wallet, house):
    """The balance after every entry counts, not only the final one: no entry may show a negative wallet."""
    ledger.deposit(wallet=wallet, amount="5.00", key="dep:d")
    postings = [ledger.Posting("stake:d", "stake", wallet, house, Decimal("6.00")),
                ledger.Posting("payout:d", "payout", house, wallet, Decimal("10.00"))]
    with pytest.raises(InsufficientFunds, match=r"^the player's wallet cannot cover 6\.00: nothing was moved$"):
        ledger.post(postings)
    assert balance(wallet) == Decimal("5.00") and LedgerTransaction.objects.count() == 1


def test_a_reversal_batch_may_dip_below_zero_and_flags_the_wallet(wallet, house):
    ledger.deposit(wallet=wallet, amount="5.00", key="dep:f")
    ledger.post([ledger.Posting("reverse:f", "reversal", wallet, house, Decimal("6.00")),
                 ledger.Posting("payout:f", "payout", house, wallet, Decimal("10.00"))], allow_negative=True)
    wallet.refresh_from_db()
    assert wallet.balance == Decimal("9.00") and wallet.negative_flagged
    assert list(LedgerEntry.objects.filter(account=wallet).order_by("id").values_list("balance_after", flat=True)) \
        == [Decimal("5.00"), Decimal("-1.00"), Decimal("9.00")]


def test_a_batch_with_a_posted_key_writes_only_the_new_ones(wallet, house):
    ledger.deposit(wallet=wallet, amount="10.00", key="dep:p")
    first = ledger.post_stake(wallet=wallet, house=house, amount="1.00", key="stake:p0")
    done = ledger.post([ledger.Posting(f"stake:p{i}", "stake", wallet, house, Decimal("1.00")) for i in range(3)])
    assert done[0].pk == first.pk and [t.key for t in done] == ["stake:p0", "stake:p1", "stake:p2"]
    assert wallet.balance == balance(wallet) == Decimal("7.00")
    assert list(LedgerEntry.objects.filter(account=wallet).order_by("id").values_list("balance_after", flat=True)) \
        == [Decimal("10.00"), Decimal("9.00"), Decimal("8.00"), Decimal("7.00")]


@pytest.mark.parametrize("n", [3, ledger.PREPARED_UP_TO * 2])
def test_a_post_without_its_transactions_back_moves_the_same_money_and_still_compares_taken_keys(wallet, house, n):
    ledger.deposit(wallet=wallet, amount="100.00", key="dep:q")
    ledger.post_stake(wallet=wallet, house=house, amount="1.00", key="stake:q0")  # taken: not posted again
    postings = [ledger.Posting(f"stake:q{i}", "stake", wallet, house, Decimal("1.00")) for i in range(n)]
    assert ledger.post(postings, transactions=False) is None
    assert wallet.balance == balance(wallet) == Decimal(100 - n)
    assert LedgerTransaction.objects.filter(key__startswith="stake:q").count() == n
    with pytest.raises(IdempotencyConflict):
        ledger.post([ledger.Posting("stake:q1", "stake", wallet, house, Decimal("2.00"))], transactions=False)
    assert balance(wallet) == Decimal(100 - n)
    assert reconcile().ok


def test_a_big_batch_over_many_wallets_keeps_every_running_balance(eur, house):
    """More postings than ``PREPARED_UP_TO`` (the statement planned for its own arrays), wallets interleaved."""
    wallets = [ledger.wallet_for(player=make_player(), currency=eur) for _ in range(3)]
    cashier = ledger.cashier_account(currency=eur, operator=ledger.default_operator())
    ledger.post([ledger.Posting(f"dep:g{i}", "deposit", cashier, w, Decimal("1000.00")) for i, w in enumerate(wallets)])
    n = ledger.PREPARED_UP_TO * 2
    done = ledger.post([ledger.Posting(f"stake:g{i}", "stake", wallets[i % 3], house, Decimal(i + 1))
                        for i in range(n)])
    assert [t.key for t in done] == [f"stake:g{i}" for i in range(n)]
    for j, w in enumerate(wallets):
        stakes = [Decimal(i + 1) for i in range(n) if i % 3 == j]
        expected = [Decimal("1000.00") - sum(stakes[:k + 1]) for k in range(len(stakes))]
        assert list(LedgerEntry.objects.filter(account=w, amount__lt=0).order_by("id")
                    .values_list("balance_after", flat=True)) == expected
        assert w.balance == balance(w) == expected[-1]
    assert reconcile().ok


def test_a_refused_posting_leaves_the_callers_transaction_usable(wallet, house):
    with transaction.atomic():
        ledger.deposit(wallet=wallet, amount="1.00", key="dep:s")
        with pytest.raises(InsufficientFunds):
            ledger.post_stake(wallet=wallet, house=house, amount="2.00", key="stake:s")
        ledger.post_stake(wallet=wallet, house=house, amount="0.50", key="stake:s2")
    assert balance(wallet) == Decimal("0.50") and not LedgerTransaction.objects.filter(key="stake:s").exists()


def test_the_same_key_twice_in_one_batch_is_a_conflict(wallet, house):
    ledger.deposit(wallet=wallet, amount="10.00", key="dep:c")
    p = ledger.Posting("stake:c", "stake", wallet, house, Decimal("1.00"))
    with pytest.raises(IdempotencyConflict):
        ledger.post([p, p])


def test_currencies_never_meet(wallet, eur, fun):
    """RULES 9: real and play-for-fun money can never meet in one transaction."""
    fun_house = ledger.house_account(name="table:T1", currency=fun, operator=ledger.default_operator())
    ledger.deposit(wallet=wallet, amount="10.00", key="dep:m")
    with pytest.raises(CurrencyMismatch):
        ledger.post_stake(wallet=wallet, house=fun_house, amount="1.00", key="stake:m")
    assert balance(wallet) == Decimal("10.00")


def test_reversal_may_take_a_wallet_negative_and_flags_it(wallet, house):
    ledger.deposit(wallet=wallet, amount="1.00", key="dep:r")
    ledger.post([ledger.Posting("reverse:1", "reversal", wallet, house, Decimal("3.00"))], allow_negative=True)
    wallet.refresh_from_db()
    assert wallet.balance == Decimal("-2.00") and wallet.negative_flagged
    report = reconcile()
    assert report.ok and report.flagged  # by design: shown to operators, not a breach
    with pytest.raises(InsufficientFunds):  # ordinary stakes still need funds
        ledger.post_stake(wallet=wallet, house=house, amount="0.01", key="stake:r")


@pytest.mark.parametrize("batch", [False, True], ids=["one posting", "in a batch"])
def test_a_wallet_a_reversal_left_negative_may_be_paid_but_not_debited(wallet, house, batch):
    """A win settled after a reversal took the wallet below zero is paid (it owes less after);
    a stake still needs funds; alone or inside a batch (a settlement posts its payouts in one)."""
    other = ledger.wallet_for(player=make_player(), currency=wallet.currency)
    ledger.deposit(wallet=other, amount="5.00", key="dep:o")
    ledger.deposit(wallet=wallet, amount="1.00", key="dep:n")
    ledger.post([ledger.Posting("reverse:n", "reversal", wallet, house, Decimal("3.00"))], allow_negative=True)
    payout = ledger.Posting("payout:n", "payout", house, wallet, Decimal("0.50"))
    stake = ledger.Posting("stake:n", "stake", wallet, house, Decimal("0.01"))
    extra = [ledger.Posting("stake:o", "stake", other, house, Decimal("1.00"))] if batch else []
    ledger.post([payout] + extra)
    wallet.refresh_from_db()
    assert wallet.balance == Decimal("-1.50") and wallet.negative_flagged
    assert LedgerEntry.objects.get(transaction__key="payout:n", account=wallet).balance_after == Decimal("-1.50")
    with pytest.raises(InsufficientFunds):
        ledger.post([stake] + [ledger.Posting("stake:o2", "stake", other, house, Decimal("1.00"))] * batch)
    assert balance(wallet) == Decimal("-1.50") and not LedgerTransaction.objects.filter(key="stake:n").exists()
    assert reconcile().ok


def test_a_posting_between_house_accounts_keeps_no_running_balance(eur, house):
    """No player wallet in the movement: nothing to lock or keep a balance for."""
    cashier = ledger.cashier_account(currency=eur, operator=ledger.default_operator())
    txn = ledger.post_one(key="float:1", kind="deposit", source=cashier, destination=house, amount="50.00")
    assert sorted((e.account_id, e.amount, e.balance_after) for e in txn.entries.all()) == sorted(
        [(cashier.pk, Decimal("-50.00"), None), (house.pk, Decimal("50.00"), None)])
    assert ledger.post_one(key="float:1", kind="deposit", source=cashier, destination=house, amount="50.00") == txn
    assert reconcile().ok


def test_adjustments_credit_and_debit(wallet, house):
    ledger.post_adjustment(wallet=wallet, house=house, amount="7.50", key="adjust:1")
    ledger.post_adjustment(wallet=wallet, house=house, amount="-2.50", key="adjust:2")
    assert balance(wallet) == Decimal("5.00")
    with pytest.raises(InsufficientFunds):
        ledger.post_adjustment(wallet=wallet, house=house, amount="-5.01", key="adjust:3")


@pytest.mark.postgresql
def test_ledger_rows_are_immutable(wallet):
    txn = ledger.deposit(wallet=wallet, amount="1.00", key="dep:i")
    entry = txn.entries.first()
    with pytest.raises(TypeError):
        entry.save()
    with pytest.raises(TypeError):
        txn.delete()
    with pytest.raises(Exception, match="immutable"), transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("UPDATE accounts_ledgerentry SET amount = 2 WHERE id = %s", [entry.pk])


def test_one_wallet_per_player_and_currency(eur):
    player = make_player()
    assert ledger.wallet_for(player=player, currency=eur).pk == ledger.wallet_for(player=player, currency="EUR").pk
    with pytest.raises(IntegrityError), transaction.atomic():
        Account.objects.create(kind="wallet", player=player, currency=eur, operator=player.operator)


def test_reconcile_finds_a_tampered_balance(wallet, capsys):
    ledger.deposit(wallet=wallet, amount="10.00", key="dep:t")
    call_command("reconcile")
    assert "reconcile: clean" in capsys.readouterr().out
    Account.objects.filter(pk=wallet.pk).update(balance=Decimal("11.00"))
    report = reconcile()
    assert not report.ok and "differs from its entries" in report.breaches[0]
    with pytest.raises(CommandError):
        call_command("reconcile")


def test_reconcile_finds_a_balance_on_a_wallet_without_entries(wallet):
    Account.objects.filter(pk=wallet.pk).update(balance=Decimal("5.00"))
    assert reconcile().breaches == [f"wallet {wallet.pk} balance 5.0000 differs from its entries 0"]


def test_reconcile_counts_every_flagged_wallet_and_lists_the_first(eur, house):
    for _ in range(3):  # reversals an empty wallet cannot cover: negative and flagged
        wallet = ledger.wallet_for(player=make_player(), currency=eur)
        ledger.post_one(key=f"neg:{wallet.pk}", kind="reversal", source=wallet, destination=house, amount="1.00",
                        allow_negative=True)
    report = reconcile(limit=2)
    assert report.ok and report.flagged_count == 3 and len(report.flagged) == 2


def test_reconcile_finds_an_unbalanced_transaction(wallet):
    txn = ledger.deposit(wallet=wallet, amount="10.00", key="dep:u")
    with connection.cursor() as cursor:  # a hand-written row that breaks double entry
        cursor.execute("INSERT INTO accounts_ledgerentry (transaction_id, account_id, amount) VALUES (%s, %s, 1)",
                       [txn.pk, wallet.pk])
    breaches = " ".join(reconcile().breaches)
    assert "unbalanced" in breaches and "sum to" in breaches


def test_money_never_crosses_operators_and_each_operator_reconciles_on_its_own(eur):
    """Every account is an operator's: a posting between two operators' accounts is refused, and
    reconcile sums each operator's accounts of a currency (players + house + cashier) to zero."""
    brand = Operator.objects.create(code="brand-b", name="Brand B")
    ours = ledger.wallet_for(player=make_player(), currency=eur)
    theirs = ledger.wallet_for(player=ledger.create_player(user=get_user_model().objects.create(username="b1"),
                                                           code="b1", operator=brand), currency=eur)
    assert theirs.operator == brand and Player.objects.get(code="b1").game_code == "brand-b:b1"
    ledger.deposit(wallet=ours, amount="10.00", key="dep:ours")
    ledger.deposit(wallet=theirs, amount="7.00", key="dep:theirs")
    house_b = ledger.house_account(name="table:T1", currency=eur, operator=brand)
    with pytest.raises(CurrencyMismatch, match="another operator"):
        ledger.post_stake(wallet=ours, house=house_b, amount="1.00", key="stake:cross")
    report = reconcile()
    assert report.ok, report.breaches
    assert report.by_operator[("brand-b", "EUR")] == {"wallet": Decimal("7.00"), "cashier": Decimal("-7.00")}
    assert report.totals["EUR"]["wallet"] == Decimal("17.00")
    # a transaction written behind the platform's back across operators is a breach of both kinds
    txn = LedgerTransaction.objects.create(key="tamper:cross", kind="stake", currency=eur)
    LedgerEntry.objects.bulk_create([LedgerEntry(transaction=txn, account=ours, amount=Decimal("-1.00")),
                                     LedgerEntry(transaction=txn, account=house_b, amount=Decimal("1.00"))])
    breaches = reconcile().breaches
    assert "transaction tamper:cross moves money between operators" in breaches
    assert any(b.startswith("brand-b EUR: accounts sum to") for b in breaches)
