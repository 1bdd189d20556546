"""memvault.hosts at the byte level: JSONC comments found and kept, and MCP schemas every validator takes."""

from __future__ import annotations

import json

import pytest

from memvault.hosts import jsonedit


@pytest.mark.parametrize("text", [
    '{"url": "https://x.example//a", "re": "/* not a comment */"}',
    '{"q": "a \\" // still a string"}',
    '{"k": "值 // 中文"}',
])
def test_comment_marks_inside_strings_are_not_comments(text):
    assert jsonedit.blank_comments(text) == text
    assert jsonedit.check(text) == json.loads(text)


def test_comments_are_blanked_to_the_same_length_with_their_line_breaks():
    text = '{\n  // one\n  "a": 1, /* two\n  lines */ "b": [1, /* in a list */ 2]\n}\n'
    blank = jsonedit.blank_comments(text)
    assert len(blank) == len(text) and blank.count("\n") == text.count("\n")
    assert jsonedit.check(text) == {"a": 1, "b": [1, 2]}
    # An edit keeps every comment; removing what was added gives back the very bytes.
    added = jsonedit.set_value(text, ["mcpServers", "memvault"], {"command": "memvault", "args": ["mcp"]})
    assert all(c in added for c in ("// one", "/* two\n  lines */", "/* in a list */"))
    assert jsonedit.check(added)["mcpServers"]["memvault"]["command"] == "memvault"
    assert jsonedit.remove(added, ["mcpServers"]) == text
    appended = jsonedit.append(text, ["b"], 3)
    assert jsonedit.check(appended)["b"] == [1, 2, 3] and "/* in a list */" in appended


def test_a_comment_alone_in_an_object_stays():
    text = '{\n  "hooks": { /* none yet */ }\n}\n'
    out = jsonedit.append(text, ["hooks", "SessionStart"], {"hooks": []})
    assert "/* none yet */" in out and jsonedit.check(out) == {"hooks": {"SessionStart": [{"hooks": []}]}}


def test_a_broken_jsonc_file_is_refused_with_its_line():
    with pytest.raises(ValueError, match="line 3"):
        jsonedit.check('{\n  // fine\n  "a": ,\n}\n')


def _walk(node, path="$"):
    if isinstance(node, dict):
        for k, v in node.items():
            yield path, k, v
            yield from _walk(v, f"{path}.{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _walk(v, f"{path}[{i}]")


def test_mcp_schemas_have_no_type_arrays():
    """The MCP Inspector's --strict mode warns on `"type": ["string", "null"]`: anyOf instead."""
    from memvault.mcp import catalog

    bad = [f"{t['name']}: {p}" for t in catalog.tools(False) for p, k, v in _walk(t) if k == "type"
           and isinstance(v, list)]
    assert not bad, bad
    search = next(t for t in catalog.tools(False) if t["name"] == "search")
    hit = search["outputSchema"]["properties"]["hits"]["items"]["properties"]
    assert hit["project"] == {"anyOf": [{"type": "string"}, {"type": "null"}]}
