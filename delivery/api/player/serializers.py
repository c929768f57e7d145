"""Response (and dispute request) shapes of the player API. Amounts are decimal strings with the
currency's minor units as decimals (``"12.50"``); times are ISO 8601 with an offset."""

from functools import cache

from django.core.validators import RegexValidator
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from accounts.models import Account, LedgerEntry
from accounts.money import amount_string
from delivery.api.common import StrictCharField, StrictIntegerField, StrictSerializer
from settlement.audit import MAX_REASON
from settlement.models import Dispute
from wagering.models import Bet, BetExtra, bet_money

from .pagination import MAX_ID

# The characters Python's str.strip() removes, spelled out so that the schema's ECMA-262 regex and
# Python's re agree on them (they differ on what "\s" means: \x1c-\x1f and \x85 are space only to Python).
SPACE = r"\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
#: A reason: some character strip() keeps, and no NUL (which DRF refuses: the schema says so too).
#: Spaces, then a visible character, then the rest: linear to match, whatever the text.
REASON_PATTERN = rf"^[{SPACE}]*[^\x00{SPACE}][^\x00]*$"
AMOUNT_SCHEMA = {"type": "string", "pattern": r"^-?[0-9]+(\.[0-9]+)?$", "example": "12.50"}


@extend_schema_field(AMOUNT_SCHEMA)
class MoneyField(serializers.Field):
    """A ``Decimal`` (major units) shown as a decimal string with its currency's minor units.

    ``currency``: dotted attribute path from the serialized object to its ``Currency``
    (e.g. ``"round.table.currency"``). None stays None."""

    def __init__(self, currency, **kwargs):
        kwargs["read_only"] = True
        super().__init__(**kwargs)
        self.currency_path = currency.split(".")

    def get_attribute(self, instance):
        currency = instance
        for name in self.currency_path:
            currency = getattr(currency, name)
        return super().get_attribute(instance), currency.minor_units

    def to_representation(self, value):
        return amount_string(*value)


class WalletSerializer(serializers.ModelSerializer):
    currency = serializers.CharField(source="currency_id")
    minor_units = serializers.IntegerField(source="currency.minor_units")
    play_for_fun = serializers.BooleanField(source="currency.play_for_fun")
    balance = MoneyField(currency="currency")

    class Meta:
        model = Account
        fields = ["currency", "minor_units", "play_for_fun", "balance"]
        read_only_fields = fields


#: Where a player's wallet balance comes from (``PlayerWalletSerializer.balance_source``).
BALANCE_SOURCES = [("platform", "the platform's wallet holds the money (a transfer operator's player)"),
                   ("operator", "the operator's wallet holds it and answered it now (a seamless operator's player)")]
#: Why a seamless player's balance is null.
BALANCE_UNKNOWN = "The operator's wallet did not answer with this balance; ask again later."


class PlayerWalletSerializer(WalletSerializer):
    """A wallet as its player sees it: a transfer operator's player's balance is the platform's
    wallet's; a seamless operator's player's is what the operator's wallet answers now (its
    ``operator_balance``, ``wallets.balances.with_operator_balances``), never the platform's journal
    of the movements, and None when the operator's wallet did not answer."""

    balance = serializers.SerializerMethodField(
        help_text="The platform's wallet's balance, or the one the operator's wallet answered (balance_source); "
                  "null when the operator's wallet did not answer (balance_unknown says so).")
    balance_source = serializers.SerializerMethodField(help_text="; ".join(f"{v}: {h}" for v, h in BALANCE_SOURCES))
    balance_unknown = serializers.SerializerMethodField(help_text="Why balance is null; null when it is known.")

    class Meta(WalletSerializer.Meta):
        fields = WalletSerializer.Meta.fields + ["balance_source", "balance_unknown"]
        read_only_fields = fields

    @extend_schema_field({**AMOUNT_SCHEMA, "nullable": True})
    def get_balance(self, wallet):
        amount = wallet.operator_balance.amount if wallet.journal else wallet.balance
        return amount_string(amount, wallet.currency.minor_units)

    @extend_schema_field(serializers.ChoiceField(choices=BALANCE_SOURCES))
    def get_balance_source(self, wallet):
        return "operator" if wallet.journal else "platform"

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_balance_unknown(self, wallet):
        return BALANCE_UNKNOWN if wallet.journal and wallet.operator_balance.amount is None else None


class MeSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="The player's id at the game server.")
    account_kind = serializers.CharField(help_text="real or trial")
    wallets = PlayerWalletSerializer(many=True)


class RoundSummarySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    external_id = serializers.CharField()
    table = serializers.CharField(source="table.code")
    variant = serializers.CharField(source="table.variant")
    currency = serializers.CharField(source="table.currency_id")
    shoe_round = serializers.IntegerField()
    state = serializers.CharField(help_text="open, closed, suspended, resulted, settled, settlement_failed, voided")


class PlayerBetSerializer(serializers.ModelSerializer):
    """A bet (a ``wagering.selectors.bets_for_player`` model). Lists serialize the same shape from
    value rows with ``bet_row``, which must stay in step with these fields."""

    round = RoundSummarySerializer()
    currency = serializers.CharField(source="currency_id")
    stake = MoneyField(currency="currency", help_text="The original stake.")
    staked = MoneyField(currency="currency", help_text="Stake plus every extra stake.")
    returned = MoneyField(currency="currency", source="returned_total", allow_null=True,
                          help_text="Everything credited back (null while open).")
    net = MoneyField(currency="currency", allow_null=True, help_text="returned - staked (null while open).")
    state = serializers.CharField(help_text="placed, accepted, settled, refunded")

    class Meta:
        model = Bet
        fields = ["id", "round", "type", "seat", "currency", "stake", "staked", "returned", "net", "state",
                  "outcome", "placed_at", "settled_at"]
        read_only_fields = fields


def bet_row(row, zone):
    """A ``bets_for_player(...).values(*wagering.selectors.BET_ROW)`` row as ``PlayerBetSerializer``
    shows it with ``zone`` (a ``tzinfo``) the current time zone. A plain function rather than the
    serializer: DRF's per-field machinery is costly over a page of rows."""
    units = row["currency__minor_units"]
    staked, returned, net = bet_money(row["stake"], row["extras_total"], row["returned"], row["state"])
    return {
        "id": row["id"],
        "round": {"id": row["round_id"], "external_id": row["round__external_id"], "table": row["table__code"],
                  "variant": row["table__variant"], "currency": row["currency_id"],
                  "shoe_round": row["round__shoe_round"], "state": row["round__state"]},
        "type": row["type"], "seat": row["seat"], "currency": row["currency_id"],
        "stake": amount_string(row["stake"], units), "staked": amount_string(staked, units),
        "returned": amount_string(returned, units), "net": amount_string(net, units),
        "state": row["state"], "outcome": row["outcome"],
        "placed_at": iso_time(row["placed_at"], zone), "settled_at": iso_time(row["settled_at"], zone),
    }


def iso_time(value, zone):
    """An aware ``datetime`` (or None) in ``zone``, ISO 8601 as DRF writes it (``Z`` for UTC)."""
    if value is None:
        return None
    text = value.astimezone(zone).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


class TotalsSerializer(serializers.Serializer):
    """Totals over settled money (bets settled or refunded); the open bets' stakes apart."""

    currency = serializers.CharField(source="currency.code")
    count = serializers.IntegerField(help_text="Bets settled or refunded.")
    staked = MoneyField(currency="currency", help_text="Their stakes and extra stakes.")
    returned = MoneyField(currency="currency", help_text="Everything credited back for them.")
    net = MoneyField(currency="currency", help_text="returned - staked")
    open_count = serializers.IntegerField(help_text="Bets still open (not yet settled).")
    open_staked = MoneyField(currency="currency", help_text="The open bets' stakes and extra stakes.")


class PlayerBetExtraSerializer(serializers.ModelSerializer):
    amount = MoneyField(currency="bet.currency")
    kind = serializers.CharField(help_text="double, split, insurance, follow_double, follow_split")

    class Meta:
        model = BetExtra
        fields = ["kind", "hand", "amount", "created_at"]
        read_only_fields = fields


class BalanceAfterField(MoneyField):
    """A ledger entry's ``balance_after``; None on a journal wallet (a seamless operator's player's:
    the net of what the platform moved, not the player's money)."""

    def get_attribute(self, entry):
        amount, minor_units = super().get_attribute(entry)
        return (None if entry.account.journal else amount), minor_units


class LedgerEntrySerializer(serializers.ModelSerializer):
    key = serializers.CharField(source="transaction.key", help_text="stake:<bet>, payout:<bet>, refund:<bet>, ...")
    kind = serializers.CharField(source="transaction.kind")
    currency = serializers.CharField(source="account.currency_id")
    amount = MoneyField(currency="account.currency", help_text="Signed: > 0 credits the wallet.")
    balance_after = BalanceAfterField(
        currency="account.currency", allow_null=True,
        help_text="The wallet's balance right after this entry; null for a seamless operator's player, "
                  "whose money the operator's wallet holds.")
    created_at = serializers.DateTimeField(source="transaction.created_at")

    class Meta:
        model = LedgerEntry
        fields = ["id", "key", "kind", "currency", "amount", "balance_after", "created_at"]
        read_only_fields = fields


