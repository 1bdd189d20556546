"""Property tests (issue 34): keys drawn at random in each provider's documented format (tests/unit/
redact_keygen.py) and written in many syntaxes are never left in clear, whatever letters the random part
holds ("YoUr", "HeRe", "xXxX", no digit at all); and every copy of a found secret goes. hypothesis draws the
format, the syntax and the seed of the body's generator (its own random values lean to simple strings such as
"AAAA", which are placeholders, not keys); `derandomize=True` fixes its seed, so the suite is reproducible
(bench/redact_random.py runs the same draws with a fresh seed and >= 100,000 of them)."""

from __future__ import annotations

import random
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent))
import redact_keygen as keygen  # noqa: E402

from memvault.redact.engine import redact  # noqa: E402

FIXED = settings(derandomize=True, database=None, deadline=None, max_examples=1500,
                 suppress_health_check=[HealthCheck.too_slow])


@FIXED
@given(fmt=st.integers(0, len(keygen.FORMATS) - 1), syntax=st.integers(0, len(keygen.SYNTAXES) - 1),
       seed=st.integers(0, 2**64))
def test_random_keys_in_documented_formats_are_never_left_in_clear(fmt, syntax, seed):
    name, form, text, key = keygen.draw(random.Random(seed), fmt, syntax)
    out = redact(text).text
    assert not keygen.in_clear(key, out), (name, form, text, out)
    assert redact(out).text == out  # idempotent


@FIXED
@given(fmt=st.integers(0, len(keygen.FORMATS) - 1), seed=st.integers(0, 2**64),
       gap=st.sampled_from(["\n", " ", "\n\n```\n", "。", " and later ", "\nlog: "]))
def test_every_copy_of_a_found_key_goes(fmt, seed, gap):
    """The key after `token =` is found; its bare copies elsewhere in the text (no key word beside them) go too."""
    _name, _form, _text, key = keygen.draw(random.Random(seed), fmt, 0)
    text = f"token = '{key}'{gap}copied: {key}{gap}({key})"
    out = redact(text).text
    assert key not in out and not keygen.in_clear(key, out), out


def test_the_table_covers_twenty_providers_and_many_syntaxes():
    providers = {name.split("-")[0] for name, _ in keygen.FORMATS}
    assert len(keygen.FORMATS) >= 40 and len(providers) >= 20
    assert len(keygen.SYNTAXES) >= 25
