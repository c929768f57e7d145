"""Operator roles as Django groups.

- ``Viewer``: reads every operator page, changes nothing.
- ``Dispute officer``: Viewer + works disputes (``settlement.resolve_dispute``) and makes manual
  adjustments within the officer's caps, each settling a dispute (``accounts.adjust_small``;
  ``settlement.adjustments``).
- ``Supervisor``: Dispute officer + voids and resettles rounds (``tables.void_round``,
  ``tables.resettle_round``), makes any adjustment and approves another supervisor's above the
  threshold (``accounts.adjust_any``), acknowledges alerts (``settlement.acknowledge_alert``) and
  sends a failing seamless wallet movement again now (``wallets.retry_movement``).

A role's user who is an operator's staff (``accounts.OperatorStaff``) does all this on that
operator's rows only (``accounts.scoping``), and never voids or resettles a round (rounds are
shared by every operator).

The custom permissions hang on the content types of the models they act on; they are created here
(``get_or_create``), not in model ``Meta``, because the operator site owns no model. ``ensure_roles``
is idempotent; it runs after every ``migrate`` (``adminkit.apps.AdminkitConfig``) and from ``create_roles``.
"""

from django.contrib.auth.models import Group, Permission
from django.contrib.contenttypes.models import ContentType

#: (app label, model, codename, name) of the operator actions' permissions.
CUSTOM_PERMISSIONS = [
    ("tables", "round", "void_round", "Can void a round (refund every stake)"),
    ("tables", "round", "resettle_round", "Can resettle a round with a corrected record"),
    ("settlement", "dispute", "resolve_dispute", "Can work and resolve disputes"),
    ("settlement", "alert", "acknowledge_alert", "Can acknowledge alerts"),
    ("accounts", "account", "adjust_small", "Can make manual adjustments up to the dispute officer limit"),
    ("accounts", "account", "adjust_any", "Can make manual adjustments of any amount"),
    ("wallets", "walletmovement", "retry_movement", "Can send a failing wallet movement again now"),
]
#: Models every role may view: (app label, model names).
VIEWABLE = {
    "accounts": ["currency", "player", "account", "ledgertransaction", "ledgerentry", "operator", "operatorapikey",
                 "operatorapicall"],
    "tables": ["table", "tablelimit", "seat", "shoe", "round", "roundevent"],
    "wagering": ["bet", "betextra", "dailyrollup"],
    "settlement": ["settlementdetail", "roundcorrection", "alert", "dispute", "disputenote", "operatoraction",
                   "adjustment", "exceptionentry"],
    "wallets": ["walletmovement"],
}
VIEWER, DISPUTE_OFFICER, SUPERVISOR = "Viewer", "Dispute officer", "Supervisor"
#: Role -> its permissions beyond viewing ("app_label.codename").
ROLES = {
    VIEWER: [],
    DISPUTE_OFFICER: ["settlement.resolve_dispute", "accounts.adjust_small"],
    SUPERVISOR: ["settlement.resolve_dispute", "settlement.acknowledge_alert", "accounts.adjust_small",
                 "accounts.adjust_any",
                 "tables.void_round", "tables.resettle_round", "wallets.retry_movement"],
}


def _permission(using, app_label, model, codename, name=None):
    content_type, _ = ContentType.objects.db_manager(using).get_or_create(app_label=app_label, model=model)
    perm, _ = Permission.objects.db_manager(using).get_or_create(
        content_type=content_type, codename=codename,
        defaults={"name": name or f"Can {codename.replace('_', ' ')}"})
    return perm


def ensure_roles(using="default"):
    """Create (or complete) the custom permissions and the three role groups; returns the groups
    by name. Never removes a permission an administrator added to a group by hand."""
    custom = {f"{app}.{codename}": _permission(using, app, model, codename, name)
              for app, model, codename, name in CUSTOM_PERMISSIONS}
    views = [_permission(using, app, model, f"view_{model}", f"Can view {model}")
             for app, models in VIEWABLE.items() for model in models]
    groups = {}
    for role, extra in ROLES.items():
        group, _ = Group.objects.db_manager(using).get_or_create(name=role)
        group.permissions.add(*views, *(custom[p] for p in extra))
        groups[role] = group
    return groups
