"""The import contract: the floors of docs/architecture.md, read from the code's own imports (grimp
builds the graph, lazy imports inside functions included).

1. No import climbs a floor: a module imports only modules of its own floor or of floors below;
   floors side by side on one level are independent (the ledger knows no game, the engine no
   ledger). A floor ``APART`` neither imports nor is imported by any other: the reference
   operator wallet (``operator_wallet``) is the operator's side of docs/wallet-api.md, and shares
   nothing with the platform but that protocol.
2. No import circles: no two modules import each other, directly or through others.
3. The engine is pure Python: ``tables.engine`` imports the standard library and itself only.

A module's floor is the most specific entry of ``FLOORS`` its dotted name falls under, so
``tables.engine.rules`` is on the engine's floor. An app's ``admin.py`` and management commands
stand on their app's floor (Django keeps them there): a page that shows what only a higher floor
knows is completed by that floor's ``admin.py`` (``adminkit.base.replace_page``).
"""

import sys

import grimp
import pytest

#: Top level first; each level holds one floor, or floors side by side, each with the module
#: prefixes that stand on it.
FLOORS = [
    [("config", ["config"])],
    [("delivery", ["delivery"])],
    [("settlement", ["settlement"])],
    [("wagering", ["wagering"])],
    [("tables", ["tables"])],
    [("wallets", ["wallets"])],
    [("accounts", ["accounts"]), ("engine", ["tables.engine"])],
    [("adminkit", ["adminkit"]), ("operator_wallet", ["operator_wallet"])],
]
APART = {"operator_wallet"}
PACKAGES = ("config", "delivery", "settlement", "wagering", "tables", "wallets", "accounts", "adminkit",
            "operator_wallet")


def floor_of(module):
    """``(level, floor name)`` of ``module`` (level 0 = the bottom), by its longest prefix."""
    best = None
    for level, floors in enumerate(reversed(FLOORS)):
        for name, prefixes in floors:
            for prefix in prefixes:
                if (module == prefix or module.startswith(prefix + ".")) and (best is None or len(prefix) > best[0]):
                    best = (len(prefix), level, name)
    assert best is not None, f"{module} stands on no floor: add it to FLOORS"
    return best[1:]


def may_import(importer, imported):
    """True when ``importer``'s floor may import ``imported``'s: the same floor, or a lower level
    when neither floor stands ``APART``."""
    (level, name), (their_level, their_name) = floor_of(importer), floor_of(imported)
    return their_name == name or (their_level < level and not {name, their_name} & APART)


@pytest.fixture(scope="module")
def graph():
    return grimp.build_graph(*PACKAGES, include_external_packages=True, cache_dir=None)


def own(graph):
    return {m for m in graph.modules if m.split(".")[0] in PACKAGES}


def _where(graph, importer, imported):
    details = graph.get_import_details(importer=importer, imported=imported)
    return ", ".join(f"line {d['line_number']}" for d in details) or "?"


def test_no_import_climbs_a_floor(graph):
    climbs = []
    for importer in sorted(own(graph)):
        for imported in sorted(graph.find_modules_directly_imported_by(importer) & own(graph)):
            if not may_import(importer, imported):
                climbs.append(f"{importer} ({floor_of(importer)[1]}) imports {imported} ({floor_of(imported)[1]}), "
                              f"{_where(graph, importer, imported)}")
    assert not climbs, "imports that climb a floor or cross to a floor apart:\n" + "\n".join(climbs)


def _circles(nodes, edges):
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, found, counter = {}, {}, set(), [], [], [0]
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_no_import_circles(graph):
    modules = own(graph)
    edges = {m: graph.find_modules_directly_imported_by(m) & modules for m in modules}
    circles = _circles(modules, edges)
    assert not circles, "import circles:\n" + "\n".join(" <-> ".join(c) for c in circles)


def test_the_engine_imports_the_standard_library_and_itself_only(graph):
    engine = {m for m in graph.modules if m == "tables.engine" or m.startswith("tables.engine.")}
    foreign = sorted(f"{m} imports {imported} ({_where(graph, m, imported)})" for m in engine
                     for imported in graph.find_modules_directly_imported_by(m)
                     if imported not in engine and imported.split(".")[0] not in sys.stdlib_module_names)
    assert not foreign, "the engine reaches outside itself:\n" + "\n".join(foreign)


def test_the_floors_say_what_may_import_what():
    """The rule the checks above apply is not vacuous."""
    assert not may_import("accounts.services", "wagering.models")  # the ledger below the game
    assert not may_import("accounts.money", "tables.engine.money")  # ... which includes the engine
    assert not may_import("tables.engine.rules", "accounts.money")  # the engine knows no ledger
    assert not may_import("wallets.port", "tables.models")  # the wallet port knows no game
    assert may_import("wagering.placement", "wallets.port")
    assert not may_import("wagering.placement", "delivery.api.common")  # domain never reaches delivery
    assert not may_import("accounts.admin", "wagering.selectors")  # an app's admin.py stands on its floor
    assert not may_import("adminkit.money", "accounts.models")  # the toolkit knows no domain
    assert not may_import("accounts.services", "operator_wallet.server")  # the platform knows no operator's wallet
    assert not may_import("operator_wallet.server", "accounts.services")  # ... nor the wallet the platform
    assert not may_import("operator_wallet.wallet", "adminkit.money")
    assert may_import("operator_wallet.server", "operator_wallet.wallet")
    assert may_import("settlement.admin", "tables.admin")
    assert may_import("settlement.services", "tables.engine")
