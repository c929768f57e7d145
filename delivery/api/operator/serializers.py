"""Request and response shapes of the operator API. Requests are JSON objects of their fields only
(``StrictSerializer``), each field of its JSON type only (``Strict*Field``); amounts are decimal
strings, never floats, checked by ``accounts.money.parse_amount``. Responses show amounts as
decimal strings with exactly the currency's minor units (``"12.50"``) and times in ISO 8601."""

from django.core.validators import RegexValidator
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from accounts.exceptions import InvalidAmount
from accounts.models import LedgerTransaction, Player
from accounts.money import amount_string
from accounts.operators import CODE, Direction
from delivery.api.common import AmountField, DistinctListField, StrictCharField, StrictSerializer
from delivery.api.player.serializers import (
    LedgerEntrySerializer,
    MoneyField,
    PlayerBetSerializer,
    PlayerRoundDetailSerializer,
    WalletSerializer,
    bet_row,
)

#: ``accounts.operators.CODE`` for the schema (ECMA-262 and Python read it alike).
CODE_PATTERN = f"^{CODE.pattern}$"
#: A positive amount as ``parse_amount`` reads it, up to its 15 integer digits and 4 decimals
#: (a currency may allow fewer decimals: ``invalid_amount`` then).
AMOUNT_PATTERN = r"^(0|[1-9][0-9]{0,14})(\.[0-9]{1,4})?$"
#: A text without NUL (DRF refuses one in any string; the schema says so).
NO_NUL = RegexValidator(r"^[^\x00]*$", "no NUL characters")
DIRECTIONS = [(Direction.IN, "into the player's wallet, from your cashier"),
              (Direction.OUT, "out of the player's wallet, to your cashier")]


def code_field(**kwargs):
    """A player code or transfer id: a JSON string matching ``CODE_PATTERN``."""
    return StrictCharField(max_length=64, trim_whitespace=False, validators=[RegexValidator(CODE_PATTERN)],
                           **kwargs)


def currency_field(**kwargs):
    """A currency code (one the operator may use: ``currency_not_allowed`` otherwise)."""
    return StrictCharField(min_length=1, max_length=8, trim_whitespace=False, validators=[NO_NUL], **kwargs)


