"""Reads of settled play that the player API and the operator pages share: the record a round is
settled on (its last correction, else the record received), a bet's play and ledger entries, and
the public face of a round's result, and the operator actions taken on any object (the audit
trail).

The detail of a bet (hands, decisions with auto-play marked, side-bet pattern, odds) is the stored
``SettlementDetail.detail``, or, before settlement, the engine's replay of the round's effective
record (``Round.result_of``), which gives the same answer. Money is ``Decimal`` in major units.
"""

from django.db.models import DecimalField, OuterRef, Q, Subquery, Sum
from django.db.models.functions import Coalesce

from accounts.models import MONEY, Account, LedgerEntry
from accounts.selectors import LEDGER_ROW
from accounts.sql import shaped_rows
from tables.engine import InvalidRecord, is_blackjack, score
from tables.models import Round
from tables.money import group_key
from wagering.models import Bet, BetExtra
from wagering.selectors import ZERO

from .models import OperatorAction, RoundCorrection


def effective_record(round_):
    """The record ``round_`` is settled on: its last ``RoundCorrection.record``, else ``round_.record``."""
    last = round_.corrections.order_by("-sequence").first()
    return last.record if last else round_.record


def with_amount_at_stake(disputes):
    """``disputes`` (a ``Dispute`` queryset) annotated with ``at_stake``: what their bets staked in
    all, extra stakes included (``Decimal``, major units of the dispute's currency)."""
    money = DecimalField(**MONEY)
    stakes = (Bet.objects.filter(disputes=OuterRef("pk")).order_by().values("disputes")
              .annotate(total=Sum("stake")).values("total"))
    extras = (BetExtra.objects.filter(bet__disputes=OuterRef("pk")).order_by().values("bet__disputes")
              .annotate(total=Sum("amount")).values("total"))
    return disputes.annotate(at_stake=Coalesce(Subquery(stakes, output_field=money), ZERO)
                             + Coalesce(Subquery(extras, output_field=money), ZERO))


def _keys(bet, extra_keys):
    """The ledger keys of ``bet``'s money (a ``Bet`` with its pk, round and player) but its
    resettles'. Keys (posted by ``wagering.placement``, ``wagering.extras``, ``wagering.closing``,
    ``settlement.services``, ``settlement.voids``): ``stake:<pk>``, each extra stake's key
    (``extra_keys``: ``double:<pk>``, ``split:<pk>``, ``double:<pk>:2``, ...), ``payout:<pk>``,
    ``refund:<pk>`` and ``refund:<extra key>``, ``reverse:<pk>``; a seamless player's money back
    is posted once per round and purpose instead (``tables.money.group_key``: ``payout``,
    ``refund``, ``reverse``), with their other bets' of the round; then the resettles, one per
    correction (``resettle:<pk>:<n>``, seamless ``resettle-<n>:<round>:<player>``)."""
    keys = [bet.stake_key(), f"payout:{bet.pk}", bet.refund_key(), f"reverse:{bet.pk}"]
    keys += [group_key(group, bet.round_id, bet.player_id) for group in ("payout", "refund", "reverse")]
    for key in extra_keys:
        keys += [key, BetExtra(key=key).refund_key()]
    return keys


def corrected_records(*, shoe_id):
    """``{round id: record}``: the last correction's record of every corrected round of shoe
    ``shoe_id`` (a ``Shoe`` pk), the cards those rounds really dealt."""
    return dict(RoundCorrection.objects.filter(round__shoe_id=shoe_id).order_by("round_id", "sequence")
                .values_list("round_id", "record"))


def bet_ledger_entries(bet):
    """The entries on ``bet``'s player's wallets that move ``bet``'s money, oldest first, with their
    transactions and currencies (``bets_money_entries`` of the one bet)."""
    return bets_money_entries([bet]).select_related("account__currency")


def bets_money_entries(bets):
    """The wallet entries that move ``bets``' money (``Bet`` rows, extras prefetched), oldest first,
    with their transactions: each bet's ``_keys`` and its resettles' (``resettle:<pk>:<n>``)."""
    keys, ours = [], Q()
    for bet in bets:
        keys += _keys(bet, [extra.key for extra in bet.extras.all()])
        seamless = Q(transaction__key__startswith="resettle-",
                     transaction__key__endswith=group_key("", bet.round_id, bet.player_id))
        ours |= Q(transaction__key__startswith=f"resettle:{bet.pk}:") | seamless
    return (LedgerEntry.objects.filter(Q(transaction__key__in=keys) | ours, account__kind=Account.Kind.WALLET,
                                       account__player_id__in={b.player_id for b in bets})
            .select_related("transaction").order_by("id"))


def bet_ledger_rows(bet, extras):
    """``bet_ledger_entries`` of ``bet`` (a ``wagering.selectors.bet_detail_row``, ``extras`` its
    ``extras_of``) as dicts of ``accounts.selectors.LEDGER_ROW``, its resettles found by their keys:
    one per correction up to the one its settlement was computed from (a resettle points every
    bet it settles at its own correction's details)."""
    keys = _keys(Bet(pk=bet["id"], round_id=bet["round_id"], player_id=bet["player_id"]),
                 [extra["key"] for extra in extras])
    for n in range(1, (bet["settlement__correction"] or 0) + 1):
        keys += [f"resettle:{bet['id']}:{n}", group_key(f"resettle-{n}", bet["round_id"], bet["player_id"])]
    return shaped_rows(("bet ledger rows", len(keys)), lambda player, *keys: LedgerEntry.objects.filter(
        transaction__key__in=keys, account__kind=Account.Kind.WALLET, account__player_id=player)
        .order_by("id").values(*LEDGER_ROW), [bet["player_id"], *keys])


