"""memvault.distill: everything that turns episodes into memory cards, and changes cards on request.

Owns: the distill run (service: lock, batches, the propose -> apply -> commit of a batch, crash recovery on
start; run: its Summary and state), batching and related cards (batching), the LLM engine and its prompt
(llm_engine, prompts/), the OpenAI-compatible client (llm/), the reply schema (proposals), near-duplicate merge
and supersede (merge), reading the journal (journal), rollback after a history edit (rollback: the plan,
history: applying it), the `--auto` cron rules (auto), `remember`, `forget`, and `import-rules` (import_rules;
rulefile reads an agent's rules file into statements). `cards` re-exports the pure
card logic under its old name.

May import: core (memvault.errors, model, choices), redact/, vault/, and search/ only for tokenize and bm25.
Must NOT import views/ or cli/ (they sit above it), nor capture/. Files are written only through vault/
functions (vault.pages.write_change_set, vault.store helpers); no SQL here. (Known exception, to move
into vault/: forget._drop_index still deletes the derived search index files itself.)
"""
