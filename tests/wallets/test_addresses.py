"""Issue 20: a seamless operator's wallet URL may not point inside the platform's network. An
address that is no public internet address (loopback, private, link-local such as the cloud
metadata 169.254.169.254, reserved...) is refused when the URL is set, unless the setting
``WALLET_ALLOWED_NETWORKS`` names its network (the suite allows the loopback networks: its
reference wallet listens on 127.0.0.1); and every call checks again the addresses the name
resolves to then, and is not sent to such an address: a clean failure (it never reached the
wallet), never an unknown outcome and never a request to that address."""

import http.server
import ipaddress
import threading
import uuid

import pytest
from django.core.exceptions import ValidationError

from accounts.addresses import WalletAddressRefused, check_url
from accounts.models import Operator
from accounts.operators import create_operator
from tests.factories import RoundFactory, TableFactory
from tests.operator_wallet.sandbox import SECRET, debit_fields, free_port
from wagering.models import Bet
from wagering.placement import place_bets
from wallets.client import send_many
from wallets.models import WalletMovement

from .seamless import Answering, adjustment, attempt, seamless_operator

LOOPBACK = [ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128")]


class _Counting(Answering):
    """A wallet that answers OK to anything and counts the requests it received."""

    body = b'{"status": "OK", "balance": "1.00"}'
    hits = []

    def do_POST(self):
        _Counting.hits.append(self.path)
        super().do_POST()


@pytest.fixture(scope="module")
def listening():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), _Counting)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_port
    server.shutdown()


@pytest.mark.parametrize("url", [
    "http://127.0.0.1:8100", "http://localhost:8100/wallet", "http://10.1.2.3/w", "http://192.168.0.10/w",
    "http://169.254.169.254/latest/meta-data", "http://[::1]:8100", "http://[fe80::1]/w",
    "http://[::ffff:127.0.0.1]/w", "http://0.0.0.0:8100", "http://100.64.0.1/w", "http://224.0.0.1/w",
    "http://[64:ff9b::a9fe:a9fe]/", "http://[64:ff9b:1::a9fe:a9fe]/", "http://[2002:a9fe:a9fe::]/",
    "http://[::127.0.0.1]/", "http://[::a9fe:a9fe]/"])
def test_a_wallet_url_inside_the_network_is_refused_when_it_is_set(db, settings, url):
    settings.WALLET_ALLOWED_NETWORKS = []
    with pytest.raises(ValidationError) as refused:
        create_operator(code="sea", wallet_mode=Operator.WalletMode.SEAMLESS, wallet_url=url, wallet_secret="s")
    assert "WALLET_ALLOWED_NETWORKS" in refused.value.message_dict["wallet_url"][0]
    assert not Operator.objects.filter(code="sea").exists()


def test_an_ipv4_address_written_in_ipv6_is_judged_as_that_ipv4_address(settings):
    """NAT64 (64:ff9b::/96, 64:ff9b:1::/48), 6to4 (2002::/16) and IPv4-compatible (::/96) forms
    reach the IPv4 address they carry: a public one passes, an allowed network's passes."""
    settings.WALLET_ALLOWED_NETWORKS = []
    for host in ("[64:ff9b::5db8:d70e]", "[2002:5db8:d70e::]", "[::93.184.215.14]", "[::ffff:93.184.215.14]"):
        check_url(f"https://{host}/wallet")
    settings.WALLET_ALLOWED_NETWORKS = [ipaddress.ip_network("10.0.0.0/8")]
    check_url("http://[64:ff9b::a00:1]/")


@pytest.mark.parametrize("url", ["https://user:pass@93.184.215.14/w", "https://user@93.184.215.14/w",
                                 "https://user:pass@east.example/w"])
def test_a_wallet_url_with_a_user_name_or_password_is_refused_when_it_is_set(db, settings, url):
    settings.WALLET_ALLOWED_NETWORKS = []
    with pytest.raises(ValidationError) as refused:
        create_operator(code="sea", wallet_mode=Operator.WalletMode.SEAMLESS, wallet_url=url, wallet_secret="s")
    assert "user name or password" in refused.value.message_dict["wallet_url"][0]
    assert not Operator.objects.filter(code="sea").exists()


def test_a_public_or_unresolved_or_explicitly_allowed_wallet_url_is_taken(db, settings):
    settings.WALLET_ALLOWED_NETWORKS = []
    check_url("https://93.184.215.14/wallet")  # a public address
    check_url("https://east.example/wallet")  # no address (yet): every call is checked again
    with pytest.raises(WalletAddressRefused, match="10.0.0.1"):
        check_url("http://10.0.0.1/")
    settings.WALLET_ALLOWED_NETWORKS = [ipaddress.ip_network("10.0.0.0/8")]
    check_url("http://10.0.0.1/")
    settings.WALLET_ALLOWED_NETWORKS = LOOPBACK
    operator, _ = create_operator(code="sea", wallet_mode=Operator.WalletMode.SEAMLESS,
                                  wallet_url="http://127.0.0.1:8100", wallet_secret="s")
    assert operator.wallet_url == "http://127.0.0.1:8100"