@extend_schema_field({"type": "string", "pattern": AMOUNT_PATTERN, "example": "25.00"})
class PositiveAmountField(AmountField):
    """``AmountField`` that takes a JSON string only: a JSON number, even a whole one, is refused
    as ``invalid_amount``, as ``parse_amount`` refuses a float; with the schema of a positive amount."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            raise InvalidAmount(f'amount: a decimal string such as "25.00" is required, not {type(data).__name__}')
        return data


class PlayerRequestSerializer(StrictSerializer):
    """The player's whole state: an update sets every field (an omitted account kind is real, an
    omitted display name empty); currencies name every wallet the player holds, and may add some."""

    code = code_field(help_text="Your id of the player: 1-64 letters, digits, '.', '_' or '-', starting with a "
                                "letter or digit. The game server names the player <operator>:<code>.")
    account_kind = serializers.ChoiceField(choices=Player.Kind.choices, default=Player.Kind.REAL,
                                           help_text="real or trial (trial accounts never take a seat). A real player "
                                                     "becomes a trial one only without real money in a wallet "
                                                     "and without an open bet (409 account_kind_in_use).")
    currencies = DistinctListField(child=currency_field(), min_length=1, max_length=20,
                                   help_text="Currencies the player plays in (yours), each once: a wallet is "
                                             "opened in each; a wallet once opened stays, so an update names "
                                             "every currency of the player's wallets (409 wallet_kept).")
    display_name = StrictCharField(max_length=100, allow_blank=True, default="",
                                   validators=[NO_NUL],
                                   help_text="Optional; shown in the back office.")


class OperatorPlayerSerializer(serializers.ModelSerializer):
    account_kind = serializers.CharField(help_text="real or trial")
    game_code = serializers.CharField(help_text="The player's name at the game server: <operator>:<code>.")
    currencies = serializers.SerializerMethodField(help_text="Currencies of the player's wallets.")

    class Meta:
        model = Player
        fields = ["code", "game_code", "account_kind", "display_name", "currencies", "created_at"]
        read_only_fields = fields

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_currencies(self, player):
        return list(player.wallets.order_by("currency_id").values_list("currency_id", flat=True))


class BalancesSerializer(serializers.Serializer):
    player = serializers.CharField(help_text="The player's code.")
    balances = WalletSerializer(many=True, help_text="Per currency, by code.")


class SessionRequestSerializer(StrictSerializer):
    player = code_field(help_text="The player's code.")
    currency = currency_field(help_text="A currency the player holds a wallet in.")


class SessionEndRequestSerializer(StrictSerializer):
    token = StrictCharField(min_length=1, max_length=200, trim_whitespace=False, validators=[NO_NUL],
                            help_text="The session's token (as POST sessions/ gave it).")


class SessionSerializer(serializers.Serializer):
    token = serializers.CharField(help_text="The player API's credential (Authorization: Bearer <token>), "
                                            "shown once: only its hash is kept.")
    expires_at = serializers.DateTimeField(help_text="The session ends then, however it is used.")
    idle_timeout_seconds = serializers.IntegerField(help_text="... or after this long without a request.")


class TransferRequestSerializer(StrictSerializer):
    transfer_id = code_field(help_text="Your id of the transfer (idempotency key): the same id with the same "
                                       "body again moves nothing and answers the first transfer.")
    player = code_field(help_text="The player's code.")
    currency = currency_field(help_text="A currency the player holds a wallet in.")
    amount = PositiveAmountField(help_text='A decimal string in major units, e.g. "25.00" (never a float), with '
                                           "at most the currency's minor-unit decimals.")
    direction = serializers.ChoiceField(choices=DIRECTIONS)


class TransferSerializer(serializers.Serializer):
    """A transfer: a ``transfer_row``."""

    transfer_id = serializers.CharField()
    player = serializers.CharField()
    currency = serializers.CharField()
    amount = serializers.CharField(help_text="Decimal string with the currency's minor units.")
    direction = serializers.ChoiceField(choices=DIRECTIONS)
    balance_after = serializers.CharField(help_text="The wallet's balance right after this transfer.")
    created_at = serializers.DateTimeField()


def transfer_row(transaction, entry):
    """The transfer ``transaction`` (a ``LedgerTransaction`` keyed ``transfer:<operator>:<id>``) for
    ``TransferSerializer``, from what the ledger holds (a replay answers the first transfer);
    ``entry``: its ``LedgerEntry`` on the wallet, with the account's player and currency loaded
    (``accounts.operators.transfer``)."""
    units = entry.account.currency.minor_units
    direction = Direction.IN if transaction.kind == LedgerTransaction.Kind.DEPOSIT else Direction.OUT
    return {"transfer_id": transaction.key.split(":", 2)[2], "player": entry.account.player.code,
            "currency": entry.account.currency_id, "amount": amount_string(abs(entry.amount), units),
            "direction": direction, "balance_after": amount_string(entry.balance_after, units),
            "created_at": transaction.created_at}


class OperatorBetSerializer(PlayerBetSerializer):
    """A bet of one of the operator's players. Lists serialize the same shape from value rows with
    ``operator_bet_row``."""

    player = serializers.CharField(source="player.code", help_text="The player's code.")

    class Meta(PlayerBetSerializer.Meta):
        fields = PlayerBetSerializer.Meta.fields + ["player"]
        read_only_fields = fields


def operator_bet_row(row, zone):
    """A ``wagering.selectors.bet_rows_for_operator`` row as ``OperatorBetSerializer`` shows it."""
    return {**bet_row(row, zone), "player": row["player__code"]}


class OperatorRoundSerializer(PlayerRoundDetailSerializer):
    bets = OperatorBetSerializer(many=True, source="bets_of_operator", help_text="Your players' bets in this round.")


class StatementEntrySerializer(LedgerEntrySerializer):
    player = serializers.CharField(source="account.player.code", help_text="The player's code.")

    class Meta(LedgerEntrySerializer.Meta):
        fields = ["id", "key", "kind", "player", "currency", "amount", "balance_after", "created_at"]
        read_only_fields = fields


class DailyReportRowSerializer(serializers.Serializer):
    """One day of one currency (``wagering.reports.ReportRow``, ``currency_obj`` set) or, without
    ``day``, the totals of the range in one currency."""

    day = serializers.DateField(source="key", allow_null=True, help_text="The day, in your zone; null in totals.")
    currency = serializers.CharField()
    rounds = serializers.IntegerField(help_text="Rounds in which a bet of your players stood (settled).")
    bets = serializers.IntegerField(help_text="Bets that stood (settled).")
    players = serializers.IntegerField(help_text="Distinct players who placed a bet (any outcome).")
    turnover = MoneyField(currency="currency_obj", help_text="Staked by the bets that stood, extra stakes included.")
    returned = MoneyField(currency="currency_obj", help_text="Returned by them: stakes back and winnings.")
    ggr = MoneyField(currency="currency_obj", help_text="Gross gaming revenue: turnover - returned.")
    hold = serializers.DecimalField(max_digits=12, decimal_places=2, allow_null=True, coerce_to_string=True,
                                    help_text="GGR in percent of turnover; null without turnover.")
    refunded_bets = serializers.IntegerField(help_text="Bets refunded in full (voids, seats emptied): not turnover.")
    refunded = MoneyField(currency="currency_obj", help_text="What the refunded bets got back.")
    adjustments = serializers.IntegerField(help_text="Manual and dispute adjustments made that day: not in GGR.")
    adjusted = MoneyField(currency="currency_obj", help_text="Their sum, signed: > 0 credited to your players.")


class DailyReportSerializer(serializers.Serializer):
    days = DailyReportRowSerializer(many=True)
    totals = DailyReportRowSerializer(many=True, help_text="Per currency, over the range (rounds and players "
                                                           "distinct over it).")
