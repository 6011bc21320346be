"""Indexed reads give exactly what a scan of the table gives, before and after writes and resets."""

from __future__ import annotations

from compoworld.core.environment import Environment
from compoworld.core.query import matches
from compoworld.core.resource import Resource
from compoworld.services import registry


def test_read_email_thread_lookup_equals_a_scan_through_writes_and_resets() -> None:
    env = Environment(services=["email"], seed=4, size="small")
    email = env.services["email"]

    def scanned(mid: str) -> list[str]:
        msg = email.table("messages")[mid]
        thread = [m for m in email.table("messages").values() if m["threadId"] == msg["threadId"]]
        return [m["id"] for m in sorted(thread, key=lambda m: (m["date"], m["id"]))]

    def check() -> None:
        for mid in email.table("messages"):
            got = env.call("email__gmail_read_email", {"messageId": mid})["data"]
            assert [m["id"] for m in got["messages"]] == scanned(mid)

    check()
    first = next(iter(email.table("messages").values()))
    for _ in range(2):
        r = env.call(
            "email__gmail_send_email",
            {"to": ["x@example.com"], "subject": "Re", "body": "more", "threadId": first["threadId"]},
        )
        assert r["success"]
    env.call("email__gmail_delete_email", {"messageId": first["id"]})
    check()
    env.reset()
    check()


def test_resource_find_and_search_equal_a_scan_in_every_service() -> None:
    env = Environment(services=list(registry()), seed=2, size="small")
    checked = 0
    for svc in env.services.values():
        for attr, r in vars(type(svc)).items():
            if not isinstance(r, Resource):
                continue
            bound = getattr(svc, attr)
            rows = list(svc.table(r.table).values())
            fields = sorted(
                {k for rec in rows[:20] for k, v in rec.items() if isinstance(v, str | int | bool)}
            )
            for f in fields[:6]:
                for value in {rec.get(f) for rec in rows[:10]}:
                    if value is None:
                        continue
                    assert bound.find(**{f: value}) == [rec for rec in rows if rec.get(f) == value]
                    checked += 1
            for rec in rows[:5]:
                for q in [str(rec.get(f, ""))[:8] for f in r.text] + ["zz-none"]:
                    assert bound.search(q) == [
                        x for x in rows if not q or matches(q, *(x.get(f) for f in r.text))
                    ]
    assert checked > 50


# ---- differential: every tool, indexed store against a store that scans --------------------------
import pytest  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from compoworld.core.state import Store, table_hash_full  # noqa: E402
from tests.core.test_properties import pools  # noqa: E402
from tests.strategies import arguments_for  # noqa: E402


class ScanStore(Store):
    """The same store with every index read done the slow way (a scan, and no text cache)."""

    __slots__ = ()

    def lookup(self, table, field, value):  # type: ignore[override]
        return [
            r for r in self.tables.get(table, {}).values() if isinstance(r, dict) and r.get(field) == value
        ]

    def text_of(self, table, key, rec, fields):  # type: ignore[override]
        from compoworld.core.query import haystack

        return haystack(*(rec.get(f) for f in fields))


SERVICES = [s for s in registry() if s != "browser"]  # the browser acts through the others' tools


@pytest.fixture(scope="module")
def twins() -> tuple[Environment, Environment]:
    fast = Environment(services=SERVICES, seed=5, size="small")
    slow = Environment(services=SERVICES, seed=5, size="small")
    for svc in slow.services.values():
        svc.store.__class__ = ScanStore
    return fast, slow


@pytest.mark.parametrize("service", SERVICES)
def test_indexed_reads_answer_exactly_what_scans_answer(twins, service: str) -> None:
    fast, slow = twins
    specs = registry()[service].tool_specs
    pool = pools(fast)
    calls = st.lists(
        st.sampled_from(sorted(specs)).flatmap(
            lambda t: st.tuples(st.just(t), arguments_for(specs[t].input_schema, pool))
        ),
        min_size=1,
        max_size=5,
    )

    @settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
    @given(seq=calls)
    def run(seq) -> None:
        fast.reset()
        slow.reset()
        for tool, args in seq:
            name = f"{service}__{tool}"
            assert fast.call(name, args) == slow.call(name, args), name
            assert fast.state_hash() == slow.state_hash()
            store = fast.services[service].store  # no tool edits a record in place: digests stay true
            assert all(store.table_hash(t) == table_hash_full(v) for t, v in store.tables.items()), name

    run()


def test_an_update_validating_only_its_changes_equals_a_full_validation() -> None:
    """`Resource.update` checks only the changed fields of a validated record: same record, same
    key order, and the same errors as validating the whole record."""
    env = Environment(services=SERVICES, seed=6, size="small")
    compared = 0
    for svc in env.services.values():
        for attr, r in vars(type(svc)).items():
            if not isinstance(r, Resource):
                continue
            bound = getattr(svc, attr)
            rows = list(svc.table(r.table).values())[:6]
            for a, b in zip(rows, rows[1:], strict=False):
                cur = bound.validate(dict(a))  # a fixed point, as every record a tool wrote is
                for f in [f for f in b if f != r.key][:8]:
                    for value in (b[f], "not-a-valid-value", 12345, None):
                        try:
                            want = bound.validate({**cur, f: value})
                        except Exception as e:  # noqa: BLE001
                            want = ("error", str(e))
                        try:
                            got = bound._validate_changes(cur, {f: value})
                        except Exception as e:  # noqa: BLE001
                            got = ("error", str(e))
                        assert got == want and (isinstance(got, tuple) or list(got) == list(want))
                        compared += 1
    assert compared > 200
