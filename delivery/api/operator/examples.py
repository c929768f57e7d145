"""The operator API's OpenAPI examples, per operation: what to send and what comes back."""

from drf_spectacular.utils import OpenApiExample


def _answer(name, value, *statuses):
    return OpenApiExample(name, value=value, response_only=True, status_codes=[str(s) for s in statuses])


def _error(name, status, code, detail):
    return _answer(name, {"code": code, "detail": detail}, status)


PLAYER = {"code": "p1", "game_code": "acme:p1", "account_kind": "real", "display_name": "Ann",
          "currencies": ["EUR", "USD"], "created_at": "2026-03-01T12:00:00Z"}
UNKNOWN_PLAYER = _error("Unknown player", 404, "not_found", "no player 'p9'")

UPSERT_PLAYER = [
    OpenApiExample("A real player in EUR and USD", request_only=True,
                   value={"code": "p1", "account_kind": "real", "currencies": ["EUR", "USD"], "display_name": "Ann"}),
    _answer("The player (201 created, 200 updated)", PLAYER, 201, 200),
    _error("A currency you may not use", 400, "currency_not_allowed", "operator acme may not use GBP"),
]
PLAYER_DETAIL = [_answer("The player", PLAYER, 200), UNKNOWN_PLAYER]
BALANCES = [
    _answer("Balances", {"player": "p1", "balances": [
        {"currency": "EUR", "minor_units": 2, "play_for_fun": False, "balance": "125.50"},
        {"currency": "USD", "minor_units": 2, "play_for_fun": False, "balance": "0.00"}]}, 200),
    UNKNOWN_PLAYER,
    _error("A seamless operator", 409, "wrong_wallet_mode",
           "operator acme is in seamless mode: its players' money stays in its own wallet"),
]

OPEN_SESSION = [
    OpenApiExample("A session in EUR", request_only=True, value={"player": "p1", "currency": "EUR"}),
    _answer("The session", {"token": "3q2-7wEXAMPLEtokenOnlyShownOnce0aZ9", "expires_at": "2026-03-01T20:00:00Z",
                            "idle_timeout_seconds": 1800}, 201),
    UNKNOWN_PLAYER,
    _error("No wallet in that currency", 400, "currency_not_allowed", "player p1 holds no GBP wallet"),
]
REVOKE_SESSION = [_error("Unknown session", 404, "not_found", "no such session")]

TRANSFER = {"transfer_id": "T-1001", "player": "p1", "currency": "EUR", "amount": "25.00", "direction": "in",
            "balance_after": "125.50", "created_at": "2026-03-01T12:05:00.123456Z"}
TRANSFERS = [
    OpenApiExample("Money in", request_only=True,
                   value={"transfer_id": "T-1001", "player": "p1", "currency": "EUR", "amount": "25.00",
                          "direction": "in"}),
    OpenApiExample("Money out", request_only=True,
                   value={"transfer_id": "T-1002", "player": "p1", "currency": "EUR", "amount": "10.00",
                          "direction": "out"}),
    _answer("The transfer (201 made, 200 a replay of the same body)", TRANSFER, 201, 200),
    _error("A float amount", 400, "invalid_amount", "amount must be a decimal string or Decimal, not float"),
    _error("The id used for another body", 409, "idempotency_conflict",
           "key 'transfer:acme:T-1001' was already used for a different movement"),
]

ROUND_SUMMARY = {"id": 812, "external_id": "R-77", "table": "BOUNDLESS-1", "variant": "boundless",
                 "currency": "EUR", "shoe_round": 14, "state": "settled"}
BET = {"id": 9051, "round": ROUND_SUMMARY, "type": "main", "seat": None, "currency": "EUR", "stake": "10.00",
       "staked": "10.00", "returned": "20.00", "net": "10.00", "state": "settled", "outcome": "win",
       "placed_at": "2026-03-01T12:10:00Z", "settled_at": "2026-03-01T12:11:00Z", "player": "p1"}
# A list's example is one row: the schema wraps it in its page.
BETS = [_answer("A page of bets", BET, 200),
        _error("A bad filter", 400, "invalid_input", "variant: Select a valid choice. poker is not one of the "
                                                     "available choices.")]
ROUND = [
    _answer("A round", {**ROUND_SUMMARY, "opened_at": "2026-03-01T12:09:30Z", "resulted_at": "2026-03-01T12:10:50Z",
                        "settled_at": "2026-03-01T12:11:00Z", "voided_at": None,
                        "result": {"dealer": {"cards": ["7D", "TC"], "score": 17, "blackjack": False, "bust": False},
                                   "seats": [], "player_cards": ["TH", "6C", "5S"], "ended_at_peek": False,
                                   "late_dealer_blackjack": False},
                        "bets": [BET]}, 200),
    _error("No bet of your players in it", 404, "not_found", "Not found."),
]
STATEMENT = [
    _answer("A page of the statement", {
        "id": 40211, "key": "transfer:acme:T-1001", "kind": "deposit", "player": "p1", "currency": "EUR",
        "amount": "25.00", "balance_after": "125.50", "created_at": "2026-03-01T12:05:00.123456Z"}, 200),
    _error("A bad cursor", 400, "invalid_input", "cursor: invalid cursor"),
]
