"""The ledger's hash chains (accounts.chain): every posting path links its transactions into their
wallet's chain, PostgreSQL's one statement computing the very bytes Python verifies, and a row
edited, removed or forged behind the platform's back is found and named."""

import itertools
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.db import connection

from accounts import chain
from accounts import services as ledger
from accounts.models import Account, Currency, LedgerEntry, LedgerTransaction
from tests.tamper import behind_the_platforms_back

pytestmark = pytest.mark.django_db
_codes = itertools.count()


@pytest.fixture
def eur(db):
    return Currency.objects.get_or_create(code="EUR", defaults={"minor_units": 2})[0]


def wallet_of_a_new_player(eur):
    n = next(_codes)
    player = ledger.create_player(user=get_user_model().objects.create(username=f"chain-{n}"), code=f"ch-{n}")
    return ledger.wallet_for(player=player, currency=eur)


@pytest.fixture
def played(eur):
    """Two wallets and a house: single postings and a batch with several postings per wallet (the
    chain grows within one statement), a memo in Greek, a reversal into the negative, a posting
    between two house accounts (its source's chain) and a key posted twice (one link)."""
    a, b = wallet_of_a_new_player(eur), wallet_of_a_new_player(eur)
    operator = ledger.default_operator()
    house = ledger.house_account(name="table:T1", currency=eur, operator=operator)
    other = ledger.house_account(name="adjustments", currency=eur, operator=operator)
    ledger.deposit(wallet=a, amount="100.00", key="dep:a", memo="καλή τύχη: 1:2")
    ledger.deposit(wallet=b, amount="0.05", key="dep:b")
    ledger.post([ledger.Posting(f"stake:{i}", "stake", (a, b)[i % 2], house, Decimal("0.02")) for i in range(4)]
                + [ledger.Posting("payout:0", "payout", house, a, Decimal("7.50"))])
    ledger.post_one(key="reverse:b", kind="reversal", source=b, destination=house, amount="1.00", allow_negative=True)
    ledger.post_one(key="house:move", kind="adjustment", source=house, destination=other, amount="3.00")
    ledger.deposit(wallet=a, amount="100.00", key="dep:a", memo="καλή τύχη: 1:2")  # the same key: no second link
    return a, b, house


def test_every_transaction_is_a_link_of_its_wallets_chain(played):
    a, b, house = played
    result = chain.verify()
    assert result.broken is None and result.links == LedgerTransaction.objects.count() == 9
    assert result.chains == 3  # a's, b's and the house's own (its posting to another house account)
    for wallet in (a, b):
        links = list(LedgerTransaction.objects.filter(entries__account=wallet).order_by("pk")
                     .values_list("prev_hash", "chain_hash"))
        assert links[0][0] is None and all(bytes(prev) == bytes(before[1])
                                           for before, (prev, _) in zip(links, links[1:]))
        assert bytes(Account.objects.get(pk=wallet.pk).chain_head) == bytes(links[-1][1])
    moved = LedgerTransaction.objects.get(key="house:move")
    assert moved.prev_hash is None and bytes(Account.objects.get(pk=house.pk).chain_head) == bytes(moved.chain_hash)


def test_a_returned_transaction_carries_its_link(eur):
    wallet = wallet_of_a_new_player(eur)
    first = ledger.deposit(wallet=wallet, amount="1.00", key="dep:1")
    second = ledger.deposit(wallet=wallet, amount="2.00", key="dep:2")
    assert first.prev_hash is None and second.prev_hash == first.chain_hash
    assert bytes(LedgerTransaction.objects.get(pk=second.pk).chain_hash) == second.chain_hash


def test_the_content_is_every_field_length_prefixed():
    data = chain.content(key="k:1", kind="stake", currency_id="EUR", memo="", created_at=chain.EPOCH,
                         legs=[(7, Decimal("-1.5"), Decimal("98.5")), (3, Decimal("1.5"), None)])
    assert data == b"3:k:15:stake3:EUR0:1:01:77:-1.50007:98.50001:36:1.50000:"