# -- the replay of a bet (settlement.selectors.bet_replay / round_public) -----------------------------

class DecisionSerializer(serializers.Serializer):
    action = serializers.CharField(help_text="hit, stand, double, split, surrender")
    by = serializers.ChoiceField(choices=["player", "auto"], help_text="auto = auto-play (no decision arrived).")


class PublicHandSerializer(serializers.Serializer):
    cards = serializers.ListField(child=serializers.CharField())
    score = serializers.IntegerField()
    soft = serializers.BooleanField()
    blackjack = serializers.BooleanField()
    split = serializers.BooleanField()
    doubled = serializers.BooleanField()
    surrendered = serializers.BooleanField()
    outcome = serializers.CharField(help_text="blackjack, win, push, lose, surrender")


class HandSerializer(PublicHandSerializer):
    outcome = serializers.CharField(help_text="blackjack, win, push, lose, surrender; void (the round was voided)")
    decisions = DecisionSerializer(many=True)
    stake = serializers.CharField(help_text="This bet's stake on the hand (decimal string).")
    returned = serializers.CharField()
    odds = serializers.CharField(allow_null=True, help_text="N of N:1 when paid.")
    note = serializers.CharField(allow_null=True)


class InsuranceSerializer(serializers.Serializer):
    stake = serializers.CharField()
    returned = serializers.CharField()
    outcome = serializers.CharField(help_text="win, lose; void (the round was voided)")


class DealerSerializer(serializers.Serializer):
    cards = serializers.ListField(child=serializers.CharField())
    score = serializers.IntegerField()
    blackjack = serializers.BooleanField()
    bust = serializers.BooleanField()


class PlaySerializer(serializers.Serializer):
    """How the bet was played and paid (engine replay of the round record)."""

    dealer = DealerSerializer()
    staked = serializers.CharField()
    returned = serializers.CharField()
    outcome = serializers.CharField(help_text="blackjack, win, push, lose, surrender; void: the round was voided, "
                                              "every stake returned")
    extras = serializers.DictField(child=serializers.CharField(), help_text="Extra stakes by kind.")
    seat = serializers.IntegerField(required=False)
    hands = HandSerializer(many=True, required=False, help_text="Main and behind bets: the hand(s) the bet rode on.")
    insurance = InsuranceSerializer(required=False, allow_null=True)
    pattern = serializers.CharField(required=False, allow_null=True, help_text="Side bets: the pattern paid.")
    odds = serializers.CharField(required=False, allow_null=True, help_text="Side bets: N of N:1 when paid.")
    explanation = serializers.CharField()


class PlayerBetDetailSerializer(PlayerBetSerializer):
    """A bet's page: ``PlayerBetSerializer``'s fields and the bet's extra stakes, play and ledger
    entries. The view serializes the same shape with ``bet_detail``, which must stay in step."""

    extras = PlayerBetExtraSerializer(many=True)
    play = PlaySerializer(allow_null=True, help_text="Null until the round has a result.")
    ledger = LedgerEntrySerializer(many=True, help_text="The wallet entries of this bet's money.")

    class Meta(PlayerBetSerializer.Meta):
        fields = PlayerBetSerializer.Meta.fields + ["follow_double", "follow_split", "extras", "play", "ledger"]
        read_only_fields = fields


def bet_detail(bet, extras, play, ledger, zone):
    """A bet's page as ``PlayerBetDetailSerializer`` shows it with ``zone`` (a ``tzinfo``) the
    current time zone, from ``bet`` (a ``wagering.selectors.bet_detail_row``), its ``extras``
    (``extras_of``), its ``play`` (``settlement.selectors.bet_replay``) and its ``ledger`` entries
    (``bet_ledger_rows``): ``bet_row``, then the rest. Plain functions, as ``bet_row``: DRF's
    nested serializers cost more than the page's queries."""
    units = bet["currency__minor_units"]
    data = bet_row(bet, zone)
    data["follow_double"], data["follow_split"] = bet["follow_double"], bet["follow_split"]
    data["extras"] = [{"kind": x["kind"], "hand": x["hand"], "amount": amount_string(x["amount"], units),
                       "created_at": iso_time(x["created_at"], zone)} for x in extras]
    data["play"] = shown(play, PlaySerializer)
    data["ledger"] = [ledger_entry(entry, zone) for entry in ledger]
    return data


