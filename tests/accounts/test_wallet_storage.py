"""Wallet rows on PostgreSQL (accounts migration 0014): a post that updates every wallet of a page
in one statement writes each new version in the old one's page (a HOT update: no index entry),
once the wallets have their chain heads (a first post makes each row longer) and the versions an
earlier post left are vacuumed away (by autovacuum, or pruned on a page's visit, on a platform in
service)."""

import time
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.db import connection

from accounts import services as ledger
from accounts.models import Account, Currency

#: Each post commits, and VACUUM runs outside a transaction.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgresql]


def _pages(wallets):
    """``{wallet pk: the page its current version is in}``."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, (ctid::text::point)[0]::bigint FROM accounts_account WHERE id = ANY(%s)",
                       [[w.pk for w in wallets]])
        return dict(cursor.fetchall())


def _moved(tag):
    """Post to 120 new wallets twice (VACUUM before each post); ``{wallet pk: (page before, page
    after)}`` of the wallets the second post moved to another page."""
    eur = Currency.objects.get_or_create(code="EUR", defaults={"minor_units": 2})[0]
    users = get_user_model().objects.bulk_create([get_user_model()(username=f"{tag}-{i}") for i in range(120)])
    wallets = [ledger.wallet_for(player=ledger.create_player(user=u, code=u.username), currency=eur) for u in users]
    house = ledger.house_account(name="table:hot", currency=eur, operator=ledger.default_operator())
    for n in range(2):
        with connection.cursor() as cursor:
            cursor.execute("VACUUM accounts_account")
        before = _pages(wallets)
        ledger.post([ledger.Posting(f"{tag}:{n}:{w.pk}", "payout", house, w, Decimal("1.00")) for w in wallets])
    assert len(set(before.values())) > 2  # pages filled: on a full page no new version would fit
    assert set(Account.objects.filter(pk__in=before).values_list("balance", flat=True)) == {Decimal("2.00")}
    after = _pages(wallets)
    return {pk: (page, after[pk]) for pk, page in before.items() if after[pk] != page}


def test_a_bulk_post_rewrites_every_wallet_of_a_page_in_its_page():
    for attempt in range(3):  # a session holding an old snapshot keeps VACUUM from removing versions: again
        moved = _moved(f"hot{attempt}")
        if not moved:
            break
        time.sleep(1)
    assert moved == {}