@pytest.mark.parametrize(("host", "shown"), [
    ("127.0.0.1", "127.0.0.1"), ("localhost", "127.0.0.1"), ("[::ffff:127.0.0.1]", "127.0.0.1"),
    ("127.1", "no IP address in its usual form"), ("2130706433", "no IP address in its usual form"),
    ("[64:ff9b::a9fe:a9fe]", "169.254.169.254"), ("[2002:7f00:1::]", "127.0.0.1"), ("[::127.0.0.1]", "127.0.0.1")])
def test_a_call_to_a_refused_address_is_never_sent_and_fails_cleanly(settings, listening, host, shown):
    """The operator's URL was taken (or its name resolved elsewhere) before: the call checks the
    address it would connect to, a name's at connection time; a legacy numeric form is refused
    before any resolver could read it as 127.0.0.1."""
    settings.WALLET_ALLOWED_NETWORKS = LOOPBACK
    operator = Operator(code="sea", wallet_url=f"http://{host}:{listening}", wallet_secret=SECRET,
                        wallet_timeout_ms=3000)
    calls = [("debit", debit_fields(f"t-{uuid.uuid4()}"))]
    if host in ("127.0.0.1", "localhost"):  # reached while allowed (the mapped form would need IPv6)
        _Counting.hits.clear()
        assert [a.outcome for a in send_many(operator, calls)] == ["ok"] and len(_Counting.hits) == 1
    settings.WALLET_ALLOWED_NETWORKS = []
    _Counting.hits.clear()
    [answer] = send_many(operator, calls)
    assert (answer.outcome, answer.status, answer.http_status) == ("failed", None, None)
    assert "not sent" in answer.error and shown in answer.error, answer.error
    assert _Counting.hits == []


def test_an_outbox_movement_to_a_refused_address_fails_for_the_operators_to_resolve(db, settings, listening):
    settings.WALLET_ALLOWED_NETWORKS = LOOPBACK
    _, players = seamless_operator("sea", f"http://localhost:{listening}")
    settings.WALLET_ALLOWED_NETWORKS = []  # e.g. its name now resolves inside the network
    _Counting.hits.clear()
    movement = adjustment(players["p1"], "5.00", "k1")  # its delivery after commit may have tried it (in-process)
    attempt(1, [players["p1"]])
    movement.refresh_from_db()
    assert (movement.state, movement.attempts) == (WalletMovement.State.FAILED, 1)
    assert "not sent" in movement.last_error and _Counting.hits == []


def test_a_stake_to_a_refused_address_is_rejected_with_nothing_to_roll_back(db, settings, listening):
    settings.WALLET_ALLOWED_NETWORKS = LOOPBACK
    _, players = seamless_operator("sea", f"http://localhost:{listening}")
    round_ = RoundFactory(table=TableFactory(currency_id="EUR"))
    settings.WALLET_ALLOWED_NETWORKS = []
    _Counting.hits.clear()
    [outcome] = place_bets(round_id=round_.pk, bets=[
        {"key": "k", "player": players["p1"].game_code, "type": "main", "stake": "10.00", "seat": 1}])
    assert outcome.error.code == "wallet_unavailable" and not Bet.objects.exists()
    assert list(WalletMovement.objects.values_list("call", "state")) == [("debit", WalletMovement.State.FAILED)]
    assert _Counting.hits == []
    settings.WALLET_ALLOWED_NETWORKS = LOOPBACK  # the wallet is reachable again: a refused key stays refused
    bet = {"key": "k", "player": players["p1"].game_code, "type": "main", "stake": "10.00", "seat": 1}
    [again] = place_bets(round_id=round_.pk, bets=[bet])
    assert again.error.code == "wallet_unavailable" and not Bet.objects.exists() and _Counting.hits == []
    [anew] = place_bets(round_id=round_.pk, bets=[{**bet, "key": "k2"}])  # a new attempt: a new key
    assert anew.error is None and Bet.objects.get().idempotency_key == "k2" and len(_Counting.hits) == 1


def test_the_admin_refuses_a_wallet_url_inside_the_network_on_the_operators_page(admin_client, settings):
    settings.WALLET_ALLOWED_NETWORKS = []
    form = {"code": "sea", "name": "Sea", "wallet_mode": "seamless", "time_zone": "UTC",
            "wallet_url": "http://169.254.169.254/latest", "wallet_secret": "s", "wallet_timeout_ms": "3000"}
    page = admin_client.post("/admin/accounts/operator/add/", form)
    assert page.status_code == 200 and "169.254.169.254 is a link-local address" in page.content.decode()
    assert not Operator.objects.filter(code="sea").exists()
    answer = admin_client.post("/admin/accounts/operator/add/", {**form, "wallet_url": "https://93.184.215.14/w"})
    assert answer.status_code == 302 and Operator.objects.get(code="sea").wallet_url == "https://93.184.215.14/w"
