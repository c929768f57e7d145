"""The ledger's hash chains (``accounts.chain``): each transaction's ``prev_hash`` and ``chain_hash``,
each account's ``chain_head``; on PostgreSQL the functions ``accounts.services.post``'s statement
computes them with, and the transactions written before this migration linked into their chains
(their rows are immutable: the trigger is set aside for that one update).

- ``ledger_field(text)``: one length-prefixed field of a content (``accounts.chain.field``);
- ``ledger_chain(head, content)``: an aggregate, used as a window over a chain's new transactions in
  order: each one's ``chain_hash``, SHA-256 of the previous one's (the head for the first) and its
  content (``accounts.chain.link``);
- ``ledger_taken_keys(keys, locked)``: the keys among ``keys`` already posted, read with a snapshot of
  its own (a VOLATILE function's), so that a transaction the statement waited for (its wallet
  lock) is seen; ``locked`` (the count of the accounts locked) only orders it after the locks;
- ``ledger_all_written(written, fresh)``: fails the statement (as a unique key would, SQLSTATE 23505)
  when fewer transactions were written than the free keys read: another transaction took one
  meanwhile, for another wallet, so the links computed are not the chain's."""

from django.db import migrations, models

from accounts.chain import content, link
from adminkit.schema import postgresql_only

SQL = """
CREATE OR REPLACE FUNCTION ledger_field(value text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT length(coalesce(value, '')) || ':' || coalesce(value, '') $$;
CREATE OR REPLACE FUNCTION ledger_chain_step(state bytea, head bytea, content bytea) RETURNS bytea
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
    AS $$ BEGIN RETURN sha256(coalesce(state, head, ''::bytea) || content); END $$;
CREATE OR REPLACE AGGREGATE ledger_chain(bytea, bytea) (SFUNC = ledger_chain_step, STYPE = bytea);
CREATE OR REPLACE FUNCTION ledger_taken_keys(keys text[], locked bigint) RETURNS text[]
    LANGUAGE plpgsql VOLATILE
    AS $$ BEGIN
        RETURN (SELECT coalesce(array_agg(key), '{}') FROM accounts_ledgertransaction WHERE key = ANY(keys));
    END $$;
CREATE OR REPLACE FUNCTION ledger_all_written(written bigint, fresh bigint) RETURNS boolean
    LANGUAGE plpgsql VOLATILE
    AS $$ BEGIN
        IF written <> fresh THEN
            RAISE EXCEPTION 'a key of this posting was used meanwhile for another movement'
                USING ERRCODE = 'unique_violation', CONSTRAINT = 'ledger_key_taken_meanwhile';
        END IF;
        RETURN true;
    END $$;
"""
REVERSE = """
DROP FUNCTION IF EXISTS ledger_all_written(bigint, bigint);
DROP FUNCTION IF EXISTS ledger_taken_keys(text[], bigint);
DROP AGGREGATE IF EXISTS ledger_chain(bytea, bytea);
DROP FUNCTION IF EXISTS ledger_chain_step(bytea, bytea, bytea);
DROP FUNCTION IF EXISTS ledger_field(text);
"""

CHUNK = 5000


def link_earlier_transactions(apps, schema_editor):
    """Every transaction written before, in id order, linked into its chain (``accounts.chain``)."""
    Account = apps.get_model("accounts", "Account")
    LedgerTransaction = apps.get_model("accounts", "LedgerTransaction")
    LedgerEntry = apps.get_model("accounts", "LedgerEntry")
    wallets = set(Account.objects.filter(kind="wallet").values_list("pk", flat=True))
    postgresql = schema_editor.connection.vendor == "postgresql"
    if postgresql:
        schema_editor.execute("ALTER TABLE accounts_ledgertransaction DISABLE TRIGGER ledgertransaction_immutable")
    heads, last = {}, 0
    while True:
        txns = list(LedgerTransaction.objects.filter(pk__gt=last).order_by("pk")
                    .values_list("pk", "key", "kind", "currency_id", "memo", "created_at")[:CHUNK])
        if not txns:
            break
        last = txns[-1][0]
        legs = {}
        for txn_id, account_id, amount, balance_after in (
                LedgerEntry.objects.filter(transaction_id__gte=txns[0][0], transaction_id__lte=last)
                .order_by("pk").values_list("transaction_id", "account_id", "amount", "balance_after")):
            legs.setdefault(txn_id, []).append((account_id, amount, balance_after))
        links = []
        for pk, key, kind, currency_id, memo, created_at in txns:
            entries = legs.get(pk, [])
            on_wallets = [a for a, _, _ in entries if a in wallets]
            source = next((a for a, amount, _ in entries if amount < 0), entries[0][0] if entries else None)
            owner = min(on_wallets) if on_wallets else source
            prev = heads.get(owner)
            heads[owner] = link(prev, content(key=key, kind=kind, currency_id=currency_id, memo=memo,
                                              created_at=created_at, legs=entries))
            links.append(LedgerTransaction(pk=pk, prev_hash=prev, chain_hash=heads[owner]))
        LedgerTransaction.objects.bulk_update(links, ["prev_hash", "chain_hash"])
    Account.objects.bulk_update([Account(pk=pk, chain_head=head) for pk, head in heads.items() if pk is not None],
                                ["chain_head"], batch_size=CHUNK)
    if postgresql:
        schema_editor.execute("ALTER TABLE accounts_ledgertransaction ENABLE TRIGGER ledgertransaction_immutable")


class Migration(migrations.Migration):

    dependencies = [("accounts", "0007_operator_wallet_concurrency")]

    operations = [
        migrations.AddField(model_name="account", name="chain_head",
                            field=models.BinaryField(blank=True, editable=False, null=True)),
        migrations.AddField(model_name="ledgertransaction", name="prev_hash",
                            field=models.BinaryField(blank=True, editable=False, null=True)),
        migrations.AddField(model_name="ledgertransaction", name="chain_hash",
                            field=models.BinaryField(blank=True, editable=False, null=True)),
        postgresql_only(SQL, REVERSE),
        migrations.RunPython(link_earlier_transactions, migrations.RunPython.noop),
    ]
