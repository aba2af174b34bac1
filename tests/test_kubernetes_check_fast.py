"""The kubernetes-labels check's bulk tests (a Dragonfly+ has 10^6 hosts) never pass what the
name-by-name and value-by-value checks would reject: when they say "all valid" the slow loop
had nothing to report, and when they do not, the slow loop runs and locates the problem."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from supernodeiac.checks.kubernetes_labels import _all_labels_valid, _all_node_names_valid
from supernodeiac.facts.node_labels import Labels, key_problem, node_name_problem, value_problem

# The characters that decide a DNS subdomain, and some that break one.
NAME_CHARS = st.sampled_from(list("ab0z9-.\nA_ é/"))
names = st.lists(st.text(NAME_CHARS, max_size=8), max_size=5)


@settings(max_examples=3000, deadline=None)
@given(names)
def test_names_valid_in_bulk_only_when_each_is(batch):
    if _all_node_names_valid(batch):
        assert not any(node_name_problem(n) for n in batch)


def test_names_in_bulk_on_the_usual_cases():
    assert _all_node_names_valid([]) and _all_node_names_valid(["gpu-0001", "a.b-c.d", "x"])
    for bad in ("-a", "a-", "a..b", ".a", "a.", "A", "a_b", "", "a\nb", "a" * 254, "a.-b", "a-.b"):
        assert not _all_node_names_valid(["ok", bad]), bad
    assert _all_node_names_valid(["a" * 253])


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.dictionaries(st.text(NAME_CHARS, max_size=6), st.text(NAME_CHARS, max_size=6), max_size=3), max_size=4))
def test_labels_valid_in_bulk_only_when_each_is(per_host):
    labels = Labels.of(dict(enumerate(per_host)), origins={}, primary=None)
    each = all(not key_problem(k) and not value_problem(v) for host in per_host for k, v in host.items())
    assert _all_labels_valid(labels) == each