def ledger_entry(entry, zone):
    """A ledger entry (a dict of ``accounts.selectors.LEDGER_ROW``) as ``LedgerEntrySerializer``
    shows it with ``zone`` the current time zone (no ``balance_after`` on a journal wallet, as
    ``BalanceAfterField``)."""
    units = entry["account__currency__minor_units"]
    balance_after = None if entry["account__journal"] else entry["balance_after"]
    return {"id": entry["id"], "key": entry["transaction__key"], "kind": entry["transaction__kind"],
            "currency": entry["account__currency_id"], "amount": amount_string(entry["amount"], units),
            "balance_after": amount_string(balance_after, units),
            "created_at": iso_time(entry["transaction__created_at"], zone)}


def shown(value, serializer_class):
    """``value`` (JSON-typed data: dicts, lists, strings, numbers) as ``serializer_class`` shows
    it: each dict keeps the serializer's fields, in its order (an absent field is null when it
    allows null, else left out), nested serializers' fields in turn; values pass as they are."""
    return _kept(value, _shape(serializer_class))


@cache
def _shape(serializer_class):
    """``[(field name, shape of its value, null when absent)]`` of ``serializer_class``: a nested
    serializer's (or a list of them: its child's) own shape, None for a plain value."""
    shape = []
    for name, field in serializer_class().fields.items():
        child = getattr(field, "child", field)
        shape.append((name, _shape(type(child)) if isinstance(child, serializers.Serializer) else None,
                      field.allow_null))
    return tuple(shape)


def _kept(value, shape):
    if value is None or shape is None:
        return value
    if isinstance(value, list):
        return [_kept(item, shape) for item in value]
    return {name: _kept(value[name], inner) if name in value else None
            for name, inner, nullable in shape if nullable or name in value}


class SeatSerializer(serializers.Serializer):
    seat = serializers.IntegerField()
    hands = PublicHandSerializer(many=True)


class RoundResultSerializer(serializers.Serializer):
    dealer = DealerSerializer()
    seats = SeatSerializer(many=True, help_text="Classic / premium: every seat's hands.")
    player_cards = serializers.ListField(child=serializers.CharField(), allow_null=True,
                                         help_text="Boundless: the shared player cards in dealt order.")
    ended_at_peek = serializers.BooleanField()
    late_dealer_blackjack = serializers.BooleanField()


class PlayerRoundDetailSerializer(RoundSummarySerializer):
    opened_at = serializers.DateTimeField()
    resulted_at = serializers.DateTimeField(allow_null=True)
    settled_at = serializers.DateTimeField(allow_null=True)
    voided_at = serializers.DateTimeField(allow_null=True)
    result = RoundResultSerializer(allow_null=True, help_text="Null until the round has a result.")
    bets = PlayerBetSerializer(many=True, source="bets_of_player", help_text="Your bets in this round.")


class RoundStepSerializer(serializers.Serializer):
    """One step of a round's timeline as its player may see it."""

    at = serializers.DateTimeField()
    kind = serializers.CharField(help_text="opened, bet_placed, betting_closed, extra_stake, fallback, card_scanned, "
                                           "decision, auto_play (a decision taken on a timeout), resulted, settled, "
                                           "voided, ...")
    detail = serializers.DictField(help_text="Your bet's step: its values (money as decimal strings). "
                                                             "A step of the whole round: empty.")


class RecentRoundSerializer(PlayerRoundDetailSerializer):
    steps = RoundStepSerializer(many=True, help_text="Every step of the round, oldest first: yours in full, the "
                                                     "round's own without their totals.")


class DisputeSerializer(serializers.ModelSerializer):
    """A dispute as its player sees it (who handles it stays in the back office)."""

    bets = serializers.PrimaryKeyRelatedField(many=True, read_only=True)
    currency = serializers.CharField(source="currency_id")
    status = serializers.CharField(help_text="open, investigating, upheld, rejected")
    adjustment = MoneyField(currency="currency", allow_null=True,
                            help_text="Upheld: the amount credited (> 0) or debited (< 0).")

    class Meta:
        model = Dispute
        fields = ["id", "bets", "reason", "status", "currency", "resolution", "adjustment", "created_at",
                  "resolved_at"]
        read_only_fields = fields


class DisputeRequestSerializer(StrictSerializer):
    bets = serializers.ListField(child=StrictIntegerField(min_value=1, max_value=MAX_ID), min_length=1,
                                 max_length=100, help_text="Ids of your bets (one currency).")
    reason = StrictCharField(max_length=MAX_REASON, validators=[RegexValidator(REASON_PATTERN, "write a reason")],
                             help_text="What is wrong, in your words.")