def _replay(round_):
    """``(effective record or None, RoundResult or None)`` of ``round_``: its last correction,
    else the record received (``round_.table.currency`` loaded)."""
    record = effective_record(round_)
    return record, _result(round_, record)


def _result(round_, record):
    """The engine's ``RoundResult`` of ``record`` (``round_``'s effective record, or None)
    (``Round.result_of``); None without a record or when it does not replay."""
    if not record:
        return None
    try:
        return round_.result_of(record)
    except (InvalidRecord, ValueError):
        return None


def _dealer(cards):
    total = score(cards) if cards else 0
    return {"cards": list(cards), "score": total, "blackjack": is_blackjack(cards[:2]), "bust": total > 21}


def bet_replay(bet):
    """What a bet's page shows of its play (``bet``: a ``wagering.selectors.bet_detail_row``): a
    dict with ``dealer`` (cards, score, blackjack, bust) and the bet's settlement detail as
    settlement stored it (``SettlementDetail.detail``, with the dealer of the record it was
    computed from: the round's record or the correction it names), or, before settlement, as the
    engine replays the round's effective record: ``staked``, ``returned``, ``outcome``,
    ``extras``; main/behind: ``hands`` (cards, score, outcome, stake, return, odds, ``decisions``
    ``[{"action", "by": "player"|"auto"}]``) and ``insurance``; side bets: ``pattern`` and
    ``odds``; ``explanation``. A refunded bet (its round voided) shows its cards as played but
    no win: every stake returned, outcome ``void``, no odds (``_voided``).
    A bet behind carries the seat's hands and decisions (table-public cards), never who sits there;
    a boundless bet only its own path. None while the round has no record."""
    stored, correction = bet["settlement__detail"], bet["settlement__correction"]
    if stored is not None:
        dealer = (bet["round__record__dealer"] if correction == 0 else RoundCorrection.objects.filter(
            round_id=bet["round_id"], sequence=correction).values_list("record__dealer", flat=True).get())
    else:
        round_ = Round.objects.select_related("table__currency").get(pk=bet["round_id"])
        record = effective_record(round_)
        result = _result(round_, record)
        if result is None or bet["record_id"] not in result.bets:
            return None
        stored, dealer = result.bets[bet["record_id"]].to_dict(), record.get("dealer")
    detail = {k: v for k, v in stored.items() if k not in PRIVATE_DETAIL}
    detail["dealer"] = _dealer(dealer or [])
    return _voided(detail) if bet["state"] == Bet.State.REFUNDED else detail

def _voided(detail):
    """``detail`` of a bet whose round was voided (RULES 10): whatever the record said, no win
    stands: the bet, each of its hands and its insurance return their stakes, outcome ``void``,
    no odds; the cards and decisions stay as played."""
    voided = {**detail, "returned": detail["staked"], "outcome": "void",
              "explanation": f"round voided: {detail['staked']} staked, refunded in full (RULES 10)"}
    if "odds" in detail:
        voided["odds"] = None
    if "hands" in detail:
        voided["hands"] = [{**hand, "returned": hand["stake"], "outcome": "void", "odds": None}
                           for hand in detail["hands"]]
    if detail.get("insurance"):
        voided["insurance"] = {**detail["insurance"], "returned": detail["insurance"]["stake"], "outcome": "void"}
    return voided


#: Keys of the engine's per-bet detail the player API leaves out (the record's ids, the boundless path index).
PRIVATE_DETAIL = ("id", "player", "path")
#: The fields of a played hand anyone at the table saw (no decisions: they are a player's own).
PUBLIC_HAND_FIELDS = ("cards", "score", "soft", "blackjack", "split", "doubled", "surrendered", "outcome")


def _public_hand(hand):
    public = {f: getattr(hand, f) for f in PUBLIC_HAND_FIELDS}
    public["cards"] = list(hand.cards)
    return public


def round_public(round_):
    """The public face of ``round_``'s result (what the studio showed; ``round_.table.currency``
    loaded): ``{"dealer": {...}, "seats": [{"seat": n, "hands": [...]}],
    "player_cards": [...] (boundless: the shared sequence) or None, "ended_at_peek",
    "late_dealer_blackjack"}``; hands carry ``PUBLIC_HAND_FIELDS`` only. None without a result."""
    record, result = _replay(round_)
    if result is None:
        return None
    seats = [{"seat": int(n), "hands": [_public_hand(h) for h in hands]}
             for n, hands in sorted((result.seats or {}).items(), key=lambda item: int(item[0]))]
    return {"dealer": _dealer(result.dealer_cards), "seats": seats, "player_cards": record.get("player_cards"),
            "ended_at_peek": result.ended_at_peek, "late_dealer_blackjack": result.late_dealer_blackjack}


def audit_trail(*targets, among=None):
    """Operator actions (audit rows) on the given model instances, newest first; ``among``: the
    ``OperatorAction`` queryset to read them from (e.g. the rows one operator's staff see), by
    default all."""
    query = Q()
    for obj in targets:
        query |= Q(target_model=obj._meta.label_lower, target_pk=str(obj.pk))
    rows = OperatorAction.objects.all() if among is None else among
    return list(rows.filter(query).select_related("actor")) if targets else []