def test_a_bulk_posts_contents_are_each_transactions_content():
    """``Contents`` (a bulk post's) keeps the texts its transactions repeat: each is still exactly
    its ``content``, a zero balance keeping its sign."""
    contents = chain.Contents(chain.EPOCH)
    for key, kind, legs in [("k:1", "payout", [(7, Decimal("-1.5"), None), (3, Decimal("1.5"), Decimal("0"))]),
                            ("k:2", "payout", [(7, Decimal("-1.50"), None), (3, Decimal("1.5"), Decimal("-0"))]),
                            ("k:3", "stake", [(3, Decimal("-2"), Decimal("-0.00")), (7, Decimal("2"), None)])]:
        assert contents(key, kind, "EUR", "", legs) == chain.content(key=key, kind=kind, currency_id="EUR", memo="",
                                                                     created_at=chain.EPOCH, legs=legs)
    assert contents("k:4", "stake", "EUR", "", [(3, Decimal("-2"), Decimal("-0"))]).endswith(b"7:-0.0000")


@pytest.mark.parametrize("table, sql, why", [
    ("accounts_ledgerentry", "UPDATE accounts_ledgerentry SET amount = -0.01 WHERE id = "
     "(SELECT min(e.id) FROM accounts_ledgerentry e JOIN accounts_ledgertransaction t ON t.id = e.transaction_id "
     "WHERE t.key = 'stake:1')", "content does not match"),
    ("accounts_ledgertransaction", "UPDATE accounts_ledgertransaction SET memo = 'nothing to see' "
     "WHERE key = 'stake:1'", "content does not match"),
    ("accounts_ledgerentry", "UPDATE accounts_ledgerentry SET balance_after = 1000 WHERE id = "
     "(SELECT max(e.id) FROM accounts_ledgerentry e JOIN accounts_ledgertransaction t ON t.id = e.transaction_id "
     "WHERE t.key = 'stake:1')", "content does not match"),
])
def test_a_row_edited_behind_the_platforms_back_is_found(played, table, sql, why):
    behind_the_platforms_back(table, sql)
    broken = chain.verify().broken
    assert broken is not None and broken.link == LedgerTransaction.objects.get(key="stake:1").pk
    assert why in broken.why and f"ledger transaction {broken.link}" in str(broken)


def test_a_transaction_removed_from_the_middle_is_found_at_the_next_link(played):
    a, b, _ = played
    removed = LedgerTransaction.objects.get(key="stake:1")  # b's second link
    behind_the_platforms_back("accounts_ledgerentry", "DELETE FROM accounts_ledgerentry WHERE transaction_id = %s",
                              [removed.pk])
    behind_the_platforms_back("accounts_ledgertransaction", "DELETE FROM accounts_ledgertransaction WHERE id = %s",
                              [removed.pk])
    broken = chain.verify().broken
    assert broken.link == LedgerTransaction.objects.get(key="stake:3").pk and broken.chain == b.pk
    assert "previous link does not match" in broken.why


def test_a_removed_last_transaction_is_found_at_the_chain_head(played):
    a, _, _ = played
    last = LedgerTransaction.objects.filter(entries__account=a).order_by("-pk").first()
    behind_the_platforms_back("accounts_ledgerentry", "DELETE FROM accounts_ledgerentry WHERE transaction_id = %s",
                              [last.pk])
    behind_the_platforms_back("accounts_ledgertransaction", "DELETE FROM accounts_ledgertransaction WHERE id = %s",
                              [last.pk])
    broken = chain.verify().broken
    assert broken.link is None and broken.chain == a.pk and "chain head" in str(broken)


def test_a_forged_transaction_without_a_link_is_found(played):
    a, _, house = played
    txn = LedgerTransaction.objects.create(key="forged", kind="payout", currency_id="EUR")
    LedgerEntry.objects.bulk_create([LedgerEntry(transaction=txn, account=house, amount=Decimal("-50")),
                                     LedgerEntry(transaction=txn, account=a, amount=Decimal("50"))])
    broken = chain.verify().broken
    assert broken.link == txn.pk and "previous link" in broken.why


@pytest.mark.postgresql
def test_the_statement_and_python_compute_the_same_links(eur):
    """A batch of 40 postings on 3 wallets in one PostgreSQL statement: each link is what Python
    computes from the row (``accounts.chain.content``)."""
    assert connection.vendor == "postgresql"
    wallets = [wallet_of_a_new_player(eur) for _ in range(3)]
    house = ledger.house_account(name="table:T2", currency=eur, operator=ledger.default_operator())
    ledger.post([ledger.Posting(f"dep:{w.pk}", "deposit", house, w, Decimal("10.00")) for w in wallets])
    ledger.post([ledger.Posting(f"s:{i}", "stake", wallets[i % 3], house, Decimal("0.01") * (i + 1), memo=f"m{i}")
                 for i in range(40)])
    assert chain.verify().broken is None
