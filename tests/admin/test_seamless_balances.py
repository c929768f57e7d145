"""A seamless player's balance on the admin's pages (the player's, the wallet's, the manual
adjustment's) is the one the operator's wallet answers (the reference wallet process), labelled
"at <operator>'s wallet (asked <time>)", with the platform's journal beside it, labelled as such;
when the wallet does not answer the page says so and shows no amount as the player's money. A
transfer player's balance is the ledger's, as before."""

from html import unescape

import pytest
from django.urls import reverse
from django.utils.html import strip_tags

from accounts.models import Account
from adminkit.roles import SUPERVISOR
from tests.factories import PlayerFactory, make_operator, otp_login
from tests.wallets.seamless import adjustment, journal_wallet, seamless_operator

pytestmark = pytest.mark.django_db


def _words(client, url, **query):
    """What the page at ``url`` reads: no tags, one space between words."""
    response = client.get(url, query)
    assert response.status_code == 200, url
    return " ".join(unescape(strip_tags(response.content.decode())).split())


@pytest.fixture
def supervisor(client):
    return otp_login(client, make_operator(SUPERVISOR))


@pytest.fixture
def journal(wallet):
    """The journal wallet of ``sea-alpha``'s player ``alpha-p1``, -5.00 after a correction the
    platform asked for (never sent); the player holds 321.09 at the operator's wallet."""
    player = seamless_operator("sea-alpha", wallet.url, players=("alpha-p1",), name="Alpha Seas")[1]["alpha-p1"]
    adjustment(player, "-5.00", "taken")
    wallet.set_player(player="alpha-p1", currency="EUR", balance="321.09")
    return journal_wallet(player)


def pages(journal):
    return [reverse("admin:accounts_player_change", args=[journal.player_id]),
            reverse("admin:accounts_account_change", args=[journal.pk]),
            reverse("admin:accounts_account_adjust", args=[journal.pk])]


def test_a_seamless_players_balance_comes_from_the_operators_wallet(supervisor, journal):
    for url in pages(journal):
        page = _words(supervisor, url)
        assert "321.09 EUR at Alpha Seas's wallet (asked " in page, url
        assert "the platform's journal: -5.00 EUR" in page, url
    page = _words(supervisor, reverse("admin:accounts_account_changelist"), kind__exact="wallet")
    assert "-5.00 EUR (the platform's journal)" in page


def test_when_the_operators_wallet_does_not_answer_the_page_says_so(supervisor, journal, wallet):
    wallet.faults(down=True)
    for url in pages(journal):
        page = _words(supervisor, url)
        assert "unknown: the operator's wallet did not answer: HTTP 503 (asked " in page, url
        assert "at Alpha Seas's wallet" not in page and "the platform's journal: -5.00 EUR" in page, url


def test_a_transfer_players_balance_is_the_ledgers(supervisor, db):
    player = PlayerFactory(funded="100.00")
    wallet = Account.objects.get(kind=Account.Kind.WALLET, player=player)
    for url in (reverse("admin:accounts_player_change", args=[player.pk]),
                reverse("admin:accounts_account_change", args=[wallet.pk]),
                reverse("admin:accounts_account_adjust", args=[wallet.pk])):
        page = _words(supervisor, url)
        assert "100.00 EUR" in page and "journal" not in page and "asked" not in page, url
