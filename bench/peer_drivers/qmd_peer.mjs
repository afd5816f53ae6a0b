// qmd (@tobilu/qmd) over the vault, run with Node 22 by bench/bench_peers.py:
//   node qmd_peer.mjs VAULT STATE QUESTIONS OUT
// Its SDK as its README shows it: createStore with one collection (**/*.md), update() to index,
// searchLex() for its BM25 search (SQLite FTS5, porter unicode61). Its vector search, query
// expansion and reranking run GGUF models that node-llama-cpp downloads on first use: not here
// (no network but the registries), so only the lexical side is measured. Prints nothing; writes
// JSON: timings and each question's first pages.
import { createStore } from '@tobilu/qmd';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';

const [vault, state, questions, out] = process.argv.slice(2);
mkdirSync(state, { recursive: true });
const dbPath = `${state}/index.sqlite`;
const config = { collections: { vault: { path: vault, pattern: '**/*.md' } } };

let started = performance.now();
let store = await createStore({ dbPath, config });
await store.update();
await store.close();
const index_s = (performance.now() - started) / 1e3;

started = performance.now();
store = await createStore({ dbPath, config });
const noop = await store.update();
const noop_s = (performance.now() - started) / 1e3;

await store.searchLex('warm up', { limit: 10 });
const answers = {};
for (const q of JSON.parse(readFileSync(questions, 'utf8'))) {
  const t = performance.now();
  const results = await store.searchLex(q.query, { limit: 10 });
  const ms = performance.now() - t;
  const pages = [];
  for (const r of results) {
    const page = r.filepath.replace(/^qmd:\/\/vault\//, '');
    if (!pages.includes(page)) pages.push(page);
  }
  answers[q.id] = { pages: pages.slice(0, 10), ms };
}
await store.close();
writeFileSync(out, JSON.stringify({ index_s, noop_s, answers, noop_unchanged: noop.unchanged,
  notes: 'lexical search only (searchLex): vectors, query expansion and reranking need GGUF '
       + 'models downloaded at first use' }));
